// SPDX-License-Identifier: MIT
// Google Benchmark shim over tables.c: the project's mountinfo parser
// beside libmount's, and the mirror's ID table beside ck_hs, at 10,000
// mounts, in one run.  Each benchmark checks its results after timing.
#include <benchmark/benchmark.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

#include "tables.h"

namespace {

constexpr size_t kMounts = 10000;

void check(bool ok, const char *what)
{
	if (!ok) {
		std::fprintf(stderr, "benchmark result check failed: %s\n", what);
		std::abort();
	}
}

// One file for every parser benchmark of the run, removed at exit.
const char *mountinfo_path()
{
	static char path[64];
	static bool made;

	if (!made) {
		check(bench_mountinfo_write(kMounts, path) == 0, "mountinfo file written");
		std::atexit([] { unlink(path); });
		made = true;
	}
	return path;
}

// Read and parse a whole 10,000-line mountinfo: what a resync costs.
void BM_Parse(benchmark::State &state, long (*parse)(const char *))
{
	const char *path = mountinfo_path();
	long n = 0;

	if (parse(path) == -EOPNOTSUPP) {
		state.SkipWithError("built without libmount");
		return;
	}
	for (auto _ : state) {
		n = parse(path);
		benchmark::DoNotOptimize(n);
	}
	check(n == static_cast<long>(kMounts), "every line parsed into a mount");
	state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kMounts));
}
BENCHMARK_CAPTURE(BM_Parse, project, bench_parse_project)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Parse, libmount, bench_parse_libmount)->Unit(benchmark::kMicrosecond);

// One lookup of a live ID in a 10,000-mount table.
void BM_IdLookup(benchmark::State &state, bench_ids_kind kind)
{
	bench_ids *b = bench_ids_new(kMounts, kind);
	bool ok = true;

	check(b != nullptr, "table built");
	for (auto _ : state)
		ok &= bench_ids_lookup(b);
	check(ok, "every lookup found its mount");
	check(bench_ids_check(b), "table holds the live IDs");
	bench_ids_free(b);
}
BENCHMARK_CAPTURE(BM_IdLookup, mirror, BENCH_IDS_MIRROR);
BENCHMARK_CAPTURE(BM_IdLookup, ck_hs, BENCH_IDS_CK_HS);

// One unmount and one mount: remove the oldest ID, look up a live one,
// insert a new one, with the superblock and parent counts kept.
void BM_IdChurn(benchmark::State &state, bench_ids_kind kind)
{
	bench_ids *b = bench_ids_new(kMounts, kind);
	bool ok = true;

	check(b != nullptr, "table built");
	for (auto _ : state)
		ok &= bench_ids_churn(b);
	check(ok, "every remove, lookup and insert succeeded");
	check(bench_ids_check(b), "table holds the live IDs");
	bench_ids_free(b);
}
BENCHMARK_CAPTURE(BM_IdChurn, mirror, BENCH_IDS_MIRROR);
BENCHMARK_CAPTURE(BM_IdChurn, ck_hs, BENCH_IDS_CK_HS);
BENCHMARK_CAPTURE(BM_IdChurn, ck_hs_ids_only, BENCH_IDS_CK_HS_ONLY);

} // namespace

BENCHMARK_MAIN();
