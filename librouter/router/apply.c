/* SPDX-License-Identifier: MIT */
/*
 * Applying a change: what a source read (a record, or a mount it found
 * changed) is looked up, compared with the mirror, reported as the event
 * that turns the one into the other (route.c), and put in the mirror; the
 * mounts it drags along (below a move, beside a remount) are queued
 * (refresh.c) and looked at again right after.
 */
#include <errno.h>

#include "router.h"

void mr__router_update(struct mr__ns *ns, struct mr__mount *now)
{
	struct mr__mount *old = mr__mirror_get(&ns->mirror, now->pub.id);

	if (old && mr__mount_same(old, now)) {
		mr__mount_unref(now);
		return;
	}
	mr__router_emit(ns, old ? mr__event_kind_of(old, now) : MR_EVENT_MOUNT, old, now, 0);
	if (mr__mirror_put(&ns->mirror, now) < 0) {
		/* The mirror cannot hold it: the resync repairs. */
		mr__mount_unref(now);
		mr__router_loss(ns);
	}
}

void mr__router_remove(struct mr__ns *ns, uint64_t mnt_id)
{
	struct mr__mount *old = mr__mirror_take(&ns->mirror, mnt_id);

	if (old) {
		mr__router_emit(ns, MR_EVENT_UNMOUNT, old, NULL, 0);
		mr__mount_unref(old);
	}
}

static void apply_change(struct mr__ns *ns, const struct mr__change *c);

/*
 * Runs the refreshes queued by a change (refresh.c), and those they queue,
 * until none is left: each mount they list is looked at again.
 */
static void run_deferred(struct mr__ns *ns)
{
	mr_router *r = ns->r;

	r->refreshing = true;
	/* Each item is queued at most once per change: this ends. */
	for (size_t i = 0; i < r->n_deferred; i++) {
		struct mr__deferred d = r->deferred[i]; /* the array may move */
		bool below = d.what == MR__DEFER_BELOW;
		uint64_t **ids = below ? &r->below : &r->same_sb;
		int n = mr__refresh_list(ns, &d, ids, below ? &r->cap_below : &r->cap_same_sb);

		if (n < 0) {
			mr__router_loss(ns);
			continue;
		}
		/* The list below a moved mount holds its whole tree: no listing of its own. */
		r->in_below = below;
		for (int k = 0; k < n; k++) {
			struct mr__change sub = {.kind = MR__CHANGE_RECHECK, .mnt_id = (*ids)[k]};
			apply_change(ns, &sub);
		}
		r->in_below = false;
	}
	r->n_deferred = 0;
	r->refreshing = false;
}

static void apply_change(struct mr__ns *ns, const struct mr__change *c)
{
	struct mr__mount *now = NULL, *old;
	int err;

	/*
	 * Once records are lost, the resync after this batch reads the whole
	 * table and reports every difference in order (children gone before
	 * their parents).  Applying the records that follow the loss first
	 * could report a parent gone while its child, whose record was lost,
	 * still stands.
	 */
	if (ns->resync_pending)
		return;

	switch (c->kind) {
	case MR__CHANGE_LOSS:
	case MR__CHANGE_REMOVED:
		mr__router_loss(ns);
		return;
	case MR__CHANGE_DETACH:
	case MR__CHANGE_EXPIRY:
		old = mr__mirror_take(&ns->mirror, c->mnt_id);
		if (old) {
			mr__router_emit(ns, c->kind == MR__CHANGE_EXPIRY ? MR_EVENT_EXPIRY
									 : MR_EVENT_UNMOUNT,
					old, NULL, 0);
			mr__mount_unref(old);
		}
		return;
	default:
		break;
	}

	err = ns->ops->lookup(ns, c->mnt_id, &now);
	old = mr__mirror_get(&ns->mirror, c->mnt_id);
	if (err == -ENOENT) {
		/*
		 * Gone before we could look: its detach record follows (or was
		 * read already) and says the rest.  A moved mount that vanished
		 * no longer hangs where the mirror has it, and its detach may
		 * come after its old parent's: it goes now, with what the
		 * mirror holds below it, children first.  A mount moved out
		 * from under it by a record not read yet comes back when that
		 * record is read (a move of an unknown mount is a mount, with
		 * its tree below).
		 */
		if (old && c->kind == MR__CHANGE_MOVE) {
			mr__unmount_tree(ns, old);
		} else if (c->kind == MR__CHANGE_READONLY || c->kind == MR__CHANGE_SETATTR) {
			/*
			 * A remount made through a mount gone since: what it did
			 * to the superblock shows on its other mounts, and no
			 * record will name them.  Known mount: look at those;
			 * unknown (attached and gone within the batch): resync.
			 */
			if (!old) {
				mr__router_loss(ns);
				return;
			}
			mr__defer(ns, MR__DEFER_SB, old);
			if (!ns->r->refreshing)
				run_deferred(ns);
		}
		return;
	}
	if (err < 0) {
		/* Could not tell what changed: the resync diff will. */
		mr__router_loss(ns);
		return;
	}

	uint32_t kind;
	uint32_t flags = 0;
	if (!old) {
		kind = MR_EVENT_MOUNT;
		if (c->info & 0x00040000u) /* NOTIFY_MOUNT_IS_SUBMOUNT */
			flags |= MR_EVF_SUBMOUNT;
	} else if (mr__mount_same(old, now)) {
		/* Already known: listed at start, or the second half of a move. */
		mr__mount_unref(now);
		return;
	} else {
		/*
		 * What changed decides, not the record that told us: a sweep can
		 * meet a moved mount before its move record is read, and must
		 * report the move (to both subtrees) for the record to find
		 * nothing left to do.
		 */
		kind = mr__event_kind_of(old, now);
	}
	bool sb_changed = mr__superblock_changed(ns, old, now);
	mr__router_emit(ns, kind, old, now, flags);
	if (mr__mirror_put(&ns->mirror, now) < 0) {
		/* The mirror cannot hold it: the subscribers were told, the resync repairs. */
		mr__mount_unref(now);
		mr__router_loss(ns);
		return;
	}
	/*
	 * Inside a refresh of the tree below a moved mount, the list has its
	 * submounts.  A move record about a mount the mirror lacks brings its
	 * tree too (it was taken out as part of a tree found gone); otherwise
	 * only a mount with something under it needs its tree listed.
	 */
	if (!ns->r->in_below &&
	    ((c->kind == MR__CHANGE_MOVE && !old) ||
	     (kind == MR_EVENT_MOVE && mr__mirror_has_children(&ns->mirror, c->mnt_id))))
		mr__defer(ns, MR__DEFER_BELOW, now);
	if (sb_changed)
		mr__defer(ns, MR__DEFER_SB, now);
	if (!ns->r->refreshing && ns->r->n_deferred)
		run_deferred(ns);
}

void mr__router_change(struct mr__ns *ns, const struct mr__change *c)
{
	mr__count(&ns->r->records_read, 1);
	apply_change(ns, c);
}

void mr__router_recheck(struct mr__ns *ns, uint64_t mnt_id)
{
	struct mr__change c = {.kind = MR__CHANGE_RECHECK, .mnt_id = mnt_id};

	apply_change(ns, &c);
}

bool mr__router_recheck_flags(struct mr__ns *ns, uint64_t mnt_id)
{
	struct mr__mount *m = mr__mirror_get(&ns->mirror, mnt_id);
	struct mr__mount_basic b;
	uint64_t calls = 0;
	int err;

	if (!m)
		return false;
	err = mr__statmount_basic(ns->id, mnt_id, &calls, &b);
	mr__router_count_syscalls(ns->r, calls);
	if (err == -ENOENT)
		return false; /* its detach record says the rest */
	if (err < 0 || b.attr != m->pub.attr || b.sb_flags != m->sb_flags ||
	    b.propagation != m->pub.propagation || b.parent_id != m->pub.parent_id) {
		mr__router_recheck(ns, mnt_id);
		return true;
	}
	return false;
}
