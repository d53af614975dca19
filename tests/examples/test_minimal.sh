#!/bin/bash
# SPDX-License-Identifier: MIT
# test_minimal.sh SOURCE_DIR: examples/minimal prints exactly the changes
# made under its subtree, one line each, and exits 0 on SIGTERM; the
# README quotes examples/minimal.c as it is.
. "$(dirname "$0")/lib.sh"
SRC=${1:?usage: test_minimal.sh SOURCE_DIR}
MINIMAL=${MINIMAL:?MINIMAL must name the minimal binary}

# The README's block is the file itself, not a copy that drifted.
awk '/^```c$/ {on = 1; buf = ""; next} on && /^```$/ {on = 0; if (buf ~ /minimal \[SUBTREE\]/) print buf; next}
     on {buf = buf $0 "\n"}' "$SRC/README.md" | head -c -1 >"${TMPDIR:-/tmp}/readme-minimal.$$"
cmp -s "${TMPDIR:-/tmp}/readme-minimal.$$" "$SRC/examples/minimal.c"
same=$?
rm -f "${TMPDIR:-/tmp}/readme-minimal.$$"
[ $same = 0 ] || fail "README.md does not quote examples/minimal.c as it is"
[ "$(wc -l <"$SRC/examples/minimal.c")" -lt 40 ] || fail "examples/minimal.c is 40 lines or more"

ex_private_ns "$@"
R=$EX_ROOT
OUT=$EX_OUT/minimal.out
mkdir "$R/w" "$R/w/a" "$R/outside"
"$MINIMAL" "$R/w" >"$OUT" 2>&1 &
EX_PID=$!
ex_wait "$OUT" '^watching ' || fail "not watching: $(cat "$OUT")"

mount -t tmpfs a "$R/w/a" || fail "mount"
ex_wait "$OUT" "^mount $R/w/a\$" || fail "no mount line: $(cat "$OUT")"
mount -t tmpfs o "$R/outside" || fail "mount outside"
mount -o remount,ro "$R/w/a" || fail "remount"
ex_wait "$OUT" "^readonly $R/w/a\$" || fail "no readonly line: $(cat "$OUT")"
umount "$R/w/a" || fail "umount"
ex_wait "$OUT" "^unmount $R/w/a\$" || fail "no unmount line: $(cat "$OUT")"
sleep 0.3 # anything else it would print, such as the mount outside its subtree
ex_stop TERM
[ "$EX_RC" = 0 ] || fail "exit status $EX_RC on SIGTERM: $(cat "$OUT")"
want="watching $R/w through $(sed -n 's/^watching .* through //p' "$OUT")
mount $R/w/a
readonly $R/w/a
unmount $R/w/a"
[ "$(cat "$OUT")" = "$want" ] || fail "output: $(cat "$OUT")"
echo "minimal: three changes under its subtree, nothing else, clean exit on SIGTERM"
