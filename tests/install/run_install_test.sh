#!/usr/bin/env bash
# Installs a build into a temporary prefix (cmake --install <build> --prefix P, every component) and
# uses it from there as a user would, with nothing of the build tree on any path:
#   the programs (P/bin/gpreempt, gpreempt-workload) with no LD_LIBRARY_PATH (relative RPATH);
#   the simulator: P/bin/kfdsim run -- P/bin/gpreempt info (kfdsim finds kfdsimd and the shim
#   relative to itself);
#   the Python package: PYTHONPATH=P/<dir> for this prefix, and for /usr and /usr/local the
#   directory /usr/bin/python3 searches without PYTHONPATH;
#   an external CMake project (find_package(gpreempt)), a C program built with
#   `pkg-config --cflags --libs gpreempt`, and ctypes loading libgpreempt_poc.so by name
#   (LD_LIBRARY_PATH=P/lib) and by absolute path;
#   and that libgpreempt.so exports only the C API.
# Usage: run_install_test.sh <build-dir>
set -euo pipefail
build=$1
src=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/gpreempt-install-XXXXXX)
trap 'rm -rf "$work"' EXIT
stage=$work/prefix

fail() { echo "install test: $*" >&2; exit 1; }

# Nothing from the caller's environment may point into the build tree.
unset LD_LIBRARY_PATH PYTHONPATH KFDSIM_DAEMON KFDSIM_SHIM KFDSIM_DIR KFDSIM_SOCKET
# Sanitizer builds (GPREEMPT_SANITIZE): programs that are not instrumented (python3, the C
# consumers) load instrumented libraries, so the sanitizer runtime is preloaded first for them;
# the interpreter's own allocations at exit are not ours to report.
preload=${GPREEMPT_SANITIZER_PRELOAD:-}
plain() { if [ -n "$preload" ]; then LD_PRELOAD=$preload "$@"; else "$@"; fi; }
py() { if [ -n "$preload" ]; then LD_PRELOAD=$preload ASAN_OPTIONS=detect_leaks=0 "$@"; else "$@"; fi; }

cmake --install "$build" --prefix "$stage" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install failed"; }
libdir=$(sed -n 's/^libdir=\${prefix}\///p' "$stage"/lib*/pkgconfig/gpreempt.pc 2>/dev/null | head -1)
[ -n "$libdir" ] || fail "no pkgconfig/gpreempt.pc under $stage/lib*"
lib=$stage/$libdir

# --- what is installed ---------------------------------------------------------------------------
for f in bin/gpreempt bin/kfdsim bin/kfdsimd bin/gpreempt-workload include/gpreempt/gpreempt.h \
         "$libdir/libkfdshim.so" "$libdir/libsimrt.so" "$libdir/cmake/gpreempt/gpreemptConfig.cmake"; do
  test -e "$stage/$f" || fail "$f not installed"
done
test -L "$lib/libgpreempt_poc.so" || fail "libgpreempt_poc.so not installed"
readlink -e "$lib/libgpreempt_poc.so" >/dev/null || fail "libgpreempt_poc.so dangles"
soname=$(objdump -p "$lib/libgpreempt.so" | awk '/SONAME/ {print $2}')
[ "$soname" = "libgpreempt.so.0" ] || fail "unexpected soname '$soname'"
extra=$(nm -D --defined-only "$lib/libgpreempt.so" | awk '$2 != "A" {print $3}' | grep -v '^gpreempt_' || true)
[ -z "$extra" ] || { echo "$extra" | head; fail "libgpreempt.so exports beyond the C API"; }

# --- the programs run from the prefix, without LD_LIBRARY_PATH -------------------------------------
for p in gpreempt gpreempt-workload kfdsim kfdsimd; do
  "$stage/bin/$p" --help >"$work/help.txt" 2>&1 || { cat "$work/help.txt"; fail "P/bin/$p --help failed"; }
  # Every library the program loads must come from the prefix or the system, never the build tree.
  if ldd "$stage/bin/$p" | grep -F "$build" >&2; then fail "P/bin/$p loads libraries from the build tree"; fi
done

# --- the simulator from the prefix ----------------------------------------------------------------
out=$("$stage/bin/kfdsim" run -- "$stage/bin/gpreempt" info 2>&1) \
  || { echo "$out"; fail "P/bin/kfdsim run -- P/bin/gpreempt info failed"; }
grep -q "ioctl interface [0-9]" <<<"$out" || { echo "$out"; fail "gpreempt info under kfdsim printed no KFD version"; }
# kfdsim run preloads the installed shim (found relative to P/bin/kfdsim).
out=$("$stage/bin/kfdsim" run -- /bin/sh -c 'echo "$LD_PRELOAD"' 2>&1) || { echo "$out"; fail "P/bin/kfdsim run -- sh failed"; }
grep -qF "$lib/libkfdshim.so" <<<"$out" || { echo "$out"; fail "kfdsim run did not preload $lib/libkfdshim.so"; }
# The shim alone starts the installed daemon (found relative to the shim's own directory).
KFDSIM_DIR=$work/machine LD_PRELOAD=${preload:+$preload:}$lib/libkfdshim.so "$stage/bin/gpreempt" info >"$work/info.txt" 2>&1 \
  || { cat "$work/info.txt"; fail "LD_PRELOAD=P/lib/libkfdshim.so P/bin/gpreempt info failed"; }
"$stage/bin/kfdsim" --dir "$work/machine" stop >/dev/null 2>&1 || true

# --- Python ------------------------------------------------------------------------------------------
init=$(cd "$stage" && find . -path '*/gpreempt/__init__.py' | head -1)
[ -n "$init" ] || fail "Python package not installed under $stage"
pydir=$stage/$(dirname "$(dirname "${init#./}")")
PYTHONPATH=$pydir py /usr/bin/python3 -c '
import sys, gpreempt
assert gpreempt.__file__.startswith(sys.argv[1] + "/"), gpreempt.__file__
print("python: gpreempt", gpreempt.__version__, "from", gpreempt.__file__)
' "$pydir" || fail "import gpreempt from $pydir failed"
PYTHONPATH=$pydir "$stage/bin/kfdsim" run -- env ASAN_OPTIONS=detect_leaks=0 /usr/bin/python3 -c '
import gpreempt
with gpreempt.Context() as ctx:
    print("python under kfdsim: KFD %d.%d" % ctx.kfd_version)
' || fail "the installed Python package cannot open the simulated KFD"
# For the standard prefixes the package lands where /usr/bin/python3 looks without PYTHONPATH.
for std in /usr /usr/local; do
  DESTDIR=$work/destdir cmake --install "$build" --prefix "$std" --component python >/dev/null
  found=$(cd "$work/destdir$std" && find . -path '*/gpreempt/__init__.py' | head -1)
  [ -n "$found" ] || fail "prefix $std: Python package not installed"
  dir=$std/$(dirname "$(dirname "${found#./}")")
  /usr/bin/python3 -c 'import sys; sys.exit(sys.argv[1] not in sys.path)' "$dir" \
    || fail "prefix $std: Python package installed in $dir, which /usr/bin/python3 does not search"
  rm -rf "$work/destdir"
done

# --- an external CMake project: find_package(gpreempt) --------------------------------------------
cmake -S "$src/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$stage" >"$work/consumer.log" 2>&1 \
  || { cat "$work/consumer.log"; fail "find_package(gpreempt) failed"; }
cmake --build "$work/consumer" >>"$work/consumer.log" 2>&1 || { cat "$work/consumer.log"; fail "consumer build failed"; }
plain "$work/consumer/consumer" || fail "the find_package consumer failed"

# --- pkg-config (relocatable .pc) -----------------------------------------------------------------
flags=$(PKG_CONFIG_PATH="$lib/pkgconfig" pkg-config --cflags --libs gpreempt) || fail "pkg-config gpreempt failed"
cc -o "$work/pc_consumer" "$src/consumer/consumer.c" $flags || fail "build with pkg-config flags failed"
LD_LIBRARY_PATH="$lib" plain "$work/pc_consumer" || fail "the pkg-config consumer failed"

# --- ctypes, as the user's code loads it ------------------------------------------------------------
ctypes_check='
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.gpreempt_version_string.restype = ctypes.c_char_p
print("ctypes loaded", sys.argv[1], lib.gpreempt_version_string().decode())
'
LD_LIBRARY_PATH="$lib" py /usr/bin/python3 -c "$ctypes_check" libgpreempt_poc.so \
  || fail "ctypes.CDLL(\"libgpreempt_poc.so\") with LD_LIBRARY_PATH=$lib failed"
py /usr/bin/python3 -c "$ctypes_check" "$lib/libgpreempt_poc.so" \
  || fail "ctypes.CDLL(\"$lib/libgpreempt_poc.so\") failed"
echo "install test passed"
