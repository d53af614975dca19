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

/* Value of exactly three octal digits (first 0-3: a byte), or -1. */
static int octal3(const char *p)
{
	/* Short-circuit order matters: never read past a NUL. */
	if (p[0] < '0' || p[0] > '3' || p[1] < '0' || p[1] > '7' || p[2] < '0' || p[2] > '7')
		return -1;
	return (p[0] - '0') << 6 | (p[1] - '0') << 3 | (p[2] - '0');
}

int mr__mountinfo_unescape(char *s)
{
	size_t r, w;

	/*
	 * Validate before writing, so that a malformed string comes back as
	 * it went in.  \000 is refused too: it would cut the string short.
	 */
	for (r = 0; s[r]; r++) {
		if (s[r] != '\\')
			continue;
		if (octal3(s + r + 1) <= 0)
			return -EINVAL;
		r += 3;
	}
	if (r > INT_MAX)
		return -EOVERFLOW;

	for (r = w = 0; s[r]; w++) {
		if (s[r] == '\\') {
			s[w] = (char)octal3(s + r + 1);
			r += 4;
		} else {
			s[w] = s[r++];
		}
	}
	s[w] = '\0';
	return (int)w;
}

/* Splits on single spaces; fields may be empty.  NULL when none is left. */
struct field_cursor {
	char *p, *end; /* *end is the line's NUL */
};

static char *next_field(struct field_cursor *c)
{
	char *s = c->p, *sp;

	if (s > c->end)
		return NULL;
	sp = memchr(s, ' ', (size_t)(c->end - s));
	if (!sp) {
		c->p = c->end + 1;
		return s;
	}
	*sp = '\0';
	c->p = sp + 1;
	return s;
}

/* Decimal without sign or spaces, fitting 32 bits (the kernel prints %i/%u). */
static int parse_u32(const char *s, uint32_t *ret)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > UINT32_MAX)
			return -EINVAL;
	}
	*ret = (uint32_t)v;
	return 0;
}

static bool tok_eq(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/* Mount options (show_mnt_opts()) to MOUNT_ATTR_*; unknown names are kept in the string only. */
static int mount_opts_attr(const char *s, uint64_t *ret_attr)
{
	static const struct {
		const char *name;
		uint64_t attr;
	} names[] = {
		{ "nosuid", MOUNT_ATTR_NOSUID },
		{ "nodev", MOUNT_ATTR_NODEV },
		{ "noexec", MOUNT_ATTR_NOEXEC },
		{ "nodiratime", MOUNT_ATTR_NODIRATIME },
		{ "nosymfollow", MOUNT_ATTR_NOSYMFOLLOW },
		{ "idmapped", MOUNT_ATTR_IDMAP },
	};
	uint64_t attr = 0, atime = MOUNT_ATTR_STRICTATIME;
	bool first = true;

	/*
	 * The kernel prints "noatime" or "relatime" and nothing for
	 * strictatime, which is what statmount's mnt_attr then says
	 * (MOUNT_ATTR_STRICTATIME); MOUNT_ATTR_RELATIME is 0.
	 */
	while (true) {
		const char *e = strchr(s, ',');
		size_t n = e ? (size_t)(e - s) : strlen(s);

		if (first) {
			if (tok_eq(s, n, "ro"))
				attr |= MOUNT_ATTR_RDONLY;
			else if (!tok_eq(s, n, "rw"))
				return -EINVAL;
			first = false;
		} else if (tok_eq(s, n, "noatime")) {
			atime = MOUNT_ATTR_NOATIME;
		} else if (tok_eq(s, n, "relatime")) {
			if (atime != MOUNT_ATTR_NOATIME)
				atime = MOUNT_ATTR_RELATIME;
		} else if (tok_eq(s, n, "strictatime")) {
			/* never printed by the kernel; accepted for hand-made tables */
		} else {
			for (size_t i = 0; i < MR__ARRAY_SIZE(names); i++)
				if (tok_eq(s, n, names[i].name))
					attr |= names[i].attr;
		}
		if (!e)
			break;
		s = e + 1;
	}
	*ret_attr = attr | atime;
	return 0;
}

/* Optional fields up to "-": propagation.  Unknown tags are skipped (proc(5)). */
static int parse_tags(struct field_cursor *c, uint32_t *ret_prop)
{
	uint32_t prop = 0, n;
	char *t;

	while ((t = next_field(c))) {
		if (strcmp(t, "-") == 0) {
			*ret_prop = prop ? prop : MS_PRIVATE;
			return 0;
		}
		if (strncmp(t, "shared:", 7) == 0) {
			if (parse_u32(t + 7, &n) < 0)
				return -EINVAL;
			prop |= MS_SHARED;
		} else if (strncmp(t, "master:", 7) == 0) {
			if (parse_u32(t + 7, &n) < 0)
				return -EINVAL;
			prop |= MS_SLAVE;
		} else if (strncmp(t, "propagate_from:", 15) == 0) {
			if (parse_u32(t + 15, &n) < 0)
				return -EINVAL;
		} else if (strcmp(t, "unbindable") == 0) {
			prop |= MS_UNBINDABLE;
		} else if (!*t) {
			return -EINVAL; /* a double space: not the kernel's output */
		}
	}
	return -EINVAL; /* no " - " separator */
}

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
	if (tok_eq(sopts, n, "ro"))
		sb |= MR__SB_RDONLY;
	else if (!tok_eq(sopts, n, "rw"))
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
		if (!tok_eq(sopts + 1, n, sb_names[i].name))
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
	struct field_cursor c = { l, l + len };
	char *id_s, *parent_s, *dev_s, *root, *path, *mopts, *fstype, *source, *sopts, *colon;
	uint32_t id, parent, major, minor, prop, sb_flags;
	uint64_t attr;
	struct mr__mount *m;
	int r;

	id_s = next_field(&c);
	parent_s = next_field(&c);
	dev_s = next_field(&c);
	root = next_field(&c);
	path = next_field(&c);
	mopts = next_field(&c);
	if (!mopts)
		return -EINVAL;
	if (parse_u32(id_s, &id) < 0 || parse_u32(parent_s, &parent) < 0)
		return -EINVAL;
	colon = strchr(dev_s, ':');
	if (!colon)
		return -EINVAL;
	*colon = '\0';
	if (parse_u32(dev_s, &major) < 0 || parse_u32(colon + 1, &minor) < 0)
		return -EINVAL;
	if (mr__mountinfo_unescape(root) <= 0 || mr__mountinfo_unescape(path) <= 0)
		return -EINVAL;
	if (path[0] != '/')
		return -EINVAL; /* the kernel writes absolute mount points only */
	if (mount_opts_attr(mopts, &attr) < 0)
		return -EINVAL;
	r = parse_tags(&c, &prop);
	if (r < 0)
		return r;
	fstype = next_field(&c);
	source = next_field(&c);
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
int mr__mountinfo_read_fd(int fd, char **buf, size_t *cap, size_t *ret_len)
{
	int own = -1, r = 0;
	size_t len = 0;

	if (fd < 0) {
		own = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
		if (own < 0)
			return -errno;
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
	if (own >= 0)
		close(own);
	if (r == 0)
		*ret_len = len;
	return r;
}
