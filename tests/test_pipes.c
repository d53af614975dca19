/* SPDX-License-Identifier: MIT */
/*
 * The reactor reading 1,000 notification pipes at once (watch_mount, in the
 * project's kernel): one watch per pipe on its own subtree, one mount in
 * each subtree, and every record must come back through the one io_uring,
 * with its pipe's watch ID and the new mount's 64-bit ID, after a handful
 * of io_uring_enter calls rather than one read per pipe.
 *
 * More than 256 subtrees need more than one pipe (the watch ID is 8 bits),
 * which is why a router watching many subtrees holds many pipes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/reactor.h"
#include "probe.h"
#include "sources/decode.h"
#include "mountrouter-uapi.h"
#include "testutil.h"

enum { PIPES = 1000 };

struct pipe_watch {
	struct mr__watch w;
	int wfd;
	unsigned index;
	uint64_t got_id;
	uint32_t got_info;
	unsigned records;
};

static void on_read(struct mr__watch *w, int res, const void *buf, size_t len)
{
	struct pipe_watch *p = (struct pipe_watch *)w;
	struct mr__change c[16];
	uint64_t bad = 0;

	if (res <= 0)
		return;
	size_t n = mr__decode_watch_queue(buf, len, c, 16, &bad);
	for (size_t i = 0; i < n; i++) {
		if (c[i].kind != MR__CHANGE_ATTACH)
			continue;
		p->records++;
		p->got_id = c[i].mnt_id;
		p->got_info = c[i].info;
	}
}

int main(void)
{
	static struct pipe_watch pw[PIPES];
	struct mr__reactor_opts ro = {.entries = 256, .buffers = 256, .buf_size = 4096};
	struct mr__reactor *re;
	struct mr__reactor_stats st;
	char root[256], p[512];
	int fds[2], err;

	if (!mr__probe()->watch_mount)
		return tu_skip("watch_mount(2) is not in this kernel");
	err = tu_private_root(root, sizeof(root));
	if (err)
		return err;
	struct rlimit rl = {.rlim_cur = 8192, .rlim_max = 8192};
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	CHECK(mr__reactor_new(&ro, &re) == 0);

	for (unsigned i = 0; i < PIPES; i++) {
		char rel[32];
		snprintf(rel, sizeof(rel), "d%u", i);
		CHECK(tu_mkdir(tu_path(p, sizeof(p), root, rel)) == 0);
		snprintf(rel, sizeof(rel), "d%u/m", i);
		CHECK(tu_mkdir(tu_path(p, sizeof(p), root, rel)) == 0);
		CHECK(pipe2(fds, O_NOTIFICATION_PIPE | O_CLOEXEC | O_NONBLOCK) == 0);
		CHECK(ioctl(fds[0], IOC_WATCH_QUEUE_SET_SIZE, 4) == 0);
		snprintf(rel, sizeof(rel), "d%u", i);
		/* Watch IDs wrap at 256: the pipe, not the ID, tells the subtrees apart. */
		CHECK(syscall(__NR_watch_mount, AT_FDCWD, tu_path(p, sizeof(p), root, rel), 0, fds[0],
			      (int)(i % 256)) == 0);
		pw[i] = (struct pipe_watch){.w = {.fd = fds[0], .mode = MR__WATCH_READ, .fn = on_read},
					    .wfd = fds[1], .index = i};
		CHECK(mr__reactor_add(re, &pw[i].w) == 0);
	}
	CHECK(mr__reactor_submit(re, false) == 0);
	mr__reactor_stats(re, &st);
	fprintf(stderr, "armed %u pipes with %llu io_uring_enter calls\n", PIPES,
		(unsigned long long)st.enters);
	CHECK(st.enters <= PIPES / 200);

	uint64_t want[PIPES];
	for (unsigned i = 0; i < PIPES; i++) {
		char rel[32];
		snprintf(rel, sizeof(rel), "d%u/m", i);
		CHECK(mount("m", tu_path(p, sizeof(p), root, rel), "tmpfs", 0, "size=64k") == 0);
		want[i] = tu_mnt_id(p);
		CHECK(want[i]);
	}

	uint64_t before = st.enters;
	unsigned done = 0;
	for (int round = 0; round < 1000 && done < PIPES; round++) {
		CHECK(mr__reactor_submit(re, true) == 0);
		mr__reactor_reap(re, NULL, NULL);
		done = 0;
		for (unsigned i = 0; i < PIPES; i++)
			done += pw[i].records > 0;
	}
	mr__reactor_stats(re, &st);
	fprintf(stderr, "%u of %u pipes delivered, %llu completions, %llu io_uring_enter calls\n",
		done, PIPES, (unsigned long long)st.completions,
		(unsigned long long)(st.enters - before));
	CHECK(done == PIPES);
	for (unsigned i = 0; i < PIPES; i++) {
		CHECK(pw[i].records == 1);
		CHECK_EQ_U64(pw[i].got_id, want[i]);
		CHECK(((pw[i].got_info & WATCH_INFO_ID) >> WATCH_INFO_ID__SHIFT) == i % 256);
		CHECK(pw[i].got_info & NOTIFY_MOUNT_IN_SUBTREE);
	}
	/* Batching: far fewer kernel entries than pipes that had data. */
	CHECK(st.enters - before < PIPES / 4);

	for (unsigned i = 0; i < PIPES; i++)
		mr__reactor_remove(re, &pw[i].w);
	CHECK(mr__reactor_drain(re, 5000) == 0);
	for (unsigned i = 0; i < PIPES; i++) {
		close(pw[i].w.fd);
		close(pw[i].wfd);
	}
	mr__reactor_free(re);
	return T_EXIT_PASS;
}
