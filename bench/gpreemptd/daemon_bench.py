"""What the gpreemptd benches share: a private simulated machine, a gpreemptd on it, its socket, its
log read back as timestamped events, and the daemon's resource use from /proc.

The daemon's log is the benches' clock: every line carries the wall-clock time (spdlog, 1 ms
resolution, truncated) at which the daemon did what the line says, and the bench's processes take
CLOCK_REALTIME too, so no polling of the status document blurs a figure.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path


class BenchError(Exception):
    """An operational failure of the bench itself (exit 1), not a violated invariant."""


def ask(sock_path, op, timeout=10.0, **fields):
    """One request on gpreemptd's socket; the decoded reply."""
    msg = {"v": 1, "seq": 1, "op": op}
    msg.update(fields)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(sock_path)
        s.sendall((json.dumps(msg) + "\n").encode())
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            data += chunk
    return json.loads(data)


def percentile(values, q):
    """Nearest-rank percentile of a non-empty list."""
    v = sorted(values)
    k = max(0, min(len(v) - 1, int(round(q * len(v) + 0.5)) - 1))
    return v[k]


def summary_ms(values_s):
    """{"count", "p50", "p99", "max"} in milliseconds of a list of seconds."""
    if not values_s:
        return {"count": 0, "p50": None, "p99": None, "max": None}
    ms = [x * 1e3 for x in values_s]
    return {"count": len(ms), "p50": round(percentile(ms, 0.5), 1), "p99": round(percentile(ms, 0.99), 1),
            "max": round(max(ms), 1)}


def load_average():
    return [round(x, 2) for x in os.getloadavg()]


def _set_nice(nice):
    """A preexec_fn giving a child (and every thread it creates) this nice value; None: inherit.
    On a shared machine the bench runs under nice, but the daemons it measures (gpreemptd,
    kfdsimd: a few % of a core) can be given their own value, so that a figure is theirs rather
    than the machine's run queue. Lowering it needs root or CAP_SYS_NICE."""
    if nice is None:
        return None
    return lambda: os.setpriority(os.PRIO_PROCESS, 0, nice)


class SimMachine:
    """`kfdsim start` on a private directory; stopped and removed by close()."""

    def __init__(self, build, gpus=1, keep=False, nice=None):
        self.build = Path(build).resolve()
        self.bin = self.build / "bin"
        for tool in ("kfdsim", "kfdsimd", "gpreemptd", "gpreempt"):
            if not (self.bin / tool).exists():
                raise BenchError(f"{self.bin / tool} is missing: build the project first ({self.build})")
        shim = self.build / "lib" / "libkfdshim.so"
        if not shim.exists():
            raise BenchError(f"{shim} is missing: build the project first")
        self.keep = keep
        self.dir = tempfile.mkdtemp(prefix="gpreemptd-bench-")
        self.preexec = _set_nice(nice)
        # kfdsimd inherits the nice value of `kfdsim start`.
        subprocess.run([self.bin / "kfdsim", "--dir", self.dir, "start", "--gpus", str(gpus)], check=True,
                       stdout=subprocess.DEVNULL, preexec_fn=self.preexec)
        # In a sanitizer build the sanitizer runtime must come before the shim (the test suite sets
        # GPREEMPT_SANITIZER_PRELOAD), as kfdsim run does it.
        runtime = os.environ.get("GPREEMPT_SANITIZER_PRELOAD")
        preload = f"{runtime}:{shim}" if runtime else str(shim)
        self.env = dict(os.environ, LD_PRELOAD=preload, KFDSIM_DIR=self.dir)
        for k in ("GPREEMPT_CLASS", "SIMRT_GPU_ID"):
            self.env.pop(k, None)
        st = self.kfdsim_json("status")
        self.gpu_ids = [g["gpu_id"] for g in st["gpus"]]

    def kfdsim_json(self, *args):
        out = subprocess.run([self.bin / "kfdsim", "--dir", self.dir, *args, "--json"], check=True,
                             capture_output=True, text=True).stdout
        return json.loads(out)

    def close(self):
        subprocess.run([self.bin / "kfdsim", "--dir", self.dir, "stop"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        if self.keep:
            print(f"machine directory kept: {self.dir}", file=sys.stderr)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


class Daemon:
    """gpreemptd on a SimMachine, logging at debug level to DIR/gpreemptd.log."""

    def __init__(self, machine, config_text, log_level="debug"):
        self.machine = machine
        self.config_path = os.path.join(machine.dir, "gpreemptd.toml")
        self.write_config(config_text)
        self.sock = os.path.join(machine.dir, "gpreemptd.sock")
        self.log_path = os.path.join(machine.dir, "gpreemptd.log")
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen([machine.bin / "gpreemptd", "--config", self.config_path, "--socket", self.sock,
                                      "--metrics", "", "--log-level", log_level],
                                     env=machine.env, stdout=self._log, stderr=self._log,
                                     preexec_fn=machine.preexec)
        self.pid = self.proc.pid
        deadline = time.monotonic() + 30
        while True:
            if self.proc.poll() is not None:
                raise BenchError(f"gpreemptd exited with {self.proc.returncode} at start; see {self.log_path}:\n"
                                 + open(self.log_path).read()[-2000:])
            try:
                if ask(self.sock, "status").get("ok"):
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise BenchError(f"gpreemptd did not answer on {self.sock} within 30 s")
            time.sleep(0.05)

    def write_config(self, text):
        tmp = self.config_path + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, self.config_path)

    def status(self, timeout=10.0):
        r = ask(self.sock, "status", timeout=timeout)
        if not r.get("ok"):
            raise BenchError(f"status refused: {r}")
        return r["result"]

    def resources(self):
        """{"rss_kb", "threads", "fds", "cpu_s"} of the daemon now."""
        out = {}
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    out["rss_kb"] = int(line.split()[1])
                elif line.startswith("Threads:"):
                    out["threads"] = int(line.split()[1])
        out["fds"] = len(os.listdir(f"/proc/{self.pid}/fd"))
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        out["cpu_s"] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        return out

    def stop(self, timeout=15.0):
        """SIGTERM; the exit code (None: it had to be killed)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                self._log.close()
                return None
        self._log.close()
        return self.proc.returncode

    def log_events(self):
        return parse_log(self.log_path)


_PROBE = r"""
import os, sys, time
root = "/sys/class/kfd/kfd/proc"
while True:
    t = time.perf_counter()
    pids = os.listdir(root)
    print(f"{(time.perf_counter() - t) * 1e3:.3f}", flush=True)
    if pids:
        t = time.perf_counter()
        try:
            os.listdir(f"{root}/{pids[0]}/queues")
        except OSError:
            pass
        print(f"{(time.perf_counter() - t) * 1e3:.3f}", flush=True)
    time.sleep(float(sys.argv[1]))
"""


class SysfsProbe:
    """What one sysfs lookup costs on the simulated machine while a bench runs: a process like
    gpreemptd (under the shim, at the daemon's nice value) lists /sys/class/kfd/kfd/proc and one
    process's queues every `interval` seconds. Under kfdsim every such lookup is a round trip to
    kfdsimd, which re-renders its files when anything changed; on a real machine it is a sysfs read
    of a few microseconds. gpreemptd's scan makes one lookup plus a few per GPU process."""

    def __init__(self, machine, interval=0.2):
        self.proc = subprocess.Popen(["/usr/bin/python3", "-c", _PROBE, str(interval)], env=machine.env,
                                     stdout=subprocess.PIPE, text=True, preexec_fn=machine.preexec)

    def stop(self):
        """{"count", "p50", "p99", "max"} of the lookups, in ms."""
        self.proc.terminate()
        out, _ = self.proc.communicate()
        return summary_ms([float(x) / 1e3 for x in out.split()])


_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) \[(\w+)\] (.*)$")
_KEY = r"(\d+)@(\d+)"
_PATTERNS = [
    ("classified", re.compile(r"^GPU process " + _KEY + r" \(.*\) is class (\S+) \(")),
    ("unclassified", re.compile(r"^GPU process " + _KEY + r" \(.*\) matches no class: left alone$")),
    ("gpus", re.compile(r"^GPU process " + _KEY + r" now has queues on GPUs \[(.*)\]$")),
    ("exited", re.compile(r"^process " + _KEY + r" exited$")),
    ("suspend", re.compile(r"^GPU (\d+): suspend \[(.*)\] \((\w+), grace")),
    ("resume", re.compile(r"^GPU (\d+): resume \[(.*)\] \((\w+)\)$")),
    ("orphan_resume", re.compile(r"^GPU (\d+): " + _KEY + r" is suspended but no longer managed")),
]


def _keys(text):
    return [tuple(int(x) for x in k.split("@")) for k in text.split(", ") if k]


def parse_log(path):
    """The daemon's log as a list of (time_s, level, kind, data); kind None for lines the benches do
    not interpret (data is then the text)."""
    events = []
    with open(path, errors="replace") as f:
        for line in f:
            m = _LINE.match(line.rstrip("\n"))
            if not m:
                continue
            t = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f").timestamp()
            level, text = m.group(2), m.group(3)
            for kind, rx in _PATTERNS:
                mm = rx.match(text)
                if not mm:
                    continue
                g = mm.groups()
                if kind == "classified":
                    data = {"key": (int(g[0]), int(g[1])), "class": g[2]}
                elif kind == "unclassified":
                    data = {"key": (int(g[0]), int(g[1])), "class": None}
                elif kind == "gpus":
                    data = {"key": (int(g[0]), int(g[1])), "gpus": [int(x) for x in g[2].split(", ") if x]}
                elif kind == "exited":
                    data = {"key": (int(g[0]), int(g[1]))}
                elif kind in ("suspend", "resume"):
                    data = {"gpu": int(g[0]), "targets": _keys(g[1]), "reason": g[2]}
                else:
                    data = {"gpu": int(g[0]), "targets": [(int(g[1]), int(g[2]))], "reason": "orphan"}
                events.append((t, level, kind, data))
                break
            else:
                events.append((t, level, None, text))
    return events
