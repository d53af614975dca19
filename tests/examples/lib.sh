# SPDX-License-Identifier: MIT
# Shared by the example tests: a private mount namespace on a tmpfs, never
# the host's mount table.  Sourced, not run.  Exit 0 pass, 1 fail, 77 skip.

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

# Re-runs the calling script in a new mount namespace with everything
# MS_REC|MS_PRIVATE, then mounts a tmpfs work root at $EX_ROOT.
ex_private_ns() {
	[ "$(id -u)" = 0 ] || skip "needs root for mount namespaces"
	if [ -z "$EX_IN_PRIVATE_NS" ]; then
		unshare -m --propagation private true 2>/dev/null ||
			skip "unshare(CLONE_NEWNS) is not permitted here"
		EX_IN_PRIVATE_NS=1 exec unshare -m --propagation private "$BASH" "$0" "$@"
	fi
	EX_ROOT=$(mktemp -d /tmp/examples-test.XXXXXX) || fail "mktemp"
	mount -t tmpfs ex-root "$EX_ROOT" || fail "cannot mount a tmpfs on $EX_ROOT"
	EX_OUT=$(mktemp -d /tmp/examples-out.XXXXXX) || fail "mktemp"
	trap ex_cleanup EXIT
}

ex_cleanup() {
	[ -n "$EX_PID" ] && kill -KILL "$EX_PID" 2>/dev/null && wait "$EX_PID" 2>/dev/null
	umount -R "$EX_ROOT" 2>/dev/null
	rmdir "$EX_ROOT" 2>/dev/null
	rm -rf "$EX_OUT"
}

# ex_skip_unsupported FILE: skips when the example's output says the
# router could not open the source asked for on this kernel (ENOSYS).
ex_skip_unsupported() {
	grep -q 'mr_router_new: Function not implemented' "$1" &&
		skip "source not supported by this kernel: $(head -n1 "$1")"
	return 0
}

# ex_wait FILE PATTERN: waits up to 10 s for PATTERN in FILE.
ex_wait() {
	for _ in $(seq 200); do
		grep -q -- "$2" "$1" && return 0
		[ -n "$EX_PID" ] && ! kill -0 "$EX_PID" 2>/dev/null && break
		sleep 0.05
	done
	return 1
}

# ex_stop SIGNAL: signals the example and waits for it; EX_RC its status.
ex_stop() {
	kill -"$1" "$EX_PID"
	wait "$EX_PID"
	EX_RC=$?
	EX_PID=
}
