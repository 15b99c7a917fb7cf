"""A DeepSeek-style mixture-of-experts decoder with random weights: multi-head latent attention
(MLA) over a latent KV cache, and MoE layers of shared plus top-k routed experts.

Shapes are those of DeepSeek's configs (docs/llm.md, "Models"); the default preset has
DeepSeek-V2-Lite's (16B parameters, 2.4B active), built on the meta device as llama.py's models.

MLA runs in its absorbed form (as vLLM's MLA decode does, here for every token): the cache holds
one latent vector per token (kv_lora_rank + rope dims, 576), the query's no-position part is
multiplied into the latent space (W_UK) and the output out of it (W_UV), so attention is
multi-query attention with 576-element keys and 512-element values read from the same cache.

Routing is data-dependent and the values are not computed (torch_mode(compute=False)), so the
router's GEMM, softmax and top-k run as kernels but the dispatch assumes balanced routing: the
step's T·k assignments go to the expected number of distinct experts, E·(1 − (1 − k/E)^T), with an
equal share each, and one batched GEMM per projection reads just those experts' weights (a grouped
MoE GEMM as vLLM's fused_moe).
"""
import collections
import math

from .step_model import RMSNorm, Rotary, StepModel, _weight

DeepSeekConfig = collections.namedtuple(
    "DeepSeekConfig", "name hidden layers heads q_lora_rank kv_lora_rank qk_nope qk_rope v_head "
    "dense_ffn first_dense moe_ffn experts top_k shared vocab")

DEEPSEEK_V2_LITE = DeepSeekConfig("deepseek-v2-lite", 2048, 27, 16, 0, 512, 128, 64, 128, 10944,
                                  1, 1408, 64, 6, 2, 102400)
DEEPSEEK_V3 = DeepSeekConfig("deepseek-v3", 7168, 61, 128, 1536, 512, 128, 64, 128, 18432, 3,
                             2048, 256, 8, 1, 129280)


def param_count(c, active=False):
    """Parameters of config `c`; active=True: those one token uses (top_k routed experts)."""
    qdim = c.heads * (c.qk_nope + c.qk_rope)
    q = c.hidden * c.q_lora_rank + c.q_lora_rank * qdim if c.q_lora_rank else c.hidden * qdim
    attn = q + c.hidden * (c.kv_lora_rank + c.qk_rope) + \
        c.kv_lora_rank * c.heads * (c.qk_nope + c.v_head) + c.heads * c.v_head * c.hidden
    expert = 3 * c.hidden * c.moe_ffn
    moe = c.hidden * c.experts + expert * ((c.top_k if active else c.experts) + c.shared)
    dense = 3 * c.hidden * c.dense_ffn
    layers = c.layers * attn + c.first_dense * dense + (c.layers - c.first_dense) * moe
    return layers + 2 * c.vocab * c.hidden


def kv_bytes_per_token(c, elem=2):
    return c.layers * (c.kv_lora_rank + c.qk_rope) * elem


def active_experts(tokens, experts, top_k):
    """Expected distinct experts the step's tokens route to, under uniform routing."""
    expected = experts * (1 - (1 - top_k / experts) ** tokens)
    return max(min(top_k, experts), min(experts, round(expected)))


class _SwiGLU:
    def __init__(self, hidden, ffn, dtype, device):
        self.ffn = ffn
        self.wgu = _weight((hidden, 2 * ffn), dtype, device)
        self.wdown = _weight((ffn, hidden), dtype, device)

    def __call__(self, h):
        import torch

        gu = torch.mm(h, self.wgu)
        return torch.mm(torch.nn.functional.silu(gu[:, :self.ffn]) * gu[:, self.ffn:], self.wdown)


class _MoE:
    def __init__(self, c, dtype, device):
        self.c = c
        self.router = _weight((c.hidden, c.experts), dtype, device)
        self.wgu = _weight((c.experts, c.hidden, 2 * c.moe_ffn), dtype, device)
        self.wdown = _weight((c.experts, c.moe_ffn, c.hidden), dtype, device)
        self.shared = _SwiGLU(c.hidden, c.shared * c.moe_ffn, dtype, device)
        self._plans = {}

    def _plan(self, T):
        """Rows of the dispatched batch: which token (and which routing weight) each row of the
        n_active × per-expert batch takes, cyclically."""
        import torch

        p = self._plans.get(T)
        if p is None:
            c = self.c
            n = active_experts(T, c.experts, c.top_k)
            per = math.ceil(T * c.top_k / n)
            # Host-side lists: the plan must launch no kernel, cached or not.
            slots = [i % (T * c.top_k) for i in range(n * per)]
            p = self._plans[T] = (n, per, torch.tensor([s // c.top_k for s in slots]),
                                  torch.tensor(slots))
        return p

    def __call__(self, h):
        import torch

        c = self.c
        T = h.shape[0]
        n, per, tokens, slots = self._plan(T)
        weights, _ = torch.topk(torch.softmax(torch.mm(h, self.router), dim=-1), c.top_k, dim=-1)
        xe = h.index_select(0, tokens).view(n, per, c.hidden)
        gu = torch.bmm(xe, self.wgu[:n])
        a = torch.nn.functional.silu(gu[..., :c.moe_ffn]) * gu[..., c.moe_ffn:]
        y = torch.bmm(a, self.wdown[:n]).view(n * per, c.hidden)
        y = y * weights.reshape(-1).index_select(0, slots)[:, None]
        out = torch.zeros(T, c.hidden, dtype=h.dtype, device=h.device).index_add_(0, tokens, y)
        return out + self.shared(h)


class DeepSeekLayer:
    def __init__(self, c, dense, dtype, device, tp=1):
        self.c = c
        self.tp = tp
        qdim = c.heads * (c.qk_nope + c.qk_rope)
        self.attn_norm = RMSNorm(c.hidden, dtype, device)
        if c.q_lora_rank:
            self.wq_a = _weight((c.hidden, c.q_lora_rank), dtype, device)
            self.q_norm = RMSNorm(c.q_lora_rank, dtype, device)
            self.wq_b = _weight((c.q_lora_rank, qdim), dtype, device)
        else:
            self.wq = _weight((c.hidden, qdim), dtype, device)
        self.wkv_a = _weight((c.hidden, c.kv_lora_rank + c.qk_rope), dtype, device)
        self.kv_norm = RMSNorm(c.kv_lora_rank, dtype, device)
        self.w_uk = _weight((c.heads, c.qk_nope, c.kv_lora_rank), dtype, device)
        self.w_uv = _weight((c.heads, c.kv_lora_rank, c.v_head), dtype, device)
        self.wo = _weight((c.heads * c.v_head, c.hidden), dtype, device)
        self.query_heads, self.query_dim = c.heads, c.kv_lora_rank + c.qk_rope
        self.scale = (c.qk_nope + c.qk_rope) ** -0.5
        self.mlp_norm = RMSNorm(c.hidden, dtype, device)
        self.mlp = _SwiGLU(c.hidden, c.dense_ffn, dtype, device) if dense \
            else _MoE(c, dtype, device)

    def __call__(self, x, rope, pool, groups, mask):
        import torch

        from . import attention, tensor_parallel as tp

        c = self.c
        T = x.shape[0]
        h = self.attn_norm(x)
        q = torch.mm(self.q_norm(torch.mm(h, self.wq_a)), self.wq_b) if c.q_lora_rank \
            else torch.mm(h, self.wq)
        q = q.view(T, c.heads, c.qk_nope + c.qk_rope)
        kv = torch.mm(h, self.wkv_a)
        latent = self.kv_norm(kv[:, :c.kv_lora_rank])
        k_pe = Rotary.apply(kv[:, c.kv_lora_rank:].view(T, 1, c.qk_rope), *rope)
        pool.write(torch.cat((latent.view(T, 1, c.kv_lora_rank), k_pe), dim=-1))
        q_pe = Rotary.apply(q[..., c.qk_nope:], *rope)
        q_lat = torch.bmm(q[..., :c.qk_nope].transpose(0, 1), self.w_uk).transpose(0, 1)
        o = attention.attend(torch.cat((q_lat, q_pe), dim=-1), pool, groups, self.scale, mask)
        o = torch.bmm(o.view(T, c.heads, c.kv_lora_rank).transpose(0, 1), self.w_uv)
        x = x + tp.all_reduce(torch.mm(o.transpose(0, 1).reshape(T, c.heads * c.v_head), self.wo), self.tp)
        return x + tp.all_reduce(self.mlp(self.mlp_norm(x)), self.tp)


class DeepSeek(StepModel):
    """c: a DeepSeekConfig; the other arguments as llama.Llama's. tp: c is one GPU's shard of a
    model split over that many (tensor_parallel.shard), and the layers mark their collectives."""

    def __init__(self, c, device="meta", dtype=None, kv_tokens=None, max_pos=32768,
                 decode_groups=4, tp=1):
        super().__init__(c, device, dtype, max_pos, decode_groups)
        self.tp = tp
        self.layers = [DeepSeekLayer(c, i < c.first_dense, self.dtype, device, tp)
                       for i in range(c.layers)]
        self.lm_head = _weight((c.hidden, c.vocab), self.dtype, device)
        self.rope = Rotary(c.qk_rope, 10000.0, max_pos, self.dtype, device)
        self._cache(kv_tokens, 1, c.kv_lora_rank + c.qk_rope, c.kv_lora_rank, shared=True)

    def layer_kind(self, i):
        return 0 if i < self.config.first_dense else 1
