#!/bin/bash
# SPDX-License-Identifier: MIT
# test_overrun.sh SOURCE: a reader that falls behind is told, and made
# whole.  mountwatch is stopped (SIGSTOP) while 40 mounts happen, with
# room for 4 events per subtree: on SIGCONT it must print the changes
# that fit, one overrun line counting exactly the rest (ring loss), and a
# snapshot holding every mount, marked synthetic.
. "$(dirname "$0")/lib.sh"
SRC=${1:?usage: test_overrun.sh SOURCE}
command -v jq >/dev/null || skip "jq is not installed"
mw_private_ns "$@"
mw_need_source "$SRC"
R=$MW_ROOT
OUT=$MW_WORK/overrun.json
N=40
for i in $(seq $N); do mkdir "$R/m$i"; done

mw_start "$OUT" --json --source "$SRC" --subtree "$R" --queue 4 --stats
kill -STOP "$MW_PID"
for i in $(seq $N); do mount -t tmpfs "m$i" "$R/m$i" || fail "mount $i"; done
kill -CONT "$MW_PID"
for _ in $(seq 100); do
	[ "$(jq -r 'select(.action == "snapshot") | .target' "$OUT" | wc -l)" -gt $N ] && break
	sleep 0.05
done
mw_stop

live=$(jq -r 'select(.action == "mount") | .target' "$OUT" | wc -l)
lost=$(jq -r 'select(.action == "overrun") | .lost' "$OUT")
loss=$(jq -r 'select(.action == "overrun") | .loss' "$OUT")
[ -n "$lost" ] || { cat "$OUT"; fail "no overrun line"; }
[ "$loss" = ring ] || fail "overrun loss is '$loss', want ring"
[ $((live + lost)) = $N ] || fail "$live printed + $lost lost != $N changes"
# Everything after the overrun line is the snapshot: root and all N mounts.
after=$(awk '/"action":"overrun"/ { on = 1; next } on' "$OUT")
snap=$(printf '%s\n' "$after" | jq -r 'select(.action == "snapshot") | .target' | sed "s|$R|R|" | sort)
want=$( (echo R; for i in $(seq $N); do echo "R/m$i"; done) | sort)
[ "$snap" = "$want" ] || fail "snapshot after the overrun: $(echo $snap)"
printf '%s\n' "$after" | jq -e -s 'all(.synthetic)' >/dev/null ||
	fail "snapshot lines after an overrun not marked synthetic"
grep -q "$lost in our ring (1 overrun)" "$OUT.err" || fail "--stats: $(cat "$OUT.err")"
echo "PASS: source $SRC: $live printed, $lost lost and reported, snapshot of $((N + 1)) mounts"
