#!/usr/bin/env bash
# Configures ./build (or $GPREEMPT_BUILD_DIR) and builds TARGETs (default: every target, the tests
# included). Every script configures its build directory the same way, so the demo's build and the
# test suite's are one: warnings are errors (GPREEMPT_WERROR, as in CI), the tests are configured
# (building them is what `all` adds), Python is /usr/bin/python3. -DVAR=VALUE arguments are added
# to the configuration (scripts/sanitize.sh gives its own build directory GPREEMPT_SANITIZE).
# A new build directory uses Ninja (its progress line, [done/total]) where it is installed; one
# that exists keeps the generator it was made with. Compiles go through ccache when it is installed.
#
#   scripts/build.sh [TARGET...] [-DVAR=VALUE...]     e.g. scripts/build.sh demo
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GPREEMPT_BUILD_DIR:-$root/build}
case ${1:-} in
  -h|--help) sed -n '2,/^set -eu/{/^set -eu/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
esac
targets=()
defines=()
for a in "$@"; do
  case $a in
    -D*) defines+=("$a") ;;
    -*) echo "build.sh: unknown option $a (scripts/build.sh --help)" >&2; exit 2 ;;
    *) targets+=("$a") ;;
  esac
done
config=(-DPython3_EXECUTABLE=/usr/bin/python3 -DGPREEMPT_WERROR=ON -DGPREEMPT_BUILD_TESTS=ON)
if command -v ccache >/dev/null; then
  config+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null; then
  config+=(-G Ninja)
fi
t0=$SECONDS
echo "build.sh: configuring $build" >&2
cmake -S "$root" -B "$build" "${config[@]}" "${defines[@]}" >/dev/null
echo "build.sh: building ${targets[*]:-every target} with $(nproc) jobs" >&2
if ((${#targets[@]})); then
  cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"
else
  cmake --build "$build" -j"$(nproc)"
fi
echo "build.sh: built in $((SECONDS - t0)) s" >&2
