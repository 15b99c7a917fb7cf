#!/usr/bin/env bash
# Mutation check: applies each small deliberate bug of a mutant list (default scripts/mutants.txt)
# one at a time, rebuilds incrementally in its own build directory, runs the tests meant to catch
# it, restores the file, and reports which mutants survived (a behaviour no test pins) and the
# score = killed / applicable mutants.
#
#   scripts/mutation.sh [--list FILE] [--only ID]... [--full] [--build-dir DIR] [-j N]
#
# --only ID (repeatable) runs those mutants alone, baseline included: a subset when the whole list
# cannot finish in the time there is. --full runs the whole suite for every mutant instead of its
# `tests:` subset (slower, and the honest number when a subset might miss a test elsewhere).
# Exit status: 0 when every applicable mutant was killed, 1 when some survived or could not be
# applied, 2 on usage errors.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
list="$root/scripts/mutants.txt"
build_dir="$root/build-mutation"
jobs=2
full=0
only=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --list) list=$2; shift 2 ;;
    --only) only+=("$2"); shift 2 ;;
    --full) full=1; shift ;;
    --build-dir) build_dir=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "mutation.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ -f "$list" ]] || { echo "mutation.sh: no mutant list at $list" >&2; exit 2; }
# Absolute: the tests run from inside the build directory, and a relative one (--build-dir build)
# would then name a directory that does not exist.
build_dir=$(realpath -m "$build_dir")
python=/usr/bin/python3

# The list as one record per line: id \t file \t build \t tests \t from \t to (tabs never occur in
# the lines we mutate; the parser refuses them).
records=$("$python" - "$list" <<'PY'
import sys
path = sys.argv[1]
blocks, cur, start = [], {}, 0
for no, line in enumerate(open(path, encoding="utf-8").read().split("\n"), 1):
    if line.startswith("#"):
        continue
    if not line.strip():
        if cur: blocks.append((start, cur)); cur = {}
        continue
    key, sep, value = line.partition(": ")
    if not sep or key not in ("id", "file", "from", "to", "build", "tests"):
        sys.exit(f"{path}:{no}: expected '<id|file|from|to|build|tests>: <value>', got {line!r}")
    if "\t" in value:
        sys.exit(f"{path}:{no}: tabs are not supported in values")
    if not cur: start = no
    cur[key] = value
if cur: blocks.append((start, cur))
for start, b in blocks:
    for k in ("id", "file", "from", "to", "tests"):
        if k not in b: sys.exit(f"{path}:{start}: mutant block without '{k}:'")
    print("\t".join([b["id"], b["file"], b.get("build", ""), b["tests"], b["from"], b["to"]]))
PY
)

export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}
export CMAKE_C_COMPILER_LAUNCHER=${CMAKE_C_COMPILER_LAUNCHER:-ccache}
cmake -S "$root" -B "$build_dir" -DPython3_EXECUTABLE=/usr/bin/python3 -DGPREEMPT_WERROR=ON \
  -DGPREEMPT_BUILD_TESTS=ON >/dev/null

backup=$(mktemp)
mutated=""
restore() {
  if [[ -n "$mutated" ]]; then
    # A plain copy (new mtime) so that the next build recompiles the original.
    cp "$backup" "$root/$mutated"
    mutated=""
  fi
}
trap 'restore; rm -f "$backup"' EXIT
trap 'restore; exit 130' INT TERM

build() {  # build [targets...]
  local args=()
  for t in "$@"; do args+=(--target "$t"); done
  cmake --build "$build_dir" -j"$jobs" "${args[@]}" >"$build_dir/mutation-build.log" 2>&1
}
run_tests() {  # run_tests REGEX -> ctest's status
  local sel=()
  [[ $full -eq 1 ]] || sel=(-R "$1")
  (cd "$build_dir" && ctest -j"$jobs" --timeout 120 "${sel[@]}" >"$build_dir/mutation-ctest.log" 2>&1)
}

# --only: the baseline and the loop below see the selected mutants only (an unknown id is a usage
# error), so that a subset costs the subset's builds and tests.
if [[ ${#only[@]} -gt 0 ]]; then
  for id in "${only[@]}"; do
    grep -qxF -- "$id" <<<"$(cut -f1 <<<"$records")" || { echo "mutation.sh: no mutant '$id' in $list" >&2; exit 2; }
  done
  records=$(awk -F'\t' 'NR == FNR { want[$0] = 1; next } want[$1]' <(printf '%s\n' "${only[@]}") - <<<"$records")
fi

# The targets the selected tests need: the union of the mutants' `build:` fields, or everything
# when one of them has none or the whole suite runs.
baseline_targets=()
if [[ $full -eq 0 ]] && ! cut -f3 <<<"$records" | grep -qx ''; then
  read -r -a baseline_targets <<<"$(cut -f3 <<<"$records" | tr ' ' '\n' | sort -u | paste -sd' ')"
fi
echo "baseline: building ${baseline_targets[*]:-everything} and running the selected tests without mutants"
build "${baseline_targets[@]}"
union=$(cut -f4 <<<"$records" | paste -sd'|')
if ! run_tests "$union"; then
  echo "mutation.sh: the tests fail without any mutant; see $build_dir/mutation-ctest.log" >&2
  exit 1
fi

report="$build_dir/mutation-report.txt"
: >"$report"
killed=0 survived=0 invalid=0
start_all=$SECONDS
while IFS=$'\t' read -r id file targets tests from to; do
  t0=$SECONDS
  path="$root/$file"
  count=$( [[ -f "$path" ]] && grep -cxF -- "$from" "$path" || true)
  if [[ "$count" != 1 ]]; then
    result="NOT-APPLIED (line found ${count:-0} times in $file)"
    invalid=$((invalid + 1))
  else
    cp "$path" "$backup"
    mutated=$file
    "$python" - "$path" "$from" "$to" <<'PY'
import sys
path, old, new = sys.argv[1:]
lines = open(path, encoding="utf-8").read().split("\n")
lines[lines.index(old)] = new
open(path, "w", encoding="utf-8").write("\n".join(lines))
PY
    [[ $full -eq 1 ]] && targets=""
    # shellcheck disable=SC2086
    if ! build $targets; then
      result="NOT-APPLIED (does not compile; see $build_dir/mutation-build.log)"
      invalid=$((invalid + 1))
    elif run_tests "$tests"; then
      result="SURVIVED"
      survived=$((survived + 1))
    else
      failing=$(grep -E '^\s+[0-9]+ - .* \((Failed|Timeout|SEGFAULT|Subprocess aborted|Exception)' \
                 "$build_dir/mutation-ctest.log" | sed -E 's/^\s+[0-9]+ - //; s/ \(.*//' | head -5 | paste -sd' ')
      result="killed by: ${failing:-ctest failure}"
      killed=$((killed + 1))
    fi
    restore
  fi
  printf '%-40s %-s  [%ds]\n' "$id" "$result" $((SECONDS - t0)) | tee -a "$report"
done <<<"$records"

# Leave the build directory matching the restored sources.
build "${baseline_targets[@]}" || true
applicable=$((killed + survived))
score=$([[ $applicable -gt 0 ]] && echo "$((100 * killed / applicable))%" || echo "n/a")
summary="mutation score: $killed killed / $applicable applicable = $score ($survived survived, $invalid not applied; $((SECONDS - start_all)) s)"
echo "$summary" | tee -a "$report"
echo "report: $report"
[[ $survived -eq 0 && $invalid -eq 0 ]]
