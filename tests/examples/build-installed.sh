#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# build-installed.sh BUILD_DIR SOURCE_DIR: installs the build into a scratch
# prefix and builds every embedding example from its sources alone against
# it, twice: with `pkg-config --cflags --libs mountrouter` and with CMake's
# find_package(mountrouter); then runs each binary once.  Everything this
# suite knows about the installed packaging is in this file.
set -euo pipefail
build=$1 src=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT

cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name 'libmountrouter.so.0' | head -1)")
export PKG_CONFIG_PATH=$libdir/pkgconfig LD_LIBRARY_PATH=$libdir

ex=$src/examples
mkdir "$prefix/pc"
cc -o "$prefix/pc/minimal" "$ex/minimal.c" $(pkg-config --cflags --libs mountrouter)
cc -o "$prefix/pc/unit-tracker" "$ex/unit-tracker.c" "$ex/kernel-table.c" \
	$(pkg-config --cflags --libs mountrouter)
cc -o "$prefix/pc/container-manager" "$ex/container-manager.c" "$ex/kernel-table.c" \
	$(pkg-config --cflags --libs mountrouter)

cmake -S "$src/tests/examples/consumer" -B "$prefix/cm" -DCMAKE_PREFIX_PATH="$prefix" \
	-DEXAMPLES="$ex" >/dev/null
cmake --build "$prefix/cm" >/dev/null

# Output is captured before it is matched: `cmd | grep -q` under pipefail
# fails when grep stops reading before cmd has written its last line.
for dir in pc cm; do
	# Each binary starts and answers: the library it loads is the installed one.
	for bin in unit-tracker container-manager; do
		out=$("$prefix/$dir/$bin" --help)
		grep -q '^usage: ' <<<"$out" || { echo "$dir/$bin --help said: $out"; exit 1; }
	done
	# A relative subtree is refused by mr_subscribe(), and said so.
	if out=$("$prefix/$dir/minimal" relative 2>&1); then
		echo "$dir/minimal accepted a relative subtree"; exit 1
	fi
	[[ $out == 'minimal: Invalid argument' ]] || { echo "$dir/minimal said: $out"; exit 1; }
	out=$(ldd "$prefix/$dir/minimal")
	grep -q "$libdir/libmountrouter.so.0" <<<"$out" ||
		{ echo "$dir/minimal does not load the installed library"; exit 1; }
done
echo "examples built with pkg-config and with find_package(mountrouter) from the installed prefix, and ran"
