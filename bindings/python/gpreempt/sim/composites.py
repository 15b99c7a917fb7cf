"""What the GPU runs for ATen operators that torch_mode does not price as one kernel.

torch_mode (pytorch.py) prices an operator by its rule in costs.py. An operator without a rule
(the operators of GPU_COMPOSITES have none on purpose) is instead run as the operators its GPU
implementation is made of, each of them through torch_mode and priced by its own rule.
decomposition() gives that implementation, first found of:

1. GPU_COMPOSITES below: the operators that ROCm PyTorch 1.13 itself runs for a fused entry
   point, written out from its sources (the transformer fast path, aten/src/ATen/native/
   transformers/{transformer.cpp,attention.cpp,cuda/attention.cu}, and cuda/Blas.cpp);
2. the operator's CompositeImplicitAutograd or CompositeExplicitAutograd kernel: ATen code that
   is the same on every device, so its operators are the GPU's (an implicit one, e.g. matmul,
   reaches torch_mode only when a decomposition of 1. calls it);
3. torch._decomp's decomposition: PyTorch's reference for compilers, made of the operators a
   compiler would otherwise run;

and None when there is none (torch_mode then refuses the operator, naming it).
"""
import torch

aten = torch.ops.aten

_IMPLICIT = torch._C.DispatchKey.CompositeImplicitAutograd
_EXPLICIT = torch._C.DispatchKey.CompositeExplicitAutograd


def _addmm_activation(self, mat1, mat2, *, beta=1, alpha=1, use_gelu=False):
    # ROCm's 1.13 build has no hipBLASLt epilogue (cuda/Blas.cpp compiles its cublasLt path
    # under #if defined(CUDA_VERSION) only): the GEMM, then the activation in place, a kernel.
    out = aten.addmm.default(self, mat1, mat2, beta=beta, alpha=alpha)
    if use_gelu:
        return aten.gelu_.default(out)
    return aten.relu_.default(out)


def _qkv_projection(query, key, value, embed_dim, qkv_weight):
    # attention.cpp's qkv_projection: one GEMM for self-attention, else one per distinct input
    # and a concatenation.
    if key is value:
        if query is key:
            return aten.matmul.default(query, qkv_weight.t())
        wq, wkv = aten.split_with_sizes.default(qkv_weight, [embed_dim, 2 * embed_dim])
        parts = [aten.matmul.default(query, wq.t()), aten.matmul.default(key, wkv.t())]
    else:
        wq, wk, wv = aten.chunk.default(qkv_weight, 3, 0)
        parts = [aten.matmul.default(query, wq.t()), aten.matmul.default(key, wk.t()),
                 aten.matmul.default(value, wv.t())]
    return aten.cat.default(parts, 2)


def _native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias,
                                 proj_weight, proj_bias, mask=None, need_weights=True,
                                 average_attn_weights=True, mask_type=None):
    # native_multi_head_attention_cuda in 1.13: the flash and memory-efficient kernels it could
    # take instead are CUDA-only (USE_FLASH_ATTENTION), so on ROCm it is this unfused path.
    qkv = _qkv_projection(query, key, value, embed_dim, qkv_weight)
    q, k, v = aten._transform_bias_rescale_qkv.default(qkv, qkv_bias, num_head)
    b, h, t, dh = q.shape
    s = k.shape[2]
    qkt = aten.bmm.default(q.reshape(b * h, t, dh), k.reshape(b * h, s, dh).transpose(1, 2))
    qkt = qkt.view(b, h, t, s)
    if mask is not None:
        if mask.dtype != torch.bool:
            mask = aten._to_copy.default(mask, dtype=torch.bool)
        if mask.dim() == 2:  # a key padding mask [B, S] (mask_type 1) or [T, S]: broadcast views
            lead = (b, 1, 1, s) if mask_type == 1 else (1, 1, t, s)
            mask = mask.view(lead).expand(b, h, t, s)
        attn = aten._masked_softmax.default(qkt, mask, qkt.dim() - 1, mask_type)
    else:
        attn = aten._softmax.default(qkt, qkt.dim() - 1, False)
    ctx = aten.bmm.default(attn.view(b * h, t, s), v.reshape(b * h, s, dh)).view(b, h, t, dh)
    # transform0213_gemm_nt_bias: [B, H, T, dh] to [B, T, H·dh] (a copy), then the projection.
    ctx = aten.clone.default(ctx.permute(0, 2, 1, 3), memory_format=torch.contiguous_format)
    proj = aten.addmm.default(proj_bias, ctx.view(b * t, h * dh), proj_weight.t())
    proj = proj.view(b, t, proj.shape[-1])
    if not need_weights:
        return proj, None
    if average_attn_weights:
        attn = aten.div_.Scalar(aten.sum.dim_IntList(attn, [1]), num_head)
    return proj, attn


def _layer_norm(x, weight, bias, eps):
    return aten.native_layer_norm.default(x, [x.shape[-1]], weight, bias, eps)[0]


def _transformer_encoder_layer_fwd(src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight,
                                   proj_bias, use_gelu, norm_first, eps, norm_weight_1,
                                   norm_bias_1, norm_weight_2, norm_bias_2, ffn_weight_1,
                                   ffn_bias_1, ffn_weight_2, ffn_bias_2, mask=None,
                                   mask_type=None):
    # transformer.cpp's transformer_encoder_layer_forward: attention, the residual added in
    # place, layer norm, the feed-forward network as two GEMMs, the residual, layer norm.
    x = src
    if norm_first:
        x = _layer_norm(x, norm_weight_1, norm_bias_1, eps)
    x = aten._native_multi_head_attention.default(
        x, x, x, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, mask,
        False, True, mask_type)[0]
    x = aten.add_.Tensor(x, src)
    if not norm_first:
        x = _layer_norm(x, norm_weight_1, norm_bias_1, eps)
    residual = x
    if norm_first:
        x = _layer_norm(x, norm_weight_2, norm_bias_2, eps)
    b, t, d = x.shape
    y = aten._addmm_activation.default(ffn_bias_1, x.reshape(b * t, d), ffn_weight_1.t(),
                                       use_gelu=use_gelu)
    y = aten.addmm.default(ffn_bias_2, y, ffn_weight_2.t()).view(b, t, -1)
    y = aten.add_.Tensor(y, residual)
    if not norm_first:
        y = _layer_norm(y, norm_weight_2, norm_bias_2, eps)
    return y


GPU_COMPOSITES = {
    aten._addmm_activation.default: _addmm_activation,
    aten._native_multi_head_attention.default: _native_multi_head_attention,
    aten._transformer_encoder_layer_fwd.default: _transformer_encoder_layer_fwd,
}


def _kernel(func, key):
    def run(*args, **kwargs):
        return func._op_dk(key, *args, **kwargs)
    return run


_FOUND = {}


def decomposition(func):
    """The operators the GPU runs for `func`, as a function of its arguments, or None."""
    try:
        return _FOUND[func]
    except KeyError:
        pass
    fn = GPU_COMPOSITES.get(func)
    for key in (_IMPLICIT, _EXPLICIT):
        if fn is None and torch._C._dispatch_has_kernel_for_dispatch_key(func.name(), key):
            fn = _kernel(func, key)
    if fn is None:
        from torch._decomp import decomposition_table
        fn = decomposition_table.get(func)
    _FOUND[func] = fn
    return fn
