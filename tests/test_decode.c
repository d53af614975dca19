/* SPDX-License-Identifier: MIT */
/* Decoders: fanotify mount records and watch_queue mount notifications, good and hostile. */
#include <string.h>
#include <sys/fanotify.h>

#include "sources/decode.h"
#include "mountrouter-uapi.h"
#include "testutil.h"

/* Appends one fanotify mount record (metadata + mount info) to @buf at @off. */
static size_t fan_record(unsigned char *buf, size_t off, uint64_t mask, uint64_t mnt_id)
{
	struct fanotify_event_metadata md = {
		.event_len = sizeof(md) + sizeof(struct mr_fanotify_info_mnt),
		.vers = FANOTIFY_METADATA_VERSION,
		.metadata_len = sizeof(md),
		.mask = mask,
		.fd = FAN_NOFD,
	};
	struct mr_fanotify_info_mnt info = {
		.info_type = FAN_EVENT_INFO_TYPE_MNT, .len = sizeof(info), .mnt_id = mnt_id};

	memcpy(buf + off, &md, sizeof(md));
	memcpy(buf + off + sizeof(md), &info, sizeof(info));
	return off + md.event_len;
}

static int test_fanotify_kinds(void)
{
	unsigned char buf[512];
	struct mr__change c[8];
	uint64_t bad = 0;
	size_t off = 0;

	off = fan_record(buf, off, FAN_MNT_ATTACH, 0x80000001ull);
	off = fan_record(buf, off, FAN_MNT_DETACH, 0x80000002ull);
	off = fan_record(buf, off, FAN_MNT_ATTACH | FAN_MNT_DETACH, 0x80000003ull);
	/* The project kernel's attribute event: bit 63, a 64-bit mask not to truncate. */
	off = fan_record(buf, off, FAN_MNT_ATTR_CHANGE, 0x80000004ull);
	struct fanotify_event_metadata ovf = {.event_len = sizeof(ovf), .vers = FANOTIFY_METADATA_VERSION,
					      .metadata_len = sizeof(ovf), .mask = FAN_Q_OVERFLOW, .fd = FAN_NOFD};
	memcpy(buf + off, &ovf, sizeof(ovf));
	off += sizeof(ovf);

	size_t n = mr__decode_fanotify(buf, off, c, 8, &bad);
	CHECK_EQ_U64(n, 5);
	CHECK_EQ_U64(bad, 0);
	CHECK(c[0].kind == MR__CHANGE_ATTACH && c[0].mnt_id == 0x80000001ull);
	CHECK(c[1].kind == MR__CHANGE_DETACH && c[1].mnt_id == 0x80000002ull);
	CHECK(c[2].kind == MR__CHANGE_MOVE && c[2].mnt_id == 0x80000003ull);
	CHECK(c[3].kind == MR__CHANGE_SETATTR && c[3].mnt_id == 0x80000004ull);
	CHECK(c[4].kind == MR__CHANGE_LOSS);

	/* The output array bounds the work: nothing is written past it. */
	n = mr__decode_fanotify(buf, off, c, 2, &bad);
	CHECK_EQ_U64(n, 2);
	return 0;
}

static int test_fanotify_hostile(void)
{
	unsigned char buf[256];
	struct mr__change c[8];
	uint64_t bad = 0;
	size_t off = fan_record(buf, 0, FAN_MNT_ATTACH, 42);

	/* Truncated: a record cut anywhere yields nothing for it, and no crash. */
	for (size_t cut = 0; cut < off; cut++) {
		bad = 0;
		size_t n = mr__decode_fanotify(buf, cut, c, 8, &bad);
		CHECK(n == 0);
		CHECK(cut < sizeof(struct fanotify_event_metadata) || bad == 1);
	}

	/* An event_len running past the buffer stops decoding. */
	struct fanotify_event_metadata md;
	memcpy(&md, buf, sizeof(md));
	md.event_len = 4096;
	memcpy(buf, &md, sizeof(md));
	bad = 0;
	CHECK(mr__decode_fanotify(buf, off, c, 8, &bad) == 0 && bad == 1);

	/* An event_len shorter than the header cannot frame anything. */
	md.event_len = 3;
	memcpy(buf, &md, sizeof(md));
	bad = 0;
	CHECK(mr__decode_fanotify(buf, off, c, 8, &bad) == 0 && bad == 1);

	/* Wrong version: skipped, the next record still decodes. */
	off = fan_record(buf, 0, FAN_MNT_ATTACH, 1);
	off = fan_record(buf, off, FAN_MNT_DETACH, 2);
	memcpy(&md, buf, sizeof(md));
	md.vers = 99;
	memcpy(buf, &md, sizeof(md));
	bad = 0;
	CHECK(mr__decode_fanotify(buf, off, c, 8, &bad) == 1 && bad == 1);
	CHECK(c[0].kind == MR__CHANGE_DETACH && c[0].mnt_id == 2);

	/* Info record with a zero length, or missing: counted, skipped. */
	off = fan_record(buf, 0, FAN_MNT_ATTACH, 1);
	buf[sizeof(md) + 2] = 0;
	buf[sizeof(md) + 3] = 0;
	bad = 0;
	CHECK(mr__decode_fanotify(buf, off, c, 8, &bad) == 0 && bad == 1);
	return 0;
}

static size_t wq_record(unsigned char *buf, size_t off, unsigned type, unsigned subtype,
			uint32_t info, uint64_t trig, uint64_t aux)
{
	struct mount_notification n = {0};

	n.watch.type = type;
	n.watch.subtype = subtype;
	n.watch.info = info | sizeof(n);
	n.triggered_on = trig;
	n.auxiliary_mount = aux;
	memcpy(buf + off, &n, sizeof(n));
	return off + sizeof(n);
}

static int test_watch_queue_kinds(void)
{
	unsigned char buf[1024];
	struct mr__change c[16];
	uint64_t bad = 0;
	size_t off = 0;

	off = wq_record(buf, off, WATCH_TYPE_MOUNT_NOTIFY, NOTIFY_MOUNT_NEW_MOUNT,
			NOTIFY_MOUNT_IN_SUBTREE | NOTIFY_MOUNT_IS_SUBMOUNT | (3 << 8), 10, 11);
	off = wq_record(buf, off, WATCH_TYPE_MOUNT_NOTIFY, NOTIFY_MOUNT_UNMOUNT, 0, 10, 12);
	off = wq_record(buf, off, WATCH_TYPE_MOUNT_NOTIFY, NOTIFY_MOUNT_EXPIRY, 0, 13, 0);
	off = wq_record(buf, off, WATCH_TYPE_MOUNT_NOTIFY, NOTIFY_MOUNT_READONLY,
			NOTIFY_MOUNT_IS_NOW_RO, 14, 0);
	off = wq_record(buf, off, WATCH_TYPE_MOUNT_NOTIFY, NOTIFY_MOUNT_SETATTR, 0, 15, 0);
	off = wq_record(buf, off, WATCH_TYPE_MOUNT_NOTIFY, NOTIFY_MOUNT_MOVE_FROM, 0, 16, 17);
	off = wq_record(buf, off, WATCH_TYPE_MOUNT_NOTIFY, NOTIFY_MOUNT_MOVE_TO, 0, 18, 17);
	struct watch_notification loss = {.type = WATCH_TYPE_META,
					  .subtype = WATCH_META_LOSS_NOTIFICATION,
					  .info = sizeof(loss)};
	memcpy(buf + off, &loss, sizeof(loss));
	off += sizeof(loss);

	size_t n = mr__decode_watch_queue(buf, off, c, 16, &bad);
	CHECK_EQ_U64(bad, 0);
	CHECK_EQ_U64(n, 8);
	CHECK(c[0].kind == MR__CHANGE_ATTACH && c[0].mnt_id == 11 && c[0].other_id == 10);
	CHECK((c[0].info & WATCH_INFO_ID) >> WATCH_INFO_ID__SHIFT == 3);
	CHECK(c[0].info & NOTIFY_MOUNT_IS_SUBMOUNT);
	CHECK(c[1].kind == MR__CHANGE_DETACH && c[1].mnt_id == 12);
	CHECK(c[2].kind == MR__CHANGE_EXPIRY && c[2].mnt_id == 13);
	CHECK(c[3].kind == MR__CHANGE_READONLY && c[3].mnt_id == 14);
	CHECK(c[4].kind == MR__CHANGE_SETATTR && c[4].mnt_id == 15);
	CHECK(c[5].kind == MR__CHANGE_MOVE && c[5].mnt_id == 17);
	CHECK(c[6].kind == MR__CHANGE_MOVE && c[6].mnt_id == 17);
	CHECK(c[7].kind == MR__CHANGE_LOSS);
	return 0;
}

static int test_watch_queue_hostile(void)
{
	unsigned char buf[256];
	struct mr__change c[8];
	uint64_t bad = 0;
	size_t off;

	/* A zero length would loop forever if trusted. */
	struct watch_notification z = {.type = WATCH_TYPE_MOUNT_NOTIFY, .info = 0};
	memcpy(buf, &z, sizeof(z));
	CHECK(mr__decode_watch_queue(buf, sizeof(z), c, 8, &bad) == 0 && bad == 1);

	/* A mount record too short for its IDs is skipped, the next one decodes. */
	struct watch_notification s = {.type = WATCH_TYPE_MOUNT_NOTIFY,
				       .subtype = NOTIFY_MOUNT_NEW_MOUNT, .info = 16};
	memcpy(buf, &s, sizeof(s));
	memset(buf + 8, 0, 8);
	off = wq_record(buf, 16, WATCH_TYPE_MOUNT_NOTIFY, NOTIFY_MOUNT_UNMOUNT, 0, 1, 2);
	bad = 0;
	CHECK(mr__decode_watch_queue(buf, off, c, 8, &bad) == 1 && bad == 1);
	CHECK(c[0].kind == MR__CHANGE_DETACH && c[0].mnt_id == 2);

	/* Unknown subtype and unknown type: counted and skipped. */
	off = wq_record(buf, 0, WATCH_TYPE_MOUNT_NOTIFY, 77, 0, 1, 2);
	off = wq_record(buf, off, 9, 0, 0, 1, 2);
	bad = 0;
	CHECK(mr__decode_watch_queue(buf, off, c, 8, &bad) == 0 && bad == 2);

	/* Length running past the buffer. */
	off = wq_record(buf, 0, WATCH_TYPE_MOUNT_NOTIFY, NOTIFY_MOUNT_UNMOUNT, 0, 1, 2);
	bad = 0;
	CHECK(mr__decode_watch_queue(buf, off - 1, c, 8, &bad) == 0 && bad == 1);
	return 0;
}

int main(void)
{
	int fail = 0;

	fail |= RUN(test_fanotify_kinds);
	fail |= RUN(test_fanotify_hostile);
	fail |= RUN(test_watch_queue_kinds);
	fail |= RUN(test_watch_queue_hostile);
	return fail ? T_EXIT_FAIL : T_EXIT_PASS;
}
