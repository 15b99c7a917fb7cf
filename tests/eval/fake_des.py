#!/usr/bin/python3
"""A stand-in for gpreempt-des that honours its spec → result contract with a crude closed-form
model, so that the harness's logic (runner, stats, figures, report, CLI) is tested without the
real engine. Deterministic for a given spec and seed. Not a model of anything: never cite it.

FAKE_DES_FAIL=1 makes it fail (exit 1); FAKE_DES_BAD=norow makes it write a result without a row,
FAKE_DES_BAD=nop99 one whose row lacks online_p99_ms.
"""
import argparse
import json
import os
import random
import sys

SLOWDOWN = {"none": 3.0, "priority": 2.5, "throttle": 2.0, "partition": 1.6, "gpreempt-hint": 1.2,
            "gpreempt-early": 1.1, "gpreempt-transparent": 1.3, "oracle": 1.0}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", required=True)
    ap.add_argument("--out")
    args = ap.parse_args()
    if os.environ.get("FAKE_DES_FAIL"):
        print("fake_des: failing as asked", file=sys.stderr)
        return 1
    spec = json.load(open(args.spec))
    rng = random.Random(spec.get("seed", 1))
    b = spec["baseline"]
    preempting = b.startswith("gpreempt")
    def gpus(t):
        return t["gpus"] if "gpus" in t else [t.get("gpu", 0)]

    off_gpus = {g for t in spec["offline"] for g in gpus(t)}
    lat, decisions, timeline = [], [], []
    for task in spec["online"]:
        t_us = 0.0
        solo = sum(k["duration_us"] for k in task["kernels"]) / 1000.0
        a = task["arrival"]
        mean_gap_us = (1e6 / a["rate_hz"] if a["kind"] != "uniform"
                       else 500.0 * (a["min_interval_ms"] + a["max_interval_ms"]))
        shared = [g for g in gpus(task) if g in off_gpus]
        for i in range(task["requests"]):
            t_us += mean_gap_us
            f = SLOWDOWN[b] if shared else 1.0
            lat.append(solo * f * (1 + 0.2 * rng.random()))
            for g in shared if preempting else []:
                band = {"low": 0.5, "central": 1.0, "high": 2.0}[spec["model"].get("cost_band", "central")]
                cost = 400.0 * spec["model"]["cwsr_save_scale"] * band
                end = t_us + solo * 1000
                decisions.append({"t_us": t_us, "gpu": g, "action": "suspend", "targets": [], "reason": "fake"})
                decisions.append({"t_us": end, "gpu": g, "action": "resume", "targets": [], "reason": "fake"})
                if spec["record"]["timeline"]:
                    timeline.append({"gpu": g, "kind": "suspended", "who": "offline", "start_us": t_us + cost,
                                     "end_us": end + 30.0 * spec["model"]["hws_roundtrip_scale"]})
            if spec["record"]["timeline"]:
                timeline.append({"gpu": gpus(task)[0], "kind": "kernel", "who": task["name"], "start_us": t_us,
                                 "end_us": t_us + solo * 1000})
    dur = spec["duration_s"]
    iters = 0.0
    for task in spec["offline"]:
        it_s = sum(k["duration_us"] for k in task["kernels"]) / 1e6
        busy = sum(o["requests"] * sum(k["duration_us"] for k in o["kernels"]) / 1e6
                   for o in spec["online"] if set(gpus(o)) & set(gpus(task)))
        loss = min(0.9, busy / dur * (1.5 if preempting else 1.0))
        iters += dur / it_s * (1 - loss)
    sus = sum(1 for d in decisions if d["action"] == "suspend")
    lat_sorted = sorted(lat)

    def pct(q):
        return lat_sorted[int(q * (len(lat_sorted) - 1))] if lat_sorted else None

    row = {"baseline": b, "online_requests": len(lat), "online_p50_ms": pct(0.5), "online_p95_ms": pct(0.95),
           "online_p99_ms": pct(0.99), "online_mean_ms": sum(lat) / len(lat) if lat else None,
           "online_solo_p50_ms": None, "offline_iterations": int(iters),
           "offline_iterations_per_s": iters / dur if spec["offline"] else None,
           "offline_gpu_busy_fraction": 0.5, "suspensions": sus, "suspended_s": sus * 0.002,
           "actuation_timeouts": 0, "sim_seconds": dur, "wall_seconds": 0.01, "events": len(lat) * 10}
    res = {"schema_version": 1, "spec": spec, "row": row, "latencies_ms": lat if spec["record"]["latencies"] else [],
           "timeline": timeline, "decisions": decisions}
    if os.environ.get("FAKE_DES_BAD") == "norow":
        del res["row"]
    elif os.environ.get("FAKE_DES_BAD") == "nop99":
        del row["online_p99_ms"]
    text = json.dumps(res)
    if args.out:
        open(args.out, "w").write(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
