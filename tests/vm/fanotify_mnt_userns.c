/* SPDX-License-Identifier: MIT */
/*
 * Who may watch which mount namespace (kernel patches 0020, 0021), the same
 * for FAN_MNT_ATTR_CHANGE as for FAN_MNT_ATTACH/DETACH, as Linux 6.15 rules:
 *  - without CAP_SYS_ADMIN, fanotify_init(FAN_REPORT_MNT) works but a mark
 *    on a namespace owned by the initial user namespace is EPERM;
 *  - the root of a new user namespace marks its own mount namespace and
 *    gets attach, attribute and detach events of it;
 *  - it may not mark its parent's mount namespace (EPERM), nor use a group
 *    made outside its user namespace (EPERM).
 * Each case runs in a child as uid/gid 65534; the child's exit code names
 * the first check that failed.
 */
#include "fanmnt.h"
#include <grp.h>
#include <sys/prctl.h>

#define NOBODY 65534

static uint64_t attr_bit = FAN_MNT_ATTR_CHANGE;

static int drop_privileges(void)
{
	/* dumpable again after the uid change: /proc/self stays ours */
	return setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	       setresuid(NOBODY, NOBODY, NOBODY) ||
	       prctl(PR_SET_DUMPABLE, 1) ? -1 : 0;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : write(fd, s, strlen(s));

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* Run @fn in a child; its exit code 0 passes, others name the failed step. */
static int in_child(const char *what, int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0)
		_exit(fn());
	CHECK(waitpid(pid, &status, 0) == pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		FAILF("%s: child failed at step %d", what,
		      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return T_PASS;
}

/* Mark attempts expected to fail with EPERM, for each kind of event. */
static int all_eperm(int g, int nsfd)
{
	uint64_t masks[] = { FAN_MNT_ATTACH, FAN_MNT_DETACH, attr_bit };

	for (unsigned int i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		if (!masks[i])
			continue;
		errno = 0;
		if (fan_mark_ns(g, FAN_MARK_ADD, masks[i], nsfd) == 0 || errno != EPERM) {
			fprintf(stderr, "mask %#llx: %s, want EPERM\n",
				(unsigned long long)masks[i], strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int unprivileged(void)
{
	int g;

	if (drop_privileges())
		return 2;
	g = fanotify_init(FAN_REPORT_MNT | FAN_NONBLOCK, 0);
	if (g < 0) {
		fprintf(stderr, "unprivileged fanotify_init: %s\n", strerror(errno));
		return 3;
	}
	return all_eperm(g, -1) ? 4 : 0;
}

static int userns(void)
{
	int outer_ns, outer_grp, g;
	struct fev e[8];
	uint64_t id;
	int n;

	if (drop_privileges())
		return 2;
	outer_ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	outer_grp = fanotify_init(FAN_REPORT_MNT | FAN_NONBLOCK, 0);
	if (outer_ns < 0 || outer_grp < 0)
		return 3;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
		fprintf(stderr, "unshare(CLONE_NEWUSER|CLONE_NEWNS): %s\n", strerror(errno));
		return 4;
	}
	if (write_file("/proc/self/setgroups", "deny") ||
	    write_file("/proc/self/uid_map", "0 65534 1") ||
	    write_file("/proc/self/gid_map", "0 65534 1"))
		return 5;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return 6;

	/* The parent's namespace: not ours to watch. */
	g = fanotify_init(FAN_REPORT_MNT | FAN_NONBLOCK, 0);
	if (g < 0)
		return 7;
	if (all_eperm(g, outer_ns))
		return 8;
	/* A group made outside: not ours to mark with. */
	if (all_eperm(outer_grp, -1))
		return 9;

	/* Our own: every event. */
	if (fan_mark_ns(g, FAN_MARK_ADD, ALL_MNT_EVENTS | attr_bit, -1) < 0) {
		fprintf(stderr, "mark own namespace: %s\n", strerror(errno));
		return 10;
	}
	if (mount("u", "/tmp/vt/u", "tmpfs", 0, NULL) < 0)
		return 11;
	id = mnt_id("/tmp/vt/u");
	n = fan_read(g, e, 8);
	if (n != 1 || e[0].mask != FAN_MNT_ATTACH || e[0].id != id)
		return 12;
	if (attr_bit) {
		if (set_attr("/tmp/vt/u", MOUNT_ATTR_NOSUID, 0) < 0)
			return 13;
		n = fan_read(g, e, 8);
		if (n != 1 || e[0].mask != FAN_MNT_ATTR_CHANGE || e[0].id != id)
			return 14;
	}
	if (umount("/tmp/vt/u") < 0)
		return 15;
	n = fan_read(g, e, 8);
	if (n != 1 || e[0].mask != FAN_MNT_DETACH || e[0].id != id)
		return 16;
	return 0;
}

int main(void)
{
	int g;

	fan_setup_ns();
	CHECK(mkdir("u", 0755) == 0);
	g = fan_group();
	CHECK(g >= 0);
	if (fan_mark_ns(g, FAN_MARK_ADD, FAN_MNT_ATTR_CHANGE, -1) < 0) {
		if (errno != EINVAL)
			FAILF("fanotify_mark: %s", strerror(errno));
		attr_bit = 0; /* without 0021: attach and detach only */
	}
	close(g);
	/* Debian's knob for unprivileged user namespaces, if off (guest only) */
	if (access("/proc/sys/kernel/unprivileged_userns_clone", F_OK) == 0)
		CHECK(write_file("/proc/sys/kernel/unprivileged_userns_clone", "1") == 0);
	if (in_child("unprivileged", unprivileged) ||
	    in_child("user namespace", userns))
		return T_FAIL;
	fprintf(stderr, "ok   unprivileged, user namespace%s\n",
		attr_bit ? " (with FAN_MNT_ATTR_CHANGE)" : "");
	return T_PASS;
}
