/* SPDX-License-Identifier: MIT */
/*
 * mountinfo.c: unescaping, parsing (real and hostile input), the options
 * string format, and reading the file.  Label: unit.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "alloc.h"
#include "mirror/mount.h"
#include "mirror/mountinfo.h"
#include "testutil.h"


/*
 * Captured on Linux 6.18 (x86_64, Debian 12 userland): the host's table,
 * then mounts made in a private namespace with hostile names ("sp ace",
 * "nl\nx", "bs\\x", a source "we ird\\src", a source of ""), noatime,
 * strictatime+nosymfollow, sync/dirsync/lazytime, shared/master/unbindable,
 * and a read-only superblock under read-write mounts (76, 77).
 */
static const char sample[] =
	"22 27 0:21 / /proc rw,relatime - proc proc rw\n"
	"23 27 0:22 / /sys rw,relatime - sysfs sysfs rw\n"
	"24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw,size=12334096k,nr_inodes=3083524,mode=755\n"
	"25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24683568k\n"
	"26 24 0:24 / /dev/pts rw,relatime - devpts devpts rw,mode=600,ptmxmode=000\n"
	"27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict,resuid=65534,resgid=65534\n"
	"28 27 0:25 / /mnt/sandboxing/model_tools_env/v1/python ro,nosuid,nodev,relatime - tmpfs model_tools_unavailable ro,size=4k,mode=755\n"
	"29 26 0:26 / /dev/pts rw,relatime - devpts devpts rw,mode=600,ptmxmode=000\n"
	"30 25 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24683568k\n"
	"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	"33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
	"34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
	"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
	"36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices\n"
	"37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n"
	"38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio\n"
	"39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
	"40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
	"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
	"66 46 0:40 / /tmp/pr rw,relatime - tmpfs pr rw\n"
	"67 66 0:41 / /tmp/pr/a rw,noatime,nodiratime - tmpfs none rw\n"
	"68 66 0:42 / /tmp/pr/b rw,nosymfollow - tmpfs  rw,sync,dirsync,lazytime\n"
	"69 66 0:43 / /tmp/pr/sp\\040ace ro,relatime - tmpfs we\\040ird\\134src ro\n"
	"70 66 0:44 / /tmp/pr/nl\\012x rw,relatime - tmpfs x rw\n"
	"71 66 0:45 / /tmp/pr/bs\\134x rw,relatime - tmpfs x rw\n"
	"72 66 0:41 / /tmp/pr/c ro,noatime,nodiratime - tmpfs none rw\n"
	"73 66 0:46 / /tmp/pr/d rw,relatime shared:1 - tmpfs sh rw\n"
	"74 66 0:46 / /tmp/pr/e rw,relatime master:1 - tmpfs sh rw\n"
	"75 66 0:47 / /tmp/pr/f rw,relatime unbindable - tmpfs ub rw\n"
	"76 73 0:48 / /tmp/pr/d/x rw,relatime shared:2 - tmpfs rosb ro\n"
	"77 74 0:48 / /tmp/pr/e/x rw,relatime master:2 - tmpfs rosb ro\n";

static int test_unescape_each(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "", "" },
		{ "/plain/path", "/plain/path" },
		{ "\\040", " " },
		{ "\\011", "\t" },
		{ "\\012", "\n" },
		{ "\\134", "\\" },
		{ "/a\\040b\\011c\\012d\\134e", "/a b\tc\nd\\e" },
		{ "\\101\\102", "AB" },          /* any \ooo, not just mangle()'s four */
		{ "\\377", "\377" },             /* highest byte */
		{ "\\134040", "\\040" },         /* an escaped backslash is not re-read */
		{ "end\\040", "end " },
	};

	for (size_t i = 0; i < MR__ARRAY_SIZE(cases); i++) {
		char buf[64];

		strcpy(buf, cases[i].in);
		CHECK(mr__mountinfo_unescape(buf) == (int)strlen(cases[i].out));
		CHECK_STR(buf, cases[i].out);
	}
	return 0;
}

static int test_unescape_malformed(void)
{
	static const char *const bad[] = {
		"\\",      "a\\",     "\\0",     "\\04",     "\\04x", "\\08a",
		"\\400",   "\\777",   "\\000",   "a\\x41",   "\\\\",  "ok\\040then\\9",
		"\\-12",   "\\ 12",
	};

	for (size_t i = 0; i < MR__ARRAY_SIZE(bad); i++) {
		char buf[64];

		strcpy(buf, bad[i]);
		CHECK(mr__mountinfo_unescape(buf) == -EINVAL);
		/* Refused strings come back untouched. */
		CHECK_STR(buf, bad[i]);
	}
	return 0;
}

static const struct mr__mount *by_old_id(const struct mr__table *t, uint32_t id)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i]->old_id == id)
			return t->v[i];
	return NULL;
}

static int test_parse_sample(void)
{
	struct mr__table t = { 0 };
	const struct mr__mount *m;

	CHECK(mr__mountinfo_parse(sample, strlen(sample), &t) == 32);
	CHECK(t.n == 32);

	m = t.v[5]; /* 27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,... */
	CHECK(m->pub.id == 27 && m->old_id == 27 && m->pub.parent_id == 1);
	CHECK(m->pub.dev_major == 254 && m->pub.dev_minor == 0);
	CHECK_STR(m->pub.path, "/");
	CHECK(m->path_len == 1);
	CHECK_STR(m->pub.root, "/");
	CHECK_STR(m->pub.fstype, "ext4");
	CHECK_STR(m->pub.source, "/dev/vda");
	CHECK_STR(m->pub.options, "rw,relatime,discard,resv_strict,resuid=65534,resgid=65534");
	CHECK(m->pub.attr == MOUNT_ATTR_RELATIME && m->sb_flags == 0);
	CHECK(m->pub.propagation == MS_PRIVATE);
	CHECK(!mr__mount_readonly(m));

	m = by_old_id(&t, 28); /* ro,nosuid,nodev,relatime - tmpfs ... ro,size=4k,mode=755 */
	CHECK(m);
	CHECK(m->pub.attr == (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV));
	CHECK(m->sb_flags == MR__SB_RDONLY);
	CHECK_STR(m->pub.options, "ro,nosuid,nodev,relatime,size=4k,mode=755");
	CHECK_STR(m->pub.source, "model_tools_unavailable");
	CHECK(mr__mount_readonly(m));

	m = by_old_id(&t, 40);
	CHECK(m && strcmp(m->pub.options, "rw,relatime,name=systemd") == 0);

	m = by_old_id(&t, 67);
	CHECK(m);
	CHECK(m->pub.attr == (MOUNT_ATTR_NOATIME | MOUNT_ATTR_NODIRATIME));
	CHECK_STR(m->pub.options, "rw,noatime,nodiratime");

	m = by_old_id(&t, 68); /* empty source, strictatime, sb flags */
	CHECK(m);
	CHECK_STR(m->pub.source, "");
	CHECK(m->pub.attr == (MOUNT_ATTR_STRICTATIME | MOUNT_ATTR_NOSYMFOLLOW));
	CHECK(m->sb_flags == (MR__SB_SYNCHRONOUS | MR__SB_DIRSYNC | MR__SB_LAZYTIME));
	CHECK_STR(m->pub.options, "rw,nosymfollow,sync,dirsync,lazytime");

	m = by_old_id(&t, 69);
	CHECK(m);
	CHECK_STR(m->pub.path, "/tmp/pr/sp ace");
	CHECK(m->path_len == strlen("/tmp/pr/sp ace"));
	CHECK_STR(m->pub.source, "we ird\\src");
	CHECK_STR(m->pub.options, "ro,relatime");
	CHECK(m->pub.attr == MOUNT_ATTR_RDONLY && m->sb_flags == MR__SB_RDONLY);

	m = by_old_id(&t, 70);
	CHECK(m && strcmp(m->pub.path, "/tmp/pr/nl\nx") == 0);
	m = by_old_id(&t, 71);
	CHECK(m && strcmp(m->pub.path, "/tmp/pr/bs\\x") == 0);

	m = by_old_id(&t, 72); /* read-only bind of a read-write superblock */
	CHECK(m && m->pub.attr == (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOATIME | MOUNT_ATTR_NODIRATIME));
	CHECK(m->sb_flags == 0 && mr__mount_readonly(m));
	CHECK_STR(m->pub.options, "ro,noatime,nodiratime");

	CHECK(by_old_id(&t, 73)->pub.propagation == MS_SHARED);
	CHECK(by_old_id(&t, 74)->pub.propagation == MS_SLAVE);
	CHECK(by_old_id(&t, 75)->pub.propagation == MS_UNBINDABLE);

	m = by_old_id(&t, 76); /* rw mount, ro superblock */
	CHECK(m && m->pub.attr == MOUNT_ATTR_RELATIME && m->sb_flags == MR__SB_RDONLY);
	CHECK_STR(m->pub.options, "rw,relatime,ro");
	CHECK(mr__mount_readonly(m));
	CHECK(m->pub.parent_id == 73);

	mr__table_clear(&t);
	CHECK(t.n == 0 && t.v == NULL);
	return 0;
}

/* Lines the kernel does not write but that are valid and must parse as documented. */
static int test_parse_edge_valid(void)
{
	static const char in[] =
		/* both shared and slave, propagate_from, an unknown tag */
		"133 28 0:62 / /mnt/both rw,relatime shared:40 master:39 propagate_from:2 "
		"future:7 - tmpfs t rw\n"
		/* fuse subtype, filesystem options with a raw space and '=' */
		"118 112 0:52 / /run/user/1000/gvfs rw,nosuid,nodev,relatime shared:305 - "
		"fuse.gvfsd-fuse gvfsd-fuse rw,user_id=1000,weird=a b\n"
		/* mand is dropped; unknown mount options are kept, attr ignores them */
		"5 1 8:1 /sub /x ro,nosuid,newflag - ext4 /dev/sda1 rw,mand,errors=remount-ro\n"
		/* an idmapped mount; an nsfs root that is not a path */
		"6 1 0:4 net:[4026531840] /run/netns/x rw,idmapped - nsfs nsfs rw\n";
	struct mr__table t = { 0 };

	CHECK(mr__mountinfo_parse(in, strlen(in), &t) == 4);
	CHECK(t.v[0]->pub.propagation == (MS_SHARED | MS_SLAVE));
	CHECK_STR(t.v[1]->pub.fstype, "fuse.gvfsd-fuse");
	CHECK_STR(t.v[1]->pub.options, "rw,nosuid,nodev,relatime,user_id=1000,weird=a b");
	CHECK(t.v[2]->pub.attr == (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_STRICTATIME));
	CHECK_STR(t.v[2]->pub.root, "/sub");
	CHECK_STR(t.v[2]->pub.options, "ro,nosuid,newflag,errors=remount-ro");
	CHECK(t.v[2]->sb_flags == 0);
	CHECK(t.v[3]->pub.attr == (MOUNT_ATTR_IDMAP | MOUNT_ATTR_STRICTATIME));
	CHECK_STR(t.v[3]->pub.root, "net:[4026531840]");
	mr__table_clear(&t);

	/* Nothing to parse is zero mounts, not an error. */
	CHECK(mr__mountinfo_parse("", 0, &t) == 0 && t.n == 0);
	return 0;
}

static int test_parse_malformed(void)
{
	static const char *const bad[] = {
		"\n",                                                    /* empty line */
		"22 27 0:21 / /proc\n",                                  /* fields missing */
		"22 27 0:21 / /proc rw,relatime\n",                      /* stops after opts */
		"22 27 0:21 / /proc rw,relatime proc proc rw\n",         /* no " - " */
		"22 27 0:21 / /proc rw,relatime shared:1 proc proc rw\n",/* no " - " */
		"22 27 0:21 / /proc rw,relatime -\n",                    /* nothing after - */
		"22 27 0:21 / /proc rw,relatime - proc\n",               /* no source */
		"22 27 0:21 / /proc rw,relatime - proc proc\n",          /* no superopts */
		"22 27 0:21 / /proc rw,relatime - proc proc \n",         /* empty superopts */
		"22 27 0:21 / /proc rw,relatime - proc proc size=1\n",   /* no rw/ro first */
		"22 27 0:21 / /proc relatime,rw - proc proc rw\n",       /* no rw/ro first */
		"2x 27 0:21 / /proc rw - proc proc rw\n",                /* non-numeric id */
		"-1 27 0:21 / /proc rw - proc proc rw\n",
		"+1 27 0:21 / /proc rw - proc proc rw\n",
		"22 4294967296 0:21 / /proc rw - proc proc rw\n",        /* overflow */
		"22 99999999999999999999999 0:21 / /proc rw - proc proc rw\n",
		"22 27 0-21 / /proc rw - proc proc rw\n",                /* bad dev */
		"22 27 0: / /proc rw - proc proc rw\n",
		"22 27 :21 / /proc rw - proc proc rw\n",
		"22 27 0:21:3 / /proc rw - proc proc rw\n",
		"22 27 0:21  /proc rw - proc proc rw\n",                 /* empty root */
		"22 27 0:21 /  rw - proc proc rw\n",                     /* empty mount point */
		"22 27 0:21 / /a\\09 rw - proc proc rw\n",               /* bad escape */
		"22 27 0:21 / /a\\000b rw - proc proc rw\n",             /* escaped NUL */
		"22 27 0:21 / /proc rw - proc pr\\oc rw\n",              /* bad escape, source */
		"22 27 0:21 / /proc rw -  proc rw\n",                    /* empty fstype */
		"22 27 0:21 / /proc rw shared:x - proc proc rw\n",       /* bad peer group */
		"22 27 0:21 / /proc rw master: - proc proc rw\n",
		"22 27 0:21 / /proc rw  shared:1 - proc proc rw\n",      /* double space */
		" 22 27 0:21 / /proc rw - proc proc rw\n",               /* leading space */
		"22 27 0:21 / /proc rw - proc proc rw",                  /* truncated last line */
	};

	for (size_t i = 0; i < MR__ARRAY_SIZE(bad); i++) {
		struct mr__table t = { 0 };
		int r = mr__mountinfo_parse(bad[i], strlen(bad[i]), &t);

		if (r != -EINVAL || t.n != 0) {
			fprintf(stderr, "case %zu (%s): got %d, %zu mounts\n", i, bad[i], r, t.n);
			return 1;
		}
		mr__table_clear(&t);
	}
	return 0;
}

static int test_parse_stops_at_bad_line(void)
{
	static const char in[] = "22 27 0:21 / /proc rw - proc proc rw\n"
				 "23 27 0:22 / /sys rw - sysfs sysfs rw\n"
				 "24 27 0:6 / /dev rw devtmpfs devtmpfs rw\n"
				 "25 27 0:7 / /x rw - tmpfs tmpfs rw\n";
	/* An embedded NUL in the middle of an otherwise good line. */
	static const char nul[] = "22 27 0:21 / /proc rw - proc proc rw\n"
				  "23 27 0:22 / /s\0s rw - sysfs sysfs rw\n";
	struct mr__table t = { 0 };

	CHECK(mr__mountinfo_parse(in, strlen(in), &t) == -EINVAL);
	CHECK(t.n == 2);
	CHECK_STR(t.v[1]->pub.path, "/sys");
	mr__table_clear(&t);

	CHECK(mr__mountinfo_parse(nul, sizeof(nul) - 1, &t) == -EINVAL);
	CHECK(t.n == 1);
	mr__table_clear(&t);

	/* The same good line, cut short anywhere, never parses as a mount. */
	for (size_t n = 1; n < 37; n++) {
		CHECK(mr__mountinfo_parse(in, n, &t) == -EINVAL);
		CHECK(t.n == 0);
	}
	return 0;
}

/* 8 MiB without a newline, and a 2 MiB line: refused, quickly and without a 2 MiB copy. */
static int test_parse_overlong(void)
{
	size_t n = 8u << 20;
	char *big = malloc(n);
	struct mr__table t = { 0 };

	CHECK(big);
	memset(big, 'a', n);
	CHECK(mr__mountinfo_parse(big, n, &t) == -EINVAL && t.n == 0);

	/* a syntactically fine line whose mount point is 2 MiB long */
	static const char head[] = "22 27 0:21 / /", tail[] = " rw - proc proc rw\n";
	size_t len = 2u << 20;
	memcpy(big, head, sizeof(head) - 1);
	memcpy(big + len - (sizeof(tail) - 1), tail, sizeof(tail) - 1);
	CHECK(mr__mountinfo_parse(big, len, &t) == -EINVAL && t.n == 0);
	free(big);
	return 0;
}

static char *synthetic(size_t lines, size_t *ret_len)
{
	size_t cap = lines * 160 + 1, len = 0;
	char *s = malloc(cap);

	if (!s)
		return NULL;
	for (size_t i = 0; i < lines; i++)
		len += (size_t)snprintf(s + len, cap - len,
					"%zu %zu 0:%zu / /srv/c\\040%zu/m\\012%zu rw,nosuid,relatime "
					"shared:%zu - tmpfs tmpfs rw,size=%zuk,mode=755\n",
					i + 100, i ? i + 99 : 1, i, i, i, i + 1, i + 4);
	*ret_len = len;
	return s;
}

/*
 * 10,000 lines in one call; then linearity: 8x the input must not take
 * anywhere near 64x the time (a quadratic parser would).
 */
static int test_parse_big(void)
{
	size_t len, len8;
	char *s = synthetic(10000, &len), *s8 = synthetic(80000, &len8);
	struct mr__table t = { 0 };
	char want[64];

	CHECK(s && s8);
	CHECK(mr__mountinfo_parse(s, len, &t) == 10000);
	CHECK(t.n == 10000);
	for (size_t i = 0; i < t.n; i += 997) {
		snprintf(want, sizeof(want), "/srv/c %zu/m\n%zu", i, i);
		CHECK_STR(t.v[i]->pub.path, want);
		CHECK(t.v[i]->pub.id == i + 100 && t.v[i]->pub.propagation == MS_SHARED);
	}
	mr__table_clear(&t);

	/* The cost per line is measured in bench/, not asserted here. */
	CHECK(mr__mountinfo_parse(s8, len8, &t) == 80000);
	CHECK(t.n == 80000 && t.v[79999]->pub.id == 79999 + 100);
	mr__table_clear(&t);
	free(s);
	free(s8);
	return 0;
}

/* The whole file arrives even when the buffer starts far too small, and is kept. */
static int test_read_fd(void)
{
	char *buf = mr__malloc(16), *ref = NULL;
	size_t cap = 16, len = 0, rlen = 0, n;
	FILE *f;
	int fd;

	CHECK(buf);
	CHECK(mr__mountinfo_read_fd(-1, &buf, &cap, &len, NULL) == 0);
	CHECK(cap > 16 && len > 0 && len <= cap);

	/* reference read with stdio */
	f = fopen("/proc/self/mountinfo", "r");
	CHECK(f);
	ref = malloc(len + 65536);
	CHECK(ref);
	while ((n = fread(ref + rlen, 1, len + 65536 - rlen, f)) > 0)
		rlen += n;
	fclose(f);
	CHECK(rlen == len && memcmp(ref, buf, len) == 0);
	free(ref);

	struct mr__table t = { 0 };
	CHECK(mr__mountinfo_parse(buf, len, &t) > 0);
	mr__table_clear(&t);

	/* Reusing an fd: every call starts again at offset 0. */
	fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	char *kept = buf;
	size_t len2 = 0, len3 = 0;
	CHECK(mr__mountinfo_read_fd(fd, &buf, &cap, &len2, NULL) == 0 && len2 == len);
	CHECK(buf == kept); /* big enough already: no reallocation */
	CHECK(mr__mountinfo_read_fd(fd, &buf, &cap, &len3, NULL) == 0 && len3 == len);
	close(fd);

	/* A failing read leaves ret_len alone. */
	size_t untouched = 12345;
	CHECK(mr__mountinfo_read_fd(fd, &buf, &cap, &untouched, NULL) == -EBADF);
	CHECK(untouched == 12345);
	mr__free(buf);
	return 0;
}

int main(void)
{
	int fails = 0;

	fails += RUN(test_unescape_each) != T_EXIT_PASS;
	fails += RUN(test_unescape_malformed) != T_EXIT_PASS;
	fails += RUN(test_parse_sample) != T_EXIT_PASS;
	fails += RUN(test_parse_edge_valid) != T_EXIT_PASS;
	fails += RUN(test_parse_malformed) != T_EXIT_PASS;
	fails += RUN(test_parse_stops_at_bad_line) != T_EXIT_PASS;
	fails += RUN(test_parse_overlong) != T_EXIT_PASS;
	fails += RUN(test_parse_big) != T_EXIT_PASS;
	fails += RUN(test_read_fd) != T_EXIT_PASS;
	return fails ? 1 : 0;
}
