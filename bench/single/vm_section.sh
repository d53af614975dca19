#!/usr/bin/env bash
# Prints BENCHMARKS.md's single-change sections for qemu guests from the
# tables bench/single/vm.sh printed (the guest's console is all that comes
# back, so the figures quoted in the prose are read from those tables):
#   bench/single/vm_section.sh project TABLE.md "COMMAND THAT MADE IT"
#   bench/single/vm_section.sh stock TABLE-6.12.md TABLE-6.1.md "COMMAND FOR 6.12"
set -euo pipefail

# One figure of a table: cell TABLE MOUNTS WATCHER KIND COLUMN, where
# COLUMN is cpu, syscalls, p50, p99 or missed; "?" when the row is missing.
cell() {
	awk -F'|' -v n="$2" -v w="$3" -v k="$4" -v c="$5" '
		function trim(s) { gsub(/^ +| +$/, "", s); return s }
		BEGIN { col["cpu"] = 5; col["syscalls"] = 6; col["p50"] = 7; col["p99"] = 8; col["missed"] = 9 }
		trim($2) == n && trim($3) == w && trim($4) == k { v = trim($(col[c])); found = 1; exit }
		END { print (found && v != "") ? v : "?" }' "$1"
}
# Microseconds with a thousands separator, as the prose elsewhere writes them.
us() { awk -v v="$1" 'BEGIN { if (v == "?") { print "?"; exit }
	if (v < 1000) { printf "%.1f\n", v; exit }
	s = sprintf("%.0f", v); r = ""
	while (length(s) > 3) { r = "," substr(s, length(s) - 2) r; s = substr(s, 1, length(s) - 3) }
	print s r }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "?" || b == "?" || b == 0) print "?"; else printf "%.1fx", a / b }'; }
# The table sizes a table has: the prose quotes 10,000 mounts (the size the
# other sections quote) or, without it, the biggest; growth is smallest to biggest.
has_size() { awk -F'|' -v n="$2" '$2 + 0 == n { f = 1 } END { exit !f }' "$1"; }
biggest() { awk -F'|' '$2 ~ /^ *[0-9]+ *$/ { n = $2 + 0; if (n > m) m = n } END { print m + 0 }' "$1"; }
smallest() { awk -F'|' '$2 ~ /^ *[0-9]+ *$/ { n = $2 + 0; if (!m || n < m) m = n } END { print m + 0 }' "$1"; }

floor="floor (bare fanotify loop)" wm="mountrouter, watch_mount, one thread"
fan="mountrouter, fanotify, one thread" fan_t="mountrouter, fanotify"
topo="mountrouter, fanotify, one thread, mount/umount/move only"
lm="mountrouter, listmount" mi="mountrouter, mountinfo" poller="bare mountinfo poller"

columns() {
	cat <<COL
Columns, per change: "CPU us/change" is the CPU of all the watcher's
threads (its process CPU clock), "syscalls/change" those the library
counted (io_uring_enter included; the floor and the poller count none, so
0), latency p50 / p99 runs from the syscall's return to the watcher holding
the change (0 when the kernel posted it before the syscall returned),
"missed" the changes not held within 5 s. "n/a" in "missed": a kind the
watcher is never told of; its CPU is still what it spent meanwhile. A
row "every kind ... left out" is a watcher the guest's kernel cannot run,
with what it needs and the error its probe got.
COL
}

project() {
	local t=$1 cmd=$2 n small big
	big=$(biggest "$t") small=$(smallest "$t") n=10000
	has_size "$t" $n || n=$big
	c() { cell "$t" "$n" "$1" "$2" cpu; }
	lat() { echo "$(us "$(cell "$t" "$n" "$1" mount p50)") / $(us "$(cell "$t" "$n" "$1" mount p99)") us"; }
	grew() { ratio "$(cell "$t" "$big" "$1" mount cpu)" "$(cell "$t" "$small" "$1" mount cpu)"; }
	vs() { # WATCHER KIND: its CPU, against the poller's and the floor's for that kind
		local x p f=mount
		x=$(c "$1" "$2") p=$(c "$poller" "$2")
		# The floor is told of attach and detach only: a remount is set
		# against its mount, the same one record and one statmount.
		[[ $(cell "$t" "$n" "$floor" "$2" missed) == n/a ]] || f=$2
		echo "$(us "$x") us ($(ratio "$p" "$x") less than the poller, $(ratio "$x" "$(c "$floor" "$f")") the floor)"
	}
	wm_line() {
		if [[ $(c "$wm" mount) == "?" ]]; then
			echo "- watch_mount: not measured, the guest's kernel could not run it (its row says why);"
			return
		fi
		cat <<WM
- watch_mount, one thread: a mount $(vs "$wm" mount); an unmount
  $(vs "$wm" umount); a read-only remount $(vs "$wm" "ro remount");
  \`mount_setattr\` $(vs "$wm" setattr); a propagation change
  $(us "$(c "$wm" propagation)") us (the poller is not told of it);
WM
	}
	grew_line() {
		((small < big)) || return 0
		cat <<GREW
- from $(us "$small" | sed 's/\.0$//') to $(us "$big" | sed 's/\.0$//') mounts a mount's CPU grew $(grew "$wm") for watch_mount,
  $(grew "$fan") for fanotify on one thread, $(grew "$floor") for the floor and $(grew "$poller") for the
  poller.
GREW
	}
	cat <<SEC
## One change at a time on the project's kernel (qemu TCG)

The same benchmark in the guest: Linux 6.12 with the project's series
(kernel/patches). There the watch_mount source names every change, and
fanotify has the attribute-change event (\`FAN_MNT_ATTR_CHANGE\`, patch
0021): on either, a remount, \`mount_setattr(2)\` or propagation change is
one record and one statmount, like an attach, and mountinfo is never read.
Every watcher the guest has runs, one after the other in one boot (findmnt
is not in the guest's initramfs). The watch_mount row runs the router on the
subscriber's thread (\`mr_router_dispatch()\`), as the fanotify "one
thread" row does; both ask for every kind. "propagation" is \`MS_SHARED\` on
the probe, which no mainline kernel reports (mountinfo does not even poll):
the floor, the poller and the listmount and mountinfo sources never see it.
The guest's CPU is emulated (TCG, no KVM): its times are an emulator's,
many times the host's; compare rows of this run, not with the sections
above.

\`$cmd\`

At $(us "$n" | sed 's/\.0$//') mounts, CPU per change, against the bare poller's and the
floor's for the same kind (for a remount or \`mount_setattr\`, which the
floor is not told of, its mount: $(us "$(c "$floor" mount)") us; the poller's mount:
$(us "$(c "$poller" mount)") us):

$(wm_line)
- fanotify, one thread: a mount $(vs "$fan" mount); a read-only remount
  $(vs "$fan" "ro remount"); \`mount_setattr\` $(vs "$fan" setattr); a
  propagation change $(us "$(c "$fan" propagation)") us. On the router's own thread a mount costs
  $(us "$(c "$fan_t" mount)") us; asking for mount/umount/move only, $(us "$(c "$topo" mount)") us;
- the listmount source: a mount $(us "$(c "$lm" mount)") us, a read-only remount (a pass)
  $(us "$(c "$lm" "ro remount")") us; the mountinfo source: a mount $(us "$(c "$mi" mount)") us;
- latency of a mount, p50 / p99: watch_mount $(lat "$wm"), fanotify on one
  thread $(lat "$fan"), the floor $(lat "$floor"), the poller $(lat "$poller");
$(grew_line)

$(columns)

$(cat "$t")
SEC
}

stock() {
	local t612=$1 t61=$2 cmd=$3 n=10000
	has_size "$t612" $n || n=$(biggest "$t612")
	c() { cell "$1" "$n" "$2" "$3" cpu; }
	cat <<SEC
## One change at a time on Debian's stock kernels (qemu TCG)

The same benchmark booted on Debian's own prebuilt kernels
(\`kernel/vm/stock-kernels.sh\`): 6.12 (Debian 13, RHEL 10's line), where
the library picks the listmount source, and 6.1 (Debian 12), where only
mountinfo is left; each beside the bare poller in the same guest. Neither
kernel has fanotify mount events (6.14) or watch_mount: the fanotify
watchers are not asked for, watch_mount is, and its row says why it is
left out (as listmount's does on 6.1). Emulated CPU (TCG): compare rows of
one run.

\`$cmd\`
(and the 6.1 image)

At $(us "$n" | sed 's/\.0$//') mounts on 6.12, against the poller for the same kind (poller / this):
an attach costs the listmount source $(us "$(c "$t612" "$lm" mount)") us against
$(us "$(c "$t612" "$poller" mount)") us ($(ratio "$(c "$t612" "$poller" mount)" "$(c "$t612" "$lm" mount)")), a bind
$(us "$(c "$t612" "$lm" bind)") us ($(ratio "$(c "$t612" "$poller" bind)" "$(c "$t612" "$lm" bind)")), an unmount
$(us "$(c "$t612" "$lm" umount)") us ($(ratio "$(c "$t612" "$poller" umount)" "$(c "$t612" "$lm" umount)")); a read-only
remount is found by a pass: $(us "$(c "$t612" "$lm" "ro remount")") us against
$(us "$(c "$t612" "$poller" "ro remount")") us ($(ratio "$(c "$t612" "$poller" "ro remount")" "$(c "$t612" "$lm" "ro remount")")). On 6.1 the mountinfo
source: $(us "$(c "$t61" "$mi" mount)") us against the poller's $(us "$(c "$t61" "$poller" mount)") us for an
attach ($(ratio "$(c "$t61" "$poller" mount)" "$(c "$t61" "$mi" mount)")).

$(columns)

### 6.12 (listmount)

$(cat "$t612")

### 6.1 (mountinfo)

$(cat "$t61")
SEC
}

case ${1:-} in
project) project "$2" "$3" ;;
stock) stock "$2" "$3" "$4" ;;
*) echo "usage: vm_section.sh project TABLE CMD | stock TABLE-6.12 TABLE-6.1 CMD" >&2; exit 2 ;;
esac
