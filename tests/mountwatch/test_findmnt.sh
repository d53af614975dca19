#!/bin/bash
# SPDX-License-Identifier: MIT
# test_findmnt.sh SOURCE: the same changes watched by findmnt --poll and by
# mountwatch side by side, both with -P and the same -o list, compared
# column for column where they overlap: ACTION (findmnt's words), TARGET,
# SOURCE (with [/root] for a bind of a subdirectory), FSTYPE, OPTIONS, ID
# and PARENT (mountinfo's), MAJ:MIN, FSROOT, PROPAGATION, OLD-TARGET of a
# move and OLD-OPTIONS of a remount.  Then what findmnt cannot do: the
# finer kind of each remount (KIND), and filtering by subtree.
. "$(dirname "$0")/lib.sh"
SRC=${1:?usage: test_findmnt.sh SOURCE}
SETATTR=${MW_SETATTR:?MW_SETATTR must name the mw_setattr helper}
command -v findmnt >/dev/null || skip "findmnt is not installed"
findmnt --help | grep -q -- '--poll' || skip "findmnt has no --poll"
command -v python3 >/dev/null || skip "python3 is not installed"
mw_private_ns "$@"
mw_need_source "$SRC"
R=$MW_ROOT
W=$MW_WORK
mkdir "$R/a" "$R/b" "$R/c" "$R/only" "$R/s" "$R/p" "$R/sep"
# A shared mount made before watching (findmnt --poll does not report a
# propagation change): its bind is its peer, PROPAGATION "shared".
mount -t tmpfs fs "$R/s" && mount --make-shared "$R/s" && mkdir "$R/s/sub" ||
	fail "cannot set up the shared mount"

COLS=ACTION,TARGET,SOURCE,FSTYPE,OPTIONS,OLD-TARGET,OLD-OPTIONS,ID,PARENT,MAJ:MIN,FSROOT,PROPAGATION
# findmnt 2.38 aborts on --poll --json: compare -P.
findmnt --poll -P -o "$COLS" >"$W/findmnt" 2>&1 &
FM=$!
mw_start "$W/mw" -P -o "$COLS,KIND" --source "$SRC" --subtree "$R"
"$MW" --raw -n -o ACTION,TARGET --source "$SRC" --subtree "$R/only" >"$W/only" 2>"$W/only.err" &
SUB=$!
sleep 0.3 # findmnt says nothing when it is ready

n=0
# step [-N] COMMAND...: runs COMMAND, waits for N (1) more lines from
# mountwatch and then from findmnt, so that no two steps coalesce in
# findmnt's re-read of mountinfo (a remount and its undoing would vanish).
step() {
	local want=1
	case $1 in -[0-9]) want=${1#-}; shift ;; esac
	"$@" || fail "$*"
	n=$((n + want))
	mw_wait_lines "$W/mw" "$n" || fail "mountwatch saw nothing after: $*"
	for _ in $(seq 100); do
		[ "$(grep -c "TARGET=\"$R[/\"]" "$W/findmnt")" -ge "$n" ] && return 0
		sleep 0.05
	done
	echo "findmnt saw nothing after: $*" # the comparison below says what differs
}
step mount -t tmpfs fa "$R/a"
mkdir "$R/a/sub"
step mount --bind "$R/a/sub" "$R/b"
step mount --move "$R/b" "$R/c"
step mount -o remount,bind,ro "$R/c"
step mount -o remount,bind,rw "$R/c"
step "$SETATTR" "$R/c" +noexec
# The superblock: both of its mounts change, in an order of the source's
# own (compared as a set; a mount in between marks where each step ends);
# the bind stays rw itself, findmnt's OPTIONS says "ro,..." all the same.
step mount -t tmpfs sep "$R/sep"
step -2 mount -o remount,ro "$R/a"
step umount "$R/sep"
step -2 mount -o remount,rw "$R/a"
step mount --bind "$R/s/sub" "$R/p"
step mount -t tmpfs fo "$R/only"
step umount "$R/only"
step umount "$R/p"
step umount "$R/c"
step umount "$R/a"
sleep 0.3
kill "$FM" "$SUB"
wait "$FM" "$SUB" 2>/dev/null
mw_stop

python3 - "$R" "$W/findmnt" "$W/mw" <<'PY' || fail "findmnt and mountwatch disagree"
import re, sys
root, fm_path, mw_path = sys.argv[1], sys.argv[2], sys.argv[3]
pair = re.compile(r'([A-Z:-]+)="([^"]*)"')

def rows(path):
    out = []
    for line in open(path, encoding="utf-8", errors="surrogateescape"):
        d = dict(pair.findall(line))
        if d and (d["TARGET"] == root or d["TARGET"].startswith(root + "/")):
            out.append(d)
    return out

def canonical(rows):
    # Consecutive remounts (one superblock's mounts) in target order;
    # every other row keeps its place.
    out, run = [], []
    for d in rows + [None]:
        if d is not None and d["ACTION"] == "remount":
            run.append(d)
            continue
        out += sorted(run, key=lambda x: x["TARGET"])
        run = []
        if d is not None:
            out.append(d)
    return out

fm, mw = canonical(rows(fm_path)), canonical(rows(mw_path))
assert fm, "findmnt --poll reported nothing under %s" % root
cols = ["ACTION", "TARGET", "SOURCE", "FSTYPE", "OPTIONS", "ID", "PARENT", "MAJ:MIN",
        "FSROOT", "PROPAGATION"]
bad = 0
if len(fm) != len(mw):
    print("findmnt %d rows, mountwatch %d" % (len(fm), len(mw)))
    bad += 1
for i, (f, m) in enumerate(zip(fm, mw)):
    want = cols + (["OLD-TARGET"] if f["ACTION"] == "move" else []) + \
        (["OLD-OPTIONS"] if f["ACTION"] == "remount" else [])
    for c in want:
        if f[c] != m.get(c):
            print("row %d %s %s: %s: findmnt %r, mountwatch %r" %
                  (i, f["ACTION"], f["TARGET"], c, f[c], m.get(c)))
            bad += 1
# What the workload must have exercised, so that the comparison means something.
seen = {(f["ACTION"], "[" in f["SOURCE"], f["PROPAGATION"]) for f in fm}
for need in [("mount", True, "private"), ("move", True, "private"), ("mount", True, "shared"),
             ("remount", True, "private"), ("umount", False, "private")]:
    if need not in seen:
        print("workload did not produce", need)
        bad += 1
print("compared %d rows, %d columns each" % (len(fm), len(cols)))
sys.exit(1 if bad else 0)
PY
# findmnt calls all three "remount"; mountwatch says which in KIND.
got=$(sed -n 's/.*ACTION="remount".* KIND="\([a-z]*\)"$/\1/p' "$W/mw" | tr '\n' ' ')
[ "$got" = "readonly readonly attr readonly readonly readonly readonly " ] ||
	fail "kinds of the remounts: $got"
printf 'mount %s\numount %s\n' "$R/only" "$R/only" | diff -u - "$W/only" ||
	fail "--subtree $R/only saw more or less than its subtree"
echo "PASS: source $SRC: findmnt's $(grep -c "TARGET=\"$R" "$W/findmnt") events matched column for column, with kinds and subtree filtering"
