"""gpreempt.sim: simrt queues, dispatches, barrier-AND, signals and streams from Python."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import BINARY_DIR, needs_sim

import gpreempt
import gpreempt.sim as sim


def spawn(code, env=None):
    """A Python child on the same simulated machine, driven by lines on stdin."""
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BINARY_DIR / "python"),
                                                    e.get("PYTHONPATH")]))
    e.update(env or {})
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)


def queue_ids_in(doc):
    """Every value of a `queue_id` key anywhere in a JSON document."""
    found = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k == "queue_id" and isinstance(v, int):
                found.append(v)
            else:
                found += queue_ids_in(v)
    elif isinstance(doc, list):
        for v in doc:
            found += queue_ids_in(v)
    return found


def gpreempt_queues(pid):
    out = subprocess.run([str(BINARY_DIR / "bin" / "gpreempt"), "queues", "--pid", str(pid),
                          "--json"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return sorted(queue_ids_in(json.loads(out.stdout)))


@needs_sim
def test_streams_multiplex_onto_four_hardware_queues_seen_from_outside():
    child = spawn("""
        import json, sys, gpreempt, gpreempt.sim as sim
        streams = [sim.Stream() for _ in range(6)]
        for s in streams:
            s.queue.dispatch("k", [256], [256], cost_us=10)
        sim.synchronize()
        print(json.dumps({"streams": [s.queue_id for s in streams],
                          "mine": sorted(q.queue_id for q in gpreempt.my_queues())}), flush=True)
        gpreempt.print_my_queues()
        sys.stdout.flush()
        sys.stdin.readline()
    """)
    try:
        ids = json.loads(child.stdout.readline())
        hw = sorted(set(ids["streams"]))
        assert len(hw) == 4  # GPU_MAX_HW_QUEUES default, as ROCm
        assert ids["streams"][4] in hw and ids["streams"][5] in hw
        assert ids["mine"] == hw
        assert gpreempt_queues(child.pid) == hw
        listed = []
        while len(listed) < 4:
            line = child.stdout.readline()
            assert line, child.stderr.read()
            if line.strip().startswith("queue "):
                listed.append(int(line.split()[1]))
        assert sorted(listed) == hw
    finally:
        child.stdin.write("\n")
        child.stdin.close()
        assert child.wait(timeout=30) == 0, child.stderr.read()


@needs_sim
def test_queues_are_created_lazily_per_priority():
    child = spawn("""
        import json, gpreempt, gpreempt.sim as sim
        sim.device()
        before = len(gpreempt.my_queues())
        hi, lo = sim.Stream(priority=-1), sim.Stream(priority=1)
        mid = len(gpreempt.my_queues())
        hi.queue; lo.queue
        with sim.stream(priority="high") as s:
            same = s.queue_id == hi.queue_id
        print(json.dumps([before, mid, len(gpreempt.my_queues()), same,
                          hi.queue.priority, lo.queue.priority]))
    """, env={"GPU_MAX_HW_QUEUES": "1"})
    out, err = child.communicate(timeout=30)
    assert child.returncode == 0, err
    assert json.loads(out) == [0, 0, 2, True, 15, 0]


@needs_sim
def test_dispatch_is_asynchronous_and_timestamped():
    q = sim.device().create_queue(priority=7, ring_packets=64)
    done = sim.Signal(1)
    q.dispatch("long", [1 << 16], [256], cost_us=1_000_000, signal=done)
    assert done.value == 1  # the host returned before the GPU finished
    assert not q.idle()
    assert done.wait(0, timeout=30)
    assert done.end_ns - done.start_ns >= 1_000_000_000
    assert q.idle() and q.read_index == q.write_index == 1


@needs_sim
def test_barrier_and_waits_for_its_signals():
    q = sim.device().create_queue()
    gate, done = sim.Signal(1), sim.Signal(1)
    q.barrier_and([gate])
    q.dispatch("after_gate", [256], [256], cost_us=5, signal=done)
    assert not done.wait(0, timeout=0.3)
    gate.store(0)
    assert done.wait(0, timeout=30)


@needs_sim
def test_bad_arguments_raise_value_errors():
    dev = sim.device()
    with pytest.raises(ValueError):
        dev.create_queue(ring_packets=100)
    with pytest.raises(ValueError):
        dev.create_queue(priority=16)
    q = dev.create_queue()
    with pytest.raises(ValueError):
        q.dispatch("k", [256], [256])  # neither cost_us nor wg_cost_ns
    with pytest.raises(ValueError):
        q.dispatch("k", [0], [256], cost_us=1)
    with pytest.raises(ValueError):
        q.dispatch_op("k", [256], [256], 1.0, 1.0, "fp12")


def test_off_the_simulator_the_error_says_how_to_run():
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "KFDSIM_DIR")}
    # Off the simulator means without the shim, not without the sanitizer runtime: an instrumented
    # module needs it loaded ahead of the uninstrumented interpreter (cmake/GpreemptSanitize.cmake).
    if os.environ.get("GPREEMPT_SANITIZER_PRELOAD"):
        env["LD_PRELOAD"] = os.environ["GPREEMPT_SANITIZER_PRELOAD"]
    code = ("import os, gpreempt.sim as sim\nprint(os.path.exists('/dev/kfd'))\n"
            "try:\n    sim.device()\nexcept sim.Unavailable as e:\n    print(e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    real_kfd, _, message = r.stdout.partition("\n")
    assert message.strip(), "no error off the simulator"
    if real_kfd == "True":
        assert "ROCm PyTorch" in message
    else:
        assert "kfdsim run" in message
