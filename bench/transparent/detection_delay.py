#!/usr/bin/python3
"""Transparent trigger benchmark on the simulated GPU (docs/transparent.md, "Costs").

For each poll interval, an unmodified online workload (gpreempt-workload online)
runs on a private simulated machine (Poisson arrivals, so that submissions fall at random phases of
the poll timer) and reports every request's start on a FIFO (--notify: the
line is written just before the request's kernels are dispatched, CLOCK_MONOTONIC ns). The
transparent trigger (gpreempt-transparent-probe) watches the workload through debugfs and
process_vm_readv and prints request_started with its own CLOCK_MONOTONIC time. Detection delay =
the first request_started at or after a start line (and before the next one) minus that line's
time. A request submitted while the trigger still has the previous one open is counted as
"already busy" (for the scheduler the process is busy already: nothing to detect); submissions
close together share the first request_started after them; "missed" counts submissions after
which no request_started came at all. CPU cost = the probe's getrusage user+system time over its wall time (% of one core);
"floor" = the same for gpreempt-bench-timer-floor --read (gpreemptd's EventLoop with one periodic timer and one
16-byte process_vm_readv per expiry, nothing else), run right after: what any poller costs on this machine.

Targets (docs/transparent.md): delay <= 2x the poll interval, CPU <= 5 % of one core.

  /usr/bin/python3 bench/transparent/detection_delay.py --build build [--intervals 100,200,500]
      [--requests 1000] [--rate 50] [--json]

Exit codes: 0 ok (figures printed, whether or not targets are met), 1 the run failed, 2 usage.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time


def percentile(sorted_values, q):
    if not sorted_values:
        return None
    k = min(len(sorted_values) - 1, max(0, int(round(q / 100.0 * (len(sorted_values) - 1)))))
    return sorted_values[k]


def run_one(build, machine_dir, interval_us, requests, rate):
    env = dict(os.environ)
    env["LD_PRELOAD"] = os.path.join(build, "lib", "libkfdshim.so")
    env["KFDSIM_DIR"] = machine_dir
    fifo = os.path.join(machine_dir, "notify-%d" % interval_us)
    os.mkfifo(fifo)
    rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    duration = requests / rate + 0.5
    workload = subprocess.Popen(
        [os.path.join(build, "bin", "gpreempt-workload"), "online", "--preset", "toy-online",
         "--duration", str(duration), "--rate", str(rate), "--arrival", "poisson", "--seed", str(interval_us), "--notify", fifo],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    probe = subprocess.Popen(
        [os.path.join(build, "bin", "gpreempt-transparent-probe"), "--pid", str(workload.pid),
         "--interval-us", str(interval_us), "--until-unwatched"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    starts = []
    detections = []
    opened = {}
    busy = []  # [started, finished) of every request the trigger reported
    summary = {}
    watch_from = []

    def read_probe():
        for line in probe.stdout:
            try:
                j = json.loads(line)
            except ValueError:
                continue
            if j.get("event") == "request_started":
                detections.append(j["time_ns"])
                opened[j["request"]] = j["time_ns"]
            elif j.get("event") == "request_finished":
                busy.append((opened.pop(j["request"], j["time_ns"]), j["time_ns"]))
            elif j.get("event") == "watching":
                # Requests submitted before the trigger knew the queues cannot be detected.
                watch_from.append(j["time_ns"] + (0 if j["queues"] else 100_000_000))
            elif j.get("event") == "summary":
                summary.update(j)

    t = threading.Thread(target=read_probe)
    t.start()
    buf = b""
    while workload.poll() is None:
        try:
            chunk = os.read(rfd, 65536)
        except BlockingIOError:
            chunk = b""
        if chunk:
            buf += chunk
        else:
            time.sleep(0.01)
    try:
        buf += os.read(rfd, 1 << 20)
    except BlockingIOError:
        pass
    os.close(rfd)
    for line in buf.decode().splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0] == "start":
            starts.append(int(parts[3]))
    if workload.returncode != 0:
        raise RuntimeError("workload failed: " + workload.stderr.read().decode())
    probe.wait(timeout=30)
    t.join(timeout=30)
    if probe.returncode != 0:
        raise RuntimeError("probe failed: " + probe.stderr.read())

    busy.extend((t, float("inf")) for t in opened.values())
    busy.sort()
    delays = []
    missed = 0
    already_busy = 0
    di = 0
    bi = 0
    detections.sort()
    first = watch_from[0] if watch_from else 0
    starts = [s for s in starts if s >= first]
    for s in starts:
        # Submitted while the trigger still had the previous request open: the process is already
        # busy for the scheduler, so there is nothing to detect.
        while bi < len(busy) and busy[bi][1] <= s:
            bi += 1
        if bi < len(busy) and busy[bi][0] < s:
            already_busy += 1
            continue
        # Submissions close together share the first detection after them.
        while di < len(detections) and detections[di] < s:
            di += 1
        if di < len(detections):
            delays.append(detections[di] - s)
        else:
            missed += 1
    delays.sort()
    us = [d / 1000.0 for d in delays]
    return {
        "interval_us": interval_us,
        "requests": len(starts),
        "detected": len(delays),
        "missed": missed,
        "already_busy": already_busy,
        "delay_us": {
            "p50": percentile(us, 50), "p90": percentile(us, 90), "p99": percentile(us, 99),
            "max": us[-1] if us else None,
            "mean": sum(us) / len(us) if us else None,
        },
        "within_2x_interval_percent": 100.0 * sum(1 for d in us if d <= 2 * interval_us) / len(us) if us else None,
        "cpu_percent_of_one_core": summary.get("cpu_percent_of_one_core"),
        "probe_polls": summary.get("polls"),
        "probe_wall_s": summary.get("wall_s"),
    }


def idle_cost(build, machine_dir, interval_us, seconds=3):
    """CPU of the same poll loop on a process without queues: the timer's wakeups alone."""
    env = dict(os.environ)
    env["LD_PRELOAD"] = os.path.join(build, "lib", "libkfdshim.so")
    env["KFDSIM_DIR"] = machine_dir
    sleeper = subprocess.Popen(["sleep", str(seconds + 5)])
    try:
        r = subprocess.run([os.path.join(build, "bin", "gpreempt-transparent-probe"), "--pid", str(sleeper.pid),
                            "--interval-us", str(interval_us), "--duration", str(seconds)],
                           env=env, capture_output=True, text=True, timeout=seconds + 30)
    finally:
        sleeper.kill()
        sleeper.wait()
    for line in r.stdout.splitlines():
        j = json.loads(line)
        if j.get("event") == "summary":
            return j["cpu_percent_of_one_core"]
    raise RuntimeError("probe on an idle process failed: " + r.stderr)


def floor_cost(build, interval_us, seconds=3):
    """CPU of gpreemptd's EventLoop with one periodic timer doing one 16-byte process_vm_readv per
    expiry (gpreempt-bench-timer-floor --read): what any poller pays here, with nothing of ours."""
    r = subprocess.run([os.path.join(build, "bin", "gpreempt-bench-timer-floor"), "--interval-us", str(interval_us),
                        "--seconds", str(seconds), "--read"], capture_output=True, text=True, timeout=seconds + 30)
    if r.returncode != 0:
        raise RuntimeError("gpreempt-bench-timer-floor failed: " + r.stderr)
    return json.loads(r.stdout)["cpu_percent_of_one_core"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build", help="build directory (bin/, lib/)")
    ap.add_argument("--intervals", default="100,200,500", help="poll intervals in us")
    ap.add_argument("--requests", type=int, default=1000, help="requests per interval (>= 1000 for a p99)")
    ap.add_argument("--rate", type=float, default=50.0, help="requests per second (Poisson arrivals)")
    ap.add_argument("--json", action="store_true")
    try:
        args = ap.parse_args()
        intervals = [int(x) for x in args.intervals.split(",")]
    except (SystemExit, ValueError) as e:
        if isinstance(e, SystemExit) and e.code == 0:
            return 0
        return 2
    build = os.path.abspath(args.build)
    machine_dir = tempfile.mkdtemp(prefix="gp-transparent-bench-")
    kfdsim = os.path.join(build, "bin", "kfdsim")
    try:
        r = subprocess.run([kfdsim, "--dir", machine_dir, "start", "--hardware", "gpu"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print("kfdsim start failed: " + r.stderr, file=sys.stderr)
            return 1
        results = [run_one(build, machine_dir, i, args.requests, args.rate) for i in intervals]
        for r in results:
            r["idle_poll_cpu_percent_of_one_core"] = idle_cost(build, machine_dir, r["interval_us"])
            r["floor_cpu_percent_of_one_core"] = floor_cost(build, r["interval_us"])
        load = os.getloadavg()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        print("detection_delay: %s" % e, file=sys.stderr)
        return 1
    finally:
        subprocess.run([kfdsim, "--dir", machine_dir, "stop"], capture_output=True)
        shutil.rmtree(machine_dir, ignore_errors=True)
    if args.json:
        print(json.dumps({"benchmark": "transparent_detection_delay", "load_average": load, "results": results},
                         indent=2))
        return 0
    print("%-9s %8s %8s %8s %8s %8s %8s %8s %8s %10s %10s %11s" % (
        "interval", "requests", "busy", "missed", "p50 us", "p90 us", "p99 us", "max us", "<=2x %", "cpu %core",
        "idle %core", "floor %core"))
    for r in results:
        d = r["delay_us"]
        print("%-9s %8d %8d %8d %8.1f %8.1f %8.1f %8.1f %8.1f %10.2f %10.2f %11.2f" % (
            "%d us" % r["interval_us"], r["requests"], r["already_busy"], r["missed"], d["p50"], d["p90"], d["p99"], d["max"],
            r["within_2x_interval_percent"], r["cpu_percent_of_one_core"], r["idle_poll_cpu_percent_of_one_core"],
            r["floor_cpu_percent_of_one_core"]))
    print("load average %.2f %.2f %.2f; floor: gpreempt-bench-timer-floor --read (the EventLoop's timer and one "
          "process_vm_readv per poll, nothing else)" % load)
    return 0


if __name__ == "__main__":
    sys.exit(main())
