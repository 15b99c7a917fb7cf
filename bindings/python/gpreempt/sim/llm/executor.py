"""Runs a model's serving steps on the simulated GPU, replaying captured kernels as a CUDA/HIP
graph does.

Pricing every operator through torch_mode costs the host tens of µs each, and an 8B decode step has
~1,500 of them: the host, not the simulated GPU, would set the step time. vLLM itself replays
graphs for the same reason. Here, a step's kernels are captured once per *shape* — the attention
groups (sequences, new tokens, context rounded up to whole KV blocks) and the number of sampling
rows — by running the model under torch_mode on a recording stream, with one layer of each kind
standing for all the layers of that kind (they launch the same kernels). The captured list is then
dispatched directly to the hardware queue, kernel by kernel, for this step and every later step of
the same shape.
"""
import time

from . import attention


class _Recorder:
    """A stream whose queue records dispatches instead of sending them."""

    def __init__(self):
        self.kernels = []
        self.queue = self

    def dispatch_op(self, *args):
        self.kernels.append(args)
        return 0


class Totals:
    """What an executor dispatched: steps, kernels, FLOPs, bytes, the kernels' modelled busy time
    alone on the device (µs, without the CP's per-packet overhead), and the host CPU time spent
    forming and dispatching them (µs; capture included, the wait for the GPU not)."""

    def __init__(self):
        self.steps = self.kernels = self.captures = 0
        self.flops = self.bytes = self.busy_us = self.host_us = 0.0

    def as_dict(self):
        return {"steps": self.steps, "captures": self.captures, "kernels": self.kernels,
                "flops": self.flops, "bytes": self.bytes, "busy_us": round(self.busy_us, 3),
                "host_us": round(self.host_us, 3)}


class GraphExecutor:
    """executor(seqs): one step of `model` (llama.Llama or deepseek.DeepSeek) on the simulated GPU,
    waiting for it as a server waits for its sampled tokens. seqs: [(n_new, ctx, samples)].
    block_size: contexts are rounded up to whole blocks of this many tokens (the shape key)."""

    def __init__(self, model, block_size=16, max_shapes=4096):
        self.model = model
        self.block_size = block_size
        self.max_shapes = max_shapes
        self._graphs = {}
        self.totals = Totals()

    def key(self, seqs):
        _, groups = attention.plan_groups([(n, ctx) for n, ctx, _ in seqs],
                                          self.model.decode_groups, self.block_size)
        return tuple((g.seqs, g.n_new, g.length) for g in groups), sum(1 for s in seqs if s[2])

    def capture(self, seqs):
        """The kernels of one step of this shape: [(name, grid, workgroup, flops, bytes, math,
        matrix)], as torch_mode prices them."""
        from ... import sim

        m = self.model
        rec = _Recorder()
        with sim.torch_mode(), sim.stream(rec):
            state = m.prepare(seqs, self.block_size)
            pre = len(rec.kernels)
            per_kind = {}
            for i in range(len(m.layers)):
                kind = m.layer_kind(i)
                if kind not in per_kind:
                    start = len(rec.kernels)
                    m.run_layer(i, state)
                    per_kind[kind] = rec.kernels[start:]
            post = len(rec.kernels)
            m.finish(state)
        kernels = rec.kernels[:pre]
        for i in range(len(m.layers)):
            kernels.extend(per_kind[m.layer_kind(i)])
        kernels.extend(rec.kernels[post:])
        self.totals.captures += 1
        return kernels

    def __call__(self, seqs):
        from ... import sim

        t0 = time.process_time()
        key = self.key(seqs)
        kernels = self._graphs.get(key)
        if kernels is None:
            kernels = self.capture(seqs)
            if len(self._graphs) >= self.max_shapes:
                self._graphs.clear()
            self._graphs[key] = kernels
        q = sim.current_stream().queue
        busy = 0
        t = self.totals
        for k in kernels:
            busy += q.dispatch_op(*k)
            t.flops += k[3]
            t.bytes += k[4]
        t.busy_us += busy / 1e3
        t.kernels += len(kernels)
        t.steps += 1
        t.host_us += (time.process_time() - t0) * 1e6
        q.synchronize()
