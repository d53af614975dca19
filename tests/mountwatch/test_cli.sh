#!/bin/bash
# SPDX-License-Identifier: MIT
# mountwatch's command line: every option's bad value, the documented exit
# codes with their one-line messages, stop conditions, snapshot, a closed
# pipe, a source the kernel lacks, and byte-exact escaping of hostile mount
# point names (C0 and C1 controls) in --json and --raw.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
mw_private_ns "$@"
R=$MW_ROOT
W=$MW_WORK

# Every option's bad value: exit 2 and one line on stderr naming mountwatch.
test_usage() {
	local bad
	while IFS= read -r bad; do
		# shellcheck disable=SC2086 # word splitting wanted: one case per line
		"$MW" $bad >/dev/null 2>"$W/usage.err"
		local rc=$?
		[ $rc = 2 ] || fail "'$bad': exit $rc, want 2: $(cat "$W/usage.err")"
		[ "$(wc -l <"$W/usage.err")" = 1 ] || fail "'$bad': not one line: $(cat "$W/usage.err")"
		grep -q '^mountwatch: ' "$W/usage.err" || fail "'$bad': $(cat "$W/usage.err")"
	done <<'CASES'
--no-such-option
-x
--subtree relative
--mountpoint relative
--subtree
--events mount,bogus
--events ,
-o TARGET,NOPE
-o +NOPE
-o ,
--count 0
--count -1
--count x
--timeout 1.5
--timeout -1
--timeout 99999999999999
--timeout
--rescan-interval 0
--rescan-interval 3600001
--queue 0
--queue 16777217
--source bogus
--ns 1 --all-namespaces
--mountpoint / --subtree /
stray-argument
CASES
	# getopt's own messages name argv[0], here a long path: ours say "mountwatch".
	"$MW" --no-such-option 2>&1 | grep -qxF "mountwatch: unknown option '--no-such-option'; try 'mountwatch --help'" ||
		fail "unknown option message: $("$MW" --no-such-option 2>&1)"
	"$MW" --help | grep -q -- '--all-namespaces' || fail "--help lacks --all-namespaces"
	"$MW" --help >/dev/null; [ $? = 0 ] || fail "--help: want exit 0"
}

# The failures a user meets, each with its documented exit code and one
# line saying what to do (mountwatch(1), EXIT STATUS).
test_exit_codes() {
	expect() { # expect CODE PATTERN ARGS...
		local want=$1 pat=$2; shift 2
		"$@" >/dev/null 2>"$W/exit.err" </dev/null
		local rc=$?
		[ $rc = "$want" ] || fail "$*: exit $rc, want $want: $(cat "$W/exit.err")"
		local msg; msg=$(grep -v '^mountwatch: \(source\|watching\|ready\)' "$W/exit.err")
		[ "$(printf '%s\n' "$msg" | wc -l)" = 1 ] || fail "$*: not one line: $msg"
		printf '%s\n' "$msg" | grep -q -- "$pat" || fail "$*: message: $msg"
	}
	expect 3 'No such process' "$MW" --ns 999999999 --timeout 0
	expect 2 'not a mount namespace file' "$MW" --ns /etc/passwd --timeout 0
	expect 3 'No such file or directory' "$MW" --ns /nonexistent --timeout 0
	expect 3 '^mountwatch: --subtree /nonexistent: No such file' "$MW" -s /nonexistent --timeout 0
	expect 3 '^mountwatch: --mountpoint /nonexistent: No such' "$MW" -M /nonexistent --timeout 0
	# stdout closed by the caller: said, not EINVAL from a write into another fd.
	expect 7 'standard output is closed' bash -c 'exec "$0" --snapshot --timeout 0 >&-' "$MW"
	expect 7 'No space left on device (writing the output)' \
		bash -c 'exec "$0" --snapshot --timeout 0 >/dev/full' "$MW"
	# -A without procfs: nothing to watch, ever; said at once.
	expect 3 'no process under /proc' unshare -m --propagation private \
		bash -c 'mount -t tmpfs noproc /proc && exec "$0" -A --timeout 100' "$MW"
	# Unprivileged: the privilege is named, not a missing kernel feature.
	if command -v setpriv >/dev/null &&
		setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
		local unpriv="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all"
		if "$MW" --source fanotify --timeout 0 >/dev/null 2>&1; then
			expect 4 'needs CAP_SYS_ADMIN' $unpriv "$MW" --source fanotify --timeout 0
			$unpriv "$MW" --timeout 0 2>&1 >/dev/null | grep -q 'fanotify mount events need CAP_SYS_ADMIN' ||
				fail "unprivileged auto: the fallback does not name the privilege"
		fi
	fi
}

# findmnt --poll -w: milliseconds; no change within the time: exit 1.
test_timeout() {
	local t0=$(date +%s%N)
	"$MW" --subtree "$R" --timeout 300 >/dev/null 2>&1
	local rc=$? ms=$((($(date +%s%N) - t0) / 1000000))
	[ $rc = 1 ] || fail "timeout without events: exit $rc, want 1"
	[ $ms -ge 250 ] && [ $ms -lt 3000 ] || fail "--timeout 300 took $ms ms"
	"$MW" --subtree "$R" -w 200 >/dev/null 2>&1; rc=$?
	[ $rc = 1 ] || fail "-w 200: exit $rc, want 1"
	# Beyond an int's milliseconds (2147483 s): waits, without spinning.
	"$MW" --subtree "$R" --timeout 3000000000 >/dev/null 2>"$W/long.err" &
	local pid=$!
	for _ in $(seq 100); do grep -q 'ready' "$W/long.err" && break; sleep 0.05; done
	local t1; t1=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
	sleep 1
	kill -0 "$pid" 2>/dev/null || fail "--timeout 3000000000 ended at once: $(cat "$W/long.err")"
	local t2; t2=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
	kill -INT "$pid"; wait "$pid"; rc=$?
	[ $rc = 0 ] || fail "SIGINT during a long timeout: exit $rc"
	# A spinning poll(..., 0) burns the whole second (100 ticks).
	[ $((t2 - t1)) -lt 20 ] || fail "--timeout 3000000000 spins: $((t2 - t1)) ticks of CPU in 1 s"
}

# -o +COL adds to findmnt's default columns; the finer kind is in KIND.
test_output_plus() {
	mkdir -p "$R/plus"
	"$MW" --raw -o +KIND,ID --snapshot -M "$R" --timeout 0 >"$W/plus" 2>/dev/null
	[ "$(head -n1 "$W/plus")" = "ACTION TARGET SOURCE FSTYPE OPTIONS KIND ID" ] ||
		fail "-o +KIND,ID header: $(head -n1 "$W/plus")"
	local id; id=$(awk -v r="$R" '$5 == r { print $1 }' /proc/self/mountinfo)
	[ "$(sed -n 2p "$W/plus")" = "snapshot $R mw-root tmpfs rw,relatime snapshot $id" ] ||
		fail "-o +KIND,ID row: $(sed -n 2p "$W/plus") (mountinfo ID $id)"
}

test_first_only() {
	mkdir -p "$R/f1" "$R/f2"
	# --timeout: a guard, so that a lost event fails instead of hanging.
	mw_start "$W/first" --raw -n -o ACTION,TARGET --subtree "$R" --first-only --timeout 20000
	mount -t tmpfs f1 "$R/f1" && mount -t tmpfs f2 "$R/f2"
	wait "$MW_PID"; local rc=$?; MW_PID=
	[ $rc = 0 ] || fail "--first-only: exit $rc, want 0"
	[ "$(cat "$W/first")" = "mount $R/f1" ] || fail "--first-only printed: $(cat "$W/first")"
	umount "$R/f1" "$R/f2"
}

test_count() {
	mw_start "$W/count" --raw -n -o ACTION,TARGET --subtree "$R/f1" --count 2 --timeout 20000
	# The unmount after the mount was seen: a mount gone before the
	# source looked at it may leave no trace (nothing to report then).
	mount -t tmpfs f1 "$R/f1" && mw_wait_lines "$W/count" 1 && umount "$R/f1"
	wait "$MW_PID"; local rc=$?; MW_PID=
	[ $rc = 0 ] || fail "--count 2: exit $rc"
	printf 'mount %s\numount %s\n' "$R/f1" "$R/f1" | diff -u - "$W/count" ||
		fail "--count 2 output"
}

# Nested subtrees: each event once; the snapshot's mounts once.
test_dedupe() {
	mkdir -p "$R/n"
	mount -t tmpfs n "$R/n" && mkdir "$R/n/m"
	mw_start "$W/dedupe" --raw -n -o ACTION,TARGET --snapshot \
		--subtree "$R/n" --subtree "$R/n/m" --subtree "$R"
	mount -t tmpfs m "$R/n/m"
	mw_wait_lines "$W/dedupe" 3
	sleep 0.2
	mw_stop
	printf 'snapshot %s\nsnapshot %s\nmount %s\n' "$R" "$R/n" "$R/n/m" |
		diff -u - "$W/dedupe" || fail "nested subtrees: duplicates or misses"
	umount -R "$R/n"
}

test_mountpoint() {
	mkdir -p "$R/mp" "$R/mp2"
	mw_start "$W/mp" --raw -n -o ACTION,TARGET --mountpoint "$R/mp" --events mount
	mount -t tmpfs x "$R/mp2" && mount -t tmpfs x "$R/mp" && umount "$R/mp"
	sleep 0.3
	mw_stop
	[ "$(cat "$W/mp")" = "mount $R/mp" ] || fail "--mountpoint/--events: $(cat "$W/mp")"
	umount "$R/mp2"
}

# | head: the reader goes away; mountwatch must leave at once, silently.
test_epipe() {
	local t0=$(date +%s)
	( "$MW" --snapshot --raw 2>"$W/epipe.err"; echo $? >"$W/epipe.rc" ) | head -n 1 >/dev/null
	sleep 0.1
	[ "$(cat "$W/epipe.rc")" = 0 ] || fail "closed stdout: exit $(cat "$W/epipe.rc"), want 0"
	grep -v '^mountwatch: \(source\|watching\|ready\)' "$W/epipe.err" &&
		fail "closed stdout printed an error"
	[ $(($(date +%s) - t0)) -lt 5 ] || fail "closed stdout: did not leave at once"
}

# The host kernel has no watch_mount: say so and exit 5 (not supported).
test_missing_source() {
	"$MW" --source watch_mount --timeout 0 >/dev/null 2>"$W/wm.err"
	local rc=$?
	if [ $rc = 5 ]; then
		grep -q 'source watch_mount is not supported by this kernel' "$W/wm.err" ||
			fail "watch_mount missing, but the message says: $(cat "$W/wm.err")"
	elif [ $rc = 1 ]; then
		grep -q '^mountwatch: source watch_mount' "$W/wm.err" ||
			fail "watch_mount: no word about the source"
	else
		fail "--source watch_mount: exit $rc: $(cat "$W/wm.err")"
	fi
}

# Names with every kind of trouble; the JSON must give back the bytes.
test_hostile_names() {
	local names=$W/names
	python3 - "$R" "$names" <<'PY' || fail "cannot create hostile names"
import os, sys
root, out = sys.argv[1], sys.argv[2]
names = [b"sp ace", b"new\nline", b"tab\tback\\slash\"quote", b"bad\xff\xfeutf8",
         b"esc\x1b[31mred", "caf\u00e9-\u6f22".encode(), b"overlong\xc0\xaf", b"sur\xed\xa0\x80",
         b"nel\xc2\x85c1", b"csi\xc2\x9b31mred"]
with open(out, "wb") as f:
    for n in names:
        os.mkdir(os.path.join(root.encode(), n))
        f.write(n.hex().encode() + b"\n")
PY
	mw_start "$W/hostile.json" --json --subtree "$R" --events mount
	# Mount by bytes: the shell cannot hold some of these names.
	while read -r hex; do
		python3 -c 'import os, subprocess, sys
p = os.fsencode(sys.argv[1]) + b"/" + bytes.fromhex(sys.argv[2])
sys.exit(subprocess.call([b"mount", b"-t", b"tmpfs", b"hostile", p]))' "$R" "$hex" ||
			fail "cannot mount hostile name $hex"
	done <"$names"
	mw_wait_lines "$W/hostile.json" 10 || fail "not all hostile mounts reported"
	mw_stop
	python3 - "$R" "$names" "$W/hostile.json" <<'PY' || fail "JSON escaping is not lossless"
import json, os, sys
root, names, out = sys.argv[1], sys.argv[2], sys.argv[3]
want = {os.fsencode(root) + b"/" + bytes.fromhex(h.strip()) for h in open(names)}
got = set()
for raw in open(out, "rb"):
    assert raw.count(b"\n") == 1, "a record spans lines"
    for b in raw[:-1]:
        assert b >= 0x20 and b != 0x7f, "raw control byte in JSON: %r" % raw
    # C1 controls (U+0080..U+009F) act on terminals too (U+009B is CSI).
    assert not any(0x80 <= ord(ch) <= 0x9f for ch in raw.decode("utf-8")), "raw C1 in JSON: %r" % raw
    rec = json.loads(raw.decode("utf-8"))  # must be valid UTF-8 and valid JSON
    got.add(rec["target"].encode("utf-8", "surrogateescape"))
missing = want - got
assert not missing, "not given back exactly: %r (got %r)" % (missing, got - want)
PY
	# --raw: one record per line, undo \xXX, exact bytes.
	"$MW" --raw -n -o TARGET --snapshot --subtree "$R" --timeout 200 >"$W/hostile.raw" 2>/dev/null
	python3 - "$R" "$names" "$W/hostile.raw" <<'PY' || fail "raw escaping is not lossless"
import os, re, sys
root, names, out = sys.argv[1], sys.argv[2], sys.argv[3]
want = {os.fsencode(root) + b"/" + bytes.fromhex(h.strip()) for h in open(names)}
got = set()
for line in open(out, "rb").read().split(b"\n")[:-1]:
    assert b" " not in line and b"\t" not in line, "unescaped blank in raw: %r" % line
    text = line.decode("utf-8", "replace")
    assert not any(0x80 <= ord(ch) <= 0x9f for ch in text), "raw C1 in --raw: %r" % line
    got.add(re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m.group(1), 16)]), line))
assert want <= got, "raw lost bytes: %r" % (want - got)
PY
	umount -R "$R"/* 2>/dev/null
	true
}

test_usage
test_exit_codes
test_timeout
test_output_plus
test_first_only
test_count
test_dedupe
test_mountpoint
test_epipe
test_missing_source
test_hostile_names
echo "PASS: usage (every bad value), exit codes, timeout, -o +COL, first-only, count, dedupe, mountpoint, EPIPE, missing source, escaping"
