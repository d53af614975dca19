#!/usr/bin/env bash
# Builds mountrouter and runs every test:
#   1. the release build: unit, kernel, root, stress and (with the project's
#      kernel under qemu) vm tests, and the host-kernel tests on Debian's
#      stock 6.1 and 6.12 kernels under qemu (label stock, ~35 s each);
#   2. AddressSanitizer + UndefinedBehaviorSanitizer: unit and kernel tests;
#   3. ThreadSanitizer: the ring, router and namespace tests (the cross-thread paths).
# Exits non-zero if any test fails.  MR_SKIP_VM=1 leaves out the vm and stock tests.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc)
vm=ON
[[ ${MR_SKIP_VM:-0} == 1 ]] && vm=OFF

step() { printf '\n==== %s ====\n' "$*"; }

step "release build"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMR_VM_TESTS=$vm
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j1

step "address,undefined"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DMR_SANITIZE=address,undefined \
	-DMR_BUILD_BENCH=OFF -DMR_BUILD_STRESS=OFF -DMR_BUILD_EXAMPLES=OFF
cmake --build build-asan -j"$jobs"
ctest --test-dir build-asan --output-on-failure -L 'unit|kernel'

step "thread"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DMR_SANITIZE=thread \
	-DMR_BUILD_BENCH=OFF -DMR_BUILD_STRESS=OFF -DMR_BUILD_EXAMPLES=OFF
cmake --build build-tsan -j"$jobs"
ctest --test-dir build-tsan --output-on-failure -R 'test_ring|test_router|test_namespaces'

step "all tests passed"
