"""Run a model workload (gpreempt.sim.models) on the simulated GPU as the demo's online or offline
side, reporting as gpreempt-workload does (same --json documents, same request notifications).

    kfdsim run -- python3 -m gpreempt.sim.workload online --model resnet18 --duration 10 [--json]
    kfdsim run -- python3 -m gpreempt.sim.workload offline --model resnet50-train --duration 10
    python3 -m gpreempt.sim.workload models

online: an open-loop request stream (Poisson or fixed arrivals); a request is one inference whose
result is read back on the host, its latency runs from its arrival to that read (queueing behind
the previous request included). With --notify SOCKET each request sends "start"/"end" lines
before its first kernel and after its result (sim/workloads/notifier.h); --notify-wait waits for
the controller's one-byte reply after "start", so it can suspend the offline side first.
With --hint [SOCKET] each request runs inside ``gpreempt.online_request()`` (begin/end to
gpreemptd, default socket $GPREEMPT_SOCKET or /run/gpreempt/gpreemptd.sock); --preprocess-us US
adds host pre-processing before each request's first kernel (part of its latency) and --expect
sends ``gpreempt.expect_request(US)`` before it (the early hint).
offline: training steps (or GEMMs) back to back, one in flight, as a training loop that logs;
iterations per second over the measured run.
Both warm up with one untimed step first (it creates the queues and fills torch_mode's caches).
--ready-file PATH: after the warm-up create PATH and start the measured run only once PATH has been
removed (how `gpreempt demo` lines its workloads up).
Exit codes: 0 ok, 1 operational failure (no simulated GPU, no PyTorch, controller gone), 2 usage.
"""
import argparse
import json
import os
import random
import socket
import sys
import time

from . import models

SCHEMA_VERSION = 2  # lib/common/json_conventions.h


def torch_missing(prog, packages="python3-torch"):
    """The one-line error a program of gpreempt.sim prints (then exits 1) when PyTorch does not
    import in this interpreter, or None."""
    try:
        import torch  # noqa: F401
    except ImportError as e:
        return ("%s: PyTorch is not available to %s (%s); on Debian: apt-get install %s"
                % (prog, sys.executable, e, packages))
    return None


def _summary(values):
    """The demo's latency summary (lib/common/latency_summary.cpp): numpy-style interpolated
    percentiles, population std, rounded to 3 decimals."""
    keys = ("count", "mean", "std", "min", "p50", "p95", "p99", "max")
    if not values:
        return dict.fromkeys(keys, 0)
    v = sorted(values)
    n = len(v)

    def pct(q):
        pos = q / 100.0 * (n - 1)
        lo = int(pos)
        hi = min(lo + 1, n - 1)
        return v[lo] + (v[hi] - v[lo]) * (pos - lo)

    mean = sum(v) / n
    std = (sum((x - mean) ** 2 for x in v) / n) ** 0.5
    r = {"count": n}
    for k, x in zip(keys[1:], (mean, std, v[0], pct(50), pct(95), pct(99), v[-1])):
        r[k] = round(x, 3)
    return r


class _Notifier:
    def __init__(self, path, wait):
        self.wait = wait
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.connect(path)
        except OSError as e:
            raise RuntimeError("cannot connect to the controller socket %s: %s"
                               % (path, e.strerror)) from None
        self.pid = os.getpid()

    def _send(self, line):
        try:
            self.sock.sendall(line.encode())
        except OSError as e:
            raise RuntimeError("the controller socket closed: %s" % e.strerror) from None

    def start(self, request):
        self._send("start %d %d %d\n" % (request, self.pid, time.monotonic_ns()))
        if self.wait and not self.sock.recv(1):
            raise RuntimeError("the controller closed its socket before acknowledging a request")

    def end(self, request, latency_ns):
        self._send("end %d %d %d %d\n" % (request, self.pid, time.monotonic_ns(), latency_ns))


def _wait_for_go(path):
    with open(path, "w"):
        pass
    parent = os.getppid()
    while os.path.exists(path):
        if os.getppid() != parent:
            raise RuntimeError("the process that started this workload is gone")
        time.sleep(0.002)


def _online(a, m, sim, mode, stats0):
    step = a.step
    gap_mean = 1.0 / a.rate
    rng = random.Random(a.seed)

    def gap():
        return rng.expovariate(a.rate) if a.arrival == "poisson" else gap_mean

    notifier = _Notifier(a.notify, a.notify_wait) if a.notify else None
    hint = None
    if a.hint is not None:
        import gpreempt
        client = gpreempt.Client(a.hint or None)
        hint = (gpreempt, client)
    pre_s = a.preprocess_us / 1e6
    lat = []
    sent = 0
    start = time.monotonic()
    end = start + a.duration
    arrival = start + gap()
    while arrival < end:
        time.sleep(max(0.0, arrival - time.monotonic()))
        if hint and a.expect:
            hint[0].expect_request(a.preprocess_us, hint[1])
        if pre_s > 0:
            time.sleep(pre_s)
        if notifier:
            notifier.start(sent)
        if hint:
            with hint[0].online_request(hint[1]):
                step()
        else:
            step()
        latency_ns = int((time.monotonic() - arrival) * 1e9)
        if notifier:
            notifier.end(sent, latency_ns)
        lat.append(latency_ns / 1e6)
        sent += 1
        arrival += gap()
    elapsed = time.monotonic() - start
    return {"mode": "online", "preset": m.name, "pid": os.getpid(), "duration_s": a.duration,
            "elapsed_s": round(elapsed, 6), "rate_hz": a.rate, "arrival": a.arrival,
            "priority": a.kfd_priority, "kernels_per_request": stats0,
            "requests_sent": sent, "requests_completed": len(lat), "latency_ms": _summary(lat)}


def _offline(a, m, sim, mode, stats0):
    before = mode.stats()["dispatches"]
    iterations = 0
    start = time.monotonic()
    last_done = start
    while time.monotonic() - start < a.duration:
        a.step()
        sim.current_stream().synchronize()
        iterations += 1
        last_done = time.monotonic()
        if m.sleep_s:
            time.sleep(m.sleep_s)
    elapsed = last_done - start
    return {"mode": "offline", "preset": m.name, "pid": os.getpid(), "duration_s": a.duration,
            "elapsed_s": round(elapsed, 6), "priority": a.kfd_priority,
            "kernels_per_iteration": stats0, "kernels": mode.stats()["dispatches"] - before,
            "iterations": iterations,
            "iterations_per_s": round(iterations / elapsed, 3) if elapsed > 0 else 0}


def _human(r):
    if r["mode"] == "online":
        s = r["latency_ms"]
        return ("online  model=%s  %.1f s  %.2f req/s (%s)  priority %d\n"
                "requests: %d sent, %d completed\n"
                "latency ms   mean %.3f  std %.3f  p50 %.3f  p95 %.3f  p99 %.3f  max %.3f"
                % (r["preset"], r["duration_s"], r["rate_hz"], r["arrival"], r["priority"],
                   r["requests_sent"], r["requests_completed"], s["mean"], s["std"], s["p50"],
                   s["p95"], s["p99"], s["max"]))
    return ("offline  model=%s  %.1f s  priority %d\n"
            "iterations: %d in %.3f s = %.3f iterations/s (%d kernels)"
            % (r["preset"], r["duration_s"], r["priority"], r["iterations"], r["elapsed_s"],
               r["iterations_per_s"], r["kernels"]))


def _list():
    for m in models.MODELS.values():
        print("%-18s %-7s %s" % (m.name, m.side, m.description))
    return 0


def _parser():
    ap = argparse.ArgumentParser(
        prog="python3 -m gpreempt.sim.workload",
        description="A model workload on the simulated GPU (the demo's online or offline side).",
        epilog="Models: online %s; offline %s (python3 -m gpreempt.sim.workload models)."
               % (", ".join(models.names("online")), ", ".join(models.names("offline"))))
    sub = ap.add_subparsers(dest="command", required=True)
    for side, text in (("online", "request stream; per-request latency"),
                       ("offline", "training-like loop; iterations per second")):
        p = sub.add_parser(side, help=text)
        p.add_argument("--model", required=True, help=", ".join(models.names(side)))
        p.add_argument("--duration", type=float, required=True,
                       help="seconds of arrivals (online) or of iterations (offline)")
        p.add_argument("--batch", type=int, help="batch size (default: the model's)")
        p.add_argument("--priority", type=int, choices=[-1, 0, 1], default=0,
                       help="HIP stream priority: -1 high, 0 normal (default), 1 low")
        p.add_argument("--ready-file", help="after the warm-up create this file and wait until "
                       "it is removed before the measured run")
        p.add_argument("--json", action="store_true", help="machine-readable result")
        if side == "online":
            p.add_argument("--rate", type=float, help="requests per second (default: the model's)")
            p.add_argument("--arrival", choices=["poisson", "fixed"],
                           help="arrival process (default: the model's)")
            p.add_argument("--seed", type=int, default=1, help="seed of the Poisson arrivals")
            p.add_argument("--notify", help="Unix socket that receives request start/end lines")
            p.add_argument("--notify-wait", action="store_true",
                           help="after each start line wait for a one-byte reply")
            p.add_argument("--hint", nargs="?", const="", metavar="SOCKET",
                           help="tell gpreemptd about each request (gpreempt.online_request) over "
                           "SOCKET (default: $GPREEMPT_SOCKET, else /run/gpreempt/gpreemptd.sock)")
            p.add_argument("--expect", action="store_true",
                           help="early hint: gpreempt.expect_request(--preprocess-us) before each "
                           "request's pre-processing (needs --hint)")
            p.add_argument("--preprocess-us", type=float, default=0.0,
                           help="host pre-processing before each request's kernels (default 0)")
    sub.add_parser("models", help="list the models")
    return ap


def main(argv=None):
    ap = _parser()
    a = ap.parse_args(argv)
    if a.command == "models":
        return _list()
    try:
        m = models.find(a.model, a.command)
    except ValueError as e:
        ap.error(str(e))
    if a.duration <= 0:
        ap.error("--duration must be positive")
    if a.batch is not None and a.batch <= 0:
        ap.error("--batch must be positive")
    if a.command == "online":
        if a.rate is not None and a.rate <= 0:
            ap.error("--rate must be positive")
        if a.notify_wait and not a.notify:
            ap.error("--notify-wait needs --notify PATH")
        if a.expect and a.hint is None:
            ap.error("--expect needs --hint")
        if a.hint is not None and a.notify:
            ap.error("--hint and --notify exclude each other")
        if a.preprocess_us < 0:
            ap.error("--preprocess-us must not be negative")
        a.rate = a.rate or m.rate_hz
        a.arrival = a.arrival or m.arrival
    err = torch_missing("gpreempt.sim.workload", "python3-torch python3-torchvision")
    if err:
        print(err, file=sys.stderr)
        return 1
    from .. import sim
    try:
        sim.device()
        a.step = m.build(a.batch or m.batch)
        stream = sim.Stream(a.priority)
        a.kfd_priority = sim.KFD_PRIORITY[stream.level]
        with sim.torch_mode(compute=m.compute) as mode, sim.stream(stream):
            a.step()  # warm-up: creates the queue, fills the caches
            sim.synchronize()
            per_step = mode.stats()["dispatches"]
            if a.ready_file:
                _wait_for_go(a.ready_file)
            run = _online if a.command == "online" else _offline
            r = run(a, m, sim, mode, per_step)
    except (sim.Unavailable, RuntimeError, OSError) as e:
        print("gpreempt.sim.workload: %s" % e, file=sys.stderr)
        return 1
    if a.json:
        print(json.dumps(dict({"schema_version": SCHEMA_VERSION}, **r), indent=2))
    else:
        print(_human(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
