"""Shape rules (Meta kernels) for ATen operators that Debian's torch 1.13 lacks on the meta device.

Without them a shapes-only run falls back to real CPU arithmetic — FakeTensorMode does that for
``convolution_backward`` and a ResNet-50 batch-64 training step then costs ~23 s of host time.
Registered through torch.library once, and only for operators that have no Meta kernel yet, so
a newer torch keeps its own.
"""
import torch

_lib = None


def _convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                          transposed, output_padding, groups, output_mask):
    grad_input = input.new_empty(input.shape) if output_mask[0] else None
    grad_weight = weight.new_empty(weight.shape) if output_mask[1] else None
    grad_bias = None
    if output_mask[2]:
        size = bias_sizes if bias_sizes is not None else [grad_output.shape[1]]
        grad_bias = grad_output.new_empty(size)
    return grad_input, grad_weight, grad_bias


_RULES = {
    "convolution_backward": _convolution_backward,
}


def register():
    """Install the missing Meta kernels (idempotent)."""
    global _lib
    if _lib is not None:
        return
    lib = torch.library.Library("aten", "IMPL", "Meta")
    for name, fn in _RULES.items():
        if not torch._C._dispatch_has_kernel_for_dispatch_key("aten::" + name, "Meta"):
            lib.impl(name, fn)
    _lib = lib
