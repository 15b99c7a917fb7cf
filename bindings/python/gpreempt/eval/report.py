"""report.md of one experiment: configuration, the table of points, pass/fail, figures, notes."""
from .experiments import EXPERIMENTS

MODEL_NOTE = (
    "Simulated numbers are model time on the simulated MI308X (docs/sim-model.md): kernel durations are "
    "calibrated estimates (the 2048² GEMM against a measurement, the rest by roofline), and the preemption "
    "cost — whole-device unmap, CWSR save of the waves in flight, remap — rests on costs no public measurement "
    "gives (CWSR save/restore bandwidth, trap cost, HWS unmap/map latency), each a low/central/high band "
    "(`--cost-band`; `sweep-model-costs` spans it). Orderings between "
    "baselines are what to read; absolute milliseconds change on hardware (docs/hardware.md).")


def fmt(v, digits=2):
    if v is None:
        return "–"
    if isinstance(v, float) and abs(v) >= 1000:
        return f"{v:.0f}"
    return f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def cell(p, k, digits=2):
    m = p["metrics"].get(k) or {}
    if m.get("median") is None:
        return "–"
    if m["n"] > 1 and fmt(m["min"], digits) != fmt(m["max"], digits):
        return f"{fmt(m['median'], digits)} ({fmt(m['min'], digits)}–{fmt(m['max'], digits)})"
    return fmt(m["median"], digits)


def _digits(p, k):
    """Counts as integers, fractions and milliseconds (the LLM columns) with two decimals."""
    m = (p["metrics"].get(k) or {}).get("median")
    return 0 if m is None or float(m).is_integer() else 2


def points_table(doc):
    kinds = {p.get("tail_kind") for p in doc["points"] if p.get("tail_kind")}
    tail = "P99 ms" if kinds <= {"p99"} else "tail ms (P99, or max†)"
    # Experiments about a rule name the counts that show it (Experiment.columns).
    exp = EXPERIMENTS.get(doc.get("experiment"))
    extra = tuple(exp.columns) if exp else ()
    lines = ["| point | baseline | requests | online P50 ms | online " + tail + " | offline it/s | suspensions |"
             + "".join(f" {k} |" for k in extra),
             "|---|---|---:|---:|---:|---:|---:|" + "---:|" * len(extra)]
    for p in doc["points"]:
        t = cell(p, "online_tail_ms")
        if p.get("tail_kind") == "max":
            t += " †"
        lines.append(f"| {p['point']} | {p['baseline']} | {cell(p, 'online_requests', 0)} | {cell(p, 'online_p50_ms')} | "
                     f"{t} | {cell(p, 'offline_iterations_per_s')} | {cell(p, 'suspensions', 0)} |"
                     + "".join(f" {cell(p, k, _digits(p, k))} |" for k in extra))
    note = ("Median across seeds, (min–max) when the seeds differ. † fewer than 1000 requests per seed: the "
            "maximum is reported, not a P99.")
    return "\n".join(lines) + "\n\n" + note + "\n"


def mean_ci(p, k, digits=2):
    m = p["metrics"].get(k) or {}
    if m.get("mean") is None:
        return "–"
    if m.get("ci95") is None:
        return fmt(m["mean"], digits)
    return f"{fmt(m['mean'], digits)} ± {fmt(m['ci95'], digits)}"


SEED_METRICS = (("online_p50_ms", "online P50 ms"), ("online_tail_ms", "online tail ms"),
                ("offline_iterations_per_s", "offline it/s"))


def seeds_table(doc):
    """Mean ± the 95 % CI half-width across seeds (Student's t), for runs of two seeds or more."""
    pts = [p for p in doc["points"] if len(p.get("seeds") or []) > 1]
    if not pts:
        return ""
    lines = ["| point | seeds | " + " | ".join(f"{h} mean ± 95 % CI" for _, h in SEED_METRICS) + " |",
             "|---|---:|" + "---:|" * len(SEED_METRICS)]
    for p in pts:
        lines.append(f"| {p['point']} | {len(p['seeds'])} | " + " | ".join(mean_ci(p, k) for k, _ in SEED_METRICS)
                     + " |")
    return ("## Spread across seeds\n\nMean across seeds ± the half-width of the 95 % confidence interval of "
            "the mean (Student's t, seeds − 1 degrees of freedom); the results table above gives the median "
            "and min–max of the same seeds.\n\n" + "\n".join(lines) + "\n")


def reference_table(doc):
    ref = doc.get("reference")
    if not ref:
        return ""
    points = {p["point"]: p for p in doc["points"]}
    # The model's column is the des: in a live run its points carry " (des)" (the live ones are
    # not the model).
    live = doc.get("engine") == "live"
    by = {n[:-len(" (des)")] if live else n: p for n, p in points.items() if not live or n.endswith(" (des)")}
    lines = ["| run | measured P50 ms | model P50 ms | measured P99 ms | model P99 ms | measured it/s | model it/s |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for name, m in ref.items():
        p = by.get(name)
        lines.append(f"| {name} | {fmt(m.get('online_p50_ms'))} | {cell(p, 'online_p50_ms') if p else '–'} | "
                     f"{fmt(m.get('online_p99_ms'))} | {cell(p, 'online_tail_ms') if p else '–'} | "
                     f"{fmt(m.get('offline_iterations_per_s'))} | {cell(p, 'offline_iterations_per_s') if p else '–'} |")
    for name in ("priority", "gpreempt-hint", "oracle"):
        p = by.get(name)
        if p:
            lines.append(f"| {name} | (not measured) | {cell(p, 'online_p50_ms')} | | {cell(p, 'online_tail_ms')} | | "
                         f"{cell(p, 'offline_iterations_per_s')} |")
    return ("## Measured on the user's MI308X vs the model\n\n`throttle` is the XSched-Lv1-style baseline. "
            + "\n".join(["", ""] + lines) + "\n")


def checks_table(doc):
    if not doc["checks"]:
        return "No pass/fail thresholds apply to this experiment.\n"
    lines = ["| check | threshold | measured | result | threshold source |", "|---|---|---:|---|---|"]
    for c in doc["checks"]:
        res = {True: "PASS", False: "**FAIL**", None: "not measured"}[c["passed"]]
        v = "–" if c["value"] is None else f"{c['value']:g} {c['unit']}".strip()
        lines.append(f"| {c['name']} | {c['threshold']} | {v} | {res} | {c['source']} |")
    return "\n".join(lines) + "\n"


def live_vs_des(live_points, des_points):
    """Rows comparing the live run with the des run, point by point (same names)."""
    des = {p["point"]: p for p in des_points}
    out = []
    for lp in live_points:
        dp = des.get(lp["point"])
        if not dp:
            continue
        row = {"point": lp["point"]}
        for k in ("online_p50_ms", "online_tail_ms", "offline_iterations_per_s", "suspensions"):
            row[f"live_{k}"] = (lp["metrics"].get(k) or {}).get("median")
            row[f"des_{k}"] = (dp["metrics"].get(k) or {}).get("median")
        out.append(row)
    return out


LIVE_EXPLANATION = (
    "Why live and des differ: (1) live runs real processes on kfdsim in wall-clock time, so every "
    "latency includes the host — the workload's dispatch path (for PyTorch models, eager Python: "
    "milliseconds per request that the des's GPU-time-only replay leaves out), the simulator daemon's "
    "250 µs queue-poll period and its scheduling delay on a shared 2-core machine — none of which the des "
    "models; (2) live, gpreemptd decides and acts in wall-clock time: each action is a hop to its control "
    "thread and one ptrace-attached SUSPEND/RESUME_QUEUES per target (hundreds of µs on this host; the "
    "report's suspend_ms and hint_to_suspend_us columns), while the des charges only the modelled GPU "
    "cost of each runlist update (model.actuator_overhead_us can add the host's); the decisions are the "
    "same code (tests/eval_des/test_actuator_crosscheck.cpp); (3) live runs last seconds (tens to a "
    "hundred requests: its tail is the maximum, and one host hiccup sets it), des runs ≥ 1000 requests "
    "per seed, so the suspension counts (targets suspended, in both) cover different numbers of "
    "requests; (4) on a host whose load average exceeds its CPU count the "
    "simulator's daemon is starved: the simulated GPU ticks late and every live latency grows by the "
    "scheduling delay. Both run the same GPU model, so offline throughput and the ordering alone < "
    "gpreempt < none in online latency should agree; absolute online latencies are higher live — "
    "compare live numbers only from a quiet host.")


def live_table(doc):
    rows = doc.get("live_vs_des")
    if not rows:
        return ""
    lines = ["| point | live P50 ms | des P50 ms | live tail ms | des tail ms | live it/s | des it/s | live susp. | des susp. |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append("| " + " | ".join([r["point"]] + [fmt(r[f"{e}_{k}"], 0 if k == "suspensions" else 2)
                                                       for k in ("online_p50_ms", "online_tail_ms",
                                                                 "offline_iterations_per_s", "suspensions")
                                                       for e in ("live", "des")]) + " |")
    host = (f"Host load average {doc.get('host_load_average')} on {doc.get('host_cpus')} CPUs at the end of "
            "the run.\n\n")
    return "## Live vs des\n\n" + "\n".join(lines) + "\n\n" + host + LIVE_EXPLANATION + "\n"


def markdown(exp, doc):
    o = doc["options"]
    out = [f"# {exp.title}\n",
           f"**What it shows:** {exp.shows}.\n",
           f"Engine `{doc['engine']}`; {o['requests']} online requests per point unless the experiment sets its "
           f"duration; seeds {', '.join(str(s) for s in o['seeds'])}" + ("; `--quick`" if o["quick"] else "") + ".  ",
           f"Generated {doc['generated_at']}" + (f" by `{doc['command']}`" if doc.get("command") else "") + ".\n",
           f"**Overall: {'PASS' if doc['passed'] else 'FAIL'}** ({sum(1 for c in doc['checks'] if c['passed'])} of "
           f"{len(doc['checks'])} checks pass).\n",
           "## Results\n", points_table(doc)]
    st = seeds_table(doc)
    if st:
        out.append(st)
    out += ["## Checks against the user's thresholds\n", checks_table(doc)]
    ref = reference_table(doc)
    if ref:
        out.append(ref)
    lt = live_table(doc)
    if lt:
        out.append(lt)
    if doc["figures"]:
        out.append("## Figures\n")
        for f in doc["figures"]:
            out.append(f"![{f['kind']}]({f['file']})\n")
    notes = list(doc.get("notes") or []) + [MODEL_NOTE]
    out.append("## Notes\n")
    out += [f"* {n}" for n in notes]
    out.append("")
    return "\n".join(out)
