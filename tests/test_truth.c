/*
 * The scenarios of the kernel's mount-notification selftests, as
 * tests/vm/watch_truth.c runs them against watch_mount in the guest, here
 * against the library's source on the host kernel (fanotify by default),
 * with a truth check after every step: the events a subscriber of the
 * scratch tree received, applied to a mirror, equal what listmount(2) and
 * statmount(2) say (mount IDs, parents, paths, flags, propagation).
 *
 *   test_truth [SOURCE] [plain|userns|outside]
 *
 * plain:   root, a private mount namespace, the router in it;
 * userns:  an unprivileged user in its own user and mount namespace, the
 *          router there too;
 * outside: the same namespace, watched by a router in the parent's
 *          namespace through an nsfd (mr_router_add_ns_fd()).
 *
 * Events are applied strictly: a MOUNT of a known mount, an UNMOUNT or MOVE
 * of an unknown one, and an ATTR or READONLY that changes a mount's parent
 * or path fail (a change of parent is a MOVE).  The library settles after
 * each step within WAIT_MS, or the step fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mountrouter-uapi.h"
#include "testutil.h"

#define WAIT_MS 5000
#define MAXM 4096

#ifndef MOVE_MOUNT_SET_GROUP
#define MOVE_MOUNT_SET_GROUP 0x00000100 /* include/uapi/linux/mount.h, 5.15 */
#endif
#ifndef MOVE_MOUNT_BENEATH
#define MOVE_MOUNT_BENEATH 0x00000200 /* 6.5 */
#endif

struct mm {
	uint64_t id, parent, attr;
	uint32_t prop;
	char path[256];
};

static struct mm mirror[MAXM], truth[MAXM];
static int n_mirror, n_truth;
static char root[256];
static const char *mode = "plain";
static const char *source = "fanotify";
static mr_router *router;
static mr_sub *sub;
static uint64_t ns_id;   /* the watched namespace (0: the caller's) */
static int step_w = -1, ack_r = -1; /* outside: the actor's end of the pipes */

static union {
	struct mr_statmount sm;
	char buf[8192];
} u;

static int under_root(const char *p)
{
	size_t n = strlen(root);

	return !strncmp(p, root, n) && (p[n] == 0 || p[n] == '/');
}

/* listmount/statmount of the watched namespace, the scratch tree only. */
static int load_truth(void)
{
	static uint64_t ids[MAXM];
	struct mr_mnt_id_req req = {.size = MR_MNT_ID_REQ_SIZE_VER1, .mnt_id = LSMT_ROOT,
				    .mnt_ns_id = ns_id};
	long nr = syscall(__NR_listmount, &req, ids, (size_t)MAXM, 0);

	if (nr < 0) {
		fprintf(stderr, "listmount: %s\n", strerror(errno));
		return -1;
	}
	n_truth = 0;
	for (long i = 0; i < nr; i++) {
		struct mr_mnt_id_req r = {.size = MR_MNT_ID_REQ_SIZE_VER1, .mnt_id = ids[i],
					  .param = STATMOUNT_MNT_BASIC | STATMOUNT_MNT_POINT,
					  .mnt_ns_id = ns_id};
		const char *p;

		if (syscall(__NR_statmount, &r, &u.sm, sizeof(u), 0) < 0) {
			if (errno == ENOENT)
				continue; /* gone meanwhile: the next look says */
			fprintf(stderr, "statmount %llu: %s\n", (unsigned long long)ids[i],
				strerror(errno));
			return -1;
		}
		p = u.sm.str + u.sm.mnt_point;
		if (!under_root(p))
			continue;
		truth[n_truth] = (struct mm){.id = ids[i], .parent = u.sm.mnt_parent_id,
					     .attr = u.sm.mnt_attr,
					     .prop = (uint32_t)u.sm.mnt_propagation};
		snprintf(truth[n_truth].path, sizeof(truth[0].path), "%s", p);
		n_truth++;
	}
	return 0;
}

static struct mm *find(uint64_t id)
{
	for (int i = 0; i < n_mirror; i++)
		if (mirror[i].id == id)
			return &mirror[i];
	return NULL;
}

static void set_from(struct mm *m, const struct mr_event *ev)
{
	m->id = ev->mnt_id;
	m->parent = ev->parent_id;
	m->attr = ev->attr;
	m->prop = ev->propagation;
	snprintf(m->path, sizeof(m->path), "%s", ev->path);
}

/* 0, or -1 with the reason printed. */
static int apply(const struct mr_event *ev)
{
	struct mm *m = find(ev->mnt_id);

	switch (ev->kind) {
	case MR_EVENT_SNAPSHOT:
		n_mirror = 0;
		for (size_t i = 0; i < ev->n_mounts && n_mirror < MAXM; i++) {
			const struct mr_mount *x = &ev->mounts[i];
			struct mm *y = &mirror[n_mirror++];

			*y = (struct mm){.id = x->id, .parent = x->parent_id, .attr = x->attr,
					 .prop = x->propagation};
			snprintf(y->path, sizeof(y->path), "%s", x->path);
		}
		return 0;
	case MR_EVENT_OVERRUN:
		fprintf(stderr, "the subscriber overran (%llu lost)\n",
			(unsigned long long)ev->lost);
		return -1;
	case MR_EVENT_RESYNC_BEGIN:
	case MR_EVENT_RESYNC_END:
		return 0;
	case MR_EVENT_MOUNT:
		if (m) {
			fprintf(stderr, "mount of %llu %s, already there\n",
				(unsigned long long)ev->mnt_id, ev->path);
			return -1;
		}
		if (n_mirror == MAXM)
			return -1;
		set_from(&mirror[n_mirror++], ev);
		return 0;
	case MR_EVENT_UNMOUNT:
	case MR_EVENT_EXPIRY:
		if (!m) {
			fprintf(stderr, "%s of unknown %llu %s\n", mr_event_kind_name(ev->kind),
				(unsigned long long)ev->mnt_id, ev->path);
			return -1;
		}
		*m = mirror[--n_mirror];
		return 0;
	case MR_EVENT_MOVE:
		if (!m) {
			fprintf(stderr, "move of unknown %llu %s\n",
				(unsigned long long)ev->mnt_id, ev->path);
			return -1;
		}
		set_from(m, ev);
		return 0;
	case MR_EVENT_READONLY:
	case MR_EVENT_ATTR:
		if (!m) {
			fprintf(stderr, "%s of unknown %llu %s\n", mr_event_kind_name(ev->kind),
				(unsigned long long)ev->mnt_id, ev->path);
			return -1;
		}
		if (m->parent != ev->parent_id || strcmp(m->path, ev->path)) {
			fprintf(stderr, "%s of %llu moves it: parent %llu -> %llu, %s -> %s\n",
				mr_event_kind_name(ev->kind), (unsigned long long)ev->mnt_id,
				(unsigned long long)m->parent, (unsigned long long)ev->parent_id,
				m->path, ev->path);
			return -1;
		}
		set_from(m, ev);
		return 0;
	}
	fprintf(stderr, "event kind %u\n", ev->kind);
	return -1;
}

static struct mm *find_truth(uint64_t id)
{
	for (int i = 0; i < n_truth; i++)
		if (truth[i].id == id)
			return &truth[i];
	return NULL;
}

/* 0 if the mirror equals the truth; else 1, and *why says how. */
static int differ(char *why, size_t len)
{
	if (n_mirror != n_truth) {
		snprintf(why, len, "%d mounts in the mirror, %d in listmount", n_mirror, n_truth);
		return 1;
	}
	for (int i = 0; i < n_mirror; i++) {
		struct mm *m = &mirror[i], *t = find_truth(m->id);

		if (!t) {
			snprintf(why, len, "%llu %s in the mirror only", (unsigned long long)m->id,
				 m->path);
			return 1;
		}
		if (m->parent != t->parent || strcmp(m->path, t->path) || m->attr != t->attr ||
		    m->prop != t->prop) {
			snprintf(why, len,
				 "%llu: mirror parent %llu %s attr %#llx prop %#x, kernel parent "
				 "%llu %s attr %#llx prop %#x",
				 (unsigned long long)m->id, (unsigned long long)m->parent, m->path,
				 (unsigned long long)m->attr, m->prop,
				 (unsigned long long)t->parent, t->path,
				 (unsigned long long)t->attr, t->prop);
			return 1;
		}
	}
	return 0;
}

/* Apply events until the mirror equals the truth, or WAIT_MS pass. */
static int settle(const char *what)
{
	char why[768] = "";
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		const struct mr_event *ev;

		while ((ev = tu_next(sub, 20, true))) {
			int r = apply(ev);

			mr_event_unref(ev);
			if (r < 0) {
				fprintf(stderr, "after %s: the event above does not fit\n", what);
				return T_EXIT_FAIL;
			}
		}
		if (load_truth() < 0)
			return T_EXIT_FAIL;
		if (!differ(why, sizeof(why)))
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > WAIT_MS)
			break;
	}
	fprintf(stderr, "after %s: %s\n", what, why);
	return T_EXIT_FAIL;
}

/*
 * A propagation change (mount --make-*, MOVE_MOUNT_SET_GROUP): fanotify
 * has no event for it, and the namespace is not touched (no mountinfo
 * POLLPRI to sweep on), so the library may not see it; such a step's name
 * starts with "gap: ".  If the library did not see it, the propagation is
 * taken from the truth, and only it: anything else that differs fails.
 */
static int settle_gap(const char *what)
{
	char why[768];

	if (settle(what) == 0)
		return 0;
	/* Only the propagation may be stale: take it from the truth. */
	for (int i = 0; i < n_mirror; i++) {
		struct mm *t = find_truth(mirror[i].id);

		if (t && t->parent == mirror[i].parent && !strcmp(t->path, mirror[i].path) &&
		    t->attr == mirror[i].attr)
			mirror[i].prop = t->prop;
	}
	if (differ(why, sizeof(why))) {
		fprintf(stderr, "after %s: %s\n", what, why);
		return T_EXIT_FAIL;
	}
	fprintf(stderr, "  (%s: no event for a propagation change; taken from the truth)\n",
		what);
	return 0;
}

static int check_step(const char *what)
{
	return strncmp(what, "gap: ", 5) ? settle(what) : settle_gap(what);
}

/*
 * One step done: check it here, or (outside) hand it to the checker in the
 * parent namespace and wait for its verdict.
 */
static int step(const char *what)
{
	char ok;

	if (step_w < 0)
		return check_step(what);
	if (write(step_w, what, strlen(what) + 1) < 0 || read(ack_r, &ok, 1) != 1)
		return T_EXIT_FAIL;
	return ok == 'y' ? 0 : T_EXIT_FAIL;
}

#define STEP(op)                                                           \
	do {                                                               \
		CHECK(op);                                                 \
		if (step(#op))                                             \
			return T_EXIT_FAIL;                                \
	} while (0)

/* A propagation change: a "gap: " step for sources other than watch_mount. */
#define PSTEP(op)                                                          \
	do {                                                               \
		CHECK(op);                                                 \
		if (step(strcmp(source, "watch_mount") ? "gap: " #op : #op)) \
			return T_EXIT_FAIL;                                \
	} while (0)

static int mnt_tmpfs(const char *dir)
{
	mkdir(dir, 0755);
	return mount("t", dir, "tmpfs", 0, "size=1m");
}

static int test_bind_move(void)
{
	mkdir("bm", 0755), mkdir("bm/a", 0755), mkdir("bm/b", 0755), mkdir("bm/c", 0755);
	STEP(mnt_tmpfs("bm/a") == 0);
	STEP(mnt_tmpfs("bm/a/s") == 0);
	STEP(mount("bm/a", "bm/b", NULL, MS_BIND, NULL) == 0);
	STEP(umount("bm/b") == 0);
	STEP(mount("bm/a", "bm/b", NULL, MS_BIND | MS_REC, NULL) == 0);
	STEP(mount("bm/b", "bm/c", NULL, MS_MOVE, NULL) == 0);
	STEP(umount2("bm/c", MNT_DETACH) == 0);
	STEP(umount2("bm/a", MNT_DETACH) == 0);
	return 0;
}

static int test_propagation(void)
{
	mkdir("pr", 0755), mkdir("pr/a", 0755), mkdir("pr/b", 0755), mkdir("pr/s", 0755);
	STEP(mnt_tmpfs("pr/a") == 0);
	PSTEP(mount(NULL, "pr/a", NULL, MS_SHARED, NULL) == 0);
	STEP(mount("pr/a", "pr/b", NULL, MS_BIND, NULL) == 0);
	STEP(mount("pr/a", "pr/s", NULL, MS_BIND, NULL) == 0);
	PSTEP(mount(NULL, "pr/s", NULL, MS_SLAVE, NULL) == 0);
	STEP(mnt_tmpfs("pr/a/x") == 0);
	STEP(mnt_tmpfs("pr/s/y") == 0);
	STEP(mnt_tmpfs("pr/a/x/z") == 0);
	STEP(mkdir("pr/a/r", 0755) == 0 &&
	     mount("pr/a/x", "pr/a/r", NULL, MS_BIND | MS_REC, NULL) == 0);
	STEP(umount2("pr/b/r", MNT_DETACH) == 0);
	STEP(umount2("pr/a/x", MNT_DETACH) == 0);
	STEP(umount2("pr/s", MNT_DETACH) == 0);
	STEP(umount2("pr/b", MNT_DETACH) == 0);
	STEP(umount2("pr/a", MNT_DETACH) == 0);
	return 0;
}

static int test_fsmount(void)
{
	int fs, mfd, tfd;

	mkdir("fm", 0755), mkdir("fm/a", 0755), mkdir("fm/b", 0755), mkdir("fm/c", 0755);
	fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
	CHECK(fs >= 0);
	CHECK(fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0);
	mfd = fsmount(fs, FSMOUNT_CLOEXEC, 0);
	CHECK(mfd >= 0);
	close(fs);
	STEP(mkdirat(mfd, "sub", 0755) == 0);
	STEP(move_mount(mfd, "", AT_FDCWD, "fm/a", MOVE_MOUNT_F_EMPTY_PATH) == 0);
	close(mfd);
	STEP(mnt_tmpfs("fm/a/sub") == 0);
	tfd = open_tree(AT_FDCWD, "fm/a", OPEN_TREE_CLONE | AT_RECURSIVE);
	CHECK(tfd >= 0);
	STEP(move_mount(tfd, "", AT_FDCWD, "fm/b", MOVE_MOUNT_F_EMPTY_PATH) == 0);
	close(tfd);
	STEP(move_mount(AT_FDCWD, "fm/b", AT_FDCWD, "fm/c", 0) == 0);
	tfd = open_tree(AT_FDCWD, "fm/a", OPEN_TREE_CLONE | AT_RECURSIVE);
	CHECK(tfd >= 0);
	STEP(close(tfd) == 0);
	STEP(umount2("fm/c", MNT_DETACH) == 0);
	STEP(umount2("fm/a", MNT_DETACH) == 0);
	return 0;
}

/* The umount that re-parents a mount onto its grandparent, same path. */
static int test_reparent(void)
{
	mkdir("rp", 0755), mkdir("rp/a", 0755), mkdir("rp/b", 0755);
	STEP(mnt_tmpfs("rp/a") == 0);
	PSTEP(mount(NULL, "rp/a", NULL, MS_SHARED, NULL) == 0);
	STEP(mount("rp/a", "rp/b", NULL, MS_BIND, NULL) == 0);
	PSTEP(mount(NULL, "rp/b", NULL, MS_SLAVE, NULL) == 0);
	STEP(mnt_tmpfs("rp/a/x") == 0);
	STEP(mnt_tmpfs("rp/b/x") == 0);
	STEP(umount("rp/a/x") == 0);
	STEP(umount2("rp/b", MNT_DETACH) == 0);
	STEP(umount2("rp/a", MNT_DETACH) == 0);
	return 0;
}

static int test_beneath(void)
{
	int fs, mfd;

	mkdir("mb", 0755), mkdir("mb/a", 0755);
	STEP(mnt_tmpfs("mb/a") == 0);
	fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
	CHECK(fs >= 0);
	CHECK(fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0);
	mfd = fsmount(fs, FSMOUNT_CLOEXEC, 0);
	CHECK(mfd >= 0);
	close(fs);
	/*
	 * The mount that was on top is re-parented onto the new one without a
	 * record of its own (6.18's fanotify): sources other than watch_mount
	 * find it by their next pass (include/mountrouter.h), provided a pass
	 * read its line before.  So: a remount that changes nothing (a POLLPRI
	 * no record explains) brings a pass before and one after; each waits
	 * until what came before it has surely been read, or the POLLPRIs
	 * would be shared.
	 */
	bool passes = strcmp(source, "watch_mount") != 0;
	if (passes) {
		usleep(100000);
		CHECK(mount(NULL, "mb/a", NULL, MS_REMOUNT | MS_BIND, NULL) == 0);
		usleep(100000);
	}
	CHECK(move_mount(mfd, "", AT_FDCWD, "mb/a",
			 MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_BENEATH) == 0);
	if (passes) {
		usleep(100000);
		CHECK(mount(NULL, "mb/a", NULL, MS_REMOUNT | MS_BIND, NULL) == 0);
	}
	if (step("move_mount(MOVE_MOUNT_BENEATH)"))
		return T_EXIT_FAIL;
	close(mfd);
	STEP(umount("mb/a") == 0);
	STEP(umount("mb/a") == 0);
	return 0;
}

static int test_superblock(void)
{
	int fd;

	mkdir("sb", 0755), mkdir("sb/a", 0755), mkdir("sb/b", 0755);
	STEP(mnt_tmpfs("sb/a") == 0);
	STEP(mount("sb/a", "sb/b", NULL, MS_BIND, NULL) == 0);
	STEP(mount(NULL, "sb/b", NULL, MS_REMOUNT | MS_BIND | MS_NOSUID, NULL) == 0);
	STEP(mount(NULL, "sb/a", NULL, MS_REMOUNT | MS_RDONLY, NULL) == 0);
	fd = fspick(AT_FDCWD, "sb/b", FSPICK_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(fsconfig(fd, FSCONFIG_SET_FLAG, "rw", NULL, 0) == 0);
	STEP(fsconfig(fd, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0) == 0);
	close(fd);
	STEP(umount("sb/b") == 0);
	STEP(umount("sb/a") == 0);
	return 0;
}

static int test_set_group(void)
{
	mkdir("sg", 0755), mkdir("sg/a", 0755), mkdir("sg/b", 0755);
	STEP(mnt_tmpfs("sg/a") == 0);
	PSTEP(mount(NULL, "sg/a", NULL, MS_SHARED, NULL) == 0);
	STEP(mount("sg/a", "sg/b", NULL, MS_BIND, NULL) == 0);
	PSTEP(mount(NULL, "sg/b", NULL, MS_PRIVATE, NULL) == 0);
	PSTEP(move_mount(AT_FDCWD, "sg/a", AT_FDCWD, "sg/b", MOVE_MOUNT_SET_GROUP) == 0);
	STEP(umount("sg/b") == 0);
	STEP(umount("sg/a") == 0);
	return 0;
}

static int test_expiry(void)
{
	mkdir("ex", 0755);
	STEP(mnt_tmpfs("ex") == 0);
	errno = 0;
	STEP(umount2("ex", MNT_EXPIRE) < 0 && errno == EAGAIN);
	STEP(umount2("ex", MNT_EXPIRE) == 0);
	return 0;
}

static int scenarios(void)
{
	int fail = 0;

	CHECK(chdir(root) == 0);
	fail |= RUN(test_bind_move);
	fail |= RUN(test_propagation);
	fail |= RUN(test_fsmount);
	fail |= RUN(test_reparent);
	fail |= RUN(test_beneath);
	fail |= RUN(test_superblock);
	fail |= RUN(test_set_group);
	fail |= RUN(test_expiry);
	return fail ? T_EXIT_FAIL : T_EXIT_PASS;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	int ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

/* uid 65534, root of its own user and mount namespace. */
static int enter_userns(void)
{
	CHECK(setgid(65534) == 0 && setuid(65534) == 0);
	CHECK(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) == 0);
	CHECK(unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0);
	CHECK(write_file("/proc/self/setgroups", "deny") == 0);
	CHECK(write_file("/proc/self/uid_map", "0 65534 1") == 0);
	CHECK(write_file("/proc/self/gid_map", "0 65534 1") == 0);
	return 0;
}

static int start_router(int nsfd)
{
	struct mr_opts o = {.size = sizeof(o), .source = source};
	struct mr_sub_opts so = {.size = sizeof(so), .flags = MR_SUB_SNAPSHOT};
	int err;

	if (nsfd >= 0)
		o.flags = MR_OPT_NO_SELF_NS;
	err = mr_router_new(&o, &router);
	if (err == -ENOSYS || err == -EPERM || err == -EINVAL)
		return tu_skip("the %s source is not available here (%s)", source,
			       strerror(-err));
	CHECK(err == 0);
	if (nsfd >= 0)
		CHECK(mr_router_add_ns_fd(router, nsfd, &ns_id) == 0);
	CHECK(mr_router_start(router) == 0);
	so.ns_id = ns_id;
	so.subtree = root;
	CHECK(mr_subscribe(router, &so, &sub) == 0);
	return settle("subscribing");
}

static int run_here(void)
{
	int err = start_router(-1);

	if (err)
		return err;
	err = scenarios();
	mr_unsubscribe(sub);
	mr_router_free(router);
	return err;
}

/* The actor in its namespace; the checker here, through an nsfd. */
static int run_outside(void)
{
	int to_checker[2], to_actor[2], ready[2], st, err;
	char path[64], what[512], c;
	pid_t pid;
	int nsfd;

	CHECK(pipe(to_checker) == 0 && pipe(to_actor) == 0 && pipe(ready) == 0);
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(to_checker[0]), close(to_actor[1]), close(ready[0]);
		if (enter_userns() || tu_private_root(root, sizeof(root)))
			_exit(T_EXIT_FAIL);
		if (write(ready[1], root, sizeof(root)) != sizeof(root))
			_exit(T_EXIT_FAIL);
		step_w = to_checker[1];
		ack_r = to_actor[0];
		/* exit(), not _exit(): tu_private_root() cleans up at exit. */
		exit(scenarios());
	}
	close(to_checker[1]), close(to_actor[0]), close(ready[1]);
	if (read(ready[0], root, sizeof(root)) != sizeof(root)) {
		waitpid(pid, &st, 0);
		return tu_skip("no user namespace for an unprivileged user here");
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(nsfd >= 0);
	err = start_router(nsfd);
	close(nsfd);
	if (err) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		return err;
	}
	/* One step at a time: the actor waits for the verdict. */
	for (;;) {
		size_t n = 0;

		while (n < sizeof(what) - 1 && read(to_checker[0], &c, 1) == 1 && c)
			what[n++] = c;
		if (n == 0)
			break;
		what[n] = 0;
		c = check_step(what) == 0 ? 'y' : 'n';
		if (write(to_actor[1], &c, 1) != 1)
			break;
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	mr_unsubscribe(sub);
	mr_router_free(router);
	rmdir(root); /* the actor's, its tmpfs gone with its namespace */
	return WIFEXITED(st) ? WEXITSTATUS(st) : T_EXIT_FAIL;
}

int main(int argc, char **argv)
{
	int err, st;
	pid_t pid;

	if (argc > 1)
		source = argv[1];
	if (argc > 2)
		mode = argv[2];
	if (geteuid() != 0)
		return tu_skip("needs root");
	if (!strcmp(mode, "outside")) {
		err = tu_private_root(root, sizeof(root));
		return err ? err : run_outside();
	}
	if (!strcmp(mode, "plain")) {
		err = tu_private_root(root, sizeof(root));
		return err ? err : run_here();
	}
	if (strcmp(mode, "userns"))
		return tu_skip("unknown mode %s", mode);
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		if (enter_userns())
			_exit(tu_skip("no user namespace for an unprivileged user here"));
		err = tu_private_root(root, sizeof(root));
		exit(err ? err : run_here());
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : T_EXIT_FAIL;
}
