/* SPDX-License-Identifier: MIT */
/*
 * What the running kernel offers, found by asking it (never by version
 * number: distributions backport), once per process.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/fanotify.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "probe.h"
#include "io/io_uring_compat.h"
#include "mountrouter-uapi.h"

static struct mr__features features;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void probe_listmount(void)
{
	struct mr_mnt_id_req req = {.size = MR_MNT_ID_REQ_SIZE_VER0, .mnt_id = LSMT_ROOT};
	uint64_t ids[1];

	/* listmount of the root with room for one ID: cheap, always allowed. */
	features.listmount = syscall(__NR_listmount, &req, ids, 1, 0) >= 0;

	req.size = MR_MNT_ID_REQ_SIZE_VER1;
	features.statmount_ns = features.listmount && syscall(__NR_listmount, &req, ids, 1, 0) >= 0;
	if (!features.listmount)
		return;

	/* Unknown listmount flags are EINVAL: LISTMOUNT_REVERSE is 6.11. */
	req.size = MR_MNT_ID_REQ_SIZE_VER0;
	features.listmount_reverse = syscall(__NR_listmount, &req, ids, 1, LISTMOUNT_REVERSE) >= 0;

	/* statmount of the first mount listed, asking for its options (6.11). */
	if (syscall(__NR_listmount, &req, ids, 1, 0) == 1) {
		struct mr_mnt_id_req sreq = {.size = MR_MNT_ID_REQ_SIZE_VER0, .mnt_id = ids[0],
					     .param = STATMOUNT_MNT_OPTS};
		union {
			struct mr_statmount sm;
			char room[sizeof(struct mr_statmount) + 4096];
		} u;
		/*
		 * A kernel ignores mask bits it does not know (6.12 does), and
		 * clears one whose string is empty: the root mount's options and
		 * source are not.  EOVERFLOW: the string did not fit, but the
		 * kernel knows it.
		 */
		long rc = syscall(__NR_statmount, &sreq, &u, sizeof(u), 0);
		features.statmount_opts =
			(rc == 0 && (u.sm.mask & STATMOUNT_MNT_OPTS)) || (rc < 0 && errno == EOVERFLOW);
		sreq.param = STATMOUNT_SB_SOURCE;
		rc = syscall(__NR_statmount, &sreq, &u, sizeof(u), 0);
		features.statmount_sb_source =
			(rc == 0 && (u.sm.mask & STATMOUNT_SB_SOURCE)) || (rc < 0 && errno == EOVERFLOW);
	}
}

static void probe_fanotify(void)
{
	int fd = fanotify_init(FAN_REPORT_MNT | FAN_CLOEXEC | FAN_NONBLOCK, 0);

	if (fd < 0) {
		/* EINVAL: the kernel predates FAN_REPORT_MNT (6.15). */
		features.fanotify_err = errno == EINVAL ? -ENOSYS : -errno;
		return;
	}
	int ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (ns < 0) {
		features.fanotify_err = -errno;
	} else if (fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_MNTNS, FAN_MNT_ATTACH | FAN_MNT_DETACH,
				 ns, NULL) < 0) {
		features.fanotify_err = errno == EINVAL ? -ENOSYS : -errno;
	} else {
		features.fanotify_mnt = true;
		/*
		 * The attribute event is asked for on its own: a kernel without
		 * it refuses the unknown mask bit with EINVAL and leaves the
		 * attach/detach mark as it was.
		 */
		features.fanotify_mnt_attr =
			fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_MNTNS, FAN_MNT_ATTR_CHANGE, ns,
				      NULL) == 0;
	}
	if (ns >= 0)
		close(ns);
	close(fd);
}

static void probe_mntns_id(void)
{
	int ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);

	if (ns < 0)
		return;
	features.mntns_id = ioctl(ns, NS_GET_MNTNS_ID, &(uint64_t){0}) == 0;

	/* An fd of the next namespace, or ENOENT after the last; older kernels ENOTTY. */
	struct mr_mnt_ns_info info = {.size = MR_MNT_NS_INFO_SIZE_VER0};
	int next = ioctl(ns, NS_MNT_GET_NEXT, &info);
	features.ns_mnt_next = next >= 0 || errno == ENOENT;
	if (next >= 0)
		close(next);
	close(ns);
}

static void probe_watch_mount(void)
{
	int fds[2];

	/* ENOPKG: CONFIG_WATCH_QUEUE is off. */
	if (pipe2(fds, O_NOTIFICATION_PIPE | O_CLOEXEC) < 0) {
		features.watch_mount_err = -ENOSYS;
		return;
	}
	features.notification_pipe = true;
#ifdef __NR_watch_mount
	/*
	 * Watch ID -1 removes a watch: on a fresh pipe the patched kernel says
	 * ENOENT (nothing to remove), an unpatched one ENOSYS.
	 */
	long r = syscall(__NR_watch_mount, AT_FDCWD, "/", 0, fds[0], -1);
	if (r == 0 || errno == ENOENT || errno == EBADSLT)
		features.watch_mount = true;
	else
		features.watch_mount_err = errno == ENOSYS ? -ENOSYS : -errno;
#else
	features.watch_mount_err = -ENOSYS;
#endif
	close(fds[0]);
	close(fds[1]);
}

static void probe_io_uring(void)
{
	struct io_uring_probe *p = io_uring_get_probe();

	if (!p)
		return;
	features.read_multishot = io_uring_opcode_supported(p, IORING_OP_READ_MULTISHOT);
	features.buf_ring = io_uring_opcode_supported(p, IORING_OP_PROVIDE_BUFFERS);
	io_uring_free_probe(p);
}

static void probe_all(void)
{
	probe_listmount();
	probe_mntns_id();
	probe_fanotify();
	probe_watch_mount();
	probe_io_uring();
}

const struct mr__features *mr__probe(void)
{
	pthread_once(&once, probe_all);
	return &features;
}
