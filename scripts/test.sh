#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds with warnings as errors, runs every test
# (GoogleTest and pytest, all through ctest). The last line is ctest's summary.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" -DGPREEMPT_WERROR=ON -DGPREEMPT_BUILD_TESTS=ON
cd "${GPREEMPT_BUILD_DIR:-$root/build}"
exec ctest --output-on-failure -j"$(nproc)" --timeout 300
