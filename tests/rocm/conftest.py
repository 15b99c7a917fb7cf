"""Shared helpers for the real-ROCm tests: where kfdsim is, and running a command on a fresh
simulated machine of a given profile."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

BINARY_DIR = Path(os.environ.get("GPREEMPT_BINARY_DIR", Path(__file__).resolve().parents[2] / "build"))
KFDSIM = BINARY_DIR / "bin" / "kfdsim"
HSA_LIBRARY = "libhsa-runtime64.so.1"


def need_program(name):
    path = shutil.which(name)
    if not path:
        pytest.skip(f"{name} is not installed (Debian bookworm's package; scripts/install-deps.sh)")
    return path


def need_hsa_runtime():
    import ctypes.util
    for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib"):
        if (Path(d) / HSA_LIBRARY).exists():
            return str(Path(d) / HSA_LIBRARY)
    pytest.skip(f"{HSA_LIBRARY} is not installed (Debian's libhsa-runtime64-1; scripts/install-deps.sh)")


def run_on_sim(profile, argv, timeout=120, env=None):
    """Runs argv under `kfdsim run --profile PROFILE` (a private machine); returns the result."""
    if not KFDSIM.exists():
        pytest.skip(f"{KFDSIM} is not built")
    full_env = dict(os.environ)
    full_env.pop("KFDSIM_DIR", None)  # a machine of its own, never an outer run's
    if os.environ.get("GPREEMPT_SANITIZER_PRELOAD"):
        # In a sanitizer build the runtime is preloaded into every process of the run, ROCr and
        # the shell commands rocminfo starts included, and ROCr, bash and tr leave allocations at
        # exit that are theirs, not ours. LeakSanitizer is off for these third-party programs;
        # AddressSanitizer still checks the instrumented shim in them, and our own programs' leaks
        # are checked by the rest of the suite.
        full_env["ASAN_OPTIONS"] = full_env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    if env:
        full_env.update(env)
    return subprocess.run([str(KFDSIM), "run", "--profile", profile, "--", *argv],
                          capture_output=True, text=True, timeout=timeout, env=full_env)


# ---- ROCm 6.1 in a Debian trixie root (scripts/make-trixie-root.sh) ---------------------------

TRIXIE_ROOT = Path(os.environ.get("GPREEMPT_TRIXIE_ROOT", "/var/tmp/gpreempt-trixie"))
SOURCE_DIR = Path(__file__).resolve().parents[2]


def need_trixie_root():
    if not (TRIXIE_ROOT / "usr/bin/rocminfo").exists():
        pytest.skip(f"no trixie root with ROCm 6.1 at {TRIXIE_ROOT} (scripts/make-trixie-root.sh "
                    "makes it; GPREEMPT_TRIXIE_ROOT names another)")
    if os.geteuid() != 0:
        pytest.skip("running in the trixie root needs root (mount namespace, chroot)")
    if os.environ.get("GPREEMPT_SANITIZER_PRELOAD"):
        # kfdsim run preloads the build's sanitizer runtime ahead of the instrumented shim; that is
        # bookworm's compiler runtime, which the trixie root has neither at that path nor for its
        # newer glibc. The uninstrumented suite runs these tests.
        pytest.skip("a sanitizer build: the trixie root has no runtime for the instrumented shim "
                    f"({os.environ['GPREEMPT_SANITIZER_PRELOAD']})")
    if not shutil.which("unshare"):
        pytest.skip("unshare (util-linux) is not installed")


def in_trixie(argv):
    """argv run inside the trixie root: in a private mount namespace, with /tmp (the machine's
    socket and files), /proc, /sys, /dev, the build tree (the preloaded shim) and tests/rocm bound
    at their own paths, then chroot. The mounts end with the namespace."""
    script = ('R=$1; shift; for d in /tmp /proc /sys /dev "$GPREEMPT_BIND_BUILD" "$GPREEMPT_BIND_TESTS"; '
              'do mkdir -p "$R$d" && mount --bind "$d" "$R$d" || exit 97; done; exec chroot "$R" "$@"')
    return ["env", f"GPREEMPT_BIND_BUILD={BINARY_DIR.resolve()}",
            f"GPREEMPT_BIND_TESTS={Path(__file__).resolve().parent}",
            "unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", str(TRIXIE_ROOT),
            *argv]


# ---- a real gfx90a kernel ---------------------------------------------------------------------

KERNEL_SOURCE = "__kernel void fill(__global int* out, int v) { out[__builtin_amdgcn_workitem_id_x()] = v; }\n"


def kernel_descriptor(tmp_path, mcpu="gfx90a", name="fill"):
    """Compiles a one-line OpenCL kernel with Debian's clang/lld for `mcpu` and returns the path of
    a file with its 64-byte AMDHSA kernel descriptor (the ELF symbol `<name>.kd`); the code object
    itself is beside it, k.co."""
    import struct
    import subprocess
    clang = shutil.which("clang")
    if not clang or not shutil.which("ld.lld"):
        pytest.skip("clang and ld.lld (Debian's clang, lld) are needed to build a gfx90a kernel")
    src, co = tmp_path / "k.cl", tmp_path / "k.co"
    src.write_text(KERNEL_SOURCE)
    r = subprocess.run([clang, "-x", "cl", "-Xclang", "-finclude-default-header", "-target",
                        "amdgcn-amd-amdhsa", f"-mcpu={mcpu}", "-nogpulib", "-O2", str(src), "-o",
                        str(co)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"clang cannot build an amdgcn code object here: {r.stderr[-300:]}")
    d = co.read_bytes()
    shoff, = struct.unpack_from("<Q", d, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", d, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
    for _, typ, _, _, off, size, link, _, _, entsize in secs:
        if typ != 2:  # SHT_SYMTAB
            continue
        strtab_off = secs[link][4]
        for j in range(size // entsize):
            st_name, _, _, shndx, value, _ = struct.unpack_from("<IBBHQQ", d, off + j * entsize)
            end = d.index(b"\0", strtab_off + st_name)
            if d[strtab_off + st_name:end] == f"{name}.kd".encode():
                sec = secs[shndx]
                at = sec[4] + value - sec[3]  # file offset = section offset + (value - address)
                out = tmp_path / f"{name}.kd"
                out.write_bytes(d[at:at + 64])
                return out
    raise AssertionError(f"{name}.kd not found in {co}")
