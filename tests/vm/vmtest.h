/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the in-VM kernel tests (tests/vm/): they run as root in
 * the guest that kernel/vm/run.sh boots, on the kernel kernel/build.sh
 * builds.  Only libc and include/mountrouter-uapi.h; every binary is static.
 *
 * Exit codes: 0 pass, 1 fail, 77 skip (a skip prints one line saying why).
 */
#ifndef MR_VMTEST_H
#define MR_VMTEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "mountrouter-uapi.h"

#define T_PASS 0
#define T_FAIL 1
#define T_SKIP 77

/* include/uapi/linux/stat.h, Linux 6.8 */
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U
#endif
/* include/uapi/linux/mount.h, Linux 5.2 / 5.12 */
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

#define FAILF(...)                                                         \
	do {                                                               \
		fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);            \
		fprintf(stderr, __VA_ARGS__);                              \
		fputc('\n', stderr);                                       \
		return T_FAIL;                                             \
	} while (0)
#define CHECK(cond)                                                        \
	do {                                                               \
		if (!(cond))                                               \
			FAILF("check failed: %s (errno %d %s)", #cond,     \
			      errno, strerror(errno));                     \
	} while (0)
/* Run one test_x(); stop at the first failure, skip propagates. */
#define RUN(fn)                                                            \
	do {                                                               \
		int _r = fn();                                             \
		if (_r != T_PASS) {                                        \
			if (_r == T_FAIL)                                  \
				fprintf(stderr, "FAIL %s\n", #fn);         \
			return _r;                                         \
		}                                                          \
		fprintf(stderr, "ok   %s\n", #fn);                         \
	} while (0)

static inline int watch_mount(int dfd, const char *path, unsigned int at_flags,
			      int watch_fd, int watch_id)
{
	return syscall(__NR_watch_mount, dfd, path, at_flags, watch_fd,
		       watch_id);
}

/* mount_setattr(2) (5.12) setting and clearing MOUNT_ATTR_* bits. */
static inline int set_attr(const char *path, uint64_t set, uint64_t clr)
{
	struct mount_attr a = { .attr_set = set, .attr_clr = clr };

	return mount_setattr(AT_FDCWD, path, 0, &a, sizeof(a));
}

/* The unique 64-bit mount ID of the mount at @path. */
static inline uint64_t mnt_id(const char *path)
{
	struct statx sx;

	if (statx(AT_FDCWD, path, 0, STATX_MNT_ID_UNIQUE, &sx) < 0 ||
	    !(sx.stx_mask & STATX_MNT_ID_UNIQUE))
		return 0;
	return sx.stx_mnt_id;
}

/*
 * A notification pipe with room for @notes records, read end non-blocking.
 * Returns the write end (what watch_mount() takes); *rfd gets the read end.
 * Exits 77 if the kernel has no watch queues or no watch_mount().
 */
static inline int make_queue(int notes, int *rfd)
{
	int fds[2];

	if (pipe2(fds, O_NOTIFICATION_PIPE | O_NONBLOCK) < 0) {
		if (errno == ENOPKG || errno == EINVAL) {
			printf("skip: no notification pipes (CONFIG_WATCH_QUEUE)\n");
			exit(T_SKIP);
		}
		perror("pipe2");
		exit(T_FAIL);
	}
	if (ioctl(fds[0], IOC_WATCH_QUEUE_SET_SIZE, notes) < 0) {
		perror("IOC_WATCH_QUEUE_SET_SIZE");
		exit(T_FAIL);
	}
	*rfd = fds[0];
	return fds[1];
}

/* Accept only mount notifications whose subtype bit is in @subtypes. */
static inline int set_filter(int wfd, uint32_t subtypes)
{
	struct {
		struct watch_notification_filter f;
		struct watch_notification_type_filter t[2];
	} flt;

	memset(&flt, 0, sizeof(flt));
	flt.f.nr_filters = 2;
	flt.f.filters[0].type = WATCH_TYPE_MOUNT_NOTIFY;
	flt.f.filters[0].subtype_filter[0] = subtypes;
	/* Keep removal and loss records flowing. */
	flt.f.filters[1].type = WATCH_TYPE_META;
	flt.f.filters[1].subtype_filter[0] = ~0u;
	return ioctl(wfd, IOC_WATCH_QUEUE_SET_FILTER, &flt.f);
}

/* A decoded record. */
struct note {
	unsigned int type, subtype, info, len;
	uint64_t a, b; /* mount: triggered_on, auxiliary_mount; removal: id */
};

/* Drain the queue into @out (at most @max).  Returns the count, or -1. */
static inline int read_notes(int rfd, struct note *out, int max)
{
	unsigned char buf[4096];
	int n = 0;

	for (;;) {
		ssize_t len = read(rfd, buf, sizeof(buf));
		ssize_t off = 0;

		if (len < 0 && errno == EAGAIN)
			return n;
		if (len <= 0)
			return -1;
		while (off < len) {
			struct watch_notification *w = (void *)(buf + off);
			unsigned int rl = w->info & WATCH_INFO_LENGTH;
			struct note nt = { w->type, w->subtype, w->info, rl, 0, 0 };

			if (rl < sizeof(*w) || off + rl > len)
				return -1;
			if (w->type == WATCH_TYPE_MOUNT_NOTIFY &&
			    rl >= sizeof(struct mount_notification)) {
				struct mount_notification *m = (void *)w;

				nt.a = m->triggered_on;
				nt.b = m->auxiliary_mount;
			} else if (w->type == WATCH_TYPE_META &&
				   w->subtype == WATCH_META_REMOVAL_NOTIFICATION &&
				   rl >= sizeof(struct watch_notification_removal)) {
				nt.a = ((struct watch_notification_removal *)w)->id;
			}
			if (n < max)
				out[n++] = nt;
			off += rl;
		}
	}
}

static inline const char *subtype_name(unsigned int s)
{
	static const char *const names[] = { "new", "unmount", "expiry",
		"readonly", "setattr", "move_from", "move_to" };

	return s < 7 ? names[s] : "?";
}

static inline void dump_notes(const struct note *n, int nr)
{
	for (int i = 0; i < nr; i++)
		fprintf(stderr, "  note type %u %s info %#x on %llu aux %llu\n",
			n[i].type,
			n[i].type == WATCH_TYPE_MOUNT_NOTIFY ?
				subtype_name(n[i].subtype) : "meta",
			n[i].info, (unsigned long long)n[i].a,
			(unsigned long long)n[i].b);
}

/* Index of the first mount record with @subtype at or after @from, or -1. */
/*
 * Expects record @i of @n (of @nr) to be @subtype on @on with aux @aux,
 * watch ID @wid and exactly the info flags @flags; dumps them all if not.
 */
static inline int expect_note(const struct note *n, int nr, int i, unsigned int subtype,
			      uint64_t on, uint64_t aux, unsigned int flags, unsigned int wid)
{
	unsigned int want = flags | (wid << WATCH_INFO_ID__SHIFT) |
			    sizeof(struct mount_notification);

	if (i >= nr || n[i].type != WATCH_TYPE_MOUNT_NOTIFY ||
	    n[i].subtype != subtype || n[i].a != on || n[i].b != aux ||
	    n[i].info != want) {
		dump_notes(n, nr);
		FAILF("record %d: want %s on %llu aux %llu info %#x", i,
		      subtype_name(subtype), (unsigned long long)on,
		      (unsigned long long)aux, want);
	}
	return T_PASS;
}

static inline int find_note(const struct note *n, int nr, int from,
			    unsigned int subtype)
{
	for (int i = from; i < nr; i++)
		if (n[i].type == WATCH_TYPE_MOUNT_NOTIFY && n[i].subtype == subtype)
			return i;
	return -1;
}

/*
 * A private mount namespace with a fresh tmpfs at /tmp/vt as the scratch
 * root; the working directory ends up there.  Never touches the guest's
 * real mount table.  Exits 77 if watch_mount() is missing.
 */
static inline void setup_ns(void)
{
	int rfd, wfd;

	if (unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		perror("unshare/make-private");
		exit(T_FAIL);
	}
	mkdir("/tmp/vt", 0755);
	if (mount("vt", "/tmp/vt", "tmpfs", 0, NULL) < 0 ||
	    chdir("/tmp/vt") < 0) {
		perror("mount tmpfs");
		exit(T_FAIL);
	}
	wfd = make_queue(16, &rfd);
	if (watch_mount(AT_FDCWD, ".", 0, wfd, 0) < 0 && errno == ENOSYS) {
		printf("skip: kernel has no watch_mount() (CONFIG_MOUNT_NOTIFICATIONS)\n");
		exit(T_SKIP);
	}
	close(wfd);
	close(rfd);
}

static inline int mount_tmpfs(const char *dir, unsigned long flags)
{
	mkdir(dir, 0755);
	return mount("vt", dir, "tmpfs", flags, NULL);
}

#endif /* MR_VMTEST_H */
