#!/usr/bin/env bash
# Installs the build into a scratch prefix and builds two consumers from it
# alone: one with pkg-config, one with find_package(mountrouter).  Checks the
# shared object's soname and that it exports only the mr_ API.
#   test_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT

cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name 'libmountrouter.so.0' | head -1)")

soname=$(objdump -p "$libdir/libmountrouter.so.0" | awk '/SONAME/ {print $2}')
[[ $soname == libmountrouter.so.0 ]] || { echo "soname is '$soname'"; exit 1; }
leaked=$(nm -D --defined-only "$libdir/libmountrouter.so.0" | awk '{print $3}' | grep -v '^mr_' | grep -v '^MOUNTROUTER_' || true)
[[ -z $leaked ]] || { echo "exported beyond the mr_ API: $leaked"; exit 1; }
[[ -f $prefix/share/man/man1/mountwatch.1 || ! -f $build/examples/mountwatch ]] ||
	{ echo "mountwatch.1 not installed"; exit 1; }

export PKG_CONFIG_PATH=$libdir/pkgconfig
cc -o "$prefix/pc-consumer" "$src/tests/install/consumer.c" $(pkg-config --cflags --libs mountrouter)
LD_LIBRARY_PATH=$libdir "$prefix/pc-consumer"

cmake -S "$src/tests/install" -B "$prefix/cmake-consumer" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/cmake-consumer" >/dev/null
LD_LIBRARY_PATH=$libdir "$prefix/cmake-consumer/consumer"
echo "pkg-config and find_package consumers built and ran from the installed prefix"
