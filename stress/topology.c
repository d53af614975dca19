/* SPDX-License-Identifier: MIT */
/*
 * The storm's playground: a private mount namespace with a tmpfs root, and
 * under it the shared subtrees a container host has.
 *
 *   ROOT                      tmpfs, private
 *   ROOT/g<G>/m0              tmpfs, shared: the origin every wave mounts on
 *   ROOT/g<G>/m1..m<K-1>      binds of m0: peers, so each mount on m0
 *                             propagates to every one of them
 *   ROOT/g<G>/s               bind of m0 made a slave: receives, never sends
 *   ROOT/g<G>/u               bind of m0 made unbindable: receives nothing
 *   ROOT/src                  private tmpfs, directories that bind waves bind
 *   ROOT/stage                private tmpfs where moved mounts are made, since
 *                             the kernel refuses MS_MOVE out of a shared parent
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storm.h"

int ms_namespace_enter(struct ms_storm *st)
{
	if (unshare(CLONE_NEWNS) < 0)
		return -errno;
	/* Nothing we do may propagate back to the host's table. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	snprintf(st->root, sizeof(st->root), "/tmp/mountstorm.XXXXXX");
	if (!mkdtemp(st->root))
		return -errno;
	if (mount("mountstorm", st->root, "tmpfs", 0, "size=16m,mode=0755") < 0) {
		int err = -errno;
		rmdir(st->root);
		return err;
	}
	return 0;
}

void ms_origin(const struct ms_storm *st, unsigned group, char *out, size_t len)
{
	snprintf(out, len, "%s/g%u/m0", st->root, group);
}

static int mkdir_p(const char *path)
{
	return mkdir(path, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

static int do_mount(const char *src, const char *dst, const char *type, unsigned long fl,
		    const char *data)
{
	int err = mkdir_p(dst);

	if (err)
		return err;
	return mount(src, dst, type, fl, data) < 0 ? -errno : 0;
}

int ms_topology_build(struct ms_storm *st)
{
	const struct ms_opts *o = st->o;
	char p[MS_PATH], origin[MS_PATH];
	int err;

	for (unsigned g = 0; g < o->peers; g++) {
		snprintf(p, sizeof(p), "%s/g%u", st->root, g);
		if ((err = mkdir_p(p)))
			return err;
		ms_origin(st, g, origin, sizeof(origin));
		snprintf(p, sizeof(p), "storm-g%u", g);
		if ((err = do_mount(p, origin, "tmpfs", 0, "size=64m,mode=0755")))
			return err;
		if (mount(NULL, origin, NULL, MS_SHARED, NULL) < 0)
			return -errno;
		for (unsigned k = 1; k < o->members; k++) {
			snprintf(p, sizeof(p), "%s/g%u/m%u", st->root, g, k);
			if ((err = do_mount(origin, p, NULL, MS_BIND, NULL)))
				return err;
		}
		if (o->slave) {
			snprintf(p, sizeof(p), "%s/g%u/s", st->root, g);
			if ((err = do_mount(origin, p, NULL, MS_BIND, NULL)))
				return err;
			if (mount(NULL, p, NULL, MS_SLAVE, NULL) < 0)
				return -errno;
		}
		if (o->unbindable) {
			snprintf(p, sizeof(p), "%s/g%u/u", st->root, g);
			if ((err = do_mount(origin, p, NULL, MS_BIND, NULL)))
				return err;
			if (mount(NULL, p, NULL, MS_UNBINDABLE, NULL) < 0)
				return -errno;
		}
	}
	snprintf(p, sizeof(p), "%s/src", st->root);
	if ((err = do_mount("storm-src", p, "tmpfs", 0, "size=16m,mode=0755")))
		return err;
	snprintf(p, sizeof(p), "%s/stage", st->root);
	if ((err = do_mount("storm-stage", p, "tmpfs", 0, "size=16m,mode=0755")))
		return err;
	return 0;
}

void ms_topology_teardown(struct ms_storm *st)
{
	/* Lazy: whatever a failed wave left behind goes with the root. */
	umount2(st->root, MNT_DETACH);
	rmdir(st->root);
}
