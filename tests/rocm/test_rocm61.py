"""ROCm 6.1 (Debian trixie's rocminfo, ROCr 6.1 with libhsakmt 6.2, rocm-smi) in a trixie root on
the simulated machine: rocminfo on MI210 (gfx90a) and the gfx942 machines, ROCr through the probe,
and — the point of all this — gpreempt suspending a ROCr process's real AQL queues through the
upstream RUNTIME_ENABLE handshake: a barrier does not complete while they are suspended and does
after the resume. Skipped, saying why, without the root (scripts/make-trixie-root.sh)."""
import json
import re
import sys
from pathlib import Path

import pytest

from conftest import (BINARY_DIR, TRIXIE_ROOT, in_trixie, kernel_descriptor, need_trixie_root,
                      run_on_sim)

HERE = Path(__file__).resolve().parent
PROFILES = {"mi210": ("gfx90a", "AMD Instinct MI210", "104"),
            "mi300x": ("gfx942", "AMD Instinct MI300X", "304"),
            # libdrm's amdgpu.ids (trixie's too) has no entry for 0x74a2, so ROCr names it so.
            "mi308x": ("gfx942", "AMD Radeon Graphics", "80")}


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_rocminfo61_lists_the_gpu(profile):
    need_trixie_root()
    r = run_on_sim(profile, in_trixie(["/usr/bin/rocminfo"]))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    gfx, marketing, cus = PROFILES[profile]
    assert "*** Done ***" in r.stdout
    assert re.search(rf"^  Name:\s+{gfx}\s*$", r.stdout, re.M), r.stdout
    assert re.search(rf"^  Marketing Name:\s+{marketing}\s*$", r.stdout, re.M), r.stdout
    assert re.search(rf"^  Compute Unit:\s+{cus}\s*$", r.stdout, re.M), r.stdout
    assert f"amdgcn-amd-amdhsa--{gfx}" in r.stdout


def test_rocr61_probe_runs_to_the_end():
    need_trixie_root()
    r = run_on_sim("mi210", in_trixie(["/usr/bin/python3", "-u", str(HERE / "hsa_probe.py")]))
    lines = r.stdout.splitlines()
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert lines[0] == "init ok"
    assert "barrier ok value=0" in lines
    assert any(l.startswith("interrupt ok") for l in lines)
    assert lines[-1] == "shutdown ok"


def test_rocr61_loads_a_code_object_and_dispatches_its_kernel(tmp_path):
    # ROCr 6.1 builds its blit kernels as 5.2 does (AssembleShader, the same arguments), so the
    # loader's copy of the code object into VRAM arrives and the loaded kernel's dispatch completes.
    need_trixie_root()
    kd = kernel_descriptor(tmp_path)
    r = run_on_sim("mi210", in_trixie(["/usr/bin/python3", "-u", str(HERE / "hsa_probe.py"),
                                       f"--kernel-descriptor={kd}",
                                       f"--code-object={kd.parent / 'k.co'}"]))
    lines = r.stdout.splitlines()
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "dispatch ok value=0" in lines, lines
    assert "code object frozen" in lines, lines
    assert "loaded kernel dispatch ok value=0" in lines, lines
    assert lines[-1] == "shutdown ok"


def test_gpreempt_suspends_rocr61_queues_and_barriers_wait_for_the_resume():
    need_trixie_root()
    if not (BINARY_DIR / "bin" / "gpreempt").exists():
        pytest.skip("build/bin/gpreempt is not built")
    probe = in_trixie(["/usr/bin/python3", "-u", str(HERE / "hsa_probe.py"), "--hold"])
    r = run_on_sim("mi210", [sys.executable, "-u", str(HERE / "gpreempt_driver.py"),
                             str(BINARY_DIR), "--", *probe])
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res["probe_before"][-1] == "holding", res
    rows = [l.split() for l in res["queues"]["stdout"].splitlines() if "compute_aql" in l]
    assert rows, res["queues"]
    s = res["suspend"]
    assert s["rc"] == 0, s
    m = re.search(r"suspended (\d+) of (\d+) queue\(s\)", s["stdout"])
    assert m and m.group(1) == m.group(2) == str(len(rows)), s["stdout"]
    assert re.search(r"resumed \d+ queue\(s\)", s["stdout"]), s["stdout"]
    assert res["barrier_while_suspended"] == "barrier pending"
    assert res["barrier_after_resume"] == "barrier done"
    assert re.search(r"^PASS\s+rocm_user_space\s+pid %d " % res["pid"], res["doctor"]["stdout"], re.M), \
        res["doctor"]["stdout"]
    assert "shutdown ok" in res["probe_after"] and res["probe_rc"] == 0


def test_gpreemptd_suspends_rocr61_queues_and_barriers_wait_for_the_resume(tmp_path):
    need_trixie_root()
    for program in ("gpreempt", "gpreemptd"):
        if not (BINARY_DIR / "bin" / program).exists():
            pytest.skip(f"build/bin/{program} is not built")
    probe = in_trixie(["/usr/bin/python3", "-u", str(HERE / "hsa_probe.py"), "--hold"])
    r = run_on_sim("mi210", [sys.executable, "-u", str(HERE / "gpreemptd_driver.py"),
                             str(BINARY_DIR), str(tmp_path), "--", *probe])
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res["probe_before"][-1] == "holding", res
    assert res["classified"], res
    assert res["ctl_suspend"]["rc"] == 0, res["ctl_suspend"]
    assert res["suspended_seen"], res
    assert res["barrier_while_suspended"] == "barrier pending"
    assert res["barrier_after_resume"] == "barrier done"
    assert res["resumed_seen"], res
    assert "shutdown ok" in res["probe_after"] and res["probe_rc"] == 0
    assert res["daemon_rc"] == 0, res["daemon_stderr"]


def test_rocm_smi61_shows_the_profiles_identity():
    need_trixie_root()
    if not (TRIXIE_ROOT / "usr/bin/rocm-smi").exists():
        pytest.skip(f"rocm-smi is not installed in {TRIXIE_ROOT}")
    r = run_on_sim("mi210", in_trixie(["/usr/bin/rocm-smi", "--showid", "--showproductname",
                                       "--showbus"]))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert re.search(r"Device Name:\s+AMD Instinct MI210", r.stdout), r.stdout
    assert re.search(r"Device ID:\s+0x740f", r.stdout), r.stdout
    assert re.search(r"Subsystem ID:\s+0x0c34", r.stdout), r.stdout
    assert re.search(r"PCI Bus: 0000:03:00\.0", r.stdout), r.stdout
    assert re.search(r"GUID:\s+26265", r.stdout), r.stdout  # the KFD gpu_id
