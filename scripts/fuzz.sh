#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang in their own build directory and runs each for
# SECONDS seconds (default 20: the short CI run; give e.g. 600 or 3600 for a long run on demand),
# one after the other. Fails when any target finds a crash, a sanitizer report, a leak, a timeout
# or an allocation beyond the memory limits; the input that did it is kept under
# build-fuzz/fuzz/artifacts/. Corpora grow in build-fuzz/fuzz/corpus/<target>/work across runs.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      e.g. scripts/fuzz.sh 180 fuzz_mqds
#
# Environment: GPREEMPT_FUZZ_BUILD_DIR (default <repo>/build-fuzz), GPREEMPT_FUZZ_JOBS (build -j).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-20}
shift || true
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "usage: $0 [SECONDS] [TARGET...]" >&2; exit 2; }
build=${GPREEMPT_FUZZ_BUILD_DIR:-$root/build-fuzz}
command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found (scripts/install-deps.sh installs it)" >&2; exit 1; }

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ "${launcher[@]}" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPREEMPT_FUZZ=ON -DGPREEMPT_BUILD_TESTS=OFF \
  -DGPREEMPT_BUILD_PYTHON=OFF -DGPREEMPT_WERROR=OFF >/dev/null
cmake --build "$build" --target gpreempt_fuzz -j"${GPREEMPT_FUZZ_JOBS:-2}"

targets=("$@")
if ((${#targets[@]} == 0)); then
  for exe in "$build"/bin/fuzz_*; do targets+=("$(basename "$exe")"); done
fi
mkdir -p "$build/fuzz/artifacts"
failed=()
for t in "${targets[@]}"; do
  exe="$build/bin/$t"
  [[ -x "$exe" ]] || { echo "fuzz.sh: no fuzz target $t" >&2; exit 2; }
  work="$build/fuzz/corpus/$t/work"
  mkdir -p "$work" "$build/fuzz/corpus/$t/seeds"
  echo "== $t: ${seconds}s"
  # -max_len: the seed captures are up to 800 KB; their first 64 KiB hold every record shape.
  # -malloc_limit_mb: a decoder allocating hundreds of MB on a 64 KiB input is a bug (issue 11).
  if "$exe" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=256 \
      -print_final_stats=1 -artifact_prefix="$build/fuzz/artifacts/$t-" \
      "$work" "$build/fuzz/corpus/$t/seeds" 2>"$build/fuzz/$t.log"; then
    grep -E "^stat::(number_of_executed_units|peak_rss_mb)|^Done" "$build/fuzz/$t.log" || true
    echo "   $t: clean for ${seconds}s"
  else
    tail -n 40 "$build/fuzz/$t.log" >&2
    echo "   $t: FAILED (log: $build/fuzz/$t.log, input: $build/fuzz/artifacts/$t-*)" >&2
    failed+=("$t")
  fi
done
if ((${#failed[@]})); then
  echo "fuzz.sh: failing targets: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz.sh: ${#targets[@]} target(s) clean for ${seconds}s each"
