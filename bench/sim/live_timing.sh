#!/bin/sh
# How far the live simulator's latencies are from the GPU model's own: one online preset alone on a
# simulated machine (gpreempt-workload under kfdsim run, wall clock) against the same requests in
# the discrete-event engine (gpreempt-des, simulated time, the same GPU model), RUNS times each.
# Prints every run, then the medians, live p99/p50 and live p50 - DES p50 (issue 25 item 6's
# targets: p99 <= 2 x p50, p50 within 0.3 ms of the DES's), and the load average, since on a
# shared machine the host's other work shows in the live tail.
#   bench/sim/live_timing.sh [BUILD_DIR] [RUNS] [REQUESTS] [RATE_HZ] [PRESET] [PROFILE]
# Defaults: build 3 1000 20 cnn mi308x (50 s of arrivals per live run). Run i uses seed i for the
# Poisson arrivals of both engines (their generators differ: same rate, not the same instants).
# The DES replays the preset's request from `gpreempt-workload presets --json`
# (online_request_des), so both engines price the same kernels.
set -eu
build=${1:-build}
runs=${2:-3}
requests=${3:-1000}
rate=${4:-20}
preset=${5:-cnn}
profile=${6:-mi308x}
for b in kfdsim gpreempt-workload gpreempt-des; do
  [ -x "$build/bin/$b" ] || { echo "live_timing.sh: no $build/bin/$b (build the $b target)" >&2; exit 2; }
done
out=$(mktemp)
spec=$(mktemp)
trap 'rm -f "$out" "$spec"' EXIT
# Arrivals end at the request count; the duration only bounds a run that falls behind.
duration=$(/usr/bin/python3 -c "print(int($requests / $rate * 2 + 30))")
echo "preset $preset alone, $requests requests at $rate req/s (Poisson), profile $profile, $runs runs"
echo "load before: $(cat /proc/loadavg)"
i=1
while [ "$i" -le "$runs" ]; do
  "$build/bin/gpreempt-workload" presets --json | /usr/bin/python3 -c '
import json, sys
preset, rate, n, seed, profile = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
p = next(p for p in json.load(sys.stdin)["presets"] if p["name"] == preset)
json.dump({"profile": profile, "seed": seed, "baseline": "none",
           "online": [{"name": preset, "arrival": {"kind": "poisson", "rate_hz": rate}, "requests": n,
                       "kernels": p["online_request_des"]}],
           "record": {"latencies": False, "decisions": False}}, sys.stdout)' \
    "$preset" "$rate" "$requests" "$i" "$profile" > "$spec"
  des=$("$build/bin/gpreempt-des" --spec "$spec" --no-wall-clock) || { echo "live_timing.sh: gpreempt-des failed" >&2; exit 1; }
  live=$("$build/bin/kfdsim" run --profile "$profile" -- "$build/bin/gpreempt-workload" online --preset "$preset" \
    --rate "$rate" --requests "$requests" --duration "$duration" --preprocess-us 0 --seed "$i" --json) || {
    echo "live_timing.sh: live run $i failed" >&2; exit 1; }
  printf '%s\n' "$des" | /usr/bin/python3 -c '
import json, sys
des = next(c for c in json.load(sys.stdin)["clients"] if c["kind"] == "online")
live = json.loads(sys.argv[1])
row = {"run": int(sys.argv[2]), "live_requests": live["requests_completed"], "live_p50": live["latency_ms"]["p50"],
       "live_p99": live["latency_ms"]["p99"], "live_max": live["latency_ms"]["max"],
       "des_p50": des["p50_ms"], "des_p99": des["p99_ms"], "load": open("/proc/loadavg").read().split()[0]}
print(json.dumps(row))' "$live" "$i" >> "$out"
  tail -n 1 "$out"
  i=$((i + 1))
done
echo "load after:  $(cat /proc/loadavg)"
/usr/bin/python3 - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
m = {k: statistics.median(r[k] for r in rows) for k in ("live_p50", "live_p99", "live_max", "des_p50", "des_p99")}
ratio = statistics.median(r["live_p99"] / r["live_p50"] for r in rows)
gap = statistics.median(r["live_p50"] - r["des_p50"] for r in rows)
print("median of %d runs (ms)   p50     p99     max" % len(rows))
print("live (kfdsim, wall)    %6.3f  %6.3f  %6.3f" % (m["live_p50"], m["live_p99"], m["live_max"]))
print("DES (simulated time)   %6.3f  %6.3f" % (m["des_p50"], m["des_p99"]))
print("live p99/p50 %.2f (target <= 2); live p50 - DES p50 %.3f ms (target <= 0.3)" % (ratio, gap))
PY
