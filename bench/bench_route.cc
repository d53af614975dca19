// SPDX-License-Identifier: MIT
// Google Benchmark shim over fixture.c: the routing path and the trie.
// Each benchmark checks its results after timing.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>

#include "fixture.h"

namespace {

void check(bool ok, const char *what)
{
	if (!ok) {
		std::fprintf(stderr, "benchmark result check failed: %s\n", what);
		std::abort();
	}
}

// From a decoded record to the event enqueued in every matching ring:
// mirror lookup, event build, trie match, refcount, SPSC enqueues.
void BM_Route(benchmark::State &state)
{
	const size_t subs = static_cast<size_t>(state.range(0));
	const size_t matching = static_cast<size_t>(state.range(1));
	bench_route *b = bench_route_new(subs, matching, 8);
	uint64_t events = 0;

	for (auto _ : state) {
		bench_route_one(b);
		if (++events % 4096 == 0) {
			state.PauseTiming();
			bench_route_drain(b);
			state.ResumeTiming();
		}
	}
	bench_route_drain(b);
	check(bench_route_delivered(b) == events * matching, "every matching ring got every event");
	state.counters["matching_rings"] = static_cast<double>(matching);
	state.SetItemsProcessed(static_cast<int64_t>(events));
	bench_route_free(b);
}
BENCHMARK(BM_Route)->Args({1000, 1})->Args({1000, 9})->Args({1000, 100})->Args({100000, 9});

// Lookup of a depth-8 path among many subscriptions (see fixture.c).
void BM_TrieMatch(benchmark::State &state)
{
	bench_trie *b = bench_trie_new(static_cast<size_t>(state.range(0)), 8);
	size_t i = 0, hits = 0;

	for (auto _ : state)
		hits += bench_trie_match(b, i++);
	check(hits == 4 * i, "each depth-8 query holds its container's four subscriptions");
	state.counters["matches"] = 4;
	state.SetItemsProcessed(static_cast<int64_t>(i));
	bench_trie_free(b);
}
BENCHMARK(BM_TrieMatch)->Arg(1000)->Arg(100000);

} // namespace

BENCHMARK_MAIN();
