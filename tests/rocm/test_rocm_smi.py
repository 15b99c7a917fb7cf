"""rocm-smi (ROCm 5.2, bookworm) on the simulated MI210: the library finds the GPU through
/sys/class/drm and KFD's topology, and shows the profile's identity; the sensors the simulated
GPU does not have are N/A."""
import re

from conftest import need_program, run_on_sim


def smi(*args):
    rocm_smi = need_program("rocm-smi")
    r = run_on_sim("mi210", [rocm_smi, *args])
    return r


def test_rocm_smi_shows_the_profiles_identity():
    r = smi("--showid", "--showproductname", "--showbus", "--showvbios", "--showmeminfo", "vram")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    out = r.stdout
    assert re.search(r"GPU\[0\]\s+: GPU ID: 0x740f", out), out
    assert re.search(r"GPU\[0\]\s+: PCI Bus: 0000:03:00\.0", out), out
    assert re.search(r"Card series:\s+AMD Instinct MI210", out), out
    assert re.search(r"Card model:\s+0x0c34", out), out
    assert re.search(r"VBIOS version: kfdsim-mi210", out), out
    assert re.search(r"VRAM Total Memory \(B\): 68719476736", out), out
    assert re.search(r"VRAM Total Used Memory \(B\): 0", out), out
    assert "GPU[1]" not in out


def test_rocm_smi_concise_view_lists_one_gpu():
    r = smi()
    # rocm-smi exits 2 when a reading is unsupported (power, clocks, utilisation: the simulated
    # GPU has no sensors); it must still print the table, not fail.
    assert r.returncode in (0, 2), r.stdout[-2000:] + r.stderr[-2000:]
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    rows = [l.split() for l in r.stdout.splitlines() if re.match(r"^\d+\s", l)]
    assert len(rows) == 1, r.stdout
    assert rows[0][0] == "0"
    assert "auto" in rows[0]  # power_dpm_force_performance_level
