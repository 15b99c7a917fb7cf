#!/usr/bin/env bash
# Runs ctest in the current build directory with the given arguments; entries that fail are run
# again, alone and one at a time, up to GPREEMPT_TEST_RETRIES more times (default 2). Exits 0 when
# every entry passed in the end, 1 otherwise.
#
# Only the ASan+UBSan part runs through this (scripts/sanitize.sh says why: instrumented simulator
# and daemon processes several times slower against wall-clock limits on CI's 2 cores). A retry
# cannot tell that from a race, which also passes on a later try, so the normal suite
# (scripts/test.sh), ThreadSanitizer and the mutation check run ctest once, without it. Every entry
# that passed only on a retry is named FLAKY and listed in Testing/flaky-entries.txt, to be fixed.
# Sanitizer reports do not depend on this: scripts/sanitize.sh fails the run on any report a
# process wrote, whether its test passed or not.
#
#   scripts/ctest_retry.sh --output-on-failure -j2 --timeout 300
set -uo pipefail
retries=${GPREEMPT_TEST_RETRIES:-2}
flaky_list=Testing/flaky-entries.txt
mkdir -p Testing
: >"$flaky_list"

ctest "$@"
status=$?
[ "$status" = 0 ] && exit 0

failed_list=Testing/Temporary/LastTestsFailed.log
if [ ! -s "$failed_list" ]; then
  echo "ctest_retry.sh: ctest failed ($status) without naming a failed entry: not retried" >&2
  exit 1
fi
# LastTestsFailed.log lines are "NUMBER:NAME".
mapfile -t first_failures < <(cut -d: -f2- "$failed_list")
echo "ctest_retry.sh: ${#first_failures[@]} entr(y/ies) failed; running each again alone (up to $retries times)" >&2
still_failing=()
for name in "${first_failures[@]}"; do
  passed=0
  for ((i = 1; i <= retries; i++)); do
    # The name as an anchored regular expression, its metacharacters escaped.
    regex="^$(printf '%s' "$name" | sed 's/[][\.*^$+?(){}|/]/\\&/g')\$"
    if ctest --output-on-failure --timeout 600 -R "$regex"; then
      passed=1
      break
    fi
  done
  if [ "$passed" = 1 ]; then
    echo "ctest_retry.sh: FLAKY: $name failed, then passed on retry $i" >&2
    echo "$name" >>"$flaky_list"
  else
    still_failing+=("$name")
  fi
done
if [ -s "$flaky_list" ]; then
  echo "ctest_retry.sh: FLAKY entries (failed once, then passed; listed in $PWD/$flaky_list):" >&2
  sed 's/^/  /' "$flaky_list" >&2
fi
if ((${#still_failing[@]})); then
  echo "ctest_retry.sh: FAILED on every try:" >&2
  printf '  %s\n' "${still_failing[@]}" >&2
  exit 1
fi
exit 0
