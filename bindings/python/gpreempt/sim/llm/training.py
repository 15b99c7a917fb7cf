"""The Llama-style model as a fine-tuning job runs it: every token of a [batch, sequence] batch
through the model at once, causal attention over the whole sequence, logits for every position and
the causal-LM cross-entropy (each position predicts the next token), then backward and AdamW.

The layers are llama.py's (fused QKV and gate+up projections, RMSNorm, rotary, grouped-query
attention) written for a training step instead of a serving one: there is no KV cache, and
attention is one padded batched matmul per layer with an additive causal mask (what an eager
implementation without flash attention runs: the S×S scores are materialised and kept for
backward). The softmax and the loss run in fp32, as Hugging Face's Llama does.

Two methods:
- full: every weight trains, all in bf16 (weights, gradients and AdamW state; no fp32 master
  copy: torchtune's single-device configs train in bf16 too, though with an 8-bit AdamW);
- lora: the base weights are frozen and rank-r adapters (lora.py) on the attention's q, k, v and
  output projections train. Backward still runs through every layer (the adapters of layer 0
  need the gradient of everything above), but it computes no weight gradient for the base.

Built on the meta device (the default) the model allocates nothing: under
gpreempt.sim.torch_mode the 8B model's LoRA step runs in a few hundred MiB of host memory.
"""
import math

import torch

from . import lora as lora_mod
from .step_model import Rotary


def _tensor(shape, dtype, device, fill=None):
    if str(device) == "meta":
        return torch.empty(*shape, dtype=dtype, device=device)
    if fill is not None:
        return torch.full(shape, fill, dtype=dtype, device=device)
    return torch.randn(*shape, dtype=dtype, device=device) * 0.02


def _norm(x, weight, eps=1e-5):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


class _Layer:
    """One decoder layer's weights (registered on the model) and its training forward."""

    def __init__(self, model, i, c, dtype, device, lora):
        def param(name, shape, fill=None):
            p = torch.nn.Parameter(_tensor(shape, dtype, device, fill))
            model.register_parameter("layer%d_%s" % (i, name), p)
            return p
        self.c = c
        self.attn_norm = param("attn_norm", (c.hidden,), 1.0)
        self.wqkv = param("wqkv", (c.hidden, (c.heads + 2 * c.kv_heads) * c.head_dim))
        self.wo = param("wo", (c.heads * c.head_dim, c.hidden))
        self.mlp_norm = param("mlp_norm", (c.hidden,), 1.0)
        self.wgu = param("wgu", (c.hidden, 2 * c.ffn))
        self.wdown = param("wdown", (c.ffn, c.hidden))
        self.lora_qkv = self.lora_o = None
        if lora is not None:
            q, kv = c.heads * c.head_dim, c.kv_heads * c.head_dim
            self.lora_qkv = lora_mod.Adapter(model, "layer%d_qkv" % i, c.hidden, [q, kv, kv],
                                             lora, dtype, device)
            self.lora_o = lora_mod.Adapter(model, "layer%d_o" % i, q, [c.hidden], lora, dtype,
                                           device)

    def __call__(self, x, B, S, cos, sin, mask):
        c = self.c
        H, K, d = c.heads, c.kv_heads, c.head_dim
        g = H // K
        h = _norm(x, self.attn_norm)
        qkv = torch.mm(h, self.wqkv)
        if self.lora_qkv is not None:
            qkv = qkv + self.lora_qkv.delta(h)
        qk = Rotary.apply(qkv[:, :(H + K) * d].view(B, S, H + K, d), cos, sin)
        v = qkv[:, (H + K) * d:].view(B, S, K, d)
        # Grouped-query attention with the g query heads of a KV head folded into the rows, as in
        # attention.py: [B, K, g·S, d] @ [B, K, d, S], keys neither expanded nor copied g times.
        q = qk[:, :, :H].reshape(B, S, K, g, d).permute(0, 2, 3, 1, 4).reshape(B, K, g * S, d)
        k = qk[:, :, H:].permute(0, 2, 3, 1)  # [B, K, d, S]
        s = torch.matmul(q * d ** -0.5, k).view(B, K, g, S, S) + mask
        p = torch.softmax(s.float(), dim=-1).to(x.dtype).view(B, K, g * S, S)
        o = torch.matmul(p, v.permute(0, 2, 1, 3))  # [B, K, g·S, d]
        o = o.view(B, K, g, S, d).permute(0, 3, 1, 2, 4).reshape(B * S, H * d)
        a = torch.mm(o, self.wo)
        if self.lora_o is not None:
            a = a + self.lora_o.delta(o)
        x = x + a
        gu = torch.mm(_norm(x, self.mlp_norm), self.wgu)
        return x + torch.mm(torch.nn.functional.silu(gu[:, :c.ffn]) * gu[:, c.ffn:], self.wdown)


class CausalLM(torch.nn.Module):
    """A llama.LlamaConfig's model for training. method: "full" or "lora" (lora: a
    lora.LoraConfig, default lora.DEFAULT). device: "meta" (no memory, for torch_mode) or "cpu"
    (real random weights: small configs only)."""

    def __init__(self, c, method="full", lora=None, device="meta", dtype=None, max_seq=8192):
        super().__init__()
        if method not in ("full", "lora"):
            raise ValueError("method must be 'full' or 'lora', got %r" % (method,))
        self.config = c
        self.method = method
        self.dtype = dtype or torch.bfloat16
        self.max_seq = max_seq
        dt = self.dtype
        self.embed = torch.nn.Parameter(_tensor((c.vocab, c.hidden), dt, device))
        self.norm = torch.nn.Parameter(_tensor((c.hidden,), dt, device, 1.0))
        self.lm_head = None if c.tied else torch.nn.Parameter(_tensor((c.hidden, c.vocab), dt,
                                                                      device))
        adapters = (lora or lora_mod.DEFAULT) if method == "lora" else None
        self.layers = [_Layer(self, i, c, dt, device, adapters) for i in range(c.layers)]
        if method == "lora":
            # Only the adapters train: every base weight, the embedding and the norms are frozen.
            for name, p in self.named_parameters():
                p.requires_grad_(lora_mod.is_adapter(name))
        self.rope = Rotary(c.head_dim, c.rope_theta, max_seq, dt, device)
        if str(device) == "meta":
            self.mask = torch.empty(max_seq, max_seq, dtype=dt, device=device)
        else:
            self.mask = torch.full((max_seq, max_seq), -math.inf, dtype=dt).triu(1)

    def trainable(self):
        """The parameters that train (all for full, the adapters for lora)."""
        return [p for p in self.parameters() if p.requires_grad]

    def forward(self, tokens, labels):
        """The mean causal-LM cross-entropy of tokens [B, S] (int64) against labels [B, S] (the
        next token of each position)."""
        B, S = tokens.shape
        if S > self.max_seq:
            raise ValueError("a sequence of %d tokens exceeds the model's %d positions"
                             % (S, self.max_seq))
        x = torch.nn.functional.embedding(tokens.reshape(-1), self.embed)
        cos, sin = self.rope.cos[:S, None, :], self.rope.sin[:S, None, :]
        mask = self.mask[:S, :S]
        for layer in self.layers:
            x = layer(x, B, S, cos, sin, mask)
        head = self.embed.t() if self.lm_head is None else self.lm_head
        logits = torch.mm(_norm(x, self.norm), head)
        return torch.nn.functional.cross_entropy(logits.float(), labels.reshape(-1))


def optimizer(model, lr=2e-5, weight_decay=0.01):
    """AdamW over the trainable parameters only (a frozen weight gets no state), foreach: one
    kernel per update operator over every parameter, as a fused optimizer launches."""
    return torch.optim.AdamW(model.trainable(), lr=lr, weight_decay=weight_decay, foreach=True)


def batch(c, batch_size, seq_len, seed=0):
    """Random token ids [B, S] and their next-token labels (no data is downloaded)."""
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, c.vocab, (batch_size, seq_len + 1), generator=gen)
    return ids[:, :-1].contiguous(), ids[:, 1:].contiguous()


def step(model, opt, tokens, labels):
    """One training step: forward, loss, backward, AdamW, gradients released."""
    model(tokens, labels).backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
