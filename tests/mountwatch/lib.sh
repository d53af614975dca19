# SPDX-License-Identifier: MIT
# Shared by the mountwatch tests: run in a private mount namespace with a
# tmpfs root, start mountwatch, wait for its output.  Sourced, not run.
#
# Exit codes: 0 pass, 1 fail, 77 skip (one line saying why).

MW=${MOUNTWATCH:?MOUNTWATCH must name the mountwatch binary}

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

# Re-runs the calling script in a new mount namespace where nothing
# propagates back to the host: unshare(CLONE_NEWNS) with everything
# remounted MS_REC|MS_PRIVATE (util-linux's --propagation private).
mw_private_ns() {
	[ "$(id -u)" = 0 ] || skip "needs root for mount namespaces"
	if [ -z "$MW_IN_PRIVATE_NS" ]; then
		unshare -m --propagation private true 2>/dev/null ||
			skip "unshare(CLONE_NEWNS) is not permitted here"
		MW_IN_PRIVATE_NS=1 exec unshare -m --propagation private "$BASH" "$0" "$@"
	fi
	MW_ROOT=$(mktemp -d /tmp/mountwatch-test.XXXXXX) || fail "mktemp"
	mount -t tmpfs mw-root "$MW_ROOT" || fail "cannot mount a tmpfs on $MW_ROOT"
	MW_WORK=$(mktemp -d /tmp/mountwatch-out.XXXXXX) || fail "mktemp"
	trap mw_cleanup EXIT
}

mw_cleanup() {
	[ -n "$MW_PID" ] && kill "$MW_PID" 2>/dev/null && wait "$MW_PID" 2>/dev/null
	# Only this namespace's mounts: they vanish with it anyway.
	umount -R "$MW_ROOT" 2>/dev/null
	rmdir "$MW_ROOT" 2>/dev/null
	rm -rf "$MW_WORK"
}

# Skips when the kernel lacks the source ($1): mountwatch exits 5.
mw_need_source() {
	"$MW" --source "$1" --timeout 0 >/dev/null 2>"$MW_WORK/probe.err"
	[ $? = 5 ] && skip "source $1: $(head -n1 "$MW_WORK/probe.err")"
	return 0
}

# mw_start OUT ARGS...: runs mountwatch in the background, output to OUT,
# stderr to OUT.err, and waits until it says it is ready.
mw_start() {
	local out=$1; shift
	"$MW" "$@" >"$out" 2>"$out.err" &
	MW_PID=$!
	for _ in $(seq 100); do
		grep -qs '^mountwatch: ready' "$out.err" && return 0
		kill -0 "$MW_PID" 2>/dev/null || break
		sleep 0.05
	done
	cat "$out.err"
	fail "mountwatch did not become ready: $*"
}

mw_stop() {
	kill -INT "$MW_PID" 2>/dev/null
	wait "$MW_PID"
	MW_RC=$?
	MW_PID=
}

# mw_wait_lines FILE N: waits up to 5 s for FILE to hold N lines.
mw_wait_lines() {
	for _ in $(seq 100); do
		[ "$(wc -l <"$1")" -ge "$2" ] && return 0
		sleep 0.05
	done
	return 1
}
