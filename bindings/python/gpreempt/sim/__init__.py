"""gpreempt.sim: the simulated AMD GPU from Python — simrt queues, dispatches, signals, and
unmodified PyTorch models (torch_mode).

Runs in any process started under the simulator (``kfdsim run -- python3 script.py``); elsewhere
the first use raises Unavailable with the reason (on a real AMD GPU, use ROCm PyTorch instead)::

    import gpreempt.sim as sim
    q = sim.device().create_queue(priority=7)
    done = sim.Signal(1)
    q.dispatch("my_kernel", grid=[1 << 20], workgroup=[256], cost_us=500, signal=done)
    done.wait(0)

    with sim.torch_mode(trace="trace.jsonl"):
        y = model(x)               # every ATen operator → kernels on the simulated GPU
        sim.synchronize()

docs/torch.md describes the model and its limits.
"""
from .._gpreempt.sim import Device, Queue, Signal, Trace  # noqa: F401
from ._runtime import (  # noqa: F401
    KFD_PRIORITY,
    Stream,
    Unavailable,
    available,
    current_stream,
    default_stream,
    device,
    hardware_queues,
    now_us,
    queue_ids,
    stream,
    synchronize,
)


def torch_mode(trace=None, compute=False, append=False):
    """Context manager: every ATen operator run inside also runs on the simulated GPU.

    trace: a path; one JSON line per dispatch of the block (pid, queue_id, name, grid, workgroup,
    flops, bytes, submit_us, start_us, end_us on the simulated GPU clock), complete once the
    block has exited. append: add to an existing file instead of starting it afresh.
    compute: also compute every operator on the CPU (outputs are real); False: shapes only.
    The returned object's stats() gives the totals of what was dispatched. See
    gpreempt.sim.pytorch (imported here lazily: torch is optional).
    """
    from .pytorch import torch_mode as _tm

    return _tm(trace=trace, compute=compute, append=append)


__all__ = [
    "Device", "Queue", "Signal", "Stream", "Trace", "Unavailable", "KFD_PRIORITY", "available",
    "current_stream", "default_stream", "device", "hardware_queues", "now_us", "queue_ids",
    "stream", "synchronize", "torch_mode",
]
