"""ROCr 5.2 itself (libhsa-runtime64 through ctypes, hsa_probe.py) on the simulated MI210: init,
agents, memory pools and allocation from the system and the device pool, a real AQL queue
(CREATE_QUEUE, the doorbell page), signals, and a barrier-AND packet that the simulated packet
processor completes by decrementing its completion signal."""
import sys
from pathlib import Path

from conftest import kernel_descriptor, need_hsa_runtime, run_on_sim

PROBE = Path(__file__).resolve().parent / "hsa_probe.py"


def probe_lines(profile="mi210"):
    library = need_hsa_runtime()
    r = run_on_sim(profile, [sys.executable, "-u", str(PROBE), library], timeout=120)
    lines = r.stdout.splitlines()
    return r, lines


def test_hsa_init_agents_pools_queue_signal_and_barrier():
    r, lines = probe_lines()
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert lines[0] == "init ok"
    assert lines[1].startswith("agents cpu=") and lines[1].endswith(" gpu=gfx90a")
    gpu_pools = [l.split() for l in lines if l.startswith("pool gpu ")]
    assert gpu_pools == [["pool", "gpu", str(64 << 30), "coarse"]], lines
    assert any(l.startswith("pool cpu ") and l.endswith(" fine") for l in lines)
    assert "alloc cpu ok" in lines
    assert "alloc gpu ok" in lines
    used = [int(l.split()[1]) for l in lines if l.startswith("vram_used ")]
    assert used and used[0] >= 1 << 20, lines
    assert any(l.startswith("queue ok size=64 ") for l in lines), lines
    assert "signal ok" in lines
    assert "barrier ok value=0" in lines
    waited = [float(l.split("=")[1]) for l in lines if l.startswith("interrupt ok waited=")]
    assert waited, lines
    # Released after 0.5 s; woken by the completion's interrupt, not by the 60 s timeout.
    assert 0.4 < waited[0] < 10, waited
    assert lines[-1] == "shutdown ok"


def test_a_real_kernels_dispatch_packet_completes_with_its_signal(tmp_path):
    library = need_hsa_runtime()
    kd = kernel_descriptor(tmp_path)
    r = run_on_sim("mi210", [sys.executable, "-u", str(PROBE), library, f"--kernel-descriptor={kd}",
                             f"--code-object={kd.parent / 'k.co'}"], timeout=120)
    lines = r.stdout.splitlines()
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "dispatch ok value=0" in lines, lines
    # ROCr's loader: its blit-kernel copies and PM4 cache invalidation complete on the simulated GPU.
    assert "code object frozen" in lines, lines
    # The copies arrived: the loaded kernel's descriptor is in VRAM and its dispatch completes.
    assert "loaded kernel dispatch ok value=0" in lines, lines
