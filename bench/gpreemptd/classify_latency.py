#!/usr/bin/env python3
"""How fast gpreemptd finds, classifies and forgets GPU processes (issue 14: "New GPU processes are
found continuously and classified within 100 ms; exits are handled"), on a simulated machine.

N short-lived GPU processes (gpreemptd_bench_blip: open /dev/kfd, create one queue, stay HOLD ms,
exit) run CONCURRENCY at a time on two simulated GPUs, in four kinds taken in turn: matched by
command line (the issue's minimal config, class online with the transparent trigger, whose `*serve*`
is narrowed to `gpu-blip * serve *`: a class covers process trees, and this script's own command
line, the ancestor of every blip, carries its checkout path, which may itself contain "serve"), by
environment (GPREEMPT_CLASS=offline and =batch) and by nothing (left alone). Each process records
the wall-clock time just before it opens /dev/kfd, just after its queue exists and just before it
closes; gpreemptd's log (debug level) records when it classified the process, when it learned the
process's GPUs (when that came after the class: a pass hands the classes of its new processes over
before it reads their queues, and a queue may also be created after the process is listed) and when
it handled the exit. From them, per process:

  open -> classified          /dev/kfd opened until the daemon put the process in its class
  queue -> known on its GPU   queue created until the daemon's scheduler knew class and GPU
  close -> exit handled       the process closing the device until the daemon dropped it

and, per discovery pass that found new processes (the daemon's `discovery pass:` debug lines): its
sysfs reads (on the simulator each is a round trip to kfdsimd), its duration, and how long after
its start the new processes' classes were handed to the loop.

Invariants (exit 1 when one fails): every process classified, in the class its kind expects; every
exit handled; no bench process left in the status document; the daemon still answers.
Timings are figures, never a pass/fail criterion. The log's resolution is 1 ms (truncated).

  nice -n 10 python3 bench/gpreemptd/classify_latency.py --build build --processes 1000
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from daemon_bench import BenchError, Daemon, SimMachine, SysfsProbe, load_average, summary_ms  # noqa: E402

CONFIG = """\
# classify_latency.py: the issue's minimal config, plus a third class and unmatched processes.
# `*serve*` narrowed to the blip's own command line: the bench's command line (an ancestor of every
# blip) names its checkout path, and a path such as .../observer/... would make all of them online.
[[class]]
name = "online"
priority = 10
match = { uid = %d, cmdline = "gpu-blip * serve *" }
trigger = "transparent"

[[class]]
name = "batch"
priority = 5
match = { uid = %d, env = "GPREEMPT_CLASS=batch" }

[[class]]
name = "offline"
priority = 0
match = { env = "GPREEMPT_CLASS=offline" }
""" % (os.getuid(), os.getuid())  # a preempting class names a uid (docs/security.md)

# kind -> (the class the daemon must give it, extra argv, GPREEMPT_CLASS)
KINDS = {
    "cmdline": ("online", ["serve", "--model", "blip"], None),
    "env-offline": ("offline", ["train"], "offline"),
    "env-batch": ("batch", ["batch-job"], "batch"),
    "unmatched": (None, ["other"], None),
}


# gpreemptd's discovery worker, at debug level, for each pass that looked at a process.
PASS_LINE = re.compile(r"discovery pass: (\d+) listed, (\d+) new, (\d+) revisited, (\d+) sysfs reads, "
                       r"([\d.]+) ms; new processes read by ([\d.]+) ms, their classes handed over at "
                       r"([\d.]+) ms")


def pass_costs(events):
    """Where the discovery passes that found new processes spent their time: their sysfs reads,
    their duration, and when in the pass the new processes' classes were handed to the loop."""
    reads, total, handed = [], [], []
    for _, _, kind, data in events:
        m = PASS_LINE.match(data) if kind is None else None
        if not m or int(m.group(2)) == 0:
            continue
        reads.append(int(m.group(4)))
        total.append(float(m.group(5)) / 1e3)
        handed.append(float(m.group(7)) / 1e3)
    reads.sort()
    return {"passes": len(reads),
            "sysfs_reads_p50_max": [reads[len(reads) // 2], reads[-1]] if reads else None,
            "duration_ms": summary_ms(total), "classes_handed_over_ms": summary_ms(handed)}


def run(a):
    # Checked before the machine starts: an error between its start and the try below would leave
    # its persistent kfdsimd running.
    blip = Path(a.build).resolve() / "bin" / "gpreemptd_bench_blip"
    if not blip.exists():
        raise BenchError(f"{blip} is missing: build the target gpreemptd_bench_blip")
    machine = SimMachine(a.build, gpus=2, keep=a.keep, nice=a.daemon_nice)
    daemon = None
    rng = random.Random(a.seed)
    load_before = load_average()
    try:
        daemon = Daemon(machine, CONFIG)
        probe = SysfsProbe(machine)
        res_before = daemon.resources()
        running = {}  # pid -> (Popen, kind)
        results = []  # dicts: pid, kind, gpu, times
        failures = []
        started = 0
        kinds = list(KINDS)
        t0 = time.monotonic()
        while started < a.processes or running:
            while started < a.processes and len(running) < a.concurrency:
                kind = kinds[started % len(kinds)]
                gpu = machine.gpu_ids[(started // len(kinds)) % len(machine.gpu_ids)]
                expected, extra, env_class = KINDS[kind]
                env = dict(machine.env, SIMRT_GPU_ID=str(gpu))
                if "GPREEMPT_SANITIZER_PRELOAD" in os.environ:
                    # gpreemptd traces the processes of the classes it may suspend, and LeakSanitizer
                    # aborts in a traced process: leak checks stay on for the daemon, off for these.
                    env["ASAN_OPTIONS"] = os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
                if env_class:
                    env["GPREEMPT_CLASS"] = env_class
                hold = rng.randint(a.hold_ms[0], a.hold_ms[1])
                # argv[0] is a bare name, so the online glob sees no build path.
                p = subprocess.Popen(["gpu-blip", str(hold), *extra], executable=str(blip), env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                running[p.pid] = (p, kind, gpu)
                started += 1
            pid, status = os.waitpid(-1, 0)
            if pid == daemon.pid:
                daemon.proc.returncode = os.waitstatus_to_exitcode(status)
                raise BenchError(f"gpreemptd died (exit {daemon.proc.returncode}); see {daemon.log_path}")
            if pid not in running:
                continue  # the probe, reaped by its own wait later
            p, kind, gpu = running.pop(pid)
            p.returncode = os.waitstatus_to_exitcode(status)
            out, err = p.stdout.read(), p.stderr.read()
            p.stdout.close()
            p.stderr.close()
            if p.returncode != 0:
                failures.append(f"process {pid} ({kind}) exited {p.returncode}: {err.strip()}")
                continue
            r = json.loads(out)
            r.update(kind=kind, gpu=gpu)
            results.append(r)
        elapsed = time.monotonic() - t0
        sysfs_lookup = probe.stop()
        # Exits are handled within a scan or two; give the last ones that long, then look.
        time.sleep(0.5)
        doc = daemon.status()
        res_after = daemon.resources()
        load_after = load_average()
        ours = {r["pid"] for r in results}
        left = sorted({p["pid"] for g in doc["gpus"] for p in g["processes"]} & ours)
        rc = daemon.stop()
        events = daemon.log_events()
    finally:
        if daemon and daemon.proc.poll() is None:
            daemon.stop()
        machine.close()

    by_pid = {}
    for t, level, kind, data in events:
        if kind in ("classified", "unclassified", "gpus", "exited"):
            by_pid.setdefault(data["key"][0], []).append((t, kind, data))
    violations = list(failures)
    if rc != 0:
        violations.append(f"gpreemptd exited {rc} on SIGTERM")
    if left:
        violations.append(f"{len(left)} exited processes still in the status document: {left[:10]}")
    open_to_class, queue_to_known, close_to_exit, open_to_queue = [], [], [], []
    missed, never_seen = [], []
    classified_before_gpu = 0
    for r in results:
        evs = by_pid.get(r["pid"], [])
        r["daemon_log"] = [(round(t, 3), k, d.get("class", d.get("gpus"))) for t, k, d in evs]
        cls = [e for e in evs if e[1] in ("classified", "unclassified")]
        open_to_queue.append(r["queue_s"] - r["open_s"])
        keys = {e[2]["key"] for e in evs}
        if len(keys) > 1:
            violations.append(f"pid {r['pid']} appears as several processes {sorted(keys)} (pid reuse?)")
            continue
        lifetime_ms = (r["close_s"] - r["open_s"]) * 1e3
        if not cls or cls[0][0] >= r["close_s"]:
            # Not classified while it lived: the daemon did not scan during its life (a loaded
            # machine), or first saw it exiting (then /proc/PID/environ may already be unreadable
            # and its class says nothing). A miss of the 100 ms target, not a broken invariant,
            # unless it lived long enough to be sure (--strict).
            missed.append(r["pid"])
            if not evs:
                never_seen.append(r["pid"])
            if a.strict:
                violations.append(f"process {r['pid']} ({r['kind']}) was not classified in the "
                                  f"{lifetime_ms:.0f} ms it lived")
        else:
            t_class, _, data = cls[0]
            if data["class"] != KINDS[r["kind"]][0]:
                violations.append(f"process {r['pid']} ({r['kind']}) is class {data['class']}, "
                                  f"expected {KINDS[r['kind']][0]}")
            open_to_class.append(t_class - r["open_s"])
            gpus = [e for e in evs if e[1] == "gpus" and e[2]["gpus"]]
            if gpus:  # the GPU became known after the class (a later delivery)
                classified_before_gpu += 1
                if r["gpu"] not in gpus[0][2]["gpus"]:
                    violations.append(f"process {r['pid']} is on GPU {r['gpu']}, the daemon says "
                                      f"{gpus[0][2]['gpus']}")
                queue_to_known.append(gpus[0][0] - r["queue_s"])
            else:
                queue_to_known.append(t_class - r["queue_s"])
        if not evs:
            continue  # never seen: there is no exit to handle
        ex = [e for e in evs if e[1] == "exited"]
        if not ex:
            violations.append(f"the exit of process {r['pid']} ({r['kind']}) was not handled")
        else:
            close_to_exit.append(ex[0][0] - r["close_s"])
    if len(results) < a.processes:
        violations.append(f"only {len(results)} of {a.processes} processes ran")

    result = {
        "processes": a.processes, "completed": len(results), "concurrency": a.concurrency,
        "hold_ms": a.hold_ms, "elapsed_s": round(elapsed, 1),
        "open_to_classified_ms": summary_ms(open_to_class),
        "queue_to_known_on_gpu_ms": summary_ms(queue_to_known),
        "close_to_exit_handled_ms": summary_ms(close_to_exit),
        "open_to_queue_ms": summary_ms(open_to_queue),
        "sim_sysfs_lookup_ms": sysfs_lookup,
        "passes_with_new_processes": pass_costs(events),
        "not_classified_while_alive": len(missed),
        "never_seen": len(never_seen),
        "classified_before_gpu_known": classified_before_gpu,
        "over_100ms": sum(1 for x in open_to_class if x > 0.1),
        "exits_handled": len(close_to_exit),
        "left_in_status": len(left),
        "daemon_cpu_s": round(res_after["cpu_s"] - res_before["cpu_s"], 2),
        "daemon_rss_kb": [res_before["rss_kb"], res_after["rss_kb"]],
        "daemon_fds": [res_before["fds"], res_after["fds"]],
        "load_average_before": load_before, "load_average_after": load_after,
        "violations": violations,
    }
    if a.keep:
        with open(os.path.join(machine.dir, "samples.json"), "w") as f:
            json.dump(results, f, indent=1)
    return result


def print_result(r):
    def line(name, s):
        return f"  {name:28} n={s['count']}  p50 {s['p50']} ms  p99 {s['p99']} ms  max {s['max']} ms"
    print(f"{r['completed']}/{r['processes']} GPU processes, {r['concurrency']} at a time, "
          f"each {r['hold_ms'][0]}-{r['hold_ms'][1]} ms, in {r['elapsed_s']} s "
          f"(load average before {r['load_average_before']}, after {r['load_average_after']})")
    print(line("open -> classified", r["open_to_classified_ms"]))
    print(line("queue -> known on its GPU", r["queue_to_known_on_gpu_ms"]))
    print(line("close -> exit handled", r["close_to_exit_handled_ms"]))
    print(line("(process) open -> queue", r["open_to_queue_ms"]))
    print(line("(simulator) one sysfs lookup", r["sim_sysfs_lookup_ms"]))
    pc = r["passes_with_new_processes"]
    if pc["passes"]:
        print(f"  discovery passes that found new processes: {pc['passes']}, sysfs reads each p50 "
              f"{pc['sysfs_reads_p50_max'][0]} max {pc['sysfs_reads_p50_max'][1]}")
        print(line("  such a pass, start -> end", pc["duration_ms"]))
        print(line("  start -> classes handed over", pc["classes_handed_over_ms"]))
    print(f"  not classified while alive: {r['not_classified_while_alive']} (never seen at all: {r['never_seen']}; "
          f"no exit to handle); "
          f"classified over 100 ms after open: {r['over_100ms']}; classified before their GPU was known "
          f"(a later delivery): {r['classified_before_gpu_known']}")
    print(f"  exits handled {r['exits_handled']}, left in the status document {r['left_in_status']}; "
          f"daemon CPU {r['daemon_cpu_s']} s, RSS {r['daemon_rss_kb'][0]} -> {r['daemon_rss_kb'][1]} kB, "
          f"fds {r['daemon_fds'][0]} -> {r['daemon_fds'][1]}")
    if r["completed"] < 1000:
        print("  (fewer than 1000 samples: the p99 is not meaningful)")
    for v in r["violations"][:20]:
        print(f"VIOLATED: {v}")
    if len(r["violations"]) > 20:
        print(f"VIOLATED: ... and {len(r['violations']) - 20} more")
    print("ok: every invariant held" if not r["violations"] else f"{len(r['violations'])} invariant(s) violated")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="the build directory (bin/, lib/)")
    ap.add_argument("--processes", type=int, default=1000, help="GPU processes to start (>= 1000 for a p99)")
    ap.add_argument("--concurrency", type=int, default=8, help="processes alive at once")
    ap.add_argument("--hold-ms", type=int, nargs=2, default=[150, 300], metavar=("MIN", "MAX"),
                    help="each process lives a uniform random time in [MIN, MAX] ms after creating its queue")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--daemon-nice", type=int, metavar="N",
                    help="run gpreemptd and kfdsimd at nice N (e.g. 0 under `nice -n 10`: a few %% of a core), "
                         "so the figures are the daemon's rather than a loaded machine's (default: inherit)")
    ap.add_argument("--strict", action="store_true",
                    help="a process never classified while it lived is a violation (use with long --hold-ms)")
    ap.add_argument("--keep", action="store_true", help="keep the machine directory (the daemon's log)")
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    a = ap.parse_args()
    if a.processes < 1 or a.concurrency < 1 or not 0 <= a.hold_ms[0] <= a.hold_ms[1]:
        ap.error("--processes and --concurrency must be >= 1 and --hold-ms MIN <= MAX")
    try:
        r = run(a)
    except BenchError as e:
        print(f"classify_latency: {e}", file=sys.stderr)
        return 1
    if a.json:
        print(json.dumps(r, indent=2))
    else:
        print_result(r)
    return 1 if r["violations"] else 0


if __name__ == "__main__":
    sys.exit(main())
