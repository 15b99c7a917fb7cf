"""rocminfo (ROCm 5.2, bookworm) on the simulated MI210: the whole program runs, through
hsa_init, and lists the host CPU agent and the gfx90a GPU agent with the profile's identity."""
import re

from conftest import need_program, run_on_sim


def agents(text):
    """rocminfo's agents as dicts of their top-level 'Key: value' fields."""
    out = []
    for block in re.split(r"\*{7}\s*\nAgent \d+\s*\n\*{7}", text)[1:]:
        fields = {}
        for line in block.splitlines():
            m = re.match(r"^  (\S[^:]*?):\s+(.*?)\s*$", line)
            if m and m.group(1) not in fields:
                fields[m.group(1)] = m.group(2)
        out.append(fields)
    return out


def test_rocminfo_lists_cpu_and_gfx90a_agents():
    rocminfo = need_program("rocminfo")
    r = run_on_sim("mi210", [rocminfo])
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "ROCk module is loaded" in r.stdout
    assert "*** Done ***" in r.stdout
    found = agents(r.stdout)
    assert len(found) == 2, r.stdout
    cpu, gpu = found
    assert cpu["Device Type"] == "CPU"
    assert gpu["Device Type"] == "GPU"
    assert gpu["Name"] == "gfx90a"
    assert gpu["Marketing Name"] == "AMD Instinct MI210"
    assert gpu["Chip ID"].startswith("29711(0x740f)")
    assert gpu["Compute Unit"] == "104"
    assert gpu["SIMDs per CU"] == "4"
    assert gpu["Wavefront Size"].startswith("64")
    assert gpu["Feature"] == "KERNEL_DISPATCH"
    assert "amdgcn-amd-amdhsa--gfx90a" in r.stdout
    # The GPU's memory pool is the profile's 64 GiB of VRAM; the CPU has fine-grained system memory.
    assert "67108864(0x4000000) KB" in r.stdout
    assert "FINE GRAINED" in r.stdout
    assert re.search(r"L2:\s+8192\(0x2000\) KB", r.stdout)
