#!/usr/bin/env bash
# Installs the Debian packages the build and the tests need. Idempotent: does nothing (and needs
# no network) when everything is already installed.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git ccache
  dpkg-dev file
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev libtomlplusplus-dev
  libspdlog-dev libsystemd-dev  # gpreemptd: logging, sd_notify readiness
  python3 python3-dev python3-pybind11 pybind11-dev python3-pytest python3-jsonschema
  python3-matplotlib  # gpreempt eval: figures
  python3-torch python3-torchvision  # gpreempt.sim.torch_mode: models on the simulated GPU
  libhsakmt-dev libdrm-dev
  libcpp-httplib-dev  # gpreemptd: the Prometheus /metrics endpoint
  python3-yaml        # tests/deploy: the Kubernetes and compose manifests parse
  rocminfo libhsa-runtime64-1 rocm-smi  # tests/rocm: Debian's ROCm 5.2 on the simulated KFD
  lld debootstrap     # tests/rocm: a gfx90a code object (clang + ld.lld); the trixie root
  clang libclang-rt-14-dev
  # tests/rocm/test_hip.py: hipcc and HIP 5.2 build a HIP program for gfx90a. With the packages
  # above: 19 more (clang/lld/llvm 15, comgr, the device libraries), about 65 MB to download and
  # 340 MB installed; unpacking them took 25 s here.
  hipcc libamdhip64-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}" >&2
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
