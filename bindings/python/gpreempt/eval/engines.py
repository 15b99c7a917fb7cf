"""The two engines an experiment runs on.

des  — `gpreempt-des --spec SPEC.json --out RESULT.json`, the discrete-event engine: simulated time,
       the real lib/sched policy; one call per point and seed.
live — `gpreempt demo --json` on a simulated machine (kfdsim, wall-clock time): real processes
       (gpreempt-workload presets or PyTorch models on the simulated GPU) under gpreemptd, for the
       experiments that have a live form (Experiment.live: the demo's workloads, rate, scenarios).
"""
import json
import os
import subprocess
import tempfile
import time

ROW_KEYS = ("baseline", "online_requests", "online_p50_ms", "online_p95_ms", "online_p99_ms", "online_mean_ms",
            "offline_iterations", "offline_iterations_per_s", "suspensions", "sim_seconds")


class EngineError(RuntimeError):
    """The engine failed or answered something that is not a result (exit 1)."""


class DesEngine:
    name = "des"

    def __init__(self, binary, timeout_s=3600):
        self.binary = binary
        self.timeout_s = timeout_s
        if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
            raise EngineError(f"the discrete-event engine is missing: {binary} (build the gpreempt-des target, "
                              "or pass --des PATH)")

    def run(self, spec):
        with tempfile.TemporaryDirectory(prefix="gpreempt-eval-") as d:
            sp, rp = os.path.join(d, "spec.json"), os.path.join(d, "result.json")
            with open(sp, "w") as f:
                json.dump(spec, f)
            t0 = time.monotonic()
            try:
                p = subprocess.run([self.binary, "--spec", sp, "--out", rp], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, timeout=self.timeout_s)
            except subprocess.TimeoutExpired:
                raise EngineError(f"{self.binary} took longer than {self.timeout_s} s on baseline "
                                  f"{spec.get('baseline')!r}") from None
            wall = time.monotonic() - t0
            if p.returncode != 0:
                raise EngineError(f"{self.binary} --spec failed (exit {p.returncode}) on baseline "
                                  f"{spec.get('baseline')!r}: {p.stderr.strip()[-1500:]}")
            try:
                with open(rp) as f:
                    result = json.load(f)
            except (OSError, ValueError) as e:
                raise EngineError(f"{self.binary} wrote no readable result ({e})") from None
        return check_result(result, self.binary, wall)


def check_result(result, source, wall=None):
    if not isinstance(result, dict) or not isinstance(result.get("row"), dict):
        raise EngineError(f"{source}: the result has no \"row\" object")
    missing = [k for k in ROW_KEYS if k not in result["row"]]
    if missing:
        raise EngineError(f"{source}: the result row lacks {', '.join(missing)}")
    if wall is not None and result["row"].get("wall_seconds") is None:
        result["row"]["wall_seconds"] = wall
    return result


class LiveEngine:
    """`gpreempt demo --json` on a simulated machine: real workload processes (presets or PyTorch
    models on the simulated GPU), gpreemptd as the controller with its hint, early-hint or
    transparent trigger, wall-clock time."""
    name = "live"
    # The demo's scenarios carry the des points' names (an experiment may rename the alone points,
    # Experiment.live["points"]).
    DEFAULT_SCENARIOS = ("online-alone", "offline-alone", "none", "gpreempt-hint")

    def __init__(self, gpreempt, timeout_s=900):
        self.gpreempt = gpreempt
        self.timeout_s = timeout_s
        if not (os.path.isfile(gpreempt) and os.access(gpreempt, os.X_OK)):
            raise EngineError(f"gpreempt is missing: {gpreempt}")

    def command(self, live, duration_s):
        """The demo command line for an experiment's live form and seconds of arrivals per scenario."""
        rate = float(live["rate_hz"])
        requests = max(1, int(round(duration_s * rate)))
        cmd = [self.gpreempt, "demo", "--json", "--requests", str(requests), "--rate", f"{rate:g}",
               "--online", live["online"], "--offline", live["offline"],
               "--scenarios", ",".join(live.get("scenarios", self.DEFAULT_SCENARIOS))]
        for flag, key in (("--online-batch", "online_batch"), ("--offline-batch", "offline_batch")):
            if live.get(key) is not None:
                cmd += [flag, str(int(live[key]))]
        for flag, key in (("--resume-after-idle-ms", "resume_after_idle_ms"),
                          ("--max-suspension-ms", "max_suspension_ms"), ("--grace-us", "grace_us")):
            if live.get(key) is not None:
                cmd += [flag, f"{live[key]:g}"]
        return cmd

    def run_demo(self, live, duration_s):
        cmd = self.command(live, duration_s)
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            raise EngineError(f"{' '.join(cmd)} took longer than {self.timeout_s} s") from None
        wall = time.monotonic() - t0
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            raise EngineError(f"{' '.join(cmd)} failed (exit {p.returncode}): {p.stderr.strip()[-1500:]}") from None
        if p.returncode != 0 and "scenarios" not in doc:
            raise EngineError(f"{' '.join(cmd)} failed (exit {p.returncode}): {doc.get('error')}")
        return demo_rows(doc, wall, cmd, live.get("points", {}))


def demo_rows(doc, wall, cmd, rename=None):
    """One row per demo scenario, in the des rows' vocabulary."""
    rows = []
    for s in doc["scenarios"]:
        lat = s.get("online_latency_ms") or {}
        point = s["name"]
        baseline = {"online-alone": "none", "offline-alone": "none"}.get(point, point)
        point = (rename or {}).get(point, point)
        d = s.get("gpreemptd") or {}
        rows.append({
            "point": point, "baseline": baseline,
            "online_requests": s.get("online_requests", lat.get("count", 0)) if lat else 0,
            "online_p50_ms": lat.get("p50"), "online_p95_ms": lat.get("p95"), "online_p99_ms": lat.get("p99"),
            "online_mean_ms": lat.get("mean"), "online_max_ms": lat.get("max"),
            "offline_iterations": None,
            "offline_iterations_per_s": s.get("offline_iterations_per_s"),
            "suspensions": d.get("suspensions", 0),
            "sim_seconds": doc.get("duration_s"), "wall_seconds": wall,
            "simulated_suspends": s.get("simulated_suspends"),
            "suspend_ms_p50": (d.get("suspend_ms") or {}).get("p50"),
            "hint_to_suspend_us_p50": (d.get("hint_to_suspend_us") or {}).get("p50"),
            "gpreemptd_exit_code": d.get("exit_code"),
        })
    return {"rows": rows, "command": " ".join(cmd), "machine": doc.get("machine")}
