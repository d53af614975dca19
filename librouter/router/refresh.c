/* SPDX-License-Identifier: MIT */
/*
 * Work a change leaves behind: the submounts of a moved mount, and the
 * other mounts of a remounted superblock, must be looked at again.  It is
 * queued and done after the change itself, one item at a time, so that
 * what a refresh finds (a mount of the remounted superblock that has also
 * moved) queues its own refresh instead of being skipped.  Sources that
 * reported those mounts already leave nothing for the second look to do.
 * Here: the queue, the lists of mounts each item names, and the other
 * judgements apply.c asks for (did the superblock change, drop a tree).
 */
#include <errno.h>

#include "router.h"

void mr__defer(struct mr__ns *ns, int what, const struct mr__mount *m)
{
	mr_router *r = ns->r;

	/* Once per mount or superblock per change: a second look finds nothing new. */
	for (size_t i = 0; i < r->n_deferred; i++) {
		const struct mr__deferred *d = &r->deferred[i];
		if (d->what == what &&
		    (what == MR__DEFER_BELOW ? d->id == m->pub.id
					 : d->major == m->pub.dev_major && d->minor == m->pub.dev_minor))
			return;
	}
	if (r->n_deferred == r->cap_deferred) {
		size_t cap = r->cap_deferred ? r->cap_deferred * 2 : 16;
		struct mr__deferred *v = mr__realloc(r->deferred, cap * sizeof(*v));
		if (!v) {
			mr__router_loss(ns);
			return;
		}
		r->deferred = v;
		r->cap_deferred = cap;
	}
	r->deferred[r->n_deferred++] = (struct mr__deferred){
		.what = what, .id = m->pub.id, .major = m->pub.dev_major, .minor = m->pub.dev_minor};
}


struct id_list {
	uint64_t **v;
	size_t *cap, n;
};

static int push_id(struct id_list *l, uint64_t id)
{
	if (l->n == *l->cap) {
		size_t cap = *l->cap ? *l->cap * 2 : 64;
		uint64_t *v = mr__realloc(*l->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		*l->v = v;
		*l->cap = cap;
	}
	(*l->v)[l->n++] = id;
	return 0;
}

struct same_sb {
	uint32_t major, minor;
	uint64_t except;
	struct id_list ids;
};

static int collect_same_sb(struct mr__mount *m, void *arg)
{
	struct same_sb *s = arg;

	if (m->pub.dev_major != s->major || m->pub.dev_minor != s->minor || m->pub.id == s->except)
		return 0;
	return push_id(&s->ids, m->pub.id);
}

int mr__refresh_list(struct mr__ns *ns, const struct mr__deferred *d, uint64_t **ids, size_t *cap)
{
	uint64_t calls = 0;
	int n;

	if (d->what == MR__DEFER_SB) {
		/*
		 * A remount of the superblock itself (options, read-only)
		 * changes every mount of it, but sources may report only the
		 * mount it was made on (watch_mount does).
		 */
		struct same_sb s = {.major = d->major, .minor = d->minor, .except = d->id,
				    .ids = {.v = ids, .cap = cap}};
		if (mr__mirror_each(&ns->mirror, collect_same_sb, &s) < 0)
			return -ENOMEM;
		return (int)s.ids.n;
	}
	/*
	 * A moved mount takes its submounts along, and a source may report
	 * only the top of the tree (watch_mount's MOVE_TO does).
	 */
	n = ns->ops->list_below ? ns->ops->list_below(ns, d->id, ids, cap)
				: mr__listmount_below(ns->id, d->id, &calls, ids, cap);
	mr__router_count_syscalls(ns->r, calls);
	return n;
}

/*
 * Whether @now's superblock differs from what the mirror knows of it: from
 * the mount's own last record, or for a new mount from the other mounts of
 * its superblock (a bind and a remount through it, read in one batch, make
 * a new mount already remounted).
 */
bool mr__superblock_changed(struct mr__ns *ns, const struct mr__mount *old,
			       const struct mr__mount *now)
{
	uint32_t flags, opts;

	if (old)
		return mr__mount_sb_changed(old, now);
	return mr__mirror_sb_get(&ns->mirror, now->pub.dev_major, now->pub.dev_minor, &flags,
				 &opts) &&
	       (flags != now->sb_flags || opts != now->sb_opts);
}

static int collect_all(struct mr__mount *m, void *arg)
{
	return mr__table_push(arg, mr__mount_ref(m));
}

/*
 * @top is gone with everything it carried: unmount its mirrored subtree,
 * children before parents, as the detach records that follow would.  Rare
 * (a mount moved, then unmounted, before its move record was read): the
 * whole mirror sorted parents first, then marked from @top down, each
 * mount below a marked parent.  O(n log n), where walking each mount's
 * chain up to @top would cost O(n x depth) on a stack thousands deep.
 */
void mr__unmount_tree(struct mr__ns *ns, struct mr__mount *top)
{
	struct mr__table all = {0};
	size_t below = 0;

	if (mr__mirror_each(&ns->mirror, collect_all, &all) < 0 ||
	    mr__mirror_sort_parents_first(&ns->mirror, all.v, all.n) < 0) {
		mr__table_clear(&all);
		mr__router_loss(ns);
		return;
	}
	uint32_t mark = mr__mirror_new_mark(&ns->mirror);
	for (size_t i = 0; i < all.n; i++) {
		struct mr__mount *m = all.v[i];
		const struct mr__mount *p = m->pub.parent_id == m->pub.id
						    ? NULL
						    : mr__mirror_get(&ns->mirror, m->pub.parent_id);
		if (m == top || (p && p->seen == mark)) {
			m->seen = mark;
			all.v[i] = all.v[below];
			all.v[below++] = m; /* keeps the order: i >= below */
		}
	}
	for (size_t i = below; i-- > 0;) {
		struct mr__mount *m = mr__mirror_take(&ns->mirror, all.v[i]->pub.id);
		if (m) {
			mr__router_emit(ns, MR_EVENT_UNMOUNT, m, NULL, 0);
			mr__mount_unref(m);
		}
	}
	mr__table_clear(&all);
}
