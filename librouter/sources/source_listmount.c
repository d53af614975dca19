/* SPDX-License-Identifier: MIT */
/*
 * The listmount source (6.8+), for kernels without fanotify mount events
 * (6.8-6.14: Ubuntu 24.04, Debian 13, RHEL 10) or where fanotify cannot be
 * had.  /proc/PID/mountinfo polls POLLPRI when the namespace's event
 * counter moves; the file is never read.  Each POLLPRI lists the mount IDs
 * with listmount(2) (one call for the whole table: 10,000 IDs in about
 * 0.6 ms, some 20x less than one mountinfo read), diffs them against the IDs
 * of the last listing, and statmounts new IDs only: attach and detach cost
 * one listmount plus O(changed).
 *
 * IDs come sorted (the namespace keeps its mounts in an rbtree by unique ID)
 * and the diff is a merge of two sorted arrays, which are swapped after it,
 * so no allocation happens once they are big enough.
 *
 * Where NS_MNT_GET_INFO (6.12) counts the namespace's mounts, an attach
 * costs O(new) instead: list only the IDs above the last one known (new
 * mounts get new, higher IDs), and if the count is the known one plus those,
 * nothing went away.  The count cannot tell every case apart: a mount made
 * earlier and attached now (fsmount(2), then move_mount(2)) has an older ID
 * and is not listed, and if one went away meanwhile the counts agree.  So a
 * conclusion drawn from counts is checked by a whole listing later, once the
 * namespace is quiet (at most VERIFY_MAX_NS after, and no more than
 * 1/VERIFY_DUTY of the router's time).  A detach, where counts fall short,
 * lists everything at once.  LISTMOUNT_REVERSE adds nothing to this: new
 * IDs are the highest, and listing above the last known one finds them
 * in the same O(new).
 *
 * Moves, remounts and mount_setattr(2) leave the ID set as it was.  A
 * POLLPRI the ID set does not explain therefore gets a pass (attr_pass.c:
 * one read of mountinfo, the mounts whose line changed looked up), but only
 * while a subscriber of the namespace asks for those kinds.  A POLLPRI the
 * ID set does explain may still hide one: the same schedule as fanotify's
 * records (pass_schedule.c) says when to verify, the ID set's changes
 * standing for records.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "alloc.h"
#include "clock.h"
#include "io/reactor.h"
#include "mirror/listmount.h"
#include "mirror/mount.h"
#include "mirror/mount_ids.h"
#include "namespace.h"
#include "probe.h"
#include "router/upcalls.h"
#include "sources/attr_pass.h"
#include "sources/pass_schedule.h"
#include "sources/source.h"
#include "sources/source_listmount.h"
#include "mountrouter-uapi.h"

static int lm_probe(void)
{
	return mr__probe()->listmount ? 0 : -ENOSYS;
}

static void state_free(void *p)
{
	struct mr__lm_state *st = p;

	mr__attr_pass_free(&st->pass);
	if (st->bell_fd >= 0)
		close(st->bell_fd);
	mr__ids_free(&st->known);
	mr__ids_free(&st->next);
	mr__free(st);
}

static int lm_lookup(struct mr__ns *ns, uint64_t mnt_id, struct mr__mount **ret)
{
	struct mr__lm_state *st = ns->src;
	uint64_t calls = 0;
	int err = mr__statmount(st->ns_id, mnt_id, &ns->smbuf, &calls, ret);

	mr__router_count_syscalls(ns->r, calls);
	return err;
}

/*
 * Whether listmount sees all of another namespace: as many mounts as its
 * mountinfo lists (once, at open; the doorbell never reads it).  Counts
 * taken a moment apart may differ while mounts come and go: asked again
 * before concluding.  -EOPNOTSUPP when listmount sees fewer.
 */
static int check_foreign(struct mr__lm_state *st, size_t listed)
{
	uint64_t calls = 0;
	int err = -EOPNOTSUPP;

	for (int tries = 0; tries < 3; tries++) {
		long lines = mr__ids_count_mountinfo(st->pass.fd);
		calls += 2;
		if (lines < 0 || (size_t)lines <= listed) {
			err = lines < 0 ? (int)lines : 0;
			break;
		}
		/* Look again at what listmount sees now. */
		err = mr__ids_list(st->ns_id, &st->next, &calls);
		if (err < 0)
			break;
		listed = st->next.n;
		err = -EOPNOTSUPP;
	}
	mr__router_count_syscalls(st->ns->r, calls);
	return err;
}

static int lm_read_table(struct mr__ns *ns, struct mr__table *ret)
{
	struct mr__lm_state *st = ns->src;
	uint64_t calls = 0;
	size_t start = ret->n;
	long before = mr__lm_count_mounts(st);
	int err = mr__listmount_table(st->ns_id, &ns->smbuf, &calls, ret);

	mr__router_count_syscalls(ns->r, calls);
	if (err < 0)
		return err;
	/*
	 * 6.11-6.12 resolve another namespace's paths from the lowest-ID child
	 * of its root (kernel/patches/0006 fixes it for the project's kernel):
	 * listmount sees only the mounts under that child.  Such a namespace
	 * needs another source.
	 */
	if (st->ns_id && ns->pid) {
		err = check_foreign(st, ret->n - start);
		if (err < 0)
			return err;
	}
	/* The table is what the next listing is compared with. */
	if (mr__ids_reserve(&st->known, ret->n - start) < 0)
		return -ENOMEM;
	st->known.n = 0;
	for (size_t i = start; i < ret->n; i++)
		st->known.v[st->known.n++] = ret->v[i]->pub.id;
	/* Mounts vanishing between listmount and statmount make this differ: no harm. */
	st->counts_ok = before >= 0 && (size_t)before == st->known.n && mr__lm_count_mounts(st) == before;
	st->verify_since_ns = 0;
	return 0;
}

/* The pass (attr_pass.c), and what the schedule must know of it. */
static void run_pass(struct mr__lm_state *st)
{
	uint64_t t0 = mr__now_ns();

	mr__attr_pass_run(&st->pass, st->ns);
	mr__pass_done(&st->clock, t0, mr__now_ns());
}

static void on_pollpri(struct mr__watch *w, int res, const void *buf, size_t len)
{
	struct mr__lm_state *st = w->owner;
	long changed = -1;

	(void)buf;
	(void)len;
	if (res < 0)
		return;
	mr__router_due(st->ns); /* a verifying listing, a pass: after the batch */
	mr__router_stamp(st->ns->r);
	st->last_pollpri_ns = mr__now_ns();
	if (st->counts_ok)
		changed = mr__lm_quick_listing(st);
	if (changed < 0)
		changed = mr__lm_full_listing(st);
	if (changed < 0) {
		mr__router_loss(st->ns);
		return;
	}
	/*
	 * The IDs that changed are this POLLPRI's records; none explains it
	 * at once (the listing is synchronous, there is nothing to wait for).
	 */
	uint64_t now = mr__now_ns();
	mr__pass_records(&st->clock, (uint64_t)changed, now - st->last_pollpri_ns, now);
	mr__pass_pollpri(&st->clock, now);
	if (mr__pass_unexplained_in(&st->clock, now) != UINT64_MAX)
		mr__pass_judged(&st->clock, false, now);
}

/* When the deferred work of @since is due: quiet, or waited long enough. */
static uint64_t due_at(const struct mr__lm_state *st, uint64_t since, uint64_t min_wait)
{
	uint64_t quiet = st->last_pollpri_ns + VERIFY_QUIET_NS;
	uint64_t at = quiet > since + min_wait ? quiet : since + min_wait;

	return at < since + VERIFY_MAX_NS ? at : since + VERIFY_MAX_NS;
}

static void lm_after_batch(struct mr__ns *ns)
{
	struct mr__lm_state *st = ns->src;
	uint64_t now = mr__now_ns(), next = UINT64_MAX;

	if (st->verify_since_ns) {
		uint64_t at = due_at(st, st->verify_since_ns, st->full_cpu_ns * VERIFY_DUTY);
		if (now >= at) {
			mr__router_stamp(ns->r);
			if (mr__lm_full_listing(st) < 0)
				mr__router_loss(ns);
		} else {
			next = at;
		}
	}
	mr__pass_batch_end(&st->clock);
	st->clock.wanted = (mr__router_kinds_wanted(ns) & KINDS_PASS) != 0;
	if (mr__pass_due(&st->clock, now) == 0)
		run_pass(st);
	now = mr__now_ns();
	uint64_t due = mr__pass_due(&st->clock, now);
	if (due != UINT64_MAX && now + due < next)
		next = now + due;
	if (next == UINT64_MAX)
		return;
	/* @next may have passed while the pass ran: then at once. */
	uint64_t in = next > now ? next - now : 0;
	mr__source_timer_arm(&st->timer, mr__router_reactor(ns->r), in, now);
}

static int lm_open(struct mr__ns *ns)
{
	const struct mr__features *f = mr__probe();
	struct mr__lm_state *st;

	/* Another namespace is named by mnt_ns_id (6.11); before, only our own. */
	if (ns->pid && !f->statmount_ns)
		return -EOPNOTSUPP;
	st = mr__calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->base.free_state = state_free;
	st->ns = ns;
	st->ns_id = ns->pid ? ns->id : 0;
	st->bell_fd = -1;
	/* The first read of mountinfo's lines is the first estimate of a pass's cost. */
	uint64_t t0 = mr__now_ns();
	int err = mr__attr_pass_open(&st->pass, ns);
	if (err < 0) {
		state_free(st);
		return err;
	}
	/* The doorbell is a file of its own, apart from the one passes read. */
	st->bell_fd = mr__attr_pass_doorbell_open(ns);
	if (st->bell_fd < 0) {
		err = st->bell_fd;
		st->bell_fd = -1;
		state_free(st);
		return err;
	}
	st->clock.pass_cost_ns = mr__now_ns() - t0;
	st->clock.pass_end_ns = mr__now_ns();
	ns->src = st;
	return 0;
}

/* Before a snapshot: what was put off while nobody asked is looked for now. */
static void lm_settle(struct mr__ns *ns)
{
	struct mr__lm_state *st = ns->src;

	if (st->clock.suspect_ns || (!st->clock.wanted && st->clock.unverified))
		run_pass(st);
}

static int lm_start(struct mr__ns *ns, struct mr__reactor *re)
{
	struct mr__lm_state *st = ns->src;

	st->mi_watch = (struct mr__watch){.fd = st->bell_fd, .mode = MR__WATCH_POLLPRI,
					  .fn = on_pollpri, .owner = st, .release = mr__source_watch_released};
	mr__source_timer_init(&st->timer, st, ns);
	st->base.live = 2;
	return mr__reactor_add(re, &st->mi_watch);
}

static void lm_close(struct mr__ns *ns, struct mr__reactor *re)
{
	struct mr__lm_state *st = ns->src;

	if (!st)
		return;
	ns->src = NULL;
	st->ns = NULL;
	mr__source_end(&st->base, re, (struct mr__watch *const[]){&st->mi_watch, &st->timer.watch}, 2);
}

const struct mr__source_ops mr__source_listmount = {
	.name = "listmount",
	.prefers_io_uring = true,
	.probe = lm_probe,
	.open = lm_open,
	.start = lm_start,
	.after_batch = lm_after_batch,
	.settle = lm_settle,
	.read_table = lm_read_table,
	.lookup = lm_lookup,
	.close = lm_close,
};
