"""Host cost of simulating an LLM decode step: host CPU per step / the step's simulated GPU time,
for the 8B Llama-style model at batch 1 and 32 and context 1024 (target at batch 32: <= 0.20, so
that a served request's TPOT is the simulated GPU's and not Python's; docs/llm.md, *Executor*).

    kfdsim run -- /usr/bin/python3 bench/python/bench_llm_step.py [--steps N] [--runs R] [--json]

Each run builds the model on the meta device and its graph executor, captures the step's parts
once (not counted), then times N decode steps. Host time is this process's CPU time
(time.process_time: a loaded machine does not inflate it) spent forming and dispatching the step;
simulated GPU time is the step's kernels alone on the device plus the command processor's
per-packet overhead. Reported: per run the median step, across runs the median of those.
"""
import argparse
import json
import statistics
import sys

import gpreempt.sim as sim
from gpreempt.sim.llm import executor, llama


def one_run(batch, context, steps):
    model = llama.Llama(llama.LLAMA_8B, device="meta")
    run = executor.GraphExecutor(model)
    seqs = [(1, context, 1)] * batch
    run(seqs)  # captures every part of this shape
    overhead_us = sim.device().profile["packet_overhead_ns"] / 1e3
    rows = []
    for _ in range(steps):
        t = run.totals
        host0, busy0, k0 = t.host_us, t.busy_us, t.kernels
        run(seqs)
        kernels = t.kernels - k0
        gpu_us = (t.busy_us - busy0) + kernels * overhead_us
        rows.append({"host_cpu_ms": (t.host_us - host0) / 1e3, "sim_gpu_ms": gpu_us / 1e3,
                     "kernels": kernels})
    for r in rows:
        r["ratio"] = r["host_cpu_ms"] / r["sim_gpu_ms"]
    return sorted(rows, key=lambda r: r["ratio"])[len(rows) // 2]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20, help="timed decode steps per run (default 20)")
    ap.add_argument("--runs", type=int, default=5, help="runs, each with a fresh model (default 5)")
    ap.add_argument("--context", type=int, default=1024, help="context length (default 1024)")
    ap.add_argument("--json", action="store_true", help="one JSON document instead of the table")
    a = ap.parse_args(argv)
    if a.steps < 1 or a.runs < 1 or a.context < 1:
        ap.error("--steps, --runs and --context must be at least 1")
    res = {"profile": sim.device().profile["name"], "model": "llama-8b", "context": a.context,
           "steps": a.steps, "runs": a.runs, "target_ratio_batch32": 0.20, "batches": {}}
    for batch in (1, 32):
        runs = [one_run(batch, a.context, a.steps) for _ in range(a.runs)]
        med = {k: statistics.median(r[k] for r in runs) for k in ("host_cpu_ms", "sim_gpu_ms", "ratio")}
        res["batches"][str(batch)] = {"median": med, "runs": runs}
    if a.json:
        json.dump(res, sys.stdout, indent=1)
        print()
        return 0
    print(f"{res['profile']}, llama-8b decode, context {a.context}: median of {a.runs} runs "
          f"(each the median of {a.steps} steps)")
    print("batch  host CPU ms  sim GPU ms  host/GPU")
    for b, r in res["batches"].items():
        m = r["median"]
        print(f"{b:>5}  {m['host_cpu_ms']:11.2f}  {m['sim_gpu_ms']:10.2f}  {m['ratio']:8.3f}")
    print(f"target at batch 32: host/GPU <= {res['target_ratio_batch32']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
