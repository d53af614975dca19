#!/usr/bin/env bash
# Turns single_change's JSON lines into the tables and the log-log plot of
# BENCHMARKS.md's single-change section.
#   bench/single/report.sh RUN.jsonl OUT_PREFIX   -> OUT_PREFIX.md, OUT_PREFIX.svg
set -euo pipefail
in=$1 out=$2

kinds='["mount","umount","move","bind","ro remount","setattr"]'
# One row per table size and watcher: CPU per change of each kind, then the
# mount row's syscalls and latency, and its CPU against the floor and the poller's.
jq -rs --argjson kinds "$kinds" '
  map(select(has("skipped") | not)) |
  def cell(k): (map(select(.kind == k)) | first) as $c
    | if $c == null then "" elif $c.sees | not then "n/a" else ($c.cpu_us | . * 10 | round / 10 | tostring) end;
  def ratio(a; b): if a == null or b == null or b == 0 then "" else (a / b | . * 10 | round / 10 | tostring) + "x" end;
  group_by(.mounts)[] as $n
  | ($n | map(select(.kind == "mount"))) as $m
  | ($m | map(select(.watcher | startswith("floor"))) | first | .cpu_us) as $floor
  | ($m | map(select(.watcher | startswith("bare mountinfo poller"))) | first | .cpu_us) as $poller
  | ($n | group_by(.watcher) | sort_by(first.watcher)[])
  | (map(select(.kind == "mount")) | first) as $mount
  | "| \($n[0].mounts) | \(first.watcher) | " + ([$kinds[] as $k | cell($k)] | join(" | "))
    + " | \($mount.syscalls | . * 10 | round / 10) | \($mount.p50_us | round) / \($mount.p99_us | round)"
    + " | \(ratio($mount.cpu_us; $floor)) | \(ratio($poller; $mount.cpu_us)) |"
' "$in" >"$out.rows"
# A watcher this kernel cannot run: one row per size saying why, no figures.
jq -r 'select(has("skipped")) | "| \(.mounts) | \(.watcher) | n/a: left out, \(.skipped) | | | | | | | | | |"' \
	"$in" >>"$out.rows"
{
	echo "| mounts | watcher | mount | umount | move | bind | ro remount | setattr | syscalls/change (mount) | latency p50 / p99 us (mount) | CPU / floor (mount) | poller / this (mount) |"
	echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	# Each left-out row among its table size's rows (a stable sort keeps their order).
	sort -s -t'|' -k2,2n "$out.rows"
} >"$out.md"
rm -f "$out.rows"

# The plot: CPU per change against table size, log-log, one line per watcher
# (solid: a mount; dashed: a read-only remount, where the watcher sees one).
dat=$(mktemp -d)
jq -r '.watcher' "$in" | sort -u >"$dat/watchers"
gp="$dat/plot.gp"
series=()
i=0
while read -r w; do
	for k in mount "ro remount"; do
		f="$dat/$i-${k// /_}.dat"
		jq -r --arg w "$w" --arg k "$k" \
			'select(.watcher == $w and .kind == $k and .sees) | "\(.mounts) \(.cpu_us)"' "$in" |
			sort -n >"$f"
		[[ -s $f ]] || continue
		dash=1
		[[ $k == mount ]] || dash=2
		series+=("\"$f\" using 1:2 with linespoints linecolor $((i + 1)) dashtype $dash title \"$w, $k\"")
	done
	i=$((i + 1))
done <"$dat/watchers"
{
	echo "set terminal svg size 1100,700 dynamic background rgb 'white'"
	echo "set output \"$out.svg\""
	echo "set title \"CPU of all the watcher's threads per change, one change at a time\""
	echo "set logscale xy; set grid; set key outside right top"
	echo "set xlabel \"mounts in the table (log scale)\""
	echo "set ylabel \"CPU per change, microseconds (log scale)\""
	echo "set format x '%g'; set format y '%g'"
	printf 'plot '
	for ((j = 0; j < ${#series[@]}; j++)); do
		((j == 0)) || printf ', \\\n     '
		printf '%s' "${series[j]}"
	done
	echo
} >"$gp"
gnuplot "$gp"
rm -rf "$dat"
