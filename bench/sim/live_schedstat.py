#!/usr/bin/python3
"""Where a live run's host time goes: one online preset alone under `kfdsim run` (as
bench/sim/live_timing.sh runs it), and per thread of the workload and of kfdsimd the CPU time, the
time spent runnable but waiting for a CPU and the number of times it ran
(/proc/PID/task/TID/schedstat: run ns, run-queue wait ns, slices), over WINDOW seconds from 5 s
into the run, and kfdsimd's GPU-model tick statistics (`kfdsim status --json` -> loop.tick).
Prints the run's latency summary, the load average, the ticks and one line per thread.

    bench/sim/live_schedstat.py [BUILD_DIR] [REQUESTS] [RATE_HZ] [PRESET] [WINDOW_S] [PROFILE]

Defaults: build 1000 20 cnn 40 mi308x (seed 1, --preprocess-us 0, as live_timing.sh's first run).
"""
import json
import os
import subprocess
import sys
import time

from sim_procs import cmdline, daemon_of, descendants, machine_dir


def threads(pid):
    r = {}
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/schedstat") as f:
                run_ns, wait_ns, slices = map(int, f.read().split())
            with open(f"/proc/{pid}/task/{t}/comm") as f:
                r[t] = (run_ns, wait_ns, slices, f.read().strip())
        except OSError:
            pass
    return r


def main():
    a = sys.argv[1:] + [None] * 6
    build = a[0] or "build"
    requests, rate, preset = a[1] or "1000", a[2] or "20", a[3] or "cnn"
    window, profile = float(a[4] or 40), a[5] or "mi308x"
    duration = str(int(int(requests) / float(rate) * 2 + 30))
    run = subprocess.Popen([f"{build}/bin/kfdsim", "run", "--profile", profile, "--",
                            f"{build}/bin/gpreempt-workload", "online", "--preset", preset, "--rate", rate,
                            "--requests", requests, "--duration", duration, "--preprocess-us", "0",
                            "--seed", "1", "--json"], stdout=subprocess.PIPE, text=True)
    time.sleep(5)
    workload = next(p for p in descendants(run.pid) if b"gpreempt-workload" in b" ".join(cmdline(p)))
    directory = machine_dir(workload)
    daemon = daemon_of(directory)
    before = {"workload": threads(workload), "kfdsimd": threads(daemon)}
    t0 = time.monotonic()
    time.sleep(window)
    after = {"workload": threads(workload), "kfdsimd": threads(daemon)}
    t1 = time.monotonic()
    status = subprocess.run([f"{build}/bin/kfdsim", "--dir", directory, "status", "--json"],
                            capture_output=True, text=True)
    loop = json.loads(status.stdout).get("loop", {}) if status.returncode == 0 else {}
    result = json.loads(run.communicate()[0])
    lat = result["latency_ms"]
    print(f"{preset} at {rate} req/s, {lat['count']} requests: p50 {lat['p50']} ms, p99 {lat['p99']} ms, "
          f"max {lat['max']} ms; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    tick = loop.get("tick", {})
    if tick.get("count"):
        print(f"kfdsimd's GPU-model ticks so far: {tick['count']}, mean {tick['total_ns'] / tick['count'] / 1e3:.1f} us, "
              f"longest {tick['max_ns'] / 1e6:.2f} ms (wall time, preemptions included)")
    print(f"per thread over {t1 - t0:.0f} s from 5 s into the run:")
    for name in ("workload", "kfdsimd"):
        for tid, (run_ns, wait_ns, slices, comm) in after[name].items():
            if tid not in before[name]:
                continue
            b = before[name][tid]
            d_run, d_wait, d_n = run_ns - b[0], wait_ns - b[1], slices - b[2]
            if d_n:
                print(f"  {name} {tid} ({comm}): CPU {d_run / 1e6 / (t1 - t0):.1f} ms/s, ran {d_n} times "
                      f"({d_n / (t1 - t0):.0f}/s), waited for a CPU {d_wait / 1e6:.1f} ms in all, "
                      f"{d_wait / d_n / 1e3:.1f} us a time")


if __name__ == "__main__":
    main()
