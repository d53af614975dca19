/* SPDX-License-Identifier: MIT */
/*
 * Parsers and tables side by side: what bench_tables.cc times.
 *
 * The one bench file that reaches past testing.h: the parser and the mirror
 * are what is compared, and testing.h declares neither (it keeps to the
 * routing path).  It includes the headers of those two concepts and of the
 * allocator they use, nothing else of the library (see testing.h): only
 * mr__mountinfo_*, mr__table_*, mr__mirror_*, mr__mount_* and
 * mr__malloc/mr__free are used.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ck_hs.h>
#include <ck_malloc.h>
#ifdef BENCH_HAVE_LIBMOUNT
#include <libmount/libmount.h>
#endif

#include "alloc.h"
#include "mirror/mirror.h"
#include "mirror/mount.h"
#include "mirror/mountinfo.h"
#include "tables.h"

/* ---- a 10,000-mount mountinfo ---- */

/* A pseudo-random hex string of @n digits (container layer and pod IDs). */
static void hex(uint64_t *rng, char *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		*rng ^= *rng << 13;
		*rng ^= *rng >> 7;
		*rng ^= *rng << 17;
		out[i] = "0123456789abcdef"[*rng & 15];
	}
	out[n] = '\0';
}

int bench_mountinfo_write(size_t n, char *path)
{
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	char layer[65], low1[27], low2[27], pod[33];
	uint32_t group = 0;
	FILE *f;
	int fd;

	strcpy(path, "/tmp/bench-mountinfo-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return -errno;
	}
	fprintf(f, "21 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro\n");
	for (size_t i = 1; i < n; i++) {
		uint32_t id = 21 + (uint32_t)i;
		/* Ten mounts per container: its overlay root, then what sits on it. */
		uint32_t top = 21 + (uint32_t)(i - (i - 1) % 10);
		uint32_t parent = (i - 1) % 10 ? top : 21;

		if ((i - 1) % 10 == 0) {
			hex(&rng, layer, 64);
			hex(&rng, low1, 26);
			hex(&rng, low2, 26);
			hex(&rng, pod, 32);
			group++;
		}
		switch ((i - 1) % 10) {
		case 0:
			fprintf(f,
				"%u %u 0:%u / /var/lib/containers/storage/overlay/%s/merged "
				"rw,relatime shared:%u - overlay overlay rw,context=\"system_u:object_r:"
				"container_file_t:s0:c1022,c1023\",lowerdir=/var/lib/containers/storage/"
				"overlay/l/%s:/var/lib/containers/storage/overlay/l/%s,upperdir=/var/lib/"
				"containers/storage/overlay/%s/diff,workdir=/var/lib/containers/storage/"
				"overlay/%s/work,redirect_dir=nofollow,uuid=on\n",
				id, parent, 100 + group, layer, group + 1, low1, low2, layer, layer);
			break;
		case 1:
			fprintf(f, "%u %u 0:%u / /var/lib/containers/storage/overlay/%s/merged/proc "
				   "rw,nosuid,nodev,noexec,relatime - proc proc rw\n",
				id, parent, 20000 + group, layer);
			break;
		case 2:
			fprintf(f, "%u %u 0:%u / /var/lib/containers/storage/overlay/%s/merged/dev "
				   "rw,nosuid - tmpfs tmpfs rw,size=65536k,mode=755,inode64\n",
				id, parent, 30000 + group, layer);
			break;
		case 3:
			fprintf(f, "%u %u 0:%u / /var/lib/containers/storage/overlay/%s/merged/sys "
				   "ro,nosuid,nodev,noexec,relatime - sysfs sysfs ro\n",
				id, parent, 21, layer);
			break;
		case 4:
			fprintf(f, "%u %u 0:%u / /var/lib/containers/storage/overlay/%s/merged/dev/shm "
				   "rw,nosuid,nodev,noexec,relatime master:%u - tmpfs shm "
				   "rw,size=64000k,inode64\n",
				id, parent, 40000 + group, layer, 5);
			break;
		case 5:
		case 6:
			/* The pod's files, bound from the host's disk. */
			fprintf(f, "%u %u 259:2 /var/lib/kubelet/pods/%s/%s "
				   "/var/lib/containers/storage/overlay/%s/merged/etc/%s "
				   "rw,relatime master:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro\n",
				id, parent, pod, (i - 1) % 10 == 5 ? "etc-hosts" : "containers/app/termination-log",
				layer, (i - 1) % 10 == 5 ? "hosts" : "termination-log");
			break;
		case 7:
			fprintf(f, "%u %u 0:%u / /var/lib/kubelet/pods/%s/volumes/kubernetes.io~projected/"
				   "kube-api-access-%.5s rw,relatime shared:%u - tmpfs tmpfs "
				   "rw,size=7901476k,inode64,noswap\n",
				id, 21, 50000 + group, pod, low1, 2 * group + 1000);
			break;
		case 8:
			/* A volume whose name has spaces: the kernel writes them \040. */
			fprintf(f, "%u %u 0:%u /exports/Shared\\040Data/%s "
				   "/var/lib/containers/storage/overlay/%s/merged/srv/My\\040Files\\040%u "
				   "rw,nosuid,nodev,relatime master:%u - nfs4 "
				   "files.example.net:/exports/Shared\\040Data rw,vers=4.2,rsize=1048576,"
				   "wsize=1048576,namlen=255,hard,proto=tcp,timeo=600,retrans=2,"
				   "sec=sys,clientaddr=10.0.0.5,local_lock=none,addr=10.0.0.2\n",
				id, parent, 60, pod, layer, group, 7);
			break;
		default:
			fprintf(f, "%u %u 0:%u / /var/lib/containers/storage/overlay/%s/merged/sys/fs/"
				   "cgroup ro,nosuid,nodev,noexec,relatime - cgroup2 cgroup2 "
				   "rw,nsdelegate,memory_recursiveprot\n",
				id, top + 3, 26, layer);
			break;
		}
	}
	if (fclose(f) != 0) {
		unlink(path);
		return -EIO;
	}
	return 0;
}

/* As a source reads it: the whole file through one fd, then one parse. */
long bench_parse_project(const char *path)
{
	struct mr__table t = {0};
	char *buf = NULL;
	size_t cap = 0, len;
	long r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	r = mr__mountinfo_read_fd(fd, &buf, &cap, &len, NULL);
	if (r == 0)
		r = mr__mountinfo_parse(buf, len, &t);
	mr__table_clear(&t);
	mr__free(buf);
	close(fd);
	return r;
}

long bench_parse_libmount(const char *path)
{
#ifdef BENCH_HAVE_LIBMOUNT
	struct libmnt_table *tb = mnt_new_table_from_file(path);
	long n;

	if (!tb)
		return -EINVAL;
	n = mnt_table_get_nents(tb);
	mnt_unref_table(tb);
	return n;
#else
	(void)path;
	return -EOPNOTSUPP;
#endif
}

/* ---- ID tables ---- */

/* The mirror's own hash (mr__mix64, mirror/mirror.h), so both tables probe alike. */
#define mix64(x) ((unsigned long)mr__mix64(x))

/* A count per key, as the mirror's superblock and parent indexes keep. */
struct count {
	uint64_t key;
	uint32_t count, sb_flags, sb_opts;
};

struct bench_ids {
	bool ck, counts; /* ck_hs; and its superblock and parent counts */
	size_t n;
	uint64_t lo, hi; /* live IDs: [lo, hi) */
	uint64_t rng;
	struct mr__mirror mirror;
	ck_hs_t ids, sbs, parents;
};

static unsigned long mount_hash(const void *o, unsigned long seed)
{
	(void)seed;
	return mix64(((const struct mr__mount *)o)->pub.id);
}

static bool mount_cmp(const void *a, const void *b)
{
	return ((const struct mr__mount *)a)->pub.id == ((const struct mr__mount *)b)->pub.id;
}

static unsigned long count_hash(const void *o, unsigned long seed)
{
	(void)seed;
	return mix64(((const struct count *)o)->key);
}

static bool count_cmp(const void *a, const void *b)
{
	return ((const struct count *)a)->key == ((const struct count *)b)->key;
}

/* ck_hs allocates through the library's allocator, as the mirror does. */
static void *ck_alloc(size_t n)
{
	return mr__malloc(n);
}

static void ck_release(void *p, size_t n, bool defer)
{
	(void)n;
	(void)defer;
	mr__free(p);
}

static struct ck_malloc ck_allocator = { .malloc = ck_alloc, .free = ck_release };

static uint64_t dev_of(const struct mr__mount *m)
{
	return (uint64_t)m->pub.dev_major << 32 | m->pub.dev_minor;
}

static bool count_add(ck_hs_t *hs, uint64_t key, const struct mr__mount *m)
{
	struct count probe = { .key = key }, *c;
	unsigned long h = mix64(key);

	c = ck_hs_get(hs, h, &probe);
	if (!c) {
		c = mr__malloc(sizeof(*c));
		if (!c)
			return false;
		*c = probe;
		if (!ck_hs_put(hs, h, c)) {
			mr__free(c);
			return false;
		}
	}
	c->count++;
	c->sb_flags = m->sb_flags;
	c->sb_opts = m->sb_opts;
	return true;
}

static void count_del(ck_hs_t *hs, uint64_t key)
{
	struct count probe = { .key = key }, *c;
	unsigned long h = mix64(key);

	c = ck_hs_get(hs, h, &probe);
	if (c && --c->count == 0) {
		ck_hs_remove(hs, h, &probe);
		mr__free(c);
	}
}

/* The mirror's put: insert or replace, both counts kept. */
static bool ck_put(struct bench_ids *b, struct mr__mount *m)
{
	void *old = NULL;

	if (!ck_hs_set(&b->ids, mix64(m->pub.id), m, &old))
		return false;
	if (old) {
		if (b->counts) {
			count_del(&b->sbs, dev_of(old));
			count_del(&b->parents, ((struct mr__mount *)old)->pub.parent_id);
		}
		mr__mount_unref(old);
	}
	return !b->counts ||
	       (count_add(&b->sbs, dev_of(m), m) && count_add(&b->parents, m->pub.parent_id, m));
}

static struct mr__mount *ck_get(struct bench_ids *b, uint64_t id)
{
	struct mr__mount probe = { .pub.id = id };

	return ck_hs_get(&b->ids, mix64(id), &probe);
}

static struct mr__mount *ck_take(struct bench_ids *b, uint64_t id)
{
	struct mr__mount probe = { .pub.id = id }, *m;

	m = ck_hs_remove(&b->ids, mix64(id), &probe);
	if (m && b->counts) {
		count_del(&b->sbs, dev_of(m));
		count_del(&b->parents, m->pub.parent_id);
	}
	return m;
}

static bool put(struct bench_ids *b, struct mr__mount *m)
{
	return b->ck ? ck_put(b, m) : mr__mirror_put(&b->mirror, m) == 0;
}

static struct mr__mount *get(struct bench_ids *b, uint64_t id)
{
	return b->ck ? ck_get(b, id) : mr__mirror_get(&b->mirror, id);
}

static struct mr__mount *take(struct bench_ids *b, uint64_t id)
{
	return b->ck ? ck_take(b, id) : mr__mirror_take(&b->mirror, id);
}

struct bench_ids *bench_ids_new(size_t n, enum bench_ids_kind kind)
{
	struct bench_ids *b = calloc(1, sizeof(*b));
	unsigned int mode = CK_HS_MODE_OBJECT | CK_HS_MODE_SPMC;

	if (!b)
		return NULL;
	b->ck = kind != BENCH_IDS_MIRROR;
	b->counts = kind == BENCH_IDS_CK_HS;
	b->n = n;
	b->lo = b->hi = 1u << 20; /* 64-bit IDs start high; the value does not matter */
	b->rng = 0x2545f4914f6cdd1dull;
	if (b->ck) {
		/* Sized as the mirror starts (64 slots, 16 per index); both grow. */
		if (!ck_hs_init(&b->ids, mode, mount_hash, mount_cmp, &ck_allocator, 64, 0) ||
		    !ck_hs_init(&b->sbs, mode, count_hash, count_cmp, &ck_allocator, 16, 0) ||
		    !ck_hs_init(&b->parents, mode, count_hash, count_cmp, &ck_allocator, 16, 0))
			abort();
	} else if (mr__mirror_init(&b->mirror) < 0) {
		abort();
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t id = b->hi++;
		/* 300 superblocks, a parent per 10 mounts (a container's worth). */
		struct mr__mount *m = mr__mount_new(
			&(struct mr_mount){ .id = id, .parent_id = id - id % 10, .dev_minor = 20 + i % 300,
					    .path = "/var/lib/containers/storage/overlay/x/merged",
					    .root = "/", .source = "overlay", .fstype = "overlay",
					    .options = "rw,relatime" },
			0, 0, 0);

		if (!m || !put(b, m))
			abort();
	}
	return b;
}

void bench_ids_free(struct bench_ids *b)
{
	if (!b)
		return;
	if (b->ck) {
		ck_hs_iterator_t it = CK_HS_ITERATOR_INITIALIZER;
		void *o;

		while (ck_hs_next(&b->ids, &it, &o))
			mr__mount_unref(o);
		ck_hs_iterator_init(&it);
		while (ck_hs_next(&b->sbs, &it, &o))
			mr__free(o);
		ck_hs_iterator_init(&it);
		while (ck_hs_next(&b->parents, &it, &o))
			mr__free(o);
		ck_hs_destroy(&b->ids);
		ck_hs_destroy(&b->sbs);
		ck_hs_destroy(&b->parents);
	} else {
		mr__mirror_free(&b->mirror);
	}
	free(b);
}

static uint64_t live_id(struct bench_ids *b)
{
	b->rng ^= b->rng << 13;
	b->rng ^= b->rng >> 7;
	b->rng ^= b->rng << 17;
	return b->lo + b->rng % (b->hi - b->lo);
}

bool bench_ids_lookup(struct bench_ids *b)
{
	return get(b, live_id(b)) != NULL;
}

bool bench_ids_churn(struct bench_ids *b)
{
	struct mr__mount *m = take(b, b->lo++);
	bool ok;

	if (!m)
		return false;
	ok = get(b, live_id(b)) != NULL;
	/* The record comes back as the new mount: no allocation in the loop. */
	m->pub.id = b->hi++;
	return put(b, m) && ok;
}

bool bench_ids_check(struct bench_ids *b)
{
	size_t n = b->ck ? ck_hs_count(&b->ids) : b->mirror.n;

	if (n != b->n || get(b, b->lo - 1) || get(b, b->hi))
		return false;
	for (uint64_t id = b->lo; id < b->hi; id++)
		if (!get(b, id) || get(b, id)->pub.id != id)
			return false;
	return true;
}
