"""A Llama-style decoder-only model (RMSNorm, rotary embeddings, grouped-query attention over a
paged KV cache, SwiGLU MLP) with random weights, run one serving step at a time.

Shapes are those of Meta's configs (docs/llm.md, "Models"); weights are bf16. Built with
device="meta" (the default) the model allocates nothing: under gpreempt.sim.torch_mode it prices
every kernel from the shapes alone, so the 8B model runs in a few hundred MiB of host memory.

The projections are fused as vLLM fuses them (one QKV GEMM, one gate+up GEMM); logits are
computed only for the rows that sample a token, and the sampled ids are read back on the host.
"""
import collections

from .step_model import RMSNorm, Rotary, StepModel, _weight

LlamaConfig = collections.namedtuple(
    "LlamaConfig", "name hidden layers heads kv_heads head_dim ffn vocab rope_theta tied")

# Meta's configs (docs/llm.md cites them).
LLAMA_1B = LlamaConfig("llama-1b", 2048, 16, 32, 8, 64, 8192, 128256, 500000.0, True)
LLAMA_8B = LlamaConfig("llama-8b", 4096, 32, 32, 8, 128, 14336, 128256, 500000.0, False)


def param_count(c):
    """Parameters of config `c` (embeddings, attention, MLP, norms, LM head unless tied)."""
    attn = c.hidden * (c.heads + 2 * c.kv_heads) * c.head_dim + c.heads * c.head_dim * c.hidden
    mlp = 3 * c.hidden * c.ffn
    per_layer = attn + mlp + 2 * c.hidden
    emb = c.vocab * c.hidden
    return emb + c.layers * per_layer + c.hidden + (0 if c.tied else emb)


def kv_bytes_per_token(c, elem=2):
    """KV cache bytes one token takes over all layers (keys and values, bf16)."""
    return 2 * c.layers * c.kv_heads * c.head_dim * elem


class LlamaLayer:
    def __init__(self, c, dtype, device):
        self.c = c
        self.attn_norm = RMSNorm(c.hidden, dtype, device)
        self.wqkv = _weight((c.hidden, (c.heads + 2 * c.kv_heads) * c.head_dim), dtype, device)
        self.wo = _weight((c.heads * c.head_dim, c.hidden), dtype, device)
        self.mlp_norm = RMSNorm(c.hidden, dtype, device)
        self.wgu = _weight((c.hidden, 2 * c.ffn), dtype, device)
        self.wdown = _weight((c.ffn, c.hidden), dtype, device)
        # The queries attention sees, [T, heads, dk], and their scale (executor.py prices a
        # group's attention alone from them).
        self.query_heads, self.query_dim = c.heads, c.head_dim
        self.scale = c.head_dim ** -0.5

    def __call__(self, x, rope, pool, groups, mask):
        import torch

        from . import attention

        c = self.c
        T = x.shape[0]
        qkv = torch.mm(self.attn_norm(x), self.wqkv)
        qk = qkv[:, :(c.heads + c.kv_heads) * c.head_dim].view(T, c.heads + c.kv_heads, c.head_dim)
        qk = Rotary.apply(qk, *rope)  # q and k in one pass, as vLLM's rotary kernel
        v = qkv[:, (c.heads + c.kv_heads) * c.head_dim:].view(T, c.kv_heads, c.head_dim)
        pool.write(qk[:, c.heads:], v)
        o = attention.attend(qk[:, :c.heads], pool, groups, self.scale, mask)
        x = x + torch.mm(o, self.wo)
        gu = torch.mm(self.mlp_norm(x), self.wgu)
        h = torch.nn.functional.silu(gu[:, :c.ffn]) * gu[:, c.ffn:]
        return x + torch.mm(h, self.wdown)


class Llama(StepModel):
    """c: a LlamaConfig. device: "meta" (no memory, for torch_mode) or "cpu" (real random
    weights: small configs only). kv_tokens: tokens one attention group may read in one view
    (the pool's size, default: unbounded on meta; the server's KV budget is the scheduler's).
    decode_groups: attention.plan_groups."""

    def __init__(self, c, device="meta", dtype=None, kv_tokens=None, max_pos=131072,
                 decode_groups=4):
        super().__init__(c, device, dtype, max_pos, decode_groups)
        self.layers = [LlamaLayer(c, self.dtype, device) for _ in range(c.layers)]
        self.lm_head = self.embed.t() if c.tied \
            else _weight((c.hidden, c.vocab), self.dtype, device)
        self.rope = Rotary(c.head_dim, c.rope_theta, max_pos, self.dtype, device)
        self._cache(kv_tokens, c.kv_heads, c.head_dim, c.head_dim)
