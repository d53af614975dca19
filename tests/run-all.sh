#!/usr/bin/env bash
# Builds mountrouter and runs every test:
#   1. the release build: unit, kernel, root, stress and (with the project's
#      kernel under qemu) vm tests, and the host-kernel tests on Debian's
#      stock 6.1 and 6.12 kernels under qemu (label stock, ~35 s each);
#   2. AddressSanitizer + UndefinedBehaviorSanitizer: unit and kernel tests;
#   3. ThreadSanitizer: the ring, router and namespace tests (the cross-thread paths);
#   4. the fuzzers' smoke runs (clang, libFuzzer) and valgrind's memcheck
#      (the model-kernel tests, and the host-kernel ones on the epoll backend).
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

step "fuzz smoke: libFuzzer with ASan+UBSan, 60 s per target, two at a time"
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DMR_FUZZ=ON -DMR_SANITIZE=address,undefined \
	-DMR_BUILD_BENCH=OFF -DMR_BUILD_STRESS=OFF -DMR_BUILD_EXAMPLES=OFF
cmake --build build-fuzz -j"$jobs" --target fuzz_mountinfo fuzz_watch_queue fuzz_fanotify \
	fuzz_statmount fuzz_router
ctest --test-dir build-fuzz --output-on-failure -L fuzz -j2

step "valgrind memcheck"
cmake -S . -B build-vg -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS=-DMR_SANITIZER_ALLOC \
	-DMR_BUILD_BENCH=OFF -DMR_BUILD_STRESS=OFF -DMR_BUILD_EXAMPLES=OFF
cmake --build build-vg -j"$jobs" --target test_model_router test_faults test_mirror test_trie \
	test_ring test_decode test_mountinfo test_router_mountinfo test_namespaces_mountinfo \
	test_faults_ns_mountinfo test_reactor_fallback test_truth_fanotify test_faults_host
tests/valgrind.sh build-vg

step "all tests passed"
