"""A hipcc-built HIP program (Debian bookworm's HIP 5.2 for gfx90a) on the simulated MI210 with
AMD_LOG_LEVEL=4, and `gpreempt log analyze` on the log the real runtime wrote.

hip/vector_add.hip queries the device, allocates device memory, copies to the device and back,
launches its kernel three times on a high-priority stream between two events and once on the null
stream, and synchronises. Its copies go to ROCr's SDMA queues, which the simulated SDMA engine runs
(sim/gpu/sdma.h), or with HSA_ENABLE_SDMA=0 to ROCr's blit kernels, which the simulated CP carries
out (sim/gpu/rocr_blit.h); the loader's copy of the code object into VRAM is always one of those.
The kernel itself computes nothing (no ISA runs), so the program never looks at its output; the
copies are real and it checks the round trip."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import BINARY_DIR, run_on_sim

HIP_DIR = Path(__file__).resolve().parent / "hip"
KERNEL = "_Z10vector_addPKfS0_Pfi"  # vector_add(const float*, const float*, float*, int)


def build_program(tmp_path):
    hipcc = shutil.which("hipcc")
    if not hipcc:
        pytest.skip("hipcc is not installed (Debian bookworm's hipcc and libamdhip64-dev; "
                    "scripts/install-deps.sh)")
    exe = tmp_path / "vector_add"
    # The toolchain is not under test: in a sanitizer build the suite preloads the sanitizer
    # runtime into every process (for the uninstrumented Python), and hipcc, a Perl script, would
    # then fail on Perl's own leaks.
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    r = subprocess.run([hipcc, "--offload-arch=gfx90a", "-O2", str(HIP_DIR / "vector_add.hip"),
                        "-o", str(exe)], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return exe


@pytest.mark.parametrize("copies", ["sdma", "blit_kernels"])
def test_hip_program_runs_and_log_analyze_finds_its_launches(tmp_path, copies):
    gpreempt = BINARY_DIR / "bin" / "gpreempt"
    if not gpreempt.exists():
        pytest.skip(f"{gpreempt} is not built")
    exe = build_program(tmp_path)
    env = {"AMD_LOG_LEVEL": "4"}
    if copies == "blit_kernels":
        env["HSA_ENABLE_SDMA"] = "0"
    r = run_on_sim("mi210", [str(exe)], timeout=60, env=env)
    log = tmp_path / "vector_add.log"
    log.write_text(r.stderr)
    lines = r.stdout.splitlines()
    # Exit 0 includes the exit handlers: HIP's module destructor frees the code objects there.
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert lines[0] == "device gfx90a:sramecc+:xnack- AMD Instinct MI210 cus=104", lines
    assert "copy round trip ok" in lines, lines
    # The events' times come from the completion signals' timestamps, which ROCr translates with
    # GET_CLOCK_COUNTERS samples of the same GPU counter: accepted, and the three kernels took
    # simulated time.
    done = [l for l in lines if l.startswith("stream kernels done elapsed_ms=")]
    assert done and float(done[0].split("=")[1]) > 0, lines
    assert "time stamps may be invalid" not in r.stderr
    assert "null stream kernel done" in lines, lines
    assert lines[-1] == "done", lines

    a = subprocess.run([str(gpreempt), "log", "analyze", "--json", str(log)], capture_output=True,
                       text=True, timeout=60)
    assert a.returncode == 0, a.stderr
    f = json.loads(a.stdout)["files"][0]
    assert f["kernels"] == {KERNEL: 4}, f["kernels"]
    assert f["dispatches"] == 4
    assert f["errors_total"] == 0, f["errors"]
    # Two hardware queues of 4096 packets: the null stream's (normal priority, 1) with one launch
    # and the high-priority stream's (2) with three.
    queues = sorted((q["priority"], q["size_packets"], q["dispatches"]) for q in f["hw_queues"])
    assert queues == [(1, 4096, 1), (2, 4096, 3)], f["hw_queues"]
    assert all(q["pid"] == f["processes"][0]["pid"] for q in f["hw_queues"])
