/* SPDX-License-Identifier: MIT */
/*
 * The pass a source runs when it cannot name the mount an attribute change
 * touched (fanotify, listmount: a remount or mount_setattr(2) only makes
 * mountinfo poll with POLLPRI): mountinfo read once through the line
 * differ (mountinfo_diff.c), and only the mounts whose line changed, or
 * whose mirror record changed through another path since the last pass,
 * looked at further.  It costs one read of mountinfo and a hash of it,
 * what a bare poller pays for every change.  When it runs is
 * pass_schedule.c's business.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sources/attr_pass.h"
#include "clock.h"
#include "mirror/mirror.h"
#include "mirror/mount.h"
#include "mirror/mountinfo.h"
#include "mirror/mountinfo_diff.h"
#include "namespace.h"
#include "router/upcalls.h"

static const struct mr__mi_diff_ops baseline_ops; /* learn the lines, report nothing */

/* @ns's /proc/PID/mountinfo, opened anew: an fd, or -errno. */
static int open_mountinfo(const struct mr__ns *ns)
{
	char path[64];
	int fd;

	if (ns->pid)
		snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)ns->pid);
	else
		snprintf(path, sizeof(path), "/proc/self/mountinfo");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int mr__attr_pass_doorbell_open(const struct mr__ns *ns)
{
	return open_mountinfo(ns);
}

int mr__attr_pass_open(struct mr__attr_pass *p, struct mr__ns *ns)
{
	*p = (struct mr__attr_pass){.fd = -1};
	p->fd = open_mountinfo(ns);
	if (p->fd < 0) {
		int err = p->fd;
		p->fd = -1;
		return err;
	}
	/*
	 * The lines as they are before the mirror is read (the caller reads
	 * it after): a change in between shows as a changed line later, and
	 * looking that mount up again finds what the mirror already has.
	 */
	int err = mr__mi_diff_run(&p->diff, p->fd, &baseline_ops, p, NULL);
	p->ok = err == 0;
	return err;
}

void mr__attr_pass_free(struct mr__attr_pass *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	mr__mi_diff_free(&p->diff);
	mr__mountinfo_scratch_free(&p->scratch);
}

struct run {
	struct mr__attr_pass *p;
	struct mr__ns *ns;
};

static int key_of(struct mr__mount *m, void *arg)
{
	struct run *r = arg;

	return m->old_id ? mr__mi_diff_set_key(&r->p->diff, m->old_id, m->pub.id) : 0;
}

/*
 * Is the mirror's record what @line says, as far as a remount or a move can
 * change it?  (A path that differs only because mountinfo shows it from the
 * process's root costs a statmount that finds nothing new.)
 */
static bool line_matches(struct mr__attr_pass *p, const char *line, size_t n, struct mr__mount *m)
{
	struct mr__mount *seen;

	if (mr__mountinfo_parse_line(line, n, &p->scratch, &seen) < 0)
		return false;
	bool same = mr__mount_attrs_same(m, seen) && m->path_len == seen->path_len &&
		    !memcmp(m->pub.path, seen->pub.path, m->path_len);
	mr__mount_unref(seen);
	return same;
}

/*
 * One line.  @changed: it differs from the last pass's.  The mirror may
 * have moved on since through records or a recheck (slot->rec is then
 * another record), so a line equal to the last one can still disagree
 * with the mirror: a mount made read-only and back.
 */
static int judge_line(struct run *r, const char *line, size_t n, struct mr__mi_slot *slot,
		      bool changed, bool known)
{
	if (!slot->key)
		return 0; /* not in the mirror yet: its attach is still to come */
	struct mr__mount *m = mr__mirror_get(&r->ns->mirror, slot->key);
	if (!m)
		return 0; /* gone: its detach says so */
	if (!changed && slot->rec == m)
		return 0;
	/*
	 * A line that moved on since the last pass changed: statmount says to
	 * what.  Otherwise compare it with the record first (a new mount was
	 * looked up when it came, which may predate a remount).
	 */
	if ((changed && known) || !line_matches(r->p, line, n, m))
		mr__router_recheck(r->ns, slot->key);
	m = mr__mirror_get(&r->ns->mirror, slot->key);
	if (slot->rec)
		mr__mount_unref(slot->rec);
	slot->rec = m ? mr__mount_ref(m) : NULL;
	return 0;
}

static int line_changed(void *arg, uint32_t id, const char *line, size_t n,
			struct mr__mi_slot *slot, bool known)
{
	(void)id;
	return judge_line(arg, line, n, slot, true, known);
}

static int line_same(void *arg, uint32_t id, const char *line, size_t n, struct mr__mi_slot *slot)
{
	(void)id;
	return judge_line(arg, line, n, slot, false, true);
}

/* The table is read: what it shows is judged once the subscriptions made before are in place. */
static void table_read(void *arg)
{
	struct run *r = arg;

	mr__router_observed(r->ns);
}

static const struct mr__mi_diff_ops pass_ops = {
	.read = table_read, .changed = line_changed, .same = line_same};

int mr__attr_pass_run(struct mr__attr_pass *p, struct mr__ns *ns)
{
	struct run r = {.p = p, .ns = ns};
	uint64_t cpu0 = mr__thread_cpu_ns(), calls = 0;
	int err;

	mr__router_stamp(ns->r);
	/* Mountinfo names mounts by its 32-bit IDs: map them to the mirror's. */
	err = mr__mirror_each(&ns->mirror, key_of, &r);
	mr__router_reading(ns);
	if (!err)
		err = mr__mi_diff_run(&p->diff, p->fd, p->ok ? &pass_ops : &baseline_ops, &r, &calls);
	if (err < 0) {
		/*
		 * The table could not be compared: a resync reads it all.  The
		 * lines are learned anew first, as when the pass was opened: a
		 * change made after the resync's read then shows as a changed
		 * line.  Learned after it, such a change would be taken for the
		 * table as the resync saw it, and lost.
		 */
		mr__mi_diff_reset(&p->diff);
		p->ok = mr__mi_diff_run(&p->diff, p->fd, &baseline_ops, &r, &calls) == 0;
		mr__router_loss(ns);
	} else if (!p->ok) {
		/* Learned only now, after the last resync read: read again after them. */
		p->ok = true;
		mr__router_loss(ns);
	}
	mr__router_count_syscalls(ns->r, calls);
	mr__router_count_sweep(ns->r, mr__thread_cpu_ns() - cpu0);
	return err;
}
