/* SPDX-License-Identifier: MIT */
/*
 * The routing path, set up in C through the library's test-only surface
 * (librouter/testing.h) so the C++ benchmark shim never sees it.  No
 * syscalls on the measured path: the namespace's source looks mounts up
 * from memory.
 */
#ifndef MR_BENCH_FIXTURE_H
#define MR_BENCH_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bench_route;

/*
 * @subs subscriptions: @matching of them on prefixes of the event path
 * (depth @depth), the rest on sibling subtrees that never match.
 */
struct bench_route *bench_route_new(size_t subs, size_t matching, unsigned depth);
/* One change from decoded record to enqueued in every matching ring. */
void bench_route_one(struct bench_route *b);
/* Empties the rings (outside the timed region); returns events taken. */
uint64_t bench_route_drain(struct bench_route *b);
uint64_t bench_route_delivered(const struct bench_route *b);
void bench_route_free(struct bench_route *b);

struct bench_trie;
struct bench_trie *bench_trie_new(size_t subs, unsigned depth);
/* Matches one path of the given depth; returns how many subscriptions hold it. */
size_t bench_trie_match(struct bench_trie *b, size_t i);
void bench_trie_free(struct bench_trie *b);

#ifdef __cplusplus
}
#endif

#endif
