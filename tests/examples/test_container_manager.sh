#!/bin/bash
# SPDX-License-Identifier: MIT
# test_container_manager.sh SOURCE N SECONDS: container-manager runs N
# containers for SECONDS with short lifetimes, so that some exit and are
# replaced; each one that ends is reported with its namespace removed and
# its subscription ended; SIGUSR1 prints the live lists; at the end every
# list matches listmount of its namespace ("N/N matched"), exit status 0.
. "$(dirname "$0")/lib.sh"
SOURCE=${1:?usage: test_container_manager.sh SOURCE N SECONDS}
N=${2:?} SECS=${3:?}
CM=${CONTAINER_MANAGER:?CONTAINER_MANAGER must name the container-manager binary}
ex_private_ns "$@"
OUT=$EX_OUT/cm.out

# Lifetimes of 0.5 to 1.5 s: about SECONDS replacements per container.
"$CM" --containers "$N" --seconds "$SECS" --lifetime-ms 1000 --source "$SOURCE" --seed 7 \
	>"$OUT" 2>&1 &
EX_PID=$!
ex_wait "$OUT" "^container-manager: $N containers for $SECS s through $SOURCE" ||
	{ ex_skip_unsupported "$OUT"; fail "did not start: $(cat "$OUT")"; }
sleep 1.5
kill -USR1 "$EX_PID"
ex_wait "$OUT" ' live: ' || fail "SIGUSR1 printed no lists: $(cat "$OUT")"
wait "$EX_PID"
rc=$?
EX_PID=
cat "$OUT"
[ $rc = 0 ] || fail "exit status $rc"
grep -q "^container-manager: $N/$N matched listmount; " "$OUT" || fail "not $N/$N matched"
[ "$(grep -c ' matched: ' "$OUT")" = "$N" ] || fail "not $N lists printed as matched"
# Every list holds the container's root.
[ "$(grep ' matched: ' "$OUT" | grep -c ' /(tmpfs)')" = "$N" ] || fail "a list lacks the root"
# A container that exits is removed; its subscription is told (ns-gone).
ended=$(grep -c ' exited (0): namespace [0-9]* removed, subscription ended on ns-gone after ' "$OUT")
[ "$ended" -ge 1 ] || fail "no container ended and was replaced"
! grep -q 'subscription ended on removal' "$OUT" || fail "a subscription was not told of its namespace's end"
started=$(sed -n 's/.*; \([0-9]*\) containers started, \([0-9]*\) ended, \([0-9]*\) told by ns-gone;.*/\1/p' "$OUT")
told=$(sed -n 's/.*; \([0-9]*\) containers started, \([0-9]*\) ended, \([0-9]*\) told by ns-gone;.*/\3/p' "$OUT")
[ "$started" = $((N + ended)) ] || fail "started $started, want $N + $ended replaced"
on_gone=$(grep -c ' removed, subscription ended on ns-gone after ' "$OUT")
[ "$told" = "$on_gone" ] || fail "$told subscriptions told by ns-gone, $on_gone lines say so"
grep -q '^container-manager: cpu [0-9]* ms .*, peak rss [0-9]* KiB$' "$OUT" || fail "no CPU/RSS line"
echo "container-manager ($SOURCE): $N/$N matched, $ended replaced"
