/* SPDX-License-Identifier: MIT */
/*
 * The truth check of the in-VM tests: a mirror of the mount namespace built
 * only from watch_mount() records, compared with what listmount(2) and
 * statmount(2) say after every operation.
 *
 * The mirror starts from listmount(LSMT_ROOT) of the caller's namespace and
 * a watch on "/".  Records are applied strictly, so that a record the kernel
 * invents fails as surely as one it leaves out:
 *   NEW_MOUNT     the mount must be unknown and its parent known; it is added
 *                 (its attributes read with statmount(), as a reader would);
 *   UNMOUNT       the mount must be known, under that parent; it is removed;
 *   MOVE_FROM/TO  the mount must be known, under the old parent; then under
 *                 the new one;
 *   READONLY, SETATTR  the mount must be known; read-only as the record says,
 *                 other attributes read again;
 *   EXPIRY        the mount must be known, and an UNMOUNT of it follow;
 *   loss          fails the check (the queues are sized not to overflow,
 *                 unless the caller allows it and then resynchronises).
 * Compared: the set of mounts, each one's parent, whether it is read-only
 * (mount flag or superblock), its mount flags, propagation type and peer
 * group.  Not compared: mnt_master, which the kernel changes for the slaves
 * of an unmounted master without telling anyone (documented in
 * kernel/README.md).
 */
#ifndef MR_TRUTH_H
#define MR_TRUTH_H

#include "vmtest.h"

#define TR_MAX 1024
#define TR_SB_RDONLY 1 /* SB_RDONLY as statmount's sb_flags reports it */

struct tr_mount {
	uint64_t id, parent;
	int ro, moving, expiring;
	uint64_t attr, prop, peer;
};

struct truth {
	struct tr_mount m[TR_MAX];
	int n;
	int rfd, wfd;
	int allow_loss;  /* resynchronise on a loss instead of failing */
	int losses;
	unsigned long records;
};

static union {
	struct mr_statmount sm;
	char buf[4096];
} tr_u;

/* statmount() of @id: 0, or -errno. */
static inline int tr_stat(uint64_t id, struct tr_mount *out)
{
	struct mr_mnt_id_req req = {
		.size = MR_MNT_ID_REQ_SIZE_VER0,
		.mnt_id = id,
		.param = STATMOUNT_MNT_BASIC | STATMOUNT_SB_BASIC,
	};

	memset(&tr_u, 0, sizeof(tr_u));
	if (syscall(__NR_statmount, &req, &tr_u.sm, sizeof(tr_u), 0) < 0)
		return -errno;
	out->id = id;
	out->parent = tr_u.sm.mnt_parent_id;
	out->ro = (tr_u.sm.mnt_attr & MOUNT_ATTR_RDONLY) ||
		  (tr_u.sm.sb_flags & TR_SB_RDONLY);
	out->attr = tr_u.sm.mnt_attr;
	out->prop = tr_u.sm.mnt_propagation;
	out->peer = tr_u.sm.mnt_peer_group;
	return 0;
}

/* listmount(LSMT_ROOT) into @ids: the count, or -errno. */
static inline int tr_list(uint64_t *ids, int max)
{
	struct mr_mnt_id_req req = {
		.size = MR_MNT_ID_REQ_SIZE_VER0,
		.mnt_id = LSMT_ROOT,
	};
	long r = syscall(__NR_listmount, &req, ids, (size_t)max, 0);

	return r < 0 ? -errno : (int)r;
}

static inline struct tr_mount *tr_find(struct truth *t, uint64_t id)
{
	for (int i = 0; i < t->n; i++)
		if (t->m[i].id == id)
			return &t->m[i];
	return NULL;
}

/* The mirror from listmount()/statmount() now. */
static inline int tr_load(struct truth *t)
{
	static uint64_t ids[TR_MAX];
	int nr = tr_list(ids, TR_MAX);

	if (nr < 0)
		FAILF("listmount: %s", strerror(-nr));
	t->n = 0;
	for (int i = 0; i < nr; i++) {
		struct tr_mount m = { 0 };

		if (tr_stat(ids[i], &m) < 0)
			FAILF("statmount %llu: %s", (unsigned long long)ids[i],
			      strerror(errno));
		t->m[t->n++] = m;
	}
	return T_PASS;
}

/*
 * Set up the mirror of the caller's namespace and a watch on "/" with room
 * for @notes records (at most 512).  Exits 77 where listmount is missing.
 */
static inline int tr_init(struct truth *t, int notes)
{
	uint64_t id;

	memset(t, 0, sizeof(*t));
	if (tr_list(&id, 1) == -ENOSYS) {
		printf("skip: no listmount()\n");
		exit(T_SKIP);
	}
	t->wfd = make_queue(notes, &t->rfd);
	CHECK(watch_mount(AT_FDCWD, "/", 0, t->wfd, 7) == 0);
	return tr_load(t);
}

static inline void tr_fini(struct truth *t)
{
	close(t->wfd);
	close(t->rfd);
}

static inline int tr_apply(struct truth *t, const struct note *r)
{
	struct tr_mount *m, *p;

	t->records++;
	if (r->type == WATCH_TYPE_META) {
		if (r->subtype == WATCH_META_LOSS_NOTIFICATION) {
			t->losses++;
			if (!t->allow_loss)
				FAILF("loss record: the queue overflowed");
			return tr_load(t);
		}
		return T_PASS; /* removal of a watch */
	}
	if (r->type != WATCH_TYPE_MOUNT_NOTIFY)
		FAILF("record of type %u", r->type);
	m = tr_find(t, r->subtype <= NOTIFY_MOUNT_UNMOUNT ||
			       r->subtype >= NOTIFY_MOUNT_MOVE_FROM ? r->b : r->a);
	if (m && m->expiring && r->subtype != NOTIFY_MOUNT_UNMOUNT)
		FAILF("%s after EXPIRY of %llu, not UNMOUNT", subtype_name(r->subtype),
		      (unsigned long long)m->id);
	switch (r->subtype) {
	case NOTIFY_MOUNT_NEW_MOUNT:
		if (m)
			FAILF("NEW_MOUNT of %llu, which is already there",
			      (unsigned long long)r->b);
		p = tr_find(t, r->a);
		if (!p)
			FAILF("NEW_MOUNT of %llu on %llu, an unknown parent",
			      (unsigned long long)r->b, (unsigned long long)r->a);
		if (t->n == TR_MAX)
			FAILF("more than %d mounts", TR_MAX);
		m = &t->m[t->n++];
		memset(m, 0, sizeof(*m));
		/* A reader reads the attributes; it may be gone again already. */
		if (tr_stat(r->b, m) < 0)
			m->id = r->b;
		m->parent = r->a;
		m->ro = !!(r->info & NOTIFY_MOUNT_IS_NOW_RO);
		return T_PASS;
	case NOTIFY_MOUNT_UNMOUNT:
		if (!m || m->parent != r->a)
			FAILF("UNMOUNT of %llu from %llu: %s", (unsigned long long)r->b,
			      (unsigned long long)r->a,
			      m ? "it is under another parent" : "unknown mount");
		*m = t->m[--t->n];
		return T_PASS;
	case NOTIFY_MOUNT_MOVE_FROM:
		if (!m || m->parent != r->a || m->moving)
			FAILF("MOVE_FROM of %llu from %llu: %s", (unsigned long long)r->b,
			      (unsigned long long)r->a,
			      !m ? "unknown mount" : m->moving ? "already moving" :
			      "it is under another parent");
		m->moving = 1;
		return T_PASS;
	case NOTIFY_MOUNT_MOVE_TO:
		if (!m || !m->moving)
			FAILF("MOVE_TO of %llu without MOVE_FROM", (unsigned long long)r->b);
		if (!tr_find(t, r->a))
			FAILF("MOVE_TO of %llu onto unknown %llu", (unsigned long long)r->b,
			      (unsigned long long)r->a);
		m->moving = 0;
		m->parent = r->a;
		return T_PASS;
	case NOTIFY_MOUNT_EXPIRY:
		if (!m)
			FAILF("EXPIRY of unknown %llu", (unsigned long long)r->a);
		m->expiring = 1;
		return T_PASS;
	case NOTIFY_MOUNT_READONLY:
	case NOTIFY_MOUNT_SETATTR: {
		struct tr_mount now = { 0 };

		if (!m)
			FAILF("%s of unknown %llu", subtype_name(r->subtype),
			      (unsigned long long)r->a);
		m->ro = !!(r->info & NOTIFY_MOUNT_IS_NOW_RO);
		if (tr_stat(m->id, &now) == 0) {
			m->attr = now.attr;
			m->prop = now.prop;
			m->peer = now.peer;
		}
		return T_PASS;
	}
	}
	FAILF("record subtype %u", r->subtype);
}

static inline void tr_dump(struct truth *t)
{
	for (int i = 0; i < t->n; i++)
		fprintf(stderr, "  mirror %llu parent %llu ro %d attr %#llx prop %#llx peer %llu\n",
			(unsigned long long)t->m[i].id,
			(unsigned long long)t->m[i].parent, t->m[i].ro,
			(unsigned long long)t->m[i].attr,
			(unsigned long long)t->m[i].prop,
			(unsigned long long)t->m[i].peer);
}

/* Compare the mirror with listmount()/statmount(). */
static inline int tr_compare(struct truth *t, const char *what)
{
	static uint64_t ids[TR_MAX];
	int nr = tr_list(ids, TR_MAX);

	if (nr < 0)
		FAILF("listmount: %s", strerror(-nr));
	for (int i = 0; i < nr; i++) {
		struct tr_mount now = { 0 }, *m = tr_find(t, ids[i]);

		if (tr_stat(ids[i], &now) < 0)
			FAILF("after %s: statmount %llu: %s", what,
			      (unsigned long long)ids[i], strerror(errno));
		if (!m) {
			tr_dump(t);
			FAILF("after %s: mount %llu (parent %llu) not in the mirror",
			      what, (unsigned long long)now.id,
			      (unsigned long long)now.parent);
		}
		if (m->moving || m->expiring || m->parent != now.parent ||
		    m->ro != now.ro || m->attr != now.attr || m->prop != now.prop ||
		    m->peer != now.peer) {
			tr_dump(t);
			FAILF("after %s: mount %llu: mirror parent %llu ro %d attr %#llx "
			      "prop %#llx peer %llu%s%s, kernel parent %llu ro %d attr "
			      "%#llx prop %#llx peer %llu", what,
			      (unsigned long long)m->id, (unsigned long long)m->parent,
			      m->ro, (unsigned long long)m->attr,
			      (unsigned long long)m->prop, (unsigned long long)m->peer,
			      m->moving ? " (moving)" : "", m->expiring ? " (expiring)" : "",
			      (unsigned long long)now.parent, now.ro,
			      (unsigned long long)now.attr, (unsigned long long)now.prop,
			      (unsigned long long)now.peer);
		}
	}
	if (nr != t->n) {
		tr_dump(t);
		FAILF("after %s: the mirror has %d mounts, listmount %d", what, t->n, nr);
	}
	return T_PASS;
}

/* Read everything queued, apply it, compare. */
static inline int tr_sync(struct truth *t, const char *what)
{
	static struct note n[2048];
	int nr = read_notes(t->rfd, n, 2048);

	if (nr < 0)
		FAILF("after %s: reading the queue failed", what);
	for (int i = 0; i < nr; i++)
		if (tr_apply(t, &n[i]) != T_PASS) {
			dump_notes(n, nr);
			FAILF("after %s: record %d of %d", what, i, nr);
		}
	return tr_compare(t, what);
}

/* Do @op, then check the mirror against the kernel. */
#define STEP(t, op)                                                        \
	do {                                                               \
		CHECK(op);                                                 \
		if (tr_sync(t, #op) != T_PASS)                             \
			return T_FAIL;                                     \
	} while (0)

#endif /* MR_TRUTH_H */
