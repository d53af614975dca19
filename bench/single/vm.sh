#!/usr/bin/env bash
# single_change on the project's kernel under qemu (TCG): the fanotify source
# there has FAN_MNT_ATTR_CHANGE (kernel/patches/0021), so remounts and
# mount_setattr(2) are named by the kernel, not found by a pass.
#   bench/single/vm.sh BUILD_DIR [SINGLE_CHANGE ARGS...]
# BUILD_DIR configured with -DMR_VM_TESTS=ON or -DMR_STRESS_STATIC=ON (both
# bring the fully static link); prints single_change's table, a watcher the
# kernel cannot run as a row saying why (the console keeps only the table).
# MR_VM_KERNEL=VMLINUZ boots another kernel (Debian's stock ones: kernel/vm/stock-kernels.sh).
set -euo pipefail
build=$1
shift
args=${*:---mounts 10000 --changes 10 --findmnt-max 0}
cmake --build "$build" --target single_change_static >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$build/bench/single_change_static" "$work/single_change"
cat >"$work/run-single-change" <<SH
#!/bin/busybox sh
cd /tmp && /tests/single_change $args
SH
chmod +x "$work/run-single-change"
kernel=${MR_VM_KERNEL:-$(kernel/build.sh | tail -1)}
kernel/vm/run.sh --kernel "$kernel" --memory 2048 --timeout 1800 --log "$work/vm.log" \
	--file "$work/single_change" "$work/run-single-change" >/dev/null 2>&1 || true
grep -E '^\|' "$work/vm.log" | tr -d '\r'
