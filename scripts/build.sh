#!/usr/bin/env bash
# Configures and builds into ./build (or $GPREEMPT_BUILD_DIR). Extra arguments go to cmake.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GPREEMPT_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -DPython3_EXECUTABLE=/usr/bin/python3 "$@" >/dev/null
cmake --build "$build" -j"$(nproc)"
