"""The LLM experiment (issue 24, item 6): a vLLM-style server of a Llama-shaped model against a
fine-tuning job on one simulated MI308X, every baseline, a request-rate sweep, and what both chat
objectives cost the fine-tuning job (docs/evaluation.md, "llm-serving-vs-finetune").

Both sides come from the live server's own code: the server's steps from a step grid recorded with
gpreempt.sim.llm's model under torch_mode (python3 -m gpreempt.sim.llm.step_grid), its request
lengths from gpreempt.sim.llm.workload's synthetic ShareGPT distribution, the fine-tuning step a
torch_mode trace of gpreempt.sim.llm.training (`gpreempt demo --offline llm-finetune`'s job).
"""
import json
import math
import os
import random
import subprocess

from . import workloads as wl
from .experiments import SLO, check, checks_for, experiment, point, spec

# The server: Llama-3.1-8B shapes, bf16, vLLM's defaults (docs/llm.md): 16-token KV blocks, a
# 2048-token step budget (vLLM V1's chunked-prefill default for online serving), and the KV blocks
# an MI308X leaves after the weights at vLLM's 0.92 memory utilisation (serve.default_kv_blocks).
MODEL = "llama-8b"
MAX_NUM_SEQS = 256
MAX_NUM_BATCHED_TOKENS = 2048
# A chat user's objectives: MLPerf Inference's interactive scenario for Llama-3.1-8B (loadgen's
# mlperf.conf: TTFT p99 500 ms, TPOT p99 30 ms), also `python3 -m gpreempt.sim.serve`'s defaults.
TTFT_SLO_MS = 500.0
TPOT_SLO_MS = 30.0
RATES = [1.0, 2.0, 4.0]
QUICK_RATES = [4.0]  # the cheapest to simulate (least simulated time per request)
BASELINES = ["none", "priority", "throttle", "partition", "gpreempt-hint", "gpreempt-transparent", "oracle"]
# The fine-tuning trace's largest kernels (AdamW's foreach updates over 1.2 B parameters) have
# millions of 256-thread workgroups; the GPU model simulates workgroups in cohorts that contention
# splits, and at millions per kernel a contended run costs minutes per simulated second. Replayed
# with at most this many workgroups per kernel (each correspondingly longer, the kernel as long),
# every kernel still fills the GPU's 1,280 workgroup slots three times over.
OFFLINE_MAX_WORKGROUPS = 4096
OFFLINE_ALONE_S = 60.0
# The offline job must keep this share of the GPU time the server alone leaves idle (issue 24).
OFFLINE_SHARE_TARGET = 0.90


def step_grid(o, model=MODEL, tp=1):
    """The model's step grid (with `tp` > 1, one GPU's shard's) in the trace directory, recorded
    once, under kfdsim."""
    name = f"{model}-steps.json" if tp == 1 else f"{model}-tp{tp}-steps.json"
    path = os.path.abspath(os.path.join(o.trace_dir, name))
    if os.path.exists(path) and os.path.getsize(path) > 0:
        return path
    cmd = [o.kfdsim, "run", "--profile", "mi308x", "--hardware", "gpu", "--", "/usr/bin/python3", "-m",
           "gpreempt.sim.llm.step_grid", "--model", model, "--out", path + ".part"]
    if tp > 1:
        cmd += ["--tp", str(tp)]
    p = subprocess.run(cmd, env=wl.python_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=1800)
    if p.returncode != 0:
        raise RuntimeError(f"recording the step grid failed (exit {p.returncode}): {' '.join(cmd)}\n"
                           + p.stderr[-2000:])
    os.replace(path + ".part", path)
    return path


def kv_blocks(model=MODEL, block_size=16):
    from ..sim.serve import _models, default_kv_blocks

    _, config, module = _models()[model]
    return default_kv_blocks(config, module, block_size)


def lengths(n, seed=0):
    """n (prompt, output) pairs of the synthetic ShareGPT distribution (workload.py)."""
    from ..sim.llm import workload

    return [list(x) for x in workload.sharegpt_lengths(random.Random(seed), n)]


def slo_policy(rate_hz):
    """The chat objectives as the online class's `slo` (gpreemptd's keys), judged over a window of
    about 200 requests (never under 2 s): a p99 needs 100 under each protection before the
    controller moves."""
    return {"slo": {"ttft_p99_ms": TTFT_SLO_MS, "tpot_p99_ms": TPOT_SLO_MS,
                    "window_s": max(2.0, math.ceil(200.0 / rate_hz))}}


def llm_task(grid, rate_hz, requests, kind="poisson"):
    return {"name": "llm-server", "gpu": 0, "arrival": {"kind": kind, "rate_hz": rate_hz}, "requests": int(requests),
            "llm": {"steps": grid, "lengths": lengths(requests), "kv_blocks": kv_blocks(),
                    "max_num_seqs": MAX_NUM_SEQS, "max_num_batched_tokens": MAX_NUM_BATCHED_TOKENS,
                    "slo": {"ttft_ms": TTFT_SLO_MS, "tpot_ms": TPOT_SLO_MS}}}


def with_max_workgroups(src, dst, max_wgs):
    """Copy a torch_mode trace with every kernel of more than max_wgs workgroups regridded to
    max_wgs workgroups of the same size (gpreempt-des spreads its traced time over them)."""
    with open(src) as f, open(dst, "w") as out:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            wg = [max(1, int(x)) for x in r["workgroup"]]
            grid = [max(1, int(x)) for x in r["grid"]]
            n = math.prod(-(-g // w) for g, w in zip(grid + [1] * (3 - len(grid)), wg + [1] * (3 - len(wg))))
            if n > max_wgs:
                r["grid"], r["workgroup"] = [max_wgs * math.prod(wg)], [math.prod(wg)]
            out.write(json.dumps(r) + "\n")
    return dst


def finetune_trace(o):
    raw = wl.record_trace("llama-1b-finetune", os.path.abspath(f"{o.trace_dir}/llama-1b-finetune.jsonl"), o.kfdsim,
                          env=wl.python_env())
    dst = raw.replace(".jsonl", f"-max{OFFLINE_MAX_WORKGROUPS}wg.jsonl")
    if not os.path.exists(dst):
        with_max_workgroups(raw, dst, OFFLINE_MAX_WORKGROUPS)
    wl.trace_kernels(dst)  # a broken cached trace fails here, naming its line
    return dst


@experiment(name="llm-serving-vs-finetune",
            title=f"LLM serving ({MODEL} shapes, ShareGPT-like, Poisson) vs Llama-1B full fine-tuning, every baseline",
            shows="whether each baseline meets a chat user's TTFT and TPOT objectives as the request rate grows, and "
                  "how much of the GPU time the server leaves the fine-tuning job keeps",
            figures=("attainment", "vs_x"), x_label="request rate (requests/s)",
            columns=("ttft_p99_ms", "tpot_p99_ms", "slo_attainment", "online_gpu_busy_fraction"),
            notes=(f"Objectives: TTFT p99 <= {TTFT_SLO_MS:g} ms and TPOT p99 <= {TPOT_SLO_MS:g} ms, MLPerf Inference's "
                   "interactive scenario for Llama-3.1-8B (mlcommons/inference loadgen mlperf.conf). Attainment is the "
                   "share of requests meeting both (DistServe's and vLLM's goodput).",
                   "The server's steps are priced from a step grid recorded with gpreempt.sim.llm's model under "
                   "torch_mode and interpolated per step; runs of consecutive vector kernels are replayed as one "
                   "kernel of their summed time (llm.merge_vector_kernels). GPU time only: no host gap between steps.",
                   f"The fine-tuning trace is replayed with at most {OFFLINE_MAX_WORKGROUPS} workgroups per kernel "
                   "(simulation cost; experiments_llm.OFFLINE_MAX_WORKGROUPS says why)."))
def _llm_serving(o):
    grid = step_grid(o)
    off = [{"name": "llama-1b-finetune", "gpu": 0, "trace": finetune_trace(o)}]
    pts = [point("offline-alone", spec("none", [], off, OFFLINE_ALONE_S), group="offline-alone")]
    for r in (QUICK_RATES if o.quick else RATES):
        on = [llm_task(grid, r, o.requests)]
        d = math.ceil(o.requests / r) * 4.0  # a cap only: each point ends when every request is served
        runs = [("online-alone", spec("none", on, [], d))] + [(b, spec(b, on, off, d)) for b in BASELINES]
        # gpreempt told the objectives: the SloController spends preemptions only as far as the
        # TTFT and TPOT goals need them, from the tokens the server reports.
        runs.append((SLO, spec("gpreempt-hint", on, off, d, policy=slo_policy(r))))
        for label, s in runs:
            pts.append(point(f"{label}@{r:g}/s", s, group=label, x=r, rate_hz=r))
    return pts


def _metric(p, k):
    v = p["metrics"].get(k) or {}
    return v.get("max") if k in ("ttft_p99_ms", "tpot_p99_ms") else v.get("min")


@checks_for("llm-serving-vs-finetune")
def _llm_serving_checks(pts, o):
    """Issue 24's DES target, per rate: gpreempt meets both objectives wherever the server alone
    does, and keeps >= 90 % of the GPU time the server alone leaves for the fine-tuning job."""
    off_alone = next((p for p in pts if p["group"] == "offline-alone"), None)
    full = _metric(off_alone, "offline_gpu_busy_fraction") if off_alone else None
    c = []
    for alone in [p for p in pts if p["group"] == "online-alone"]:
        x = alone["x"]
        meets_alone = _metric(alone, "p99_meets_slo") == 1.0
        idle = 1.0 - (_metric(alone, "online_gpu_busy_fraction") or 0.0)
        for g in ("gpreempt-hint", "gpreempt-transparent", SLO):
            p = next((q for q in pts if q["group"] == g and q["x"] == x), None)
            if p is None:
                continue
            if meets_alone:
                for k, slo in (("ttft_p99_ms", TTFT_SLO_MS), ("tpot_p99_ms", TPOT_SLO_MS)):
                    v = _metric(p, k)
                    c.append(check(f"{g} @{x:g}/s: {k[:4].upper()} p99, worst seed (the server alone meets both "
                                   "objectives here)", f"<= {slo:g}", "issue 24 DES target; MLPerf interactive",
                                   v, v is not None and v <= slo, "ms"))
            busy = _metric(p, "offline_gpu_busy_fraction")
            if busy is not None and full and idle > 0:
                share = busy / (idle * full)
                c.append(check(f"{g} @{x:g}/s: fine-tuning's GPU time / the time the server alone leaves "
                               "(x offline alone's busy fraction)", f">= {OFFLINE_SHARE_TARGET:.0%}",
                               "issue 24 DES target", round(share, 3), share >= OFFLINE_SHARE_TARGET))
    return c


# ---- the user's shape: a DeepSeek-style MoE tensor-parallel across an 8-GPU node ------------------
# DeepSeek-V3's shapes (671 B parameters, 37 B active; deepseek.DEEPSEEK_V3), bf16, split over the
# node's 8 GPUs as vLLM's TP=8 splits it (gpreempt.sim.llm.tensor_parallel: attention by heads, every
# routed and shared expert by its intermediate width, embedding and LM head by vocabulary): each GPU
# runs the same shard kernels and the shards all-reduce the hidden state after the embedding and
# after the attention and the MoE (or MLP) of each of the 61 layers, and gather the logits.
MOE_MODEL = "deepseek-v3"
TP = 8
TP_GPUS = list(range(TP))
# The collectives' link model, as `node-8gpu`'s all-reduce: a fixed 25 µs (latency-bound small
# messages, node-8gpu's estimate) plus each GPU's bus bytes (2(N-1)/N of the hidden state for an
# all-reduce, rccl-tests' busbw convention) at 7 xGMI links × 48 GB/s: AMD's "Understanding RCCL
# Bandwidth and xGMI Performance on AMD Instinct MI300X" (ROCm blogs, 2025) gives 64 GB/s peak and
# about 48 GB/s usable per link, each GPU linked to its 7 peers.
TP_ALLREDUCE_US = 25.0
TP_BUS_GBPS = 7 * 48.0
MOE_RATE = 2.0
# The objectives: MLPerf's server scenario (loadgen's mlperf.conf for Llama-3.1-8B: TTFT p99 2 s,
# TPOT p99 100 ms), the looser pair docs/llm.md cites. This bf16 server misses the interactive
# 30 ms TPOT alone (p99 42 ms at 2 requests/s, 33.6 ms at 1/s, 100 requests), so the interactive pair
# could not tell the baselines apart.
MOE_TTFT_SLO_MS = 2000.0
MOE_TPOT_SLO_MS = 100.0
QUICK_MOE_REQUESTS = 2  # the mechanism only (about 2.5 CPU-minutes in all): no tail is measured
# The GPU whose fine-tuning job gpreempt cannot suspend in the `gpu7-unmanaged` point.
UNMANAGED_GPU = 7


def moe_kv_blocks(block_size=16):
    """KV blocks one GPU has after its shard's bf16 weights (the MLA latent cache is replicated on
    every GPU of the group, as vLLM keeps it)."""
    from ..sim.llm import deepseek, tensor_parallel
    from ..sim.serve import default_kv_blocks

    return default_kv_blocks(tensor_parallel.shard(deepseek.DEEPSEEK_V3, TP), deepseek, block_size)


def moe_task(grid, rate_hz, requests):
    t = llm_task(grid, rate_hz, requests)
    del t["gpu"]
    t["gpus"] = list(TP_GPUS)
    t["name"] = "moe-tp8-server"
    t["llm"]["kv_blocks"] = moe_kv_blocks()
    t["allreduce"] = {"us": TP_ALLREDUCE_US, "bus_gbps": TP_BUS_GBPS}
    t["llm"]["slo"] = {"ttft_ms": MOE_TTFT_SLO_MS, "tpot_ms": MOE_TPOT_SLO_MS}
    return t


def moe_slo_policy(rate_hz):
    return {"slo": {"ttft_p99_ms": MOE_TTFT_SLO_MS, "tpot_p99_ms": MOE_TPOT_SLO_MS,
                    "window_s": max(2.0, math.ceil(200.0 / rate_hz))}}


def finetune_on(gpus, trace, unmanaged=()):
    """One fine-tuning job per GPU (each its own process, as on a shared node); those on `unmanaged`
    GPUs are jobs gpreempt cannot suspend (spec offline[].managed)."""
    out = []
    for g in gpus:
        j = {"name": f"llama-1b-finetune-gpu{g}", "gpu": g, "trace": trace}
        if g in unmanaged:
            j["managed"] = False
        out.append(j)
    return out


@experiment(name="llm-moe-tp8",
            title=f"DeepSeek-V3-shaped MoE served tensor-parallel over 8 GPUs vs a fine-tuning job on every GPU",
            shows="what the offline jobs do to a tensor-parallel MoE server's TTFT and TPOT, what gpreempt recovers, "
                  "and what one GPU whose job is never suspended does to every GPU's step",
            figures=("attainment",),
            columns=("ttft_p99_ms", "tpot_p99_ms", "slo_attainment", "step_ms_mean", "collective_wait_ms_max",
                     "collective_wait_ms_min"),
            notes=(f"The server: DeepSeek-V3's shapes in bf16, one shard per GPU as vLLM's TP={TP} splits the model "
                   "(docs/llm.md, \"Tensor parallel across a node\"); one continuous-batching scheduler, each step's "
                   "shard kernels on all 8 GPUs, and the shards all-reduce after the embedding and after the attention "
                   "and the MoE of every layer: the slowest GPU gates every collective.",
                   f"Collectives: {TP_ALLREDUCE_US:g} µs (node-8gpu's all-reduce) plus each GPU's bus bytes at "
                   f"{TP_BUS_GBPS:g} GB/s (7 xGMI links × 48 GB/s usable, AMD's ROCm blog on MI300X RCCL bandwidth).",
                   f"Objectives: TTFT p99 <= {MOE_TTFT_SLO_MS:g} ms and TPOT p99 <= {MOE_TPOT_SLO_MS:g} ms, MLPerf "
                   "Inference's server scenario (loadgen mlperf.conf, Llama-3.1-8B): this bf16 server alone misses the "
                   "interactive 30 ms TPOT (experiments_llm.MOE_TTFT_SLO_MS says by how much).",
                   "The eight fine-tuning jobs run the same trace from the same instant: under no control they slow "
                   "every shard alike, so the shards wait little for each other; jobs out of phase would make the "
                   "slowest of eight gate every collective.",
                   f"gpu{UNMANAGED_GPU}-unmanaged: gpreempt-hint, except that the job on GPU {UNMANAGED_GPU} is one "
                   "gpreempt cannot suspend (spec offline[].managed = false); collective_wait_ms_max/min are the most "
                   "and the least any GPU's shard waited per step for the slowest.",
                   "Every GPU runs one Llama-1B full fine-tuning job (the trace of llm-serving-vs-finetune)."))
def _llm_moe_tp8(o):
    grid = step_grid(o, MOE_MODEL, TP)
    trace = finetune_trace(o)
    r = MOE_RATE
    # Eight GPUs of contended sharing cost the engine about 9 CPU-s per simulated second (docs/
    # evaluation.md, "llm-moe-tp8"): --quick serves at most QUICK_MOE_REQUESTS and skips gpreempt-slo.
    n = min(o.requests, QUICK_MOE_REQUESTS) if o.quick else o.requests
    on = [moe_task(grid, r, n)]
    d = math.ceil(n / r) * 4.0  # a cap only: each point ends when every request is served
    off = finetune_on(TP_GPUS, trace)
    runs = [("offline-alone", spec("none", [], finetune_on([0], trace), OFFLINE_ALONE_S, gpus=TP)),
            ("online-alone", spec("none", on, [], d, gpus=TP)),
            ("none", spec("none", on, off, d, gpus=TP)),
            ("gpreempt-hint", spec("gpreempt-hint", on, off, d, gpus=TP)),
            (SLO, spec("gpreempt-hint", on, off, d, gpus=TP, policy=moe_slo_policy(r))),
            (f"gpu{UNMANAGED_GPU}-unmanaged",
             spec("gpreempt-hint", on, finetune_on(TP_GPUS, trace, unmanaged=(UNMANAGED_GPU,)), d, gpus=TP))]
    return [point(label, s, group=label, rate_hz=r) for label, s in runs if not (o.quick and label == SLO)]


@checks_for("llm-moe-tp8")
def _llm_moe_tp8_checks(pts, o):
    """Issue 24's DES targets for the node: gpreempt meets both objectives where the server alone
    does, and the fine-tuning jobs keep >= 90 % of the GPU time the server alone leaves them."""
    by = {p["group"]: p for p in pts}
    alone, off_alone = by.get("online-alone"), by.get("offline-alone")
    c = []
    if not alone:
        return c
    meets_alone = _metric(alone, "p99_meets_slo") == 1.0
    idle = 1.0 - (_metric(alone, "online_gpu_busy_fraction") or 0.0)
    full = _metric(off_alone, "offline_gpu_busy_fraction") if off_alone else None
    for g in ("gpreempt-hint", SLO):
        p = by.get(g)
        if p is None:
            continue
        if meets_alone:
            for k, slo in (("ttft_p99_ms", MOE_TTFT_SLO_MS), ("tpot_p99_ms", MOE_TPOT_SLO_MS)):
                v = _metric(p, k)
                c.append(check(f"{g}: {k[:4].upper()} p99, worst seed (the server alone meets both objectives)",
                               f"<= {slo:g}", "issue 24 DES target; MLPerf server scenario", v,
                               v is not None and v <= slo, "ms"))
        busy = _metric(p, "offline_gpu_busy_fraction")
        if busy is not None and full and idle > 0:
            share = busy / (idle * full)
            c.append(check(f"{g}: fine-tuning's GPU time / the time the server alone leaves (x offline alone's "
                           "busy fraction), mean over the 8 GPUs", f">= {OFFLINE_SHARE_TARGET:.0%}",
                           "issue 24 DES target", round(share, 3), share >= OFFLINE_SHARE_TARGET))
    return c
