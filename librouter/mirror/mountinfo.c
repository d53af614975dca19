/* SPDX-License-Identifier: MIT */
/*
 * /proc/PID/mountinfo: the one mount-table source every kernel has.
 *
 * Line format (proc(5), show_mountinfo() in fs/proc_namespace.c):
 *
 *   ID PARENT MAJ:MIN ROOT MOUNTPOINT MOUNTOPTS [TAG...] - FSTYPE SOURCE SUPEROPTS
 *
 * Fields are separated by exactly one space.  ROOT, MOUNTPOINT, FSTYPE and
 * SOURCE go through mangle(), which writes ' ', '\t', '\n' and '\\' as \ooo,
 * so those fields never hold a raw space; SOURCE may be empty (a mount whose
 * device name is "" shows two spaces in a row).  SUPEROPTS is the rest of
 * the line: filesystems print their own options there and not all of them
 * escape spaces.
 *
 * The options string of a record is built so that it is byte-for-byte the
 * one listmount.c renders from statmount(2) for the same mount:
 *
 *   MOUNTOPTS [",ro"] [",sync"] [",dirsync"] [",lazytime"] ["," FSOPTS]
 *
 * MOUNTOPTS is field 6 verbatim ("rw,nosuid,relatime").  SUPEROPTS is
 * "rw"|"ro", then the superblock flags sync, dirsync, mand, lazytime in that
 * order (show_sb_opts()), then the LSM's and the filesystem's options
 * (FSOPTS, still escaped as the kernel wrote them, so a ',' inside a value
 * stays \054 and the list stays splittable).  From it:
 *  - the superblock's "rw"/"ro" is dropped, as findmnt's OPTIONS column
 *    does, except that a read-only superblock under a read-write mount
 *    keeps its ",ro" after the mount's "rw": by mount(8)'s last-one-wins
 *    rule the string then reads as what it is, read-only;
 *  - "mand" is dropped: it has had no effect since Linux 5.15 and
 *    statmount's sb_flags cannot report it.
 * sb_flags gets the same MR__SB_* bits statmount reports.
 *
 * The fields themselves (escapes, numbers, mount options, tags) are read
 * by mountinfo_fields.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "mirror/mountinfo.h"
#include "internal.h"
#include "alloc.h"
#include "mirror/mount.h"
#include "mirror/mountinfo_fields.h"

/*
 * Longest line accepted.  The kernel has no limit, but four escaped
 * PATH_MAX fields plus options stay far below this; a longer "line" is
 * corrupt input, and refusing it bounds what one bad line can allocate.
 */
#define MR__MOUNTINFO_LINE_MAX (1u << 20)

/*
 * Kept over libmount: 4.3 ms against libmount's 8.7 ms to read and parse
 * 10,000 lines (bench_tables, BENCHMARKS.md), 2.0x.
 */

/*
 * Writes the options string (format at the top of the file) to @out, which
 * has room for strlen(mopts) + strlen(sopts) + 1 bytes, and derives sb_flags.
 */
static int build_options(const char *mopts, bool mnt_ro, const char *sopts, char *out,
			 uint32_t *ret_sb_flags)
{
	static const struct {
		const char *name;
		uint32_t flag;
	} sb_names[] = {
		/* show_sb_opts() order; mand carries no flag (see top) */
		{ "sync", MR__SB_SYNCHRONOUS },
		{ "dirsync", MR__SB_DIRSYNC },
		{ "mand", 0 },
		{ "lazytime", MR__SB_LAZYTIME },
	};
	uint32_t sb = 0;
	size_t n, i;
	const char *e;
	char *w = out;

	e = strchr(sopts, ',');
	n = e ? (size_t)(e - sopts) : strlen(sopts);
	if (mr__mi_tok_eq(sopts, n, "ro"))
		sb |= MR__SB_RDONLY;
	else if (!mr__mi_tok_eq(sopts, n, "rw"))
		return -EINVAL;
	sopts += n;

	n = strlen(mopts);
	memcpy(w, mopts, n);
	w += n;
	if ((sb & MR__SB_RDONLY) && !mnt_ro) {
		memcpy(w, ",ro", 3);
		w += 3;
	}
	/* The flags come first and in a fixed order: match them as a prefix. */
	for (i = 0; i < MR__ARRAY_SIZE(sb_names) && *sopts == ','; i++) {
		e = strchr(sopts + 1, ',');
		n = e ? (size_t)(e - sopts - 1) : strlen(sopts + 1);
		if (!mr__mi_tok_eq(sopts + 1, n, sb_names[i].name))
			continue;
		sb |= sb_names[i].flag;
		if (sb_names[i].flag) {
			memcpy(w, sopts, n + 1);
			w += n + 1;
		}
		sopts += n + 1;
	}
	n = strlen(sopts);
	memcpy(w, sopts, n + 1);
	*ret_sb_flags = sb;
	return 0;
}

/* @l is a NUL-terminated private copy of one line; @opts has room for it. */
static int parse_line(char *l, size_t len, char *opts, struct mr__mount **ret)
{
	struct mr__mi_cursor c = { l, l + len };
	char *id_s, *parent_s, *dev_s, *root, *path, *mopts, *fstype, *source, *sopts, *colon;
	uint32_t id, parent, major, minor, prop, sb_flags;
	uint64_t attr;
	struct mr__mount *m;
	int r;

	id_s = mr__mi_next_field(&c);
	parent_s = mr__mi_next_field(&c);
	dev_s = mr__mi_next_field(&c);
	root = mr__mi_next_field(&c);
	path = mr__mi_next_field(&c);
	mopts = mr__mi_next_field(&c);
	if (!mopts)
		return -EINVAL;
	if (mr__mi_parse_u32(id_s, &id) < 0 || mr__mi_parse_u32(parent_s, &parent) < 0)
		return -EINVAL;
	colon = strchr(dev_s, ':');
	if (!colon)
		return -EINVAL;
	*colon = '\0';
	if (mr__mi_parse_u32(dev_s, &major) < 0 || mr__mi_parse_u32(colon + 1, &minor) < 0)
		return -EINVAL;
	if (mr__mountinfo_unescape(root) <= 0 || mr__mountinfo_unescape(path) <= 0)
		return -EINVAL;
	if (path[0] != '/')
		return -EINVAL; /* the kernel writes absolute mount points only */
	if (mr__mi_mount_opts_attr(mopts, &attr) < 0)
		return -EINVAL;
	r = mr__mi_parse_tags(&c, &prop);
	if (r < 0)
		return r;
	fstype = mr__mi_next_field(&c);
	source = mr__mi_next_field(&c);
	if (!source || c.p > c.end)
		return -EINVAL; /* no SUPEROPTS */
	sopts = c.p;        /* the rest of the line, spaces and all */
	if (mr__mountinfo_unescape(fstype) <= 0 || mr__mountinfo_unescape(source) < 0)
		return -EINVAL;
	r = build_options(mopts, attr & MOUNT_ATTR_RDONLY, sopts, opts, &sb_flags);
	if (r < 0)
		return r;

	m = mr__mount_new(&(struct mr_mount){
				  .id = id,
				  .parent_id = parent,
				  .attr = attr,
				  .propagation = prop,
				  .dev_major = major,
				  .dev_minor = minor,
				  .path = path,
				  .root = root,
				  .source = source,
				  .fstype = fstype,
				  .options = opts,
				  .mountinfo_parent_id = parent,
			  },
			  id, sb_flags, mr__sb_opts_hash(sopts));
	if (!m)
		return -ENOMEM;
	*ret = m;
	return 0;
}

int mr__mountinfo_parse_line(const char *l, size_t n, struct mr__mountinfo_scratch *s,
			     struct mr__mount **ret)
{
	if (!n || n >= MR__MOUNTINFO_LINE_MAX || memchr(l, '\0', n))
		return -EINVAL;
	/* Room for the line and for the options string built from it. */
	if (2 * (n + 1) > s->cap) {
		char *p = mr__realloc(s->p, 2 * (n + 1));

		if (!p)
			return -ENOMEM;
		s->p = p;
		s->cap = 2 * (n + 1);
	}
	memcpy(s->p, l, n);
	s->p[n] = '\0';
	return parse_line(s->p, n, s->p + n + 1, ret);
}

void mr__mountinfo_scratch_free(struct mr__mountinfo_scratch *s)
{
	mr__free(s->p);
	s->p = NULL;
	s->cap = 0;
}

/*
 * One pass over @buf: each byte is looked at a constant number of times
 * (find the line end, copy, split, unescape), so the cost is O(len).
 */
int mr__mountinfo_parse(const char *buf, size_t len, struct mr__table *ret)
{
	struct mr__mountinfo_scratch scratch = {0};
	size_t off = 0;
	int count = 0, r = 0;

	while (off < len) {
		const char *l = buf + off, *nl;
		size_t rem = len - off, n;
		struct mr__mount *m;

		/* A last line without '\n' is a truncated read, not a mount. */
		nl = memchr(l, '\n', rem < MR__MOUNTINFO_LINE_MAX ? rem : MR__MOUNTINFO_LINE_MAX);
		if (!nl) {
			r = -EINVAL;
			break;
		}
		n = (size_t)(nl - l);
		r = mr__mountinfo_parse_line(l, n, &scratch, &m);
		if (r < 0)
			break;
		r = mr__table_push(ret, m);
		if (r < 0)
			break;
		if (++count == INT_MAX) {
			r = -EOVERFLOW;
			break;
		}
		off += n + 1;
	}
	mr__mountinfo_scratch_free(&scratch);
	return r < 0 ? r : count;
}

/*
 * mountinfo is a seq_file: a read returns only whole records and stops
 * when the buffer is full, so one read is not the whole table.  Reads go
 * on from where the last ended (pread at the running offset, which the
 * seq_file continues without re-walking) until EOF; starting at offset 0
 * lets one fd be reused for every re-read after POLLPRI.
 */
int mr__mountinfo_read_fd(int fd, char **buf, size_t *cap, size_t *ret_len, uint64_t *calls)
{
	int own = -1, r = 0;
	size_t len = 0;
	uint64_t made = 0;

	if (fd < 0) {
		own = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
		made++;
		if (own < 0) {
			if (calls)
				*calls += made;
			return -errno;
		}
		fd = own;
	}
	for (;;) {
		ssize_t n;

		if (len == *cap || !*buf) {
			size_t ncap = *cap && *buf ? *cap * 2 : 64 * 1024;
			char *p;

			/* 1 GiB of mount table is no longer a mount table. */
			if (ncap > (1u << 30)) {
				r = -EFBIG;
				break;
			}
			p = mr__realloc(*buf, ncap);
			if (!p) {
				r = -ENOMEM;
				break;
			}
			*buf = p;
			*cap = ncap;
		}
		n = pread(fd, *buf + len, *cap - len, (off_t)len);
		made++;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (own >= 0) {
		close(own);
		made++;
	}
	if (calls)
		*calls += made;
	if (r == 0)
		*ret_len = len;
	return r;
}
