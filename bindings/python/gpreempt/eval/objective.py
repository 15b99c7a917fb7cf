"""Objective-constrained offline throughput (docs/evaluation.md): users state objectives
("online p99 <= 5 ms"), not mechanisms. At each point of a sweep, among the policies whose online
tail meets the objective, the one that leaves the offline job the most throughput is the one an
operator should run; a point where none meets it says so.

A policy meets the objective when its worst seed does (the median of seeds would hide a seed that
broke it); offline throughput is the median over seeds.
"""

TAIL = "online_p99_ms"
THROUGHPUT = "offline_iterations_per_s"


def meets(point, objective_ms, metric=TAIL):
    s = point["metrics"].get(metric) or {}
    worst = s.get("max")
    return worst is not None and worst <= objective_ms


def throughput(point, metric=THROUGHPUT):
    s = point["metrics"].get(metric) or {}
    return s.get("median")


def constrained(points, objective_ms, metric=TAIL, groups=None):
    """Per x: {"x", "objective_ms", "meeting": [groups], "best": group or None,
    "best_throughput", "by_group": {group: {"meets", "p99_worst", "throughput"}}}, in x order.
    `groups` limits the policies compared (default: every group at that x)."""
    xs = {}
    for p in points:
        if groups is not None and p["group"] not in groups:
            continue
        xs.setdefault(p["x"], []).append(p)
    rows = []
    for x in sorted(xs, key=lambda v: (v is None, v)):
        by_group = {}
        for p in xs[x]:
            by_group[p["group"]] = {"meets": meets(p, objective_ms, metric),
                                    "p99_worst": (p["metrics"].get(metric) or {}).get("max"),
                                    "throughput": throughput(p)}
        meeting = sorted(g for g, v in by_group.items() if v["meets"] and v["throughput"] is not None)
        best = max(meeting, key=lambda g: by_group[g]["throughput"]) if meeting else None
        rows.append({"x": x, "objective_ms": objective_ms, "meeting": meeting, "best": best,
                     "best_throughput": by_group[best]["throughput"] if best else None,
                     "by_group": by_group})
    return rows


def verdict(rows, policy, within=0.05):
    """Whether `policy` meets the objective wherever any policy does, with offline throughput
    within `within` of the best there. Returns (passed, worst shortfall fraction, the x where a
    point fails or None, the first x where no policy meets the objective or None)."""
    passed, worst_short, failing, none_meets = True, 0.0, None, None
    for r in rows:
        if r["best"] is None:
            if none_meets is None:
                none_meets = r["x"]
            continue
        mine = r["by_group"].get(policy)
        if mine is None or not mine["meets"] or mine["throughput"] is None:
            passed, failing = False, failing if failing is not None else r["x"]
            worst_short = max(worst_short, 1.0)
            continue
        short = 1.0 - mine["throughput"] / r["best_throughput"] if r["best_throughput"] else 0.0
        worst_short = max(worst_short, short)
        if short > within:
            passed, failing = False, failing if failing is not None else r["x"]
    return passed, worst_short, failing, none_meets
