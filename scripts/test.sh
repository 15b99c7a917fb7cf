#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run): installs what is missing, then
#   1. builds with warnings as errors in ./build and runs every test there (GoogleTest and pytest,
#      all through ctest);
#   2. builds the same project under AddressSanitizer + UndefinedBehaviorSanitizer in ./build-asan
#      and runs the same suite there (scripts/sanitize.sh address,undefined);
#   3. builds the libFuzzer targets with clang in ./build-fuzz and runs each one briefly
#      (scripts/fuzz.sh, GPREEMPT_FUZZ_SECONDS seconds each, default 15).
# Every part runs even when an earlier one failed; the script fails when any did and names them.
# An entry that fails is run again alone (scripts/ctest_retry.sh, GPREEMPT_TEST_RETRIES, default 2):
# one that then passes is reported as FLAKY, not hidden; sanitizer reports fail part 2 regardless.
# GPREEMPT_TEST_ASAN=0 leaves out part 2 and GPREEMPT_TEST_FUZZ=0 part 3, for a quicker local run
# (CI sets neither).
# ThreadSanitizer stays on demand: scripts/sanitize.sh thread (docs/testing.md).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
case ${1:-} in
  -h|--help) sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
  "") ;;
  *) echo "usage: scripts/test.sh [--help]  (GPREEMPT_TEST_ASAN=0 leaves out part 2, GPREEMPT_TEST_FUZZ=0 part 3)" >&2; exit 2 ;;
esac
"$root/scripts/install-deps.sh" || exit 1

failed=()
part() {  # part NAME COMMAND...: runs one part, timed, and remembers a failure
  local name=$1 t0=$SECONDS
  shift
  echo "== test.sh: $name" >&2
  if ! "$@"; then failed+=("$name"); fi
  echo "== test.sh: $name took $((SECONDS - t0)) s" >&2
}
normal() {
  "$root/scripts/build.sh" -DGPREEMPT_WERROR=ON -DGPREEMPT_BUILD_TESTS=ON &&
    (cd "${GPREEMPT_BUILD_DIR:-$root/build}" &&
      "$root/scripts/ctest_retry.sh" --output-on-failure -j"$(nproc)" --timeout 300)
}

part "suite" normal
if [ "${GPREEMPT_TEST_ASAN:-1}" != 0 ]; then
  part "ASan+UBSan suite" env GPREEMPT_BUILD_DIR= "$root/scripts/sanitize.sh" address,undefined
fi
if [ "${GPREEMPT_TEST_FUZZ:-1}" != 0 ]; then
  part "fuzz" "$root/scripts/fuzz.sh" "${GPREEMPT_FUZZ_SECONDS:-15}"
fi
if ((${#failed[@]})); then
  echo "test.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "test.sh: all parts passed" >&2
