#!/usr/bin/env bash
# Run static test programs on the project's kernel, building it if needed.
#
#   kernel/vm/run-tests.sh [--debug] [run.sh options] [PROGRAM...]
#
# With no PROGRAM, compiles tests/vm/*.c (static, gcc) and runs them all:
# the one command for the vm tests.  --debug uses the lockdep + KASAN kernel.
# Other options go to kernel/vm/run.sh.  Exit: 0 pass, 77 all skipped, 1 fail.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

build_args=()
run_args=()
progs=()
while [ $# -gt 0 ]; do
	case $1 in
	--debug) build_args+=(--debug); shift ;;
	--timeout|--memory|--smp|--accel|--log) run_args+=("$1" "$2"); shift 2 ;;
	-h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) progs+=("$1"); shift ;;
	esac
done

kernel=$("$top/kernel/build.sh" "${build_args[@]}" | tail -n1)

if [ ${#progs[@]} -eq 0 ]; then
	bin=${MR_VM_BIN:-$(mktemp -d "${TMPDIR:-/tmp}/mr-vm-bin.XXXXXX")}
	mkdir -p "$bin"
	for c in "$top"/tests/vm/*.c; do
		n=vm_$(basename "$c" .c)
		gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Wshadow -static -pthread \
			-I"$top/include" -o "$bin/$n" "$c"
		progs+=("$bin/$n")
	done
fi

exec "$here/run.sh" --kernel "$kernel" "${run_args[@]}" "${progs[@]}"
