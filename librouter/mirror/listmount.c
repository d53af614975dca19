/* SPDX-License-Identifier: MIT */
/*
 * Reading a namespace's table with listmount(2) and statmount(2) (6.8+):
 * by 64-bit unique mount ID, with no text to parse, and the way to
 * resynchronise after a loss.
 *
 * Records match mountinfo.c's for the same mount in every string field:
 *  - fstype is "type.subtype" as mountinfo's show_type() prints it;
 *    statmount reports the subtype separately (STATMOUNT_FS_SUBTYPE, 6.13);
 *  - source, root and path come unescaped from the kernel;
 *  - options (format documented in mountinfo.c) are rendered from mnt_attr
 *    and sb_flags, followed by mnt_opts, which is the LSM's and the
 *    filesystem's options exactly as mountinfo prints them, minus the
 *    leading comma.
 * They differ in IDs: pub.id/parent_id are the 64-bit unique IDs here and
 * the reused 32-bit ones from mountinfo (old_id is the 32-bit one in both).
 * Both list only what the caller's root can see (6.18: listmount(LSMT_ROOT)
 * from a chroot lists the mounts under it, as mountinfo does).
 *
 * The kernel leaves a string's mask bit clear when the string is empty:
 * MNT_OPTS for a filesystem with no options to show, SB_SOURCE for a device
 * name of "", FS_SUBTYPE when there is none.  An absent bit is therefore
 * "", not an error.
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

/*
 * A string of the reply: "" when its mask bit is clear; NULL when the
 * offset or the terminator lies outside what the kernel could have written.
 */
static const char *sm_str(const struct mr_statmount *sm, size_t cap, uint64_t bit, uint32_t off)
{
	size_t room = cap - offsetof(struct mr_statmount, str);

	if (!(sm->mask & bit))
		return "";
	if (off >= room || !memchr(sm->str + off, '\0', room - off))
		return NULL;
	return sm->str + off;
}

static size_t put_tok(char *w, bool first, const char *tok)
{
	size_t n = strlen(tok);

	if (!first)
		*w++ = ',';
	memcpy(w, tok, n);
	return n + !first;
}

/*
 * Renders the options string (format in mountinfo.c) into @out, which must
 * hold 128 bytes plus strlen(@fsopts): mount flags in show_mnt_opts() order,
 * superblock flags in show_sb_opts() order, then the filesystem's own.
 */
/* Only the bits statmount documents for sb_flags (SB_BASIC, 6.8). */
static uint32_t sb_flags_of(const struct mr_statmount *sm)
{
	return sm->sb_flags & (MR__SB_RDONLY | MR__SB_SYNCHRONOUS | MR__SB_DIRSYNC | MR__SB_LAZYTIME);
}

static void render_options(uint64_t attr, uint32_t sb_flags, const char *fsopts, char *out)
{
	static const struct {
		uint64_t mask, value;
		const char *name;
	} mnt[] = {
		{ MOUNT_ATTR_NOSUID, MOUNT_ATTR_NOSUID, "nosuid" },
		{ MOUNT_ATTR_NODEV, MOUNT_ATTR_NODEV, "nodev" },
		{ MOUNT_ATTR_NOEXEC, MOUNT_ATTR_NOEXEC, "noexec" },
		{ MOUNT_ATTR__ATIME, MOUNT_ATTR_NOATIME, "noatime" },
		{ MOUNT_ATTR_NODIRATIME, MOUNT_ATTR_NODIRATIME, "nodiratime" },
		{ MOUNT_ATTR__ATIME, MOUNT_ATTR_RELATIME, "relatime" },
		{ MOUNT_ATTR_NOSYMFOLLOW, MOUNT_ATTR_NOSYMFOLLOW, "nosymfollow" },
		{ MOUNT_ATTR_IDMAP, MOUNT_ATTR_IDMAP, "idmapped" },
	};
	static const struct {
		uint32_t flag;
		const char *name;
	} sb[] = {
		{ MR__SB_SYNCHRONOUS, "sync" },
		{ MR__SB_DIRSYNC, "dirsync" },
		{ MR__SB_LAZYTIME, "lazytime" },
	};
	bool mnt_ro = attr & MOUNT_ATTR_RDONLY;
	char *w = out;

	w += put_tok(w, true, mnt_ro ? "ro" : "rw");
	for (size_t i = 0; i < MR__ARRAY_SIZE(mnt); i++)
		if ((attr & mnt[i].mask) == mnt[i].value)
			w += put_tok(w, false, mnt[i].name);
	/* See mountinfo.c: a read-only superblock under a rw mount shows, last. */
	if ((sb_flags & MR__SB_RDONLY) && !mnt_ro)
		w += put_tok(w, false, "ro");
	for (size_t i = 0; i < MR__ARRAY_SIZE(sb); i++)
		if (sb_flags & sb[i].flag)
			w += put_tok(w, false, sb[i].name);
	if (*fsopts)
		w += put_tok(w, false, fsopts);
	*w = '\0';
}

static struct mr__mount *sm_to_mount(const struct mr_statmount *sm, size_t cap, int *ret_err)
{
	const char *fstype, *subtype, *source, *root, *point, *fsopts;
	struct mr__mount *m;
	size_t tlen, slen, olen;
	char *scratch;

	fstype = sm_str(sm, cap, STATMOUNT_FS_TYPE, sm->fs_type);
	subtype = sm_str(sm, cap, STATMOUNT_FS_SUBTYPE, sm->fs_subtype);
	source = sm_str(sm, cap, STATMOUNT_SB_SOURCE, sm->sb_source);
	root = sm_str(sm, cap, STATMOUNT_MNT_ROOT, sm->mnt_root);
	point = sm_str(sm, cap, STATMOUNT_MNT_POINT, sm->mnt_point);
	fsopts = sm_str(sm, cap, STATMOUNT_MNT_OPTS, sm->mnt_opts);
	if (!fstype || !subtype || !source || !root || !point || !fsopts) {
		*ret_err = -EPROTO;
		return NULL;
	}

	/* One scratch block for "type.subtype" and the options string. */
	tlen = strlen(fstype);
	slen = strlen(subtype);
	olen = strlen(fsopts);
	scratch = mr__malloc(tlen + 1 + slen + 1 + 128 + olen);
	if (!scratch) {
		*ret_err = -ENOMEM;
		return NULL;
	}
	char *type = scratch, *opts = scratch + tlen + 1 + slen + 1;

	memcpy(type, fstype, tlen);
	if (slen) {
		type[tlen] = '.';
		memcpy(type + tlen + 1, subtype, slen + 1);
	} else {
		type[tlen] = '\0';
	}
	uint32_t sb_flags = sb_flags_of(sm);

	render_options(sm->mnt_attr, sb_flags, fsopts, opts);
	m = mr__mount_new(&(struct mr_mount){
				  .id = sm->mnt_id,
				  .parent_id = sm->mnt_parent_id,
				  .attr = sm->mnt_attr,
				  .propagation = (uint32_t)sm->mnt_propagation,
				  .dev_major = sm->sb_dev_major,
				  .dev_minor = sm->sb_dev_minor,
				  .path = point,
				  .root = root,
				  .source = source,
				  .fstype = type,
				  .options = opts,
				  .mountinfo_parent_id = sm->mnt_parent_id_old,
			  },
			  sm->mnt_id_old, sb_flags, mr__sb_opts_hash(fsopts));
	mr__free(scratch);
	if (!m)
		*ret_err = -ENOMEM;
	return m;
}

int mr__statmount_parse(const void *buf, size_t cap, struct mr__mount **ret)
{
	struct mr__mount *m;
	int err = 0;

	if (cap < sizeof(struct mr_statmount))
		return -EPROTO;
	m = sm_to_mount(buf, cap, &err);
	if (!m)
		return err;
	*ret = m;
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
	struct mr__mount *m;
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
	m = sm_to_mount(sm, buf->cap, &r);
	if (!m)
		return r;
	*ret = m;
	return 0;
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
		.sb_flags = sb_flags_of(&sm),
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
