/* SPDX-License-Identifier: MIT */
/*
 * listmount.c against the running kernel, checked against mountinfo.c:
 * both readers must describe every mount identically (paths, fs types,
 * sources, options strings, flags, topology).  Runs in a private mount
 * namespace on a tmpfs under /tmp; the host's table is never touched.
 * Labels: kernel, root.  Skips (77) when not root or without listmount.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "mirror/listmount.h"
#include "mirror/mount.h"
#include "mirror/mountinfo.h"
#include "probe.h"
#include "testutil.h"

#ifndef MS_NOSYMFOLLOW
#define MS_NOSYMFOLLOW 256 /* 5.10, include/uapi/linux/mount.h */
#endif
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U /* 6.8, include/uapi/linux/stat.h */
#endif
#ifndef NS_GET_MNTNS_ID
#define NS_GET_MNTNS_ID _IOR(0xb7, 0x5, uint64_t) /* 6.10, include/uapi/linux/nsfs.h */
#endif


static char root[64];
static int fuse_fd = -1;

static int sub(char *out, size_t n, const char *rel)
{
	return snprintf(out, n, "%s/%s", root, rel) < (int)n ? 0 : -1;
}

static int mount_at(const char *src, const char *rel, unsigned long flags, const char *data)
{
	char p[4096];

	if (sub(p, sizeof(p), rel) < 0 || mkdir(p, 0755) < 0)
		return -1;
	return mount(src, p, "tmpfs", flags, data);
}

static int remount(const char *rel, unsigned long flags)
{
	char p[4096];

	if (sub(p, sizeof(p), rel) < 0)
		return -1;
	return mount(NULL, p, NULL, flags, NULL);
}

/* A long mount point, to make statmount's reply overflow a small buffer. */
static const char long_name[] =
	"long-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef0123456789abcdef01234"; /* 250 bytes */

/* 0 set up, 77 cannot run here, 1 failed. */
static int setup(void)
{
	char p[4096], q[4096];

	int r = tu_private_root(root, sizeof(root));

	if (r)
		return r;
	if (mount_at("a-src", "a", MS_NOSUID | MS_NODEV, "size=1m,mode=700") < 0 ||
	    mount_at("", "a/b", MS_STRICTATIME | MS_NOSYMFOLLOW | MS_SYNCHRONOUS | MS_DIRSYNC |
				    MS_LAZYTIME, NULL) < 0 ||
	    mount_at("we ird\\src", "sp ace", MS_RDONLY, NULL) < 0 ||
	    mount_at("x", "nl\nx", MS_NOATIME | MS_NODIRATIME, NULL) < 0 ||
	    mount_at("y", "bs\\x\ttab", MS_NOEXEC, NULL) < 0 ||
	    mount_at("z", long_name, 0, NULL) < 0 || mount_at("shared", "sh", 0, NULL) < 0 ||
	    remount("sh", MS_SHARED) < 0 || mount_at("ub", "ub", 0, NULL) < 0 ||
	    remount("ub", MS_UNBINDABLE) < 0 ||
	    /* read-only superblock under a read-write mount */
	    mount_at("rosb", "sbro", 0, NULL) < 0 || remount("sbro", MS_REMOUNT | MS_RDONLY) < 0 ||
	    remount("sbro", MS_REMOUNT | MS_BIND) < 0) {
		perror("mount");
		return 1;
	}
	/* a read-only bind of a, and a slave of sh */
	if (sub(p, sizeof(p), "a") < 0 || sub(q, sizeof(q), "bind") < 0 || mkdir(q, 0755) < 0 ||
	    mount(p, q, NULL, MS_BIND, NULL) < 0 ||
	    mount(NULL, q, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0 ||
	    sub(p, sizeof(p), "sh") < 0 || sub(q, sizeof(q), "slave") < 0 || mkdir(q, 0755) < 0 ||
	    mount(p, q, NULL, MS_BIND, NULL) < 0 || mount(NULL, q, NULL, MS_SLAVE, NULL) < 0) {
		perror("bind");
		return 1;
	}
	/*
	 * A FUSE mount, for the subtype ("fuse.mrtest").  No daemon answers
	 * the fd; neither reader sends the filesystem a request, and nothing
	 * here looks up a path below it.
	 */
	fuse_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fuse_fd >= 0) {
		char opts[128];

		snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0", fuse_fd);
		if (sub(p, sizeof(p), "fuse") < 0 || mkdir(p, 0755) < 0)
			return 1;
		if (mount("mrfuse", p, "fuse.mrtest", MS_NOSUID | MS_NODEV, opts) < 0) {
			close(fuse_fd);
			fuse_fd = -1;
		}
	}
	if (fuse_fd < 0)
		printf("note: no FUSE mount possible, fs subtypes not tested\n");
	return 0;
}

static void teardown(void)
{
	if (umount2(root, MNT_DETACH) < 0 || rmdir(root) < 0)
		perror(root);
	if (fuse_fd >= 0)
		close(fuse_fd);
}

static const struct mr__mount *by_old_id(const struct mr__table *t, uint32_t id)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i]->old_id == id)
			return t->v[i];
	return NULL;
}

static const struct mr__mount *by_id(const struct mr__table *t, uint64_t id)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i]->pub.id == id)
			return t->v[i];
	return NULL;
}

static const struct mr__mount *by_path(const struct mr__table *t, const char *rel)
{
	char p[4096];

	if (sub(p, sizeof(p), rel) < 0)
		return NULL;
	for (size_t i = t->n; i-- > 0;) /* the top of a stack of mounts */
		if (strcmp(t->v[i]->pub.path, p) == 0)
			return t->v[i];
	return NULL;
}

static struct mr__table lt, mt;
static struct mr__statmount_buf smbuf;
static uint64_t syscalls;

static int read_both(void)
{
	char *buf = NULL;
	size_t cap = 0, len;
	int r;

	/*
	 * A buffer too small for one string: the caller's buffer is used as
	 * given, and the first reply that does not fit must grow it.
	 */
	smbuf.p = mr__malloc(768);
	smbuf.cap = 768; /* 512 fixed + 256 for strings */
	r = mr__listmount_table(0, &smbuf, &syscalls, &lt);
	if (r == -ENOSYS) {
		return tu_skip("no listmount(2)/statmount(2) (Linux 6.8)");
	}
	CHECK(r > 0 && (size_t)r == lt.n);
	CHECK(smbuf.cap > 768);
	/* one listmount at least, and one statmount per mount at least */
	CHECK(syscalls >= lt.n + 1);

	CHECK(mr__mountinfo_read_fd(-1, &buf, &cap, &len, NULL) == 0);
	r = mr__mountinfo_parse(buf, len, &mt);
	mr__free(buf);
	CHECK(r > 0);
	return 0;
}

/* Every mount, both ways, field by field. */
static int test_tables_agree(void)
{
	CHECK(lt.n == mt.n);
	for (size_t i = 0; i < mt.n; i++) {
		const struct mr__mount *a = mt.v[i], *b = by_old_id(&lt, a->old_id), *bp;

		if (!b) {
			fprintf(stderr, "mountinfo %u %s: not listed\n", a->old_id, a->pub.path);
			return 1;
		}
		CHECK_STR(a->pub.path, b->pub.path);
		CHECK(a->path_len == b->path_len);
		CHECK_STR(a->pub.root, b->pub.root);
		/*
		 * Before STATMOUNT_SB_SOURCE and STATMOUNT_FS_SUBTYPE (both 6.13)
		 * statmount has no source ("") and no subtype ("fuse", not
		 * "fuse.mrtest").
		 */
		if (mr__probe()->statmount_sb_source) {
			CHECK_STR(a->pub.fstype, b->pub.fstype);
			CHECK_STR(a->pub.source, b->pub.source);
		} else {
			CHECK(!strncmp(a->pub.fstype, b->pub.fstype, strlen(b->pub.fstype)));
			CHECK_STR(b->pub.source, "");
		}
		CHECK_STR(a->pub.options, b->pub.options);
		CHECK(a->pub.attr == b->pub.attr);
		CHECK(a->pub.propagation == b->pub.propagation);
		CHECK(a->pub.dev_major == b->pub.dev_major && a->pub.dev_minor == b->pub.dev_minor);
		CHECK(a->sb_flags == b->sb_flags);
		CHECK(mr__mount_readonly(a) == mr__mount_readonly(b));
		/* 64-bit parent in one, 32-bit in the other: same mount */
		bp = by_id(&lt, b->pub.parent_id);
		if (bp)
			CHECK(bp->old_id == a->pub.parent_id);
		else
			CHECK(strcmp(a->pub.path, "/") == 0); /* only the root's parent is outside */
	}
	return 0;
}

/* What we mounted, as we mounted it. */
static int test_our_mounts(void)
{
	const struct mr__mount *m;
	char p[4096];

	m = by_path(&lt, "a");
	CHECK(m && strncmp(m->pub.options, "rw,nosuid,nodev,relatime,size=1024k,mode=700", 44) == 0);
	CHECK(strcmp(m->pub.source, mr__probe()->statmount_sb_source ? "a-src" : "") == 0 &&
	      strcmp(m->pub.fstype, "tmpfs") == 0);

	m = by_path(&lt, "a/b");
	CHECK(m && strcmp(m->pub.source, "") == 0);
	CHECK(m->pub.attr == (MOUNT_ATTR_STRICTATIME | MOUNT_ATTR_NOSYMFOLLOW));
	CHECK(m->sb_flags == (MR__SB_SYNCHRONOUS | MR__SB_DIRSYNC | MR__SB_LAZYTIME));
	CHECK(strncmp(m->pub.options, "rw,nosymfollow,sync,dirsync,lazytime", 36) == 0);
	CHECK(by_id(&lt, m->pub.parent_id) == by_path(&lt, "a"));

	m = by_path(&lt, "sp ace");
	CHECK(m && strcmp(m->pub.source, mr__probe()->statmount_sb_source ? "we ird\\src" : "") == 0);
	CHECK(strncmp(m->pub.options, "ro,relatime", 11) == 0 && mr__mount_readonly(m));
	CHECK(m->pub.attr == MOUNT_ATTR_RDONLY && m->sb_flags == MR__SB_RDONLY);

	/* Our own check that the kernel's unique ID is the one statx reports. */
	struct statx stx;
	CHECK(sub(p, sizeof(p), "sp ace") == 0);
	if (statx(AT_FDCWD, p, 0, STATX_MNT_ID_UNIQUE, &stx) == 0 &&
	    (stx.stx_mask & STATX_MNT_ID_UNIQUE))
		CHECK(stx.stx_mnt_id == m->pub.id);

	m = by_path(&lt, "nl\nx");
	CHECK(m && strncmp(m->pub.options, "rw,noatime,nodiratime", 21) == 0);
	m = by_path(&lt, "bs\\x\ttab");
	CHECK(m && strncmp(m->pub.options, "rw,noexec,relatime", 18) == 0);
	CHECK(by_path(&lt, long_name) != NULL);

	m = by_path(&lt, "bind");
	CHECK(m && strncmp(m->pub.options, "ro,nosuid,nodev,relatime", 24) == 0);
	CHECK(m->sb_flags == 0 && mr__mount_readonly(m));
	CHECK(m->pub.dev_minor == by_path(&lt, "a")->pub.dev_minor);

	m = by_path(&lt, "sbro");
	CHECK(m && m->pub.attr == MOUNT_ATTR_RELATIME && m->sb_flags == MR__SB_RDONLY);
	CHECK(strncmp(m->pub.options, "rw,relatime,ro", 14) == 0 && mr__mount_readonly(m));

	CHECK(by_path(&lt, "sh")->pub.propagation == MS_SHARED);
	CHECK(by_path(&lt, "slave")->pub.propagation == MS_SLAVE);
	CHECK(by_path(&lt, "ub")->pub.propagation == MS_UNBINDABLE);
	CHECK(by_path(&lt, "a")->pub.propagation == MS_PRIVATE);

	if (fuse_fd >= 0) {
		m = by_path(&lt, "fuse");
		bool v613 = mr__probe()->statmount_sb_source; /* and FS_SUBTYPE */
		CHECK(m && strcmp(m->pub.fstype, v613 ? "fuse.mrtest" : "fuse") == 0);
		CHECK(strcmp(m->pub.source, v613 ? "mrfuse" : "") == 0);
		CHECK(strncmp(m->pub.options, "rw,nosuid,nodev,relatime,user_id=0,group_id=0", 46) == 0);
	}
	return 0;
}

/* A mount that is gone by the time statmount asks is -ENOENT, and skipped in a table. */
static int test_vanished(void)
{
	struct mr__table t = { 0 };
	struct mr__mount *m = NULL;
	uint64_t n = 0, id;
	char p[4096];

	CHECK(mount_at("gone", "gone", 0, NULL) == 0);
	CHECK(mr__listmount_table(0, &smbuf, &n, &t) == (int)lt.n + 1);
	CHECK(by_path(&t, "gone"));
	id = by_path(&t, "gone")->pub.id;
	CHECK(mr__statmount(0, id, &smbuf, &n, &m) == 0 && m && m->pub.id == id);
	mr__mount_unref(m);
	CHECK(sub(p, sizeof(p), "gone") == 0 && umount2(p, 0) == 0);
	m = NULL;
	n = 0;
	CHECK(mr__statmount(0, id, &smbuf, &n, &m) == -ENOENT && m == NULL && n == 1);
	mr__table_clear(&t);
	return 0;
}

/* Naming the namespace by ID (mnt_id_req VER1, 6.11) reads the same table. */
static int test_ns_id(void)
{
	struct mr__table t = { 0 };
	uint64_t ns_id = 0, n = 0;
	int fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC), r;

	CHECK(fd >= 0);
	r = ioctl(fd, NS_GET_MNTNS_ID, &ns_id);
	close(fd);
	if (r < 0) {
		printf("note: no NS_GET_MNTNS_ID, namespace-ID read not tested\n");
		return 0;
	}
	r = mr__listmount_table(ns_id, &smbuf, &n, &t);
	CHECK(r == (int)lt.n);
	for (size_t i = 0; i < t.n; i++)
		CHECK(mr__mount_same(t.v[i], lt.v[i]));
	mr__table_clear(&t);
	/* an ID no namespace has */
	CHECK(mr__listmount_table(ns_id + 1000000, &smbuf, &n, &t) < 0 && t.n == 0);
	return 0;
}

int main(void)
{
	int fails = 0, r;

	r = setup();
	if (r)
		return r;
	r = read_both();
	if (r) {
		teardown();
		return r;
	}
	fails += RUN(test_tables_agree) != T_EXIT_PASS;
	fails += RUN(test_our_mounts) != T_EXIT_PASS;
	fails += RUN(test_vanished) != T_EXIT_PASS;
	fails += RUN(test_ns_id) != T_EXIT_PASS;
	mr__table_clear(&lt);
	mr__table_clear(&mt);
	mr__statmount_buf_free(&smbuf);
	teardown();
	return fails ? 1 : 0;
}
