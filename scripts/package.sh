#!/usr/bin/env bash
# Builds the Debian package: gpreempt_<version>_amd64.deb in ./build (or $GPREEMPT_BUILD_DIR),
# holding the install tree under /usr (docs/install.md). Install it with
#   sudo apt install ./build/gpreempt_<version>_amd64.deb
# Arguments go to scripts/build.sh (-DVAR=VALUE: to the configuration).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GPREEMPT_BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh"
GPREEMPT_BUILD_DIR=$build "$root/scripts/build.sh" "$@"
cd "$build"
cpack -G DEB >cpack.log 2>&1 || { cat cpack.log >&2; echo "package.sh: cpack failed" >&2; exit 1; }
deb=$(sed -n 's/^CPack: - package: \(.*\.deb\) generated\.$/\1/p' cpack.log)
[ -n "$deb" ] || { cat cpack.log >&2; echo "package.sh: cpack made no .deb" >&2; exit 1; }
echo "$deb"
