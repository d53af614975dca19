#!/usr/bin/env bash
# The shared library's ABI against the committed baseline
# (tests/abi/libmountrouter.so.0.abi), with libabigail's abidiff.
#
#   check-abi.sh BUILD_DIR SOURCE_DIR           compare; exit 0, 1, or 77
#   check-abi.sh --update BUILD_DIR SOURCE_DIR  rewrite the baseline
#
# Added functions pass; anything else abidiff reports (a function removed,
# a parameter or a public struct changed, a symbol version moved) fails.
# When such a change is meant, decide first whether embedders built against
# the old header still work (a field appended behind a 'size' member does;
# a reordered parameter does not, and needs a new version node in
# librouter/mountrouter.map and a SOVERSION bump), then --update.
set -euo pipefail

update=0
if [[ ${1:-} == --update ]]; then
	update=1
	shift
fi
build=$(cd "${1:?build directory}" && pwd)
src=$(cd "${2:?source directory}" && pwd)
lib=$build/libmountrouter.so.0
baseline=$src/tests/abi/libmountrouter.so.0.abi

for tool in abidw abidiff readelf; do
	if ! command -v "$tool" >/dev/null; then
		echo "skip: $tool not installed (abigail-tools, binutils)"
		exit 77
	fi
done
if ! readelf -S "$lib" | grep -q '\.debug_info'; then
	echo "skip: $lib has no DWARF to read its types from (build with -g, e.g. RelWithDebInfo)"
	exit 77
fi

headers=(--headers-dir "$src/include" --headers-dir "$build/include")
if ((update)); then
	# No paths or locations: the baseline is the same from any checkout.
	abidw "${headers[@]}" --drop-private-types --no-show-locs --no-corpus-path \
		--no-comp-dir-path --no-elf-needed --out-file "$baseline.tmp" "$lib"
	sed -e "s|path='$src/|path='|" "$baseline.tmp" >"$baseline"
	rm -f "$baseline.tmp"
	echo "check-abi: wrote $baseline"
	exit 0
fi

set +e
# The library's side is read whole: the baseline holds public types only
# (the opaque mr_router and mr_sub as bare declarations, which match any
# definition), and abidiff 2.2 with --hd2 and --drop-private-types on this
# side lets a changed public struct through.
report=$(abidiff --no-added-syms "$baseline" "$lib" 2>&1)
rc=$?
set -e
if ((rc != 0)); then
	echo "$report"
	echo "check-abi: the ABI of $lib differs from $baseline (abidiff exit $rc);"
	echo "check-abi: if that is meant, see the top of $0"
	exit 1
fi
echo "check-abi: ABI unchanged against the baseline (added functions aside)"
