/* SPDX-License-Identifier: MIT */
/*
 * Races: for a fixed time (3 s, longer if fewer than 500 operations were
 * done by then, at most 120 s), threads mount, unmount, bind, move,
 * remount and change attributes in their own directories, one thread adds
 * and removes watches (and opens and closes whole queues) on those
 * directories, and a reader applies the records of a watch on "/" to a
 * mirror as they come.
 * Whenever the workers wait for the reader, and at the end, the truth check
 * of truth.h: the mirror equals listmount/statmount.
 *
 * The queue holds 512 records; the workers stop every 32 operations (at
 * most 8 records each: a superblock remount reports READONLY and SETATTR
 * for every mount of it, and a worker's four slots can hold four) until
 * the reader has drained it with no operation in flight, so that a loss
 * can only mean a kernel fault.
 * Meant for the debug kernel too (KASAN, lockdep, KMEMLEAK, DEBUG_LIST).
 */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "truth.h"

#define WORKERS 3
#define SLOTS 4
#define BATCH 32
#define SECONDS 3
#define MIN_OPS 500      /* at least, however slow the guest */
#define MAX_SECONDS 120  /* but no longer than this */

static struct truth t;
static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int ops_since_drain, in_flight;
static atomic_int stop;
static atomic_long ops_done, watch_ops;
static int reader_failed;
static long checks; /* truth checks made between batches */

static void gate_enter(void)
{
	pthread_mutex_lock(&gate);
	while (ops_since_drain >= BATCH && !atomic_load(&stop))
		pthread_cond_wait(&gate_cv, &gate);
	ops_since_drain++;
	in_flight++;
	pthread_mutex_unlock(&gate);
}

static void gate_leave(void)
{
	pthread_mutex_lock(&gate);
	in_flight--;
	pthread_mutex_unlock(&gate);
}

static void slot_path(char *buf, size_t len, int w, int s)
{
	snprintf(buf, len, "race/w%d/s%d", w, s);
}

static void *worker(void *arg)
{
	int w = (int)(long)arg;
	unsigned int seed = 0x9e3779b9u * (unsigned int)(w + 1);
	int mounted[SLOTS] = { 0 };
	char a[64], b[64];

	while (!atomic_load(&stop)) {
		int s = rand_r(&seed) % SLOTS, d = rand_r(&seed) % SLOTS;
		int r = rand_r(&seed) % 4;

		slot_path(a, sizeof(a), w, s);
		slot_path(b, sizeof(b), w, d);
		gate_enter();
		if (!mounted[s]) {
			if (mounted[d] && r < 2)
				mounted[s] = mount(b, a, NULL, MS_BIND, NULL) == 0;
			else
				mounted[s] = mount("vt", a, "tmpfs", 0, NULL) == 0;
		} else if (r == 0) {
			mounted[s] = umount(a) != 0;
		} else if (r == 1 && !mounted[d]) {
			if (mount(a, b, NULL, MS_MOVE, NULL) == 0) {
				mounted[s] = 0;
				mounted[d] = 1;
			}
		} else if (r == 2) {
			mount(NULL, a, NULL, MS_REMOUNT | ((seed & 1) ? MS_RDONLY : 0),
			      NULL);
		} else {
			set_attr(a, (seed & 2) ? MOUNT_ATTR_NOSUID : 0,
				 (seed & 2) ? 0 : MOUNT_ATTR_NOSUID);
		}
		gate_leave();
		atomic_fetch_add(&ops_done, 1);
	}
	return NULL;
}

/* Watches come and go on the workers' directories, queues too. */
static void *watcher(void *arg)
{
	unsigned int seed = 77;
	char p[64];
	int rfd, wfd = make_queue(64, &rfd);

	(void)arg;
	while (!atomic_load(&stop)) {
		int w = rand_r(&seed) % WORKERS, s = rand_r(&seed) % SLOTS;
		struct note n[64];

		if (rand_r(&seed) % 3 == 0)
			snprintf(p, sizeof(p), "race/w%d", w);
		else
			slot_path(p, sizeof(p), w, s);
		/* Either may fail: the slot changes under us. */
		watch_mount(AT_FDCWD, p, 0, wfd, s);
		watch_mount(AT_FDCWD, p, 0, wfd, -1);
		if (rand_r(&seed) % 2)
			watch_mount(AT_FDCWD, p, 0, wfd, 1);
		read_notes(rfd, n, 64);
		if (rand_r(&seed) % 16 == 0) {
			/* Close the queue with its watches still set. */
			close(wfd);
			close(rfd);
			wfd = make_queue(64, &rfd);
		}
		atomic_fetch_add(&watch_ops, 1);
	}
	close(wfd);
	close(rfd);
	return NULL;
}

/* Apply what is queued now; 0 or T_FAIL. */
static int drain(void)
{
	static struct note n[1024];
	int nr = read_notes(t.rfd, n, 1024);

	if (nr < 0)
		FAILF("reading the queue failed");
	for (int i = 0; i < nr; i++)
		if (tr_apply(&t, &n[i]) != T_PASS) {
			dump_notes(n, nr);
			FAILF("record %d of %d", i, nr);
		}
	return T_PASS;
}

static void *reader(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd pfd = { .fd = t.rfd, .events = POLLIN };
		int quiet;

		poll(&pfd, 1, 5);
		if (drain() != T_PASS) {
			reader_failed = 1;
			atomic_store(&stop, 1);
			break;
		}
		pthread_mutex_lock(&gate);
		quiet = in_flight == 0;
		if (quiet && ops_since_drain >= BATCH) {
			/*
			 * Every operation so far returned, so its records are
			 * in, and none runs: the truth holds still for a check.
			 */
			if (drain() != T_PASS ||
			    tr_compare(&t, "a batch of operations") != T_PASS) {
				reader_failed = 1;
				atomic_store(&stop, 1);
			}
			checks++;
			ops_since_drain = 0;
			pthread_cond_broadcast(&gate_cv);
		}
		pthread_mutex_unlock(&gate);
		if (atomic_load(&stop) == 2 || reader_failed)
			break;
	}
	pthread_mutex_lock(&gate);
	pthread_cond_broadcast(&gate_cv);
	pthread_mutex_unlock(&gate);
	return NULL;
}

int main(void)
{
	pthread_t wk[WORKERS], wt, rd;
	char p[64];

	setup_ns();
	if (tr_init(&t, 512) != T_PASS)
		return T_FAIL;
	CHECK(mkdir("race", 0755) == 0);
	for (int w = 0; w < WORKERS; w++) {
		snprintf(p, sizeof(p), "race/w%d", w);
		CHECK(mkdir(p, 0755) == 0);
		for (int s = 0; s < SLOTS; s++) {
			slot_path(p, sizeof(p), w, s);
			CHECK(mkdir(p, 0755) == 0);
		}
	}
	CHECK(tr_sync(&t, "setup") == T_PASS);

	CHECK(pthread_create(&rd, NULL, reader, NULL) == 0);
	CHECK(pthread_create(&wt, NULL, watcher, NULL) == 0);
	for (long w = 0; w < WORKERS; w++)
		CHECK(pthread_create(&wk[w], NULL, worker, (void *)w) == 0);
	sleep(SECONDS);
	/* A slow guest (KASAN, a loaded host) runs on until MIN_OPS are done. */
	for (int i = 0; i < 10 * MAX_SECONDS && atomic_load(&ops_done) < MIN_OPS &&
			!atomic_load(&stop); i++)
		usleep(100000);
	atomic_store(&stop, 1);
	pthread_mutex_lock(&gate);
	pthread_cond_broadcast(&gate_cv);
	pthread_mutex_unlock(&gate);
	for (int w = 0; w < WORKERS; w++)
		pthread_join(wk[w], NULL);
	pthread_join(wt, NULL);
	atomic_store(&stop, 2);
	pthread_join(rd, NULL);
	if (reader_failed)
		FAILF("the reader found a record that does not fit");
	/* Everything has returned: every record is in the queue. */
	CHECK(drain() == T_PASS);
	CHECK(tr_compare(&t, "the race") == T_PASS);
	if (atomic_load(&ops_done) < MIN_OPS)
		FAILF("only %ld operations in %d s", atomic_load(&ops_done), MAX_SECONDS);
	fprintf(stderr, "     %ld operations, %ld watch add/remove rounds, %lu records, "
		"%ld truth checks, %d mounts at the end\n", atomic_load(&ops_done),
		atomic_load(&watch_ops), t.records, checks + 1, t.n);
	tr_fini(&t);
	return T_PASS;
}
