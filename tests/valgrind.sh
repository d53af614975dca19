#!/usr/bin/env bash
# Runs under valgrind's memcheck, in a build that allocates through the C
# library so memcheck sees every block (-DCMAKE_C_FLAGS=-DMR_SANITIZER_ALLOC):
#  - the tests that drive the whole router over the model kernel (apply
#    path, mirror, rings, recovery, every fault of test_faults);
#  - the integration tests on the host kernel, with MR_TEST_REACTOR=epoll:
#    valgrind 3.19 (Debian 12) does not deliver the io_uring completions
#    the router waits for, so the router reads through the epoll backend
#    it falls back to where io_uring is refused.  valgrind also knows
#    neither statmount(2) nor listmount(2) (ENOSYS): the library probes
#    them and picks the mountinfo source, and tests whose source or truth
#    needs them skip, saying so.
# Fails on any memcheck error or definite leak; a skip is reported, not a
# failure.  Not run: test_misuse, whose children misuse the API on purpose.
# Usage: tests/valgrind.sh BUILD_DIR
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v valgrind >/dev/null; then
	echo "valgrind.sh: no valgrind" >&2
	exit 77
fi
# binary and arguments; the host-kernel ones run on the epoll backend.
model_tests=(test_model_router test_faults test_mirror test_trie test_ring test_decode test_mountinfo)
kernel_tests=(
	"test_router_mountinfo mountinfo"
	"test_namespaces_mountinfo mountinfo"
	"test_faults_ns_mountinfo mountinfo"
	"test_reactor_fallback"
	"test_truth_fanotify fanotify plain"
	"test_faults_host"
)
rc=0
run() {
	local name=$1
	shift
	local log=$build/tests/$name.valgrind.log
	local status=0
	timeout 1800 valgrind --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite \
		--show-leak-kinds=definite --suppressions="$here/valgrind.supp" --quiet \
		--trace-children=no "$build/tests/$name" "$@" >"$log" 2>&1 || status=$?
	case $status in
	0) echo "valgrind $name${*:+ $*}: clean" ;;
	77) echo "valgrind $name${*:+ $*}: skipped ($(grep -m1 -i 'skip\|not\|no ' "$log" || true))" ;;
	*)
		echo "valgrind $name${*:+ $*}: FAILED (rc $status), see $log"
		tail -40 "$log"
		rc=1
		;;
	esac
}
for t in "${model_tests[@]}"; do
	run "$t"
done
for t in "${kernel_tests[@]}"; do
	# shellcheck disable=SC2086 # the arguments split on purpose
	MR_TEST_REACTOR=epoll run $t
done
exit $rc
