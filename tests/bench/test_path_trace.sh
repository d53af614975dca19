#!/usr/bin/env bash
# path_trace (bench/single) on two table sizes: a change single-stepped in
# the floor and in the router waiting in mr_router_wait().  Instruction
# counts are exact, not timings, so this checks what the cost model
# promises: the router's median mount and umount run the same code at 100
# and at 3,000 mounts (within a quarter), and a bad argument is refused.
#   tests/bench/test_path_trace.sh BUILD_DIR
set -euo pipefail
build=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

if "$build/bench/path_trace" --mounts 0 >/dev/null 2>"$out/err"; then
	echo "--mounts 0 accepted"
	exit 1
elif [[ $? != 2 ]] || ! grep -q "^usage: path_trace" "$out/err"; then
	echo "--mounts 0: no usage line and exit 2:"
	cat "$out/err"
	exit 1
fi

# The median change's instructions: watcher name prefix, kind, report.
instructions() {
	sed -En "s/^### $1, $2: ([0-9]+) instructions.*/\\1/p" "$3"
}

router="mountrouter, fanotify, one thread, mr_router_wait"
for n in 100 3000; do
	if ! "$build/bench/path_trace" --mounts $n --changes 5 --watchers 0,14 \
		>"$out/$n.md" 2>"$out/err"; then
		if grep -q "PTRACE_SEIZE" "$out/err"; then
			echo "skip: ptrace refused here: $(head -1 "$out/err")"
			exit 77
		fi
		cat "$out/err"
		exit 1
	fi
	if grep -q "left out" "$out/err"; then
		echo "skip: $(head -1 "$out/err")"
		exit 77
	fi
	for kind in mount umount; do
		floor=$(instructions "floor \\(bare fanotify loop\\)" $kind "$out/$n.md")
		mine=$(instructions "$router" $kind "$out/$n.md")
		[[ -n $floor && -n $mine && $floor -gt 0 && $mine -gt $floor ]] ||
			{ echo "$n mounts, $kind: floor '$floor', router '$mine'"; cat "$out/$n.md"; exit 1; }
		declare "router_${kind}_$n=$mine"
	done
	grep -Eq '^\| libc\.so\.6 \| [1-9][0-9]* \| [1-9][0-9]* \|$' "$out/$n.md" ||
		{ echo "no code lines and pages for libc"; cat "$out/$n.md"; exit 1; }
done

for kind in mount umount; do
	small=router_${kind}_100 big=router_${kind}_3000
	if ((${!big} * 4 > ${!small} * 5 || ${!small} * 4 > ${!big} * 5)); then
		echo "the router's $kind: ${!small} instructions at 100 mounts, ${!big} at 3,000"
		exit 1
	fi
	echo "the router's $kind: ${!small} instructions at 100 mounts, ${!big} at 3,000"
done
