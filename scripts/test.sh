#!/usr/bin/env bash
# The test suite: installs what is missing, builds every target in ./build (or $GPREEMPT_BUILD_DIR;
# the same configuration as scripts/demo.sh, so a build the demo made is reused) and runs every
# test through ctest: GoogleTest and pytest, the simulator, the daemon, the install tree.
# Arguments go to ctest, e.g. scripts/test.sh -R '^CoreSession\.' (every test is its own entry).
# No entry is run again when it fails: a failure is a failure (docs/testing.md).
# CI (.ci/run) runs this, then the same suite under ASan+UBSan (scripts/sanitize.sh) and the
# fuzzers (scripts/fuzz.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
case ${1:-} in
  -h|--help) sed -n '2,/^set -eu/{/^set -eu/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
esac
"$root/scripts/install-deps.sh"
t0=$SECONDS
"$root/scripts/build.sh"
cd "${GPREEMPT_BUILD_DIR:-$root/build}"
status=0
ctest --output-on-failure -j"$(nproc)" --timeout 300 "$@" || status=$?
echo "test.sh: $( ((status)) && echo FAILED || echo passed ) in $((SECONDS - t0)) s, build included" >&2
exit "$status"
