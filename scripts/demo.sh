#!/usr/bin/env bash
# The main job: install what is missing, build what the demo runs, and run the online/offline
# preemption demo. `gpreempt demo` runs on the real GPU where /dev/kfd exists, and otherwise
# re-runs itself on a private simulated MI308X (kfdsim run --profile mi308x --hardware gpu). Its
# preemption scenarios run through a gpreemptd child. The default is 1000 online requests per
# scenario, six scenarios: about six minutes; `--quick` runs 60 per scenario. Extra arguments go to
# `gpreempt demo` (see `build/bin/gpreempt demo --help`).
# It builds the `demo` target only (gpreempt, gpreemptd, gpreempt-workload, the simulator), in the
# same ./build as scripts/test.sh, which then builds the rest; with --online or --offline (a side
# may be a PyTorch model) the Python package too.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
targets=(demo)
for a in "$@"; do
  case $a in --online|--online=*|--offline|--offline=*) targets=(demo gpreempt_python) ;; esac
done
"$root/scripts/build.sh" "${targets[@]}"
exec "${GPREEMPT_BUILD_DIR:-$root/build}/bin/gpreempt" demo "$@"
