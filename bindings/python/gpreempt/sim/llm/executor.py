"""Runs a model's serving steps on the simulated GPU, replaying captured kernels as a CUDA/HIP
graph does.

Pricing every operator through torch_mode costs the host tens of µs each, and an 8B decode step has
~1,500 of them: the host, not the simulated GPU, would set the step time. vLLM itself replays
graphs for the same reason. Here a step's kernels are composed from parts, each captured once by
running that part under torch_mode on a recording stream, then dispatched directly to the hardware
queue:

* the step's ends (embedding rows; final norm, LM head and sampling) by (tokens, sampling rows);
* each layer kind's dense part before and after attention by tokens (the same for every layer of
  the kind: they launch the same kernels);
* attention per group by (sequences, new tokens, context rounded up to whole KV blocks).

A step is exactly the concatenation of its parts (test_llm_model.py compares it with the model's
own step), and the parts recur far more often than whole steps do: a request joining or leaving
changes the step's shape but keeps most of its parts.
"""
import time

from . import attention


class _Recorder:
    """A stream whose queue records dispatches instead of sending them, and the collectives a
    tensor-parallel shard marks between them (tensor_parallel.py): entries of one more field,
    (kind, (1, 1, 1), (1, 1, 1), 0, bus bytes, "bf16", False, "collective"), which launch nothing."""

    def __init__(self):
        self.kernels = []
        self.queue = self

    def dispatch_op(self, *args):
        self.kernels.append(args)
        return 0

    def collective(self, kind, bus_bytes):
        self.kernels.append((kind, (1, 1, 1), (1, 1, 1), 0.0, float(bus_bytes), "bf16", False, "collective"))


class Totals:
    """What an executor dispatched: steps, kernels, FLOPs, bytes, the kernels' modelled busy time
    alone on the device (µs, without the CP's per-packet overhead), and the host CPU time spent
    forming and dispatching them (µs; captures included, the wait for the GPU not)."""

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
    block_size: contexts are rounded up to whole blocks of this many tokens."""

    def __init__(self, model, block_size=16, max_parts=20000):
        self.model = model
        self.block_size = block_size
        self.max_parts = max_parts
        self._parts = {}
        self.totals = Totals()
        # one layer of each kind stands for all of them
        self._kinds = {}
        for i in range(len(model.layers)):
            self._kinds.setdefault(model.layer_kind(i), i)

    def _record(self, fn):
        from ... import sim

        rec = _Recorder()
        with sim.torch_mode(), sim.stream(rec):
            fn(rec)
        self.totals.captures += 1
        return rec.kernels

    def _part(self, key, capture):
        """The kernels of part `key`; capture() returns {key: kernels} for it (and siblings
        captured in the same run)."""
        p = self._parts.get(key)
        if p is None:
            if len(self._parts) >= self.max_parts:
                self._parts.clear()
            self._parts.update(capture())
            p = self._parts[key]
        return p

    def _ends(self, T, S):
        """The step's kernels before the first layer and after the last, for T tokens of which S
        sample."""
        m = self.model

        def capture():
            marks = []

            def run(rec):
                state = m.prepare([(1, 0, i < S) for i in range(T)], self.block_size)
                marks.append(len(rec.kernels))
                m.finish(state)
            k = self._record(run)
            return {("head", T, S): k[:marks[0]], ("tail", T, S): k[marks[0]:]}
        return self._part(("head", T, S), capture), self._part(("tail", T, S), capture)

    def _dense(self, kind, T, multi):
        """A layer's kernels before and after attention, for T tokens; multi: attention had
        several groups, whose outputs it concatenates (counted after)."""
        import torch

        m = self.model
        index = self._kinds[kind]
        layer = m.layers[index]

        def capture():
            marks = []
            recorder = []
            real = attention.attend

            def no_attention(q, *args):
                # The layer's own attention stands aside: only what surrounds it is recorded.
                marks.append(len(recorder[0].kernels))
                o = q.new_empty(q.shape[0], layer.query_heads * m.pool.dv)
                return torch.cat((o[:1], o[1:])) if multi else o

            def run(rec):
                recorder.append(rec)
                state = m.prepare([(1, 0, False)] * T, self.block_size)
                marks.append(len(rec.kernels))
                attention.attend = no_attention
                try:
                    m.run_layer(index, state)
                finally:
                    attention.attend = real
            k = self._record(run)
            return {("before", kind, T, multi): k[marks[0]:marks[1]],
                    ("after", kind, T, multi): k[marks[1]:]}
        return (self._part(("before", kind, T, multi), capture),
                self._part(("after", kind, T, multi), capture))

    def _group(self, kind, grp):
        """One attention group's kernels (its rows' position in the step does not matter)."""
        import torch

        m = self.model
        layer = m.layers[self._kinds[kind]]
        grp = grp._replace(start=0)
        key = ("attention", kind, grp)

        def capture():
            def run(rec):
                q = torch.empty(grp.seqs * grp.n_new, layer.query_heads, layer.query_dim,
                                dtype=m.dtype, device=m.device)
                attention.attend(q, m.pool, [grp], layer.scale, m.mask)
            return {key: self._record(run)}
        return self._part(key, capture)

    def parts(self, seqs):
        """The step's kernels in parts: (head, {layer kind: one layer's kernels}, tail), each
        kernel (name, grid, workgroup, flops, bytes, math, matrix) as torch_mode prices it. The DES
        records its step grid from these (step_grid.py)."""
        m = self.model
        _, groups = attention.plan_groups([(n, ctx) for n, ctx, _ in seqs], m.decode_groups,
                                          self.block_size)
        T = sum(s[0] for s in seqs)
        S = sum(1 for s in seqs if s[2])
        head, tail = self._ends(T, S)
        per_kind = {}
        for kind in self._kinds:
            before, after = self._dense(kind, T, len(groups) > 1)
            k = list(before)
            for g in groups:
                k.extend(self._group(kind, g))
            k.extend(after)
            per_kind[kind] = k
        return head, per_kind, tail

    def kernels(self, seqs):
        """The step's kernels: [(name, grid, workgroup, flops, bytes, math, matrix)], as
        torch_mode prices them."""
        m = self.model
        head, per_kind, tail = self.parts(seqs)
        out = list(head)
        for i in range(len(m.layers)):
            out.extend(per_kind[m.layer_kind(i)])
        out.extend(tail)
        return out

    def __call__(self, seqs):
        from ... import sim

        if not seqs:
            raise ValueError("a step needs at least one sequence")
        t0 = time.process_time()
        kernels = self.kernels(seqs)
        q = sim.current_stream().queue
        busy = 0
        t = self.totals
        for k in kernels:
            if len(k) > 7:
                continue  # a collective's mark: one GPU serves live, nothing to exchange
            busy += q.dispatch_op(*k)
            t.flops += k[3]
            t.bytes += k[4]
        t.busy_us += busy / 1e3
        t.kernels += len(kernels)
        t.steps += 1
        t.host_us += (time.process_time() - t0) * 1e6
        q.synchronize()
