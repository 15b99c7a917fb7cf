#!/bin/sh
# Two builds of the discrete-event engine on the same points: whether their output is the same
# byte for byte (gpreempt-des --no-wall-clock), and the CPU each takes, RUNS alternating runs per
# spec, median of each and their ratio. For a change to the GPU model or the engine that must not
# move any figure (docs/evaluation-des.md, *Speed*, was measured with it).
#   bench/des/compare_engines.sh BASELINE_DES NEW_DES RUNS SPEC.json...
# e.g. a worktree of the last commit built with `scripts/build.sh gpreempt-des`, against ./build:
#   bench/des/compare_engines.sh ../base/build/bin/gpreempt-des build/bin/gpreempt-des 3 point.json
# A spec of `gpreempt eval run` is the `spec` of a point of its results.json only when its traces
# and lengths are inline; `gpreempt eval` builds whole ones (experiments.EXPERIMENTS[name].points).
# Exit status 1 when any output differs, 2 on usage errors.
set -eu
[ $# -ge 4 ] || { sed -n '2,/^set -eu/{/^set -eu/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2; }
base=$1
new=$2
runs=$3
shift 3
for b in "$base" "$new"; do
  [ -x "$b" ] || { echo "compare_engines.sh: $b is not an executable" >&2; exit 2; }
done
case $runs in ''|*[!0-9]*|0) echo "compare_engines.sh: RUNS must be a positive integer, not $runs" >&2; exit 2 ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# CPU seconds (user + system) of one run: GNU time's %U and %S.
cpu() {
  /usr/bin/time -f '%U %S' -o "$tmp/time" "$1" --no-wall-clock --spec "$2" --out "$3" 2>"$tmp/err" ||
    { echo "compare_engines.sh: $1 failed on $2: $(tail -n 3 "$tmp/err")" >&2; exit 1; }
  awk '{print $1 + $2}' "$tmp/time"
}
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
differ=0
printf '%-40s %10s %10s %7s  %s\n' spec base_cpu_s new_cpu_s ratio output
for spec in "$@"; do
  : >"$tmp/b"
  : >"$tmp/n"
  i=0
  while [ "$i" -lt "$runs" ]; do
    cpu "$base" "$spec" "$tmp/base.json" >>"$tmp/b"
    cpu "$new" "$spec" "$tmp/new.json" >>"$tmp/n"
    i=$((i + 1))
  done
  if cmp -s "$tmp/base.json" "$tmp/new.json"; then same=identical; else same=DIFFERS; differ=1; fi
  b=$(median <"$tmp/b")
  n=$(median <"$tmp/n")
  printf '%-40s %10.3f %10.3f %7s  %s\n' "$(basename "$spec")" "$b" "$n" \
    "$(awk -v b="$b" -v n="$n" 'BEGIN {if (n > 0 && b > 0) printf "%.2fx", b / n; else print "-"}')" "$same"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); median of $runs alternating runs each; ratio = base / new CPU"
exit "$differ"
