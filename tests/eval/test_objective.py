"""gpreempt.eval.objective: objective-constrained offline throughput — among the policies that meet
an objective at a point, the one that leaves the offline job the most; and the verdict on one
policy (meets it wherever any does, within 5 % of the best)."""
from gpreempt.eval import objective


def pt(group, x, p99_worst, it_s):
    return {"group": group, "x": x,
            "metrics": {"online_p99_ms": {"max": p99_worst, "median": p99_worst * 0.9},
                        "offline_iterations_per_s": {"median": it_s}}}


POINTS = [
    # x = 20 req/s: everything meets 5 ms; no control leaves the most.
    pt("none", 20, 4.0, 700), pt("throttle", 20, 3.0, 650), pt("gpreempt-slo", 20, 4.2, 690),
    # x = 80: no control breaks it; throttle is the best that meets it.
    pt("none", 80, 9.0, 700), pt("throttle", 80, 4.5, 600), pt("gpreempt-slo", 80, 4.9, 520),
    # x = 160: nobody meets it.
    pt("none", 160, 30.0, 700), pt("throttle", 160, 6.0, 500), pt("gpreempt-slo", 160, 5.5, 300),
]


def test_the_best_policy_among_those_that_meet_the_objective():
    rows = objective.constrained(POINTS, 5.0)
    assert [r["x"] for r in rows] == [20, 80, 160]
    assert rows[0]["best"] == "none" and rows[0]["best_throughput"] == 700
    assert rows[1]["meeting"] == ["gpreempt-slo", "throttle"] and rows[1]["best"] == "throttle"
    assert rows[2]["best"] is None and rows[2]["meeting"] == []
    # The worst seed decides: a median under the target does not meet it.
    assert not objective.meets(pt("x", 1, 5.1, 1), 5.0)


def test_the_verdict_names_the_shortfall_and_where_nobody_meets_it():
    rows = objective.constrained(POINTS, 5.0)
    passed, short, failing, none_meets = objective.verdict(rows, "gpreempt-slo")
    assert not passed
    assert failing == 80
    assert abs(short - (1 - 520 / 600)) < 1e-9
    assert none_meets == 160
    # Within 5 % everywhere it is met: passes.
    ok = [pt("none", 1, 4.0, 100), pt("gpreempt-slo", 1, 4.0, 96)]
    assert objective.verdict(objective.constrained(ok, 5.0), "gpreempt-slo")[0]
    # Not meeting it where another does fails outright.
    bad = [pt("none", 1, 4.0, 100), pt("gpreempt-slo", 1, 6.0, 100)]
    passed, short, failing, _ = objective.verdict(objective.constrained(bad, 5.0), "gpreempt-slo")
    assert not passed and failing == 1 and short == 1.0

