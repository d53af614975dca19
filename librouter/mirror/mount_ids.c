/* SPDX-License-Identifier: MIT */
/*
 * A namespace's set of mount IDs, as listmount(2) lists them (6.8+), and
 * how many mounts it holds, as NS_MNT_GET_INFO (6.12) and mountinfo count
 * them: what the listmount source compares to tell attach from detach.
 * IDs come sorted (the namespace keeps its mounts in an rbtree by unique
 * ID), and new mounts get new, higher IDs.
 */
#include <errno.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mirror/mount_ids.h"
#include "alloc.h"
#include "mountrouter-uapi.h"

#define IDS_MIN 1024

static int grow(struct mr__ids *ids, size_t room)
{
	if (ids->cap >= IDS_MIN && ids->cap - ids->n >= room)
		return 0;
	size_t cap = ids->cap < IDS_MIN ? IDS_MIN : ids->cap * 2;
	while (cap - ids->n < room)
		cap *= 2;
	uint64_t *v = mr__realloc(ids->v, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	ids->v = v;
	ids->cap = cap;
	return 0;
}

void mr__ids_free(struct mr__ids *ids)
{
	mr__free(ids->v);
	*ids = (struct mr__ids){0};
}

int mr__ids_reserve(struct mr__ids *ids, size_t n)
{
	return n > ids->cap ? grow(ids, n - ids->n) : 0;
}

/* Appends the IDs above @after (0: all), in as few calls as the array allows. */
static long list_from(uint64_t ns_id, uint64_t after, struct mr__ids *ids, uint64_t *syscalls)
{
	struct mr_mnt_id_req req = {
		.size = ns_id ? MR_MNT_ID_REQ_SIZE_VER1 : MR_MNT_ID_REQ_SIZE_VER0,
		.mnt_id = LSMT_ROOT,
		.param = after,
		.mnt_ns_id = ns_id,
	};
	size_t start = ids->n;

	for (;;) {
		/* Kept at least half empty, so a whole table takes one call. */
		if (grow(ids, ids->cap / 2 > 64 ? ids->cap / 2 : 64) < 0) {
			ids->n = start;
			return -ENOMEM;
		}
		size_t room = ids->cap - ids->n;
		long got = syscall(__NR_listmount, &req, ids->v + ids->n, room, 0);
		(*syscalls)++;
		if (got < 0) {
			if (errno == EINTR)
				continue;
			ids->n = start;
			/* E2BIG: mnt_ns_id unknown to this kernel (before 6.11). */
			return errno == E2BIG && ns_id ? -EOPNOTSUPP : -errno;
		}
		ids->n += (size_t)got;
		if ((size_t)got < room)
			return (long)(ids->n - start);
		req.param = ids->v[ids->n - 1];
	}
}

int mr__ids_list(uint64_t ns_id, struct mr__ids *ids, uint64_t *syscalls)
{
	ids->n = 0;
	long n = list_from(ns_id, 0, ids, syscalls);
	return n < 0 ? (int)n : 0;
}

long mr__ids_list_new(uint64_t ns_id, struct mr__ids *ids, uint64_t *syscalls)
{
	return list_from(ns_id, ids->n ? ids->v[ids->n - 1] : 0, ids, syscalls);
}

long mr__ids_count(int nsfd)
{
	struct mr_mnt_ns_info info = {.size = MR_MNT_NS_INFO_SIZE_VER0};

	if (ioctl(nsfd, NS_MNT_GET_INFO, &info) < 0)
		return -errno;
	return info.nr_mounts;
}

long mr__ids_count_mountinfo(int fd)
{
	char buf[16384];
	long lines = 0;
	ssize_t n;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			lines += buf[i] == '\n';
	return n < 0 ? -errno : lines;
}
