#!/usr/bin/env python3
"""How long gpreemptd takes to answer control ops while its process discovery is slow.

On the simulator every sysfs lookup waits for kfdsimd's GPU-model tick; run kfdsimd and the
workloads at a high nice value (--sim-nice, default 19) on a busy machine and each lookup takes
milliseconds. N workloads (gpreempt-workload offline --preset cnn; half GPREEMPT_CLASS=offline,
half =online) run on one simulated GPU; gpreemptd runs at the caller's priority. For --seconds the
bench alternates `suspend --class offline --for 200ms` and `resume --class offline` on the socket,
one every 20 ms, and reports the time from sending each op to its reply. When discovery's reads
ran on the event loop (before the discovery worker), an op waited for the scan in progress; the
test suite's `gpreempt ctl` gave up after its 5 s timeout under ASan.

  nice -n 10 python3 bench/gpreemptd/ctl_latency.py --build build

Exit 1 when an op is refused or unanswered within 30 s. Timings are figures, not pass/fail."""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from daemon_bench import BenchError, Daemon, SimMachine, _set_nice, ask, load_average, summary_ms  # noqa: E402

CONFIG = ('[[class]]\nname = "online"\npriority = 10\nmatch = { uid = ' + str(os.getuid()) + ', env = "GPREEMPT_CLASS=online" }\ntrigger = "hint"\n'
          '[[class]]\nname = "offline"\npriority = 0\nmatch = { env = "GPREEMPT_CLASS=offline" }\n'
          '[policy]\nmax_suspension_ms = 600000\nstarvation_window_ms = 1000000\nstarvation_min_run_ms = 1\n')


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="the build directory (bin/, lib/)")
    ap.add_argument("--workloads", type=int, default=2, help="GPU workloads on the simulated GPU")
    ap.add_argument("--seconds", type=float, default=15, help="how long to send control ops")
    ap.add_argument("--sim-nice", type=int, default=19, help="nice value of kfdsimd and the workloads")
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    a = ap.parse_args()
    if a.workloads < 1 or a.seconds <= 0:
        ap.error("--workloads must be >= 1 and --seconds > 0")
    m = SimMachine(a.build, gpus=1, nice=a.sim_nice)
    m.preexec = None  # gpreemptd at the caller's priority: the figure is discovery's, not its own
    procs, daemon = [], None
    try:
        daemon = Daemon(m, CONFIG, log_level="info")
        for i in range(a.workloads):
            env = dict(m.env, GPREEMPT_CLASS="offline" if i % 2 == 0 else "online")
            procs.append(subprocess.Popen([m.bin / "gpreempt-workload", "offline", "--preset", "cnn", "--duration",
                                           str(int(a.seconds) + 120)], env=env, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL, preexec_fn=_set_nice(a.sim_nice)))
        deadline = time.monotonic() + 60
        while len([p for g in daemon.status().get("gpus", []) for p in g.get("processes", [])]) < a.workloads:
            if time.monotonic() > deadline:
                raise BenchError("the workloads were not all classified within 60 s")
            time.sleep(0.1)
        load_before = load_average()
        latencies, ops = [], 0
        end = time.monotonic() + a.seconds
        while time.monotonic() < end:
            op, fields = (("suspend", {"class": "offline", "for_ms": 200}) if ops % 2 == 0
                          else ("resume", {"class": "offline"}))
            t = time.monotonic()
            r = ask(daemon.sock, op, timeout=30, **fields)
            latencies.append(time.monotonic() - t)
            ops += 1
            if not r.get("ok"):
                raise BenchError(f"{op} refused: {r}")
            time.sleep(0.02)
        result = {"ops": ops, "reply_ms": summary_ms(latencies), "workloads": a.workloads, "sim_nice": a.sim_nice,
                  "load_average": [load_before, load_average()]}
        if a.json:
            print(json.dumps(result))
        else:
            s = result["reply_ms"]
            print(f"{ops} control ops, {a.workloads} workloads, kfdsimd at nice {a.sim_nice}: op -> reply "
                  f"p50 {s['p50']} ms, p99 {s['p99']} ms, max {s['max']} ms (load average {result['load_average']})")
        return 0
    except (BenchError, OSError) as e:
        print(f"ctl_latency: {e}", file=sys.stderr)
        return 1
    finally:
        for p in procs:
            p.kill()
            p.wait()
        if daemon:
            daemon.stop()
        m.close()


if __name__ == "__main__":
    sys.exit(main())
