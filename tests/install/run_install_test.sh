#!/usr/bin/env bash
# Installs the `gpreempt` component of a build into a staging prefix, then checks what a user of
# the installed package gets: find_package(gpreempt) from an external CMake project, pkg-config,
# the libgpreempt_poc.so compatibility name, and a library that exports only the C API.
set -euo pipefail
build=$1
src=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/gpreempt-install-XXXXXX)
trap 'rm -rf "$work"' EXIT
stage=$work/stage

cmake --install "$build" --prefix "$stage" --component gpreempt >/dev/null
lib=$(ls -d "$stage"/lib* | head -1)

test -f "$stage/include/gpreempt/gpreempt.h" || { echo "header not installed"; exit 1; }
test -L "$lib/libgpreempt_poc.so" || { echo "libgpreempt_poc.so not installed"; exit 1; }
readlink -e "$lib/libgpreempt_poc.so" >/dev/null || { echo "libgpreempt_poc.so dangles"; exit 1; }
soname=$(objdump -p "$lib/libgpreempt.so" | awk '/SONAME/ {print $2}')
[ "$soname" = "libgpreempt.so.0" ] || { echo "unexpected soname '$soname'"; exit 1; }
extra=$(nm -D --defined-only "$lib/libgpreempt.so" | awk '$2 != "A" {print $3}' | grep -v '^gpreempt_' || true)
[ -z "$extra" ] || { echo "exports beyond the C API:"; echo "$extra" | head; exit 1; }

# find_package from an external project
cmake -S "$src/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$stage" >/dev/null
cmake --build "$work/consumer" >/dev/null
LD_LIBRARY_PATH="$lib" "$work/consumer/consumer"

# pkg-config (relocatable .pc)
flags=$(PKG_CONFIG_PATH="$lib/pkgconfig" pkg-config --cflags --libs gpreempt)
cc -o "$work/pc_consumer" "$src/consumer/consumer.c" $flags
LD_LIBRARY_PATH="$lib" "$work/pc_consumer"

# ctypes by the compatibility name, as the user's code does
LD_LIBRARY_PATH="$lib" /usr/bin/python3 -c '
import ctypes
lib = ctypes.CDLL("libgpreempt_poc.so")
lib.gpreempt_version_string.restype = ctypes.c_char_p
print("ctypes loaded libgpreempt_poc.so", lib.gpreempt_version_string().decode())
'
echo "install test passed"
