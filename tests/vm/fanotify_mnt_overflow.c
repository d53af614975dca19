/* SPDX-License-Identifier: MIT */
/*
 * A full fanotify queue of mount events still ends in FAN_Q_OVERFLOW
 * (kernel patches 0020, 0021): with fs.fanotify.max_queued_events at 16,
 * a recursive attribute change of 24 mounts leaves 16 attribute events and
 * one overflow event, last; a burst of attaches does the same; once read,
 * the queue takes events again, one per change.
 */
#include "fanmnt.h"

#define MAXQ 16
#define MOUNTS 24
#define SYSCTL "/proc/sys/fs/fanotify/max_queued_events"

static int sysctl_rw(const char *val, char *old, size_t oldsz)
{
	int fd = open(SYSCTL, O_RDWR | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	if (old) {
		n = read(fd, old, oldsz - 1);
		if (n <= 0) {
			close(fd);
			return -1;
		}
		old[n] = 0;
	}
	/* a sysctl ignores writes past offset 0 */
	n = pwrite(fd, val, strlen(val), 0);
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/* @n events: MAXQ of @mask on distinct mounts, then FAN_Q_OVERFLOW. */
static int check_overflow(const struct fev *e, int n, uint64_t mask)
{
	if (n != MAXQ + 1 || e[MAXQ].mask != FAN_Q_OVERFLOW || e[MAXQ].id) {
		fan_dump(e, n > MAXQ + 4 ? MAXQ + 4 : n);
		FAILF("%d events, want %d and an overflow last", n, MAXQ);
	}
	for (int i = 0; i < MAXQ; i++) {
		if (e[i].mask != mask || !e[i].id)
			FAILF("event %d: mask %#llx id %llu", i, (unsigned long long)e[i].mask,
			      (unsigned long long)e[i].id);
		for (int j = 0; j < i; j++)
			if (e[j].id == e[i].id)
				FAILF("mount %llu reported twice", (unsigned long long)e[i].id);
	}
	return T_PASS;
}

int main(void)
{
	struct mount_attr a = { .attr_set = MOUNT_ATTR_NOSUID };
	struct fev e[MAXQ + 8];
	char old[32], p[32];
	uint64_t id;
	int g, n;

	fan_setup_ns();
	if (access(SYSCTL, W_OK) < 0) {
		printf("skip: no %s to shrink the queue with\n", SYSCTL);
		return T_SKIP;
	}
	CHECK(sysctl_rw("16", old, sizeof(old)) == 0);
	g = fan_group();
	CHECK(sysctl_rw(old, NULL, 0) == 0); /* read at fanotify_init() */
	CHECK(g >= 0);
	if (fan_mark_ns(g, FAN_MARK_ADD, ALL_MNT_EVENTS | FAN_MNT_ATTR_CHANGE, -1) < 0) {
		if (errno != EINVAL)
			FAILF("fanotify_mark: %s", strerror(errno));
		/* Without 0021: attach/detach alone. */
		CHECK(fan_mark_ns(g, FAN_MARK_ADD, ALL_MNT_EVENTS, -1) == 0);
		a.attr_set = 0;
	}

	/* Attaches: MOUNTS of them into a queue of MAXQ. */
	CHECK(mount_tmpfs("t", 0) == 0);
	for (int i = 1; i < MOUNTS; i++) {
		snprintf(p, sizeof(p), "t/%d", i);
		CHECK(mount_tmpfs(p, 0) == 0);
	}
	n = fan_read(g, e, MAXQ + 8);
	if (check_overflow(e, n, FAN_MNT_ATTACH))
		return T_FAIL;

	/* Read, it takes events again. */
	id = mnt_id("t/1");
	CHECK(id && umount("t/1") == 0);
	if (fan_expect1(g, FAN_MNT_DETACH, id))
		return T_FAIL;
	if (a.attr_set) {
		/* One recursive change of MOUNTS - 1 mounts in one syscall. */
		CHECK(mount_setattr(AT_FDCWD, "t", AT_RECURSIVE, &a, sizeof(a)) == 0);
		n = fan_read(g, e, MAXQ + 8);
		if (check_overflow(e, n, FAN_MNT_ATTR_CHANGE))
			return T_FAIL;
		CHECK(set_attr("t/2", MOUNT_ATTR_NODEV, 0) == 0);
		if (fan_expect1(g, FAN_MNT_ATTR_CHANGE, mnt_id("t/2")))
			return T_FAIL;
	}
	CHECK(umount2("t", MNT_DETACH) == 0);
	CHECK(fan_read(g, e, MAXQ + 8) == MAXQ + 1 && e[MAXQ].mask == FAN_Q_OVERFLOW);
	close(g);
	return T_PASS;
}
