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
