#!/usr/bin/env bash
# Builds the whole project with sanitizers into its own build directory and runs the whole suite
# there (GoogleTest, pytest, the simulator, the install test: everything ctest runs).
#   scripts/sanitize.sh address,undefined   ASan + UBSan (leaks detected, UB aborts), in build-asan
#   scripts/sanitize.sh thread              TSan, in build-tsan
# Extra arguments go to ctest (e.g. -R Sim). GPREEMPT_BUILD_DIR overrides the build directory.
# CI (.ci/run) runs the ASan+UBSan suite after the normal one; see docs/testing.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage() { echo "usage: scripts/sanitize.sh address,undefined|thread [ctest arguments...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
kind=$1; shift
case $kind in
  address,undefined|asan) kind=address,undefined; name=asan ;;
  thread|tsan) kind=thread; name=tsan ;;
  *) usage ;;
esac
build=${GPREEMPT_BUILD_DIR:-$root/build-$name}

# Reports must fail the test that caused them: UB aborts (-fno-sanitize-recover), leaks and races
# exit non-zero. Processes started by tests inherit these settings.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
# Python processes that C++ tests start (the demo's model workloads, the shim's Python reader) leak
# what CPython and PyTorch keep until exit, like the pytest entries: the same suppressions (they
# only match stacks through python3 or those libraries, so our programs' own leaks still fail).
# intercept_tls_get_addr=0: GCC 12's LeakSanitizer (Debian's libasan8) crashes at exit ("Tracer
# caught signal 11 ... LeakSanitizer has encountered a fatal error") in a process with a thread that
# used the dynamic TLS of a dlopen'd library (Python's extension modules, PyTorch's). Its
# __tls_get_addr interceptor takes any such block that starts 16 bytes past a page boundary for
# glibc 2.19's layout and reads the two words before it, ASan's own chunk header under glibc 2.36,
# as the block's start and size; the tracer then scans that wild range. Off, the blocks are still
# scanned: they are heap blocks reached through the thread's DTV. (Later runtimes ask the allocator
# for the block's bounds instead.) The same for the pytest entries: cmake/GpreemptTesting.cmake.
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/tests/python/lsan-python.supp:intercept_tls_get_addr=0}

# A report from a daemon (gpreemptd, kfdsimd) or a child whose stderr no test reads, or whose exit
# status nobody checks, would go unseen: every process writes its reports to a file here
# (log_path; the file is <prefix>.<pid>), and the run fails when any holds a report, whether the
# test around it passed or not (so a test that passes on a retry, scripts/ctest_retry.sh, cannot
# hide one).
reports=$build/sanitizer-reports
rm -rf "$reports"
mkdir -p "$reports"
if [ "$kind" = thread ]; then
  export TSAN_OPTIONS="$TSAN_OPTIONS:log_path=$reports/tsan"
else
  export ASAN_OPTIONS="$ASAN_OPTIONS:log_path=$reports/asan"
  export UBSAN_OPTIONS="$UBSAN_OPTIONS:log_path=$reports/ubsan"
fi

"$root/scripts/install-deps.sh"
GPREEMPT_BUILD_DIR=$build "$root/scripts/build.sh" -DGPREEMPT_SANITIZE="$kind"
cd "$build"
echo "sanitize.sh: running the suite under $kind in $build" >&2
status=0
# Under ASan+UBSan, and only there, a failed entry runs again alone (scripts/ctest_retry.sh): the
# instrumented simulator and daemon run 3-10 times slower, and with the two jobs of CI's 2 cores an
# entry that waits for the simulated GPU against a client's or rig's wall-clock limit (e.g. the
# 5 s `gpreempt ctl` waits for gpreemptd's reply) can be overtaken; the retry is named FLAKY in
# the output. A report still fails the run below, retry or not. ThreadSanitizer
# runs on demand and never retries.
if [ "$kind" = thread ]; then
  ctest --output-on-failure -j"$(nproc)" --timeout 600 "$@" || status=$?
else
  "$root/scripts/ctest_retry.sh" --output-on-failure -j"$(nproc)" --timeout 600 "$@" || status=$?
fi
# The files hold reports and the runtime's warnings (e.g. ASan's about swapcontext): only reports
# fail the run.
report_pattern='ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|WARNING: ThreadSanitizer|ThreadSanitizer: (reported|data race)'
written=$(grep -lE "$report_pattern" -r "$reports" 2>/dev/null | sort || true)
if [ -n "$written" ]; then
  echo "sanitize.sh: $(echo "$written" | wc -l) process(es) wrote a sanitizer report:" >&2
  for f in $written; do
    echo "== $f" >&2
    head -n 80 "$f" >&2
  done
  status=1
else
  echo "sanitize.sh: no $kind report from any process" >&2
fi
exit "$status"
