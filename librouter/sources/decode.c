/* SPDX-License-Identifier: MIT */
/*
 * Decoders: bytes the kernel wrote, to source-neutral changes.  No
 * syscalls, no allocation, no trust: every length is checked against the
 * buffer before it is used, and a record that does not add up is counted
 * and skipped (or, when its length cannot be trusted, ends the buffer).
 */
#include <stdbool.h>
#include <string.h>
#include <sys/fanotify.h>

#include "sources/decode.h"
#include "mountrouter-uapi.h"

static bool push(struct mr__change *out, size_t max, size_t *n, enum mr__change_kind kind,
		 uint64_t id, uint64_t other, uint32_t info)
{
	if (*n >= max)
		return false;
	out[*n] = (struct mr__change){.kind = kind, .mnt_id = id, .other_id = other, .info = info};
	(*n)++;
	return true;
}

/* The mount ID in the info records that follow a fanotify event header. */
static bool fanotify_mnt_id(const unsigned char *p, size_t len, uint64_t *id)
{
	size_t off = 0;

	while (off + sizeof(struct fanotify_event_info_header) <= len) {
		struct fanotify_event_info_header h;
		memcpy(&h, p + off, sizeof(h));
		if (h.len < sizeof(h) || h.len > len - off)
			return false;
		if (h.info_type == FAN_EVENT_INFO_TYPE_MNT && h.len >= sizeof(struct mr_fanotify_info_mnt)) {
			memcpy(id, p + off + offsetof(struct mr_fanotify_info_mnt, mnt_id), sizeof(*id));
			return true;
		}
		off += h.len;
	}
	return false;
}

size_t mr__decode_fanotify(const void *buf, size_t len, struct mr__change *out, size_t max,
			   uint64_t *bad)
{
	const unsigned char *p = buf;
	size_t off = 0, n = 0;

	while (len - off >= sizeof(struct fanotify_event_metadata)) {
		struct fanotify_event_metadata md;
		memcpy(&md, p + off, sizeof(md));
		if (md.event_len < md.metadata_len || md.event_len > len - off ||
		    md.metadata_len < sizeof(md)) {
			/* The length itself is wrong: nothing after it can be framed. */
			(*bad)++;
			break;
		}
		if (md.vers != FANOTIFY_METADATA_VERSION) {
			(*bad)++;
			off += md.event_len;
			continue;
		}
		if (md.mask & FAN_Q_OVERFLOW) {
			if (!push(out, max, &n, MR__CHANGE_LOSS, 0, 0, 0))
				break;
		} else if (md.mask & (FAN_MNT_ATTACH | FAN_MNT_DETACH | FAN_MNT_ATTR_CHANGE)) {
			uint64_t id;
			if (!fanotify_mnt_id(p + off + md.metadata_len, md.event_len - md.metadata_len,
					     &id)) {
				(*bad)++;
			} else {
				/* 6.15: a move within the namespace is one record with both bits. */
				/*
				 * The project kernel's FAN_MNT_ATTR_CHANGE (bit 63 of the
				 * 64-bit mask, kernel/patches/0021) alone is an attribute
				 * change; beside attach or detach the lookup covers it.
				 */
				enum mr__change_kind k =
					(md.mask & FAN_MNT_ATTACH) && (md.mask & FAN_MNT_DETACH)
						? MR__CHANGE_MOVE
					: (md.mask & FAN_MNT_ATTACH) ? MR__CHANGE_ATTACH
					: (md.mask & FAN_MNT_DETACH) ? MR__CHANGE_DETACH
								     : MR__CHANGE_SETATTR;
				/* The pid of the process that made the change says where to look. */
				if (!push(out, max, &n, k, id, md.pid > 0 ? (uint64_t)md.pid : 0, 0))
					break;
			}
		} else {
			(*bad)++;
		}
		off += md.event_len;
	}
	return n;
}

static enum mr__change_kind mount_subtype_kind(unsigned subtype, bool *ok)
{
	*ok = true;
	switch (subtype) {
	case NOTIFY_MOUNT_NEW_MOUNT:
		return MR__CHANGE_ATTACH;
	case NOTIFY_MOUNT_UNMOUNT:
		return MR__CHANGE_DETACH;
	case NOTIFY_MOUNT_EXPIRY:
		return MR__CHANGE_EXPIRY;
	case NOTIFY_MOUNT_READONLY:
		return MR__CHANGE_READONLY;
	case NOTIFY_MOUNT_SETATTR:
		return MR__CHANGE_SETATTR;
	case NOTIFY_MOUNT_MOVE_FROM:
	case NOTIFY_MOUNT_MOVE_TO:
		/*
		 * A move inside one watch yields both records; the router looks
		 * the mount up once and ignores the second as already applied.
		 */
		return MR__CHANGE_MOVE;
	default:
		*ok = false;
		return 0;
	}
}

size_t mr__decode_watch_queue(const void *buf, size_t len, struct mr__change *out, size_t max,
			      uint64_t *bad)
{
	const unsigned char *p = buf;
	size_t off = 0, n = 0;

	while (len - off >= sizeof(struct watch_notification)) {
		struct watch_notification w;
		memcpy(&w, p + off, sizeof(w));
		/* Lengths are in bytes, multiples of 8 (watch_sizeof in the kernel). */
		size_t rlen = (w.info & WATCH_INFO_LENGTH) >> WATCH_INFO_LENGTH__SHIFT;
		if (rlen < sizeof(w) || rlen > len - off) {
			(*bad)++;
			break;
		}
		if (w.type == WATCH_TYPE_META) {
			if (w.subtype == WATCH_META_LOSS_NOTIFICATION) {
				if (!push(out, max, &n, MR__CHANGE_LOSS, 0, 0, w.info))
					break;
			} else if (w.subtype == WATCH_META_REMOVAL_NOTIFICATION) {
				if (!push(out, max, &n, MR__CHANGE_REMOVED, 0, 0, w.info))
					break;
			} else {
				(*bad)++;
			}
		} else if (w.type == MR_WATCH_TYPE_MOUNT_NOTIFY) {
			struct mount_notification mn;
			bool ok;
			enum mr__change_kind k = mount_subtype_kind(w.subtype, &ok);
			if (rlen < sizeof(mn)) {
				(*bad)++;
			} else if (ok) {
				memcpy(&mn, p + off, sizeof(mn));
				/*
				 * Topology records name the moved/added/removed mount
				 * in auxiliary_mount; attribute records name the
				 * changed mount in triggered_on.
				 */
				uint64_t id = mn.auxiliary_mount ? mn.auxiliary_mount : mn.triggered_on;
				if (!push(out, max, &n, k, id, mn.triggered_on, w.info))
					break;
			} else {
				(*bad)++;
			}
		} else {
			(*bad)++;
		}
		off += rlen;
	}
	return n;
}
