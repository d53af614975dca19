/* SPDX-License-Identifier: MIT */
/*
 * A loss record is never stranded (kernel patch 0004): when the queue
 * overflowed, a reader that drains the pipe in one read() gets the
 * WATCH_META_LOSS_NOTIFICATION record in that same read; one whose buffer
 * had no room left for it finds the pipe still readable (poll, epoll,
 * FIONREAD, a blocking read) and gets exactly the loss record next.
 * Without the fix the record waited for the next read() while poll()
 * reported the empty pipe not readable.
 */
#include "vmtest.h"
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>

#define NOTES 4    /* rounds up to a page of notes: a 32-slot ring */
#define RING 32
#define MOUNTS 40  /* RING fit, the rest are lost */
#define REC ((int)sizeof(struct mount_notification))

/* Fill a fresh queue watching a fresh tmpfs at @dir until it overflows. */
static int overflow(const char *dir, int *rfd)
{
	int w = make_queue(NOTES, rfd);

	if (mount_tmpfs(dir, 0) < 0)
		return -1;
	if (watch_mount(AT_FDCWD, dir, 0, w, 7) < 0)
		return -1;
	for (int i = 0; i < MOUNTS; i++) {
		char p[64];

		snprintf(p, sizeof(p), "%s/%d", dir, i);
		if (mount_tmpfs(p, 0) < 0)
			return -1;
	}
	return w;
}

static void cleanup(const char *dir, int r, int w)
{
	close(w);
	close(r);
	umount2(dir, MNT_DETACH);
}

static int is_loss(const void *p)
{
	const struct watch_notification *n = p;

	return n->type == WATCH_TYPE_META &&
	       n->subtype == WATCH_META_LOSS_NOTIFICATION &&
	       (n->info & WATCH_INFO_LENGTH) == sizeof(*n);
}

/* Check @len bytes are @nrec mount records. */
static int check_mounts(const unsigned char *buf, ssize_t len, int nrec)
{
	if (len != (ssize_t)nrec * REC)
		FAILF("got %zd bytes, want %d mount records (%d bytes)", len,
		      nrec, nrec * REC);
	for (int i = 0; i < nrec; i++) {
		const struct watch_notification *n = (void *)(buf + i * REC);

		if (n->type != WATCH_TYPE_MOUNT_NOTIFY ||
		    n->subtype != NOTIFY_MOUNT_NEW_MOUNT ||
		    (n->info & WATCH_INFO_LENGTH) != (unsigned)REC)
			FAILF("record %d: type %u subtype %u info %#x", i,
			      n->type, n->subtype, n->info);
	}
	return T_PASS;
}

static int pollin(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, 0) < 0)
		return -1;
	return !!(p.revents & POLLIN);
}

/* One big read: the ring's records and the loss record, then nothing. */
static int test_same_read(void)
{
	unsigned char buf[4096];
	int r, w = overflow("ls", &r);
	ssize_t len;

	CHECK(w >= 0);
	CHECK(pollin(r) == 1);
	len = read(r, buf, sizeof(buf));
	if (len != RING * REC + 8)
		FAILF("read %zd bytes, want %d records and the loss record (%d)",
		      len, RING, RING * REC + 8);
	if (check_mounts(buf, RING * REC, RING) != T_PASS)
		return T_FAIL;
	if (!is_loss(buf + RING * REC))
		FAILF("last record of the read is not the loss record");
	/* Nothing left, and nothing claimed. */
	CHECK(pollin(r) == 0);
	errno = 0;
	CHECK(read(r, buf, sizeof(buf)) < 0 && errno == EAGAIN);
	cleanup("ls", r, w);
	return T_PASS;
}

/*
 * A read that takes exactly the records: the loss record is still owed,
 * and poll, epoll and FIONREAD say so; the next read returns just it.
 */
static int test_pending_pollable(void)
{
	unsigned char buf[4096];
	int r, w = overflow("lp", &r), ep, avail = -1;
	struct epoll_event ev = { .events = EPOLLIN }, got;
	ssize_t len;

	CHECK(w >= 0);
	len = read(r, buf, RING * REC);
	if (check_mounts(buf, len, RING) != T_PASS)
		return T_FAIL;
	if (pollin(r) != 1)
		FAILF("poll: loss record pending but POLLIN not reported");
	CHECK(ioctl(r, FIONREAD, &avail) == 0);
	if (avail != 8)
		FAILF("FIONREAD %d, want 8 (the loss record)", avail);
	ep = epoll_create1(0);
	CHECK(ep >= 0);
	CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, r, &ev) == 0);
	if (epoll_wait(ep, &got, 1, 0) != 1 || !(got.events & EPOLLIN))
		FAILF("epoll: loss record pending but EPOLLIN not reported");
	/* Too small for it: ENOBUFS, and it stays pending. */
	errno = 0;
	CHECK(read(r, buf, 4) < 0 && errno == ENOBUFS);
	CHECK(pollin(r) == 1);
	len = read(r, buf, sizeof(buf));
	if (len != 8 || !is_loss(buf))
		FAILF("next read: %zd bytes, want exactly the loss record", len);
	CHECK(pollin(r) == 0);
	CHECK(epoll_wait(ep, &got, 1, 0) == 0);
	errno = 0;
	CHECK(read(r, buf, sizeof(buf)) < 0 && errno == EAGAIN);
	/* The queue works again. */
	CHECK(umount("lp/0") == 0);
	len = read(r, buf, sizeof(buf));
	CHECK(len == REC && ((struct watch_notification *)buf)->subtype ==
				    NOTIFY_MOUNT_UNMOUNT);
	close(ep);
	cleanup("lp", r, w);
	return T_PASS;
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char m[] = "blocking read slept on a pending loss record\n";
	ssize_t rc = write(2, m, sizeof(m) - 1);

	(void)rc;
	_exit(T_FAIL);
}

/* A blocking reader does not sleep on a pending loss record. */
static int test_blocking(void)
{
	unsigned char buf[4096];
	int r, w = overflow("lb", &r);
	ssize_t len;

	CHECK(w >= 0);
	CHECK(fcntl(r, F_SETFL, 0) == 0);
	len = read(r, buf, RING * REC);
	if (check_mounts(buf, len, RING) != T_PASS)
		return T_FAIL;
	signal(SIGALRM, on_alarm);
	alarm(10);
	len = read(r, buf, sizeof(buf));
	alarm(0);
	if (len != 8 || !is_loss(buf))
		FAILF("blocking read: %zd bytes, want exactly the loss record", len);
	cleanup("lb", r, w);
	return T_PASS;
}

/* Records and loss interleave correctly across several short reads. */
static int test_short_reads(void)
{
	unsigned char buf[4096];
	int r, w = overflow("lr", &r), recs = 0, loss = 0;
	ssize_t len;

	CHECK(w >= 0);
	/* Two records a read: the loss record comes right after the 32nd. */
	while ((len = read(r, buf, 2 * REC)) > 0) {
		for (ssize_t off = 0; off < len;) {
			struct watch_notification *n = (void *)(buf + off);

			if (is_loss(n)) {
				if (recs != RING)
					FAILF("loss after %d records, want %d",
					      recs, RING);
				loss++;
			} else {
				if (loss)
					FAILF("mount record after the loss record");
				recs++;
			}
			off += n->info & WATCH_INFO_LENGTH;
		}
	}
	CHECK(len < 0 && errno == EAGAIN);
	if (recs != RING || loss != 1)
		FAILF("%d records, %d loss records; want %d and 1", recs, loss,
		      RING);
	cleanup("lr", r, w);
	return T_PASS;
}

int main(void)
{
	setup_ns();
	RUN(test_same_read);
	RUN(test_pending_pollable);
	RUN(test_blocking);
	RUN(test_short_reads);
	return T_PASS;
}
