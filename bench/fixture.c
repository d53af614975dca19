/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "../librouter/testing.h"

struct bench_route {
	mr_router *r;
	struct mr__testing_ns *ns;
	struct mr_sub **subs;
	size_t n_subs;
	struct mr__mount *rec[2]; /* the mount as two alternating states */
	unsigned flip;
	uint64_t taken;
};

/* The source's lookup: the next state of the mount, from memory. */
static int lookup(void *arg, uint64_t id, struct mr__mount **ret)
{
	struct bench_route *b = arg;

	(void)id;
	b->flip ^= 1;
	*ret = mr__testing_mount_ref(b->rec[b->flip]);
	return 0;
}

static void path_of_depth(char *out, size_t len, unsigned depth, const char *tail)
{
	size_t o = 0;

	for (unsigned d = 0; d < depth; d++)
		o += (size_t)snprintf(out + o, len - o, "/level%u", d);
	snprintf(out + o, len - o, "%s", tail);
}

struct bench_route *bench_route_new(size_t subs, size_t matching, unsigned depth)
{
	struct bench_route *b = calloc(1, sizeof(*b));
	struct mr_opts o = {.size = sizeof(o), .flags = MR_OPT_NO_SELF_NS, .source = "mountinfo"};
	char path[512];

	if (mr_router_new(&o, &b->r) < 0 || mr__testing_ns_new(b->r, lookup, b, &b->ns) < 0)
		abort();

	path_of_depth(path, sizeof(path), depth, "");
	for (int i = 0; i < 2; i++) {
		struct mr_mount f = {.id = 42, .parent_id = 1, .path = path, .root = "/",
				     .source = "bench", .fstype = "tmpfs",
				     .options = i ? "rw,nosuid" : "rw", .attr = i ? 2 : 0};
		b->rec[i] = mr__testing_mount_new(&f);
		if (!b->rec[i])
			abort();
	}
	if (mr__testing_ns_put(b->ns, mr__testing_mount_ref(b->rec[0])) < 0)
		abort();

	b->subs = calloc(subs, sizeof(*b->subs));
	b->n_subs = subs;
	for (size_t i = 0; i < subs; i++) {
		char prefix[512];
		if (i < matching) /* prefixes of the event path, shallow to deep */
			path_of_depth(prefix, sizeof(prefix), (unsigned)(i % (depth + 1)), "");
		else /* siblings at every level: the trie must skip them */
			path_of_depth(prefix, sizeof(prefix), (unsigned)(i % depth),
				      (snprintf(path, sizeof(path), "/other%zu", i), path));
		struct mr_sub_opts so = {.size = sizeof(so), .subtree = prefix[0] ? prefix : "/",
					 .capacity = 1u << 16};
		if (mr__testing_ns_subscribe(b->ns, &so, &b->subs[i]) < 0)
			abort();
	}
	return b;
}

void bench_route_one(struct bench_route *b)
{
	mr__testing_ns_change(b->ns, MR_EVENT_ATTR, 42);
}

uint64_t bench_route_drain(struct bench_route *b)
{
	uint64_t n = 0;

	for (size_t i = 0; i < b->n_subs; i++) {
		const struct mr_event *ev;
		while (mr_sub_next(b->subs[i], &ev) == 0) {
			mr_event_unref(ev);
			n++;
		}
	}
	b->taken += n;
	return n;
}

uint64_t bench_route_delivered(const struct bench_route *b)
{
	return b->taken;
}

void bench_route_free(struct bench_route *b)
{
	bench_route_drain(b);
	for (size_t i = 0; i < b->n_subs; i++)
		mr__testing_ns_unsubscribe(b->ns, b->subs[i]);
	mr__testing_ns_free(b->ns);
	mr__testing_mount_unref(b->rec[0]);
	mr__testing_mount_unref(b->rec[1]);
	mr_router_free(b->r);
	free(b->subs);
	free(b);
}

struct bench_trie {
	struct mr__trie *t;
	char (*paths)[256];
	size_t n_paths;
};

/*
 * A container host's subscriptions: one container per four subscriptions,
 * each watching its container at one of four depths
 * (/var/lib/containers/ctrN, .../rootfs, .../rootfs/etc, .../rootfs/etc/ssl).
 * Queries are depth-8 paths inside random containers: each holds four
 * subscriptions, among 25,000 sibling containers at the fourth level.
 */
struct bench_trie *bench_trie_new(size_t subs, unsigned depth)
{
	static const char *const tails[] = {"", "/rootfs", "/rootfs/etc", "/rootfs/etc/ssl"};
	struct bench_trie *b = calloc(1, sizeof(*b));
	unsigned seed = 1;
	size_t containers = subs / 4 ? subs / 4 : 1;

	(void)depth;
	if (mr__testing_trie_new(&b->t) < 0)
		abort();
	for (size_t i = 0; i < subs; i++) {
		char p[256];
		snprintf(p, sizeof(p), "/var/lib/containers/ctr%zu%s", i / 4, tails[i % 4]);
		mr__testing_trie_add(b->t, p, (void *)(uintptr_t)((i + 1) * 16));
	}
	b->n_paths = 1024;
	b->paths = calloc(b->n_paths, sizeof(*b->paths));
	for (size_t i = 0; i < b->n_paths; i++)
		snprintf(b->paths[i], sizeof(b->paths[i]),
			 "/var/lib/containers/ctr%u/rootfs/etc/ssl/x", (unsigned)(rand_r(&seed) % containers));
	return b;
}

size_t bench_trie_match(struct bench_trie *b, size_t i)
{
	return mr__testing_trie_count(b->t, b->paths[i % b->n_paths]);
}

void bench_trie_free(struct bench_trie *b)
{
	mr__testing_trie_free(b->t);
	free(b->paths);
	free(b);
}
