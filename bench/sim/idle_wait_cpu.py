#!/usr/bin/python3
"""What a ROCr process that waits on a signal costs the host while nothing happens: its own CPU
and kfdsimd's. Runs the real ROCr (Debian's ROCm 5.2, tests/rocm/hsa_probe.py --hold) under
`kfdsim run`, lets its main thread sleep in hsa_signal_wait_scacquire (HSA_WAIT_STATE_BLOCKED: ROCr
waits in hsaKmtWaitOnEvent, i.e. AMDKFD_IOC_WAIT_EVENTS with a timeout) on a signal nobody
signals, and reads both processes' utime + stime from /proc/PID/stat over SECONDS. Prints one line
per run, then the medians.

    bench/sim/idle_wait_cpu.py [BUILD_DIR] [RUNS] [SECONDS] [PROFILE]

Defaults: build 3 10 mi210. BUILD_DIR needs bin/kfdsim, bin/kfdsimd and lib/libkfdshim.so; pass
the directory of older binaries to measure those.
"""
import os
import statistics
import subprocess
import sys
import time

from sim_procs import daemon_of, descendants, cmdline, machine_dir

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBE = os.path.join(ROOT, "tests", "rocm", "hsa_probe.py")
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime (stat fields 14 and 15)


def one_run(build, seconds, profile):
    run = subprocess.Popen([os.path.join(build, "bin", "kfdsim"), "run", "--profile", profile, "--",
                            "/usr/bin/python3", PROBE, "--hold"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        for line in run.stdout:
            if line.strip() == "holding":
                break
            if "FAIL" in line:
                raise RuntimeError("hsa_probe: " + line.strip())
        else:
            raise RuntimeError("hsa_probe ended before holding")
        probe = next(p for p in descendants(run.pid) if PROBE.encode() in cmdline(p))
        daemon = daemon_of(machine_dir(probe))
        if daemon is None:
            raise RuntimeError("no kfdsimd found for " + machine_dir(probe))
        # A wait longer than the measurement on a signal nobody signals.
        run.stdin.write(f"wait {int((seconds + 30) * 1000)}\n")
        run.stdin.flush()
        time.sleep(1)  # ROCr's busy-wait phase before it blocks in the kernel is not "idle"
        p0, d0, t0 = cpu_seconds(probe), cpu_seconds(daemon), time.monotonic()
        time.sleep(seconds)
        p1, d1, t1 = cpu_seconds(probe), cpu_seconds(daemon), time.monotonic()
        wall = t1 - t0
        return {"probe_pct": 100 * (p1 - p0) / wall, "kfdsimd_pct": 100 * (d1 - d0) / wall,
                "load": os.getloadavg()[0]}
    finally:
        run.terminate()
        try:
            run.wait(timeout=30)
        except subprocess.TimeoutExpired:
            run.kill()
            run.wait()


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 10
    profile = sys.argv[4] if len(sys.argv) > 4 else "mi210"
    print(f"ROCr (hsa_probe.py --hold) waiting on an unsignaled signal, {seconds:g} s x {runs}, "
          f"profile {profile}, binaries of {build}")
    rows = []
    for i in range(runs):
        r = one_run(build, seconds, profile)
        rows.append(r)
        print(f"run {i + 1}: ROCr process {r['probe_pct']:.2f}% of a core, kfdsimd "
              f"{r['kfdsimd_pct']:.2f}%, load {r['load']:.2f}", flush=True)
    print(f"median: ROCr process {statistics.median(r['probe_pct'] for r in rows):.2f}%, kfdsimd "
          f"{statistics.median(r['kfdsimd_pct'] for r in rows):.2f}%")


if __name__ == "__main__":
    main()
