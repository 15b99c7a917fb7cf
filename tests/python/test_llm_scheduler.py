"""gpreempt.sim.llm's scheduler and serving loop as pure logic: a fake clock and a fake executor,
no simulator (docs/llm.md, "Scheduler")."""
import pytest

from gpreempt.sim.llm import kv_blocks, request, scheduler, server


def make(blocks=1000, block_size=16, max_num_seqs=256, max_num_batched_tokens=8192):
    return scheduler.Scheduler(kv_blocks.BlockBudget(blocks, block_size), max_num_seqs,
                               max_num_batched_tokens)


class FakeClock:
    """Advances `step_s` per executed step; sleep() jumps."""

    def __init__(self, step_s=0.01):
        self.t = 0.0
        self.step_s = step_s
        self.steps = []

    def clock(self):
        return self.t

    def sleep(self, s):
        self.t += max(0.0, s)

    def execute(self, step):
        self.steps.append(step)
        self.t += self.step_s


def run(sched, reqs, fc=None):
    fc = fc or FakeClock()
    seen = []
    server.serve(sched, reqs, fc.execute, fc.clock, fc.sleep,
                 on_step=lambda step, now: seen.append((step, sched.kv.used,
                                                        len(sched.running))))
    return fc, seen


def test_a_request_waits_for_kv_blocks_and_none_is_lost():
    # 60 + 10 - 1 tokens need 5 blocks of 16: the 10-block cache holds two requests at a time.
    sched = make(blocks=10)
    reqs = [request.Request(i, 0.0, 60, 10) for i in range(3)]
    fc, seen = run(sched, reqs)
    assert all(used <= 10 for _, used, _ in seen)
    assert max(running for _, _, running in seen) == 2
    first_step_of = {}
    for k, (step, _, _) in enumerate(seen):
        for w in step.work:
            first_step_of.setdefault(w.request.id, k)
    finished_first = min(r.last_token for r in reqs[:2])
    # the third starts only after one of the first two has finished and freed its blocks
    assert fc.steps and first_step_of[2] > 0
    assert reqs[2].first_token > finished_first
    assert all(r.done and r.generated == 10 for r in reqs)
    assert sched.kv.used == 0 and len(sched.finished) == 3


def test_a_running_request_that_cannot_grow_preempts_the_newest_which_still_finishes():
    # Two 16-token prompts fit 2 blocks; growing past 16 tokens needs a third block.
    sched = make(blocks=3)
    reqs = [request.Request(i, 0.0, 16, 8) for i in range(2)]
    run(sched, reqs)
    assert sched.preemptions >= 1
    assert reqs[1].preemptions >= 1
    assert all(r.done and r.generated == 8 for r in reqs)
    assert sched.kv.used == 0


def test_chunked_prefill_keeps_every_step_within_the_token_budget():
    sched = make(max_num_batched_tokens=64)
    reqs = [request.Request(0, 0.0, 200, 4), request.Request(1, 0.0, 30, 40)]
    fc, seen = run(sched, reqs)
    assert all(step.tokens <= 64 for step, _, _ in seen)
    chunks = [w.n_new for step, _, _ in seen for w in step.work if w.request.id == 0
              and w.ctx < 200]
    assert chunks == [64, 64, 64, 8]
    # decodes of running requests come before new prompt tokens in a step
    for step, _, _ in seen:
        kinds = [w.n_new == 1 for w in step.work]
        assert kinds == sorted(kinds, reverse=True) or not any(kinds[1:])
    assert all(r.done for r in reqs)


def test_the_batch_never_exceeds_max_num_seqs():
    sched = make(max_num_seqs=3)
    reqs = [request.Request(i, 0.0, 10, 5) for i in range(7)]
    fc, seen = run(sched, reqs)
    assert max(len(step.work) for step, _, _ in seen) == 3
    assert max(running for _, _, running in seen) == 3
    assert all(r.done for r in reqs)


def test_ttft_tpot_and_latency_on_a_fake_clock():
    sched = make()
    # arrives at 1 s into an idle server; 10 ms per step: the prefill's step gives the first
    # token, four decodes the rest.
    r = request.Request(0, 1.0, 20, 5)
    fc, _ = run(sched, [r], FakeClock(0.010))
    assert r.ttft == pytest.approx(0.010)
    assert r.tpot == pytest.approx(0.010)
    assert r.e2e == pytest.approx(0.050)
    assert r.meets(0.011, 0.011) and not r.meets(0.009, 0.011) and not r.meets(0.011, 0.009)


def test_tpot_is_the_mean_gap_between_output_tokens():
    r = request.Request(0, 0.0, 4, 3)
    for t in (0.5, 0.6, 0.9):
        r.emit(t)
    assert r.ttft == pytest.approx(0.5)
    assert r.tpot == pytest.approx(0.2)
    assert r.e2e == pytest.approx(0.9)


def test_a_request_larger_than_the_cache_is_refused():
    sched = make(blocks=2)
    with pytest.raises(ValueError, match="needs 3 KV blocks, the cache has 2"):
        sched.add(request.Request(0, 0.0, 40, 2))
