#!/usr/bin/env bash
# Installs what mountrouter needs to build, test and boot its kernel, from
# Debian 12's packages.  Idempotent: installs only what is missing and runs
# apt-get update only when something is.  Needs root.
set -euo pipefail

packages=(
	# build
	build-essential cmake pkg-config
	# library dependencies
	liburing-dev libjemalloc-dev libck-dev
	# benchmarks and tools
	libbenchmark-dev hyperfine gnuplot-nox jq
	# bench_tables' libmount rows (skipped without it)
	libmount-dev
	# tests: findmnt, unshare, tmux for the terminal test
	util-linux mount tmux
	# the project's kernel (kernel/build.sh) and its VM runner
	linux-source-6.12 busybox-static qemu-system-x86 flex bison bc libelf-dev libssl-dev cpio
	xz-utils kmod
	# tests: the --json schema check, the Debian source package build and lintian
	python3-jsonschema debhelper dpkg-dev fakeroot lintian
	# the ABI check (tests/abi/check-abi.sh): abidw, abidiff
	abigail-tools
	# the stock-kernel matrix (kernel/vm/run-stock.sh): mountwatch's scripts in the guest
	bash-static
	# fuzzers (libFuzzer: clang and its runtimes) and memcheck
	clang libclang-rt-dev valgrind
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
	if [[ $(id -u) -ne 0 ]]; then
		echo "setup.sh: missing packages (${missing[*]}); run as root" >&2
		exit 1
	fi
	echo "setup.sh: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${missing[@]}"
else
	echo "setup.sh: all packages present" >&2
fi

# Debian's own kernels for the stock-kernel matrix (6.1 and the 6.12 line),
# downloaded and unpacked, not installed; cached after the first time.
if ! "$(dirname "$0")/kernel/vm/stock-kernels.sh" >/dev/null; then
	apt-get update -q
	"$(dirname "$0")/kernel/vm/stock-kernels.sh" >/dev/null
fi
