#!/usr/bin/env bash
# The main job: install what is missing, build, and run the online/offline preemption demo.
# `gpreempt demo` runs on the real GPU where /dev/kfd exists, and otherwise re-runs itself on a
# private simulated MI308X (kfdsim run --profile mi308x --hardware gpu). Its preemption scenarios
# run through a gpreemptd child (built by scripts/build.sh). The default is 1000 online requests
# per scenario, six scenarios: about six minutes; `--quick` runs 60 per scenario. Extra arguments
# go to `gpreempt demo` (see `build/bin/gpreempt demo --help`).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
exec "${GPREEMPT_BUILD_DIR:-$root/build}/bin/gpreempt" demo "$@"
