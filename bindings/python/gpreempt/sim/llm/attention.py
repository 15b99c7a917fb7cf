"""Attention over a paged KV cache for one serving step, written out (torch 1.13 has no
scaled_dot_product_attention), priced as the kernels of a paged-attention backend.

A step carries several sequences, each with `n_new` new tokens (1 for a decode, a chunk for a
prefill) after `ctx` tokens already in the cache. The projections run over all the step's tokens at
once; attention runs per *group*: the decodes are sorted by context length and cut into a few
groups, each one batched matmul padded to its longest context (what a plain implementation does),
and every prefill chunk is its own group with a causal mask.

The cache is modelled for its cost, not its values (KVPool): the step's new keys and values are
written with one copy per layer (the bytes vLLM's reshape_and_cache writes) and a group reads a
view of the pool shaped as its contexts (the bytes a paged-attention kernel reads). On the meta
device the pool takes no memory; with real tensors the numbers are computed but the cache does not
hold the sequences' keys: the weights are random, no text is produced.

Grouped-query attention reads each key/value head once: the `g` query heads that share a KV head
are folded into the query rows ([B, kvh, g*n, d] @ [B, kvh, d, L]), so the keys are neither
expanded nor copied.
"""
import collections
import math

# One attention group of a step: `seqs` sequences of `n_new` query tokens each, starting at row
# `start` of the step, attending over `length` cached tokens (the group's longest context).
Group = collections.namedtuple("Group", "start seqs n_new length causal")


def plan_groups(seqs, decode_groups, round_to=1):
    """The row order of a step's sequences and its attention groups.

    seqs: [(n_new, ctx)]. Returns (order, groups): `order` lists indices into `seqs` in the rows'
    order (decodes by context length, then prefill chunks), `groups` the Groups. decode_groups:
    how many padded batches the decodes are cut into (more groups read less padding and launch
    more kernels). round_to: group lengths are rounded up to a multiple of it (a paged kernel
    reads whole KV blocks)."""
    if decode_groups < 1:
        raise ValueError("decode_groups must be at least 1, got %r" % decode_groups)
    decodes = sorted((i for i, (n, _) in enumerate(seqs) if n == 1), key=lambda i: seqs[i][1])
    prefills = [i for i, (n, _) in enumerate(seqs) if n > 1]
    groups = []
    row = 0
    if decodes:
        per = math.ceil(len(decodes) / min(decode_groups, len(decodes)))
        for k in range(0, len(decodes), per):
            part = decodes[k:k + per]
            length = max(seqs[i][1] + 1 for i in part)
            groups.append(Group(row, len(part), 1, -(-length // round_to) * round_to, False))
            row += len(part)
    for i in prefills:
        n, ctx = seqs[i]
        groups.append(Group(row, 1, n, -(-(ctx + n) // round_to) * round_to, True))
        row += n
    return decodes + prefills, groups


class KVPool:
    """One layer's KV cache as flat pools: `heads` KV heads of `dk` key and `dv` value elements per
    token. shared: the values are the first `dv` elements of each key (MLA's latent cache)."""

    def __init__(self, tokens, heads, dk, dv, dtype, device, shared=False):
        import torch

        self.heads, self.dk, self.dv, self.shared = heads, dk, dv, shared
        self.k = torch.zeros(tokens * heads * dk, dtype=dtype, device=device)
        self.v = self.k if shared else torch.zeros(tokens * heads * dv, dtype=dtype, device=device)
        self.tokens = tokens

    def _check(self, n):
        if n > self.tokens:
            raise ValueError("the step needs %d cached tokens in one view, the pool holds %d"
                             % (n, self.tokens))

    def write(self, k, v=None):
        """Store a step's new keys [T, heads, dk] (and values [T, heads, dv] unless shared)."""
        T = k.shape[0]
        self._check(T)
        self.k[:T * self.heads * self.dk].view(T, self.heads, self.dk).copy_(k)
        if not self.shared:
            self.v[:T * self.heads * self.dv].view(T, self.heads, self.dv).copy_(v)

    def keys(self, seqs, length):
        self._check(seqs * length)
        return self.k[:seqs * self.heads * length * self.dk].view(seqs, self.heads, length, self.dk)

    def values(self, seqs, length):
        self._check(seqs * length)
        if self.shared:
            return self.keys(seqs, length)[..., :self.dv]
        return self.v[:seqs * self.heads * length * self.dv].view(seqs, self.heads, length, self.dv)


def attend(q, pool, groups, scale, mask):
    """Attention of every group of a step; returns [T, heads * dv].

    q: [T, heads, dk], rotated, rows in plan_groups' order. mask: a flat 1-D tensor of q's dtype
    at least as long as the largest prefill chunk's scores (n × L), read as the additive causal
    mask."""
    import torch

    T, heads, dk = q.shape
    kvh, dv = pool.heads, pool.dv
    g = heads // kvh
    outs = []
    for grp in groups:
        B, n, L = grp.seqs, grp.n_new, grp.length
        # The g query heads of one KV head become rows: [B, kvh, g*n, dk].
        qg = q[grp.start:grp.start + B * n].reshape(B, n, kvh, g, dk).permute(0, 2, 3, 1, 4)
        qg = qg.reshape(B, kvh, g * n, dk) * scale
        s = torch.matmul(qg, pool.keys(B, L).transpose(-1, -2))  # [B, kvh, g*n, L]
        if grp.causal:
            s = s.view(B, kvh, g, n, L) + mask[:n * L].view(n, L)
            s = s.view(B, kvh, g * n, L)
        p = torch.softmax(s, dim=-1)
        o = torch.matmul(p, pool.values(B, L))  # [B, kvh, g*n, dv]
        o = o.view(B, kvh, g, n, dv).permute(0, 3, 1, 2, 4).reshape(B * n, heads * dv)
        outs.append(o)
    return outs[0] if len(outs) == 1 else torch.cat(outs)
