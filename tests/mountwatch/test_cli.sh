#!/bin/bash
# SPDX-License-Identifier: MIT
# mountwatch's command line: exit codes, stop conditions, snapshot, a
# closed pipe, a source the kernel lacks, and byte-exact escaping of
# hostile mount point names in --json and --raw.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
mw_private_ns "$@"
R=$MW_ROOT
W=$MW_WORK

test_usage() {
	"$MW" --no-such-option >/dev/null 2>&1; [ $? = 2 ] || fail "unknown option: want exit 2"
	"$MW" --subtree relative >/dev/null 2>&1; [ $? = 2 ] || fail "relative subtree: want 2"
	"$MW" --events mount,bogus >/dev/null 2>&1; [ $? = 2 ] || fail "bad kind: want 2"
	"$MW" -o TARGET,NOPE >/dev/null 2>&1; [ $? = 2 ] || fail "bad column: want 2"
	"$MW" --help | grep -q -- '--all-namespaces' || fail "--help lacks --all-namespaces"
	"$MW" --help >/dev/null; [ $? = 0 ] || fail "--help: want exit 0"
}

# findmnt --poll -w: no change within the time: exit 1.
test_timeout() {
	local t0=$(date +%s%N)
	"$MW" --subtree "$R" --timeout 0.3 >/dev/null 2>&1
	local rc=$? ms=$((($(date +%s%N) - t0) / 1000000))
	[ $rc = 1 ] || fail "timeout without events: exit $rc, want 1"
	[ $ms -ge 250 ] && [ $ms -lt 3000 ] || fail "--timeout 0.3 took $ms ms"
}

test_first_only() {
	mkdir -p "$R/f1" "$R/f2"
	mw_start "$W/first" --raw -n -o ACTION,TARGET --subtree "$R" --first-only
	mount -t tmpfs f1 "$R/f1" && mount -t tmpfs f2 "$R/f2"
	wait "$MW_PID"; local rc=$?; MW_PID=
	[ $rc = 0 ] || fail "--first-only: exit $rc, want 0"
	[ "$(cat "$W/first")" = "mount $R/f1" ] || fail "--first-only printed: $(cat "$W/first")"
	umount "$R/f1" "$R/f2"
}

test_count() {
	mw_start "$W/count" --raw -n -o ACTION,TARGET --subtree "$R/f1" --count 2
	mount -t tmpfs f1 "$R/f1" && umount "$R/f1"
	wait "$MW_PID"; local rc=$?; MW_PID=
	[ $rc = 0 ] || fail "--count 2: exit $rc"
	printf 'mount %s\nunmount %s\n' "$R/f1" "$R/f1" | diff -u - "$W/count" ||
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

# The host kernel has no watch_mount: say so and exit ENOSYS (38).
test_missing_source() {
	"$MW" --source watch_mount --timeout 0 >/dev/null 2>"$W/wm.err"
	local rc=$?
	if [ $rc = 38 ]; then
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
         b"esc\x1b[31mred", "caf\u00e9-\u6f22".encode(), b"overlong\xc0\xaf", b"sur\xed\xa0\x80"]
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
	mw_wait_lines "$W/hostile.json" 8 || fail "not all hostile mounts reported"
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
    rec = json.loads(raw.decode("utf-8"))  # must be valid UTF-8 and valid JSON
    got.add(rec["target"].encode("utf-8", "surrogateescape"))
missing = want - got
assert not missing, "not given back exactly: %r (got %r)" % (missing, got - want)
PY
	# --raw: one record per line, undo \xXX, exact bytes.
	"$MW" --raw -n -o TARGET --snapshot --subtree "$R" --timeout 0.2 >"$W/hostile.raw" 2>/dev/null
	python3 - "$R" "$names" "$W/hostile.raw" <<'PY' || fail "raw escaping is not lossless"
import os, re, sys
root, names, out = sys.argv[1], sys.argv[2], sys.argv[3]
want = {os.fsencode(root) + b"/" + bytes.fromhex(h.strip()) for h in open(names)}
got = set()
for line in open(out, "rb").read().split(b"\n")[:-1]:
    assert b" " not in line and b"\t" not in line, "unescaped blank in raw: %r" % line
    got.add(re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m.group(1), 16)]), line))
assert want <= got, "raw lost bytes: %r" % (want - got)
PY
	umount -R "$R"/* 2>/dev/null
	true
}

test_usage
test_timeout
test_first_only
test_count
test_dedupe
test_mountpoint
test_epipe
test_missing_source
test_hostile_names
echo "PASS: usage, timeout, first-only, count, dedupe, mountpoint, EPIPE, missing source, escaping"
