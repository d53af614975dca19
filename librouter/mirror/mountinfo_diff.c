/* SPDX-License-Identifier: MIT */
/*
 * What changed in /proc/PID/mountinfo since the last read, at the price of
 * the read: each line is hashed and compared with the hash its mountinfo ID
 * had last time, so only lines that are new or changed are looked at
 * further (parsed, or the mount looked up with statmount(2)).
 *
 * Why not parse every line, as a poller does: at 10,000 mounts the kernel
 * formats ~1.2 MB in ~12 ms, and parsing it into records costs as much
 * again; hashing it costs ~0.3 ms (bench: single_change, mountinfo rows).
 *
 * mountinfo IDs are small integers the kernel reuses (an IDA, fs/namespace.c
 * mnt_alloc_id()), so the last hashes live in an array indexed by ID, grown
 * to the largest ID seen.  A reused ID shows up as a changed line.
 */
#include <errno.h>
#include <string.h>

#include "mirror/mountinfo_diff.h"
#include "alloc.h"
#include "mirror/mount.h"
#include "mirror/mountinfo.h"

/* IDs above this are not mountinfo IDs (the IDA counts from 1, densely). */
#define MI_ID_MAX (1u << 28)

/*
 * A 64-bit multiply-xorshift hash over 8-byte words: a changed line changes
 * its hash except with probability ~2^-64.  Never 0, which marks a free slot.
 */
static uint64_t line_hash(const char *p, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, p, n);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	return h | 1;
}

static int grow(struct mr__mi_diff *d, uint32_t id)
{
	size_t cap = d->cap ? d->cap : 1024;
	struct mr__mi_slot *v;

	if (id >= MI_ID_MAX)
		return -EINVAL;
	while (cap <= id)
		cap *= 2;
	v = mr__realloc(d->slot, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memset(v + d->cap, 0, (cap - d->cap) * sizeof(*v));
	d->slot = v;
	d->cap = cap;
	return 0;
}

int mr__mi_diff_set_key(struct mr__mi_diff *d, uint32_t id, uint64_t key)
{
	if (id >= d->cap) {
		int err = grow(d, id);
		if (err < 0)
			return err;
	}
	d->slot[id].key = key;
	return 0;
}

static void slot_clear(struct mr__mi_slot *s)
{
	if (s->rec)
		mr__mount_unref(s->rec);
	*s = (struct mr__mi_slot){0};
}

void mr__mi_diff_reset(struct mr__mi_diff *d)
{
	for (size_t i = 0; i < d->cap; i++)
		slot_clear(&d->slot[i]);
}

void mr__mi_diff_free(struct mr__mi_diff *d)
{
	mr__mi_diff_reset(d);
	mr__free(d->slot);
	mr__free(d->buf);
	*d = (struct mr__mi_diff){0};
}

/* The decimal mountinfo ID that starts @l, or -EINVAL. */
static int64_t line_id(const char *l, size_t n)
{
	uint64_t id = 0;
	size_t i = 0;

	for (; i < n && l[i] >= '0' && l[i] <= '9' && i < 10; i++)
		id = id * 10 + (uint64_t)(l[i] - '0');
	if (!i || i == n || l[i] != ' ' || id >= MI_ID_MAX)
		return -EINVAL;
	return (int64_t)id;
}

int mr__mi_diff_run(struct mr__mi_diff *d, int fd, const struct mr__mi_diff_ops *ops, void *arg,
		    uint64_t *syscalls)
{
	size_t len, off = 0;
	int err = mr__mountinfo_read_fd(fd, &d->buf, &d->buf_cap, &len);

	if (syscalls)
		*syscalls += 2 + len / 65536; /* pread until EOF */
	if (err < 0)
		return err;
	if (++d->gen == 0)
		d->gen = 1; /* 0 marks a slot never seen */
	while (off < len) {
		const char *l = d->buf + off, *nl = memchr(l, '\n', len - off);
		if (!nl)
			return -EINVAL; /* a truncated last line */
		size_t n = (size_t)(nl - l);
		int64_t id = line_id(l, n);
		if (id < 0)
			return -EINVAL;
		if ((size_t)id >= d->cap && (err = grow(d, (uint32_t)id)) < 0)
			return err;
		struct mr__mi_slot *s = &d->slot[id];
		uint64_t h = line_hash(l, n);
		/*
		 * One ID twice in one read happens: the file is read in pieces
		 * and the kernel lets go of the mount table between them, so a
		 * mount that moved meanwhile can be listed again.  The later
		 * line is the newer.
		 */
		s->gen = d->gen;
		if (s->hash != h) {
			bool known = s->hash != 0;
			s->hash = h;
			if (ops->changed && (err = ops->changed(arg, (uint32_t)id, l, n, s, known)) < 0)
				return err;
		} else if (ops->same && (err = ops->same(arg, (uint32_t)id, l, n, s)) < 0) {
			return err;
		}
		off += n + 1;
	}
	/* IDs listed last time and not now: those mounts are gone. */
	for (size_t id = 0; id < d->cap; id++) {
		struct mr__mi_slot *s = &d->slot[id];
		if (!s->hash || s->gen == d->gen)
			continue;
		err = ops->gone ? ops->gone(arg, (uint32_t)id, s) : 0;
		slot_clear(s);
		if (err < 0)
			return err;
	}
	return 0;
}
