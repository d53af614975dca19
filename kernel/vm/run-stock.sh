#!/usr/bin/env bash
# Run the library's host-kernel tests and mountwatch's scenario tests on one
# of Debian's stock kernels (kernel/vm/stock-kernels.sh), or on the
# project's kernel (kernel/build.sh), under qemu:
#
#   kernel/vm/run-stock.sh LABEL SOURCE[,SOURCE] [PROGRAM...] -- MOUNTWATCH MW_SETATTR CONTAINER_MANAGER
#
# LABEL is 6.1, 6.12 or project; SOURCE the one that kernel must get (6.1
# mountinfo, 6.12 listmount, the project's watch_mount and fanotify), which
# the scenario tests are run with.  PROGRAMs are static test binaries
# (built for SOURCE); the three after -- are mountwatch and its helpers,
# linked statically.  The scenario scripts run under bash-static with
# busybox's tools, and jq with its libraries copied from the host.  On the
# project's kernel nothing may skip: it has every feature the tests ask for.
# Exit as kernel/vm/run.sh: 0 pass, 77 all skipped, 1 fail.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

[ $# -ge 2 ] || { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
label=$1 source=$2
shift 2
progs=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do progs+=("$1"); shift; done
[ $# -eq 4 ] || { echo "run-stock.sh: want -- MOUNTWATCH MW_SETATTR CONTAINER_MANAGER" >&2; exit 2; }
mw=$2 setattr=$3 cm=$4

strict=()
if [ "$label" = project ]; then
	kernel=$("$top/kernel/build.sh" | tail -n1)
	strict=(--no-skip)
else
	kernel=$("$here/stock-kernels.sh" "$label" | awk '{print $2}')
fi
bash_static=$(command -v bash-static || true)
[ -n "$bash_static" ] || { echo "run-stock.sh: need bash-static (apt-get install bash-static)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/mr-stock.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$bash_static" "$work/bash"
files=(--file "$work/bash" --file "$mw" --file "$setattr" --file "$cm"
	--file "$top/tests/mountwatch/lib.sh")
for f in /usr/bin/jq $(ldd /usr/bin/jq 2>/dev/null | grep -oE '/[^ ]+'); do
	files+=(--host-file "$f")
done

# One wrapper per scenario: the names the scripts expect, then the script.
wrappers=()
scenario() { # NAME SCRIPT ARGS...
	local n=$1 s=$2
	shift 2
	files+=(--file "$top/tests/mountwatch/$s")
	cat >"$work/$n" <<EOS
#!/bin/busybox sh
export PATH=/bin:/usr/bin:/tests
export MOUNTWATCH=/tests/$(basename "$mw") MW_SETATTR=/tests/$(basename "$setattr")
export CONTAINER_MANAGER=/tests/$(basename "$cm")
exec /tests/bash /tests/$s $*
EOS
	chmod +x "$work/$n"
	wrappers+=("$work/$n")
}
for s in ${source//,/ }; do
	scenario mw_events_"$s" test_events.sh "$s"
	scenario mw_overrun_"$s" test_overrun.sh "$s"
done
# Other namespaces by probing: the 6.12 line's listmount cannot see all of one.
scenario mw_namespaces_auto test_namespaces.sh auto
# Not test_cli.sh: it needs python3, which the guest lacks, and what it
# checks (options, escaping) does not depend on the kernel; it runs on the host.

# 1,000 namespaces (test_namespaces) need more than run.sh's 512 MB for
# their 1,000 processes.  The router's own share is small (~20 MB on the
# host with every namespace on the mountinfo source, tests/stock612_namespaces).
exec "$here/run.sh" --kernel "$kernel" --timeout "${MR_STOCK_TIMEOUT:-500}" --memory 1024 \
	"${strict[@]}" "${files[@]}" "${progs[@]}" "${wrappers[@]}"
