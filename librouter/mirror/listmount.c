/* SPDX-License-Identifier: MIT */
/*
 * Reading a namespace's table with listmount(2) and statmount(2) (6.8+):
 * by 64-bit unique mount ID, with no text to parse, and the way to
 * resynchronise after a loss.  The syscalls, their masks and buffers are
 * here; a reply becomes a record in statmount_reply.c.
 *
 * Both list only what the caller's root can see (6.18: listmount(LSMT_ROOT)
 * from a chroot lists the mounts under it, as mountinfo does).
 */
#include <errno.h>
#include <linux/mount.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mirror/listmount.h"
#include "internal.h"
#include "alloc.h"
#include "mirror/mount.h"
#include "mountrouter-uapi.h"

/* Asked for on every kernel with statmount (6.8). */
#define MR__SM_BASE                                                                  \
	(STATMOUNT_SB_BASIC | STATMOUNT_MNT_BASIC | STATMOUNT_MNT_ROOT | STATMOUNT_MNT_POINT | \
	 STATMOUNT_FS_TYPE)
/*
 * What a reply must carry to make a record.  The path strings are not in
 * it: the kernel clears a string's bit when it comes out empty, as a mount
 * point it cannot express from the caller's root would; such a mount gets
 * "" rather than failing the whole table.
 */
#define MR__SM_REQUIRED (STATMOUNT_SB_BASIC | STATMOUNT_MNT_BASIC | STATMOUNT_FS_TYPE)

/*
 * Masks to try, newest first.  A kernel that refuses bits it does not know
 * with EINVAL moves us one step down, once, for the life of the process
 * (6.8-6.10 lack MNT_OPTS, 6.11-6.12 FS_SUBTYPE and SB_SOURCE).  On such a
 * kernel the missing strings are "".
 */
static const uint64_t mr__sm_masks[] = {
	MR__SM_BASE | STATMOUNT_MNT_OPTS | STATMOUNT_FS_SUBTYPE | STATMOUNT_SB_SOURCE,
	MR__SM_BASE | STATMOUNT_MNT_OPTS,
	MR__SM_BASE,
};
/* Index into mr__sm_masks; only ever increases, so relaxed access is enough. */
static _Atomic unsigned mr__sm_level;

#define MR__SM_BUF_INIT (16u * 1024)
#define MR__SM_BUF_MAX (16u * 1024 * 1024)
#define MR__LISTMOUNT_BATCH 512

void mr__statmount_buf_free(struct mr__statmount_buf *buf)
{
	mr__free(buf->p);
	buf->p = NULL;
	buf->cap = 0;
}

static int buf_grow(struct mr__statmount_buf *buf)
{
	size_t cap = buf->cap * 2 > MR__SM_BUF_INIT ? buf->cap * 2 : MR__SM_BUF_INIT;
	void *p;

	if (cap > MR__SM_BUF_MAX)
		return -EOVERFLOW;
	/* The old contents are garbage once we retry: no need to copy them. */
	p = mr__malloc(cap);
	if (!p)
		return -ENOMEM;
	mr__free(buf->p);
	buf->p = p;
	buf->cap = cap;
	return 0;
}

int mr__statmount(uint64_t ns_id, uint64_t mnt_id, struct mr__statmount_buf *buf,
		  uint64_t *syscalls, struct mr__mount **ret)
{
	/*
	 * VER0 names the caller's namespace on every kernel with statmount;
	 * VER1 adds mnt_ns_id (6.11) and is only sent when asked for, so an
	 * older kernel is never given a size it would refuse (E2BIG).
	 */
	struct mr_mnt_id_req req = {
		.size = ns_id ? MR_MNT_ID_REQ_SIZE_VER1 : MR_MNT_ID_REQ_SIZE_VER0,
		.mnt_id = mnt_id,
		.mnt_ns_id = ns_id,
	};
	unsigned level = atomic_load_explicit(&mr__sm_level, memory_order_relaxed);
	struct mr_statmount *sm;
	int r;

	/* The fixed part must fit before the kernel can even say EOVERFLOW. */
	if ((!buf->p || buf->cap < sizeof(struct mr_statmount) + 256) && (r = buf_grow(buf)) < 0)
		return r;
	for (;;) {
		long rc;

		req.param = mr__sm_masks[level];
		sm = buf->p;
		/* Fields of a mask bit the kernel leaves clear are never read. */
		memset(sm, 0, sizeof(*sm));
		rc = syscall(__NR_statmount, &req, sm, buf->cap, 0);
		(*syscalls)++;
		if (rc == 0)
			break;
		switch (errno) {
		case EINTR:
			continue;
		case EOVERFLOW: /* the strings did not fit */
			r = buf_grow(buf);
			if (r < 0)
				return r;
			continue;
		case EINVAL:
			if (level + 1 < MR__ARRAY_SIZE(mr__sm_masks)) {
				level++;
				continue;
			}
			return -EINVAL;
		case E2BIG:
			/* mnt_ns_id unknown to this kernel (before 6.11) */
			return ns_id ? -EOPNOTSUPP : -E2BIG;
		default:
			return -errno;
		}
	}
	/* A smaller mask worked: remember it, so the probe is paid once. */
	if (level != atomic_load_explicit(&mr__sm_level, memory_order_relaxed))
		atomic_store_explicit(&mr__sm_level, level, memory_order_relaxed);

	if ((sm->mask & MR__SM_REQUIRED) != MR__SM_REQUIRED)
		return -EPROTO;
	return mr__statmount_parse(sm, buf->cap, ret);
}

int mr__listmount_table(uint64_t ns_id, struct mr__statmount_buf *buf, uint64_t *syscalls,
			struct mr__table *ret)
{
	struct mr_mnt_id_req req = {
		.size = ns_id ? MR_MNT_ID_REQ_SIZE_VER1 : MR_MNT_ID_REQ_SIZE_VER0,
		.mnt_id = LSMT_ROOT,
		.param = 0, /* list IDs greater than this: 0 starts at the first */
		.mnt_ns_id = ns_id,
	};
	uint64_t ids[MR__LISTMOUNT_BATCH];
	size_t start = ret->n;
	int count = 0, r = 0;

	for (;;) {
		long n = syscall(__NR_listmount, &req, ids, MR__ARRAY_SIZE(ids), 0);

		(*syscalls)++;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = errno == E2BIG && ns_id ? -EOPNOTSUPP : -errno;
			break;
		}
		for (long i = 0; i < n; i++) {
			struct mr__mount *m;

			r = mr__statmount(ns_id, ids[i], buf, syscalls, &m);
			if (r == -ENOENT) {
				/* Unmounted between listmount and statmount: the
				 * table is a snapshot of a moving target anyway. */
				r = 0;
				continue;
			}
			if (r < 0)
				break;
			r = mr__table_push(ret, m);
			if (r < 0)
				break;
			count++;
		}
		if (r < 0 || n < (long)MR__ARRAY_SIZE(ids))
			break;
		req.param = ids[n - 1];
	}
	if (r < 0) {
		/* The table is left as it was found. */
		while (ret->n > start)
			mr__mount_unref(ret->v[--ret->n]);
		return r;
	}
	return count;
}

int mr__statmount_basic(uint64_t ns_id, uint64_t mnt_id, uint64_t *syscalls,
			struct mr__mount_basic *ret)
{
	struct mr_mnt_id_req req = {
		.size = ns_id ? MR_MNT_ID_REQ_SIZE_VER1 : MR_MNT_ID_REQ_SIZE_VER0,
		.mnt_id = mnt_id,
		.param = STATMOUNT_SB_BASIC | STATMOUNT_MNT_BASIC,
		.mnt_ns_id = ns_id,
	};
	/* No strings asked for: the fixed part always fits. */
	struct mr_statmount sm;
	long rc;

	do {
		memset(&sm, 0, sizeof(sm));
		rc = syscall(__NR_statmount, &req, &sm, sizeof(sm), 0);
		(*syscalls)++;
	} while (rc < 0 && errno == EINTR);
	if (rc < 0)
		return -errno;
	if ((sm.mask & (STATMOUNT_SB_BASIC | STATMOUNT_MNT_BASIC)) !=
	    (STATMOUNT_SB_BASIC | STATMOUNT_MNT_BASIC))
		return -EPROTO;
	*ret = (struct mr__mount_basic){
		.parent_id = sm.mnt_parent_id,
		.attr = sm.mnt_attr,
		.propagation = (uint32_t)sm.mnt_propagation,
		.sb_flags = mr__statmount_sb_flags(&sm),
	};
	return 0;
}

int mr__listmount_below(uint64_t ns_id, uint64_t mnt_id, uint64_t *syscalls, uint64_t **ids,
			size_t *cap)
{
	struct mr_mnt_id_req req = {
		.size = ns_id ? MR_MNT_ID_REQ_SIZE_VER1 : MR_MNT_ID_REQ_SIZE_VER0,
		.mnt_id = mnt_id,
		.mnt_ns_id = ns_id,
	};
	size_t n = 0;

	for (;;) {
		if (n + MR__LISTMOUNT_BATCH > *cap) {
			size_t c = *cap ? *cap * 2 : MR__LISTMOUNT_BATCH;
			uint64_t *v = mr__realloc(*ids, c * sizeof(*v));
			if (!v)
				return -ENOMEM;
			*ids = v;
			*cap = c;
		}
		long got = syscall(__NR_listmount, &req, *ids + n, MR__LISTMOUNT_BATCH, 0);
		(*syscalls)++;
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		n += (size_t)got;
		if (got < MR__LISTMOUNT_BATCH)
			return (int)n;
		req.param = (*ids)[n - 1];
	}
}
