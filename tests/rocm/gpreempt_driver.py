"""Runs on one simulated machine: starts hsa_probe.py --hold (ROCr 5.2 with a live AQL queue),
points gpreempt at it while it holds (queues, suspend, doctor), lets it finish, and prints one JSON
document with every command's exit code and output for test_gpreempt_on_rocr.py to judge.

    python3 gpreempt_driver.py BINARY_DIR HSA_LIBRARY
"""
import json
import subprocess
import sys
from pathlib import Path

binary_dir, library = Path(sys.argv[1]), sys.argv[2]
probe = Path(__file__).resolve().parent / "hsa_probe.py"
p = subprocess.Popen([sys.executable, "-u", str(probe), library, "--hold"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
before = []
for line in p.stdout:
    before.append(line.rstrip())
    if line.startswith("holding") or " FAIL " in line:
        break
result = {"pid": p.pid, "probe_before": before, "commands": {}}
if before and before[-1] == "holding":
    for name, args in (("queues", ["queues", "--pid", str(p.pid)]),
                       ("suspend", ["suspend", "--pid", str(p.pid), "--for", "200"]),
                       ("doctor", ["doctor"])):
        r = subprocess.run([str(binary_dir / "bin" / "gpreempt"), *args],
                           capture_output=True, text=True, timeout=60)
        result["commands"][name] = {"rc": r.returncode, "stdout": r.stdout, "stderr": r.stderr}
    p.stdin.write("\n")
    p.stdin.flush()
result["probe_after"] = [l.rstrip() for l in p.stdout]
result["probe_rc"] = p.wait()
print(json.dumps(result))
