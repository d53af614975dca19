/* SPDX-License-Identifier: MIT */
/*
 * statmount(2)/listmount(2) as a reader of other namespaces needs them
 * (kernel patches 0005, 0006):
 *  - STATMOUNT_SB_SOURCE gives the mount source, unescaped; the
 *    STATMOUNT_FS_SUBTYPE bit stays clear when there is no subtype;
 *  - a mount of another namespace, asked for by mnt_ns_id, has its
 *    mnt_point relative to that namespace's root (6.12 took /proc or
 *    whichever child of the root mount had the lowest ID, and the path came
 *    back ""), and listmount(LSMT_ROOT) of that namespace lists all of it.
 */
#include "vmtest.h"

#define SM_SIZE 8192
#define WANT (STATMOUNT_MNT_BASIC | STATMOUNT_MNT_POINT | STATMOUNT_SB_SOURCE | \
	      STATMOUNT_FS_SUBTYPE | STATMOUNT_FS_TYPE)

static union {
	struct mr_statmount sm;
	char buf[SM_SIZE];
} u;

static int do_statmount(uint64_t id, uint64_t ns_id, uint64_t mask)
{
	struct mr_mnt_id_req req = {
		.size = MR_MNT_ID_REQ_SIZE_VER1,
		.mnt_id = id,
		.param = mask,
		.mnt_ns_id = ns_id,
	};

	memset(&u, 0, sizeof(u));
	return syscall(__NR_statmount, &req, &u.sm, sizeof(u), 0);
}

static const char *str(uint64_t bit, uint32_t off)
{
	return (u.sm.mask & bit) ? u.sm.str + off : NULL;
}

static int test_sb_source(void)
{
	const char *src = "a b\\c\tsrc"; /* mountinfo would escape all three */
	const char *s;

	CHECK(mkdir("src", 0755) == 0);
	CHECK(mount(src, "src", "tmpfs", 0, NULL) == 0);
	CHECK(do_statmount(mnt_id("src"), 0, WANT) == 0);
	s = str(STATMOUNT_SB_SOURCE, u.sm.sb_source);
	if (!s || strcmp(s, src))
		FAILF("sb_source %s%s%s, want \"%s\"", s ? "\"" : "", s ? s : "(bit clear)",
		      s ? "\"" : "", src);
	if (u.sm.mask & STATMOUNT_FS_SUBTYPE)
		FAILF("tmpfs has no subtype, yet FS_SUBTYPE set (\"%s\")",
		      u.sm.str + u.sm.fs_subtype);
	s = str(STATMOUNT_FS_TYPE, u.sm.fs_type);
	CHECK(s && !strcmp(s, "tmpfs"));
	/* Own namespace: unchanged, relative to the caller's root. */
	s = str(STATMOUNT_MNT_POINT, u.sm.mnt_point);
	if (!s || strcmp(s, "/tmp/vt/src"))
		FAILF("mnt_point \"%s\", want /tmp/vt/src", s ? s : "(bit clear)");
	/* Not asked for, not given. */
	CHECK(do_statmount(mnt_id("src"), 0, STATMOUNT_MNT_BASIC) == 0);
	CHECK(!(u.sm.mask & (STATMOUNT_SB_SOURCE | STATMOUNT_FS_SUBTYPE)));
	/* /proc's source as mountinfo shows it (the guest mounts "proc"). */
	CHECK(do_statmount(mnt_id("/proc"), 0, STATMOUNT_SB_SOURCE) == 0);
	s = str(STATMOUNT_SB_SOURCE, u.sm.sb_source);
	CHECK(s && !strcmp(s, "proc"));
	/* A buffer too small for the strings: EOVERFLOW, as for the others. */
	{
		struct mr_mnt_id_req req = {
			.size = MR_MNT_ID_REQ_SIZE_VER1,
			.mnt_id = mnt_id("src"),
			.param = STATMOUNT_SB_SOURCE,
		};

		errno = 0;
		CHECK(syscall(__NR_statmount, &req, &u.sm, sizeof(u.sm) + 4, 0) < 0 &&
		      errno == EOVERFLOW);
	}
	CHECK(umount("src") == 0);
	return T_PASS;
}

static uint64_t ns_id_of(pid_t pid)
{
	char p[64];
	uint64_t id = 0;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/ns/mnt", (int)pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (ioctl(fd, NS_GET_MNTNS_ID, &id) < 0)
		id = 0;
	close(fd);
	return id;
}

static int test_foreign_ns(void)
{
	int up[2], down[2], status, found = 0, nr;
	uint64_t id = 0, nsid, ids[256];
	const char *s;
	pid_t pid;
	char c;

	CHECK(pipe(up) == 0 && pipe(down) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(up[0]);
		close(down[1]);
		if (unshare(CLONE_NEWNS) < 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			_exit(2);
		mkdir("/tmp", 0755);
		mkdir("/tmp/x", 0755);
		if (mount("hello", "/tmp/x", "tmpfs", 0, NULL) < 0)
			_exit(3);
		id = mnt_id("/tmp/x");
		if (write(up[1], &id, sizeof(id)) != sizeof(id))
			_exit(4);
		/* Stay, and keep the namespace, until the parent is done. */
		_exit(read(down[0], &c, 1) < 0 ? 5 : 0);
	}
	close(up[1]);
	close(down[0]);
	CHECK(read(up[0], &id, sizeof(id)) == sizeof(id) && id);
	nsid = ns_id_of(pid);
	CHECK(nsid);
	CHECK(nsid != ns_id_of(getpid()));

	/* Not in our namespace. */
	errno = 0;
	CHECK(do_statmount(id, 0, STATMOUNT_MNT_BASIC) < 0 && errno == ENOENT);

	CHECK(do_statmount(id, nsid, WANT | STATMOUNT_MNT_NS_ID) == 0);
	CHECK(u.sm.mnt_id == id && u.sm.mnt_ns_id == nsid);
	s = str(STATMOUNT_MNT_POINT, u.sm.mnt_point);
	if (!s || strcmp(s, "/tmp/x"))
		FAILF("foreign mnt_point %s%s%s, want \"/tmp/x\"", s ? "\"" : "",
		      s ? s : "(bit clear)", s ? "\"" : "");
	s = str(STATMOUNT_SB_SOURCE, u.sm.sb_source);
	if (!s || strcmp(s, "hello"))
		FAILF("foreign sb_source \"%s\", want \"hello\"", s ? s : "(bit clear)");

	/* listmount(LSMT_ROOT) of that namespace: all of it, /tmp/x included,
	 * every mount with a path; the copy of /tmp is at /tmp. */
	{
		struct mr_mnt_id_req req = {
			.size = MR_MNT_ID_REQ_SIZE_VER1,
			.mnt_id = LSMT_ROOT,
			.mnt_ns_id = nsid,
		};
		int tmp = 0, proc = 0;

		nr = syscall(__NR_listmount, &req, ids, 256, 0);
		CHECK(nr > 0);
		for (int i = 0; i < nr; i++) {
			CHECK(do_statmount(ids[i], nsid, STATMOUNT_MNT_POINT) == 0);
			s = str(STATMOUNT_MNT_POINT, u.sm.mnt_point);
			if (!s || !*s)
				FAILF("foreign mount %llu listed without a path",
				      (unsigned long long)ids[i]);
			found += ids[i] == id;
			tmp += !strcmp(s, "/tmp");
			proc += !strcmp(s, "/proc");
		}
		if (found != 1 || tmp != 1 || proc != 1)
			FAILF("listmount of the namespace: %d mounts, /tmp/x %d, "
			      "/tmp %d, /proc %d times", nr, found, tmp, proc);
	}

	CHECK(write(down[1], "x", 1) == 1);
	CHECK(waitpid(pid, &status, 0) == pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		FAILF("child status %#x", status);
	close(up[0]);
	close(down[1]);
	/* The namespace is gone with its last process. */
	errno = 0;
	CHECK(do_statmount(id, nsid, STATMOUNT_MNT_BASIC) < 0 && errno == ENOENT);
	return T_PASS;
}

int main(void)
{
	setup_ns();
	RUN(test_sb_source);
	RUN(test_foreign_ns);
	return T_PASS;
}
