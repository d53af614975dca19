#!/usr/bin/env bash
# What an embedder gets from `cmake --install` into a prefix of its own,
# used from outside the source tree:
#  - the shared object's soname, and only the mr_ API exported;
#  - the public headers, and not the private uapi copy of kernel constants;
#  - mountwatch runs from the prefix without LD_LIBRARY_PATH (RUNPATH
#    $ORIGIN/../lib), against the installed library, also once the tree is
#    moved; its man page and JSON schema are there;
#  - a consumer that starts a router and checks a snapshot, built four
#    ways (pkg-config and find_package, each shared and static) and run; the
#    static ones must not need libmountrouter.so.
#   test_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name 'libmountrouter.so.0' | head -1)")
[[ -f $libdir/libmountrouter.a ]] || fail "no static library in $libdir"

soname=$(objdump -p "$libdir/libmountrouter.so.0" | awk '/SONAME/ {print $2}')
[[ $soname == libmountrouter.so.0 ]] || fail "soname is '$soname'"
leaked=$(nm -D --defined-only "$libdir/libmountrouter.so.0" | awk '{print $3}' | grep -v '^mr_' | grep -v '^MOUNTROUTER_' || true)
[[ -z $leaked ]] || fail "exported beyond the mr_ API: $leaked"

[[ -f $prefix/include/mountrouter.h && -f $prefix/include/mountrouter-version.h ]] ||
	fail "public headers not installed"
[[ ! -e $prefix/include/mountrouter-uapi.h ]] || fail "the private uapi header is installed"
# The public header stands alone beside the system's kernel headers.
printf '#include <linux/watch_queue.h>\n#include <linux/mount.h>\n#include <mountrouter.h>\nint main(void) { return 0; }\n' >"$work/alone.c"
cc -Wall -Werror -I"$prefix/include" -c -o "$work/alone.o" "$work/alone.c" 2>/dev/null ||
	[[ ! -f /usr/include/linux/watch_queue.h ]] || fail "mountrouter.h clashes with <linux/watch_queue.h>"

if [[ -f $build/examples/mountwatch ]]; then
	mw=$prefix/bin/mountwatch
	[[ -f $prefix/share/man/man1/mountwatch.1 ]] || fail "mountwatch.1 not installed"
	[[ -f $prefix/share/mountwatch/mountwatch.schema.json ]] || fail "the JSON schema is not installed"
	runpath=$(readelf -d "$mw" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
	[[ $runpath == "\$ORIGIN/../lib"* ]] || fail "mountwatch's RUNPATH is '$runpath'"
	lib=$(realpath "$(env -u LD_LIBRARY_PATH ldd "$mw" | awk '/libmountrouter/ {print $3}')")
	[[ $lib == "$(realpath "$libdir")/"* ]] || fail "installed mountwatch loads '$lib', not the prefix's library"
	env -u LD_LIBRARY_PATH "$mw" --version | grep -q "library" || fail "installed mountwatch does not run"
	mv "$prefix" "$work/moved"
	env -u LD_LIBRARY_PATH "$work/moved/bin/mountwatch" --version >/dev/null ||
		fail "mountwatch does not run from a moved prefix"
	mv "$work/moved" "$prefix"
fi

export PKG_CONFIG_PATH=$libdir/pkgconfig
pkg-config --validate mountrouter || fail "mountrouter.pc does not validate"
[[ $(pkg-config --modversion mountrouter) == "$(sed -n 's/^project(mountrouter VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")" ]] ||
	fail "pkg-config --modversion: $(pkg-config --modversion mountrouter)"
# The dependencies are the static library's business only.
pkg-config --libs mountrouter | grep -qE -- '-l(uring|jemalloc|ck)' &&
	fail "pkg-config --libs names private dependencies: $(pkg-config --libs mountrouter)"

# $1 name, $2 binary, $3 yes if it must not need libmountrouter.so
run_consumer() {
	local needed
	needed=$(readelf -d "$2" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
	if [[ $3 == yes ]]; then
		[[ $needed != *libmountrouter* ]] || fail "$1: static consumer needs libmountrouter.so"
	else
		[[ $needed == *libmountrouter.so.0* ]] || fail "$1: shared consumer does not load the library"
	fi
	(cd "$work" && LD_LIBRARY_PATH=$libdir "$2") >"$work/$1.out" || fail "$1: $(cat "$work/$1.out")"
	echo "$1: $(cat "$work/$1.out")"
}

cc -o "$work/pc-shared" "$src/tests/install/consumer.c" $(pkg-config --cflags --libs mountrouter)
run_consumer pc-shared "$work/pc-shared" no
# Static: the archive by name, then what --static adds for it.
cc -o "$work/pc-static" "$src/tests/install/consumer.c" $(pkg-config --cflags mountrouter) \
	"$libdir/libmountrouter.a" $(pkg-config --static --libs mountrouter | sed 's/-lmountrouter//')
run_consumer pc-static "$work/pc-static" yes

for kind in shared static; do
	opt=OFF
	[[ $kind == static ]] && opt=ON
	cmake -S "$src/tests/install" -B "$work/cmake-$kind" -DCMAKE_PREFIX_PATH="$prefix" \
		-DMR_STATIC=$opt >"$work/cmake-$kind.log" 2>&1 || { cat "$work/cmake-$kind.log"; fail "find_package ($kind)"; }
	cmake --build "$work/cmake-$kind" >>"$work/cmake-$kind.log" 2>&1 ||
		{ cat "$work/cmake-$kind.log"; fail "building the find_package consumer ($kind)"; }
	run_consumer "cmake-$kind" "$work/cmake-$kind/consumer" $([[ $kind == static ]] && echo yes || echo no)
done
# The exported targets name no path of the build machine's dependencies.
grep -rq '/libck\.\|/liburing\.\|/libjemalloc\.' "$libdir/cmake/mountrouter/" &&
	fail "exported CMake targets hard-code a dependency's path"
echo "PASS: pkg-config and find_package consumers, shared and static, built and ran from the installed prefix"
