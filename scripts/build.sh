#!/usr/bin/env bash
# Configures and builds into ./build (or $GPREEMPT_BUILD_DIR). Extra arguments go to cmake.
# Compiles through ccache when it is installed (scripts/install-deps.sh installs it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GPREEMPT_BUILD_DIR:-$root/build}
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$root" -B "$build" -DPython3_EXECUTABLE=/usr/bin/python3 "${launcher[@]}" "$@" >/dev/null
cmake --build "$build" -j"$(nproc)"
