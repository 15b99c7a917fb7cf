"""The workloads of the evaluation, as the kernel sequences the discrete-event engine replays.

Three sources:
  * the gpreempt-workload presets (sim/workloads/presets.cpp): the same kernels, grids and
    workgroup costs, turned into {"name", "duration_us", "cus"} with the MI308X geometry of
    docs/sim-model.md §3/§5 (workgroups dealt round-robin to the XCCs, 8 workgroups of 256
    work-items per CU); tests/eval checks this table against `gpreempt-workload presets --json`;
  * kernel traces of real PyTorch models recorded by gpreempt.sim.torch_mode (record.py), one
    request or one training iteration each, replayed in order (one stream: every kernel depends on
    the previous one, as HIP's in-order streams make them);
  * the user's matmul two-model case, calibrated to their measured "alone" numbers.
"""
import json
import math
import os
import subprocess

# MI308X (docs/sim-model.md §5): 4 XCCs × 20 CUs, 32 waves and 16 workgroups per CU, wave 64.
GEOMETRY = {"profile": "mi308x", "num_xcc": 4, "cus_per_xcc": 20, "max_waves_per_cu": 32,
            "max_workgroups_per_cu": 16, "wave_size": 64}


def kernel(name, items, wg, wg_cost_ns, geometry=GEOMETRY):
    """A dispatch of `items` work-items in workgroups of `wg`, each workgroup busy `wg_cost_ns`,
    in the engine's terms: `rounds` of workgroups of `waves_per_workgroup` waves on `cus` CUs
    (the engine makes cus × workgroups-per-CU × rounds workgroups of wg_cost = duration/rounds),
    chosen so that the workgroup count, their cost and the kernel's duration alone match."""
    n_wg = math.ceil(items / wg)
    waves_per_wg = math.ceil(wg / geometry["wave_size"])
    per_cu = min(geometry["max_waves_per_cu"] // waves_per_wg, geometry["max_workgroups_per_cu"])
    per_xcc_round = geometry["cus_per_xcc"] * per_cu
    on_busiest_xcc = math.ceil(n_wg / geometry["num_xcc"])
    rounds = math.ceil(on_busiest_xcc / per_xcc_round)
    cus = min(geometry["num_xcc"] * geometry["cus_per_xcc"], math.ceil(n_wg / (per_cu * rounds)))
    return {"name": name, "duration_us": round(rounds * wg_cost_ns / 1000.0, 3), "cus": cus, "rounds": rounds,
            "waves_per_workgroup": waves_per_wg}


def _k(name, items, wg, cost):
    return (name, items, wg, cost)


def _build_presets():
    cnn_req = [_k("conv2d_fwd", 262144, 256, 40000), _k("relu_fwd", 262144, 256, 4000)] * 8
    cnn_req += [_k("avgpool_fwd", 65536, 256, 10000), _k("linear_fwd", 4096, 256, 20000)]
    cnn_it = [_k("conv2d_fwd", 262144, 256, 40000)] * 8
    cnn_it += [_k("conv2d_bwd_data", 262144, 256, 50000), _k("conv2d_bwd_weight", 262144, 256, 60000)] * 8
    cnn_it += [_k("sgd_update", 1 << 20, 256, 5000)]
    tr_req = [_k("qkv_gemm", 512, 256, 30000), _k("attn_softmax", 512, 256, 10000),
              _k("attn_gemm", 512, 256, 30000), _k("out_proj", 512, 256, 20000),
              _k("mlp_gemm", 512, 256, 40000), _k("layernorm", 512, 256, 8000)] * 12
    tr_it = tr_req + [_k("mlp_gemm_bwd", 512, 256, 80000), _k("attn_bwd", 512, 256, 60000),
                      _k("qkv_gemm_bwd", 512, 256, 60000)] * 12
    toy_on = [_k("linear_512_fwd", 32 * 512, 256, 12000), _k("relu_fwd", 32 * 512, 256, 3000),
              _k("linear_512_fwd", 32 * 512, 256, 12000)]
    toy_fwd = [_k("linear_1024x2048_fwd", 64 * 2048, 256, 60000), _k("relu_fwd", 64 * 2048, 256, 4000),
               _k("linear_2048x2048_fwd", 64 * 2048, 256, 110000), _k("relu_fwd", 64 * 2048, 256, 4000),
               _k("linear_2048x1024_fwd", 64 * 1024, 256, 110000)]
    toy_rest = [_k("sum_loss", 64, 64, 5000),
                _k("linear_2048x1024_bwd_data", 64 * 2048, 256, 110000),
                _k("linear_2048x1024_bwd_weight", 2048 * 1024, 256, 8000),
                _k("relu_bwd", 64 * 2048, 256, 4000),
                _k("linear_2048x2048_bwd_data", 64 * 2048, 256, 110000),
                _k("linear_2048x2048_bwd_weight", 2048 * 2048, 256, 8000),
                _k("relu_bwd", 64 * 2048, 256, 4000),
                _k("linear_1024x2048_bwd_weight", 1024 * 2048, 256, 8000),
                _k("sgd_update", 2048 * 1024, 256, 3000), _k("sgd_update", 2048 * 2048, 256, 3000),
                _k("sgd_update", 1024 * 2048, 256, 3000)]
    gemm = [_k("sgemm_2048", 1024 * 256, 256, 700000)]
    return {
        "cnn": {"online": cnn_req, "offline": cnn_it, "rate_hz": 20.0, "arrival": "poisson"},
        "transformer": {"online": tr_req, "offline": tr_it, "rate_hz": 20.0, "arrival": "poisson"},
        "toy-online": {"online": toy_on, "offline": toy_on, "rate_hz": 2.0, "arrival": "fixed"},
        "toy-offline": {"online": toy_fwd, "offline": toy_fwd + toy_rest, "rate_hz": 2.0, "arrival": "fixed"},
        "gemm2048": {"online": gemm, "offline": gemm, "rate_hz": 10.0, "arrival": "poisson"},
    }


# Mirror of sim/workloads/presets.cpp: (kernel name, work-items, workgroup size, workgroup cost ns).
PRESETS = _build_presets()


def preset_kernels(preset, role):
    """The kernels of one online request (role "online") or offline iteration ("offline")."""
    if preset not in PRESETS:
        raise KeyError(f"unknown preset {preset!r} (known: {', '.join(PRESETS)})")
    return [kernel(*k) for k in PRESETS[preset][role]]


def scaled(kernels, factor, suffix=""):
    """The same kernels, each `factor` times longer (the offline-kernel-length sweep)."""
    return [dict(k, name=k["name"] + suffix, duration_us=round(k["duration_us"] * factor, 3)) for k in kernels]


def total_us(kernels):
    return sum(k["duration_us"] for k in kernels)


# ---- the user's matmul two-model case -------------------------------------------------------------
# Their measured table (their XSched Lv1 test log, MI308X, 60 s).
MATMUL_MEASURED = {
    "high_alone": {"online_p50_ms": 6.36, "online_p99_ms": 6.40},
    "low_alone": {"offline_iterations_per_s": 3.88},
    "none": {"online_p50_ms": 24.82, "online_p99_ms": 29.63, "offline_iterations_per_s": 3.16},
    "throttle": {"online_p50_ms": 17.45, "online_p99_ms": 24.55, "offline_iterations_per_s": 2.90},
}


def matmul_two_model():
    """(high-priority request, low-priority iteration) calibrated to the measured alone numbers.

    The notes give neither matrix size; a 4096² fp32 GEMM prices at 6.7 ms on the MI308X roofline
    (2·4096³ flops at 0.7 × 256 flops/CU/clock × 80 CUs × 1.42 GHz), so one such GEMM, scaled to the
    measured 6.36 ms, is the high-priority request; the low-priority iteration is five 8192² GEMMs
    scaled to the measured 1/3.88 s. Their contention numbers are the model's prediction."""
    # 64×64 tiles of 256 work-items: 4096 workgroups (4096²) and 16,384 (8192²) on 640 slots.
    high = [dict(kernel("sgemm_4096", 4096 * 256, 256, 1), duration_us=6360.0)]
    low_it_us = 1e6 / MATMUL_MEASURED["low_alone"]["offline_iterations_per_s"]
    low = [dict(kernel("sgemm_8192", 16384 * 256, 256, 1), duration_us=round(low_it_us / 5, 3)) for _ in range(5)]
    return high, low


# ---- torch_mode traces ---------------------------------------------------------------------------
TRACES = {
    "resnet18-b1-infer": "ResNet-18 batch-1 inference (one request)",
    "resnet50-b256-train": "ResNet-50 batch-256 training, SGD (one iteration)",
    "llama-1b-finetune": "Llama-3.2-1B-shaped full fine-tuning, AdamW, 4 x 1024 tokens (one iteration)",
}


def trace_kernels(path, geometry=GEOMETRY):
    """A torch_mode trace (JSON Lines) as the engine's kernels, in the order the GPU ran them.

    duration = end_us − start_us as recorded alone; CUs from the grid and workgroup."""
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
                grid = math.prod(r["grid"])
                wg = math.prod(r["workgroup"])
                dur = float(r["end_us"]) - float(r["start_us"])
            except (ValueError, KeyError, TypeError) as e:
                raise ValueError(f"{path}:{n}: not a torch_mode trace record ({e})") from None
            cus = min(geometry["num_xcc"] * geometry["cus_per_xcc"], max(1, math.ceil(grid / wg)))
            out.append((float(r["start_us"]), {"name": r["name"], "duration_us": round(max(dur, 0.001), 3),
                                               "cus": cus}))
    if not out:
        raise ValueError(f"{path}: no kernel records")
    out.sort(key=lambda t: t[0])
    return [k for _, k in out]


def record_trace(name, out_path, kfdsim, env=None, timeout_s=900):
    """Record trace `name` under `kfdsim run` (once; an existing non-empty file is reused)."""
    if os.path.exists(out_path) and os.path.getsize(out_path) > 0:
        return out_path
    if name not in TRACES:
        raise KeyError(f"unknown trace {name!r} (known: {', '.join(TRACES)})")
    tmp = out_path + ".part"
    if os.path.exists(tmp):
        os.unlink(tmp)
    cmd = [kfdsim, "run", "--profile", "mi308x", "--hardware", "gpu", "--",
           "/usr/bin/python3", "-m", "gpreempt.eval.record", name, tmp]
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout_s)
    if p.returncode != 0 or not os.path.exists(tmp):
        raise RuntimeError(f"recording trace {name} failed (exit {p.returncode}): {' '.join(cmd)}\n"
                           + p.stderr[-2000:])
    without_host_gaps(tmp, out_path)
    os.unlink(tmp)
    return out_path


def without_host_gaps(src, dst):
    """Copy a trace with every kernel's submit_us moved no later than the previous kernel's end.

    gpreempt-des replays a kernel submitted after its predecessor finished as one the host waited
    for, with the gap as host time. Recorded on a shared, loaded machine those gaps measure the
    recorder's scheduling delays (30 ms gaps seen on the 2-core development machine), not the
    model's: the replay keeps the kernels, their order, grids and durations, and drops host time."""
    recs = [json.loads(line) for line in open(src) if line.strip()]
    recs.sort(key=lambda r: r["start_us"])
    prev_end = None
    with open(dst, "w") as f:
        for r in recs:
            if prev_end is not None and r["submit_us"] > prev_end:
                r["submit_us"] = prev_end
            prev_end = r["end_us"]
            f.write(json.dumps(r) + "\n")


def python_env():
    """The environment for a child Python that must import this very gpreempt package."""
    env = dict(os.environ)
    pkg_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = pkg_parent + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    return env

