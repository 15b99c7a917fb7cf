#!/bin/sh
# A sysfs lookup's latency on the simulator with 0, 3 and 8 running workloads, kfdsimd rendering
# only what a lookup reaches (lazy, the default) against rendering every file after any change
# (KFDSIM_EAGER_FILES=1, the behaviour before), alternating in one run so both see the same load.
# Prints the median over RUNS runs of each figure bench_sim_lookup reports, and the load average.
#   bench/sim/lookup_bench.sh [BUILD_DIR] [RUNS] [SECONDS] [WORKLOAD_COUNTS]
# LOOKUP_BENCH_HARDWARE=instant: queues but no execution, so no GPU-model ticks compete with the
# lookups; LOOKUP_BENCH_DIRTY=1 then makes every lookup follow a change (bench_sim_lookup --dirty),
# which isolates what rendering costs against the number of processes and queues.
set -eu
build=${1:-build}
runs=${2:-3}
seconds=${3:-1}
counts=${4:-"0 3 8"}
hardware=${LOOKUP_BENCH_HARDWARE:-gpu}
dirty=
[ "${LOOKUP_BENCH_DIRTY:-0}" = 1 ] && dirty=--dirty
[ -x "$build/bin/bench_sim_lookup" ] || { echo "lookup_bench.sh: no $build/bin/bench_sim_lookup (build the bench_sim_lookup target)" >&2; exit 2; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "hardware $hardware${dirty:+, a change before every lookup}; load before: $(cat /proc/loadavg)"
i=0
while [ "$i" -lt "$runs" ]; do
  for n in $counts; do
    for mode in lazy eager; do
      eager=0
      [ "$mode" = eager ] && eager=1
      line=$(KFDSIM_EAGER_FILES=$eager "$build/bin/kfdsim" run --hardware "$hardware" -- "$build/bin/bench_sim_lookup" $dirty \
        --workloads "$n" --seconds "$seconds" --workload-bin "$build/bin/gpreempt-workload") || {
        echo "lookup_bench.sh: run failed ($mode, $n workloads)" >&2; exit 1; }
      echo "{\"mode\": \"$mode\", \"result\": $line}" >> "$out"
    done
  done
  i=$((i + 1))
done
echo "load after:  $(cat /proc/loadavg)"
/usr/bin/python3 - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
keys = ["per_second", "p50_us", "p99_us", "daemon_refresh_mean_us", "daemon_tick_share"]
print("%-9s %-6s %-5s %10s %10s %10s %12s %10s" % ("workloads", "lookup", "mode", "lookups/s", "p50 us", "p99 us", "refresh us", "tick share"))
for n in sorted({r["result"]["workloads"] for r in rows}):
    for kind in ("pid", "queue", "list"):
        med = {}
        for mode in ("lazy", "eager"):
            sel = [r["result"][kind] for r in rows if r["mode"] == mode and r["result"]["workloads"] == n]
            med[mode] = {k: statistics.median(s[k] for s in sel) for k in keys}
            m = med[mode]
            print("%-9d %-6s %-5s %10.0f %10.1f %10.1f %12.1f %10.2f" % (n, kind, mode, m["per_second"], m["p50_us"], m["p99_us"], m["daemon_refresh_mean_us"], m["daemon_tick_share"]))
        l, e = med["lazy"], med["eager"]
        if l["daemon_refresh_mean_us"] > 0:
            print("%-9s %-6s eager/lazy: refresh service %.1fx, p50 %.2fx" % ("", "", e["daemon_refresh_mean_us"] / l["daemon_refresh_mean_us"], e["p50_us"] / l["p50_us"]))
PY
