"""What one ATen operator asks of the GPU: kernels with their grid, workgroup, FLOPs and bytes.

FLOPs count 2 per multiply-add. Matrix operators (convolutions, GEMMs) are tiled as rocBLAS /
MIOpen kernels are: one 256-work-item workgroup per 64×64 output tile (the `gemm2048` preset's
tiling). Everything else is one work-item per output element in 256-wide workgroups, with about
one FLOP per element (a few for normalisations and softmax) and its bytes = every input and output
tensor read or written once. Views, allocations and metadata queries launch nothing.
The duration of each kernel comes from the roofline of the device profile (sim/gpu/roofline.h).

Every operator priced here has a rule (`rule()`): an operator without one is not guessed at —
torch_mode decomposes it into operators that have rules, or refuses it (docs/torch.md, "Operators
and their rules"). `add_rule()` gives an operator a rule from outside.
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

# Operators that launch no kernel although their schema does not mark the output as a view.
# `_unsafe_view` is reshape's and matmul's relabelling of a tensor they have just made contiguous
# (the copy, if any, is its own `clone`): it moves no data on a GPU.
_NO_KERNEL = {
    "empty", "empty_strided", "new_empty", "new_empty_strided", "empty_like", "_local_scalar_dense",
    "sym_size", "sym_stride", "sym_numel", "is_same_size", "_has_compatible_shallow_copy_type",
    "lift_fresh", "lift_fresh_copy", "set_", "resize_", "_record_function_enter",
    "_record_function_exit", "_unsafe_view", "resize_as_", "_resize_output_", "is_nonzero",
    "size", "stride", "numel", "dim", "is_contiguous", "is_set_to", "result_type",
}

# The rule of every operator that launches kernels, by ATen name: how its kernels are priced.
#   "conv", "conv_backward", "gemm": the matrix operators (tiled, FLOPs from the shapes);
#   "reduce": reads more than it writes (pools, reductions): one FLOP per input element;
#   "pointwise": one pass over its outputs (elementwise, copies, fills, normalisations, softmax,
#     losses, gathers and scatters): _FLOPS_PER_ELEMENT (default 1) per output element;
#   "foreach": a _foreach_ operator, one kernel over all the tensors of its list.
_RULE = dict.fromkeys(("convolution", "_convolution", "convolution_overrideable"), "conv")
_RULE["convolution_backward"] = "conv_backward"
_RULE.update(dict.fromkeys(("mm", "addmm", "bmm", "baddbmm", "addbmm", "mv", "addmv", "dot",
                            "vdot"), "gemm"))
_RULE.update(dict.fromkeys((
    "max_pool2d_with_indices", "max_pool3d_with_indices", "avg_pool2d", "avg_pool3d",
    "_adaptive_avg_pool2d", "_adaptive_avg_pool3d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "_adaptive_avg_pool2d_backward", "_adaptive_avg_pool3d_backward",
    "adaptive_max_pool2d_backward", "max_pool2d_with_indices_backward",
    "max_pool3d_with_indices_backward", "avg_pool2d_backward", "avg_pool3d_backward",
    "sum", "mean", "amax", "amin", "max", "min", "aminmax", "var_mean", "var", "std", "std_mean",
    "norm", "linalg_vector_norm", "prod", "argmax", "argmin", "logsumexp", "any", "all",
    "topk", "sort", "cumsum", "cumprod", "count_nonzero", "multinomial", "searchsorted",
    "bucketize", "kthvalue", "median", "mode",
), "reduce"))
_RULE.update(dict.fromkeys((
    # arithmetic, comparisons, logic
    "add", "add_", "sub", "sub_", "rsub", "mul", "mul_", "div", "div_", "remainder", "fmod",
    "floor_divide", "neg", "abs", "sign", "sgn", "reciprocal", "pow", "pow_", "sqrt", "rsqrt",
    "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "asin", "acos",
    "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "erfinv",
    "floor", "ceil", "round", "trunc", "frac", "clamp", "clamp_", "clamp_min", "clamp_min_",
    "clamp_max", "clamp_max_", "maximum", "minimum", "fmax", "fmin", "lerp", "hypot", "logit",
    "xlogy", "nan_to_num", "copysign", "addcmul", "addcmul_", "addcdiv", "addcdiv_", "where",
    "masked_fill", "masked_fill_", "eq", "ne", "lt", "le", "gt", "ge", "logical_not",
    "logical_and", "logical_or", "logical_xor", "bitwise_not", "bitwise_and", "bitwise_or",
    "bitwise_xor", "isnan", "isinf", "sigmoid", "sigmoid_", "neg_", "abs_", "exp_", "sqrt_",
    "reciprocal_", "tanh_", "sub_", "lerp_", "clamp_min_", "square",
    # activations and their gradients
    "relu", "relu_", "threshold", "threshold_", "threshold_backward", "gelu", "gelu_",
    "gelu_backward", "silu", "silu_", "silu_backward", "mish", "mish_", "mish_backward",
    "hardswish", "hardswish_", "hardswish_backward", "hardsigmoid", "hardsigmoid_",
    "hardsigmoid_backward", "hardtanh", "hardtanh_", "hardtanh_backward", "leaky_relu",
    "leaky_relu_", "leaky_relu_backward", "elu", "elu_", "elu_backward", "softplus",
    "softplus_backward", "glu", "glu_backward", "sigmoid_backward", "tanh_backward",
    "log_sigmoid_forward", "log_sigmoid_backward", "_prelu_kernel", "_prelu_kernel_backward",
    "prelu",
    # copies, fills, factories, random numbers
    "clone", "copy_", "_to_copy", "_copy_from", "_copy_from_and_resize", "fill_", "zero_",
    "zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "new_zeros", "new_ones",
    "new_full", "scalar_tensor", "arange", "linspace", "randn", "rand", "randint", "randn_like",
    "rand_like", "randint_like", "normal", "normal_", "uniform_", "bernoulli", "bernoulli_",
    "exponential_", "random_", "randperm", "native_dropout", "native_dropout_backward",
    "cat", "stack", "constant_pad_nd", "reflection_pad1d", "reflection_pad2d",
    "replication_pad1d", "replication_pad2d", "reflection_pad2d_backward",
    "replication_pad2d_backward", "roll", "flip", "repeat", "tril", "triu", "tril_", "triu_",
    "scatter", "scatter_add", "scatter_reduce", "index_put", "index_add", "index_fill",
    "index_copy", "masked_scatter", "embedding_dense_backward", "slice_backward", "select_backward",
    "diagonal_backward", "as_strided_scatter", "slice_scatter", "select_scatter",
    "diagonal_scatter", "unfold_backward", "im2col", "col2im", "one_hot", "channel_shuffle",
    "pixel_shuffle", "pixel_unshuffle", "upsample_nearest1d", "upsample_nearest2d",
    "upsample_nearest3d", "upsample_linear1d", "upsample_bilinear2d", "upsample_bicubic2d",
    "upsample_trilinear3d", "upsample_nearest2d_backward", "upsample_bilinear2d_backward",
    "upsample_bicubic2d_backward", "grid_sampler_2d", "grid_sampler_2d_backward",
    "_transform_bias_rescale_qkv",
    # normalisations, softmax, losses
    "native_batch_norm", "native_batch_norm_backward", "native_layer_norm",
    "native_layer_norm_backward", "native_group_norm", "native_group_norm_backward",
    "_softmax", "_log_softmax", "_softmax_backward_data", "_log_softmax_backward_data",
    "_masked_softmax", "_masked_softmax_backward", "nll_loss_forward", "nll_loss_backward",
    "nll_loss2d_forward", "nll_loss2d_backward", "mse_loss", "mse_loss_backward", "l1_loss",
    "smooth_l1_loss", "smooth_l1_loss_backward", "huber_loss", "huber_loss_backward",
    "binary_cross_entropy", "binary_cross_entropy_backward",
    "binary_cross_entropy_with_logits", "_adam_step",
), "pointwise"))
# A gather reads only the elements it selects, not its whole source: one token's embedding reads
# one row of the table, not the table.
_RULE.update(dict.fromkeys(("embedding", "index_select", "gather", "index"), "gather"))
# An in-place scatter reads its source and indices and writes only the selected elements of its
# destination (a KV cache's new row, not the cache); read-modify-write for the accumulating ones.
# The out-of-place forms (index_copy, scatter, ...) copy the whole destination first: "pointwise".
_RULE.update(dict.fromkeys((
    "index_copy_", "index_put_", "_index_put_impl_", "index_add_", "scatter_", "scatter_add_",
    "index_fill_"), "scatter"))
_ACCUMULATING_SCATTERS = {"index_add_", "scatter_add_"}

# FLOPs per output element of operators heavier than one.
_FLOPS_PER_ELEMENT = {
    "native_batch_norm": 4, "native_batch_norm_backward": 6, "native_layer_norm": 6,
    "native_layer_norm_backward": 8, "native_group_norm": 6, "native_group_norm_backward": 8,
    "_softmax": 5, "_log_softmax": 5, "_masked_softmax": 5, "_softmax_backward_data": 4,
    "_log_softmax_backward_data": 4, "_masked_softmax_backward": 4, "gelu": 8,
    "gelu_backward": 10, "_adam_step": 12,
    # q = (q + bias) / sqrt(head dim), k and v + bias: one kernel over q, k and v.
    "_transform_bias_rescale_qkv": 2,
}


def add_rule(name, kind="pointwise", flops_per_element=1):
    """Give the ATen operator `name` ("aten::my_op" or "my_op") a rule: one of "pointwise",
    "reduce", "gemm", "conv", "foreach", or "none" (launches nothing). For an operator of your
    own, or one of ATen's that torch_mode refuses (docs/torch.md, "Operators and their rules")."""
    name = name.split("::")[-1]
    kinds = ("pointwise", "reduce", "gemm", "conv", "foreach", "none")
    if kind not in kinds:
        raise ValueError("add_rule(%r): kind must be one of %s, got %r" % (name, kinds, kind))
    if kind == "none":
        _NO_KERNEL.add(name)
    else:
        _RULE[name] = kind
    if flops_per_element != 1:
        _FLOPS_PER_ELEMENT[name] = flops_per_element
    _NAMES.clear()
    _KINDS.clear()


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
    """True for operators whose output aliases an input without being written (views), and for
    the in-place views (`as_strided_`, `squeeze_`, ...: they change the metadata of their input)."""
    rets = func._schema.returns
    if bool(rets) and all(r.alias_info is not None and not r.alias_info.is_write for r in rets):
        return True
    return torch.Tag.inplace_view in func.tags


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
# id(func) -> (func, its rule (see _RULE), "none" when it launches nothing, None without one):
# keyed by id because an OpOverload's hash is computed in Python, and this is asked per call.
_KINDS = {}


def _name(func):
    try:
        return _NAMES[func]
    except KeyError:
        name = func._schema.name.split("::")[-1]
        r = _NAMES[func] = None if name in _NO_KERNEL or is_view(func) else name
        return r


def rule(func):
    """How `func`'s kernels are priced: "none" (it launches nothing), a kind of _RULE, or None
    when it has no rule."""
    hit = _KINDS.get(id(func))
    if hit is not None and hit[0] is func:
        return hit[1]
    name = _name(func)
    if name is None:
        kind = "none"
    elif name.startswith("_foreach_"):
        kind = "foreach"
    else:
        kind = _RULE.get(name)
    _KINDS[id(func)] = (func, kind)
    return kind


def kernels(func, args, kwargs, out):
    """[(grid, workgroup, flops, bytes, math, matrix)] for one call of `func`; [] if it launches
    nothing. LookupError if `func` has no rule (see rule())."""
    kind = rule(func)
    if kind == "none":
        return []
    if kind is None:
        raise LookupError("%s has no cost rule" % func)
    name = _name(func)
    outs = _tensors(out, [])
    ins = _tensors(args, [])
    if kwargs:
        _tensors(list(kwargs.values()), ins)
    if kind == "conv":
        x, w = args[0], args[1]
        transposed = bool(args[6])
        groups = args[8]
        macs = _conv_macs(x.shape, w.shape, outs[0].shape, groups, transposed)
        o = outs[0].shape
        grid = _gemm_grid(o[0] * math.prod(o[2:]), o[1])
        return [(grid, [WORKGROUP], 2.0 * macs, float(_bytes(ins) + _bytes(outs)),
                 math_type(x.dtype), True)]
    if kind == "conv_backward":
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
    if kind == "gemm":
        bias_first = name.startswith("add") or name == "baddbmm"
        a, b = (args[1], args[2]) if bias_first else (args[0], args[1])
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
        if bias_first:
            flops += batch * m * n
        return [(_gemm_grid(m, n, batch if name != "addbmm" else 1), [WORKGROUP], flops,
                 float(_bytes(ins) + _bytes(outs)), math_type(a.dtype), True)]
    if kind == "gather":
        o = outs[0]
        index = [t for t in ins[1:] if not t.is_floating_point()]
        moved = o.numel() * o.element_size()
        return [(_elementwise_grid(o.numel()), [WORKGROUP], float(o.numel()),
                 float(2 * moved + _bytes(index)), math_type(o.dtype), False)]
    if kind == "scatter":
        dest = ins[0]
        rest = ins[1:]
        # What is written: as many elements as the source holds; index_fill_ has a scalar source
        # and writes the slices its index selects (index entries × elements per slice).
        values = [t for t in rest if t.dtype == dest.dtype]
        if values:
            written = max(t.numel() for t in values)
        else:
            dim = args[1] if len(args) > 1 and isinstance(args[1], int) else 0
            n_index = max([t.numel() for t in rest] or [0])
            written = min(dest.numel(), n_index * (dest.numel() // max(dest.shape[dim], 1)
                                                   if dest.dim() else 1))
        wbytes = written * dest.element_size()
        rmw = 2 if name in _ACCUMULATING_SCATTERS else 1
        return [(_elementwise_grid(written), [WORKGROUP], float(written),
                 float(_bytes(rest) + rmw * wbytes), math_type(dest.dtype), False)]
    if not outs:
        # In-place operators with no tensor result still write their first argument (for a
        # _foreach_ operator: every tensor of its first list).
        first = args[0] if args else None
        outs = _tensors(first, []) if kind == "foreach" else ins[:1]
        if not outs:
            return []
    if kind == "foreach":
        numel = sum(t.numel() for t in outs)
    else:
        numel = max(t.numel() for t in outs)
    if kind == "reduce":
        # Reductions and pools read more than they write: one FLOP per input element.
        work = max([t.numel() for t in ins] + [numel])
        return [(_elementwise_grid(numel), [WORKGROUP], float(work),
                 float(_bytes(ins) + _bytes(outs)), math_type(outs[0].dtype), False)]
    per = _FLOPS_PER_ELEMENT.get(name, 1)
    return [(_elementwise_grid(numel), [WORKGROUP], float(per * numel),
             float(_bytes(ins) + _bytes(outs)), math_type(outs[0].dtype), False)]
