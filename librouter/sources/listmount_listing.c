/* SPDX-License-Identifier: MIT */
/*
 * The listmount source's listings of mount IDs (the design is described in
 * source_listmount.c): the whole ID set merged against the last one, or,
 * where NS_MNT_GET_INFO counts the namespace's mounts (6.12), only the IDs
 * above the last one known.  Each difference goes to the router as a
 * change, once the subscriptions made before the listing are in place
 * (mr__router_observed()).
 */
#include <errno.h>

#include "sources/source_listmount.h"
#include "clock.h"
#include "mirror/mount_ids.h"
#include "namespace.h"
#include "probe.h"
#include "router/upcalls.h"
#include "sources/decode.h"

long mr__lm_count_mounts(struct mr__lm_state *st)
{
	if (!mr__probe()->ns_mnt_next)
		return -ENOTTY;
	mr__router_count_syscalls(st->ns->r, 1);
	return mr__ids_count(st->ns->nsfd);
}

/* Routes what differs between the last listing and this one; returns how many. */
static size_t diff_ids(struct mr__lm_state *st)
{
	const struct mr__ids *a = &st->known, *b = &st->next;
	size_t i = 0, j = 0, changed = 0;

	/* Detaches first: an ID that went and one that came are unrelated mounts. */
	while (i < a->n) {
		if (j < b->n && b->v[j] < a->v[i]) {
			j++;
		} else if (j < b->n && b->v[j] == a->v[i]) {
			i++;
			j++;
		} else {
			mr__router_change(st->ns, &(struct mr__change){.kind = MR__CHANGE_DETACH,
								 .mnt_id = a->v[i++]});
			changed++;
		}
	}
	/* Attaches in ID order, which is the order they were made: parents first. */
	for (i = 0, j = 0; j < b->n; j++) {
		while (i < a->n && a->v[i] < b->v[j])
			i++;
		if (i < a->n && a->v[i] == b->v[j])
			continue;
		mr__router_change(st->ns, &(struct mr__change){.kind = MR__CHANGE_ATTACH,
							 .mnt_id = b->v[j]});
		changed++;
	}
	return changed;
}

long mr__lm_full_listing(struct mr__lm_state *st)
{
	uint64_t cpu0 = mr__thread_cpu_ns();
	long before = mr__lm_count_mounts(st);
	struct mr__ids t;
	uint64_t calls = 0;

	mr__router_reading(st->ns);
	int err = mr__ids_list(st->ns_id, &st->next, &calls);

	mr__router_count_syscalls(st->ns->r, calls);
	if (err < 0)
		return err;
	mr__router_observed(st->ns);
	size_t changed = diff_ids(st);
	t = st->known;
	st->known = st->next;
	st->next = t;
	st->counts_ok = before >= 0 && (size_t)before == st->known.n;
	st->verify_since_ns = 0;
	st->full_cpu_ns = mr__thread_cpu_ns() - cpu0;
	return (long)changed;
}

long mr__lm_quick_listing(struct mr__lm_state *st)
{
	long n = mr__lm_count_mounts(st);

	if (n < 0) {
		st->counts_ok = false;
		return -1;
	}
	size_t old_n = st->known.n;
	uint64_t calls = 0;

	mr__router_reading(st->ns);
	long k = mr__ids_list_new(st->ns_id, &st->known, &calls);

	mr__router_count_syscalls(st->ns->r, calls);
	if (k < 0)
		return -1;
	if ((size_t)n != old_n + (size_t)k) {
		st->known.n = old_n; /* the whole listing diffs against what was known */
		return -1;
	}
	mr__router_observed(st->ns);
	for (size_t i = old_n; i < st->known.n; i++)
		mr__router_change(st->ns, &(struct mr__change){.kind = MR__CHANGE_ATTACH,
							 .mnt_id = st->known.v[i]});
	if (!st->verify_since_ns)
		st->verify_since_ns = mr__now_ns();
	return k;
}
