#!/usr/bin/env bash
# The main job: install what is missing, build, and run the online/offline preemption demo.
# On a machine with a real AMD GPU (/dev/kfd present) it runs there; everywhere else it runs on the
# simulated MI308X through `kfdsim run`. Extra arguments go to `gpreempt demo`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
bin="${GPREEMPT_BUILD_DIR:-$root/build}/bin"
if [ -e /dev/kfd ] && [ -z "${GPREEMPT_FORCE_SIM:-}" ]; then
  exec "$bin/gpreempt" demo "$@"
fi
exec "$bin/kfdsim" run --profile "${GPREEMPT_SIM_PROFILE:-mi308x}" -- "$bin/gpreempt" demo "$@"
