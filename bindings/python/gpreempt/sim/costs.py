"""What one ATen operator asks of the GPU: kernels with their grid, workgroup, FLOPs and bytes.

FLOPs count 2 per multiply-add. Matrix operators (convolutions, GEMMs) are tiled as rocBLAS /
MIOpen kernels are: one 256-work-item workgroup per 64×64 output tile (the `gemm2048` preset's
tiling). Everything else is one work-item per output element in 256-wide workgroups, with about
one FLOP per element (a few for normalisations and softmax) and its bytes = every input and output
tensor read or written once. Views, allocations and metadata queries launch nothing.
The duration of each kernel comes from the roofline of the device profile (sim/gpu/roofline.h).
"""
import math

import torch

aten = torch.ops.aten

WORKGROUP = 256
TILE = 64
_MAX_GRID = 1 << 30

MATH_OF_DTYPE = {
    torch.float64: "fp64", torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16",
    torch.int8: "int8", torch.uint8: "int8",
}

# Operators that launch no kernel although their output is not a view.
_NO_KERNEL = {
    "empty", "empty_strided", "new_empty", "new_empty_strided", "empty_like", "_local_scalar_dense",
    "sym_size", "sym_stride", "sym_numel", "is_same_size", "_has_compatible_shallow_copy_type",
    "lift_fresh", "set_", "resize_", "_record_function_enter", "_record_function_exit",
}

# FLOPs per output element of operators heavier than one.
_FLOPS_PER_ELEMENT = {
    "native_batch_norm": 4, "native_batch_norm_backward": 6, "native_layer_norm": 6,
    "native_layer_norm_backward": 8, "_softmax": 5, "_log_softmax": 5,
    "_softmax_backward_data": 4, "_log_softmax_backward_data": 4, "gelu": 8, "gelu_backward": 10,
    "_adam_step": 12,
}


def _tensors(x, out):
    if isinstance(x, torch.Tensor):
        out.append(x)
    elif isinstance(x, (list, tuple)):
        for y in x:
            _tensors(y, out)
    return out


def _bytes(ts):
    return sum(t.numel() * t.element_size() for t in ts)


def math_type(dtype):
    return MATH_OF_DTYPE.get(dtype, "fp32")


def is_view(func):
    """True for operators whose output aliases an input without being written (views)."""
    rets = func._schema.returns
    return bool(rets) and all(r.alias_info is not None and not r.alias_info.is_write for r in rets)


def _gemm_grid(m, n, batch=1):
    tiles = math.ceil(m / TILE) * math.ceil(n / TILE) * max(batch, 1)
    return [min(tiles * WORKGROUP, _MAX_GRID)]


def _elementwise_grid(numel):
    return [max(1, min(numel, _MAX_GRID))]


def _conv_macs(x_shape, w_shape, out_shape, groups, transposed):
    # Every output element takes (input channels / groups) × kernel elements multiply-adds; for a
    # transposed convolution every input element does, scattered over the output.
    k = math.prod(w_shape[2:])
    if transposed:
        return math.prod(x_shape) * (w_shape[1]) * k
    return math.prod(out_shape) * (w_shape[1]) * k


_NAMES = {}  # func -> its operator name, or None when it launches nothing


def _name(func):
    try:
        return _NAMES[func]
    except KeyError:
        name = func._schema.name.split("::")[-1]
        r = _NAMES[func] = None if name in _NO_KERNEL or is_view(func) else name
        return r


def kernels(func, args, kwargs, out):
    """[(grid, workgroup, flops, bytes, math, matrix)] for one call of `func`; [] if it launches
    nothing."""
    name = _name(func)
    if name is None:
        return []
    outs = _tensors(out, [])
    ins = _tensors(args, [])
    if kwargs:
        _tensors(list(kwargs.values()), ins)
    if name in ("convolution", "_convolution", "convolution_overrideable"):
        x, w = args[0], args[1]
        transposed = bool(args[6])
        groups = args[8]
        macs = _conv_macs(x.shape, w.shape, outs[0].shape, groups, transposed)
        o = outs[0].shape
        grid = _gemm_grid(o[0] * math.prod(o[2:]), o[1])
        return [(grid, [WORKGROUP], 2.0 * macs, float(_bytes(ins) + _bytes(outs)),
                 math_type(x.dtype), True)]
    if name == "convolution_backward":
        grad_out, x, w = args[0], args[1], args[2]
        transposed, groups, mask = bool(args[7]), args[9], args[10]
        macs = _conv_macs(x.shape, w.shape, grad_out.shape, groups, transposed)
        res = []
        mt = math_type(x.dtype)
        if mask[0]:  # data gradient: a convolution of grad_out with the weights
            grid = _gemm_grid(x.shape[0] * math.prod(x.shape[2:]), x.shape[1])
            res.append((grid, [WORKGROUP], 2.0 * macs,
                        float(_bytes([grad_out, w]) + x.numel() * x.element_size()), mt, True))
        if mask[1]:  # weight gradient: grad_out against the input
            grid = _gemm_grid(w.shape[0], math.prod(w.shape[1:]))
            res.append((grid, [WORKGROUP], 2.0 * macs,
                        float(_bytes([grad_out, x]) + w.numel() * w.element_size()), mt, True))
        if len(mask) > 2 and mask[2]:
            res.append((_elementwise_grid(grad_out.shape[1]), [WORKGROUP],
                        float(grad_out.numel()), float(grad_out.numel() * grad_out.element_size()),
                        mt, False))
        return res
    if name in ("mm", "addmm", "bmm", "baddbmm", "addbmm", "mv", "addmv", "dot", "vdot"):
        a, b = (args[1], args[2]) if name.startswith("add") or name == "baddbmm" else (args[0], args[1])
        if name in ("bmm", "baddbmm", "addbmm"):
            batch, m, k = a.shape
            n = b.shape[-1]
        elif name in ("mv", "addmv"):
            batch, (m, k), n = 1, a.shape, 1
        elif name in ("dot", "vdot"):
            batch, m, k, n = 1, 1, a.shape[0], 1
        else:
            batch, (m, k), n = 1, a.shape, b.shape[-1]
        flops = 2.0 * batch * m * k * n
        if name.startswith("add") or name == "baddbmm":
            flops += batch * m * n
        return [(_gemm_grid(m, n, batch if name != "addbmm" else 1), [WORKGROUP], flops,
                 float(_bytes(ins) + _bytes(outs)), math_type(a.dtype), True)]
    if not outs:
        # In-place operators with no tensor result still write their first argument.
        outs = ins[:1]
        if not outs:
            return []
    numel = max(t.numel() for t in outs)
    per = _FLOPS_PER_ELEMENT.get(name, 1)
    if name.startswith("_foreach_"):
        numel = sum(t.numel() for t in outs)
    if name in ("max_pool2d_with_indices", "avg_pool2d", "_adaptive_avg_pool2d", "sum", "mean",
                "amax", "amin", "max", "min", "var_mean", "norm", "_adaptive_avg_pool2d_backward",
                "max_pool2d_with_indices_backward", "avg_pool2d_backward"):
        # Reductions and pools read more than they write: one FLOP per input element.
        work = max([t.numel() for t in ins] + [numel])
        return [(_elementwise_grid(numel), [WORKGROUP], float(work),
                 float(_bytes(ins) + _bytes(outs)), math_type(outs[0].dtype), False)]
    return [(_elementwise_grid(numel), [WORKGROUP], float(per * numel),
             float(_bytes(ins) + _bytes(outs)), math_type(outs[0].dtype), False)]
