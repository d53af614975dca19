#!/bin/bash
# SPDX-License-Identifier: MIT
# The table on a terminal (tmux): findmnt --poll's columns, a header,
# columns aligned under it, re-laid out for the new width on SIGWINCH, every
# line within the terminal's width (a long TARGET cut with a marker, whole
# with --notruncate), and C-c (SIGINT) ending it cleanly with the --stats
# counters.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || skip "tmux is not installed"
mw_private_ns "$@"
R=$MW_ROOT
W=$MW_WORK
LONG=$R/$(printf 'long%.0s' $(seq 30))
mkdir "$R/one" "$R/two-longer-name" "$R/three" "$LONG"

# Our own server: one started from here runs the pane in this namespace.
TM="tmux -L mwtest-$$ -f /dev/null"
cleanup_tmux() { $TM kill-server 2>/dev/null; mw_cleanup; }
trap cleanup_tmux EXIT
$TM new-session -d -x 150 -y 40 \
	"LC_ALL=C.UTF-8 $MW --source ${MW_TTY_SOURCE:-auto} --subtree $R --stats 2>&1; echo EXIT=\$?; sleep 60" ||
	skip "tmux cannot start a session here"

screen() { $TM capture-pane -p -J; }
wait_for() {
	for _ in $(seq 100); do
		screen | grep -q -- "$1" && return 0
		sleep 0.05
	done
	screen
	fail "not on screen: $1"
}

# Every row whose TARGET is under R starts it in the header's TARGET column.
check_aligned() {
	local s; s=$(screen)
	local hdr; hdr=$(printf '%s\n' "$s" | grep '^ACTION  *TARGET' | tail -n1)
	[ -n "$hdr" ] || fail "no header: $s"
	local col=${hdr%%TARGET*}; col=${#col}
	local src=${hdr%%SOURCE*}; src=${#src}
	local rows=0
	while IFS= read -r line; do
		case $line in *" $R"*) ;; *) continue ;; esac
		local pre=${line%%"$R"*}
		[ ${#pre} = "$col" ] || fail "TARGET at column ${#pre}, header at $col: '$line'"
		[ "${line:$((src - 1)):1}" = " " ] && [ "${line:$src:1}" != " " ] ||
			fail "SOURCE not at column $src: '$line'"
		rows=$((rows + 1))
	done < <(printf '%s\n' "$s" | sed -n "/^$(printf '%s' "$hdr" | sed 's/[][\.*^$/]/\\&/g')\$/,\$p")
	[ "$rows" -ge "$1" ] || fail "want $1 aligned rows after the last header, saw $rows: $s"
}

wait_for 'mountwatch: ready'
# The longest path first: a longer one later widens TARGET and brings a
# new header, after which the rows line up again.
mount -t tmpfs two "$R/two-longer-name"
mount -t tmpfs one "$R/one"
wait_for "$R/one "
check_aligned 2

# SIGWINCH: narrower window, new header, new rows aligned under it.
$TM resize-window -x 110 -y 40 2>/dev/null || $TM resize-pane -x 110
sleep 0.2
mount -t tmpfs three "$R/three"
wait_for "$R/three"
[ "$(screen | grep -c '^ACTION  *TARGET')" -ge 2 ] || fail "no new header after SIGWINCH"
check_aligned 1

# 60 columns: a 130-byte TARGET is cut with the marker; no line is longer.
$TM resize-window -x 60 -y 40 2>/dev/null || $TM resize-pane -x 60
sleep 0.2
mount -t tmpfs long "$LONG"
wait_for "^mount .*…"
# Lines from the last header on (those before it were laid out for 110).
long_lines=$(screen | awk '/^ACTION  *TARGET/ { n = NR } { l[NR] = $0 }
	END { for (i = n; i <= NR; i++) if (length(l[i]) > 60) print l[i] }')
[ -z "$long_lines" ] || fail "lines wider than the terminal: $long_lines"
screen | grep -q "longlonglonglonglonglonglonglonglonglonglonglonglonglong" &&
	fail "the long TARGET was not cut: $(screen)"
umount "$LONG"

$TM send-keys C-c
wait_for 'EXIT='
screen | grep -q 'EXIT=0' || fail "C-c: exit status not 0: $(screen | grep EXIT=)"
screen | grep -q 'mountwatch: 5 changes (mount 4, unmount 1)' || fail "C-c: no stats: $(screen)"
screen | grep -q 'mountwatch: latency (kernel read to print): p50 ' || fail "C-c: no latency"
# --notruncate: the whole TARGET, whatever the width.
$TM new-window -d "LC_ALL=C.UTF-8 $MW --source ${MW_TTY_SOURCE:-auto} --subtree $R --notruncate 2>&1; sleep 60"
for _ in $(seq 100); do
	$TM capture-pane -p -J -t :1 | grep -q 'mountwatch: ready' && break
	sleep 0.05
done
mount -t tmpfs long "$LONG"
for _ in $(seq 100); do
	$TM capture-pane -p -J -t :1 | grep -qF "$LONG" && break
	sleep 0.05
done
$TM capture-pane -p -J -t :1 | grep -qF "$LONG" || fail "--notruncate cut the TARGET: $($TM capture-pane -p -J -t :1)"
echo "PASS: aligned table, re-laid out on SIGWINCH, fits 60 columns with a cut marker, whole with --notruncate, C-c prints the stats"
