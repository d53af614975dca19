#!/bin/bash
# SPDX-License-Identifier: MIT
# bench-unit-tracker.sh BUILD_DIR [CHANGES [SIZES [HOWS [SOURCES]]]]:
# unit-tracker --compare at 1,000 and 10,000 mounts (SIZES), changes one at
# a time (30 ms apart), one at a time without remounts, and in a burst,
# on the fanotify and mountinfo sources; prints one Markdown table row per
# run with the CPU each way spent after start-up.  Runs in a private mount
# namespace on a tmpfs (root).  Not part of the test suite: it takes minutes.
set -euo pipefail
B=${1:?usage: bench-unit-tracker.sh BUILD_DIR [CHANGES]}
K=${2:-150}
SIZES=${3:-1000 10000} HOWS=${4:-paced attach burst} SOURCES=${5:-fanotify mountinfo}
if [ -z "${EX_IN_PRIVATE_NS:-}" ]; then
	EX_IN_PRIVATE_NS=1 exec unshare -m --propagation private "$BASH" "$0" "$@"
fi
UT=$B/examples/unit-tracker LOAD=$B/tests/examples/mount-load
W=$(mktemp -d)
trap 'umount -l "$W/r" 2>/dev/null; rm -rf "$W"' EXIT

echo "| mounts | changes | how | source | events: CPU | per change | of which table sweeps | re-read: CPU | per change | re-reads | re-read / events | tables |"
echo "|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---|"
for n in $SIZES; do
	for how in $HOWS; do
		for src in $SOURCES; do
			R=$W/r
			mkdir -p "$R" && mount -t tmpfs bench "$R"
			"$LOAD" base "$R" "$n" >/dev/null
			"$UT" --compare --source "$src" >"$W/out" 2>&1 &
			pid=$!
			for _ in $(seq 600); do
				grep -q '^unit-tracker: ready' "$W/out" && break
				kill -0 $pid 2>/dev/null || { cat "$W/out" >&2; exit 1; }
				sleep 0.05
			done
			case $how in
			paced) args=(30) ;;
			attach) args=(30 attach) ;;
			burst) args=(0) ;;
			esac
			made=$("$LOAD" change "$R" "$K" "${args[@]}" | sed -n 's/^changes: //p')
			sleep 1
			kill -TERM $pid
			wait $pid || true
			line=$(grep '^unit-tracker: cpu after start-up' "$W/out")
			read -r ev_ms ev_n rr_ms rr_n < <(sed -E 's/.*events ([0-9.]+) ms \(([0-9]+) events.*re-read ([0-9.]+) ms \(([0-9]+) re-reads.*/\1 \2 \3 \4/' <<<"$line")
			eq=$(sed -n 's/^unit-tracker: tables //p' "$W/out")
			sweeps=$(sed -En 's/^unit-tracker: router after start-up: .* ([0-9]+) table sweeps \(([0-9.]+) ms\).*/\2 ms (\1)/p' "$W/out")
			awk -v n=$n -v k=$made -v how=$how -v src=$src -v e=$ev_ms -v r=$rr_ms -v rn=$rr_n -v eq="$eq" -v sw="$sweeps" \
				'BEGIN { printf "| %d | %d | %s | %s | %.1f ms | %.0f µs | %s | %.1f ms | %.0f µs | %d | %.1f | %s |\n",
				n, k, how == "paced" ? "one at a time" : how == "attach" ? "one at a time, no remounts" : "burst", src, e, e * 1000 / k, sw, r, r * 1000 / k, rn, r / e, eq }'
			umount -l "$R" # one detach: umount -R re-reads the table per mount
		done
	done
done
