#!/usr/bin/env bash
# Makes a Debian trixie root with ROCm 6.1 user space (rocminfo, ROCr, libhsakmt; rocm-smi) for
# the tests that need a runtime with the upstream RUNTIME_ENABLE handshake (ROCm >= 5.7). Debian's
# own debootstrap from the Debian mirror, about 1.5 minutes; needs root (chroot). Idempotent: an
# existing root with rocminfo is left as it is.
#
#   scripts/make-trixie-root.sh [DIR]     default: $GPREEMPT_TRIXIE_ROOT or /var/tmp/gpreempt-trixie
#
# Tests find the root through GPREEMPT_TRIXIE_ROOT (or the default) and skip, saying so, without it.
set -euo pipefail
case ${1:-} in
  -h|--help) sed -n '2,/^set -eu/{/^set -eu/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
esac
dir=${1:-${GPREEMPT_TRIXIE_ROOT:-/var/tmp/gpreempt-trixie}}
if [ -x "$dir/usr/bin/rocminfo" ]; then
  echo "make-trixie-root: $dir already has rocminfo" >&2
  exit 0
fi
command -v debootstrap >/dev/null || { echo "make-trixie-root: needs debootstrap (apt-get install debootstrap)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "make-trixie-root: needs root (debootstrap, chroot)" >&2; exit 1; }
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
t0=$SECONDS
debootstrap --variant=minbase --include=rocminfo,libhsa-runtime64-1,rocm-smi,python3,kmod \
  trixie "$dir" "$mirror"
echo "make-trixie-root: $dir ready in $((SECONDS - t0)) s" >&2
