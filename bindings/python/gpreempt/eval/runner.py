"""Run one experiment on one engine and write DIR/results.json, DIR/*.png and DIR/report.md."""
import datetime
import json
import os
import resource
import time

from . import figures, report, stats
from .engines import DesEngine, EngineError, LiveEngine
from .result_store import ResultStore
from .experiments import EXPERIMENTS, Options, check, task_gpus
from .workloads import trace_kernels

SCHEMA_VERSION = 2

# Per-seed metrics aggregated into min/median/max across seeds.
METRICS = ("online_requests", "online_p50_ms", "online_p95_ms", "online_p99_ms", "online_mean_ms", "online_max_ms",
           "online_tail_ms", "online_solo_p50_ms", "offline_iterations", "offline_iterations_per_s",
           "offline_gpu_busy_fraction", "suspensions", "suspended_s", "actuation_timeouts", "sim_seconds",
           "wall_seconds", "events", "flaps", "suspend_latency_max_ms", "resume_latency_max_ms",
           # LLM servers (gpreempt-des's llm[0]; null otherwise), and the online side's GPU share.
           "ttft_p99_ms", "tpot_p99_ms", "slo_attainment", "p99_meets_slo", "output_tokens_per_s",
           "online_gpu_busy_fraction",
           # An LLM server's step span, and of its GPUs' shards (one per GPU) the mean wait per step at
           # the collectives for the slowest shard: the most and the least any GPU waited.
           "step_ms_mean", "step_ms_p99", "collective_wait_ms_max", "collective_wait_ms_min")


class UsageProblem(ValueError):
    """Bad arguments found after parsing (exit 2)."""


def _num(v):
    return None if v is None else float(v)


def actuation_latencies(decisions, timeline):
    """{"suspend": [ms], "resume": [ms]}: from each decision to the runlist update that carried it
    out returning — a suspension window's start (suspend) or end (resume) on the same GPU.

    Needs the timeline of the whole run (windows outside a partial timeline would pair wrongly)."""
    windows = {}
    for e in timeline or []:
        if e.get("kind") == "suspended":
            windows.setdefault(e.get("gpu", 0), []).append((e["start_us"], e["end_us"]))
    out = {"suspend": [], "resume": []}
    for g in windows:
        windows[g].sort()
    for d in decisions or []:
        kind = d.get("action")
        w = windows.get(d.get("gpu", 0), [])
        t = d.get("t_us")
        if kind not in out or t is None:
            continue
        edge = [s for s, _ in w if s >= t] if kind == "suspend" else [e for _, e in w if e >= t]
        if edge:
            out[kind].append((min(edge) - t) / 1000.0)
    return out


def decisions_per_gpu(decisions, gpus):
    """[{gpu, suspensions}] for every GPU, from the engine's decision log."""
    counts = [0] * gpus
    for d in decisions or []:
        if isinstance(d, dict) and d.get("action", d.get("kind")) == "suspend":
            g = int(d.get("gpu", 0))
            if 0 <= g < gpus:
                counts[g] += 1
    return [{"gpu": g, "suspensions": n} for g, n in enumerate(counts)]


def make_row(exp, pt, seed, engine, result):
    spec = pt["spec"]
    r = result["row"]
    lat = result.get("latencies_ms")
    row = {"experiment": exp.name, "point": pt["point"], "group": pt["group"], "seed": seed, "engine": engine,
           "baseline": r["baseline"], "params": pt["params"]}
    for k in METRICS:
        row[k] = _num(r.get(k))
    llm = (result.get("llm") or [None])[0]
    if llm and "step_ms" in llm:
        row["step_ms_mean"], row["step_ms_p99"] = _num(llm["step_ms"]["mean"]), _num(llm["step_ms"]["p99"])
        waits = [s["collective_wait_ms_per_step"] for s in llm.get("shards", [])]
        if waits:
            row["collective_wait_ms_max"], row["collective_wait_ms_min"] = max(waits), min(waits)
    row["online_requests"] = int(r.get("online_requests") or 0)
    if lat:
        s = stats.summarize(lat)
        row.update(online_requests=s["count"], online_p50_ms=s["p50"], online_p95_ms=s["p95"], online_p99_ms=s["p99"],
                   online_mean_ms=s["mean"], online_max_ms=s["max"], online_tail_ms=s["tail"])
        row["online_tail_kind"] = s["tail_kind"]
    else:
        # No samples: the engine's own P99, labelled by the sample count it came from.
        enough = row["online_requests"] >= stats.MIN_TAIL_SAMPLES
        row["online_tail_ms"] = row["online_p99_ms"] if enough or row["online_max_ms"] is None else row["online_max_ms"]
        row["online_tail_kind"] = None if not row["online_requests"] else ("p99" if enough else "max")
    if not spec["offline"]:
        row["offline_iterations"] = row["offline_iterations_per_s"] = None
    whole = spec["record"].get("timeline") and "timeline_from_s" not in spec["record"]
    lat = actuation_latencies(result.get("decisions"), result.get("timeline")) if whole else {}
    for kind in ("suspend", "resume"):
        v = lat.get(kind)
        row[f"{kind}_latency_max_ms"] = max(v) if v else None
    return row


def aggregate(pt, rows):
    agg = {"point": pt["point"], "group": pt["group"], "x": pt["x"], "params": pt["params"],
           "baseline": pt["spec"]["baseline"], "seeds": [r["seed"] for r in rows],
           "requested": sum(t["requests"] for t in pt["spec"]["online"]),
           "metrics": {k: stats.spread([r.get(k) for r in rows]) for k in METRICS},
           "tail_kind": rows[0].get("online_tail_kind") if rows else None}
    return agg


def _program_summary(t):
    if "llm" in t:
        l = t["llm"]
        return {"llm": {"steps": os.path.basename(l["steps"]), "max_num_seqs": l["max_num_seqs"],
                        "max_num_batched_tokens": l["max_num_batched_tokens"], "kv_blocks": l["kv_blocks"],
                        "slo": l["slo"], "lengths": len(l["lengths"])}}
    if "trace" in t:
        ks = trace_kernels(t["trace"])
        # The file's name, not its path: results are kept and compared on other machines.
        return {"trace": os.path.basename(t["trace"]), "kernels": len(ks), "gpu_ms": round(sum(k["duration_us"] for k in ks) / 1000, 3)}
    return {"trace": None, "kernels": len(t["kernels"]),
            "gpu_ms": round(sum(k["duration_us"] for k in t["kernels"]) / 1000, 3)}


def spec_summary(s):
    """The spec without its kernel lists: what a reader needs to know each point's configuration."""
    return {"baseline": s["baseline"], "gpus": s["gpus"], "duration_s": s["duration_s"],
            "online": [dict({"name": t["name"], "gpus": task_gpus(t), "arrival": t["arrival"],
                             "requests": t["requests"]}, **_program_summary(t),
                            **({"allreduce": t["allreduce"]} if "allreduce" in t else {})) for t in s["online"]],
            "offline": [dict({"name": t["name"], "gpus": task_gpus(t), "queues": t.get("queues"),
                              "max_in_flight": t.get("max_in_flight")}, **_program_summary(t)) for t in s["offline"]],
            "policy": s["policy"], "model": s["model"], "throttle": s["throttle"], "partition": s["partition"]}


def calibrated(model, o):
    """The point's model costs times the run's calibration (1.0 unless --cwsr-save-scale/...), at the
    run's cost band (--cost-band) unless the point names its own (sweep-model-costs)."""
    return dict(model, cost_band=model.get("cost_band", o.cost_band),
                cwsr_save_scale=model["cwsr_save_scale"] * o.cwsr_save_scale,
                hws_roundtrip_scale=model["hws_roundtrip_scale"] * o.hws_roundtrip_scale)


def selected_points(exp, o):
    """The experiment's points; with --x only the sweep points at those x values plus the points
    off the sweep axis (each side alone, say), which the checks compare against; with --points
    only the points of those names."""
    pts = exp.points(o)
    quick = " with --quick" if o.quick else ""
    if o.only_x is not None:
        xs = sorted({p["x"] for p in pts if p.get("x") is not None})
        missing = [x for x in o.only_x if x not in xs]
        if missing:
            have = ", ".join(f"{x:g}" for x in xs) or "none: it has no sweep axis"
            raise UsageProblem(f"--x {', '.join(f'{x:g}' for x in missing)}: {exp.name} has no point there "
                               f"(its x values{quick}: {have})")
        pts = [p for p in pts if p.get("x") is None or p["x"] in o.only_x]
    if o.only_points is not None:
        names = [p["point"] for p in pts]
        missing = [n for n in o.only_points if n not in names]
        if missing:
            raise UsageProblem(f"--points {','.join(missing)}: {exp.name} has no such point (its points{quick}"
                               f"{' at those --x' if o.only_x is not None else ''}: {', '.join(names)})")
        pts = [p for p in pts if p["point"] in o.only_points]
    return pts


def run_checks(exp, points, o):
    """The experiment's checks on `points`. A check that compares against a point --points or --x
    left out is reported as not measured, naming that point, rather than failing the run."""
    if not exp.checks:
        return []
    try:
        return exp.checks(points, o)
    except KeyError as e:
        if o.only_points is None and o.only_x is None:
            raise
        return [check(f"the experiment's checks: they need point {e.args[0]!r}, which this run left out "
                      "(--points/--x)", "-", "run without --points to check", None, None)]


def run_des(exp, o, des, progress, kept_dir):
    """Every selected point × seed on gpreempt-des; results kept in kept_dir as they finish
    (result_store.py) and reused from there. Returns rows, points, latency samples, timelines and
    how many results were reused."""
    engine = DesEngine(des)
    store = ResultStore(kept_dir, des, fresh=o.fresh, progress=progress)
    pts = selected_points(exp, o)
    rows, aggs, samples, timelines = [], [], {}, {}
    for i, pt in enumerate(pts):
        prow = []
        for seed in o.seeds:
            spec = dict(pt["spec"], seed=seed, model=calibrated(pt["spec"]["model"], o))
            result = store.get(pt["point"], spec)
            if result is None:
                progress(f"[{i + 1}/{len(pts)}] {pt['point']} seed {seed}")
                result = engine.run(spec)
                store.put(pt["point"], spec, result)
            else:
                progress(f"[{i + 1}/{len(pts)}] {pt['point']} seed {seed}: kept from an earlier run")
            row = make_row(exp, pt, seed, "des", result)
            prow.append(row)
            if seed == o.seeds[0]:
                if result.get("latencies_ms"):
                    samples[pt["point"]] = [float(x) for x in result["latencies_ms"]]
                if result.get("timeline"):
                    timelines[pt["point"]] = result["timeline"]
                per_gpu = decisions_per_gpu(result.get("decisions"), pt["spec"]["gpus"])
        a = aggregate(pt, prow)
        a["spec"] = spec_summary(pt["spec"])
        a["decisions_per_gpu"] = per_gpu if pt["spec"]["gpus"] > 1 else None
        rows += prow
        aggs.append(a)
    return rows, aggs, samples, timelines, store.reused


def run_live(exp, o, gpreempt, duration_s, progress):
    if not exp.live:
        with_live = ", ".join(n for n, e in EXPERIMENTS.items() if e.live)
        raise UsageProblem(f"experiment {exp.name} has no live form (live: {with_live})")
    engine = LiveEngine(gpreempt)
    rows = []
    for rep, seed in enumerate(o.seeds):
        progress(f"live run {rep + 1}/{len(o.seeds)}: {' '.join(engine.command(exp.live, duration_s)[1:])}")
        out = engine.run_demo(exp.live, duration_s)
        for r in out["rows"]:
            row = {"experiment": exp.name, "point": r.pop("point"), "seed": seed, "engine": "live", "params": {}}
            row.update(r)
            row["group"] = row["point"]
            n = row["online_requests"] or 0
            enough = n >= stats.MIN_TAIL_SAMPLES
            row["online_tail_ms"] = row["online_p99_ms"] if enough else row.get("online_max_ms")
            row["online_tail_kind"] = None if not n else ("p99" if enough else "max")
            rows.append(row)
    points = []
    for name in dict.fromkeys(r["point"] for r in rows):
        pr = [r for r in rows if r["point"] == name]
        points.append({"point": name, "group": name, "x": None, "params": {}, "baseline": pr[0]["baseline"],
                       "seeds": [r["seed"] for r in pr], "requested": None,
                       "metrics": {k: stats.spread([r.get(k) for r in pr]) for k in METRICS},
                       "tail_kind": pr[0]["online_tail_kind"], "spec": None, "decisions_per_gpu": None})
    return rows, points, out["command"]


def children_cpu_seconds():
    """User + system CPU seconds of this process's finished children (the engine processes)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(name, engine="des", out_dir="eval-out", options=None, des=None, gpreempt=None, live_duration_s=5.0,
        command=None, progress=lambda s: None):
    if name not in EXPERIMENTS:
        raise UsageProblem(f"unknown experiment {name!r} (gpreempt eval list)")
    exp = EXPERIMENTS[name]
    o = options or Options()
    if o.requests < 1 or not o.seeds:
        raise UsageProblem("--requests and --seeds must be at least 1")
    if not (o.cwsr_save_scale > 0 and o.hws_roundtrip_scale > 0):
        raise UsageProblem("--cwsr-save-scale and --hws-roundtrip-scale must be positive")
    if o.cost_band not in ("low", "central", "high"):
        raise UsageProblem(f"--cost-band must be low, central or high, not {o.cost_band!r}")
    os.makedirs(out_dir, exist_ok=True)
    t0 = time.monotonic()
    cpu0 = children_cpu_seconds()
    load0 = round(os.getloadavg()[0], 2)
    o.trace_dir = o.trace_dir if o.trace_dir != "." else out_dir
    os.makedirs(o.trace_dir, exist_ok=True)  # --traces DIR may name a directory not made yet
    comparison = None
    samples, timelines = {}, {}
    kept_dir = os.path.join(out_dir, "points")
    reused = 0
    if engine == "des":
        rows, points, samples, timelines, reused = run_des(exp, o, des, progress, kept_dir)
        checks = run_checks(exp, points, o)
    elif engine == "live":
        rows, points, live_cmd = run_live(exp, o, gpreempt, live_duration_s, progress)
        checks = []
        if des and os.access(des, os.X_OK):
            progress("des run of the same experiment, for the comparison")
            drows, dpoints, samples, timelines, reused = run_des(exp, o, des, progress, kept_dir)
            rows += drows
            comparison = report.live_vs_des(points, dpoints)
            checks = run_checks(exp, dpoints, o)
            for c in checks:
                c["name"] = "(des) " + c["name"]
            points = points + [dict(p, point=p["point"] + " (des)") for p in dpoints]
    else:
        raise UsageProblem(f"unknown engine {engine!r} (des or live)")
    doc = {
        "schema_version": SCHEMA_VERSION,
        "experiment": exp.name,
        "title": exp.title,
        "shows": exp.shows,
        "engine": engine,
        "command": command,
        "generated_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "options": {"requests": o.requests, "seeds": list(o.seeds), "quick": o.quick,
                    "cwsr_save_scale": o.cwsr_save_scale, "hws_roundtrip_scale": o.hws_roundtrip_scale,
                    "cost_band": o.cost_band, "only_x": list(o.only_x) if o.only_x is not None else None,
                    "only_points": list(o.only_points) if o.only_points is not None else None,
                    "live_duration_s": live_duration_s if engine == "live" else None},
        # The program's name, not its path: results are kept and compared on other machines.
        "engine_binary": (lambda b: os.path.basename(b) if b else None)(des if engine == "des" else gpreempt),
        "min_tail_samples": stats.MIN_TAIL_SAMPLES,
        # Live numbers are wall-clock numbers of a simulated GPU driven by a host process: how
        # loaded the host was decides how far they are from the model (report.LIVE_EXPLANATION).
        "host_load_average": round(os.getloadavg()[0], 2),
        "host_load_average_start": load0,
        "host_cpus": os.cpu_count(),
        # Every engine call of the run (trace recording included), before figures and report.
        "run_wall_seconds": round(time.monotonic() - t0, 2),
        # The engines' CPU time: what the run costs on an idle machine, whatever the load was.
        "run_cpu_seconds": round(children_cpu_seconds() - cpu0, 2),
        # Results kept in OUT/points/ by an earlier run of the same points and reused: the two
        # figures above do not include their cost.
        "reused_results": reused,
        "points": points,
        "rows": rows,
        "checks": checks,
        "passed": all(c["passed"] is not False for c in checks),
        "live_vs_des": comparison,
        "reference": exp.reference,
        "notes": list(exp.notes),
        "figures": [],
    }
    doc["figures"] = figures.draw(exp, doc, samples, timelines, out_dir)
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write(report.markdown(exp, doc))
    return doc


def load(path):
    with open(path) as f:
        return json.load(f)
