#!/bin/bash
# SPDX-License-Identifier: MIT
# test_unit_tracker.sh SOURCE: unit-tracker --compare on a scripted
# workload (a table of 200 mounts, then changes one at a time and in a
# burst: mounts, remounts read-only, unmounts) keeps, from events, the same
# units as its mountinfo re-reader and as listmount, and the states the
# workload leaves.
. "$(dirname "$0")/lib.sh"
SOURCE=${1:?usage: test_unit_tracker.sh SOURCE}
UT=${UNIT_TRACKER:?UNIT_TRACKER must name the unit-tracker binary}
LOAD=${MOUNT_LOAD:?MOUNT_LOAD must name the mount-load binary}
ex_private_ns "$@"
R=$EX_ROOT
OUT=$EX_OUT/ut.out
mkdir "$R/paced" "$R/burst"
"$LOAD" base "$R" 200 >/dev/null || fail "mount-load base"

"$UT" --compare --units --source "$SOURCE" >"$OUT" 2>&1 &
EX_PID=$!
ex_wait "$OUT" '^unit-tracker: ready' || { ex_skip_unsupported "$OUT"; fail "not ready: $(cat "$OUT")"; }
ready=$(sed -n 's/^unit-tracker: ready: events: \([0-9]*\) units: \([0-9]*\) mounted, \([0-9]*\) read-only.*/\1 \2 \3/p' "$OUT")
read -r u0 m0 ro0 <<<"$ready"
[ -n "$u0" ] && [ "$u0" -ge 201 ] || fail "ready line: $(cat "$OUT")"

# 20 slots each: 20 mounts, 20 remounts read-only, 10 unmounts (even slots).
"$LOAD" change "$R/paced" 60 20 >/dev/null || fail "mount-load change paced"
"$LOAD" change "$R/burst" 60 0 >/dev/null || fail "mount-load change burst"
sleep 0.5
ex_stop TERM
cat "$OUT"
[ "$EX_RC" = 0 ] || fail "exit status $EX_RC"
grep -q '^unit-tracker: tables equal$' "$OUT" || fail "tables differ"

# Live units: those at the start plus, in each directory, 10 slots left
# read-only (odd ones).  Every way must say so.
for way in events re-read listmount; do
	line=$(grep "^unit-tracker: $way: " "$OUT") || fail "no $way line"
	want="$m0 mounted, $((ro0 + 20)) read-only"
	[[ $line == *"$want"* ]] || fail "$way: '$line', want '$want'"
done
for d in paced burst; do
	grep -qx "read-only $R/$d/c/1" "$OUT" || fail "$d/c/1 not read-only"
	grep -qx "read-only $R/$d/c/19" "$OUT" || fail "$d/c/19 not read-only"
	grep -Eq "^(mounted|read-only) $R/$d/c/(0|18)\$" "$OUT" && fail "$d: an unmounted slot is live"
done
grep -q '^unit-tracker: cpu after start-up: events .* mountinfo re-read .* re-reads' "$OUT" ||
	fail "no CPU line"
echo "unit-tracker ($SOURCE): events, re-read and listmount agree"
