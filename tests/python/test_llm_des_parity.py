"""The DES's LLM scheduler (eval/des/llm/scheduler.cpp) and the live server's
(gpreempt.sim.llm.scheduler) are one behaviour: the same request script, served with the same fake
clock, must give the same step sequence (which requests, how many tokens at which context, who
samples, who is preempted). The script is small enough to hit every rule: chunked prefill under
the token budget, the max_num_seqs cap, requests waiting for KV blocks, and recompute preemption."""
import json
import random
import subprocess

import pytest

from conftest import BINARY_DIR
from gpreempt.sim.llm import kv_blocks, request, scheduler, server

TOOL = BINARY_DIR / "bin" / "gpreempt-llm-schedule"


def script(seed):
    rng = random.Random(seed)
    reqs, t = [], 0
    for _ in range(40):
        t += rng.choice([0, 0, 50, 200, 900])  # ties and bursts, as real arrivals have
        reqs.append([t, rng.randint(1, 150), rng.randint(1, 60)])
    return {"kv_blocks": 24, "block_size": 16, "max_num_seqs": 5, "max_num_batched_tokens": 64,
            "step_base": 100, "step_per_token": 2, "requests": reqs}


def python_steps(s):
    """server.serve over the script with a fake clock counting in the script's integer units."""
    sched = scheduler.Scheduler(kv_blocks.BlockBudget(s["kv_blocks"], s["block_size"]),
                                s["max_num_seqs"], s["max_num_batched_tokens"])
    reqs = [request.Request(i, a, p, o) for i, (a, p, o) in enumerate(s["requests"])]
    clock = {"t": 0}
    steps = []

    def execute(step):
        clock["t"] += s["step_base"] + s["step_per_token"] * step.tokens

    def sleep(d):
        clock["t"] += d

    def on_step(step, now):
        steps.append({"end": now, "work": [[w.request.id, w.n_new, w.ctx, w.samples] for w in step.work],
                      "preempted": [r.id for r in step.preempted]})
    server.serve(sched, reqs, execute, lambda: clock["t"], sleep, on_step=on_step)
    return steps


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_des_scheduler_forms_the_live_servers_steps(tmp_path, seed):
    if not TOOL.exists():
        pytest.skip("gpreempt-llm-schedule is not built")
    s = script(seed)
    path = tmp_path / "script.json"
    path.write_text(json.dumps(s))
    out = subprocess.run([str(TOOL), str(path)], check=True, capture_output=True, text=True).stdout
    cpp = json.loads(out)["steps"]
    py = python_steps(s)
    # The script exercises every rule, or the comparison proves little.
    assert any(st["preempted"] for st in py), "no preemption in the script"
    assert any(sum(w[1] for w in st["work"]) == s["max_num_batched_tokens"] for st in py)
    assert any(len(st["work"]) == s["max_num_seqs"] for st in py)
    assert any(w[1] > 1 and w[2] > 0 for st in py for w in st["work"]), "no chunked prefill"
    for i, (a, b) in enumerate(zip(py, cpp)):
        assert a == b, "step %d differs:\n python %s\n C++    %s" % (i, a, b)
    assert len(py) == len(cpp)
