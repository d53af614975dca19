#!/usr/bin/env bash
# single_change end to end on a small table: two rounds of the floor (and
# the floor asking statmount for the event's fields), the one-thread router
# (every kind, and mount/umount/move only) and the bare poller.  Checks that each watcher saw every change it can see (none
# missed), that the JSON holds one row per watcher and kind with the
# rounds, and that the report and the BENCHMARKS.md section render from it.
#   tests/bench/test_single_change.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
command -v jq >/dev/null || { echo "jq missing (setup.sh installs it)"; exit 77; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

args="--mounts 200 --changes 3 --rounds 2 --watchers 0,2,3,6,12"
# shellcheck disable=SC2086
if ! "$build/bench/single_change" $args --json "$out/run.jsonl" >"$out/run.txt" 2>"$out/err"; then
	cat "$out/err"
	exit 1
fi
if grep -q "left out" "$out/err"; then
	echo "skip: $(head -1 "$out/err")"
	exit 77
fi

rows=$(jq -s 'map(select(has("kind"))) | length' "$out/run.jsonl")
# 5 watchers x 7 kinds (no propagation unless asked).
[[ $rows == 35 ]] || { echo "expected 35 rows, got $rows"; cat "$out/run.jsonl"; exit 1; }
bad=$(jq -s 'map(select(has("kind") and (.rounds != 2 or .missed != 0 or (.sees and .cpu_us <= 0))))' \
	"$out/run.jsonl")
[[ $bad == "[]" ]] || { echo "rows with a missed change, no CPU or wrong rounds: $bad"; exit 1; }
# The router saw every kind, the floor only attach and detach.
seen=$(jq -rs 'map(select(.watcher == "mountrouter, fanotify, one thread" and .sees)) | length' \
	"$out/run.jsonl")
[[ $seen == 7 ]] || { echo "the router saw $seen kinds of 7"; exit 1; }

"$src/bench/single/report.sh" "$out/run.jsonl" "$out/single"
"$src/bench/single/section.sh" "$out/run.jsonl" "$out/single.md" "single_change $args" >"$out/section.md"
grep -q "^| 200 | floor (bare fanotify loop) |" "$out/section.md" ||
	{ echo "section has no floor row"; exit 1; }
grep -q "2 rounds" "$out/section.md" || { echo "section does not say the rounds"; exit 1; }
if grep -q "?" <(grep -A4 "^- against the floor" "$out/section.md"); then
	echo "section has figures it could not compute:"
	grep -A4 "^- against the floor" "$out/section.md"
	exit 1
fi
[[ -s $out/single.svg ]] || { echo "no plot"; exit 1; }

# --interleave: each (watcher, size) in a namespace of its own, changes dealt
# out in turn; every change still seen, and both ratio tables printed.
il="--mounts 100,200 --changes 3 --rounds 2 --watchers 0,3 --interleave"
# shellcheck disable=SC2086
"$build/bench/single_change" $il --json "$out/il.jsonl" >"$out/il.txt" 2>"$out/err" ||
	{ cat "$out/err"; exit 1; }
bad=$(jq -s 'map(select(has("kind") and (.interleaved != true or .rounds != 2 or .missed != 0
	or (.sees and .cpu_us <= 0))))' "$out/il.jsonl")
[[ $bad == "[]" ]] || { echo "interleaved rows missed, not marked or without CPU: $bad"; exit 1; }
# 2 watchers x 2 sizes x 7 kinds.
rows=$(jq -s 'map(select(has("kind"))) | length' "$out/il.jsonl")
[[ $rows == 28 ]] || { echo "interleaved: expected 28 rows, got $rows"; exit 1; }
grep -Eq '^\| 200 \| mountrouter, fanotify, one thread, mount/umount/move only \| [0-9.]+x \(' "$out/il.txt" ||
	{ echo "no ratio to the floor at 200 mounts:"; cat "$out/il.txt"; exit 1; }
grep -Eq '^\| floor \(bare fanotify loop\) \| 200 / 100 \| [0-9.]+x .*\| n/a \| n/a \|$' "$out/il.txt" ||
	{ echo "no flatness row for the floor (remounts n/a):"; cat "$out/il.txt"; exit 1; }
echo "single_change: none missed, rounds and interleaved; report, section and ratios rendered"
