"""gpreempt.sim.llm.step_grid: each grid point is the step the live server's executor launches for
that batch shape (head, every layer, tail), so that gpreempt-des replays the model's own kernels."""
import pytest

from conftest import needs_sim

pytest.importorskip("torch")

from gpreempt.sim.llm import executor, llama, step_grid  # noqa: E402

AXES = {"prefill_tokens": [0, 32], "decode_seqs": [0, 3], "decode_len": [64]}


@needs_sim
def test_each_point_is_the_executors_step_for_that_batch():
    model = llama.Llama(llama.LLAMA_1B)
    doc = step_grid.grid(model, AXES, block_size=16)
    assert doc["layers"] == [[0, model.config.layers]]
    assert {(p["prefill_tokens"], p["decode_seqs"]) for p in doc["points"]} == {(0, 3), (32, 0), (32, 3)}
    ex = executor.GraphExecutor(model, 16)
    for p in doc["points"]:
        d, c, n = p["decode_seqs"], p["decode_len"], p["prefill_tokens"]
        seqs = [(1, c - 1, True)] * d + ([(n, 0, True)] if n else [])
        want = [list(map(lambda v: list(v) if isinstance(v, (tuple, list)) else v, k)) for k in ex.kernels(seqs)]
        got = p["head"] + p["layers"]["0"] * model.config.layers + p["tail"]
        assert [k[0] for k in got] == [k[0] for k in want], p
        assert [(k[3], k[4]) for k in got] == [(float(k[3]), float(k[4])) for k in want], p


def _collectives(ops):
    return [(k[0], k[4]) for k in ops if len(k) > 7 and k[7] == "collective"]


@needs_sim
def test_a_tp8_shard_is_an_eighth_of_the_split_weights_with_its_collectives_where_vllm_has_them():
    from gpreempt.sim.llm import deepseek, tensor_parallel

    axes = {"prefill_tokens": [0], "decode_seqs": [3], "decode_len": [64]}
    full = step_grid.grid(deepseek.DeepSeek(deepseek.DEEPSEEK_V3), axes)
    shard_cfg = tensor_parallel.shard(deepseek.DEEPSEEK_V3, 8)
    shard = step_grid.grid(deepseek.DeepSeek(shard_cfg, tp=8), axes)
    assert (full["tp"], shard["tp"]) == (1, 8)
    assert full["layers"] == shard["layers"] == [[0, 3], [1, 58]]
    f, s = full["points"][0], shard["points"][0]
    T, S, hidden = 3, 3, deepseek.DEEPSEEK_V3.hidden
    # The whole model exchanges nothing.
    assert not any(_collectives(f[part]) for part in ("head", "tail"))
    assert not any(_collectives(v) for v in f["layers"].values())
    # The shard all-reduces the hidden state after the embedding and after attention and the
    # MLP / MoE of each layer (a ring's bus bytes: 2·7/8 of T × hidden bf16), and gathers the logits.
    reduce_bytes = 2 * 7 / 8 * T * hidden * 2
    assert _collectives(s["head"]) == [("all_reduce", reduce_bytes)]
    for kind in ("0", "1"):
        assert _collectives(s["layers"][kind]) == [("all_reduce", reduce_bytes)] * 2
    assert _collectives(s["tail"]) == [("all_gather", 7.0 * S * shard_cfg.vocab * 2)]
    # The attention's output projection (the kernel before the first all-reduce) is split by heads:
    # an eighth of the whole model's.
    layer = s["layers"]["1"]
    first = next(i for i, k in enumerate(layer) if len(k) > 7)
    wo = layer[first - 1]
    whole = [k for k in f["layers"]["1"] if k[0] == wo[0] and k[3] > 0]
    assert wo[0] == "aten.mm.default"
    assert 8 * wo[3] in [k[3] for k in whole]
