/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2, unshare, signalfd, twalk_r: glibc */
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel-abi.h"
#include "kernel-table.h"

#define KT_SB_RDONLY 1u /* SB_RDONLY in statmount's sb_flags */

void kt_free(struct kt_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->m[i].path);
		free(t->m[i].fstype);
	}
	free(t->m);
	t->m = NULL;
	t->n = 0;
}

/* One mount; -ENOENT if it went away since listmount named it. */
static int stat_one(uint64_t ns_id, uint64_t id, struct kt_mount *ret)
{
	struct kt_mnt_id_req req = {.size = KT_MNT_ID_REQ_SIZE_VER1, .mnt_id = id,
				    .param = KT_STATMOUNT_SB_BASIC | KT_STATMOUNT_MNT_BASIC |
					     KT_STATMOUNT_MNT_POINT | KT_STATMOUNT_FS_TYPE,
				    .mnt_ns_id = ns_id};
	size_t cap = 4096;
	struct kt_statmount *sm = NULL;

	for (;;) {
		free(sm);
		if (!(sm = malloc(cap)))
			return -ENOMEM;
		if (syscall(KT_NR_STATMOUNT, &req, sm, cap, 0) == 0)
			break;
		if (errno != EOVERFLOW || cap >= (1u << 24)) {
			int err = -errno;
			free(sm);
			return err;
		}
		cap *= 2; /* a long mount point or option string */
	}
	/* The kernel leaves a string's bit clear when the string is empty. */
	ret->id = id;
	ret->path = strdup(sm->mask & KT_STATMOUNT_MNT_POINT ? sm->str + sm->mnt_point : "");
	ret->fstype = strdup(sm->mask & KT_STATMOUNT_FS_TYPE ? sm->str + sm->fs_type : "");
	ret->readonly = (sm->mnt_attr & KT_MOUNT_ATTR_RDONLY) || (sm->sb_flags & KT_SB_RDONLY);
	free(sm);
	if (!ret->path || !ret->fstype) {
		free(ret->path);
		free(ret->fstype);
		return -ENOMEM;
	}
	return 0;
}

int kt_read(uint64_t ns_id, struct kt_table *ret)
{
	struct kt_table t = {0};
	struct kt_mnt_id_req req = {.size = KT_MNT_ID_REQ_SIZE_VER1, .mnt_id = KT_LSMT_ROOT,
				    .mnt_ns_id = ns_id};
	uint64_t ids[512];
	size_t cap = 0;
	int err = 0;

	for (;;) {
		long n = syscall(KT_NR_LISTMOUNT, &req, ids, 512, 0);
		if (n < 0) {
			err = -errno;
			goto fail;
		}
		for (long i = 0; i < n; i++) {
			if (t.n == cap) {
				cap = cap ? cap * 2 : 256;
				struct kt_mount *m = realloc(t.m, cap * sizeof(*m));
				if (!m) {
					err = -ENOMEM;
					goto fail;
				}
				t.m = m;
			}
			err = stat_one(ns_id, ids[i], &t.m[t.n]);
			if (err == -ENOENT)
				continue; /* unmounted since: not in the table any more */
			if (err < 0)
				goto fail;
			t.n++;
		}
		if (n < 512)
			break;
		req.param = ids[n - 1]; /* the next batch starts after the last ID */
	}
	*ret = t;
	return 0;
fail:
	kt_free(&t);
	return err;
}
