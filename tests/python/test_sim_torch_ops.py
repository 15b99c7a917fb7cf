"""gpreempt.sim.torch_mode's operators: every one has a rule (costs.py), is run as the operators
the GPU runs for it (composites.py), or is refused by name; views launch nothing.

Models run as an online service runs them: eval mode under torch.no_grad(), where PyTorch 1.13
takes its fused fast paths (_transformer_encoder_layer_fwd, _native_multi_head_attention).
"""
import re

import pytest

from conftest import SOURCE_DIR, needs_sim

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")

import gpreempt.sim as sim  # noqa: E402
from gpreempt.sim import costs  # noqa: E402
from gpreempt.sim.pytorch import UnsupportedOperator  # noqa: E402


def encoder_flops(layers, d, ffn, seq, batch):
    """FLOPs (2 per multiply-add) of a post-norm transformer encoder's GEMMs, by hand.

    Per token and layer, with d = heads × head dim:
      QKV projection   2·d·3d    one GEMM of [tokens, d] by [d, 3d]
      Q·Kᵀ             2·seq·d   every head: head dim multiply-adds per key, seq keys
      softmax(QKᵀ)·V   2·seq·d   the same shape
      out projection   2·d·d
      feed-forward     2·d·ffn + 2·ffn·d
    = 24·d² + 4·seq·d for ffn = 4d (BERT-base, d = 768, seq 128: 14.55 MFLOP per token and
    layer). The bias adds, layer norms, softmax and residuals are O(d) per token (< 1 %): the
    ±15 % of the checks below is for them and for the model of the cost, not for the GEMMs.
    """
    per_token = 2 * d * 3 * d + 2 * seq * d + 2 * seq * d + 2 * d * d + 2 * d * ffn + 2 * ffn * d
    return layers * batch * seq * per_token


@needs_sim
@pytest.mark.parametrize("batch", [1, 8])
def test_a_bert_base_encoder_serves_in_eval_mode_with_its_flops(batch):
    layer = torch.nn.TransformerEncoderLayer(d_model=768, nhead=12, dim_feedforward=3072,
                                             batch_first=True)
    model = torch.nn.TransformerEncoder(layer, num_layers=12).eval()
    with torch.no_grad(), sim.torch_mode() as m:
        y = model(torch.randn(batch, 128, 768))
    assert tuple(y.shape) == (batch, 128, 768)
    s = m.stats()
    # The fused layer ran as ROCm's 1.13 runs it, 14 kernels a layer (composites.py), not as one
    # kernel nor as a refusal.
    ops = s["ops"]
    assert ops["aten._transform_bias_rescale_qkv.default"] == 12
    assert ops["aten.bmm.default"] == 24 and ops["aten.relu_.default"] == 12
    assert not any("transformer_encoder_layer" in op or "multi_head" in op for op in ops)
    assert s["dispatches"] == 12 * 14 + 1  # + the input's randn
    hand = encoder_flops(12, 768, 3072, 128, batch)  # 22.35 GFLOP per sequence
    assert s["flops"] == pytest.approx(hand, rel=0.15)
    assert s["matrix_flops"] == pytest.approx(hand, rel=0.01)


@needs_sim
def test_vit_b_16_serves_in_eval_mode_with_its_flops():
    model = torchvision.models.vit_b_16(weights=None).eval()
    with torch.no_grad(), sim.torch_mode() as m:
        y = model(torch.randn(1, 3, 224, 224))
    assert tuple(y.shape) == (1, 1000)
    s = m.stats()
    # 224² in 16² patches: 196 tokens and the class token.
    patch_embedding = 2 * 196 * 768 * (3 * 16 * 16)  # a 16x16 stride-16 convolution, 3 -> 768
    head = 2 * 768 * 1000
    hand = patch_embedding + encoder_flops(12, 768, 3072, 197, 1) + head  # 35.13 GFLOP
    assert s["flops"] == pytest.approx(hand, rel=0.15)
    assert s["matrix_flops"] == pytest.approx(hand, rel=0.01)
    # torchvision's model card: 17.56 GFLOPS, i.e. multiply-adds.
    assert s["matrix_flops"] / 2 == pytest.approx(17.56e9, rel=0.01)
    assert s["ops"]["aten._transform_bias_rescale_qkv.default"] == 12


@needs_sim
def test_multi_head_attention_runs_as_its_gpu_kernels_with_the_cpus_values():
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(64, 4, batch_first=True).eval()
    x = torch.randn(2, 16, 64)
    pad = torch.zeros(2, 16, dtype=torch.bool)
    pad[:, 12:] = True
    with torch.no_grad():
        expect, expect_w = mha(x, x, x, key_padding_mask=pad)
    with torch.no_grad(), sim.torch_mode(compute=True) as m:
        y, w = mha(x, x, x, key_padding_mask=pad)
    # compute=True runs the decomposition on the CPU: the fast path's own values.
    assert torch.allclose(y, expect, atol=1e-6) and torch.allclose(w, expect_w, atol=1e-6)
    assert m.stats()["ops"] == {
        "aten.mm.default": 1,                          # QKV projection
        "aten._transform_bias_rescale_qkv.default": 1,
        "aten.bmm.default": 2,                         # Q·Kᵀ and softmax·V
        "aten._masked_softmax.default": 1,
        "aten.clone.default": 1,                       # [B, H, T, dh] -> [B, T, D]
        "aten.addmm.default": 1,                       # out projection
        "aten.sum.dim_IntList": 1, "aten.div_.Scalar": 1,  # the averaged weights
    }
    with torch.no_grad(), sim.torch_mode() as m:
        y, w = mha(x, x, x, need_weights=False)
    assert tuple(y.shape) == (2, 16, 64) and w is None
    b, t, d = 2, 16, 64
    hand = 2 * b * t * d * 3 * d + 2 * (2 * b * t * t * d) + 2 * b * t * d * d
    assert m.stats()["matrix_flops"] == pytest.approx(hand, rel=0.01)


class _MetaFactories(torch.overrides.TorchFunctionMode):
    """Parameters made on the meta device: a model is built without memory or initialisation."""
    FACTORIES = {torch.empty, torch.zeros, torch.ones, torch.randn, torch.rand, torch.full,
                 torch.empty_strided, torch.zeros_like, torch.ones_like}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func in self.FACTORIES:
            kwargs["device"] = "meta"
        return func(*args, **kwargs)


def _input_size(name):
    if name.startswith(("vit", "swin", "maxvit")):
        return 224  # fixed image size, or windows that need it
    return 75 if name == "inception_v3" else 64


@needs_sim
def test_every_torchvision_classifier_serves_or_its_operators_are_documented():
    # Shapes only, batch 1, the smallest input each model takes. Weights are CPU tensors that were
    # never written (to_empty: no memory is touched), so the models take their CPU fast paths as
    # with real weights; with meta weights they would not.
    doc = (SOURCE_DIR / "docs" / "torch.md").read_text()
    missing = {}
    names = torchvision.models.list_models(module=torchvision.models)
    assert len(names) >= 70
    for name in names:
        with _MetaFactories():
            model = torchvision.models.get_model(name, weights=None)
        model = model.to_empty(device="cpu").eval()
        size = _input_size(name)
        try:
            with torch.no_grad(), sim.torch_mode() as m:
                y = model(torch.randn(1, 3, size, size))
            assert tuple(y.shape) == (1, 1000), name
            assert m.stats()["matrix_flops"] > 0, name
        except UnsupportedOperator as e:
            op = re.search(r"cannot run (\S+)", str(e)).group(1)
            missing.setdefault(op, []).append(name)
    undocumented = {op: models for op, models in missing.items() if op not in doc}
    assert not undocumented, "operators without a rule, not in docs/torch.md: %s" % undocumented


@needs_sim
def test_views_launch_nothing_and_copies_still_cost():
    # Grouped-query attention's KV expansion, as a Llama-style decoder writes it: expand (a view),
    # reshape (a copy, since the expanded tensor is not viewable, then _unsafe_view), and a
    # transposed view made contiguous (a copy).
    b, kv, group, s, dh = 4, 2, 4, 64, 32
    k = torch.randn(b, kv, s, dh)
    with sim.torch_mode() as m:
        expanded = k[:, :, None].expand(b, kv, group, s, dh)
        heads = expanded.reshape(b, kv * group, s, dh)
        flat = heads.view(b, kv * group * s, dh).transpose(0, 1)
        flat.contiguous()
    s_ = m.stats()
    assert "aten._unsafe_view.default" not in s_["ops"]
    assert s_["ops"] == {"aten.clone.default": 2}
    out = b * kv * group * s * dh * 4
    # Each copy reads its (expanded or transposed) input and writes its output: no view's bytes.
    assert s_["bytes"] == 2 * (out + out)


@needs_sim
def test_gathers_and_in_place_scatters_move_only_the_selected_rows():
    # One token's embedding reads one row of a 128k × 4096 table, not the table; writing one
    # token's keys into a KV cache of 4096 rows writes that row, not the cache.
    rows, d, row = 131072, 4096, 4096 * 2
    table = torch.empty(rows, d, dtype=torch.float16, device="meta")
    cache = torch.empty(4096, d, dtype=torch.float16, device="meta")
    token = torch.tensor([7])
    new_row = torch.empty(1, d, dtype=torch.float16, device="meta")
    with torch.no_grad(), sim.torch_mode() as m:
        torch.nn.functional.embedding(token, table)
    gather = m.stats()
    assert gather["ops"] == {"aten.embedding.default": 1}
    assert gather["bytes"] == 2 * row + token.numel() * 8  # read the row, write it, the index
    with torch.no_grad(), sim.torch_mode() as m:
        cache.index_copy_(0, torch.tensor([5]), new_row)
    scatter = m.stats()
    assert scatter["ops"] == {"aten.index_copy_.default": 1}
    assert scatter["bytes"] == 8 + row + row  # the index, the source row, the written row
    # The out-of-place form copies the whole destination first: still charged for it.
    with torch.no_grad(), sim.torch_mode() as m:
        cache.index_copy(0, torch.tensor([5]), new_row)
    assert m.stats()["bytes"] > cache.numel() * 2


@needs_sim
def test_a_matmul_of_a_3d_input_is_one_gemm():
    # matmul folds [B, T, D] into [B·T, D] and back with views: one kernel, the GEMM.
    x, w = torch.randn(8, 128, 256, device="meta"), torch.randn(512, 256, device="meta")
    with torch.no_grad(), sim.torch_mode() as m:
        torch.nn.functional.linear(x, w)
    assert m.stats()["ops"] == {"aten.mm.default": 1}


@needs_sim
def test_operators_without_a_meta_kernel_still_run():
    # Debian's 1.13 has no Meta kernel for the _foreach_ operators of a foreach optimizer, nor
    # for adaptive average pooling's backward (AlexNet).
    model = torchvision.models.alexnet(weights=None)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, foreach=True)
    x = torch.randn(2, 3, 64, 64)
    with sim.torch_mode() as m:
        torch.nn.functional.cross_entropy(model(x), torch.tensor([1, 2])).backward()
        opt.step()
    ops = m.stats()["ops"]
    assert ops["aten._adaptive_avg_pool2d_backward.default"] == 1
    assert any(op.startswith("aten._foreach_add_") for op in ops)


_lib = None


def _mystery_op():
    """gptest::mystery, an operator of our own: a CPU and a Meta kernel, no cost rule."""
    global _lib
    if _lib is None:
        _lib = torch.library.Library("gptest", "DEF")
        _lib.define("mystery(Tensor x) -> Tensor")
        _lib.impl("mystery", lambda x: x * 2, "CPU")
        _lib.impl("mystery", lambda x: x.new_empty(x.shape), "Meta")
    return torch.ops.gptest.mystery.default


class _Model(torch.nn.Module):
    def __init__(self, op):
        super().__init__()
        self.linear = torch.nn.Linear(16, 16)
        self.op = op

    def forward(self, x):
        return self.op(self.linear(x))


@needs_sim
def test_an_operator_without_a_rule_is_refused_by_name_and_a_rule_admits_it():
    op = _mystery_op()
    model = _Model(op)
    with pytest.raises(UnsupportedOperator) as e, sim.torch_mode():
        model(torch.randn(4, 16))
    text = str(e.value)
    assert "gptest.mystery.default" in text
    assert "in _Model" in text  # the model it was running
    assert "costs.add_rule('gptest::mystery', kind)" in text
    assert 'docs/torch.md, "Operators and their rules"' in text
    doc = (SOURCE_DIR / "docs" / "torch.md").read_text()
    assert "## Operators and their rules" in doc and "add_rule" in doc

    costs.add_rule("gptest::mystery", "pointwise", flops_per_element=3)
    with sim.torch_mode() as m:
        y = model(torch.randn(4, 16))
    assert tuple(y.shape) == (4, 16)
    assert m.stats()["ops"]["gptest.mystery.default"] == 1
    assert m.stats()["flops"] >= 3 * 4 * 16
