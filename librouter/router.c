/* SPDX-License-Identifier: MIT */
/*
 * The router: one thread (the caller's, or its own) that owns every mirror,
 * trie and ring producer.  Nothing on its data path takes a lock:
 *
 *  - other threads reach it through a lock-free command stack (subscribe,
 *    unsubscribe, add or drop a namespace), drained once per step;
 *  - subscribers read their own SPSC rings;
 *  - counters are relaxed atomics.
 *
 * A step: reap every completion the reactor has (decode, look up, update the
 * mirror, route), wake each subscriber that got something, then do what the
 * batch left pending: commands, source sweeps, resyncs after kernel losses,
 * catch-up of overrun subscribers, and wake whoever those fed.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "internal.h"
#include "mountrouter-uapi.h"

enum cmd_kind { CMD_ADD_NS, CMD_DEL_NS, CMD_ADD_SUB, CMD_DEL_SUB };

struct cmd {
	enum cmd_kind kind;
	struct cmd *next;
	struct mr__ns *ns;
	struct mr_sub *sub;
};

struct mr_router {
	struct mr__reactor *re;
	const struct mr__source_ops *ops;
	const char *reason;
	bool source_auto;  /* picked by probing, not by name: namespaces may fall back */
	struct mr_opts opts;
	char *source_name;

	/* Control plane: the namespaces callers may name, under ctl_lock. */
	pthread_mutex_t ctl_lock;
	/* The fanotify group every namespace shares (fanotify_group.c), under group_lock. */
	pthread_mutex_t group_lock;
	struct mr__fan_group *fan_group;
	struct mr__ns **registry;
	size_t n_registry, cap_registry;

	_Atomic(struct cmd *) cmds; /* lock-free stack, newest first */
	int wake_efd;
	struct mr__watch wake_watch;

	pthread_t thread;
	bool threaded;
	_Atomic bool stop;

	/* Router thread only from here on. */
	struct mr__ns *active;     /* namespaces being routed */
	struct mr_sub *subs;       /* every live subscription */
	struct mr_sub *touched;    /* got events this step: wake if waiting */
	struct mr_sub *overrun;    /* waiting to be caught up */
	struct mr_sub **match;
	size_t cap_match;
	uint32_t route_mark;
	/*
	 * Decoded records of one read, one array for every namespace: a 16 KiB
	 * reactor buffer holds at most 2,048 (8-byte watch_queue loss records).
	 */
	struct mr__change changes[2048];
	uint64_t *below;   /* mount IDs under a moved mount */
	size_t cap_below;
	struct mr__deferred *deferred; /* refreshes a change left to do */
	size_t n_deferred, cap_deferred;
	bool refreshing;   /* running them */
	bool in_below;     /* walking r->below */
	uint64_t seq;
	uint64_t now_ns;
	bool any_resync;

	/* Counters, written by the router thread, read anywhere. */
	_Atomic uint64_t records_read, events_routed, deliveries, ring_drops, kernel_losses,
		resyncs, syscalls, enters, bad_records, resync_ns_total, resync_cpu_ns_total, sweeps,
		sweep_ns_total;
	_Atomic uint64_t n_subs, n_ns, n_mounts;
};

static inline void count(_Atomic uint64_t *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

struct mr__fan_group **mr__router_fan_group(mr_router *r, pthread_mutex_t **ret_lock)
{
	*ret_lock = &r->group_lock;
	return &r->fan_group;
}

void mr__router_count_bad(mr_router *r, uint64_t n)
{
	count(&r->bad_records, n);
}

void mr__router_count_syscalls(mr_router *r, uint64_t n)
{
	count(&r->syscalls, n);
}

void mr__router_count_sweep(mr_router *r, uint64_t ns)
{
	count(&r->sweeps, 1);
	count(&r->sweep_ns_total, ns);
}

void mr__router_stamp(mr_router *r)
{
	r->now_ns = mr__now_ns();
}

void mr__router_kick(mr_router *r)
{
	uint64_t one = 1;

	/* EAGAIN: the counter is already non-zero, the router wakes anyway. */
	(void)!write(r->wake_efd, &one, sizeof(one));
}

/*
 * Only the push that finds the stack empty wakes the router: the router
 * takes the whole stack at once, so a later push onto a non-empty stack is
 * covered by the wake-up of the push that started it.
 *
 * Not ck_stack: its pushes (ck_stack_push_upmc and the others, libck 0.7)
 * return nothing, and the entry's next field cannot be read back after the
 * push because the router may already have run and freed the command; this
 * rule needs the head the CAS replaced.  Without it every command would
 * cost a write(2).  And C11 atomics here are seen by ThreadSanitizer, which
 * cannot see ck_pr's inline assembly (sub.c states what that costs).
 */
static void push_cmd(mr_router *r, struct cmd *c)
{
	struct cmd *head = atomic_load_explicit(&r->cmds, memory_order_relaxed);

	do
		c->next = head;
	while (!atomic_compare_exchange_weak_explicit(&r->cmds, &head, c, memory_order_release,
						      memory_order_relaxed));
	if (!head)
		mr__router_kick(r);
}

/* ---- routing ---- */

static bool path_in_subtree(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	if (n == 1)
		return true; /* "/" */
	return !strncmp(path, prefix, n) && (path[n] == '\0' || path[n] == '/');
}

static void touch(mr_router *r, struct mr_sub *s)
{
	if (!s->in_touched) {
		s->in_touched = true;
		s->next_touched = r->touched;
		r->touched = s;
	}
}

static void mark_overrun(mr_router *r, struct mr_sub *s)
{
	if (!s->overrun) {
		s->overrun = true;
		s->next_overrun = r->overrun;
		r->overrun = s;
		atomic_store_explicit(&s->wants_recovery, 1, memory_order_relaxed);
	}
	s->lost++;
	count(&s->dropped, 1);
	count(&r->ring_drops, 1);
}

struct match_ctx {
	mr_router *r;
	uint32_t kind_bit;
	size_t n;
	int err;
};

static void collect(struct mr_sub *s, void *arg)
{
	struct match_ctx *m = arg;
	mr_router *r = m->r;

	if (!(s->kinds & m->kind_bit) || s->route_mark == r->route_mark)
		return;
	s->route_mark = r->route_mark;
	if (m->n == r->cap_match) {
		size_t cap = r->cap_match ? r->cap_match * 2 : 64;
		struct mr_sub **v = mr__realloc(r->match, cap * sizeof(*v));
		if (!v) {
			m->err = -ENOMEM;
			return;
		}
		r->match = v;
		r->cap_match = cap;
	}
	r->match[m->n++] = s;
}

/*
 * Hands @ev to the @n subscribers in r->match.  The reference count is set
 * before the first enqueue: a subscriber may release its reference the
 * moment the event is in its ring.
 */
static void deliver(mr_router *r, struct mr__event *ev, size_t n, bool reserved)
{
	if (!n) {
		mr__event_discard(ev);
		return;
	}
	atomic_store_explicit(&ev->refs, (uint32_t)n, memory_order_relaxed);
	for (size_t i = 0; i < n; i++) {
		struct mr_sub *s = r->match[i];
		bool ok;

		if (MR__UNLIKELY(s->overrun))
			ok = false; /* keep order: nothing new until it has caught up */
		else
			ok = reserved ? mr__sub_push_reserved(s, ev) : mr__sub_push(s, ev);
		if (ok) {
			count(&s->delivered, 1);
			touch(r, s);
		} else {
			mark_overrun(r, s);
			mr_event_unref(&ev->pub);
		}
	}
	count(&r->deliveries, n);
}

static void stamp(mr_router *r, struct mr__ns *ns, struct mr__event *ev, uint32_t flags)
{
	ev->pub.flags |= flags;
	ev->pub.ns_id = ns->id;
	ev->pub.seq = ++r->seq;
	ev->pub.time_ns = r->now_ns ? r->now_ns : mr__now_ns();
}

/*
 * An event some subscribers of @ns should have had could not be made or
 * routed (out of memory).  The mirror has the change, so no resync would
 * find it: each subscriber of @ns is treated as overrun instead, and gets
 * an OVERRUN marker and a snapshot of its subtree.
 */
static void lose_event(struct mr__ns *ns)
{
	for (struct mr_sub *s = ns->r->subs; s; s = s->next_all)
		if (s->ns == ns && s->attached)
			mark_overrun(ns->r, s);
}

/* Routes a change event to the subscribers of every subtree it touches. */
static void route(struct mr__ns *ns, struct mr__event *ev)
{
	mr_router *r = ns->r;
	struct match_ctx m = {.r = r, .kind_bit = MR_KIND(ev->pub.kind)};

	r->route_mark++;
	mr__trie_match(ns->trie, ev->pub.path, strlen(ev->pub.path), collect, &m);
	if (ev->pub.kind == MR_EVENT_MOVE)
		mr__trie_match(ns->trie, ev->pub.old_path, strlen(ev->pub.old_path), collect, &m);
	count(&r->events_routed, 1);
	if (MR__UNLIKELY(m.err)) {
		/* Some matching subscribers were not collected. */
		lose_event(ns);
		mr__event_discard(ev);
		return;
	}
	deliver(r, ev, m.n, false);
}

/* Sends a marker to every subscriber of @ns, whatever its subtree. */
static void broadcast(struct mr__ns *ns, uint32_t kind, uint32_t flags)
{
	mr_router *r = ns->r;
	size_t n = 0;

	struct match_ctx m = {.r = r, .kind_bit = ~0u};
	r->route_mark++;
	for (struct mr_sub *s = r->subs; s; s = s->next_all)
		if (s->ns == ns && s->attached)
			collect(s, &m);
	n = m.n;
	struct mr__event *ev = mr__event_marker(kind);
	if (!ev)
		return;
	stamp(r, ns, ev, flags);
	deliver(r, ev, n, true);
}

void mr__router_emit(struct mr__ns *ns, uint32_t kind, struct mr__mount *old,
		     struct mr__mount *now, uint32_t flags)
{
	struct mr__event *ev = mr__event_new(kind, old, now);

	if (!ev) {
		lose_event(ns);
		return;
	}
	stamp(ns->r, ns, ev, flags);
	route(ns, ev);
}

/* The event kind that turns @old into @now. */
static uint32_t change_kind(const struct mr__mount *old, const struct mr__mount *now)
{
	/*
	 * A new parent is a move even where the path stays: an umount that
	 * takes a mount's parent away re-parents it onto the grandparent, at
	 * the same place (fanotify says attach|detach for it).
	 */
	if (strcmp(old->pub.path, now->pub.path) || old->pub.parent_id != now->pub.parent_id)
		return MR_EVENT_MOVE;
	if (mr__mount_readonly(old) != mr__mount_readonly(now))
		return MR_EVENT_READONLY;
	return MR_EVENT_ATTR;
}

void mr__router_update(struct mr__ns *ns, struct mr__mount *now)
{
	struct mr__mount *old = mr__mirror_get(&ns->mirror, now->pub.id);

	if (old && mr__mount_same(old, now)) {
		mr__mount_unref(now);
		return;
	}
	mr__router_emit(ns, old ? change_kind(old, now) : MR_EVENT_MOUNT, old, now, 0);
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

struct sync_ctx {
	struct mr__ns *ns;
	uint32_t flags;
};

static int sync_one(struct mr__mount *old, struct mr__mount *now, void *arg)
{
	struct sync_ctx *c = arg;
	uint32_t kind = !old ? MR_EVENT_MOUNT : !now ? MR_EVENT_UNMOUNT : change_kind(old, now);

	mr__router_emit(c->ns, kind, old, now, c->flags);
	return 0;
}

int mr__router_sync(struct mr__ns *ns, struct mr__table *fresh, uint32_t flags)
{
	struct sync_ctx c = {.ns = ns, .flags = flags};
	int n = mr__mirror_sync(&ns->mirror, fresh, sync_one, &c);

	/* Out of memory before anything was applied: the mirror is behind, resync. */
	if (n < 0)
		mr__router_loss(ns);
	return n;
}

void mr__router_loss(struct mr__ns *ns)
{
	ns->resync_pending = true;
	ns->r->any_resync = true;
	count(&ns->r->kernel_losses, 1);
}

static void resync(struct mr__ns *ns)
{
	mr_router *r = ns->r;
	struct mr__table fresh = {0};
	uint64_t t0 = mr__now_ns(), cpu0 = mr__thread_cpu_ns();

	ns->resync_pending = false;
	if (ns->ops->read_table(ns, &fresh) < 0) {
		/* Could not read the table: try again after the next batch. */
		mr__table_clear(&fresh);
		ns->resync_pending = true;
		r->any_resync = true;
		return;
	}
	r->now_ns = t0;
	broadcast(ns, MR_EVENT_RESYNC_BEGIN, MR_EVF_KERNEL_LOSS);
	mr__router_sync(ns, &fresh, MR_EVF_SYNTHETIC);
	broadcast(ns, MR_EVENT_RESYNC_END, MR_EVF_KERNEL_LOSS);
	mr__table_clear(&fresh);
	count(&r->resyncs, 1);
	count(&r->resync_ns_total, mr__now_ns() - t0);
	count(&r->resync_cpu_ns_total, mr__thread_cpu_ns() - cpu0);
}

/* ---- changes read from the kernel ---- */

static void apply_change(struct mr__ns *ns, const struct mr__change *c);

/*
 * Work a change leaves behind: the submounts of a moved mount, and the
 * other mounts of a remounted superblock, must be looked at again.  It is
 * queued and done after the change itself, one item at a time, so that
 * what a refresh finds (a mount of the remounted superblock that has also
 * moved) queues its own refresh instead of being skipped.
 */
enum { DEFER_BELOW, DEFER_SB };

struct mr__deferred {
	int what;
	uint64_t id;         /* DEFER_BELOW: the moved mount; DEFER_SB: the one remounted */
	uint32_t major, minor;
};

static void defer(struct mr__ns *ns, int what, const struct mr__mount *m)
{
	mr_router *r = ns->r;

	/* Once per mount or superblock per change: a second look finds nothing new. */
	for (size_t i = 0; i < r->n_deferred; i++) {
		const struct mr__deferred *d = &r->deferred[i];
		if (d->what == what &&
		    (what == DEFER_BELOW ? d->id == m->pub.id
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

/*
 * A moved mount takes its submounts along, and a source may report only the
 * top of the tree (watch_mount's MOVE_TO does): look at every mount below
 * it again, so each gets its MOVE.  Sources that reported them already find
 * nothing left to do.
 */
static void refresh_below(struct mr__ns *ns, uint64_t mnt_id)
{
	mr_router *r = ns->r;
	uint64_t calls = 0;
	int n = ns->ops->list_below
			? ns->ops->list_below(ns, mnt_id, &r->below, &r->cap_below)
			: mr__listmount_below(ns->id, mnt_id, &calls, &r->below, &r->cap_below);

	mr__router_count_syscalls(r, calls);
	if (n < 0) {
		mr__router_loss(ns);
		return;
	}
	/* The list holds the whole tree: its moves need no listing of their own. */
	r->in_below = true;
	for (int i = 0; i < n; i++) {
		struct mr__change sub = {.kind = MR__CHANGE_RECHECK, .mnt_id = r->below[i]};
		apply_change(ns, &sub);
	}
	r->in_below = false;
}

struct same_sb {
	uint32_t major, minor;
	uint64_t except;
	struct mr__table t;
};

static int collect_same_sb(struct mr__mount *m, void *arg)
{
	struct same_sb *s = arg;

	if (m->pub.dev_major != s->major || m->pub.dev_minor != s->minor || m->pub.id == s->except)
		return 0;
	return mr__table_push(&s->t, mr__mount_ref(m));
}

/*
 * A remount of the superblock itself (options, read-only) changes every
 * mount of it, but sources may report only the mount it was made on
 * (watch_mount does): look at the others again.  Sources that reported
 * them already find nothing left to do.
 */
static void refresh_superblock(struct mr__ns *ns, const struct mr__deferred *d)
{
	struct same_sb s = {.major = d->major, .minor = d->minor, .except = d->id};

	if (mr__mirror_each(&ns->mirror, collect_same_sb, &s) < 0) {
		mr__table_clear(&s.t);
		mr__free(s.t.v);
		mr__router_loss(ns);
		return;
	}
	for (size_t i = 0; i < s.t.n; i++) {
		struct mr__change sub = {.kind = MR__CHANGE_RECHECK, .mnt_id = s.t.v[i]->pub.id};
		apply_change(ns, &sub);
	}
	mr__table_clear(&s.t);
	mr__free(s.t.v);
}

/* Runs the queued refreshes, and those they queue, until none is left. */
static void run_deferred(struct mr__ns *ns)
{
	mr_router *r = ns->r;

	r->refreshing = true;
	/* Each item is queued at most once per change: this ends. */
	for (size_t i = 0; i < r->n_deferred; i++) {
		struct mr__deferred d = r->deferred[i]; /* the array may move */
		if (d.what == DEFER_BELOW)
			refresh_below(ns, d.id);
		else
			refresh_superblock(ns, &d);
	}
	r->n_deferred = 0;
	r->refreshing = false;
}

/*
 * Whether @now's superblock differs from what the mirror knows of it: from
 * the mount's own last record, or for a new mount from the other mounts of
 * its superblock (a bind and a remount through it, read in one batch, make
 * a new mount already remounted).
 */
static bool superblock_changed(struct mr__ns *ns, const struct mr__mount *old,
			       const struct mr__mount *now)
{
	uint32_t flags, opts;

	if (old)
		return mr__mount_sb_changed(old, now);
	return mr__mirror_sb_get(&ns->mirror, now->pub.dev_major, now->pub.dev_minor, &flags,
				 &opts) &&
	       (flags != now->sb_flags || opts != now->sb_opts);
}

struct below_ctx {
	const struct mr__mirror *mirror;
	uint64_t top;
	struct mr__table t;
};

static int collect_below(struct mr__mount *m, void *arg)
{
	struct below_ctx *b = arg;
	uint64_t id = m->pub.id;

	/* Up the parent chain, bounded: a cycle in bad input ends it. */
	for (size_t steps = 0; steps <= b->mirror->n; steps++) {
		const struct mr__mount *p;
		if (id == b->top)
			return mr__table_push(&b->t, mr__mount_ref(m));
		p = mr__mirror_get(b->mirror, id);
		if (!p || p->pub.parent_id == id)
			return 0;
		id = p->pub.parent_id;
	}
	return 0;
}

/*
 * @top is gone with everything it carried: unmount its mirrored subtree,
 * children before parents, as the detach records that follow would.  Rare
 * (a mount moved, then unmounted, before its move record was read): one
 * pass over the mirror.
 */
static void unmount_tree(struct mr__ns *ns, struct mr__mount *top)
{
	struct below_ctx b = {.mirror = &ns->mirror, .top = top->pub.id};

	if (mr__mirror_each(&ns->mirror, collect_below, &b) < 0 ||
	    mr__mirror_sort_parents_first(&ns->mirror, b.t.v, b.t.n) < 0) {
		mr__table_clear(&b.t);
		mr__router_loss(ns);
		return;
	}
	for (size_t i = b.t.n; i-- > 0;) {
		struct mr__mount *m = mr__mirror_take(&ns->mirror, b.t.v[i]->pub.id);
		if (m) {
			mr__router_emit(ns, MR_EVENT_UNMOUNT, m, NULL, 0);
			mr__mount_unref(m);
		}
	}
	mr__table_clear(&b.t);
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
			unmount_tree(ns, old);
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
			defer(ns, DEFER_SB, old);
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
		kind = change_kind(old, now);
	}
	bool sb_changed = superblock_changed(ns, old, now);
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
		defer(ns, DEFER_BELOW, now);
	if (sb_changed)
		defer(ns, DEFER_SB, now);
	if (!ns->r->refreshing && ns->r->n_deferred)
		run_deferred(ns);
}

void mr__router_change(struct mr__ns *ns, const struct mr__change *c)
{
	count(&ns->r->records_read, 1);
	apply_change(ns, c);
}

long mr__router_records(struct mr__ns *ns, int res, const void *buf, size_t len,
			mr__decode_fn decode)
{
	mr_router *r = ns->r;
	uint64_t bad = 0;

	if (res < 0) {
		if (res != -EAGAIN && res != -EINTR)
			mr__router_loss(ns);
		return -1;
	}
	mr__router_stamp(r);
	size_t n = decode(buf, len, r->changes, MR__ARRAY_SIZE(r->changes), &bad);
	if (bad) {
		/* A record skipped is a change missed: counted, and the resync finds it. */
		count(&r->bad_records, bad);
		mr__router_loss(ns);
	}
	for (size_t i = 0; i < n; i++)
		mr__router_change(ns, &r->changes[i]);
	return (long)n;
}

const struct mr__change *mr__router_decoded(const mr_router *r)
{
	return r->changes;
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

/* ---- overrun subscribers ---- */

struct snap_ctx {
	const char *prefix;
	struct mr__table t;
	int err;
};

static int snap_one(struct mr__mount *m, void *arg)
{
	struct snap_ctx *c = arg;

	if (path_in_subtree(m->pub.path, c->prefix)) {
		/* On failure the push has dropped the reference it was given. */
		int err = mr__table_push(&c->t, mr__mount_ref(m));
		if (err < 0) {
			c->err = err;
			return err;
		}
	}
	return 0;
}

/* The subscriber's subtree as the mirror has it now, parents first. */
static struct mr__event *subtree_snapshot(struct mr_sub *s)
{
	struct snap_ctx c = {.prefix = s->prefix};
	struct mr__event *ev = NULL;

	/* A source that put off looking for attribute changes looks now. */
	if (s->ns->ops->settle)
		s->ns->ops->settle(s->ns);
	mr__mirror_each(&s->ns->mirror, snap_one, &c);
	if (!c.err)
		c.err = mr__mirror_sort_parents_first(&s->ns->mirror, c.t.v, c.t.n);
	if (!c.err)
		ev = mr__event_snapshot(c.t.v, c.t.n);
	mr__table_clear(&c.t);
	return ev;
}

/* Room for one in r->match; false when out of memory. */
static bool ensure_match(mr_router *r)
{
	if (!r->cap_match) {
		r->match = mr__malloc(64 * sizeof(*r->match));
		if (r->match)
			r->cap_match = 64;
	}
	return r->cap_match != 0;
}

static bool send_snapshot(mr_router *r, struct mr_sub *s, uint32_t flags)
{
	struct mr__event *ev;

	if (!ensure_match(r))
		return false;
	ev = subtree_snapshot(s);
	if (!ev)
		return false;
	stamp(r, s->ns, ev, flags);
	r->match[0] = s;
	deliver(r, ev, 1, true);
	count(&s->snapshots, 1);
	return true;
}

/*
 * Catches up subscribers that overran once they have drained half their
 * ring: an OVERRUN marker saying how much they missed, then a SNAPSHOT of
 * their subtree to rebuild from.  Both go into the reserved slots.
 */
static void recover(mr_router *r)
{
	struct mr_sub **pp = &r->overrun;

	/* Out of memory: try again after the next batch. */
	if (!ensure_match(r))
		return;
	while (*pp) {
		struct mr_sub *s = *pp;
		if (!s->ns || mr__sub_queued(s) > s->capacity / 2) {
			pp = &s->next_overrun;
			continue;
		}
		/* Subscribed when the trie had no memory for it: attach it now. */
		if (!s->attached) {
			if (mr__trie_add(s->ns->trie, s->prefix, s) < 0) {
				pp = &s->next_overrun;
				continue;
			}
			s->attached = true;
			s->ns->n_subs++;
			/* As add_sub() counts it: else no pass looks for its READONLY and ATTR. */
			if (s->kinds & MR__ATTR_KINDS)
				s->ns->n_attr_subs++;
		}
		s->overrun = false;
		struct mr__event *ev = mr__event_marker(MR_EVENT_OVERRUN);
		if (!ev) {
			s->overrun = true;
			pp = &s->next_overrun;
			continue;
		}
		ev->pub.lost = s->lost;
		stamp(r, s->ns, ev, MR_EVF_RING_LOSS);
		r->match[0] = s;
		deliver(r, ev, 1, true);
		count(&s->overruns, 1);
		if (!send_snapshot(r, s, MR_EVF_RING_LOSS | MR_EVF_SYNTHETIC)) {
			s->overrun = true;
			pp = &s->next_overrun;
			continue;
		}
		s->lost = 0;
		atomic_store_explicit(&s->wants_recovery, 0, memory_order_relaxed);
		*pp = s->next_overrun;
	}
}

/*
 * @ns is no longer watched: each of its subscribers gets an OVERRUN marker
 * if it had overrun and not caught up (what it lost is not coming back),
 * then NS_GONE, made when the namespace was opened so that it cannot be
 * lost to a failed allocation.  Both go into the reserve.
 */
static void tell_ns_gone(mr_router *r, struct mr__ns *ns)
{
	struct mr__event *gone = ns->gone;
	uint32_t n = 0;

	ns->gone = NULL;
	for (struct mr_sub *s = r->subs; s; s = s->next_all) {
		if (s->ns != ns)
			continue;
		n++;
		if (!s->overrun)
			continue;
		struct mr__event *ev = mr__event_marker(MR_EVENT_OVERRUN);
		if (ev) {
			ev->pub.lost = s->lost;
			stamp(r, ns, ev, MR_EVF_RING_LOSS);
			atomic_store_explicit(&ev->refs, 1, memory_order_relaxed);
			if (mr__sub_push_reserved(s, ev))
				count(&s->overruns, 1);
			else
				mr_event_unref(&ev->pub);
		}
	}
	if (!n) {
		mr__event_discard(gone);
		return;
	}
	stamp(r, ns, gone, 0);
	atomic_store_explicit(&gone->refs, n, memory_order_relaxed);
	for (struct mr_sub *s = r->subs; s; s = s->next_all) {
		if (s->ns != ns)
			continue;
		if (mr__sub_push_reserved(s, gone)) {
			count(&s->delivered, 1);
			touch(r, s);
		} else {
			mr_event_unref(&gone->pub); /* the reserve makes this unreachable */
		}
	}
	count(&r->deliveries, n);
}

/* ---- commands ---- */

static void unlink_overrun(mr_router *r, struct mr_sub *s)
{
	for (struct mr_sub **pp = &r->overrun; *pp; pp = &(*pp)->next_overrun)
		if (*pp == s) {
			*pp = s->next_overrun;
			return;
		}
}

static void unlink_touched(mr_router *r, struct mr_sub *s)
{
	for (struct mr_sub **pp = &r->touched; *pp; pp = &(*pp)->next_touched)
		if (*pp == s) {
			*pp = s->next_touched;
			s->in_touched = false;
			return;
		}
}

static void detach_sub(mr_router *r, struct mr_sub *s)
{
	if (s->attached) {
		mr__trie_remove(s->ns->trie, s->prefix, s);
		s->ns->n_subs--;
		if (s->kinds & MR__ATTR_KINDS)
			s->ns->n_attr_subs--;
		s->attached = false;
	}
	if (s->overrun) {
		unlink_overrun(r, s);
		s->overrun = false;
	}
}

static void add_sub(mr_router *r, struct mr_sub *s)
{
	s->next_all = r->subs;
	if (r->subs)
		r->subs->prev_all = s;
	r->subs = s;
	count(&r->n_subs, 1);
	if (!s->ns)
		return;
	if (mr__trie_add(s->ns->trie, s->prefix, s) < 0) {
		/* No memory for the trie node: the subscriber learns it lost everything. */
		mark_overrun(r, s);
		return;
	}
	s->attached = true;
	s->ns->n_subs++;
	if (s->kinds & MR__ATTR_KINDS)
		s->ns->n_attr_subs++;
	if ((s->flags & MR_SUB_SNAPSHOT) && !send_snapshot(r, s, MR_EVF_LATE_JOIN))
		mark_overrun(r, s);
}

static void del_sub(mr_router *r, struct mr_sub *s)
{
	detach_sub(r, s);
	unlink_touched(r, s);
	if (s->prev_all)
		s->prev_all->next_all = s->next_all;
	else if (r->subs == s)
		r->subs = s->next_all;
	if (s->next_all)
		s->next_all->prev_all = s->prev_all;
	atomic_store_explicit(&r->n_subs, atomic_load(&r->n_subs) - 1, memory_order_relaxed);
	mr__sub_destroy(s);
}

static void add_ns(mr_router *r, struct mr__ns *ns)
{
	ns->next = r->active;
	r->active = ns;
	if (ns->ops->start(ns, r->re) < 0)
		mr__router_loss(ns);
}

static void del_ns(mr_router *r, struct mr__ns *ns)
{
	for (struct mr__ns **pp = &r->active; *pp; pp = &(*pp)->next)
		if (*pp == ns) {
			*pp = ns->next;
			break;
		}
	tell_ns_gone(r, ns);
	for (struct mr_sub *s = r->subs; s; s = s->next_all)
		if (s->ns == ns) {
			detach_sub(r, s);
			s->ns = NULL;
		}
	mr__ns_close(ns, r->re);
}

static void run_commands(mr_router *r)
{
	struct cmd *c = atomic_exchange_explicit(&r->cmds, NULL, memory_order_acquire);
	struct cmd *fifo = NULL;

	/* The stack is newest first: reverse it to apply in the order issued. */
	while (c) {
		struct cmd *next = c->next;
		c->next = fifo;
		fifo = c;
		c = next;
	}
	for (c = fifo; c; c = fifo) {
		fifo = c->next;
		switch (c->kind) {
		case CMD_ADD_NS:
			add_ns(r, c->ns);
			break;
		case CMD_DEL_NS:
			del_ns(r, c->ns);
			break;
		case CMD_ADD_SUB:
			add_sub(r, c->sub);
			break;
		case CMD_DEL_SUB:
			del_sub(r, c->sub);
			break;
		}
		mr__free(c);
	}
}

static void run_commands_cb(void *r)
{
	run_commands(r);
}

/* ---- the step ---- */

/* The eventfd read itself is the point: it woke the router.  step() clears the flag. */
static void wake_cb(struct mr__watch *w, int res, const void *buf, size_t len)
{
	(void)w;
	(void)res;
	(void)buf;
	(void)len;
}

/* Wakes the subscribers that got events since the last call, if they wait. */
static void wake_touched(mr_router *r)
{
	uint64_t wakes = 0;

	for (struct mr_sub *s = r->touched; s; s = s->next_touched) {
		s->in_touched = false;
		wakes += mr__sub_wake(s);
	}
	if (wakes)
		count(&r->syscalls, wakes);
	r->touched = NULL;
}

static int step(mr_router *r)
{
	uint64_t routed = atomic_load_explicit(&r->events_routed, memory_order_relaxed);
	struct mr__reactor_stats rs;

	r->now_ns = 0;
	/*
	 * Commands before each batch of completions is handled: a subscription
	 * made before a mount(2) call must see that mount's record, and once
	 * the record's completion is visible, so is the command pushed before
	 * the call.
	 */
	run_commands(r);
	mr__reactor_reap(r->re, run_commands_cb, r);
	/*
	 * What the kernel's records said goes out now, not after the work
	 * below: a sweep slice takes up to 1 ms, a resync or a catch-up of
	 * 10,000 mounts tens of milliseconds.
	 */
	wake_touched(r);
	for (struct mr__ns *ns = r->active; ns; ns = ns->next)
		if (ns->ops->after_batch)
			ns->ops->after_batch(ns);
	if (r->any_resync) {
		r->any_resync = false;
		for (struct mr__ns *ns = r->active; ns; ns = ns->next)
			if (ns->resync_pending)
				resync(ns);
	}
	if (r->overrun)
		recover(r);
	wake_touched(r);

	mr__reactor_stats(r->re, &rs);
	atomic_store_explicit(&r->enters, rs.enters, memory_order_relaxed);
	uint64_t mounts = 0;
	for (struct mr__ns *ns = r->active; ns; ns = ns->next)
		mounts += ns->mirror.n;
	atomic_store_explicit(&r->n_mounts, mounts, memory_order_relaxed);
	return (int)(atomic_load_explicit(&r->events_routed, memory_order_relaxed) - routed);
}

int mr_router_dispatch(mr_router *r)
{
	int n, err;

	if (!r)
		return -EINVAL;
	if (r->threaded)
		return -EBUSY;
	n = step(r);
	err = mr__reactor_submit(r->re, false);
	return err < 0 ? err : n;
}

int mr_router_fd(const mr_router *r)
{
	return r ? mr__reactor_fd(r->re) : -EINVAL;
}

static void *router_main(void *arg)
{
	mr_router *r = arg;

	while (!atomic_load(&r->stop)) {
		int err = mr__reactor_submit(r->re, true);
		if (err < 0 && err != -EINTR && err != -ETIME && err != -EAGAIN && err != -EBUSY)
			break;
		step(r);
	}
	return NULL;
}

int mr_router_start(mr_router *r)
{
	int err;

	if (!r)
		return -EINVAL;
	if (r->threaded)
		return -EALREADY;
	atomic_store(&r->stop, false);
	/* Submit what add_ns queued on this thread before the router's takes over. */
	mr__reactor_submit(r->re, false);
	r->threaded = true;
	err = pthread_create(&r->thread, NULL, router_main, r);
	if (err) {
		r->threaded = false;
		return -err;
	}
	return 0;
}

int mr_router_stop(mr_router *r)
{
	if (!r)
		return -EINVAL;
	if (!r->threaded)
		return -EALREADY;
	atomic_store(&r->stop, true);
	mr__router_kick(r);
	pthread_join(r->thread, NULL);
	r->threaded = false;
	return 0;
}

/* ---- namespaces ---- */

static struct mr__ns *registry_find(mr_router *r, uint64_t id)
{
	for (size_t i = 0; i < r->n_registry; i++)
		if (r->registry[i]->id == id)
			return r->registry[i];
	return NULL;
}

static int add_ns_fd(mr_router *r, int nsfd, pid_t pid, uint64_t *ret_ns_id)
{
	struct mr__ns *ns;
	struct cmd *c;
	int err;

	err = mr__ns_open(r, nsfd, pid, &ns);
	if (err < 0)
		return err;

	pthread_mutex_lock(&r->ctl_lock);
	if (registry_find(r, ns->id)) {
		uint64_t id = ns->id;
		pthread_mutex_unlock(&r->ctl_lock);
		mr__ns_close(ns, NULL);
		if (ret_ns_id)
			*ret_ns_id = id;
		return -EEXIST;
	}
	c = mr__calloc(1, sizeof(*c));
	if (r->n_registry == r->cap_registry) {
		size_t cap = r->cap_registry ? r->cap_registry * 2 : 8;
		struct mr__ns **v = mr__realloc(r->registry, cap * sizeof(*v));
		if (v) {
			r->registry = v;
			r->cap_registry = cap;
		}
	}
	if (!c || r->n_registry == r->cap_registry) {
		pthread_mutex_unlock(&r->ctl_lock);
		mr__free(c);
		mr__ns_close(ns, NULL);
		return -ENOMEM;
	}
	r->registry[r->n_registry++] = ns;
	count(&r->n_ns, 1);
	c->kind = CMD_ADD_NS;
	c->ns = ns;
	push_cmd(r, c);
	pthread_mutex_unlock(&r->ctl_lock);
	if (ret_ns_id)
		*ret_ns_id = ns->id;
	return 0;
}

int mr_router_add_ns_self(mr_router *r, uint64_t *ret_ns_id)
{
	if (!r)
		return -EINVAL;
	int fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return add_ns_fd(r, fd, 0, ret_ns_id);
}

int mr_router_add_ns_pid(mr_router *r, pid_t pid, uint64_t *ret_ns_id)
{
	char p[64];

	if (!r || pid <= 0)
		return -EINVAL;
	snprintf(p, sizeof(p), "/proc/%d/ns/mnt", (int)pid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	return add_ns_fd(r, fd, pid, ret_ns_id);
}

int mr_router_add_ns_fd(mr_router *r, int nsfd, uint64_t *ret_ns_id)
{
	if (!r || nsfd < 0)
		return -EINVAL;
	/* 4.11: NS_GET_NSTYPE; anything but a mount namespace's nsfs file is the wrong fd. */
	int type = ioctl(nsfd, NS_GET_NSTYPE);
	if (type < 0)
		return errno == EBADF ? -EBADF : -EINVAL;
	if (type != CLONE_NEWNS)
		return -EINVAL;
	int fd = fcntl(nsfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	return add_ns_fd(r, fd, -1, ret_ns_id);
}

int mr_router_remove_ns(mr_router *r, uint64_t ns_id)
{
	struct mr__ns *ns;
	struct cmd *c;

	if (!r)
		return -EINVAL;
	c = mr__calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	pthread_mutex_lock(&r->ctl_lock);
	ns = registry_find(r, ns_id);
	if (!ns) {
		pthread_mutex_unlock(&r->ctl_lock);
		mr__free(c);
		return -ENOENT;
	}
	for (size_t i = 0; i < r->n_registry; i++)
		if (r->registry[i] == ns) {
			r->registry[i] = r->registry[--r->n_registry];
			break;
		}
	atomic_store_explicit(&r->n_ns, atomic_load(&r->n_ns) - 1, memory_order_relaxed);
	c->kind = CMD_DEL_NS;
	c->ns = ns;
	push_cmd(r, c);
	pthread_mutex_unlock(&r->ctl_lock);
	return 0;
}

/* ---- subscribers ---- */

int mr_subscribe(mr_router *r, const struct mr_sub_opts *opts, mr_sub **ret)
{
	struct mr_sub_opts o = {0};
	struct mr_sub *s;
	struct cmd *c;
	int err;

	if (!r || !ret)
		return -EINVAL;
	if (opts) {
		if (opts->size < offsetof(struct mr_sub_opts, capacity) + sizeof(uint32_t))
			return -EINVAL;
		memcpy(&o, opts, opts->size < sizeof(o) ? opts->size : sizeof(o));
	}
	if (o.flags & ~MR_SUB_SNAPSHOT)
		return -EINVAL;
	if (o.kinds & ~MR_KINDS_ALL)
		return -EINVAL;
	err = mr__sub_alloc(r, &o, &s);
	if (err < 0)
		return err;
	c = mr__calloc(1, sizeof(*c));
	if (!c) {
		mr__sub_destroy(s);
		return -ENOMEM;
	}

	pthread_mutex_lock(&r->ctl_lock);
	s->ns = o.ns_id ? registry_find(r, o.ns_id) : r->n_registry ? r->registry[0] : NULL;
	if (!s->ns) {
		pthread_mutex_unlock(&r->ctl_lock);
		mr__free(c);
		mr__sub_destroy(s);
		return -ENOENT;
	}
	c->kind = CMD_ADD_SUB;
	c->sub = s;
	push_cmd(r, c);
	pthread_mutex_unlock(&r->ctl_lock);
	*ret = s;
	return 0;
}

void mr_unsubscribe(mr_sub *s)
{
	struct cmd *c;

	if (!s)
		return;
	/*
	 * The first free flips the handle to FREED at once, though the router
	 * releases it later: a second free is caught here, not as a use
	 * after free inside the router.
	 */
	uint32_t live = MR__SUB_LIVE;
	if (!atomic_compare_exchange_strong(&s->magic, &live, MR__SUB_FREED)) {
		mr__misuse("mr_unsubscribe", live == MR__SUB_FREED
						  ? "subscriber already freed"
						  : "not a live subscriber (freed, or never made)");
		return;
	}
	c = mr__calloc(1, sizeof(*c));
	if (!c) {
		/* Cannot queue the removal: leave the ring to the router's teardown. */
		return;
	}
	c->kind = CMD_DEL_SUB;
	c->sub = s;
	push_cmd(s->r, c);
}

/* ---- the router object ---- */

int mr_router_new(const struct mr_opts *opts, mr_router **ret)
{
	struct mr_opts o = {0};
	mr_router *r;
	int err;

	if (!ret)
		return -EINVAL;
	if (opts) {
		if (opts->size < offsetof(struct mr_opts, source) + sizeof(const char *))
			return -EINVAL;
		memcpy(&o, opts, opts->size < sizeof(o) ? opts->size : sizeof(o));
	}
	if (o.flags & ~MR_OPT_NO_SELF_NS)
		return -EINVAL;
	/* Documented ranges; batch * 2 must also stay a sane io_uring size. */
	if (o.queue_notes > MR__QUEUE_NOTES_MAX || o.batch > MR__BATCH_MAX)
		return -EINVAL;

	r = mr__calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->opts = o;
	r->wake_efd = -1;
	pthread_mutex_init(&r->ctl_lock, NULL);
	pthread_mutex_init(&r->group_lock, NULL);

	err = mr__source_pick(o.source, &r->ops, &r->reason);
	if (err < 0)
		goto fail;
	r->source_auto = !o.source || !strcmp(o.source, "auto");

	struct mr__reactor_opts ro = {.entries = o.batch ? o.batch * 2 : 256};
	err = mr__reactor_new(&ro, &r->re);
	if (err < 0)
		goto fail;

	r->wake_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->wake_efd < 0) {
		err = -errno;
		goto fail;
	}
	r->wake_watch = (struct mr__watch){
		.fd = r->wake_efd, .mode = MR__WATCH_READ, .fn = wake_cb, .owner = r};
	err = mr__reactor_add(r->re, &r->wake_watch);
	if (err < 0)
		goto fail;

	if (!(o.flags & MR_OPT_NO_SELF_NS)) {
		err = mr_router_add_ns_self(r, NULL);
		if (err < 0)
			goto fail;
		/* Apply it now, so a caller's first dispatch or start finds it in place. */
		run_commands(r);
	}
	*ret = r;
	return 0;
fail:
	mr_router_free(r);
	return err;
}

void mr_router_free(mr_router *r)
{
	if (!r)
		return;
	if (r->threaded)
		mr_router_stop(r);
	run_commands(r);
	while (r->subs)
		del_sub(r, r->subs);
	while (r->active)
		del_ns(r, r->active);
	if (r->re) {
		/* Let the cancellations complete so every watch is released. */
		mr__reactor_remove(r->re, &r->wake_watch);
		mr__reactor_drain(r->re, 2000);
	}
	mr__reactor_free(r->re);
	if (r->wake_efd >= 0)
		close(r->wake_efd);
	mr__free(r->registry);
	mr__free(r->match);
	mr__free(r->below);
	mr__free(r->deferred);
	pthread_mutex_destroy(&r->ctl_lock);
	pthread_mutex_destroy(&r->group_lock);
	mr__free(r);
}

const char *mr_router_source(const mr_router *r)
{
	return r && r->ops ? r->ops->name : "";
}

const char *mr_router_source_reason(const mr_router *r)
{
	return r && r->reason ? r->reason : "";
}

int mr_router_ns_source(mr_router *r, uint64_t ns_id, const char **ret_name,
			const char **ret_reason)
{
	struct mr__ns *ns;

	if (!r || !ret_name || !ret_reason)
		return -EINVAL;
	pthread_mutex_lock(&r->ctl_lock);
	ns = registry_find(r, ns_id);
	if (ns) {
		*ret_name = ns->ops->name;
		*ret_reason = ns->ops == r->ops ? r->reason : ns->reason;
	}
	pthread_mutex_unlock(&r->ctl_lock);
	return ns ? 0 : -ENOENT;
}

int mr_router_stats(const mr_router *r, struct mr_stats *ret)
{
	if (!r || !ret)
		return -EINVAL;
#define LOAD(f) atomic_load_explicit(&r->f, memory_order_relaxed)
	*ret = (struct mr_stats){
		.records_read = LOAD(records_read),
		.events_routed = LOAD(events_routed),
		.deliveries = LOAD(deliveries),
		.ring_drops = LOAD(ring_drops),
		.kernel_losses = LOAD(kernel_losses),
		.resyncs = LOAD(resyncs),
		.syscalls = LOAD(syscalls) + LOAD(enters),
		.io_uring_enters = LOAD(enters),
		.bad_records = LOAD(bad_records),
		.namespaces = LOAD(n_ns),
		.subscribers = LOAD(n_subs),
		.mounts = LOAD(n_mounts),
		.resync_ns_total = LOAD(resync_ns_total),
		.resync_cpu_ns_total = LOAD(resync_cpu_ns_total),
		.sweeps = LOAD(sweeps),
		.sweep_ns_total = LOAD(sweep_ns_total),
	};
#undef LOAD
	return 0;
}


struct mr__reactor *mr__router_reactor(mr_router *r)
{
	return r->re;
}

const struct mr__source_ops *mr__router_source_ops(mr_router *r)
{
	return r->ops;
}

bool mr__router_source_auto(mr_router *r)
{
	return r->source_auto;
}

const struct mr_opts *mr__router_opts(mr_router *r)
{
	return &r->opts;
}

uint32_t mr__router_kinds_wanted(const struct mr__ns *ns)
{
	uint32_t kinds = 0;

	for (const struct mr_sub *s = ns->r->subs; s; s = s->next_all)
		if (s->ns == ns && s->attached)
			kinds |= s->kinds;
	return kinds;
}
