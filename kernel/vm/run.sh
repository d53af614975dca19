#!/usr/bin/env bash
# Boot a kernel under qemu and run static test binaries in it, one by one.
#
#   kernel/vm/run.sh --kernel BZIMAGE [--timeout S] [--memory MB] [--smp N]
#                    [--accel tcg|kvm|auto] [--log FILE] [--file PATH]...
#                    [--host-file PATH]... [--no-skip] TEST_BINARY...
#
# Each binary is copied into an initramfs (with busybox-static) and run as
# root in the guest with no arguments, in the order given; its exit status is
# 0 pass, 77 skip, anything else fail.  The script exits 1 if a test failed,
# a test never finished, the guest timed out, or the kernel log shows a
# warning, BUG, KASAN report, lockdep splat, list corruption or (on a kernel
# with KMEMLEAK, scanned after the last test) a leak; 77 if every test
# skipped.  The guest's console log is
# kept (--log, default under $TMPDIR) and its tail printed on failure.
# --no-skip: a test that skips fails, for a kernel that has every feature
# the tests ask for (the project's), where a skip would hide a gap.
#
# Any statically linked program works, so library tests can run here too;
# so does a script for /bin/busybox sh.  --file copies a program or file the
# tests use into /tests beside them without running it; --host-file copies
# one to the same absolute path (a dynamic program's loader and libraries).
set -euo pipefail

usage() {
	sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
}

kernel=
timeout=300
memory=
smp=2
accel=${MR_VM_ACCEL:-tcg}
log=
tests=()
files=()
host_files=()
no_skip=0
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--memory) memory=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--accel) accel=$2; shift 2 ;;
	--log) log=$2; shift 2 ;;
	--file) files+=("$2"); shift 2 ;;
	--host-file) host_files+=("$2"); shift 2 ;;
	--no-skip) no_skip=1; shift ;;
	-h|--help) usage ;;
	--) shift; tests+=("$@"); break ;;
	-*) echo "run.sh: unknown option $1" >&2; usage ;;
	*) tests+=("$1"); shift ;;
	esac
done
[ -n "$kernel" ] || usage
[ -f "$kernel" ] || { echo "run.sh: no kernel at $kernel" >&2; exit 2; }
[ ${#tests[@]} -gt 0 ] || { echo "run.sh: no test binaries given" >&2; exit 2; }

# A program that names the dynamic loader needs a libc the guest lacks.
is_dynamic() { LC_ALL=C grep -aq -e '/lib64/ld-linux' -e '/lib/ld-linux' -e 'ld-musl' "$1"; }
busybox=
for b in /bin/busybox /usr/bin/busybox; do
	if [ -z "$busybox" ] && [ -x "$b" ] && ! is_dynamic "$b"; then busybox=$b; fi
done
[ -n "$busybox" ] ||
	{ echo "run.sh: need a static busybox (apt-get install busybox-static)" >&2; exit 2; }
command -v qemu-system-x86_64 >/dev/null ||
	{ echo "run.sh: need qemu-system-x86_64 (apt-get install qemu-system-x86)" >&2; exit 2; }

# KASAN kernels need room for shadow memory.
if [ -z "$memory" ]; then
	memory=512
	# kernel/build.sh leaves the kernel's .config next to it.
	grep -qs '^CONFIG_KASAN=y' "$kernel.config" && memory=1536 || true
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/mr-vm.XXXXXX")
trap 'rm -rf "$work"' EXIT
[ -n "$log" ] || log="${TMPDIR:-/tmp}/mr-vm-$(date +%Y%m%d-%H%M%S)-$$.log"
: >"$log"

root=$work/root
mkdir -p "$root"/{bin,dev,proc,sys,tmp,tests}
cp "$busybox" "$root/bin/busybox"
names=()
for t in "${tests[@]}"; do
	[ -x "$t" ] || { echo "run.sh: $t is not an executable" >&2; exit 2; }
	if is_dynamic "$t"; then
		echo "run.sh: $t is dynamically linked; the guest has no libc" >&2
		exit 2
	fi
	n=$(basename "$t")
	cp "$t" "$root/tests/$n"
	names+=("$n")
done
printf '%s\n' "${names[@]}" >"$root/tests/list"
for f in ${files[@]+"${files[@]}"}; do
	cp "$f" "$root/tests/"
done
for f in ${host_files[@]+"${host_files[@]}"}; do
	mkdir -p "$root$(dirname "$f")"
	cp -L "$f" "$root$f"
done

# Markers are parsed below; everything else on the console is the log.
cat >"$root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t tmpfs tmp /tmp
# A KMEMLEAK kernel is scanned after the last test.
km=
if mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null &&
	[ -w /sys/kernel/debug/kmemleak ]; then
	km=/sys/kernel/debug/kmemleak
fi
# Booted with "quiet": put what the kernel said so far in the log (a splat
# during boot counts too), then let every later message reach the console.
dmesg | sed 's/^/dmesg: /'
dmesg -n 8
up() { cut -d' ' -f1 /proc/uptime; }
echo "MR-VM: booted $(up)"
while read -r t; do
	echo "MR-VM: start $t $(up)"
	(cd /tmp && "/tests/$t")
	rc=$?
	echo "MR-VM: result $t $rc $(up)"
done </tests/list
if [ -n "$km" ]; then
	# Only objects older than 5 s are reported: let the last ones age.
	sleep 6
	echo scan >"$km"
	sed 's/^/kmemleak: /' "$km"
	echo "MR-VM: kmemleak scanned $(up)"
fi
echo "MR-VM: done $(up)"
sync
reboot -f
EOF
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initramfs.cpio.gz"

run_qemu() { # accel logfile initrd seconds
	timeout -k 5 "$4" qemu-system-x86_64 -accel "$1" -m "$memory" -smp "$smp" \
		-display none -monitor none -serial "file:$2" -no-reboot \
		-kernel "$kernel" -initrd "$3" \
		-append "console=ttyS0 quiet panic=-1 oops=panic" </dev/null >>"$2.qemu" 2>&1
}

if [ "$accel" = auto ]; then
	# /dev/kvm may open yet be unable to run a guest (nested, emulated):
	# trust it only if a short boot completes.
	accel=tcg
	if [ -w /dev/kvm ]; then
		probe=$work/probe
		mkdir -p "$probe/bin"
		cp "$busybox" "$probe/bin/busybox"
		printf '#!/bin/busybox sh\necho MR-VM: probe ok\n/bin/busybox reboot -f\n' >"$probe/init"
		chmod +x "$probe/init"
		(cd "$probe" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/probe.cpio.gz"
		if run_qemu kvm "$work/probe.log" "$work/probe.cpio.gz" 20 &&
			grep -q 'MR-VM: probe ok' "$work/probe.log"; then
			accel=kvm
		fi
	fi
	echo "vm: accelerator $accel"
fi

start=$(date +%s.%N)
set +e
run_qemu "$accel" "$log" "$work/initramfs.cpio.gz" "$timeout"
qrc=$?
set -e
elapsed=$(echo "$(date +%s.%N) - $start" | bc)
cat "$log.qemu" >>"$log" 2>/dev/null && rm -f "$log.qemu"

tr -d '\r' <"$log" >"$work/log"
# What counts as a kernel report, in a test or anywhere in the log.
splat_re='WARNING:|BUG:|KASAN:|possible circular locking|inconsistent lock state|possible recursive locking|suspicious RCU usage|DEBUG_LOCKS_WARN_ON|Kernel panic|Oops|list_add corruption|list_del corruption|kmemleak: unreferenced object'
fail=0
pass=0 skip=0 bad=0
for n in "${names[@]}"; do
	line=$(grep -a "^MR-VM: result $n " "$work/log" | head -n1 || true)
	# The kernel log between this test's start and result markers.
	seg=$(awk -v n="$n" '$0 ~ "^MR-VM: start "n" " {p=1} p {print} $0 ~ "^MR-VM: result "n" " {p=0}' "$work/log")
	splat=$(printf '%s\n' "$seg" | grep -aE "$splat_re" | head -n3 || true)
	if [ -z "$line" ]; then
		echo "vm: FAIL $n (did not finish)"
		bad=$((bad + 1))
		continue
	fi
	set -- $line
	rc=$4
	secs=$(echo "$5 - $(printf '%s\n' "$seg" | head -n1 | awk '{print $4}')" | bc)
	if [ -n "$splat" ]; then
		echo "vm: FAIL $n (exit $rc, kernel: $(printf '%s' "$splat" | head -n1))"
		bad=$((bad + 1))
	elif [ "$rc" = 0 ]; then
		echo "vm: PASS $n (exit 0, ${secs}s)"
		pass=$((pass + 1))
	elif [ "$rc" = 77 ] && [ $no_skip = 1 ]; then
		echo "vm: FAIL $n (skipped on a kernel that should have it all: $(printf '%s\n' "$seg" | grep -av '^MR-VM' | tail -n1))"
		bad=$((bad + 1))
	elif [ "$rc" = 77 ]; then
		echo "vm: SKIP $n (exit 77: $(printf '%s\n' "$seg" | grep -av '^MR-VM' | tail -n1))"
		skip=$((skip + 1))
	else
		echo "vm: FAIL $n (exit $rc)"
		bad=$((bad + 1))
	fi
done

# Splats outside any test (boot, shutdown) count too.
if grep -aqE "$splat_re" "$work/log"; then
	[ $bad -gt 0 ] || echo "vm: FAIL kernel log shows a splat outside the tests: $(grep -aE "$splat_re" "$work/log" | head -n1)"
	fail=1
fi
leaks=$(grep -ac 'kmemleak: unreferenced object' "$work/log" || true)
if grep -qs '^CONFIG_DEBUG_KMEMLEAK=y' "$kernel.config"; then
	if ! grep -aq '^MR-VM: kmemleak scanned' "$work/log"; then
		echo "vm: FAIL the KMEMLEAK kernel was not scanned for leaks"
		fail=1
	else
		echo "vm: kmemleak: $leaks unreferenced objects"
	fi
fi
boot=$(grep -a '^MR-VM: booted ' "$work/log" | awk '{print $3}' || true)
if [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
	echo "vm: FAIL guest timed out after ${timeout}s"
	fail=1
elif ! grep -aq '^MR-VM: done ' "$work/log"; then
	echo "vm: FAIL guest did not finish (qemu exit $qrc)"
	fail=1
fi
[ $bad -eq 0 ] || fail=1
echo "vm: summary: $pass passed, $skip skipped, $bad failed; guest boot ${boot:-?}s, wall ${elapsed}s ($accel); log $log"
if [ $fail -ne 0 ]; then
	echo "vm: ---- last 60 lines of $log ----"
	tail -n 60 "$work/log"
	exit 1
fi
# Everything skipped (e.g. a kernel without the feature): tell ctest so.
[ $pass -gt 0 ] || [ $skip -eq 0 ] || exit 77
exit 0
