"""Low-rank adapters (LoRA, Hu et al. 2021) as Hugging Face PEFT applies them: a frozen projection
y = x·W gains y += (x·A)·B · alpha/r, with A [in, r] and B [r, out] the only trainable weights.

B starts at zero (PEFT's init), so an adapted model starts as its base. The adapters of the Llama
attention's fused QKV projection share one GEMM for their three A matrices (x·[A_q A_k A_v]), as
a fused-LoRA kernel does; their B matrices stay separate, since each writes its own slice.
"""
import collections

import torch

# rank r, alpha (the delta's scale is alpha / r): PEFT's LoraConfig defaults are r 8, alpha 8;
# fine-tuning recipes for Llama commonly use r 16, alpha 32, which are the defaults here.
LoraConfig = collections.namedtuple("LoraConfig", "rank alpha")
DEFAULT = LoraConfig(16, 32)
_MARK = "_lora_"


def is_adapter(name):
    """Whether the parameter called `name` is an adapter's (Adapter names its parameters so)."""
    return _MARK in name


def _param(shape, dtype, device, zero=False):
    if str(device) == "meta":
        t = torch.empty(*shape, dtype=dtype, device=device)
    elif zero:
        t = torch.zeros(*shape, dtype=dtype, device=device)
    else:
        t = torch.randn(*shape, dtype=dtype, device=device) * shape[0] ** -0.5
    return torch.nn.Parameter(t)


class Adapter:
    """The adapters of one projection of `in_dim` inputs whose output is cut into `outs` slices
    (one per adapted projection: [q, k, v] widths for a fused QKV, [out] for one projection)."""

    def __init__(self, module, name, in_dim, outs, cfg, dtype, device):
        r = cfg.rank
        self.outs = list(outs)
        self.scale = cfg.alpha / r
        self.rank = r
        # Registered on `module` so that its parameters() (and the optimizer) see them.
        self.a = _param((in_dim, r * len(self.outs)), dtype, device)
        module.register_parameter(name + _MARK + "a", self.a)
        self.b = []
        for i, width in enumerate(self.outs):
            p = _param((r, width), dtype, device, zero=True)
            module.register_parameter("%s%sb%d" % (name, _MARK, i), p)
            self.b.append(p)

    def delta(self, x):
        """(x·A)·B·alpha/r for the rows x [T, in]: [T, sum(outs)]."""
        xa = torch.mm(x, self.a)
        r = self.rank
        parts = [torch.mm(xa[:, i * r:(i + 1) * r], b) for i, b in enumerate(self.b)]
        d = parts[0] if len(parts) == 1 else torch.cat(parts, dim=-1)
        return d * self.scale
