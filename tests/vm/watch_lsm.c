/* SPDX-License-Identifier: MIT */
/*
 * An LSM refusing a watch: the security_watch_mount() hook (patch 0002) as
 * the test kernel's test-only LSM (patch 0030) drives it.  That LSM refuses
 * the watches of the user ID written to
 * /sys/kernel/security/watch_mount_test/deny_uid (-1: nobody).
 *
 * With the knob off a watch is set and records arrive; with it on
 * watch_mount() fails with exactly EACCES, no watch is set (no record for a
 * later mount, nothing to remove) and other users are not refused; a watch
 * set before the refusal keeps its records (the LSM is asked when a watch
 * is set, not per record); turned off again, watches are set once more.
 * Exits 77 if the kernel lacks the LSM (not built, or not in CONFIG_LSM).
 */
#include "vmtest.h"

#define KNOB "/sys/kernel/security/watch_mount_test/deny_uid"
#define MAXN 16

static struct note n[MAXN];

static int set_deny(int uid)
{
	char buf[16];
	int fd = open(KNOB, O_WRONLY | O_CLOEXEC), len, ok;

	if (fd < 0)
		return -1;
	len = snprintf(buf, sizeof(buf), "%d", uid);
	ok = write(fd, buf, len) == len;
	close(fd);
	return ok ? 0 : -1;
}

static int get_deny(void)
{
	char buf[16] = "";
	int fd = open(KNOB, O_RDONLY | O_CLOEXEC);
	ssize_t len;

	if (fd < 0)
		return -2;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return len > 0 ? atoi(buf) : -2;
}

/* The knob is global: never leave it refusing when this program ends. */
static void reset_knob(void)
{
	set_deny(-1);
}

/* How many records reached @rfd, all of them NEW_MOUNT of mount @m; -1 if any other. */
static int count_new(int rfd, uint64_t m)
{
	int nr = read_notes(rfd, n, MAXN);

	if (nr < 0)
		return -1;
	for (int i = 0; i < nr; i++)
		if (n[i].type != WATCH_TYPE_MOUNT_NOTIFY ||
		    n[i].subtype != NOTIFY_MOUNT_NEW_MOUNT || n[i].b != m) {
			dump_notes(n, nr);
			return -1;
		}
	return nr;
}

/*
 * Mounts a tmpfs on @dir and returns how many records for it reached @rfd;
 * the kernel has posted them by the time mount(2) returns.
 */
static int mount_and_count(const char *dir, int rfd)
{
	if (mount_tmpfs(dir, 0) < 0)
		return -1;
	return count_new(rfd, mnt_id(dir));
}

static int test_knob(void)
{
	int fd;

	CHECK(get_deny() == -1);
	CHECK(set_deny(0) == 0);
	CHECK(get_deny() == 0);
	CHECK(set_deny(-1) == 0);
	CHECK(get_deny() == -1);
	fd = open(KNOB, O_WRONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	errno = 0;
	CHECK(write(fd, "root", 4) < 0 && errno == EINVAL);
	close(fd);
	CHECK(get_deny() == -1);
	return T_PASS;
}

static int test_allowed(void)
{
	int r, w = make_queue(16, &r);

	CHECK(mkdir("off", 0755) == 0);
	CHECK(watch_mount(AT_FDCWD, "off", 0, w, 1) == 0);
	CHECK(mount_and_count("off/a", r) == 1);
	close(w);
	close(r);
	return T_PASS;
}

static int test_denied(void)
{
	int r, w = make_queue(16, &r), r0, w0 = make_queue(16, &r0);

	CHECK(mkdir("on", 0755) == 0);
	/* Set while allowed: it must outlive the refusal below. */
	CHECK(watch_mount(AT_FDCWD, "on", 0, w0, 3) == 0);
	CHECK(set_deny(0) == 0);
	errno = 0;
	if (watch_mount(AT_FDCWD, "on", 0, w, 2) == 0 || errno != EACCES)
		FAILF("watch while refused: want EACCES, got %s",
		      errno ? strerror(errno) : "success");
	/* No watch was set: nothing to remove, no record for a new mount. */
	errno = 0;
	CHECK(watch_mount(AT_FDCWD, "on", 0, w, -1) < 0 && errno == EBADSLT);
	CHECK(mount_and_count("on/b", r) == 0);
	CHECK(count_new(r0, mnt_id("on/b")) == 1);
	CHECK(set_deny(-1) == 0);
	close(w);
	close(r);
	close(w0);
	close(r0);
	return T_PASS;
}

/* Only the named user is refused; the check is on the setter's euid. */
static int child_watch(int want_errno)
{
	int r, w = make_queue(16, &r);

	if (setgid(65534) < 0 || setuid(65534) < 0)
		FAILF("setuid: %s", strerror(errno));
	errno = 0;
	if (want_errno == 0) {
		CHECK(watch_mount(AT_FDCWD, "users", 0, w, 4) == 0);
		return T_PASS;
	}
	if (watch_mount(AT_FDCWD, "users", 0, w, 4) == 0 || errno != want_errno)
		FAILF("uid 65534: want %s, got %s", strerror(want_errno),
		      errno ? strerror(errno) : "success");
	return T_PASS;
}

static int run_child(int want_errno)
{
	int status;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0)
		_exit(child_watch(want_errno));
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return T_PASS;
}

static int test_per_user(void)
{
	int r, w = make_queue(16, &r);

	CHECK(mkdir("users", 0755) == 0);
	CHECK(set_deny(0) == 0);
	if (run_child(0))
		return T_FAIL;
	CHECK(set_deny(65534) == 0);
	if (run_child(EACCES))
		return T_FAIL;
	CHECK(watch_mount(AT_FDCWD, "users", 0, w, 5) == 0);
	CHECK(set_deny(-1) == 0);
	if (run_child(0))
		return T_FAIL;
	close(w);
	close(r);
	return T_PASS;
}

static int test_allowed_again(void)
{
	int r, w = make_queue(16, &r);

	CHECK(set_deny(0) == 0);
	CHECK(watch_mount(AT_FDCWD, "off", 0, w, 6) < 0 && errno == EACCES);
	CHECK(set_deny(-1) == 0);
	CHECK(watch_mount(AT_FDCWD, "off", 0, w, 6) == 0);
	CHECK(mount_and_count("off/d", r) == 1);
	close(w);
	close(r);
	return T_PASS;
}

int main(void)
{
	setup_ns();
	/* securityfs in this private namespace; EBUSY: already there. */
	if (mount("securityfs", "/sys/kernel/security", "securityfs", 0, NULL) < 0 &&
	    errno != EBUSY) {
		printf("skip: no securityfs (CONFIG_SECURITYFS): %s\n", strerror(errno));
		return T_SKIP;
	}
	if (access(KNOB, F_OK) < 0) {
		printf("skip: no watch_mount_test LSM (patch 0030, CONFIG_LSM)\n");
		return T_SKIP;
	}
	atexit(reset_knob);
	CHECK(chmod(".", 0755) == 0);
	RUN(test_knob);
	RUN(test_allowed);
	RUN(test_denied);
	RUN(test_per_user);
	RUN(test_allowed_again);
	return T_PASS;
}
