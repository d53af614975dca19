/* SPDX-License-Identifier: MIT */
/*
 * testing.h over the library's internals: a namespace fed from memory and
 * the trie alone, for bench/ and stress/.  Nothing here runs in a router
 * that callers build through mountrouter.h.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"
#include "alloc.h"
#include "io/reactor.h"
#include "io/reactor_poll.h"
#include "mirror/mirror.h"
#include "mirror/mount.h"
#include "namespace.h"
#include "router/upcalls.h"
#include "sources/decode.h"
#include "sources/source.h"
#include "sub.h"
#include "trie.h"
#include "testing.h"

struct mr__testing_ns {
	struct mr__ns ns; /* first: the source's callbacks get &ns */
	mr__testing_lookup_fn lookup;
	void *arg;
};

struct mr__mount *mr__testing_mount_new(const struct mr_mount *m)
{
	return mr__mount_new(m, 0, 0, 0);
}

struct mr__mount *mr__testing_mount_ref(struct mr__mount *m)
{
	return mr__mount_ref(m);
}

void mr__testing_mount_unref(struct mr__mount *m)
{
	mr__mount_unref(m);
}

static int memory_lookup(struct mr__ns *ns, uint64_t mnt_id, struct mr__mount **ret)
{
	struct mr__testing_ns *t = (struct mr__testing_ns *)ns;

	return t->lookup(t->arg, mnt_id, ret);
}

/* The table is what mr__testing_ns_put() seeded: nothing to read. */
static int memory_read_table(struct mr__ns *ns, struct mr__table *ret)
{
	(void)ns;
	(void)ret;
	return 0;
}

static const struct mr__source_ops memory_source = {
	.name = "memory",
	.lookup = memory_lookup,
	.read_table = memory_read_table,
};

int mr__testing_ns_new(mr_router *r, mr__testing_lookup_fn lookup, void *arg,
		       struct mr__testing_ns **ret_ns)
{
	struct mr__testing_ns *t;

	if (!r || !lookup || !ret_ns)
		return -EINVAL;
	t = mr__calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->ns.r = r;
	t->ns.ops = &memory_source;
	t->lookup = lookup;
	t->arg = arg;
	if (mr__mirror_init(&t->ns.mirror) < 0 || mr__trie_new(&t->ns.trie) < 0) {
		mr__testing_ns_free(t);
		return -ENOMEM;
	}
	*ret_ns = t;
	return 0;
}

void mr__testing_ns_free(struct mr__testing_ns *t)
{
	if (!t)
		return;
	mr__trie_free(t->ns.trie);
	mr__mirror_free(&t->ns.mirror);
	mr__free(t);
}

int mr__testing_ns_put(struct mr__testing_ns *t, struct mr__mount *m)
{
	return mr__mirror_put(&t->ns.mirror, m);
}

int mr__testing_ns_subscribe(struct mr__testing_ns *t, const struct mr_sub_opts *opts,
			     mr_sub **ret_sub)
{
	struct mr_sub_opts o = {0};
	struct mr_sub *s;
	int err;

	if (opts)
		o = *opts;
	err = mr__sub_alloc(t->ns.r, -1, &o, &s);
	if (err < 0)
		return err;
	err = mr__trie_add(t->ns.trie, s->prefix, s);
	if (err < 0) {
		mr__sub_destroy(s);
		return err;
	}
	s->ns = &t->ns;
	s->attached = true;
	*ret_sub = s;
	return 0;
}

void mr__testing_ns_unsubscribe(struct mr__testing_ns *t, mr_sub *s)
{
	if (!s)
		return;
	mr__trie_remove(t->ns.trie, s->prefix, s);
	mr__sub_destroy(s);
}

int mr__testing_ns_change(struct mr__testing_ns *t, uint32_t kind, uint64_t mnt_id)
{
	static const enum mr__change_kind by_event[] = {
		[MR_EVENT_MOUNT] = MR__CHANGE_ATTACH,     [MR_EVENT_UNMOUNT] = MR__CHANGE_DETACH,
		[MR_EVENT_MOVE] = MR__CHANGE_MOVE,        [MR_EVENT_READONLY] = MR__CHANGE_READONLY,
		[MR_EVENT_ATTR] = MR__CHANGE_SETATTR,     [MR_EVENT_EXPIRY] = MR__CHANGE_EXPIRY,
	};

	if (kind >= MR__ARRAY_SIZE(by_event) || !by_event[kind])
		return -EINVAL;
	struct mr__change c = {.kind = by_event[kind], .mnt_id = mnt_id};
	mr__router_change(&t->ns, &c);
	return 0;
}

int mr__testing_trie_new(struct mr__trie **ret_trie)
{
	return mr__trie_new(ret_trie);
}

void mr__testing_trie_free(struct mr__trie *t)
{
	mr__trie_free(t);
}

int mr__testing_trie_add(struct mr__trie *t, const char *prefix, void *value)
{
	return mr__trie_add(t, prefix, value);
}

static void count_one(struct mr_sub *s, void *arg)
{
	(void)s;
	(*(size_t *)arg)++;
}

size_t mr__testing_trie_count(const struct mr__trie *t, const char *path)
{
	size_t n = 0;

	mr__trie_match(t, path, strlen(path), count_one, &n);
	return n;
}

int mr__testing_reactor_force(const char *backend)
{
	if (!backend)
		mr__reactor_override(MR__REACTOR_AS_ASKED);
	else if (!strcmp(backend, "epoll"))
		mr__reactor_override(MR__REACTOR_EPOLL);
	else if (!strcmp(backend, "io_uring"))
		mr__reactor_override(MR__REACTOR_IO_URING);
	else
		return -EINVAL;
	return 0;
}

const char *mr__testing_reactor_backend(mr_router *r)
{
	return mr__reactor_backend(mr__router_reactor(r));
}

void mr__testing_before_read(mr_router *r, void (*fn)(void *arg), void *arg)
{
	mr__router_before_read(r, fn, arg);
}

void mr__testing_lose(mr_router *r)
{
	mr__router_lose_all(r);
}
