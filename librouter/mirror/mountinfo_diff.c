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
 * The last hashes live in a table keyed by mountinfo ID (open addressing,
 * linear probing), sized to the namespace's own lines.  Not an array
 * indexed by ID: IDs come from one allocator for the whole system
 * (fs/namespace.c mnt_alloc_id()), so a namespace of 20 mounts on a host
 * that made 30,000 would pay for 30,000 slots, and a router watching 1,000
 * namespaces for a billion bytes (bench: ns_scale).  A reused ID shows up
 * as a changed line.
 */
#include <errno.h>
#include <string.h>

#include "mirror/mountinfo_diff.h"
#include "alloc.h"
#include "mirror/mount.h"
#include "mirror/mountinfo.h"

/* IDs above this are not mountinfo IDs (the IDA hands them out densely from 0). */
#define MI_ID_MAX (1u << 28)
/* The smallest table: 2.5 KiB, room for 32 lines at the load below. */
#define CAP_MIN 64u

/*
 * A 64-bit multiply-xorshift hash over 8-byte words: a changed line changes
 * its hash except with probability ~2^-64.  Never 0, which marks a slot
 * with no line.
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

/* Where @id's probe starts: IDs are dense, so a multiplicative spread. */
static size_t home(const struct mr__mi_diff *d, uint32_t id)
{
	uint64_t h = id * 0x9e3779b97f4a7c15ull;

	return (size_t)(h ^ h >> 32) & (d->cap - 1);
}

/* @id's slot, or NULL. */
static struct mr__mi_slot *find(const struct mr__mi_diff *d, uint32_t id)
{
	if (!d->cap)
		return NULL;
	for (size_t i = home(d, id);; i = (i + 1) & (d->cap - 1)) {
		if (!d->slot[i].tag)
			return NULL;
		if (d->slot[i].tag == id + 1)
			return &d->slot[i];
	}
}

/* Puts @s in an empty place of a table with room (no check for a twin). */
static void place(struct mr__mi_diff *d, const struct mr__mi_slot *s)
{
	size_t i = home(d, s->tag - 1);

	while (d->slot[i].tag)
		i = (i + 1) & (d->cap - 1);
	d->slot[i] = *s;
}

/* Moves every slot into a table of @cap places (a power of two, > 2 n). */
static int resize(struct mr__mi_diff *d, size_t cap)
{
	struct mr__mi_slot *old = d->slot, *v = mr__calloc(cap, sizeof(*v));
	size_t old_cap = d->cap;

	if (!v)
		return -ENOMEM;
	d->slot = v;
	d->cap = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].tag)
			place(d, &old[i]);
	mr__free(old);
	return 0;
}

/* @id's slot, made empty if it had none.  At most half the places are used. */
static int get(struct mr__mi_diff *d, uint32_t id, struct mr__mi_slot **ret)
{
	struct mr__mi_slot *s;
	int err;

	if (id >= MI_ID_MAX)
		return -EINVAL;
	s = find(d, id);
	if (!s) {
		if (2 * (d->n + 1) > d->cap &&
		    (err = resize(d, d->cap ? 2 * d->cap : CAP_MIN)) < 0)
			return err;
		place(d, &(struct mr__mi_slot){.tag = id + 1});
		d->n++;
		s = find(d, id);
	}
	*ret = s;
	return 0;
}

/*
 * Empties place @i and closes the gap behind it (backward shift: each
 * later slot of the run that may sit in the hole moves into it), so that
 * a probe never stops short at a hole.  Slots from after @i may land at
 * @i; none that comes after @i in a walk lands before it.
 */
static void erase(struct mr__mi_diff *d, size_t i)
{
	size_t mask = d->cap - 1;

	if (d->slot[i].rec)
		mr__mount_unref(d->slot[i].rec);
	for (size_t j = (i + 1) & mask; d->slot[j].tag; j = (j + 1) & mask) {
		size_t h = home(d, d->slot[j].tag - 1);
		/* Stays if its home lies cyclically in (i, j]. */
		if (((j - h) & mask) < ((j - i) & mask))
			continue;
		d->slot[i] = d->slot[j];
		i = j;
	}
	d->slot[i] = (struct mr__mi_slot){0};
	d->n--;
}

int mr__mi_diff_set_key(struct mr__mi_diff *d, uint32_t id, uint64_t key)
{
	struct mr__mi_slot *s;
	int err = get(d, id, &s);

	if (err < 0)
		return err;
	s->key = key;
	return 0;
}

void mr__mi_diff_reset(struct mr__mi_diff *d)
{
	for (size_t i = 0; i < d->cap; i++) {
		if (d->slot[i].rec)
			mr__mount_unref(d->slot[i].rec);
		d->slot[i] = (struct mr__mi_slot){0};
	}
	d->n = 0;
}

void mr__mi_diff_free(struct mr__mi_diff *d)
{
	mr__mi_diff_reset(d);
	mr__free(d->slot);
	mr__free(d->buf);
	mr__free(d->changed);
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

/*
 * Forgets the IDs this read did not list: a line's are reported gone, a
 * bare key (set for a mount the file no longer lists) just dropped.
 */
static int drop_unlisted(struct mr__mi_diff *d, const struct mr__mi_diff_ops *ops, void *arg)
{
	for (size_t i = 0; i < d->cap;) {
		struct mr__mi_slot *s = &d->slot[i];
		if (!s->tag || s->gen == d->gen) {
			i++;
			continue;
		}
		int err = s->hash && ops->gone ? ops->gone(arg, s->tag - 1, s) : 0;
		erase(d, i); /* place i may now hold a slot not yet looked at */
		if (err < 0)
			return err;
	}
	/* A namespace that shrank gives its memory back. */
	if (d->cap > CAP_MIN && 8 * d->n < d->cap) {
		size_t cap = CAP_MIN;
		while (cap < 4 * d->n)
			cap *= 2;
		(void)resize(d, cap); /* without memory, the larger table still works */
	}
	return 0;
}

/* Remembers line @at..@at+@n of ID @id as changed in this read. */
static int note_changed(struct mr__mi_diff *d, uint32_t id, size_t at, size_t n)
{
	if (d->n_changed == d->changed_cap) {
		size_t cap = d->changed_cap ? 2 * d->changed_cap : 16;
		struct mr__mi_line *v = mr__realloc(d->changed, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		d->changed = v;
		d->changed_cap = cap;
	}
	d->changed[d->n_changed++] =
		(struct mr__mi_line){.at = (uint32_t)at, .len = (uint32_t)n, .id = id};
	return 0;
}

/*
 * Reports the changed lines, each ID once with its last line.  A line an
 * ID's later line superseded is left out: reporting both would hand the
 * caller two versions of one mount, and one ordered after the other by
 * anything but the file's order (parents first, say) could leave the
 * older one standing, with the newer line's hash recorded as seen.
 */
static int report_changed(struct mr__mi_diff *d, const struct mr__mi_diff_ops *ops, void *arg)
{
	for (size_t i = 0; i < d->n_changed; i++) {
		const struct mr__mi_line *l = &d->changed[i];
		struct mr__mi_slot *s = find(d, l->id);
		int err;
		if (s->line_at != l->at)
			continue;
		if ((err = ops->changed(arg, l->id, d->buf + l->at, l->len, s, s->known)) < 0)
			return err;
	}
	return 0;
}

int mr__mi_diff_run(struct mr__mi_diff *d, int fd, const struct mr__mi_diff_ops *ops, void *arg,
		    uint64_t *syscalls)
{
	size_t len, off = 0;
	int err = mr__mountinfo_read_fd(fd, &d->buf, &d->buf_cap, &len, syscalls);

	if (err < 0)
		return err;
	if (ops->read)
		ops->read(arg);
	if (++d->gen == 0)
		d->gen = 1; /* 0 marks a slot never listed */
	d->n_changed = 0;
	while (off < len) {
		const char *l = d->buf + off, *nl = memchr(l, '\n', len - off);
		struct mr__mi_slot *s;
		if (!nl)
			return -EINVAL; /* a truncated last line */
		size_t n = (size_t)(nl - l);
		int64_t id = line_id(l, n);
		if (id < 0)
			return -EINVAL;
		if ((err = get(d, (uint32_t)id, &s)) < 0)
			return err;
		uint64_t h = line_hash(l, n);
		/*
		 * One ID twice in one read happens: the file is read in pieces
		 * and the kernel lets go of the mount table between them, so an
		 * ID freed and reused meanwhile is listed again.  The later
		 * line is the newer, and the one reported.
		 */
		if (s->gen != d->gen) {
			s->known = s->hash != 0;
			s->noted = false;
		}
		s->gen = d->gen;
		s->line_at = (uint32_t)off;
		if (s->hash != h || s->noted) {
			s->hash = h;
			s->noted = true;
			if (ops->changed && (err = note_changed(d, (uint32_t)id, off, n)) < 0)
				return err;
		} else if (ops->same && (err = ops->same(arg, (uint32_t)id, l, n, s)) < 0) {
			return err;
		}
		off += n + 1;
	}
	if (ops->changed && (err = report_changed(d, ops, arg)) < 0)
		return err;
	return drop_unlisted(d, ops, arg);
}
