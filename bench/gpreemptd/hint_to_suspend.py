#!/usr/bin/env python3
"""gpreemptd's added latency from a hint to the SUSPEND ioctl (issue 14 target: p99 <= 50 us), on the
simulated machine.

One offline workload (GPREEMPT_CLASS=offline) and one online hint client (tests' gpreemptd_test_peer,
GPREEMPT_CLASS=online, one queue) share a simulated MI308X. The client sends N begin/end pairs, each
begin after the previous suspension has been resumed, so every begin makes the daemon decide a
suspend. The daemon measures, for each suspend a hint caused, the time from reading the hint's bytes
off the socket to the SUSPEND_QUEUES ioctl starting on the control thread (status document:
daemon.hint_to_suspend_us, histogram bucket bounds ~9 % apart). That interval is the daemon's own:
event loop, scheduler decision, hand-off to the control thread, snapshot check. The same interval is
printed by hop (daemon.hint_to_suspend_hops_us): decide (socket read to the action handed to the
control thread), handoff (to the control thread starting it), prepare (to the ioctl starting).
The daemon runs with the demo's classes (the online class takes hints only); --realtime N puts its
event loop and control thread under SCHED_FIFO ([daemon] realtime_priority).

  python3 bench/gpreemptd/hint_to_suspend.py --build build --requests 1000 [--realtime 10]
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def ask(sock, op):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(sock)
        s.sendall((json.dumps({"v": 1, "seq": 1, "op": op}) + "\n").encode())
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            data += chunk
    return json.loads(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="the build directory (bin/, lib/)")
    ap.add_argument("--requests", type=int, default=1000, help="begin/end pairs (>= 1000 for a p99)")
    ap.add_argument("--request-ms", type=float, default=2.0, help="how long each request stays open")
    ap.add_argument("--gap-ms", type=float, default=8.0, help="pause after each end (> the 2 ms idle hysteresis)")
    ap.add_argument("--nice", type=int, default=-10,
                    help="gpreemptd's niceness (default -10, as deploy/systemd/gpreemptd.service runs it; "
                         "0 for a plain child)")
    ap.add_argument("--realtime", type=int, default=0, metavar="PRIORITY",
                    help="[daemon] realtime_priority: run gpreemptd's event loop and control thread under "
                         "SCHED_FIFO at this priority (1-99; needs CAP_SYS_NICE); 0 (default): normal policy")
    ap.add_argument("--log-level", default="warn", help="gpreemptd's --log-level (its log goes to stderr)")
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    a = ap.parse_args()
    # SIGTERM ends the run through the cleanup below (no simulated machine left behind).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    build = Path(a.build).resolve()
    bin_ = build / "bin"
    machine = tempfile.mkdtemp(prefix="gpreemptd-bench-")
    subprocess.run([bin_ / "kfdsim", "--dir", machine, "start"], check=True, stdout=subprocess.DEVNULL)
    env = dict(os.environ, LD_PRELOAD=str(build / "lib" / "libkfdshim.so"), KFDSIM_DIR=machine)
    sock = machine + "/gpreemptd.sock"
    procs = []
    try:
        offline = subprocess.Popen([bin_ / "gpreempt-workload", "offline", "--preset", "cnn", "--duration", "3600"],
                                   env=dict(env, GPREEMPT_CLASS="offline"), stdout=subprocess.DEVNULL)
        procs.append(offline)
        # The demo's classes: the online class takes hints only (the built-in one also polls its
        # queues, whose timer would add wakeups to the daemon's loop).
        config = machine + "/gpreemptd.toml"
        with open(config, "w") as f:
            f.write(f'[daemon]\nrealtime_priority = {a.realtime}\n\n'
                    '[[class]]\nname = "online"\npriority = 10\nmatch = { uid = ' + str(os.getuid()) + ', env = "GPREEMPT_CLASS=online" }\n'
                    'trigger = "hint"\n\n[[class]]\nname = "offline"\npriority = 0\n'
                    'match = { env = "GPREEMPT_CLASS=offline" }\n')
        nice = ["nice", "-n", str(a.nice)] if a.nice else []
        daemon = subprocess.Popen(nice + [bin_ / "gpreemptd", "--config", config, "--socket", sock, "--metrics", "",
                                   "--log-level", a.log_level], env=env)
        procs.append(daemon)
        peer = subprocess.Popen([bin_ / "gpreemptd_test_peer"], env=dict(env, GPREEMPT_CLASS="online",
                                                                          GPREEMPT_SOCKET=sock),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        procs.append(peer)

        def cmd(line):
            peer.stdin.write(line + "\n")
            return peer.stdout.readline().strip()

        assert cmd("queue").startswith("ok"), "the peer could not create a queue"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                doc = ask(sock, "status")["result"]
                classes = {p["pid"]: p["class"] for g in doc["gpus"] for p in g["processes"]}
                if classes.get(offline.pid) == "offline" and classes.get(peer.pid) == "online":
                    break
            except OSError:
                pass
            time.sleep(0.05)
        else:
            sys.exit("gpreemptd did not classify the workloads in 30 s")
        assert cmd("connect") == "ok"
        for i in range(1, a.requests + 1):
            reply = cmd(f"begin {i}")
            assert json.loads(reply)["ok"], f"begin {i}: {reply}"
            time.sleep(a.request_ms / 1000)
            reply = cmd(f"end {i}")
            assert json.loads(reply)["ok"], f"end {i}: {reply}"
            time.sleep(a.gap_ms / 1000)
        doc = ask(sock, "status")["result"]
        h = doc["daemon"]["hint_to_suspend_us"]
        gpu = doc["gpus"][0]
        hops = doc["daemon"].get("hint_to_suspend_hops_us", {})
        result = {"requests": a.requests, "hinted_suspends": h["count"], "hint_to_suspend_us": h,
                  "hops_us": hops, "daemon_nice": a.nice, "daemon_realtime_priority": a.realtime, "suspensions_total": gpu["suspensions_total"],
                  "load_average": os.getloadavg()}
        if a.json:
            print(json.dumps(result, indent=2))
        else:
            print(f"{a.requests} hints, {h['count']} suspends caused by a hint; hint read -> SUSPEND ioctl: "
                  f"p50 {h['p50']} us, p99 {h['p99']} us, max {h['max']} us"
                  + ("" if h["count"] >= 1000 else " (fewer than 1000 samples: the p99 is not meaningful)"))
            for name, x in hops.items():
                print(f"  {name:8} p50 {x['p50']} us, p99 {x['p99']} us, max {x['max']} us")
            print("  gpreemptd at nice %d, realtime priority %d; load average %.2f %.2f %.2f"
                  % ((a.nice, a.realtime) + result["load_average"]))
    except BaseException:
        # What the simulated machine saw (a daemon that lost its clients, a crash).
        states = ", ".join(f"{Path(str(p.args[0])).name} pid {p.pid} {'alive' if p.poll() is None else f'exited {p.returncode}'}"
                           for p in procs)
        print(f"run failed; {states}; load average %.2f %.2f %.2f" % os.getloadavg(), file=sys.stderr)
        log = Path(machine) / "kfdsimd.log"
        if log.exists():
            print("kfdsimd.log (last lines):\n" + "\n".join(log.read_text(errors="replace").splitlines()[-15:]),
                  file=sys.stderr)
        raise
    finally:
        for p in reversed(procs):
            p.terminate()
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
        subprocess.run([bin_ / "kfdsim", "--dir", machine, "stop"], stdout=subprocess.DEVNULL)
        shutil.rmtree(machine, ignore_errors=True)


if __name__ == "__main__":
    main()
