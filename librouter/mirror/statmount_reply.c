/* SPDX-License-Identifier: MIT */
/*
 * A statmount(2) reply made into a record (listmount.c makes the calls).
 * No syscalls: every offset the kernel wrote is checked against the reply
 * before it is used.
 *
 * Records match mountinfo.c's for the same mount in every string field:
 *  - fstype is "type.subtype" as mountinfo's show_type() prints it;
 *    statmount reports the subtype separately (STATMOUNT_FS_SUBTYPE, 6.13);
 *  - source, root and path come unescaped from the kernel;
 *  - options (format documented in mountinfo.c) are rendered from mnt_attr
 *    and sb_flags, followed by mnt_opts, which is the LSM's and the
 *    filesystem's options exactly as mountinfo prints them, minus the
 *    leading comma.
 * They differ in IDs: pub.id/parent_id are the 64-bit unique IDs here and
 * the reused 32-bit ones from mountinfo (old_id is the 32-bit one in both).
 *
 * The kernel leaves a string's mask bit clear when the string is empty:
 * MNT_OPTS for a filesystem with no options to show, SB_SOURCE for a device
 * name of "", FS_SUBTYPE when there is none.  An absent bit is therefore
 * "", not an error.
 */
#include <errno.h>
#include <linux/mount.h>
#include <stddef.h>
#include <string.h>

#include "mirror/listmount.h"
#include "internal.h"
#include "alloc.h"
#include "mirror/mount.h"
#include "mountrouter-uapi.h"

/*
 * A string of the reply: "" when its mask bit is clear; NULL when the
 * offset or the terminator lies outside what the kernel could have written.
 */
static const char *sm_str(const struct mr_statmount *sm, size_t cap, uint64_t bit, uint32_t off)
{
	size_t room = cap - offsetof(struct mr_statmount, str);

	if (!(sm->mask & bit))
		return "";
	if (off >= room || !memchr(sm->str + off, '\0', room - off))
		return NULL;
	return sm->str + off;
}

static size_t put_tok(char *w, bool first, const char *tok)
{
	size_t n = strlen(tok);

	if (!first)
		*w++ = ',';
	memcpy(w, tok, n);
	return n + !first;
}

/*
 * Renders the options string (format in mountinfo.c) into @out, which must
 * hold 128 bytes plus strlen(@fsopts): mount flags in show_mnt_opts() order,
 * superblock flags in show_sb_opts() order, then the filesystem's own.
 */
/* Only the bits statmount documents for sb_flags (SB_BASIC, 6.8). */
uint32_t mr__statmount_sb_flags(const struct mr_statmount *sm)
{
	return sm->sb_flags & (MR__SB_RDONLY | MR__SB_SYNCHRONOUS | MR__SB_DIRSYNC | MR__SB_LAZYTIME);
}

static void render_options(uint64_t attr, uint32_t sb_flags, const char *fsopts, char *out)
{
	static const struct {
		uint64_t mask, value;
		const char *name;
	} mnt[] = {
		{ MOUNT_ATTR_NOSUID, MOUNT_ATTR_NOSUID, "nosuid" },
		{ MOUNT_ATTR_NODEV, MOUNT_ATTR_NODEV, "nodev" },
		{ MOUNT_ATTR_NOEXEC, MOUNT_ATTR_NOEXEC, "noexec" },
		{ MOUNT_ATTR__ATIME, MOUNT_ATTR_NOATIME, "noatime" },
		{ MOUNT_ATTR_NODIRATIME, MOUNT_ATTR_NODIRATIME, "nodiratime" },
		{ MOUNT_ATTR__ATIME, MOUNT_ATTR_RELATIME, "relatime" },
		{ MOUNT_ATTR_NOSYMFOLLOW, MOUNT_ATTR_NOSYMFOLLOW, "nosymfollow" },
		{ MOUNT_ATTR_IDMAP, MOUNT_ATTR_IDMAP, "idmapped" },
	};
	static const struct {
		uint32_t flag;
		const char *name;
	} sb[] = {
		{ MR__SB_SYNCHRONOUS, "sync" },
		{ MR__SB_DIRSYNC, "dirsync" },
		{ MR__SB_LAZYTIME, "lazytime" },
	};
	bool mnt_ro = attr & MOUNT_ATTR_RDONLY;
	char *w = out;

	w += put_tok(w, true, mnt_ro ? "ro" : "rw");
	for (size_t i = 0; i < MR__ARRAY_SIZE(mnt); i++)
		if ((attr & mnt[i].mask) == mnt[i].value)
			w += put_tok(w, false, mnt[i].name);
	/* See mountinfo.c: a read-only superblock under a rw mount shows, last. */
	if ((sb_flags & MR__SB_RDONLY) && !mnt_ro)
		w += put_tok(w, false, "ro");
	for (size_t i = 0; i < MR__ARRAY_SIZE(sb); i++)
		if (sb_flags & sb[i].flag)
			w += put_tok(w, false, sb[i].name);
	if (*fsopts)
		w += put_tok(w, false, fsopts);
	*w = '\0';
}

static struct mr__mount *sm_to_mount(const struct mr_statmount *sm, size_t cap, int *ret_err)
{
	const char *fstype, *subtype, *source, *root, *point, *fsopts;
	struct mr__mount *m;
	size_t tlen, slen, olen;
	char small[512], *scratch;

	fstype = sm_str(sm, cap, STATMOUNT_FS_TYPE, sm->fs_type);
	subtype = sm_str(sm, cap, STATMOUNT_FS_SUBTYPE, sm->fs_subtype);
	source = sm_str(sm, cap, STATMOUNT_SB_SOURCE, sm->sb_source);
	root = sm_str(sm, cap, STATMOUNT_MNT_ROOT, sm->mnt_root);
	point = sm_str(sm, cap, STATMOUNT_MNT_POINT, sm->mnt_point);
	fsopts = sm_str(sm, cap, STATMOUNT_MNT_OPTS, sm->mnt_opts);
	if (!fstype || !subtype || !source || !root || !point || !fsopts) {
		*ret_err = -EPROTO;
		return NULL;
	}

	/*
	 * One scratch block for "type.subtype" and the options string, on the
	 * stack unless the filesystem's options are long: an allocation and a
	 * free less for a change, and two cold lines less.
	 */
	tlen = strlen(fstype);
	slen = strlen(subtype);
	olen = strlen(fsopts);
	size_t need = tlen + 1 + slen + 1 + 128 + olen;
	scratch = need <= sizeof(small) ? small : mr__malloc(need);
	if (!scratch) {
		*ret_err = -ENOMEM;
		return NULL;
	}
	char *type = scratch, *opts = scratch + tlen + 1 + slen + 1;

	memcpy(type, fstype, tlen);
	if (slen) {
		type[tlen] = '.';
		memcpy(type + tlen + 1, subtype, slen + 1);
	} else {
		type[tlen] = '\0';
	}
	uint32_t sb_flags = mr__statmount_sb_flags(sm);

	render_options(sm->mnt_attr, sb_flags, fsopts, opts);
	m = mr__mount_new(&(struct mr_mount){
				  .id = sm->mnt_id,
				  .parent_id = sm->mnt_parent_id,
				  .attr = sm->mnt_attr,
				  .propagation = (uint32_t)sm->mnt_propagation,
				  .dev_major = sm->sb_dev_major,
				  .dev_minor = sm->sb_dev_minor,
				  .path = point,
				  .root = root,
				  .source = source,
				  .fstype = type,
				  .options = opts,
				  .mountinfo_parent_id = sm->mnt_parent_id_old,
			  },
			  sm->mnt_id_old, sb_flags, mr__sb_opts_hash(fsopts));
	if (scratch != small)
		mr__free(scratch);
	if (!m)
		*ret_err = -ENOMEM;
	return m;
}

int mr__statmount_parse(const void *buf, size_t cap, struct mr__mount **ret)
{
	struct mr__mount *m;
	int err = 0;

	if (cap < sizeof(struct mr_statmount))
		return -EPROTO;
	m = sm_to_mount(buf, cap, &err);
	if (!m)
		return err;
	*ret = m;
	return 0;
}
