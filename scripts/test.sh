#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds with warnings as errors, runs every test
# (GoogleTest and pytest, all through ctest) in ./build. GPREEMPT_TEST_ASAN=1 also builds and runs
# the same suite under AddressSanitizer + UndefinedBehaviorSanitizer in ./build-asan
# (scripts/sanitize.sh); it is off by default until that suite is clean (README). Each part ends
# with ctest's summary.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" -DGPREEMPT_WERROR=ON -DGPREEMPT_BUILD_TESTS=ON
(cd "${GPREEMPT_BUILD_DIR:-$root/build}" && ctest --output-on-failure -j"$(nproc)" --timeout 300)
if [ "${GPREEMPT_TEST_ASAN:-0}" != 0 ]; then
  GPREEMPT_BUILD_DIR= "$root/scripts/sanitize.sh" address,undefined
fi
