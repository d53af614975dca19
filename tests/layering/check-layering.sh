#!/usr/bin/env bash
# The library's layering, read off its object files, so that a later change
# cannot bring back what the tree was split to remove:
#   1. no two librouter files call each other;
#   2. the layers below router/ (sources, mirror, reactor, namespaces,
#      subscribers) call into router/ only through what router/upcalls.h
#      declares;
#   3. no librouter source file is over 400 lines.
#
#   check-layering.sh BUILD_DIR SOURCE_DIR    exit 0, 1 (what broke, listed), or 77
set -euo pipefail

build=$(cd "${1:?build directory}" && pwd)
src=$(cd "${2:?source directory}" && pwd)
objdir=$build/CMakeFiles/mountrouter_objects.dir/librouter
max_lines=400

if ! command -v nm >/dev/null; then
	echo "skip: nm not installed (binutils)"
	exit 77
fi
mapfile -t objs < <(find "$objdir" -name '*.o' | sort)
if ((${#objs[@]} < 10)); then
	echo "FAIL: ${#objs[@]} object files under $objdir: build the library first" >&2
	exit 1
fi

# "D symbol file" for each global definition, "U symbol file" for each use.
syms=$(mktemp)
trap 'rm -f "$syms"' EXIT
for o in "${objs[@]}"; do
	f=${o#"$objdir"/}
	f=librouter/${f%.o}
	nm --defined-only -g "$o" | awk -v f="$f" 'NF == 3 { print "D", $3, f }'
	nm -u "$o" | awk -v f="$f" '{ print "U", $NF, f }'
done >"$syms"

# "caller callee symbol": one line per call from one file into another.
calls=$(awk '$1 == "D" { def[$2] = $3 }
	$1 == "U" { use[$3 " " $2] = 1 }
	END { for (k in use) { split(k, a, " "); if ((a[2] in def) && def[a[2]] != a[1]) print a[1], def[a[2]], a[2] } }' \
	"$syms" | sort -u)
echo "${#objs[@]} files, $(wc -l <<<"$calls") calls between them"

fail=0
mutual=$(awk '{ e[$1 " " $2] = $3 }
	END { for (k in e) { split(k, a, " "); if (((a[2] " " a[1]) in e) && a[1] < a[2])
		print "  " a[1] " (" e[k] ") <-> " a[2] " (" e[a[2] " " a[1]] ")" } }' <<<"$calls")
if [[ -n $mutual ]]; then
	echo "FAIL: files that call each other:"
	echo "$mutual"
	fail=1
fi

upcalls=$(grep -o 'mr__router_[a-z0-9_]*(' "$src/librouter/router/upcalls.h" | tr -d '(' | sort -u)
if [[ -z $upcalls ]]; then
	echo "FAIL: router/upcalls.h declares no mr__router_ function"
	fail=1
fi
stray=$(awk '$1 !~ /^librouter\/router\// && $2 ~ /^librouter\/router\//' <<<"$calls" |
	while read -r caller callee sym; do
		grep -qx "$sym" <<<"$upcalls" || echo "  $caller -> $callee: $sym"
	done)
if [[ -n $stray ]]; then
	echo "FAIL: calls into router/ that router/upcalls.h does not declare:"
	echo "$stray"
	fail=1
fi

long=$(find "$src/librouter" -name '*.[ch]' -exec wc -l {} + | awk -v m=$max_lines '$2 != "total" && $1 > m { print "  " $2 ": " $1 " lines" }')
if [[ -n $long ]]; then
	echo "FAIL: librouter files over $max_lines lines:"
	echo "${long//$src\//}"
	fail=1
fi

((fail)) || echo "ok: no two files call each other; below router/ only upcalls.h's $(wc -l <<<"$upcalls") functions are called; no file over $max_lines lines"
exit $fail
