#!/bin/bash
# SPDX-License-Identifier: MIT
# test_namespaces.sh SOURCE: watching other mount namespaces, which
# findmnt --poll cannot: --ns PID, --ns /proc/PID/ns/mnt, and
# --all-namespaces picking a new namespace up and dropping it when its
# last process dies.  Every line names its namespace.
. "$(dirname "$0")/lib.sh"
SRC=${1:?usage: test_namespaces.sh SOURCE}
command -v jq >/dev/null || skip "jq is not installed"
command -v nsenter >/dev/null || skip "nsenter is not installed"
mw_private_ns "$@"
mw_need_source "$SRC"
R=$MW_ROOT
W=$MW_WORK
mkdir "$R/self" "$R/c1" "$R/c2"

CHILDREN=()
cleanup_children() { for p in "${CHILDREN[@]}"; do kill "$p" 2>/dev/null; done; mw_cleanup; }
trap cleanup_children EXIT

# A process in a namespace of its own (a copy of ours, private).
new_ns() {
	unshare -m --propagation private sleep 300 >/dev/null 2>&1 &
	local pid=$!
	CHILDREN+=("$pid")
	for _ in $(seq 100); do
		[ "$(readlink /proc/$pid/ns/mnt)" != "$(readlink /proc/self/ns/mnt)" ] && break
		sleep 0.02
	done
	echo "$pid"
}

SELF_NS=$("$MW" --json -o NS --snapshot --mountpoint "$R" --timeout 0 --source "$SRC" 2>/dev/null |
	jq -r .ns)
[ -n "$SELF_NS" ] || fail "no ns ID for our own namespace"

C1=$(new_ns)
test_ns() {
	local how=$1 out=$W/ns-$2
	mw_start "$out" --json --source "$SRC" --subtree "$R" --ns "$how"
	mount -t tmpfs self "$R/self"                      # ours: not watched
	nsenter -t "$C1" -m mount -t tmpfs c1 "$R/c1"
	mw_wait_lines "$out" 1 || fail "--ns $how: nothing"
	sleep 0.2
	mw_stop
	umount "$R/self"
	nsenter -t "$C1" -m umount "$R/c1"
	[ "$(jq -r '.action + " " + .target' "$out")" = "mount $R/c1" ] ||
		fail "--ns $how reported: $(cat "$out")"
	local ns=$(jq -r .ns "$out")
	[ "$ns" != "$SELF_NS" ] || fail "--ns $how: event carries our namespace's ID"
	grep -q "watching mount namespace $ns (id [0-9]*, --ns" "$out.err" || fail "--ns $how: not announced"
	echo "$ns"
}
NS1=$(test_ns "$C1" pid) || fail "--ns PID: $NS1"
NS1b=$(test_ns "/proc/$C1/ns/mnt" path) || fail "--ns PATH: $NS1b"
[ "$NS1" = "$NS1b" ] || fail "--ns PID and --ns PATH disagree: $NS1 vs $NS1b"
# NS is the namespace as lsns and /proc/PID/ns/mnt name it: the nsfs inode.
[ "$NS1" = "$(stat -L -c %i "/proc/$C1/ns/mnt")" ] || fail "NS $NS1 is not the nsfs inode"

# --ns PID: when PID exits while another process of its namespace lives
# on, the watch follows that one; when the last one exits, the end of the
# namespace is said and the watch ends with exit code 6.
A=$(new_ns)
nsenter -t "$A" -m sleep 300 >/dev/null 2>&1 &
B=$!
CHILDREN+=("$B")
for _ in $(seq 100); do
	[ "$(readlink /proc/$B/ns/mnt)" = "$(readlink /proc/$A/ns/mnt)" ] && break
	sleep 0.02
done
mw_start "$W/end" --json --source "$SRC" --subtree "$R" --ns "$A"
kill "$A"
for _ in $(seq 100); do grep -q "following pid $B" "$W/end.err" && break; sleep 0.05; done
grep -q "pid $A exited; following pid $B" "$W/end.err" || fail "--ns: exit of $A: $(cat "$W/end.err")"
nsenter -t "$B" -m mount -t tmpfs b "$R/c1"
mw_wait_lines "$W/end" 1 || fail "--ns: nothing after following pid $B"
kill "$B"
wait "$MW_PID"
rc=$?
MW_PID=
[ $rc = 6 ] || fail "--ns: the namespace ended: exit $rc, want 6: $(cat "$W/end.err")"
grep -q "mount namespace [0-9]* ended: pid $B, its last process, exited" "$W/end.err" ||
	fail "--ns: end not said: $(cat "$W/end.err")"

# --all-namespaces: ours, C1's, and one that appears while we watch.
OUT=$W/all
mw_start "$OUT" --json --source "$SRC" --subtree "$R" --all-namespaces --rescan-interval 100
grep -q "watching mount namespace $SELF_NS " "$OUT.err" || fail "-A: own namespace missing: $(grep -v "^mountwatch: watching" "$OUT.err")"
grep -q "watching mount namespace $NS1 " "$OUT.err" || fail "-A: C1's namespace missing"
C2=$(new_ns)
for _ in $(seq 100); do
	NS2=$(sed -n "s/^mountwatch: watching mount namespace \([0-9]*\) (id [0-9]*, new, pid $C2)$/\1/p" "$OUT.err")
	[ -n "$NS2" ] && break
	sleep 0.05
done
[ -n "$NS2" ] || { cat "$OUT.err"; fail "-A: new namespace of pid $C2 not picked up"; }
nsenter -t "$C2" -m mount -t tmpfs c2 "$R/c2"
nsenter -t "$C1" -m mount -t tmpfs c1 "$R/c1"
mount -t tmpfs self "$R/self"
mw_wait_lines "$OUT" 3 || fail "-A: missing events: $(cat "$OUT")"
kill "$C2"; wait "$C2" 2>/dev/null
for _ in $(seq 100); do
	grep -q "mount namespace $NS2 is gone" "$OUT.err" && break
	sleep 0.05
done
grep -q "mount namespace $NS2 is gone" "$OUT.err" || fail "-A: dead namespace $NS2 not dropped"
sleep 0.2
mw_stop
printf '%s\n' "mount $R/c1 $NS1" "mount $R/c2 $NS2" "mount $R/self $SELF_NS" >"$W/want"
jq -r '.action + " " + .target + " " + (.ns|tostring)' "$OUT" | sort | diff -u "$W/want" - ||
	fail "-A: events or their namespaces differ"
echo "PASS: source $SRC: --ns PID/PATH ($NS1, the nsfs inode), --ns PID followed and its end said, -A picked up $NS2 and dropped it"
