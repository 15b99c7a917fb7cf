"""Runs on one simulated machine: starts hsa_probe.py --hold (a ROCr process with a live AQL
queue), and while it holds: lists its queues with gpreempt, suspends them with `gpreempt suspend
--for`, asks the probe for a barrier packet while they are suspended and again after the resume,
and runs `gpreempt doctor`. Prints one JSON document with every answer for the tests to judge.

    python3 gpreempt_driver.py BINARY_DIR -- PROBE_COMMAND...   (the probe's command line, e.g.
    /usr/bin/python3 -u .../hsa_probe.py LIBRARY --hold, possibly behind chroot)
"""
import json
import subprocess
import sys
from pathlib import Path

binary_dir = Path(sys.argv[1])
probe_cmd = sys.argv[sys.argv.index("--") + 1:]
gpreempt = str(binary_dir / "bin" / "gpreempt")
p = subprocess.Popen(probe_cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def ask(line):
    p.stdin.write(line + "\n")
    p.stdin.flush()
    return p.stdout.readline().strip()


def run(*args):
    r = subprocess.run([gpreempt, *args], capture_output=True, text=True, timeout=60)
    return {"rc": r.returncode, "stdout": r.stdout, "stderr": r.stderr}


before = []
for line in p.stdout:
    before.append(line.rstrip())
    if line.startswith("holding") or " FAIL " in line:
        break
result = {"pid": p.pid, "probe_before": before}
if before and before[-1] == "holding":
    result["queues"] = run("queues", "--pid", str(p.pid))
    # Suspend for 1.5 s; while suspended a barrier must not complete, after the resume it must.
    s = subprocess.Popen([gpreempt, "suspend", "--pid", str(p.pid), "--for", "1500"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = []
    for line in s.stdout:
        out.append(line)
        if line.startswith("holding for"):
            result["barrier_while_suspended"] = ask("barrier 400")
            break
    rest, err = s.communicate(timeout=60)
    result["suspend"] = {"rc": s.returncode, "stdout": "".join(out) + rest, "stderr": err}
    if "barrier_while_suspended" in result:
        result["barrier_after_resume"] = ask("wait 5000")
    else:
        result["barrier_unsuspended"] = ask("barrier 5000")
    result["doctor"] = run("doctor")
    p.stdin.write("continue\n")
    p.stdin.flush()
result["probe_after"] = [l.rstrip() for l in p.stdout]
result["probe_rc"] = p.wait()
print(json.dumps(result))
