#!/bin/bash
# SPDX-License-Identifier: MIT
# test_json_schema.sh SOURCE: real `mountwatch --json` output, from a
# workload with every kind of line (snapshot, mount, bind of a
# subdirectory, move, remounts, setattr, propagation, unmount, an overrun
# and its snapshot, hostile names), validated line by line against
# mountwatch.schema.json with python3-jsonschema; without -o every field of
# the schema is present; with -o exactly the columns asked for.
. "$(dirname "$0")/lib.sh"
SRC=${1:?usage: test_json_schema.sh SOURCE}
SCHEMA=${MW_SCHEMA:?MW_SCHEMA must name mountwatch.schema.json}
SETATTR=${MW_SETATTR:?MW_SETATTR must name the mw_setattr helper}
command -v python3 >/dev/null || skip "python3 is not installed"
python3 -c 'import jsonschema' 2>/dev/null || skip "python3-jsonschema is not installed"
mw_private_ns "$@"
mw_need_source "$SRC"
R=$MW_ROOT
W=$MW_WORK
mkdir "$R/a" "$R/b" "$R/c" "$R/s" "$R/p" "$R/q"
for i in $(seq 12); do mkdir "$R/m$i"; done
mkdir "$R/$(printf 'c1\302\205\302\233ctl\033[1m')" "$R/$(printf 'bad\377utf8')"
mount -t tmpfs fs "$R/s" && mount --make-shared "$R/s" || fail "shared mount"

mw_start "$W/all.json" --json --snapshot --source "$SRC" --subtree "$R" --queue 4
mw_start_o() { mw_start "$W/o.json" --json -o ACTION,TARGET,FLAGS,MAJ:MIN,OLD-PROPAGATION \
	--monotonic --source "$SRC" --subtree "$R"; O_PID=$MW_PID; }
PID_ALL=$MW_PID
mw_start_o
MW_PID=$PID_ALL

run() { "$@" || fail "$*"; sleep 0.05; }
run mount -t tmpfs fa "$R/a"
mkdir "$R/a/sub"
run mount --bind "$R/a/sub" "$R/b"
run mount --move "$R/b" "$R/c"
run mount -o remount,bind,ro "$R/c"
run mount -o remount,ro "$R/a"
run "$SETATTR" "$R/c" +noexec
run mount --bind "$R/s" "$R/p"
run mount --make-private "$R/p"
run mount --make-unbindable "$R/p"
for d in "$R"/c1* "$R"/bad*; do run mount -t tmpfs hostile "$d"; done
# An overrun: the first watcher stopped while more than its queue happens.
kill -STOP "$PID_ALL"
for i in $(seq 12); do mount -t tmpfs "m$i" "$R/m$i" || fail "mount m$i"; done
kill -CONT "$PID_ALL"
sleep 0.3
run umount "$R/c"
run umount -l "$R/a"
for i in $(seq 12); do umount "$R/m$i"; done
sleep 0.5
mw_stop
MW_PID=$O_PID
mw_stop

python3 - "$SCHEMA" "$W/all.json" "$W/o.json" <<'PY' || fail "output does not follow the schema"
import json, sys
from jsonschema import Draft202012Validator
schema_path, all_path, o_path = sys.argv[1:]
schema = json.load(open(schema_path))
Draft202012Validator.check_schema(schema)
v = Draft202012Validator(schema)
markers_only = {"lost", "loss", "delivered"}
everything = set(schema["properties"]) - markers_only
bad, actions, kinds = 0, set(), set()

def check(path, want_keys):
    global bad
    n = 0
    for raw in open(path, "rb"):
        n += 1
        rec = json.loads(raw.decode("utf-8"))
        for e in v.iter_errors(rec):
            print("%s line %d: %s: %s" % (path, n, "/".join(map(str, e.path)), e.message))
            bad += 1
        keys = set(rec) - markers_only
        if keys != want_keys:
            print("%s line %d: keys %s, want %s" % (path, n, sorted(keys ^ want_keys), "all"))
            bad += 1
        actions.add(rec.get("action"))
        kinds.add(rec.get("kind"))
    return n

n_all = check(all_path, everything)
n_o = check(o_path, {"v", "action", "target", "flags", "synthetic", "maj_min", "old_propagation"})
# The workload must have produced the lines the schema describes.
for need in ["snapshot", "mount", "move", "remount", "umount", "overrun"]:
    if need not in actions:
        print("no %s line in %s" % (need, all_path))
        bad += 1
for need in ["readonly", "attr", "unmount"]:
    if need not in kinds:
        print("no kind %s in %s" % (need, all_path))
        bad += 1
print("validated %d + %d lines" % (n_all, n_o))
sys.exit(1 if bad else 0)
PY
echo "PASS: source $SRC: $(wc -l <"$W/all.json") + $(wc -l <"$W/o.json") lines of --json follow schema version 1"
