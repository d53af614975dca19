/* SPDX-License-Identifier: MIT */
/*
 * mountinfo_diff.c: which lines of mountinfo are new, changed or gone since
 * the last read, whatever their IDs, and memory that follows the lines, not
 * the largest ID.  No kernel: the text is given.  Label: unit.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mirror/mount.h"
#include "mirror/mountinfo_diff.h"
#include "testutil.h"

struct seen_lines {
	int changed, known, same, gone;
	uint32_t last_id;
	uint64_t last_key;
	char changed_lines[512]; /* what changed said, one line after another */
};

static int on_changed(void *arg, uint32_t id, const char *line, size_t n, struct mr__mi_slot *s,
		      bool known)
{
	struct seen_lines *v = arg;

	size_t used = strlen(v->changed_lines);

	if (used + n + 2 <= sizeof(v->changed_lines)) {
		memcpy(v->changed_lines + used, line, n);
		memcpy(v->changed_lines + used + n, "\n", 2);
	}
	v->changed++;
	v->known += known;
	v->last_id = id;
	v->last_key = s->key;
	return 0;
}

static int on_same(void *arg, uint32_t id, const char *line, size_t n, struct mr__mi_slot *s)
{
	(void)id;
	(void)line;
	(void)n;
	(void)s;
	((struct seen_lines *)arg)->same++;
	return 0;
}

static int on_gone(void *arg, uint32_t id, struct mr__mi_slot *s)
{
	struct seen_lines *v = arg;

	(void)s;
	v->gone++;
	v->last_id = id;
	return 0;
}

static const struct mr__mi_diff_ops ops = {.changed = on_changed, .same = on_same,
					   .gone = on_gone};

/* Writes @text to a file and runs the differ over it. */
static int run_on(struct mr__mi_diff *d, const char *text, struct seen_lines *v)
{
	char path[] = "/tmp/mr-diff.XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0)
		return -errno;
	unlink(path);
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		close(fd);
		return -EIO;
	}
	*v = (struct seen_lines){0};
	int err = mr__mi_diff_run(d, fd, &ops, v, NULL);
	close(fd);
	return err;
}

static int test_diff(void)
{
	struct mr__mi_diff d = {0};
	struct seen_lines v;
	const char *a = "20 1 0:5 / / rw - tmpfs t rw\n"
			"21 20 0:6 / /a rw shared:1 - tmpfs a rw,size=1k\n"
			"22 20 0:7 / /b rw - tmpfs b rw\n";

	CHECK(run_on(&d, a, &v) == 0);
	CHECK(v.changed == 3 && v.known == 0 && v.same == 0 && v.gone == 0);
	CHECK(run_on(&d, a, &v) == 0);
	CHECK(v.changed == 0 && v.same == 3);
	/* /a read-only, /b gone, /c new (its ID reused later) */
	const char *b = "20 1 0:5 / / rw - tmpfs t rw\n"
			"21 20 0:6 / /a ro shared:1 - tmpfs a rw,size=1k\n"
			"23 20 0:8 / /c rw - tmpfs c rw\n";
	CHECK(run_on(&d, b, &v) == 0);
	CHECK(v.changed == 2 && v.known == 1 && v.same == 1 && v.gone == 1 && v.last_id == 22);
	/* A reused ID with another line is a changed, known line. */
	const char *c = "20 1 0:5 / / rw - tmpfs t rw\n"
			"21 20 0:6 / /a ro shared:1 - tmpfs a rw,size=1k\n"
			"23 20 0:9 / /d rw - tmpfs d rw\n";
	CHECK(run_on(&d, c, &v) == 0);
	CHECK(v.changed == 1 && v.known == 1 && v.last_id == 23);
	/* Not mountinfo: an error, and nothing trusted until a reset. */
	CHECK(run_on(&d, "x y z\n", &v) == -EINVAL);
	CHECK(run_on(&d, "20 1 0:5 / / rw - tmpfs t rw", &v) == -EINVAL); /* no '\n' */
	mr__mi_diff_reset(&d);
	CHECK(run_on(&d, a, &v) == 0 && v.changed == 3 && v.known == 0);
	mr__mi_diff_free(&d);
	return 0;
}

/*
 * An ID listed twice in one read (freed and reused while the file was read
 * in pieces) is reported once, with its later line, whatever came before:
 * two versions of one mount would leave the caller to guess which stands.
 */
static int test_id_twice_in_one_read(void)
{
	struct mr__mi_diff d = {0};
	struct seen_lines v;
	const char *a = "20 1 0:5 / / rw - tmpfs t rw\n"
			"21 20 0:6 / /a rw - tmpfs a rw\n"
			"22 21 0:7 / /a/s rw - tmpfs s rw\n";

	CHECK(run_on(&d, a, &v) == 0 && v.changed == 3);
	/* 22 under /a, then 22 again at /b, one level higher. */
	const char *b = "20 1 0:5 / / rw - tmpfs t rw\n"
			"21 20 0:6 / /a rw - tmpfs a rw\n"
			"22 21 0:7 / /a/s ro - tmpfs s rw\n"
			"22 20 0:8 / /b rw - tmpfs b rw\n";
	CHECK(run_on(&d, b, &v) == 0);
	CHECK(v.changed == 1 && v.known == 1 && v.gone == 0);
	CHECK(!strcmp(v.changed_lines, "22 20 0:8 / /b rw - tmpfs b rw\n"));
	/* The next read lists the later line only: nothing new. */
	CHECK(run_on(&d, "20 1 0:5 / / rw - tmpfs t rw\n"
			 "21 20 0:6 / /a rw - tmpfs a rw\n"
			 "22 20 0:8 / /b rw - tmpfs b rw\n", &v) == 0);
	CHECK(v.changed == 0 && v.same == 3);
	/* Changed, then listed again the same: still reported, once. */
	const char *c = "20 1 0:5 / / rw - tmpfs t rw\n"
			"21 20 0:6 / /a ro - tmpfs a rw\n"
			"22 20 0:8 / /b rw - tmpfs b rw\n"
			"21 20 0:6 / /a ro - tmpfs a rw\n";
	CHECK(run_on(&d, c, &v) == 0);
	CHECK(v.changed == 1 && !strcmp(v.changed_lines, "21 20 0:6 / /a ro - tmpfs a rw\n"));
	/* As it was, then another line: the other line, and a new ID still new. */
	const char *e = "20 1 0:5 / / rw - tmpfs t rw\n"
			"21 20 0:6 / /a ro - tmpfs a rw\n"
			"23 20 0:9 / /c rw - tmpfs c rw\n"
			"21 20 0:10 / /d rw - tmpfs d rw\n"
			"23 20 0:9 / /c rw - tmpfs c rw\n";
	CHECK(run_on(&d, e, &v) == 0);
	CHECK(v.changed == 2 && v.known == 1 && v.same == 2 && v.gone == 1);
	CHECK(!strcmp(v.changed_lines, "21 20 0:10 / /d rw - tmpfs d rw\n"
				       "23 20 0:9 / /c rw - tmpfs c rw\n"));
	mr__mi_diff_free(&d);
	return 0;
}

/* One line for @id; @ver tells versions of it apart. */
static size_t put_line(char *p, uint32_t id, unsigned ver)
{
	return (size_t)sprintf(p, "%u 1 0:%u / /m%u rw - tmpfs t rw,v=%u\n", id, id, id, ver);
}

/* IDs from all over the allocator's range, the way a busy host leaves them. */
static int test_sparse_ids(void)
{
	struct mr__mi_diff d = {0};
	struct seen_lines v;
	static const uint32_t ids[] = {0, 1, 4096, 5000000, (1u << 28) - 1};
	char text[1024];
	size_t len = 0;

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		len += put_line(text + len, ids[i], 1);
	CHECK(run_on(&d, text, &v) == 0);
	CHECK(v.changed == 5 && v.known == 0);
	CHECK(run_on(&d, text, &v) == 0);
	CHECK(v.changed == 0 && v.same == 5 && v.gone == 0);
	/* Five lines, whatever their IDs: the smallest table (2.5 KiB). */
	CHECK(d.cap == 64 && d.n == 5);
	/* Past the IDs the kernel hands out: not mountinfo. */
	put_line(text, 1u << 28, 1);
	CHECK(run_on(&d, text, &v) == -EINVAL);
	mr__mi_diff_free(&d);
	return 0;
}

/* A table that grows to thousands of lines and back gives its memory back. */
static int test_memory_follows_lines(void)
{
	struct mr__mi_diff d = {0};
	struct seen_lines v;
	char *text = malloc(5000 * 64);
	size_t len = 0;

	CHECK(text);
	for (uint32_t id = 100000; id < 105000; id++)
		len += put_line(text + len, id, 1);
	CHECK(run_on(&d, text, &v) == 0 && v.changed == 5000);
	CHECK(d.n == 5000 && d.cap >= 2 * d.n && d.cap <= 4 * d.n);
	len = 0;
	for (uint32_t id = 104990; id < 105000; id++)
		len += put_line(text + len, id, 1);
	CHECK(run_on(&d, text, &v) == 0);
	CHECK(v.gone == 4990 && v.same == 10 && v.changed == 0);
	CHECK(d.n == 10 && d.cap == 64);
	free(text);
	mr__mi_diff_free(&d);
	return 0;
}

/* A key set for a mount the next read does not list is dropped with it. */
static int test_keys(void)
{
	struct mr__mi_diff d = {0};
	struct seen_lines v;
	char text[256];

	put_line(text, 7, 1);
	CHECK(run_on(&d, text, &v) == 0);
	CHECK(mr__mi_diff_set_key(&d, 7, 1007) == 0);
	CHECK(mr__mi_diff_set_key(&d, 8, 1008) == 0); /* gone before the read */
	CHECK(mr__mi_diff_set_key(&d, 1u << 28, 1) == -EINVAL);
	put_line(text, 7, 2);
	CHECK(run_on(&d, text, &v) == 0);
	CHECK(v.changed == 1 && v.known == 1 && v.last_key == 1007 && v.gone == 0);
	CHECK(d.n == 1);
	/* ID 8 comes back as another mount: no key from the one before. */
	put_line(text + put_line(text, 7, 2), 8, 1);
	CHECK(run_on(&d, text, &v) == 0);
	CHECK(v.changed == 1 && v.known == 0 && v.last_id == 8 && v.last_key == 0);
	mr__mi_diff_free(&d);
	return 0;
}

/*
 * Against a model, over many reads: random IDs appear, change and go, with
 * long probe runs (IDs that share a home) and erasures inside them.  Every
 * callback must name exactly the IDs the model says, once each.
 */
enum { MODEL_IDS = 3000, MODEL_READS = 400 };

struct model_seen {
	unsigned char changed[MODEL_IDS], known[MODEL_IDS], same[MODEL_IDS], gone[MODEL_IDS];
	struct model_id {
		uint32_t id;
		int index;
	} by_id[MODEL_IDS]; /* sorted by ID */
};

static int cmp_model_id(const void *a, const void *b)
{
	uint32_t x = ((const struct model_id *)a)->id, y = ((const struct model_id *)b)->id;

	return x < y ? -1 : x > y;
}

/* Counts a callback for @id in @counts; the model's index of @id, or -ERANGE. */
static int model_count(struct model_seen *m, uint32_t id, unsigned char *counts)
{
	struct model_id key = {.id = id};
	const struct model_id *e = bsearch(&key, m->by_id, MODEL_IDS, sizeof(key), cmp_model_id);

	if (!e)
		return -ERANGE;
	counts[e->index]++;
	return e->index;
}

static int m_changed(void *arg, uint32_t id, const char *line, size_t n, struct mr__mi_slot *s,
		     bool known)
{
	struct model_seen *m = arg;
	int i = model_count(m, id, m->changed);

	(void)line;
	(void)n;
	if (i < 0)
		return i;
	m->known[i] += known;
	/* A record the differ must let go of when the line goes (LSan checks). */
	if (!s->rec)
		s->rec = mr__mount_new(&(struct mr_mount){.id = id + 1, .path = "/m"}, 0, 0, 0);
	return s->rec ? 0 : -ENOMEM;
}

static int m_same(void *arg, uint32_t id, const char *line, size_t n, struct mr__mi_slot *s)
{
	struct model_seen *m = arg;

	(void)line;
	(void)n;
	(void)s;
	return model_count(m, id, m->same) < 0 ? -ERANGE : 0;
}

static int m_gone(void *arg, uint32_t id, struct mr__mi_slot *s)
{
	struct model_seen *m = arg;

	(void)s;
	return model_count(m, id, m->gone) < 0 ? -ERANGE : 0;
}

static const struct mr__mi_diff_ops model_ops = {.changed = m_changed, .same = m_same,
						 .gone = m_gone};

static int test_against_model(void)
{
	static uint32_t id_of[MODEL_IDS];
	static unsigned ver[MODEL_IDS], last_ver[MODEL_IDS]; /* 0: not listed */
	static struct model_seen seen;
	char *text = malloc(MODEL_IDS * 64);
	char path[] = "/tmp/mr-diff.XXXXXX";
	int fd = mkstemp(path);
	struct mr__mi_diff d = {0};
	unsigned rnd = 12345;

	CHECK(text && fd >= 0);
	unlink(path);
	/* Dense IDs, and a tail spread over the whole range. */
	for (int i = 0; i < MODEL_IDS; i++)
		id_of[i] = i < MODEL_IDS / 2 ? (uint32_t)i : (uint32_t)(i * 88997u) % (1u << 28);
	for (int i = 0; i < MODEL_IDS; i++)
		seen.by_id[i] = (struct model_id){.id = id_of[i], .index = i};
	qsort(seen.by_id, MODEL_IDS, sizeof(seen.by_id[0]), cmp_model_id);
	for (int read = 0; read < MODEL_READS; read++) {
		/* Each read lists a different share of the IDs: tables grow and shrink. */
		unsigned share = read % 50 < 25 ? 90 : 5;
		size_t len = 0;
		for (int i = 0; i < MODEL_IDS; i++) {
			rnd = rnd * 1103515245u + 12345u;
			unsigned r = (rnd >> 8) % 100;
			if (r >= share)
				ver[i] = 0;
			else if (!ver[i] || r < share / 10)
				ver[i] = last_ver[i] + 1 + (r & 1);
			if (ver[i])
				len += put_line(text + len, id_of[i], ver[i]);
		}
		CHECK(ftruncate(fd, 0) == 0);
		CHECK(pwrite(fd, text, len, 0) == (ssize_t)len);
		memset(seen.changed, 0, sizeof(seen.changed));
		memset(seen.known, 0, sizeof(seen.known));
		memset(seen.same, 0, sizeof(seen.same));
		memset(seen.gone, 0, sizeof(seen.gone));
		CHECK(mr__mi_diff_run(&d, fd, &model_ops, &seen, NULL) == 0);
		size_t listed = 0;
		for (int i = 0; i < MODEL_IDS; i++) {
			bool was = last_ver[i] != 0, is = ver[i] != 0;
			bool changed = is && ver[i] != last_ver[i];
			listed += is;
			CHECK(seen.changed[i] == changed);
			CHECK(seen.known[i] == (changed && was));
			CHECK(seen.same[i] == (is && !changed));
			CHECK(seen.gone[i] == (was && !is));
			last_ver[i] = ver[i];
		}
		/* At most half full, and never more than 4 places a line past the smallest. */
		CHECK(d.n == listed && 2 * d.n <= d.cap);
		CHECK(d.cap == 64 || d.cap <= 8 * d.n);
	}
	close(fd);
	free(text);
	mr__mi_diff_free(&d);
	return 0;
}

int main(void)
{
	int fail = 0;

	fail |= RUN(test_diff);
	fail |= RUN(test_id_twice_in_one_read);
	fail |= RUN(test_sparse_ids);
	fail |= RUN(test_memory_follows_lines);
	fail |= RUN(test_keys);
	fail |= RUN(test_against_model);
	return fail ? T_EXIT_FAIL : T_EXIT_PASS;
}
