/* SPDX-License-Identifier: MIT */
/*
 * Ground truth: what the mount table really is, read without the library
 * so that a library bug cannot hide itself.  listmount(2)/statmount(2) for
 * the 64-bit IDs the kernel sources report, /proc/self/mountinfo for the
 * mountinfo source (whose IDs are mountinfo's 32-bit ones).
 *
 * Options are compared as the per-mount part only ("rw,nosuid,relatime",
 * mountinfo's field 6): that is what remount and mount_setattr change, and
 * the superblock part would make the comparison depend on how the library
 * renders filesystem options, which is not what a storm tests.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mountrouter-uapi.h"
#include "storm.h"

void ms_table_clear(struct ms_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].path);
		free(t->v[i].mopts);
	}
	free(t->v);
	*t = (struct ms_table){0};
}

static int push(struct ms_table *t, uint64_t id, uint64_t attr, const char *path,
		const char *mopts)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct ms_entry *v = realloc(t->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	struct ms_entry *e = &t->v[t->n];
	e->id = id;
	e->attr = attr;
	e->path = strdup(path);
	e->mopts = strdup(mopts);
	if (!e->path || !e->mopts) {
		free(e->path);
		free(e->mopts);
		return -ENOMEM;
	}
	t->n++;
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	const struct ms_entry *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

void ms_table_sort(struct ms_table *t)
{
	qsort(t->v, t->n, sizeof(*t->v), cmp_id);
}

const struct ms_entry *ms_table_find(const struct ms_table *t, uint64_t id)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].id == id)
			return &t->v[mid];
		if (t->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void ms_render_mopts(uint64_t attr, char *out, size_t len)
{
	/* fs/proc_namespace.c show_mnt_opts() order. */
	static const struct {
		uint64_t mask, value;
		const char *name;
	} fl[] = {
		{ MOUNT_ATTR_NOSUID, MOUNT_ATTR_NOSUID, ",nosuid" },
		{ MOUNT_ATTR_NODEV, MOUNT_ATTR_NODEV, ",nodev" },
		{ MOUNT_ATTR_NOEXEC, MOUNT_ATTR_NOEXEC, ",noexec" },
		{ MOUNT_ATTR__ATIME, MOUNT_ATTR_NOATIME, ",noatime" },
		{ MOUNT_ATTR_NODIRATIME, MOUNT_ATTR_NODIRATIME, ",nodiratime" },
		{ MOUNT_ATTR__ATIME, MOUNT_ATTR_RELATIME, ",relatime" },
		{ MOUNT_ATTR_NOSYMFOLLOW, MOUNT_ATTR_NOSYMFOLLOW, ",nosymfollow" },
		{ MOUNT_ATTR_IDMAP, MOUNT_ATTR_IDMAP, ",idmapped" },
	};
	size_t w = (size_t)snprintf(out, len, "%s", (attr & MOUNT_ATTR_RDONLY) ? "ro" : "rw");

	for (size_t i = 0; i < sizeof(fl) / sizeof(fl[0]) && w < len; i++)
		if ((attr & fl[i].mask) == fl[i].value)
			w += (size_t)snprintf(out + w, len - w, "%s", fl[i].name);
}

/*
 * The router's options string is field 6, then superblock flags and the
 * filesystem's own options (DESIGN: "per-mount and superblock options").
 * Field 6 is "ro"|"rw" followed only by the per-mount flag names, so the
 * prefix ends at the first token that is not one of them.
 */
void ms_mopts_prefix(const char *options, char *out, size_t len)
{
	static const char *const names[] = { "nosuid", "nodev", "noexec", "noatime",
					     "nodiratime", "relatime", "nosymfollow", "idmapped" };
	const char *s = options, *end = options;
	bool first = true;

	while (*s) {
		const char *e = strchr(s, ',');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		bool ok = false;

		if (first)
			ok = n == 2 && (!strncmp(s, "ro", 2) || !strncmp(s, "rw", 2));
		for (size_t i = 0; !first && i < sizeof(names) / sizeof(names[0]); i++)
			ok |= strlen(names[i]) == n && !strncmp(s, names[i], n);
		if (!ok)
			break;
		first = false;
		end = s + n;
		s = e ? e + 1 : s + n;
	}
	size_t n = (size_t)(end - options);
	if (n >= len)
		n = len - 1;
	memcpy(out, options, n);
	out[n] = '\0';
}

bool ms_in_subtree(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	if (n == 1 && prefix[0] == '/')
		return true;
	return !strncmp(path, prefix, n) && (path[n] == '\0' || path[n] == '/');
}

int ms_truth_listmount(struct ms_table *ret, uint64_t *ret_syscalls)
{
	struct mr_mnt_id_req req = { .size = MR_MNT_ID_REQ_SIZE_VER0, .mnt_id = LSMT_ROOT };
	size_t cap = 1u << 16;
	struct mr_statmount *sm = malloc(cap);
	uint64_t ids[1024], calls = 0;
	char mopts[128];
	int err = 0;

	if (!sm)
		return -ENOMEM;
	for (;;) {
		long n = syscall(__NR_listmount, &req, ids, 1024, 0);
		calls++;
		if (n < 0) {
			err = -errno;
			break;
		}
		for (long i = 0; i < n && !err; i++) {
			struct mr_mnt_id_req q = { .size = MR_MNT_ID_REQ_SIZE_VER0, .mnt_id = ids[i],
						   .param = STATMOUNT_MNT_BASIC | STATMOUNT_MNT_POINT };
			calls++;
			if (syscall(__NR_statmount, &q, sm, cap, 0) < 0) {
				/* The storm is quiet while we read, so ENOENT is a real error too. */
				err = -errno;
				break;
			}
			ms_render_mopts(sm->mnt_attr, mopts, sizeof(mopts));
			err = push(ret, sm->mnt_id, sm->mnt_attr, sm->str + sm->mnt_point, mopts);
		}
		if (err || n < 1024)
			break;
		req.param = ids[n - 1];
	}
	free(sm);
	if (ret_syscalls)
		*ret_syscalls = calls;
	if (!err)
		ms_table_sort(ret);
	return err;
}

long ms_read_all(int fd, char **buf, size_t *cap)
{
	size_t len = 0;

	/* pread from 0 each time: mountinfo is regenerated on every read pass. */
	for (;;) {
		if (*cap - len < 65536) {
			size_t ncap = *cap ? *cap * 2 : 1u << 20;
			char *p = realloc(*buf, ncap);
			if (!p)
				return -ENOMEM;
			*buf = p;
			*cap = ncap;
		}
		ssize_t n = pread(fd, *buf + len, *cap - len - 1, (off_t)len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	(*buf)[len] = '\0';
	return (long)len;
}

/* In place: \ooo -> byte (the kernel's mangle() escapes space, tab, newline, backslash). */
static void unescape(char *s)
{
	char *w = s;

	for (char *r = s; *r;) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') << 6 | (r[2] - '0') << 3 | (r[3] - '0'));
			r += 4;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
}

int ms_mountinfo_parse(char *buf, struct ms_table *ret)
{
	char *line = buf;

	while (line && *line) {
		char *nl = strchr(line, '\n');
		char *f[6];
		char *p = line;
		int i;

		if (nl)
			*nl = '\0';
		for (i = 0; i < 6 && p; i++) {
			f[i] = p;
			p = strchr(p, ' ');
			if (p)
				*p++ = '\0';
		}
		if (i < 6)
			return -EPROTO;
		unescape(f[4]);
		int err = push(ret, strtoull(f[0], NULL, 10), 0, f[4], f[5]);
		if (err)
			return err;
		line = nl ? nl + 1 : NULL;
	}
	ms_table_sort(ret);
	return 0;
}

int ms_truth_mountinfo(struct ms_table *ret)
{
	char *buf = NULL;
	size_t cap = 0;
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	long n = ms_read_all(fd, &buf, &cap);
	close(fd);
	int err = n < 0 ? (int)n : ms_mountinfo_parse(buf, ret);
	free(buf);
	return err;
}

void ms_table_diff(const struct ms_table *before, const struct ms_table *after,
		   const char *prefix, uint64_t ret[MS_NCLASS])
{
	/* Both sorted by ID: one merge pass. */
	size_t i = 0, j = 0;

	while (i < before->n || j < after->n) {
		const struct ms_entry *a = i < before->n ? &before->v[i] : NULL;
		const struct ms_entry *b = j < after->n ? &after->v[j] : NULL;

		if (a && (!b || a->id < b->id)) {
			ret[MS_DEPART] += ms_in_subtree(a->path, prefix);
			i++;
		} else if (b && (!a || b->id < a->id)) {
			ret[MS_ARRIVE] += ms_in_subtree(b->path, prefix);
			j++;
		} else {
			bool ina = ms_in_subtree(a->path, prefix), inb = ms_in_subtree(b->path, prefix);
			if (strcmp(a->path, b->path)) {
				/* A move into or out of the subtree is one event, routed by either path. */
				ret[MS_ARRIVE] += ina || inb;
			} else if (strcmp(a->mopts, b->mopts) && inb) {
				ret[MS_ATTR]++;
			}
			i++;
			j++;
		}
	}
}

/* ---- keys ---- */

static uint64_t fnv(uint64_t h, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

uint64_t ms_key(const char *root, const char *path)
{
	size_t rl = strlen(root);
	uint64_t h = 0xcbf29ce484222325ull;

	if (strncmp(path, root, rl) || path[rl] != '/')
		return fnv(h, path, strlen(path));
	const char *rel = path + rl + 1;
	/* "g<N>/<member>/rest": keep "g<N>/", drop the member. */
	if (rel[0] == 'g') {
		const char *slash = strchr(rel, '/');
		if (slash) {
			const char *member_end = strchr(slash + 1, '/');
			h = fnv(h, rel, (size_t)(slash - rel) + 1);
			if (!member_end)
				return fnv(h, "", 0); /* the member itself */
			return fnv(h, member_end + 1, strlen(member_end + 1));
		}
	}
	return fnv(h, rel, strlen(rel));
}

uint64_t ms_key_mix(uint64_t key, unsigned wave, unsigned cls)
{
	/* splitmix64 finaliser over the three: distinct waves never collide by accident. */
	uint64_t z = key ^ ((uint64_t)wave << 40) ^ ((uint64_t)cls << 56);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}
