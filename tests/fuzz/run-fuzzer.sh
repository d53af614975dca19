#!/usr/bin/env bash
# Runs one libFuzzer binary for SECONDS from a copy of its seed corpus and
# prints the executions it made.  Usage: run-fuzzer.sh BINARY SEEDS WORKDIR SECONDS
set -euo pipefail
bin=$1 seeds=$2 work=$3 secs=$4
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"
cp -r "$seeds"/. "$work/corpus/"
# -rss_limit_mb: the router fuzzer builds a router per input; 2 GB is ample.
"$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=25 -print_final_stats=1 \
	-artifact_prefix="$work/artifacts/" "$work/corpus" 2>"$work/log" || {
	tail -60 "$work/log"
	exit 1
}
grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$work/log" || true
echo "corpus: $(ls "$work/corpus" | wc -l) inputs"
