/* SPDX-License-Identifier: MIT */
/*
 * Helpers for the in-VM tests of fanotify mount events (kernel patches 0020,
 * the 6.15 backport, and 0021, FAN_MNT_ATTR_CHANGE): a FAN_REPORT_MNT group
 * on a mount namespace, its events decoded, and statmount(2) snapshots of a
 * namespace to check events against.
 */
#ifndef MR_FANMNT_H
#define MR_FANMNT_H

#include <sys/fanotify.h> /* before the project's header: it fills gaps */
#include "vmtest.h"

#define ALL_MNT_EVENTS (FAN_MNT_ATTACH | FAN_MNT_DETACH)

/* A decoded event: mask and the mount ID of its info record (0: none). */
struct fev {
	uint64_t mask;
	uint64_t id;
};

/*
 * A FAN_REPORT_MNT group, non-blocking.  Exits 77 if the kernel has no
 * mount events (fanotify_init says EINVAL).
 */
static inline int fan_group(void)
{
	int fd = fanotify_init(FAN_REPORT_MNT | FAN_NONBLOCK | FAN_CLOEXEC, 0);

	if (fd < 0 && errno == EINVAL) {
		printf("skip: kernel has no fanotify mount events (FAN_REPORT_MNT)\n");
		exit(T_SKIP);
	}
	return fd;
}

/* Mark the mount namespace of /proc/self/ns/mnt (or @nsfd if >= 0). */
static inline int fan_mark_ns(int fd, unsigned int op, uint64_t mask, int nsfd)
{
	int own = -1, r;

	if (nsfd < 0)
		nsfd = own = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (nsfd < 0)
		return -1;
	r = fanotify_mark(fd, op | FAN_MARK_MNTNS, mask, nsfd, NULL);
	if (own >= 0) {
		int e = errno;

		close(own);
		errno = e;
	}
	return r;
}

/*
 * Drain @fd into @out (at most @max; more are counted, not kept).  Checks
 * the layout of every record: metadata, no fd, and for mount events one
 * FAN_EVENT_INFO_TYPE_MNT record of 16 bytes.  Returns the count, -1 on a
 * malformed record (printed).
 */
static inline int fan_read(int fd, struct fev *out, int max)
{
	char buf[8192] __attribute__((aligned(8)));
	int n = 0;

	for (;;) {
		ssize_t len = read(fd, buf, sizeof(buf));
		struct fanotify_event_metadata *m = (void *)buf;

		if (len < 0 && errno == EAGAIN)
			return n;
		if (len <= 0) {
			fprintf(stderr, "fanotify read: %zd (%s)\n", len, strerror(errno));
			return -1;
		}
		for (; FAN_EVENT_OK(m, len); m = FAN_EVENT_NEXT(m, len)) {
			struct fev e = { m->mask, 0 };

			if (m->vers != FANOTIFY_METADATA_VERSION || m->fd != FAN_NOFD) {
				fprintf(stderr, "event: vers %u fd %d\n", m->vers, m->fd);
				return -1;
			}
			if (m->mask & FAN_Q_OVERFLOW) {
				if (m->event_len != FAN_EVENT_METADATA_LEN) {
					fprintf(stderr, "overflow event_len %u\n", m->event_len);
					return -1;
				}
			} else {
				struct mr_fanotify_info_mnt *i = (void *)(m + 1);

				if (m->event_len != FAN_EVENT_METADATA_LEN + sizeof(*i) ||
				    i->info_type != FAN_EVENT_INFO_TYPE_MNT ||
				    i->len != sizeof(*i)) {
					fprintf(stderr, "mount event: len %u info %u/%u\n",
						m->event_len, i->info_type, i->len);
					return -1;
				}
				e.id = i->mnt_id;
			}
			if (n < max)
				out[n] = e;
			n++;
		}
		if (len != 0) {
			fprintf(stderr, "trailing %zd bytes\n", len);
			return -1;
		}
	}
}

static inline void fan_dump(const struct fev *e, int n)
{
	for (int i = 0; i < n; i++)
		fprintf(stderr, "  event mask %#llx mnt %llu\n",
			(unsigned long long)e[i].mask, (unsigned long long)e[i].id);
}

/* Expect exactly one event, @mask on @id. */
static inline int fan_expect1(int fd, uint64_t mask, uint64_t id)
{
	struct fev e[16];
	int n = fan_read(fd, e, 16);

	if (n != 1 || e[0].mask != mask || e[0].id != id) {
		if (n > 0)
			fan_dump(e, n < 16 ? n : 16);
		FAILF("want one event %#llx on %llu, got %d", (unsigned long long)mask,
		      (unsigned long long)id, n);
	}
	return T_PASS;
}

/* ---- statmount snapshots ---- */

#define SNAP_MAX 64

/* What statmount() says of a mount's attributes (not of its place). */
struct snap_ent {
	uint64_t id;
	uint32_t sb_flags;
	uint64_t attr, propagation, peer, master;
	char opts[256];
};

struct snap {
	int n;
	struct snap_ent e[SNAP_MAX];
};

/* Every mount of the caller's namespace, by listmount(LSMT_ROOT) + statmount. */
static inline int snap_take(struct snap *s)
{
	struct mr_mnt_id_req req = { .size = MR_MNT_ID_REQ_SIZE_VER0, .mnt_id = LSMT_ROOT };
	static union {
		struct mr_statmount sm;
		char buf[8192];
	} u;
	uint64_t ids[SNAP_MAX];
	int nr = syscall(__NR_listmount, &req, ids, SNAP_MAX, 0);

	if (nr < 0 || nr >= SNAP_MAX)
		return -1;
	s->n = 0;
	for (int i = 0; i < nr; i++) {
		struct mr_mnt_id_req r = {
			.size = MR_MNT_ID_REQ_SIZE_VER0,
			.mnt_id = ids[i],
			.param = STATMOUNT_SB_BASIC | STATMOUNT_MNT_BASIC | STATMOUNT_MNT_OPTS,
		};
		struct snap_ent *e = &s->e[s->n++];

		memset(&u, 0, sizeof(u));
		if (syscall(__NR_statmount, &r, &u.sm, sizeof(u), 0) < 0)
			return -1;
		memset(e, 0, sizeof(*e));
		e->id = ids[i];
		e->sb_flags = u.sm.sb_flags;
		e->attr = u.sm.mnt_attr;
		e->propagation = u.sm.mnt_propagation;
		e->peer = u.sm.mnt_peer_group;
		e->master = u.sm.mnt_master;
		if (u.sm.mask & STATMOUNT_MNT_OPTS)
			snprintf(e->opts, sizeof(e->opts), "%s", u.sm.str + u.sm.mnt_opts);
	}
	return 0;
}

static inline const struct snap_ent *snap_find(const struct snap *s, uint64_t id)
{
	for (int i = 0; i < s->n; i++)
		if (s->e[i].id == id)
			return &s->e[i];
	return NULL;
}

/* IDs present in both snapshots whose attributes differ; count in *nr. */
static inline void snap_diff(const struct snap *a, const struct snap *b,
			     uint64_t *ids, int *nr)
{
	*nr = 0;
	for (int i = 0; i < b->n; i++) {
		const struct snap_ent *x = snap_find(a, b->e[i].id), *y = &b->e[i];

		if (x && (x->sb_flags != y->sb_flags || x->attr != y->attr ||
			  x->propagation != y->propagation || x->peer != y->peer ||
			  x->master != y->master || strcmp(x->opts, y->opts)))
			ids[(*nr)++] = y->id;
	}
}

/*
 * A private mount namespace with a fresh tmpfs at /tmp/vt as the scratch
 * root; the working directory ends up there.
 */
static inline void fan_setup_ns(void)
{
	if (unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		perror("unshare/make-private");
		exit(T_FAIL);
	}
	mkdir("/tmp/vt", 0755);
	if (mount("vt", "/tmp/vt", "tmpfs", 0, NULL) < 0 || chdir("/tmp/vt") < 0) {
		perror("mount tmpfs");
		exit(T_FAIL);
	}
}

#endif /* MR_FANMNT_H */
