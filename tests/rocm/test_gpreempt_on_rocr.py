"""gpreempt against a real ROCr 5.2 process on the simulated MI210. ROCm 5.2 predates the upstream
runtime-enable handshake (it never calls RUNTIME_ENABLE), so the kernel — and the simulator, which
does what the kernel does — lists its queues but refuses to suspend them (EPERM), and
`gpreempt doctor` names the process and the reason. The queue keeps working afterwards."""
import json
import sys
from pathlib import Path

import pytest

from conftest import BINARY_DIR, need_hsa_runtime, run_on_sim

DRIVER = Path(__file__).resolve().parent / "gpreempt_driver.py"


def test_rocm52_queues_listed_not_suspendable_and_doctor_says_why():
    library = need_hsa_runtime()
    if not (BINARY_DIR / "bin" / "gpreempt").exists():
        pytest.skip("build/bin/gpreempt is not built")
    probe = [sys.executable, "-u", str(Path(__file__).resolve().parent / "hsa_probe.py"), library,
             "--hold"]
    r = run_on_sim("mi210", [sys.executable, "-u", str(DRIVER), str(BINARY_DIR), "--", *probe])
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res["probe_before"][-1] == "holding", res["probe_before"]
    queues = res["queues"]
    assert queues["rc"] == 0, queues
    rows = [l.split() for l in queues["stdout"].splitlines() if "compute_aql" in l]
    assert rows, queues["stdout"]
    assert any(row[5] == "4096" for row in rows), rows  # the probe's 64-packet ring

    suspend = res["suspend"]
    assert suspend["rc"] == 1, suspend
    assert "Operation not permitted" in suspend["stderr"], suspend["stderr"]
    assert "RUNTIME_ENABLE" in suspend["stderr"], suspend["stderr"]

    assert res["barrier_unsuspended"] == "barrier done"  # the refused suspend changed nothing
    doctor = res["doctor"]
    fails = [l for l in doctor["stdout"].splitlines() if l.startswith("FAIL")]
    assert any("rocm_user_space" in l and f"pid {res['pid']}" in l and "pre-upstream ABI" in l
               for l in fails), doctor["stdout"]

    assert "barrier ok value=0" in res["probe_after"], res["probe_after"]
    assert res["probe_rc"] == 0
