"""Shape rules (Meta kernels) for ATen operators that Debian's torch 1.13 lacks on the meta device.

Without them a shapes-only run falls back to real CPU arithmetic — FakeTensorMode does that for
``convolution_backward`` and a ResNet-50 batch-64 training step then costs ~23 s of host time.
Registered through torch.library once, and only for operators that have no Meta kernel yet, so
a newer torch keeps its own. Families of operators whose overloads are too many to register one by
one (_foreach_*) and operators that torch._decomp can shape get their outputs from fallback().
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


def _transform_bias_rescale_qkv(qkv, qkv_bias, num_heads):
    # [B, T, 3·D] to q, k, v of [B, heads, T, D / heads] each (attention.cpp).
    b, t, three_d = qkv.shape
    dh = three_d // 3 // num_heads
    return tuple(qkv.new_empty((b, num_heads, t, dh)) for _ in range(3))


def _masked_softmax(input, mask, dim=None, mask_type=None):
    return input.new_empty(input.shape)


def _masked_softmax_backward(grad_output, output, mask, dim=None):
    return grad_output.new_empty(grad_output.shape)


def _adaptive_avg_pool2d_backward(grad_output, input):
    return input.new_empty(input.shape)


def _multinomial(input, num_samples, replacement=False, *, generator=None):
    return input.new_empty(input.shape[:-1] + (num_samples,), dtype=torch.long)


_RULES = {
    "multinomial": _multinomial,
    "convolution_backward": _convolution_backward,
    "_transform_bias_rescale_qkv": _transform_bias_rescale_qkv,
    "_masked_softmax": _masked_softmax,
    "_masked_softmax_backward": _masked_softmax_backward,
    "_adaptive_avg_pool2d_backward": _adaptive_avg_pool2d_backward,
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


def _foreach(func, args):
    # One output per tensor of the first list, shaped like it; in-place forms return nothing.
    if not func._schema.returns:
        return None
    if func._schema.name.endswith("_foreach_norm"):
        return [t.new_empty(()) for t in args[0]]
    return [t.new_empty(t.shape) for t in args[0]]


def fallback(func, args, kwargs):
    """The outputs (meta tensors) of `func` for meta arguments, for an operator without a Meta
    kernel; LookupError when there is no rule for its shapes either."""
    if func._schema.name.startswith("aten::_foreach_"):
        return _foreach(func, args)
    from torch._decomp import decomposition_table
    fn = decomposition_table.get(func)
    if fn is None:
        raise LookupError("%s has no Meta kernel" % func)
    return fn(*args, **kwargs)
