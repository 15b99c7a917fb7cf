"""What the model families (llama.py, deepseek.py) share: weights on the meta device, RMSNorm,
rotary embeddings, and the serving step (StepModel: prepare, one layer at a time, finish)."""


def _weight(shape, dtype, device):
    import torch

    if str(device) == "meta":
        return torch.empty(*shape, dtype=dtype, device=device)
    return torch.randn(*shape, dtype=dtype, device=device) * 0.02


def _meta_tokens(device):
    """The pool size when none is given: on the meta device one larger than any step reads (it
    costs nothing), else a small real one."""
    return 1 << 26 if str(device) == "meta" else 1 << 12


class RMSNorm:
    def __init__(self, dim, dtype, device, eps=1e-5):
        import torch

        self.weight = torch.ones(dim, dtype=dtype, device=device)
        self.eps = eps

    def __call__(self, x):
        import torch

        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Rotary:
    """Rotary position embedding tables; apply() rotates [T, heads, d] by the step's positions
    (one gather of the tables per step, shared by every layer)."""

    def __init__(self, head_dim, theta, max_pos, dtype, device):
        import torch

        half = head_dim // 2
        if device == "meta" or getattr(device, "type", None) == "meta":
            self.cos = torch.empty(max_pos, half, dtype=dtype, device=device)
            self.sin = torch.empty(max_pos, half, dtype=dtype, device=device)
        else:
            inv = 1.0 / theta ** (torch.arange(half, dtype=torch.float32) * 2 / head_dim)
            ang = torch.arange(max_pos, dtype=torch.float32)[:, None] * inv[None, :]
            self.cos, self.sin = ang.cos().to(dtype), ang.sin().to(dtype)
        self.max_pos = max_pos

    def tables(self, positions):
        """cos and sin of the step's rows as [T, 1, d/2]. Views, not gathers: a rotary kernel
        reads its rows of the tables itself (and costs.py would price a gather by the whole
        table). The rows are the first T: values matter only with real weights, in tests."""
        T = positions.shape[0]
        if T > self.max_pos:
            raise ValueError("a step of %d tokens exceeds the %d rotary positions"
                             % (T, self.max_pos))
        return self.cos[:T, None, :], self.sin[:T, None, :]

    @staticmethod
    def apply(x, cos, sin):
        import torch

        half = x.shape[-1] // 2
        x1, x2 = x[..., :half], x[..., half:]
        return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


class StepModel:
    """What the model families share: a serving step over (n_new, ctx, samples) sequences, in
    three parts (prepare, one layer, finish) so that an executor can replay a layer's kernels
    (executor.py). Subclasses set embed, layers, norm, lm_head, rope, pool, mask, max_pos,
    decode_groups; the families add their layers, lm_head, rope and KV pool (_cache)."""

    def __init__(self, c, device, dtype, max_pos, decode_groups):
        import torch

        self.config = c
        self.device = device
        self.dtype = dtype or torch.bfloat16
        self.decode_groups = decode_groups
        self.max_pos = max_pos
        self.tp = 1  # GPUs the model is split over; c is then one GPU's shard (tensor_parallel.py)
        self.embed = _weight((c.vocab, c.hidden), self.dtype, device)
        self.norm = RMSNorm(c.hidden, self.dtype, device)

    def _cache(self, kv_tokens, heads, dk, dv, shared=False):
        """The KV pool every layer shares (its contents are not tracked, attention.py, only its
        reads and writes, so sharing it changes no kernel) and the causal mask's pool."""
        import torch

        from . import attention

        kv_tokens = kv_tokens or _meta_tokens(self.device)
        self.pool = attention.KVPool(kv_tokens, heads, dk, dv, self.dtype, self.device, shared)
        self.mask = torch.zeros(kv_tokens * 64, dtype=self.dtype, device=self.device)

    def layer_kind(self, i):
        """Layers of the same kind launch the same kernels for the same step."""
        return 0

    def prepare(self, seqs, round_to=1):
        """The step's input rows and attention plan. seqs: [(n_new, ctx, samples)] — new tokens,
        tokens already cached, and whether the sequence samples a token after this step.
        round_to: attention reads whole KV blocks of this many tokens."""
        import torch

        from . import attention, tensor_parallel

        if not seqs:
            raise ValueError("a step needs at least one sequence")
        order, groups = attention.plan_groups([(n, ctx) for n, ctx, _ in seqs],
                                              self.decode_groups, round_to)
        T = sum(n for n, _, _ in seqs)
        positions = []
        sample_rows = []
        for i in order:
            n, ctx, samples = seqs[i]
            if ctx + n > self.max_pos:
                raise ValueError("a sequence of %d tokens exceeds the model's %d positions"
                                 % (ctx + n, self.max_pos))
            positions.extend(range(ctx, ctx + n))
            if samples:
                sample_rows.append(len(positions) - 1)
        positions = torch.tensor(positions, dtype=torch.long)
        # The embedding lookup as the copy of T rows it moves (costs.py prices a gather by its
        # whole source: a 1 GB table for a single token).
        # Split by vocabulary, each shard's rows are zero outside its part: the shards sum them.
        x = tensor_parallel.all_reduce(self.embed[:T].clone(), self.tp)
        return {"x": x, "rope": self.rope.tables(positions), "groups": groups,
                "rows": sample_rows}

    def run_layer(self, i, state):
        state["x"] = self.layers[i](state["x"], state["rope"], self.pool, state["groups"],
                                    self.mask)

    def finish(self, state):
        """Logits of the sampling rows and their argmax (the sampled ids' tensor), or None."""
        import torch

        from . import tensor_parallel

        if not state["rows"]:
            return None
        rows = torch.tensor(state["rows"], dtype=torch.long)
        h = self.norm(state["x"].index_select(0, rows))
        logits = tensor_parallel.all_gather(torch.mm(h, self.lm_head), self.tp)
        return torch.argmax(logits, dim=-1)

    def step(self, seqs, round_to=1):
        """Run one step, every layer through torch_mode; returns the sampled ids' tensor
        ([sampling sequences]) or None. Read it (or synchronize) to wait for the GPU."""
        state = self.prepare(seqs, round_to)
        for i in range(len(self.layers)):
            self.run_layer(i, state)
        return self.finish(state)
