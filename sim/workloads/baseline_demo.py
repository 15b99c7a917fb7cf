#!/usr/bin/python3
"""Baseline demo on the simulated GPU: online alone, offline alone, both together without any
control. Prints online P50/P95/P99 and offline throughput in one table (or --json), so the
interference that preemption must remove is visible.

  sim/workloads/baseline_demo.py --build build [--online cnn] [--offline gemm2048] [--duration 10]

Each phase runs on a private simulated machine (kfdsim run, hardware model "gpu").
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def run_phase(build, hw_env, commands, duration):
    """Runs the given gpreempt-workload command lines on one machine; returns their JSON results."""
    kfdsim = os.path.join(build, "bin", "kfdsim")
    script = []
    for i, cmd in enumerate(commands):
        script.append(" ".join(cmd) + f" > \"$OUT{i}\" &")
        # The offline job gets going before online requests arrive.
        if i == 0 and len(commands) > 1:
            script.append("sleep 0.5")
    script.append("wait")
    env = dict(os.environ, **hw_env)
    outs = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(len(commands)):
            env[f"OUT{i}"] = os.path.join(tmp, f"out{i}.json")
        proc = subprocess.run([kfdsim, "run", "--hardware", "gpu", "--", "/bin/sh", "-c", "\n".join(script)],
                              env=env, timeout=duration * 3 + 60)
        if proc.returncode != 0:
            sys.exit(f"baseline_demo: phase {commands} failed with exit code {proc.returncode}")
        for i in range(len(commands)):
            with open(env[f"OUT{i}"]) as f:
                outs.append(json.load(f))
    return outs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="build directory (holds bin/kfdsim, bin/gpreempt-workload)")
    ap.add_argument("--online", default="cnn", help="online preset (gpreempt-workload presets)")
    ap.add_argument("--offline", default="gemm2048", help="offline preset")
    ap.add_argument("--duration", type=float, default=10.0, help="seconds per phase")
    ap.add_argument("--json", action="store_true", help="machine-readable result")
    a = ap.parse_args()

    wl = os.path.join(a.build, "bin", "gpreempt-workload")
    online = [wl, "online", "--preset", a.online, "--duration", str(a.duration), "--json"]
    offline = [wl, "offline", "--preset", a.offline, "--duration", str(a.duration + 1), "--json"]
    offline_alone = [wl, "offline", "--preset", a.offline, "--duration", str(a.duration), "--json"]
    hw = {"KFDSIM_HARDWARE": "gpu"}

    rows = []
    (on,) = run_phase(a.build, hw, [online], a.duration)
    rows.append(("online alone", on, None))
    (off,) = run_phase(a.build, hw, [offline_alone], a.duration)
    rows.append(("offline alone", None, off))
    off2, on2 = run_phase(a.build, hw, [offline, online], a.duration)
    rows.append(("both, no control", on2, off2))

    if a.json:
        print(json.dumps({"online_preset": a.online, "offline_preset": a.offline, "duration_s": a.duration,
                          "phases": [{"phase": n, "online": o, "offline": f} for n, o, f in rows]}, indent=2))
        return
    print(f"simulated MI308X, online={a.online}, offline={a.offline}, {a.duration:g} s per phase")
    print(f"{'phase':<18} {'online p50 ms':>14} {'p95 ms':>9} {'p99 ms':>9} {'requests':>9} {'offline it/s':>13}")
    def num(v, fmt):
        return "-" if v is None else format(v, fmt)

    for name, o, f in rows:
        lat = o["latency_ms"] if o else {}
        print(f"{name:<18} {num(lat.get('p50'), '.3f'):>14} {num(lat.get('p95'), '.3f'):>9} "
              f"{num(lat.get('p99'), '.3f'):>9} {num(o and o['requests_completed'], 'd'):>9} "
              f"{num(f and f['iterations_per_s'], '.1f'):>13}")

if __name__ == "__main__":
    main()
