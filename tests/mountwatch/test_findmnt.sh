#!/bin/bash
# SPDX-License-Identifier: MIT
# test_findmnt.sh SOURCE: the same changes watched by findmnt --poll and by
# mountwatch in the same namespace.  Everything findmnt reports under the
# test root, mountwatch reports too, in the same order (findmnt's
# "remount" is mountwatch's readonly or attr); and mountwatch tells apart
# what findmnt lumps together (read-only flips from other option changes)
# and filters by subtree, which findmnt --poll cannot.
. "$(dirname "$0")/lib.sh"
SRC=${1:?usage: test_findmnt.sh SOURCE}
SETATTR=${MW_SETATTR:?MW_SETATTR must name the mw_setattr helper}
command -v findmnt >/dev/null || skip "findmnt is not installed"
findmnt --help | grep -q -- '--poll' || skip "findmnt has no --poll"
mw_private_ns "$@"
mw_need_source "$SRC"
R=$MW_ROOT
W=$MW_WORK
mkdir "$R/a" "$R/b" "$R/c" "$R/only"

# findmnt 2.38 aborts on --poll --json: compare raw output.
findmnt --poll -r -n -o ACTION,TARGET,OLD-TARGET,OPTIONS,OLD-OPTIONS >"$W/findmnt" 2>&1 &
FM=$!
mw_start "$W/mw" --raw -n -o ACTION,TARGET,OLD-TARGET,OPTIONS,OLD-OPTIONS --source "$SRC" \
	--subtree "$R"
"$MW" --raw -n -o ACTION,TARGET --source "$SRC" --subtree "$R/only" >"$W/only" 2>"$W/only.err" &
SUB=$!
sleep 0.3 # findmnt says nothing when it is ready

n=0
step() {
	"$@" || fail "$*"
	n=$((n + 1))
	mw_wait_lines "$W/mw" "$n" || fail "mountwatch saw nothing after: $*"
	sleep 0.1 # let findmnt's poll() come round too
}
step mount -t tmpfs fa "$R/a"
step mount --bind "$R/a" "$R/b"
step mount --move "$R/b" "$R/c"
step mount -o remount,bind,ro "$R/c"
step mount -o remount,bind,rw "$R/c"
step "$SETATTR" "$R/c" +noexec
step mount -t tmpfs fo "$R/only"
step umount "$R/only"
step umount "$R/c"
step umount "$R/a"
sleep 0.3
kill "$FM" "$SUB"
wait "$FM" "$SUB" 2>/dev/null
mw_stop

# findmnt's view, restricted to the test root (it cannot be told to).
awk -v r="$R" 'index($2, r) == 1 { sub(/^umount/, "unmount"); print $1, $2 }' "$W/findmnt" \
	| sed "s|$R|R|g" >"$W/f"
awk '{ print $1, $2 }' "$W/mw" | sed "s|$R|R|g;
	s/^readonly /remount /; s/^attr /remount /" >"$W/m"
[ -s "$W/f" ] || fail "findmnt --poll reported nothing: $(cat "$W/findmnt")"
if ! diff -u "$W/f" "$W/m"; then
	fail "findmnt (-) and mountwatch (+) disagree"
fi
# findmnt calls all three "remount"; mountwatch says which.
got=$(awk '$1 == "readonly" || $1 == "attr" { print $1 }' "$W/mw" | tr '\n' ' ')
[ "$got" = "readonly readonly attr " ] || fail "kinds of the remounts: $got"
printf 'mount %s\nunmount %s\n' "$R/only" "$R/only" | diff -u - "$W/only" ||
	fail "--subtree $R/only saw more or less than its subtree"
echo "PASS: source $SRC: findmnt's $(wc -l <"$W/f") events all reported, with kinds and subtree filtering"
