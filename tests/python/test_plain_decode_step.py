"""bench/python/plain_decode_step.py, the plain decode step of issue 24's measured reference: every
byte it moves is charged, operator by operator, against a hand count (docs/llm.md, *Calibration
against a measured step*)."""
import importlib.util

import pytest

from conftest import SOURCE_DIR, needs_sim

pytest.importorskip("torch")


def plain():
    spec = importlib.util.spec_from_file_location("plain_decode_step",
                                                  SOURCE_DIR / "bench" / "python" / "plain_decode_step.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@needs_sim
def test_the_plain_step_charges_its_copies_and_weights_by_hand_count():
    p = plain()
    by = {}
    for k in p.step_kernels():
        by.setdefault(k["name"], []).append(k)
    nbytes = lambda name: sum(k["bytes"] for k in by[name])
    kv = p.BATCH * p.KV_HEADS * p.CONTEXT * p.HEAD_DIM * 2          # one layer's past keys, fp16
    new = p.BATCH * p.KV_HEADS * 1 * p.HEAD_DIM * 2                 # the step's keys
    full = kv + new
    groups = p.HEADS // p.KV_HEADS
    # cat: the past and the new keys read, the whole written, for keys and values; and rotary's
    # rotate_half, which reads and writes the step's queries and keys
    rotary = 2 * p.BATCH * (p.HEADS + p.KV_HEADS) * p.HEAD_DIM * 2
    assert nbytes("aten.cat.default") == p.LAYERS * (2 * (kv + new + full) + rotary)
    # reshape of the expanded keys/values: a copy to every query head, the source read per head
    assert nbytes("aten.clone.default") == p.LAYERS * 2 * (groups * full + groups * full)
    # views launch nothing: the transposes, the expand and the reshape of contiguous tensors
    assert not [n for n in by if "view" in n or "expand" in n or "transpose" in n]
    # mm: the layers' weights, read once, are nearly all of the projections' bytes
    D, H, K, d, F = p.HIDDEN, p.HEADS, p.KV_HEADS, p.HEAD_DIM, p.FFN
    weights = p.LAYERS * 2 * (D * (H + 2 * K) * d + H * d * D + 3 * D * F)
    assert weights < nbytes("aten.mm.default") < 1.02 * weights
    # bmm: the expanded keys (scores) and values (attention output) read once each
    assert groups * full * p.LAYERS * 2 < nbytes("aten.bmm.default") < 1.02 * groups * full * p.LAYERS * 2
