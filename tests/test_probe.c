/* SPDX-License-Identifier: MIT */
/*
 * The probe's fanotify feature bits agree with what the kernel does: when
 * it says FAN_MNT_ATTR_CHANGE is there (the project's kernel, patch 0021),
 * a mount_setattr(2) in a marked namespace brings that event with the
 * mount's ID; when it says not (mainline), a mark asking for the bit fails
 * with EINVAL.  Likewise for the attach/detach events it rests on.  Run on
 * the host (test_probe) and in the VM (vm_probe).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "probe.h"
#include "mountrouter-uapi.h"
#include "testutil.h"

static int mark_ns(int fd, uint64_t mask)
{
	int ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	int r = ns < 0 ? -1 : fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_MNTNS, mask, ns, NULL);
	int e = errno;

	if (ns >= 0)
		close(ns);
	errno = e;
	return r;
}

/* Waits for one event on @fd; its mask and mount ID, or -1. */
static int one_event(int fd, uint64_t *mask, uint64_t *id)
{
	char buf[256] __attribute__((aligned(8)));
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct fanotify_event_metadata *m = (void *)buf;
	const struct mr_fanotify_info_mnt *i = (const void *)(m + 1);
	ssize_t n;

	if (poll(&p, 1, 5000) != 1)
		return -1;
	n = read(fd, buf, sizeof(buf));
	if (n < (ssize_t)(sizeof(*m) + sizeof(*i)) || m->event_len != sizeof(*m) + sizeof(*i) ||
	    i->info_type != FAN_EVENT_INFO_TYPE_MNT)
		return -1;
	*mask = m->mask;
	*id = i->mnt_id;
	return 0;
}

static int test_attr_probe(void)
{
	const struct mr__features *f = mr__probe();
	char root[256], sub[300];
	uint64_t mask, id;
	int fd, rc;

	rc = tu_private_root(root, sizeof(root));
	if (rc)
		return rc;
	fd = fanotify_init(FAN_REPORT_MNT | FAN_CLOEXEC | FAN_NONBLOCK, 0);
	if (!f->fanotify_mnt) {
		/* No mount events: no attribute events either. */
		CHECK(!f->fanotify_mnt_attr);
		CHECK(fd < 0 || mark_ns(fd, FAN_MNT_ATTACH) < 0);
		return tu_skip("kernel has no fanotify mount events");
	}
	CHECK(fd >= 0);
	if (!f->fanotify_mnt_attr) {
		errno = 0;
		CHECK(mark_ns(fd, FAN_MNT_ATTR_CHANGE) < 0 && errno == EINVAL);
		CHECK(mark_ns(fd, FAN_MNT_ATTACH) == 0);
		close(fd);
		return T_EXIT_PASS;
	}
	CHECK(mark_ns(fd, FAN_MNT_ATTR_CHANGE | FAN_MNT_ATTACH) == 0);
	tu_path(sub, sizeof(sub), root, "a");
	CHECK(tu_mkdir(sub) == 0);
	CHECK(mount("probe", sub, "tmpfs", 0, NULL) == 0);
	CHECK(one_event(fd, &mask, &id) == 0);
	CHECK_EQ_U64(mask, FAN_MNT_ATTACH);
	CHECK_EQ_U64(id, tu_mnt_id(sub));
	CHECK(mount(NULL, sub, NULL, MS_REMOUNT | MS_BIND | MS_NOSUID, NULL) == 0);
	CHECK(one_event(fd, &mask, &id) == 0);
	CHECK_EQ_U64(mask, FAN_MNT_ATTR_CHANGE);
	CHECK_EQ_U64(id, tu_mnt_id(sub));
	close(fd);
	return T_EXIT_PASS;
}

int main(void)
{
	return RUN(test_attr_probe);
}
