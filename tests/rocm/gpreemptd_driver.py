"""Runs on one simulated machine: starts gpreemptd (a config whose class `offline` matches
GPREEMPT_CLASS=offline in a process's environment) and hsa_probe.py --hold in that class; once the
daemon has classified the probe, suspends it with the operator trigger (`gpreempt ctl suspend
--pid --for`), asks the probe for a barrier packet while the daemon reports it suspended and again
after the hold ends, then stops the daemon with SIGTERM. Prints one JSON document with every answer
for the tests to judge.

    python3 gpreemptd_driver.py BINARY_DIR WORK_DIR -- PROBE_COMMAND...
"""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

binary_dir, work = Path(sys.argv[1]), Path(sys.argv[2])
probe_cmd = sys.argv[sys.argv.index("--") + 1:]
gpreempt = str(binary_dir / "bin" / "gpreempt")
socket = str(work / "gpreemptd.sock")
config = work / "gpreemptd.toml"
# max_suspension_ms: the default (500) would end the hold close to the barrier's 400 ms window.
config.write_text(f'[daemon]\nsocket = "{socket}"\nmetrics = ""\n\n[policy]\nmax_suspension_ms = 5000\n\n'
                  # A class above offline, as a node has one; it names what a process cannot set
                  # itself (gpreemptd refuses otherwise) and nothing runs in it here.
                  f'[[class]]\nname = "online"\npriority = 10\n'
                  f'match = {{ uid = {os.getuid()}, cmdline = "/nonexistent/online-service*" }}\n\n'
                  '[[class]]\nname = "offline"\npriority = 0\nmatch = { env = "GPREEMPT_CLASS=offline" }\n')
daemon = subprocess.Popen([str(binary_dir / "bin" / "gpreemptd"), "--config", str(config),
                           "--log-level", "warn"], stderr=subprocess.PIPE, text=True)
probe = subprocess.Popen(probe_cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         env=dict(os.environ, GPREEMPT_CLASS="offline"))
result = {"pid": probe.pid}


def ask(line):
    probe.stdin.write(line + "\n")
    probe.stdin.flush()
    return probe.stdout.readline().strip()


def ctl(*args):
    r = subprocess.run([gpreempt, "ctl", *args, "--socket", socket], capture_output=True, text=True,
                       timeout=30)
    return r


def probe_state():
    """The probe's entry in the daemon's status: (class, suspended), or None."""
    r = ctl("status", "--json")
    if r.returncode != 0:
        return None
    for g in json.loads(r.stdout).get("gpus", []):
        for p in g.get("processes", []):
            if p["pid"] == probe.pid:
                return p.get("class"), p.get("suspended")
    return None


def wait_for(predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


before = []
for line in probe.stdout:
    before.append(line.rstrip())
    if line.startswith("holding") or " FAIL " in line:
        break
result["probe_before"] = before
if before and before[-1] == "holding":
    result["classified"] = wait_for(lambda: (probe_state() or (None,))[0] == "offline", 30)
    r = ctl("suspend", "--pid", str(probe.pid), "--for", "2000ms")
    result["ctl_suspend"] = {"rc": r.returncode, "stdout": r.stdout, "stderr": r.stderr}
    result["suspended_seen"] = wait_for(lambda: (probe_state() or (None, False))[1] is True, 10)
    if result["suspended_seen"]:
        result["barrier_while_suspended"] = ask("barrier 400")
        result["barrier_after_resume"] = ask("wait 5000")
    result["resumed_seen"] = wait_for(lambda: (probe_state() or (None, True))[1] is False, 10)
    probe.stdin.write("continue\n")
    probe.stdin.flush()
result["probe_after"] = [l.rstrip() for l in probe.stdout]
result["probe_rc"] = probe.wait()
daemon.send_signal(signal.SIGTERM)
_, err = daemon.communicate(timeout=30)
result["daemon_rc"] = daemon.returncode
result["daemon_stderr"] = err[-2000:]
print(json.dumps(result))
