/* SPDX-License-Identifier: MIT */
/*
 * A watched mount namespace: its identity, its mirror, its subscription
 * trie and its source.  Opened on the caller's thread (it reads the whole
 * table), then handed to the router thread.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "namespace.h"
#include "alloc.h"
#include "event.h"
#include "mirror/listmount.h"
#include "mirror/mirror.h"
#include "mirror/mount.h"
#include "probe.h"
#include "sources/source.h"
#include "trie.h"
#include "mountrouter-uapi.h"

/*
 * The namespace ID statmount and fanotify use (NS_GET_MNTNS_ID, 6.10);
 * before that, the nsfs inode number, which is unique while the namespace
 * lives.
 */
static int ns_id_of(int nsfd, uint64_t *ret)
{
	struct stat st;

	if (mr__probe()->mntns_id && ioctl(nsfd, NS_GET_MNTNS_ID, ret) == 0)
		return 0;
	if (fstat(nsfd, &st) < 0)
		return -errno;
	*ret = st.st_ino;
	return 0;
}

/* A process inside the namespace @nsfd refers to, for /proc/PID/ paths. */
static pid_t find_pid(int nsfd)
{
	struct stat want, st;
	struct dirent *d;
	pid_t found = -ESRCH;
	char p[64];

	if (fstat(nsfd, &want) < 0)
		return -errno;
	DIR *dir = opendir("/proc");
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		char *end;
		long pid = strtol(d->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		snprintf(p, sizeof(p), "/proc/%ld/ns/mnt", pid);
		if (stat(p, &st) == 0 && st.st_ino == want.st_ino && st.st_dev == want.st_dev) {
			found = (pid_t)pid;
			break;
		}
	}
	closedir(dir);
	return found;
}

/* The first read of a table fills the mirror; nobody is subscribed yet. */
static int no_event(struct mr__mount *old, struct mr__mount *now, void *arg)
{
	(void)old;
	(void)now;
	(void)arg;
	return 0;
}

int mr__ns_open(mr_router *r, int nsfd, pid_t pid, const struct mr__ns_source *src,
		struct mr__ns **ret)
{
	struct mr__table t = {0};
	struct mr__ns *ns;
	struct stat self, st;
	int err;

	ns = mr__calloc(1, sizeof(*ns));
	if (!ns) {
		close(nsfd);
		return -ENOMEM;
	}
	ns->r = r;
	ns->nsfd = nsfd;
	ns->syscalls = src->syscalls;
	ns->ops = NULL;
	err = ns_id_of(nsfd, &ns->id);
	if (err < 0)
		goto fail;
	/* Our own namespace needs no helper process: /proc/self works. */
	if (pid < 0) {
		if (stat("/proc/self/ns/mnt", &self) == 0 && fstat(nsfd, &st) == 0 &&
		    self.st_ino == st.st_ino)
			pid = 0;
		else
			pid = find_pid(nsfd);
		if (pid < 0) {
			err = pid;
			goto fail;
		}
	}
	ns->pid = pid;
	ns->gone = mr__event_marker(MR_EVENT_NS_GONE);
	if (!ns->gone) {
		err = -ENOMEM;
		goto fail;
	}
	err = mr__mirror_init(&ns->mirror);
	if (err < 0)
		goto fail;
	err = mr__trie_new(&ns->trie);
	if (err < 0)
		goto fail;

	/*
	 * The kernel side first: changes made while we read the table queue
	 * up.  A source that cannot watch this namespace (a limit reached, a
	 * kernel that cannot name it) hands it to the next one that probes,
	 * when the router's source was picked by probing.
	 */
	const struct mr__source_ops *ops = src->ops;
	for (;;) {
		ns->ops = ops;
		err = ops->open(ns);
		if (err == 0) {
			err = ops->read_table(ns, &t); /* a count, or -errno */
			if (err >= 0)
				break;
			mr__table_clear(&t);
			ops->close(ns, NULL);
		}
		ns->ops = NULL;
		ops = src->fallback ? mr__source_fallback(ops, err, &ns->reason) : NULL;
		if (!ops)
			goto fail;
	}
	err = mr__mirror_sync(&ns->mirror, &t, no_event, NULL);
	mr__table_clear(&t);
	if (err < 0)
		goto fail;
	*ret = ns;
	return 0;
fail:
	mr__table_clear(&t);
	mr__ns_close(ns, NULL);
	return err;
}

void mr__ns_count_sub(struct mr__ns *ns, uint32_t kinds, int delta)
{
	for (unsigned k = 0; k < MR_KIND_LIMIT; k++) {
		if (!(kinds & MR_KIND(k)))
			continue;
		ns->subs_of_kind[k] += (unsigned)delta;
		if (ns->subs_of_kind[k])
			ns->kinds_wanted |= MR_KIND(k);
		else
			ns->kinds_wanted &= ~MR_KIND(k);
	}
}

void mr__ns_close(struct mr__ns *ns, struct mr__reactor *re)
{
	if (!ns)
		return;
	if (ns->ops)
		ns->ops->close(ns, re);
	if (ns->gone)
		mr__event_discard(ns->gone);
	mr__trie_free(ns->trie);
	mr__mirror_free(&ns->mirror);
	mr__statmount_buf_free(&ns->smbuf);
	if (ns->nsfd >= 0)
		close(ns->nsfd);
	mr__free(ns);
}

/*
 * The router's counter, written as it writes its own: relaxed, by one
 * thread at a time (the caller's while opening, then the router's).
 */
static void count_syscalls(struct mr__ns *ns, uint64_t n)
{
	atomic_store_explicit(ns->syscalls,
			      atomic_load_explicit(ns->syscalls, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

int mr__ns_statmount(struct mr__ns *ns, uint64_t mnt_id, struct mr__mount **ret)
{
	uint64_t calls = 0;
	int err = mr__statmount(ns->id, mnt_id, &ns->smbuf, &calls, ret);

	count_syscalls(ns, calls);
	return err;
}

int mr__ns_listmount(struct mr__ns *ns, struct mr__table *ret)
{
	uint64_t calls = 0;
	int err = mr__listmount_table(ns->id, &ns->smbuf, &calls, ret);

	count_syscalls(ns, calls);
	return err;
}
