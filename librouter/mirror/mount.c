/* SPDX-License-Identifier: MIT */
/*
 * One mount record: immutable after mr__mount_new(), shared between the
 * router thread (mirror, events) and subscriber threads (events and
 * snapshots hold references), freed by whichever thread drops the last
 * reference.
 */
#include <string.h>

#include "mirror/mount.h"
#include "alloc.h"
#include "mountrouter-uapi.h"

struct mr__mount *mr__mount_new(const struct mr_mount *f, uint32_t old_id, uint32_t sb_flags,
				uint32_t sb_opts)
{
	const char *src[5] = { f->path, f->root, f->source, f->fstype, f->options };
	size_t len[5], total = sizeof(struct mr__mount);
	struct mr__mount *m;
	char *p;

	for (size_t i = 0; i < 5; i++) {
		if (!src[i])
			src[i] = "";
		len[i] = strlen(src[i]);
		if (__builtin_add_overflow(total, len[i] + 1, &total))
			return NULL;
	}
	/* path_len is 32 bits: a longer mount point is not a real one. */
	if (len[0] > UINT32_MAX)
		return NULL;

	m = mr__malloc(total);
	if (!m)
		return NULL;
	m->pub = *f;
	atomic_init(&m->refs, 1);
	m->old_id = old_id;
	m->pub.mountinfo_id = old_id;
	m->sb_flags = sb_flags;
	m->sb_opts = sb_opts;
	m->seen = 0;
	m->depth = 0;
	m->depth_pass = 0;
	m->path_len = (uint32_t)len[0];

	/* One allocation: the five strings follow the struct, in field order. */
	p = m->str;
	const char **dst[5] = { &m->pub.path, &m->pub.root, &m->pub.source, &m->pub.fstype,
				&m->pub.options };
	for (size_t i = 0; i < 5; i++) {
		memcpy(p, src[i], len[i] + 1);
		*dst[i] = p;
		p += len[i] + 1;
	}
	return m;
}

struct mr__mount *mr__mount_ref(struct mr__mount *m)
{
	/*
	 * Relaxed is enough: the caller already holds a reference, so the
	 * record cannot be freed concurrently, and taking a reference
	 * publishes nothing.
	 */
	if (m)
		atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
	return m;
}

void mr__mount_unref(struct mr__mount *m)
{
	if (!m)
		return;
	/*
	 * acq_rel: release orders this thread's reads of the record before the
	 * decrement, acquire makes every other thread's reads happen before the
	 * free.  One read-modify-write rather than release plus an acquire
	 * fence on the last drop: the same on x86, and ThreadSanitizer
	 * understands it (it does not model standalone fences).
	 */
	if (atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) == 1)
		mr__free(m);
}

uint32_t mr__sb_opts_hash(const char *opts)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (const unsigned char *p = (const unsigned char *)opts; *p; p++)
		h = (h ^ *p) * 16777619u;
	return h;
}

bool mr__mount_sb_changed(const struct mr__mount *a, const struct mr__mount *b)
{
	return a->sb_flags != b->sb_flags || a->sb_opts != b->sb_opts;
}

bool mr__mount_same(const struct mr__mount *a, const struct mr__mount *b)
{
	const struct mr_mount *x = &a->pub, *y = &b->pub;

	if (a == b)
		return true;
	/* Cheap integer fields first: most changes show up there. */
	return x->id == y->id && x->parent_id == y->parent_id && x->attr == y->attr &&
	       x->propagation == y->propagation && x->dev_major == y->dev_major &&
	       x->dev_minor == y->dev_minor && a->sb_flags == b->sb_flags &&
	       a->path_len == b->path_len && memcmp(x->path, y->path, a->path_len) == 0 &&
	       strcmp(x->root, y->root) == 0 && strcmp(x->source, y->source) == 0 &&
	       strcmp(x->fstype, y->fstype) == 0 && strcmp(x->options, y->options) == 0;
}

/*
 * Read-only if the mount is (MOUNT_ATTR_RDONLY) or its superblock is
 * (SB_RDONLY): either makes writes fail with EROFS, and nothing else does.
 * Both readers fill attr and sb_flags exactly (mountinfo.c derives them
 * from the mount's own "ro"/"rw" and the superblock's), so the options
 * string is not consulted: a filesystem may have an option spelt "ro" of
 * its own that says nothing about writes to the mount.
 */
bool mr__mount_readonly(const struct mr__mount *m)
{
	return (m->pub.attr & MOUNT_ATTR_RDONLY) || (m->sb_flags & MR__SB_RDONLY);
}

bool mr__mount_attrs_same(const struct mr__mount *a, const struct mr__mount *b)
{
	const struct mr_mount *x = &a->pub, *y = &b->pub;

	/*
	 * Not sb_opts: its digest is taken over different strings by the two
	 * readers (statmount's filesystem options, mountinfo's superblock
	 * options); the options string, built alike by both, carries them.
	 */
	return x->attr == y->attr && x->propagation == y->propagation &&
	       a->sb_flags == b->sb_flags &&
	       x->dev_major == y->dev_major && x->dev_minor == y->dev_minor &&
	       strcmp(x->fstype, y->fstype) == 0 && strcmp(x->options, y->options) == 0;
}
