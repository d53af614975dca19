#!/usr/bin/env bash
# Prints BENCHMARKS.md's "Parsers and tables" section from one bench_tables
# run's JSON (--benchmark_format=json, medians of repetitions): the
# hand-written mountinfo parser and mirror ID table beside libmount and
# ck_hs, with the verdicts computed from the figures.
# Usage: bench/tables_section.sh RUN.json COMMAND
set -euo pipefail
json=$1 cmd=$2

median() { # NAME: the median's real time, in the run's unit
	jq -r --arg n "$1" '.benchmarks[] | select(.run_name == $n and .aggregate_name == "median")
		| .real_time' "$json" | head -1
}
fmt() { awk -v v="$1" 'BEGIN { if (v == "") print "?"; else if (v >= 100) printf "%d", v + 0.5; else printf "%.1f", v }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "?"; else printf "%.2fx", a / b }'; }
faster() { # LIBRARY PROJECT: "slower" when the library's time is above the project's
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "") print "?"; else print (a > b) ? "slower" : "faster" }'
}

parse_p=$(median BM_Parse/project) parse_l=$(median BM_Parse/libmount)
look_p=$(median BM_IdLookup/mirror) look_l=$(median BM_IdLookup/ck_hs)
churn_p=$(median BM_IdChurn/mirror) churn_l=$(median BM_IdChurn/ck_hs)
churn_i=$(median BM_IdChurn/ck_hs_ids_only)
libmount=$(dpkg-query -W -f '${Version}' libmount-dev 2>/dev/null | cut -d- -f1 || echo "?")
libck=$(dpkg-query -W -f '${Version}' libck-dev 2>/dev/null | cut -d- -f1 || echo "?")

cat <<EOF
## Parsers and tables: the hand-written code against libraries

\`$cmd\` (libmount ${libmount:-?}, libck ${libck:-?}). Medians of one run, 10,000 mounts:

| Benchmark | Project | Library | Library / project |
|---|---|---|---|
| Read and parse a 10,000-line mountinfo (file in page cache) | $(fmt "$parse_p") us (mountinfo.c) | $(fmt "$parse_l") us (libmount \`mnt_new_table_from_file\`) | $(ratio "$parse_l" "$parse_p") |
| ID lookup of a live mount | $(fmt "$look_p") ns (mirror.c) | $(fmt "$look_l") ns (ck_hs, same hash) | $(ratio "$look_l" "$look_p") |
| One unmount + one mount (remove, lookup, insert; superblock and parent counts kept) | $(fmt "$churn_p") ns (mirror.c) | $(fmt "$churn_l") ns (ck_hs, three sets) | $(ratio "$churn_l" "$churn_p") |
| The same, ck_hs holding the ID table alone | | $(fmt "$churn_i") ns | $(ratio "$churn_i" "$churn_p") |

- Parser: libmount is $(faster "$parse_l" "$parse_p") than the project's parser here ($(ratio "$parse_l" "$parse_p") its time); the project's parser is fuzzed by tests/fuzz.
- ID table: ck_hs is $(faster "$look_l" "$look_p") to look up ($(ratio "$look_l" "$look_p")) and $(faster "$churn_l" "$churn_p") per unmount + mount ($(ratio "$churn_l" "$churn_p"); $(ratio "$churn_i" "$churn_p") with the counting indexes left out). A mount table changes as often as it is looked up (every record is a lookup, every attach and detach an insert or a removal), so the churn row decides.
EOF
