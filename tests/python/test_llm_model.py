"""gpreempt.sim.llm's models: FLOPs against a hand count, the 8B model's host memory on the meta
device, small real-weight runs, and the synthetic workload's fit (docs/llm.md)."""
import json
import math
import os
import random
import subprocess
import sys
import textwrap

import pytest

from conftest import BINARY_DIR, needs_sim

torch = pytest.importorskip("torch")

from gpreempt.sim.llm import deepseek, llama, workload  # noqa: E402

TINY_LLAMA = llama.LLAMA_1B._replace(layers=2, vocab=1000, hidden=256, heads=8, kv_heads=2,
                                     head_dim=32, ffn=512)
TINY_DEEPSEEK = deepseek.DEEPSEEK_V2_LITE._replace(
    layers=3, hidden=128, heads=4, kv_lora_rank=32, qk_nope=16, qk_rope=8, v_head=16,
    dense_ffn=256, moe_ffn=64, experts=8, top_k=2, vocab=500)


def llama_layer_matrix_flops(c, seqs):
    """The hand count of one Llama layer's GEMM FLOPs (2 per multiply-add) for a step of
    [(n_new, ctx)] sequences in one attention group each (docs/llm.md, "FLOPs of one layer"):
      QKV 2·T·D·(H+2K)·d, output 2·T·H·d·D, gate+up 2·T·D·2F, down 2·T·F·D,
      scores Q·Kᵀ 2·n·H·d·L and P·V 2·n·H·L·d per sequence (L = ctx + n keys)."""
    D, H, K, d, F = c.hidden, c.heads, c.kv_heads, c.head_dim, c.ffn
    T = sum(n for n, _ in seqs)
    dense = 2 * T * (D * (H + 2 * K) * d + H * d * D + 2 * D * F + F * D)
    attn = sum(4 * n * H * d * (ctx + n) for n, ctx in seqs)
    return dense, attn


def layer_stats(model, seqs):
    import gpreempt.sim as sim

    with sim.torch_mode() as mode:
        state = model.prepare(seqs)
        mode.reset_stats()
        model.run_layer(0, state)
        sim.synchronize()
        return mode.stats()


@needs_sim
@pytest.mark.parametrize("seqs", [
    [(1, 127, True)] * 4,  # four decodes at context 127: one group reading 128 keys each
    [(64, 0, True)],       # a 64-token prefill chunk (causal: the mask adds no FLOPs to GEMMs)
])
def test_one_llama_8b_layer_has_the_hand_counted_flops(seqs):
    c = llama.LLAMA_8B
    m = llama.Llama(c, decode_groups=1)
    s = layer_stats(m, seqs)
    dense, attn = llama_layer_matrix_flops(c, [(n, ctx) for n, ctx, _ in seqs])
    assert s["matrix_flops"] == dense + attn
    # elementwise work (norms, rotary, softmax, SwiGLU's product) is a small rest
    assert dense + attn < s["flops"] < 1.01 * (dense + attn)
    # the layer's weights are read once per step, and the keys and values once per sequence
    D, H, K, d, F = c.hidden, c.heads, c.kv_heads, c.head_dim, c.ffn
    weights = 2 * (D * (H + 2 * K) * d + H * d * D + 3 * D * F + 2 * D)
    kv = sum(2 * K * d * (ctx + n) * 2 for n, ctx, _ in seqs)
    assert s["bytes"] > weights + kv


@needs_sim
def test_the_8b_decode_step_is_bound_by_reading_its_weights_and_cache():
    import gpreempt.sim as sim

    c = llama.LLAMA_8B
    m = llama.Llama(c)
    seqs = [(1, 1023, True)] * 32
    with sim.torch_mode() as mode:
        m.step(seqs)
        sim.synchronize()
        s = mode.stats()
    weights = 2 * (llama.param_count(c) - c.vocab * c.hidden)  # the embedding is gathered
    kv = 32 * 1024 * llama.kv_bytes_per_token(c)
    assert weights + kv < s["bytes"] < 1.05 * (weights + kv)
    # arithmetic intensity far below the MI308X's FLOPs per byte: memory-bound
    assert s["flops"] / s["bytes"] < 50


def rss_script(model):
    return textwrap.dedent("""
        import json, resource
        import gpreempt.sim as sim
        from gpreempt.sim.llm import llama, deepseek, executor
        m = %s
        with sim.torch_mode():
            m.step([(1, 1023, True)] * 32 + [(512, 0, True)])
            sim.synchronize()
        executor.GraphExecutor(m)([(1, 2047, True)] * 64)
        print(json.dumps({"maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
        """ % model)


@needs_sim
@pytest.mark.parametrize("model", ["llama.Llama(llama.LLAMA_8B)",
                                   "deepseek.DeepSeek(deepseek.DEEPSEEK_V2_LITE)"])
def test_large_models_run_in_under_2_gib_of_host_memory(model):
    env = dict(os.environ, PYTHONPATH=str(BINARY_DIR / "python"))
    out = subprocess.run([sys.executable, "-c", rss_script(model)], capture_output=True,
                         text=True, env=env, timeout=240)
    assert out.returncode == 0, out.stderr
    rss = json.loads(out.stdout.strip().splitlines()[-1])["maxrss_kib"] * 1024
    assert rss <= 2 << 30, "%s peaked at %.0f MiB" % (model, rss / 2**20)


def test_small_models_run_with_real_weights_on_the_cpu():
    torch.manual_seed(0)
    seqs = [(1, 10, True), (1, 30, True), (5, 0, True), (7, 3, False)]
    for m in (llama.Llama(TINY_LLAMA, device="cpu", max_pos=4096),
              deepseek.DeepSeek(TINY_DEEPSEEK, device="cpu", max_pos=4096)):
        ids = m.step(seqs)
        assert ids.shape == (3,)  # one sampled id per sampling sequence
        assert int(ids.min()) >= 0 and int(ids.max()) < m.config.vocab


def test_parameter_counts_match_the_published_sizes():
    # Meta: 8.03B and 1.23B; DeepSeek: 671B total / 37B active (V3), 16B (V2-Lite).
    assert round(llama.param_count(llama.LLAMA_8B) / 1e9, 2) == 8.03
    assert round(llama.param_count(llama.LLAMA_1B) / 1e9, 2) == 1.24  # 1.2358: "1.23B"
    assert round(deepseek.param_count(deepseek.DEEPSEEK_V3) / 1e9) == 671
    assert round(deepseek.param_count(deepseek.DEEPSEEK_V3, active=True) / 1e9) == 38
    assert round(deepseek.param_count(deepseek.DEEPSEEK_V2_LITE) / 1e9) == 16


def test_the_synthetic_sharegpt_lengths_have_vllms_means_and_filter():
    pairs = workload.sharegpt_lengths(random.Random(1), 20000)
    p = [a for a, _ in pairs]
    o = [b for _, b in pairs]
    assert all(a >= 4 and b >= 4 and a <= 1024 and a + b <= 2048 for a, b in pairs)
    assert sum(p) / len(p) == pytest.approx(229.7, rel=0.03)
    assert sum(o) / len(o) == pytest.approx(203.1, rel=0.03)


@pytest.mark.parametrize("cv", [1.0, 3.0])
def test_arrivals_have_the_asked_rate_and_burstiness(cv):
    t = workload.arrivals(random.Random(2), 20000, 5.0, cv)
    gaps = [b - a for a, b in zip([0.0] + t, t)]
    mean = sum(gaps) / len(gaps)
    std = math.sqrt(sum((g - mean) ** 2 for g in gaps) / len(gaps))
    assert mean == pytest.approx(0.2, rel=0.05)
    assert std / mean == pytest.approx(cv, rel=0.1)


@needs_sim
@pytest.mark.parametrize("build", [lambda: llama.Llama(llama.LLAMA_8B._replace(layers=3)),
                                   lambda: deepseek.DeepSeek(
                                       deepseek.DEEPSEEK_V2_LITE._replace(layers=3))])
def test_the_executor_replays_exactly_the_kernels_of_the_models_own_step(build):
    import gpreempt.sim as sim
    from gpreempt.sim.llm import executor

    m = build()
    ex = executor.GraphExecutor(m)
    steps = [[(1, 1023, True)] * 5,
             [(1, 15, True), (1, 100, True), (64, 0, False), (1, 300, True), (37, 10, True)],
             [(200, 0, True)],
             [(1, 15, True), (1, 100, True), (1, 300, True), (64, 64, True)]]
    for seqs in steps:
        rec = executor._Recorder()
        with sim.torch_mode(), sim.stream(rec):
            m.step(seqs, round_to=16)
        assert ex.kernels(seqs) == rec.kernels
    captures = ex.totals.captures
    ex.kernels(steps[3])
    assert ex.totals.captures == captures  # every part of a step seen before is reused
