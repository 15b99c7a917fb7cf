#!/usr/bin/env python3
"""A soak of gpreemptd (issue 14: "A 10-minute soak belongs in bench/, not in the suite"): the daemon
on a simulated machine with two GPUs, for DURATION seconds of everything it is for at once, then
invariants that must hold afterwards.

Running all the time:
  * GPU A: an online workload sending hints (gpreempt-workload online --hint, class online);
  * GPU B: an online workload with no hints, found by its command line (`serve-transparent ...`,
    class serving, transparent trigger: the daemon watches its queue pointers);
  * on each GPU, --offline-per-gpu offline training processes (class offline) that start, run
    2-8 s and exit, over and over; one long-lived offline process on each GPU besides
    ("survivors", checked at the end);
  * every few seconds an operator action (`gpreempt ctl suspend --class offline --for 300ms`,
    sometimes on one GPU only, sometimes ended early with `ctl resume`);
  * every ~20 s a SIGHUP reload alternating two valid configs; once an invalid config (must be
    rejected, the running one kept) and then a valid one again;
  * once, half way: an offline process held suspended by the operator is SIGKILLed mid-suspension.

The daemon's resources (VmRSS, threads, open fds, CPU) and the latency of its status answer are
sampled every --sample-interval seconds.

Invariants checked at the end (the program exits 1 when one fails, after printing every one):
  * no queue left suspended: the simulator's own queue list (`kfdsim queues`), the daemon's status
    (suspended_processes 0, no process suspended, nothing in flight);
  * counters consistent: in the daemon's log, for every (GPU, process) the suspends decided equal
    the resumes decided plus the suspensions that ended with the process's exit; the per-GPU
    suspensions_total sum equals the per-class suspensions sum; suspended_s_total stops growing when
    nothing is suspended; reloads and failed_reloads count what was sent;
  * the SIGKILLed process is forgotten; the survivors still run and can still be suspended and
    resumed by an operator command at the end; every workload exited 0 (but the killed one);
  * no leak: open fds and threads back to their level after warm-up, VmRSS slope over the second
    half below --rss-slope-kb-per-min; no error line in the daemon's log;
  * the daemon still answers: every `gpreempt ctl` command gets its reply (the CLI gives up after
    5 s), and SIGTERM ends it with exit 0 and nothing suspended.
A daemon-initiated resume of a process it no longer manages ("orphan") counts as a resume: two
resumes for one suspension break the count.

  nice -n 10 python3 bench/gpreemptd/soak.py --build build --duration 600 --daemon-nice 0
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from daemon_bench import BenchError, Daemon, SimMachine, SysfsProbe, load_average  # noqa: E402

CLASSES = """\
[[class]]
name = "online"
priority = 10
match = { uid = %d, env = "GPREEMPT_CLASS=online" }
trigger = "hint"

[[class]]
name = "serving"
priority = 10
match = { uid = %d, cmdline = "serve-transparent *" }
trigger = "transparent"

[[class]]
name = "offline"
priority = 0
match = { env = "GPREEMPT_CLASS=offline" }
""" % (os.getuid(), os.getuid())  # a preempting class names a uid (docs/security.md)

# Two valid configs that differ in policy knobs only, so a reload really replaces something.
CONFIGS = [
    "# soak.py config A\n[daemon]\npoll_interval_us = 500\n\n" + CLASSES
    + "\n[policy]\nresume_after_idle_ms = 2\nmax_suspension_ms = 500\n",
    "# soak.py config B\n[daemon]\npoll_interval_us = 500\n\n" + CLASSES
    + "\n[policy]\nresume_after_idle_ms = 3\nmax_suspension_ms = 400\nstarvation_min_run_ms = 120\n",
]
INVALID = "# soak.py: an invalid config (the reload must be rejected)\n[[class]]\nname = \"x\"\npriority = \"high\"\n"

# Warnings churn causes by design: a process that exits before the daemon attaches to it.
EXPECTED_WARNINGS = ("cannot attach",)


class Soak:
    def __init__(self, a):
        self.a = a
        self.rng = random.Random(a.seed)
        self.violations = []
        self.notes = []
        self.procs = []  # every workload started: dicts
        self.samples = []
        self.operator = Counter()
        self.reloads_sent = 0
        self.invalid_reloads_sent = 0
        self.kill = None

    # -- processes ------------------------------------------------------------------------------
    def spawn(self, role, args, gpu, cls=None, argv0=None):
        env = dict(self.machine.env, SIMRT_GPU_ID=str(gpu), GPREEMPT_SOCKET=self.daemon.sock)
        if cls:
            env["GPREEMPT_CLASS"] = cls
        exe = str(self.machine.bin / "gpreempt-workload")
        p = subprocess.Popen([argv0 or exe, *args], executable=exe, env=env, stdout=subprocess.DEVNULL,
                             stderr=self.errlog)
        rec = {"role": role, "gpu": gpu, "proc": p, "pid": p.pid, "started": time.monotonic(), "rc": None}
        self.procs.append(rec)
        return rec

    def offline(self, gpu, duration, role="offline"):
        return self.spawn(role, ["offline", "--preset", "toy-offline", "--duration", f"{duration:.1f}"], gpu,
                          cls="offline")

    def reap(self):
        for r in self.procs:
            if r["rc"] is None and r["proc"].poll() is not None:
                r["rc"] = r["proc"].returncode
                r["ended"] = time.monotonic()

    def alive(self, role=None, gpu=None):
        return [r for r in self.procs if r["rc"] is None and (role is None or r["role"] == role)
                and (gpu is None or r["gpu"] == gpu)]

    def ctl(self, *args):
        env = dict(self.machine.env, GPREEMPT_SOCKET=self.daemon.sock)
        env.pop("LD_PRELOAD")
        r = subprocess.run([self.machine.bin / "gpreempt", "ctl", *args], env=env, capture_output=True,
                           text=True, timeout=30)
        if r.returncode != 0:
            self.violations.append(f"`gpreempt ctl {' '.join(args)}` exited {r.returncode}: {r.stderr.strip()}")
        return r

    # -- actions ---------------------------------------------------------------------------------
    def operator_action(self):
        gpu_only = self.rng.random() < 0.3
        args = ["suspend", "--class", "offline", "--for", f"{self.rng.choice([100, 300, 300, 450])}ms"]
        if gpu_only:
            args += ["--gpu", str(self.rng.choice(self.machine.gpu_ids))]
        self.ctl(*args)
        self.operator["suspend" + ("_gpu" if gpu_only else "")] += 1
        if self.rng.random() < 0.25:
            time.sleep(0.05)
            self.ctl("resume", "--class", "offline")
            self.operator["resume"] += 1

    def reload(self, text, valid=True):
        """SIGHUP with `text` as the config file, then wait until the daemon has taken it (signals
        coalesce: a second SIGHUP before the first is handled would be lost)."""
        before = self.daemon.status()["daemon"]
        self.daemon.write_config(text)
        os.kill(self.daemon.pid, signal.SIGHUP)
        if valid:
            self.reloads_sent += 1
        else:
            self.invalid_reloads_sent += 1
        key = "reloads" if valid else "failed_reloads"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.daemon.status()["daemon"][key] > before[key]:
                return
            time.sleep(0.05)
        self.violations.append(f"a SIGHUP with a{' valid' if valid else 'n invalid'} config was not counted "
                               f"in {key} within 30 s")

    def kill_mid_suspension(self):
        """SIGKILL an offline process while the operator holds it suspended."""
        gpu = self.machine.gpu_ids[0]
        victim = self.offline(gpu, 3600, role="victim")
        # Classified within a scan or two, its queue created a little after start.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process_state(victim["pid"]) == "running":
                break
            time.sleep(0.05)
        else:
            self.violations.append(f"the victim {victim['pid']} was not classified within 20 s")
            return
        # Mid-suspension as the simulator sees it (its queue list), not as the status says: the
        # status answer can take longer than the hold lasts on a loaded machine.
        suspended = False
        for _ in range(5):
            self.ctl("suspend", "--pid", str(victim["pid"]), "--for", "450ms")
            t0 = time.monotonic()
            while time.monotonic() - t0 < 1.0 and not suspended:
                suspended = any(q["suspended"] for q in self.machine.kfdsim_json("queues")["queues"]
                                if q["pid"] == victim["pid"])
            if suspended:
                break
        if not suspended:
            self.violations.append(f"the victim {victim['pid']}'s queue was never seen suspended after 5 "
                                   f"`ctl suspend --pid` of 450 ms")
            return
        victim["proc"].kill()
        killed_at = time.monotonic()
        victim["proc"].wait()
        gone = None
        while time.monotonic() - killed_at < 10:
            if self.process_state(victim["pid"]) is None:
                gone = time.monotonic() - killed_at
                break
            time.sleep(0.01)
        self.kill = {"pid": victim["pid"], "gpu": gpu, "forgotten_after_s": None if gone is None else round(gone, 3)}
        if gone is None:
            self.violations.append(f"the victim {victim['pid']}, SIGKILLed while suspended, is still in the "
                                   f"status 10 s later")

    def process_state(self, pid):
        for g in self.daemon.status()["gpus"]:
            for p in g["processes"]:
                if p["pid"] == pid:
                    return p["state"]
        return None

    def sample(self):
        t = time.monotonic()
        try:
            t_ask = time.monotonic()
            doc = self.daemon.status()
            answer_ms = (time.monotonic() - t_ask) * 1e3
        except Exception as e:  # noqa: BLE001 - a daemon that stops answering is a finding
            self.violations.append(f"the daemon did not answer status at {t - self.t0:.0f} s: {e}")
            return
        res = self.daemon.resources()
        res.update(t=round(t - self.t0, 1), status_ms=round(answer_ms, 2),
                   suspensions=sum(g["suspensions_total"] for g in doc["gpus"]),
                   suspended_now=sum(g["suspended_processes"] for g in doc["gpus"]),
                   processes=sum(len(g["processes"]) for g in doc["gpus"]))
        self.samples.append(res)

    # -- the run ---------------------------------------------------------------------------------
    def run(self):
        a = self.a
        self.machine = SimMachine(a.build, gpus=2, keep=a.keep, nice=a.daemon_nice)
        self.daemon = None
        self.errlog = open(os.path.join(self.machine.dir, "workloads.log"), "w")
        try:
            self.daemon = Daemon(self.machine, CONFIGS[0])
            self.probe = SysfsProbe(self.machine, interval=1.0)
            self._run()
        finally:
            for r in self.procs:
                if r["proc"].poll() is None:
                    r["proc"].kill()
                    r["proc"].wait()
            if self.daemon and self.daemon.proc.poll() is None:
                self.daemon.stop()
            self.errlog.close()
            self.machine.close()

    def _run(self):
        a = self.a
        gpu_a, gpu_b = self.machine.gpu_ids[:2]
        self.t0 = time.monotonic()
        end = self.t0 + a.duration
        load_before = load_average()
        # Their arrivals end a little before the soak does; a stalled request stream runs longer.
        online_s = max(5.0, a.duration - 10)
        self.spawn("online-hint", ["online", "--preset", "cnn", "--rate", "10", "--duration", f"{online_s:.0f}",
                                   "--hint"], gpu_a, cls="online")
        self.spawn("online-transparent", ["online", "--preset", "cnn", "--rate", "5", "--duration",
                                          f"{online_s:.0f}"], gpu_b, argv0="serve-transparent")
        for g in (gpu_a, gpu_b):
            self.offline(g, 3600, role="survivor")
        next_offline = {g: self.t0 for g in (gpu_a, gpu_b)}
        next_operator = self.t0 + 2
        next_reload = self.t0 + a.reload_every
        invalid_at = self.t0 + 0.4 * a.duration
        kill_at = self.t0 + 0.5 * a.duration
        next_sample = self.t0
        config_index = 0
        while True:
            now = time.monotonic()
            if now >= end:
                break
            self.reap()
            if self.daemon.proc.poll() is not None:
                raise BenchError(f"gpreemptd exited {self.daemon.proc.returncode} at {now - self.t0:.0f} s; "
                                 f"see {self.daemon.log_path}")
            for g in (gpu_a, gpu_b):
                if len(self.alive("offline", g)) < a.offline_per_gpu and now >= next_offline[g]:
                    self.offline(g, self.rng.uniform(2, 8))
                    next_offline[g] = now + self.rng.uniform(0, 1.5)
            if now >= next_operator:
                self.operator_action()
                next_operator = now + self.rng.uniform(3, 8)
            if invalid_at is not None and now >= invalid_at:
                self.reload(INVALID, valid=False)
                self.reload(CONFIGS[config_index])
                invalid_at = None
            elif now >= next_reload:
                config_index = 1 - config_index
                self.reload(CONFIGS[config_index])
                next_reload = now + a.reload_every
            if kill_at is not None and now >= kill_at:
                kill_at = None
                self.kill_mid_suspension()
            if now >= next_sample:
                self.sample()
                next_sample = now + a.sample_interval
            time.sleep(0.05)
        self.elapsed = time.monotonic() - self.t0
        self.load_during = load_average()
        self.sysfs_lookup = self.probe.stop()
        self.finish(gpu_a, gpu_b, load_before)

    def finish(self, gpu_a, gpu_b, load_before):
        a = self.a
        if self.kill is None:
            self.violations.append("the SIGKILL mid-suspension did not happen")
        # Quiesce: the online workloads end with the duration (give them their last requests), the
        # offline churn stops; the survivors keep running.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            self.reap()
            if not [r for r in self.alive() if r["role"] != "survivor"]:
                break
            time.sleep(0.1)
        for r in self.alive():
            if r["role"] not in ("survivor",):
                self.notes.append(f"{r['role']} {r['pid']} still running 60 s after the end: terminated")
                r["terminated"] = True
                r["proc"].terminate()
        time.sleep(1.0)  # longer than any hold (450 ms) and the hysteresis
        self.sample()
        doc1 = self.daemon.status()
        time.sleep(1.0)
        doc = self.daemon.status()
        self.final_doc = doc

        # No queue left suspended, in the simulator and in the daemon.
        sim_queues = self.machine.kfdsim_json("queues")["queues"]
        stuck = [q for q in sim_queues if q["suspended"]]
        if stuck:
            self.violations.append(f"{len(stuck)} queue(s) still suspended in the simulator: "
                                   f"{[(q['pid'], q['queue_id']) for q in stuck]}")
        for g in doc["gpus"]:
            if g["suspended_processes"] or g["suspended_now"] or g["in_flight"]:
                self.violations.append(f"GPU {g['gpu_id']}: suspended_processes {g['suspended_processes']}, "
                                       f"in_flight {g['in_flight']} with nothing to suspend for")
            for p in g["processes"]:
                if p["state"] not in ("running", "unmanaged"):
                    self.violations.append(f"GPU {g['gpu_id']}: process {p['pid']} is {p['state']}")
        # suspended_s_total must not grow while nothing is suspended (a leaked suspension record).
        for g0, g1 in zip(doc1["gpus"], doc["gpus"]):
            if g1["suspended_s_total"] > g0["suspended_s_total"] + 1e-3:
                self.violations.append(f"GPU {g1['gpu_id']}: suspended_s_total grew from {g0['suspended_s_total']} "
                                       f"to {g1['suspended_s_total']} in 1 s with nothing suspended")
        # Totals: per GPU and per class count the same completed target suspensions.
        by_gpu = sum(g["suspensions_total"] for g in doc["gpus"])
        by_class = sum(c["stats"]["suspensions"] for c in doc["classes"])
        if by_gpu != by_class:
            self.violations.append(f"suspensions: {by_gpu} summed over GPUs, {by_class} summed over classes")
        self.counters = {"suspensions_total": by_gpu, "class_suspensions": by_class,
                         "operator_suspensions": sum(c["stats"]["operator_suspensions"] for c in doc["classes"]),
                         "forced_resumes": sum(c["stats"]["forced_resumes"] for c in doc["classes"]),
                         "failed_actuations": sum(c["stats"]["failed_actuations"] for c in doc["classes"]),
                         "actions": {str(g["gpu_id"]): g.get("actions") for g in doc["gpus"]},
                         "core_notices": doc["daemon"]["core_notices"],
                         "hint_to_suspend_us": doc["daemon"]["hint_to_suspend_us"],
                         # By hop (decide / handoff / prepare): a long tail in handoff is the control
                         # thread busy with something else (attaching a new process), not the loop.
                         "hint_to_suspend_hops_us": doc["daemon"].get("hint_to_suspend_hops_us")}
        try:
            # The counters only: every runlist record of a long soak takes minutes to fetch.
            sim = self.machine.kfdsim_json("stats", "--since", str(2 ** 62))
            self.counters["simulator"] = {str(g["gpu_id"]): {k: g["counters"][k] for k in ("suspends", "resumes")}
                                          for g in sim["gpus"]}
        except subprocess.CalledProcessError as e:
            self.notes.append(f"kfdsim stats failed: {e}")
        for kind in ("queues_may_stay_suspended", "session_lost"):
            if doc["daemon"]["core_notices"].get(kind):
                self.violations.append(f"core notice {kind}: {doc['daemon']['core_notices'][kind]}")
        d = doc["daemon"]
        if d["reloads"] != self.reloads_sent or d["failed_reloads"] != self.invalid_reloads_sent:
            self.violations.append(f"reloads {d['reloads']} / failed_reloads {d['failed_reloads']}, sent "
                                   f"{self.reloads_sent} valid / {self.invalid_reloads_sent} invalid")
        if self.kill and self.process_state(self.kill["pid"]) is not None:
            self.violations.append(f"the SIGKILLed process {self.kill['pid']} is still in the status")

        # The survivors still run, unsuspended, and an operator can still suspend and resume them.
        survivors = self.alive("survivor")
        if len(survivors) != 2:
            self.violations.append(f"{2 - len(survivors)} long-lived offline process(es) died")
        self.final_cycle(survivors)

        # Per (GPU, process): suspends decided == resumes decided + suspensions ended by the exit.
        self.daemon_rc = self.daemon.stop()
        if self.daemon_rc != 0:
            self.violations.append(f"gpreemptd exited {self.daemon_rc} on SIGTERM (expected 0)")
        sim_queues = self.machine.kfdsim_json("queues")["queues"]
        if [q for q in sim_queues if q["suspended"]]:
            self.violations.append("queues suspended after gpreemptd stopped")
        self.check_log()
        self.reap()
        for r in self.alive():
            r["proc"].terminate()
            r["proc"].wait()
            r["rc"] = 0 if r["role"] == "survivor" else r["proc"].returncode
        self.reap()
        for r in self.procs:
            if r["role"] == "victim":
                if self.kill and r["rc"] != -signal.SIGKILL:
                    self.violations.append(f"the victim {r['pid']} exited {r['rc']}, not by SIGKILL")
            elif r["rc"] not in (0, None) and not r.get("terminated"):
                self.violations.append(f"{r['role']} {r['pid']} on GPU {r['gpu']} exited {r['rc']} "
                                       f"(stderr in workloads.log)")
        self.check_resources()
        self.load = {"before": load_before, "at_end": self.load_during, "after": load_average()}

    def final_cycle(self, survivors):
        """One operator suspension at the end: the survivors' queues suspended in the simulator,
        then resumed."""
        if not survivors:
            return
        pids = {r["pid"] for r in survivors}
        self.ctl("suspend", "--class", "offline", "--for", "400ms")
        t0 = time.monotonic()
        seen = set()
        while time.monotonic() - t0 < 0.35 and seen != pids:
            seen = {q["pid"] for q in self.machine.kfdsim_json("queues")["queues"] if q["suspended"]} & pids
        if seen != pids:
            self.violations.append(f"the final `ctl suspend --class offline` did not suspend {sorted(pids - seen)}")
        time.sleep(1.0)
        back = [q for q in self.machine.kfdsim_json("queues")["queues"] if q["suspended"]]
        if back:
            self.violations.append(f"the final operator suspension was not resumed after 1 s: "
                                   f"{[(q['pid'], q['queue_id']) for q in back]}")

    def check_log(self):
        events = self.daemon.log_events()
        state = {}  # (gpu, key) -> suspended?
        count = defaultdict(Counter)
        exited_while_suspended = 0
        levels = Counter()
        warnings = Counter()
        expected_errors = 0
        for t, level, kind, data in events:
            levels[level] += 1
            if level in ("error", "critical"):
                if kind is None and self.daemon.config_path in data:
                    expected_errors += 1  # the invalid config's file:line errors and its rejection
                else:
                    self.violations.append(f"daemon log: [{level}] {data if kind is None else kind}")
            if level == "warning" and kind is None:
                warnings[next((w for w in EXPECTED_WARNINGS if w in data), data[:90])] += 1
            if kind in ("suspend", "resume", "orphan_resume"):
                for key in data["targets"]:
                    k = (data["gpu"], key)
                    count[k][kind] += 1
                    if kind == "suspend":
                        if state.get(k):
                            count[k]["double_suspend"] += 1
                        state[k] = True
                    else:
                        state[k] = False
            elif kind == "exited":
                for k in [k for k in state if k[1] == data["key"]]:
                    if state[k]:
                        exited_while_suspended += 1
                        count[k]["exit"] += 1
                    state[k] = False
        bad = []
        for k, c in count.items():
            if c["suspend"] != c["resume"] + c["orphan_resume"] + c["exit"] + (1 if state.get(k) else 0):
                bad.append((k, dict(c)))
            if state.get(k):
                bad.append((k, "still suspended at the end"))
        if self.invalid_reloads_sent and not expected_errors:
            self.violations.append("the invalid config's errors are not in the daemon's log")
        if bad:
            self.violations.append(f"suspends != resumes + exits for {len(bad)} (GPU, process) pair(s): {bad[:5]}")
        self.log_counts = {
            "suspend_decisions": sum(c["suspend"] for c in count.values()),
            "resume_decisions": sum(c["resume"] for c in count.values()),
            "orphan_resumes": sum(c["orphan_resume"] for c in count.values()),
            "double_suspends": sum(c["double_suspend"] for c in count.values()),
            "ended_by_exit": exited_while_suspended,
            "processes_seen": len({e[3]["key"] for e in events if e[2] in ("classified", "unclassified")}),
            "levels": dict(levels), "warnings": dict(warnings)}

    def check_resources(self):
        s = [x for x in self.samples if x["t"] >= min(30.0, self.a.duration / 4)]  # after warm-up
        if len(s) < 3:
            self.notes.append("too few resource samples after warm-up for a slope")
            self.resource_summary = {}
            return
        half = s[len(s) // 2:]
        xs = [x["t"] / 60 for x in half]
        ys = [x["rss_kb"] for x in half]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        den = sum((x - mx) ** 2 for x in xs)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else 0.0
        self.resource_summary = {
            "rss_kb": {"first": self.samples[0]["rss_kb"], "after_warmup": s[0]["rss_kb"], "last": s[-1]["rss_kb"],
                       "max": max(x["rss_kb"] for x in self.samples),
                       "slope_second_half_kb_per_min": round(slope, 1)},
            "fds": {"after_warmup": s[0]["fds"], "last": s[-1]["fds"], "max": max(x["fds"] for x in s)},
            "threads": {"after_warmup": s[0]["threads"], "last": s[-1]["threads"],
                        "max": max(x["threads"] for x in s)},
            "cpu_s": round(s[-1]["cpu_s"] - self.samples[0]["cpu_s"], 1),
            "cpu_percent_of_one_core": round(100 * (s[-1]["cpu_s"] - self.samples[0]["cpu_s"])
                                             / max(1e-9, s[-1]["t"] - self.samples[0]["t"]), 1),
            "status_answer_ms_max": max(x["status_ms"] for x in self.samples),
            "samples": len(self.samples)}
        if slope > self.a.rss_slope_kb_per_min:
            self.violations.append(f"VmRSS grows {slope:.0f} kB/min over the second half "
                                   f"(limit {self.a.rss_slope_kb_per_min} kB/min)")
        if s[-1]["fds"] > s[0]["fds"]:
            self.violations.append(f"open fds {s[0]['fds']} after warm-up, {s[-1]['fds']} at the end")
        if s[-1]["threads"] > s[0]["threads"]:
            self.violations.append(f"threads {s[0]['threads']} after warm-up, {s[-1]['threads']} at the end")

    def result(self):
        roles = Counter(r["role"] for r in self.procs)
        return {"duration_s": self.a.duration, "elapsed_s": round(self.elapsed, 1), "gpus": self.machine.gpu_ids,
                "workloads_started": dict(roles), "operator_actions": dict(self.operator),
                "reloads_sent": self.reloads_sent, "invalid_reloads_sent": self.invalid_reloads_sent,
                "sigkill_mid_suspension": self.kill, "counters": self.counters, "log": self.log_counts,
                "resources": self.resource_summary, "load_average": self.load,
                "sim_sysfs_lookup_ms": self.sysfs_lookup, "notes": self.notes,
                "violations": self.violations}


def print_result(r):
    print(f"soak: {r['elapsed_s']} s on GPUs {r['gpus']}; load average before {r['load_average']['before']}, "
          f"at the end {r['load_average']['at_end']}")
    print(f"  workloads started: {r['workloads_started']}")
    print(f"  operator actions: {r['operator_actions']}; reloads: {r['reloads_sent']} valid, "
          f"{r['invalid_reloads_sent']} invalid")
    print(f"  SIGKILL mid-suspension: {r['sigkill_mid_suspension']}")
    c = r["counters"]
    print(f"  suspensions {c['suspensions_total']} (operator {c['operator_suspensions']}, forced resumes "
          f"{c['forced_resumes']}, failed {c['failed_actuations']}); hint->SUSPEND {c['hint_to_suspend_us']} us")
    hops = c.get("hint_to_suspend_hops_us") or {}
    print("  hint->SUSPEND by hop (p50 / p99 us): " +
          ", ".join(f"{k} {v.get('p50')} / {v.get('p99')}" for k, v in hops.items()))
    print(f"  per GPU actions {c['actions']}; simulator {c.get('simulator')}; core notices {c['core_notices']}")
    lg = r["log"]
    print(f"  log: {lg['suspend_decisions']} suspend and {lg['resume_decisions']} resume decisions, "
          f"{lg['orphan_resumes']} orphan resumes, {lg['ended_by_exit']} ended by exit, {lg['double_suspends']} "
          f"double suspends; {lg['processes_seen']} GPU processes; lines {lg['levels']}")
    if lg["warnings"]:
        print(f"  warnings: {lg['warnings']}")
    res = r["resources"]
    if res:
        print(f"  daemon: RSS {res['rss_kb']} kB; fds {res['fds']}; threads {res['threads']}; CPU {res['cpu_s']} s "
              f"({res['cpu_percent_of_one_core']} % of a core); status answer max {res['status_answer_ms_max']} ms")
    print(f"  simulator: one sysfs lookup {r['sim_sysfs_lookup_ms']} ms")
    for n in r["notes"]:
        print(f"  note: {n}")
    for v in r["violations"]:
        print(f"VIOLATED: {v}")
    print("ok: every invariant held" if not r["violations"] else f"{len(r['violations'])} invariant(s) violated")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="the build directory (bin/, lib/)")
    ap.add_argument("--duration", type=float, default=600, help="seconds of soak (default 600)")
    ap.add_argument("--reload-every", type=float, default=20, help="seconds between SIGHUP reloads")
    ap.add_argument("--sample-interval", type=float, default=5, help="seconds between resource samples")
    ap.add_argument("--rss-slope-kb-per-min", type=float, default=256,
                    help="the largest VmRSS growth over the second half that is not a leak")
    ap.add_argument("--offline-per-gpu", type=int, default=1,
                    help="short-lived offline processes kept running per GPU (besides the long-lived one)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--daemon-nice", type=int, metavar="N",
                    help="run gpreemptd and kfdsimd at nice N (default: inherit the bench's)")
    ap.add_argument("--keep", action="store_true", help="keep the machine directory (the daemon's log)")
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    a = ap.parse_args()
    if a.duration < 10:
        ap.error("--duration must be at least 10 s")
    soak = Soak(a)
    try:
        soak.run()
    except BenchError as e:
        print(f"soak: {e}", file=sys.stderr)
        return 1
    r = soak.result()
    if a.json:
        print(json.dumps(r, indent=2))
    else:
        print_result(r)
    return 1 if r["violations"] else 0


if __name__ == "__main__":
    sys.exit(main())
