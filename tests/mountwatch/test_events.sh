#!/bin/bash
# SPDX-License-Identifier: MIT
# test_events.sh SOURCE: mountwatch --json --subtree ROOT reports exactly
# the changes made under ROOT, with the right targets, old targets and
# options: mount, bind, move, remount ro and back (per mount and per
# superblock), mount_setattr, shared-subtree propagation, umount.
#
# Each step waits until its lines are out before the next one runs: the
# mountinfo source (and fanotify's option changes, read from mountinfo)
# report table states, and two changes between two reads coalesce.
. "$(dirname "$0")/lib.sh"
SRC=${1:?usage: test_events.sh SOURCE}
SETATTR=${MW_SETATTR:?MW_SETATTR must name the mw_setattr helper}
command -v jq >/dev/null || skip "jq is not installed"
mw_private_ns "$@"
mw_need_source "$SRC"

R=$MW_ROOT
OUT=$MW_WORK/events.json
mkdir "$R/a" "$R/b" "$R/c" "$R/d" "$R/s" "$R/p"
# A shared subtree and its peer, set up before watching: no kernel
# interface but watch_mount reports a propagation change when it happens
# (mountinfo's POLLPRI does not fire for it), so the sources would see it
# late, at the next read of the table, in an order of their own.
mount -t tmpfs mw-s "$R/s" && mount --make-shared "$R/s" && mount --bind "$R/s" "$R/p" &&
	mkdir "$R/s/x" || fail "cannot set up the shared subtree"
mw_start "$OUT" --json --source "$SRC" --subtree "$R"

# One line per event: action target old-target options old-options, with
# ROOT written as R.  tmpfs shows inode64 where the kernel makes it the
# default (Debian's own kernels): not what this test is about.
summary() {
	jq -r '[.kind, .target, (.old_target // "-"), .options,
		(.old_options // "-")] | join(" ")' "$OUT" | sed "s|$R|R|g; s|,inode64||g"
}

n=0
# step N COMMAND...: runs COMMAND, then waits for N more lines.
step() {
	local want=$1; shift
	"$@" || fail "$*"
	n=$((n + want))
	mw_wait_lines "$OUT" "$n" || { summary; fail "no event after: $*"; }
}

step 1 mount -t tmpfs mw-a "$R/a"
step 1 mount --bind "$R/a" "$R/b"
step 1 mount --move "$R/b" "$R/c"
step 1 mount -o remount,bind,ro "$R/c"
step 1 mount -o remount,bind,rw "$R/c"
step 1 mount -t tmpfs mw-d "$R/d"
step 1 mount -o remount,ro "$R/d"
step 1 mount -o remount,rw "$R/d"
step 1 "$SETATTR" "$R/c" +nosuid +nodev
step 1 "$SETATTR" "$R/c" -nosuid -nodev
step 2 mount -t tmpfs mw-x "$R/s/x"  # propagates to R/p/x
step 2 umount "$R/s/x"               # and so does the unmount
step 1 umount "$R/c"
step 1 umount "$R/a"
# Outside the subtree: must not show up.
mkdir "$MW_WORK/outside" && mount -t tmpfs mw-outside "$MW_WORK/outside" &&
	umount "$MW_WORK/outside" || fail "mount outside the subtree"
step 1 umount "$R/p"
sleep 0.3 # anything extra would arrive now
mw_stop

cat >"$MW_WORK/expected" <<EXP
mount R/a - rw,relatime -
mount R/b - rw,relatime -
move R/c R/b rw,relatime -
readonly R/c - ro,relatime rw,relatime
readonly R/c - rw,relatime ro,relatime
mount R/d - rw,relatime -
readonly R/d - ro,relatime rw,relatime
readonly R/d - rw,relatime ro,relatime
attr R/c - rw,nosuid,nodev,relatime rw,relatime
attr R/c - rw,relatime rw,nosuid,nodev,relatime
mount R/p/x - rw,relatime -
mount R/s/x - rw,relatime -
unmount R/p/x - rw,relatime -
unmount R/s/x - rw,relatime -
unmount R/c - rw,relatime -
unmount R/a - rw,relatime -
unmount R/p - rw,relatime -
EXP
# The kernel attaches (and detaches) a mount and its propagated copies in
# an order it does not promise: compare each such pair sorted.
summary | awk '
	/ R\/[sp]\/x / { pair[++np] = $0; if (np == 2) { if (pair[1] > pair[2]) { t = pair[1]; pair[1] = pair[2]; pair[2] = t } print pair[1]; print pair[2]; np = 0 } next }
	{ print }' >"$MW_WORK/got"
if ! diff -u "$MW_WORK/expected" "$MW_WORK/got"; then
	cat "$OUT.err"
	fail "source $SRC: events differ from the expected list (- expected, + got)"
fi
grep -q '"synthetic":true' "$OUT" && fail "live changes marked synthetic"
[ "$MW_RC" = 0 ] || fail "exit status $MW_RC after SIGINT with events seen, want 0"
echo "PASS: source $SRC: $(wc -l <"$OUT") events exactly as expected"
