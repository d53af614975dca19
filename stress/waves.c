/* SPDX-License-Identifier: MIT */
/*
 * Waves: the plan (which operations, on which units, in which order; the
 * same for every contender) and running one wave from one or more threads.
 *
 * A unit is what one operation left live in a group's origin: a chain of
 * nested tmpfs mounts, a bind, or a mount moved in from staging.  Every
 * unit exists once per member of its peer group (and once more in the
 * slave): the model counts those copies as the changes an operation
 * causes, and the ground-truth diff checks the model.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mountrouter-uapi.h"
#include "storm.h"

#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442 /* 5.12 */
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

/* Layout of struct mount_attr (5.12); ours, so no system header can clash. */
struct ms_mount_attr {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

struct unit {
	uint16_t group;
	uint8_t depth;
	char rel[48];
};

struct planner {
	struct ms_storm *st;
	struct unit *units;
	size_t n_units, cap_units;
	unsigned next_id;
	int err;
};

static struct ms_wave *new_wave(struct planner *p, const char *name, unsigned kind, size_t n)
{
	struct ms_storm *st = p->st;

	if (st->n_waves == MS_MAX_WAVES) {
		p->err = -E2BIG;
		return NULL;
	}
	struct ms_wave *w = &st->waves[st->n_waves];
	memset(w, 0, sizeof(*w));
	snprintf(w->name, sizeof(w->name), "%s", name);
	w->kind = kind;
	w->ops = n ? calloc(n, sizeof(*w->ops)) : NULL;
	if (n && !w->ops) {
		p->err = -ENOMEM;
		return NULL;
	}
	w->n_ops = n;
	st->n_waves++;
	return w;
}

static int add_unit(struct planner *p, unsigned group, const char *rel, unsigned depth)
{
	if (p->n_units == p->cap_units) {
		size_t cap = p->cap_units ? p->cap_units * 2 : 1024;
		struct unit *v = realloc(p->units, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->units = v;
		p->cap_units = cap;
	}
	struct unit *u = &p->units[p->n_units++];
	u->group = (uint16_t)group;
	u->depth = (uint8_t)depth;
	snprintf(u->rel, sizeof(u->rel), "%s", rel);
	return 0;
}

/* Deterministic shuffle, so later waves hit units spread over every group. */
static void shuffle(struct unit *v, size_t n)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;

	for (size_t i = n; i > 1; i--) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size_t j = (size_t)(x % i);
		struct unit t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
}

/* A build wave: chains of tmpfs (OP_MOUNT) or binds, @n_mounts origin mounts. */
static void plan_build(struct planner *p, unsigned kind, unsigned n_mounts)
{
	struct ms_storm *st = p->st;
	unsigned depth = kind == OP_MOUNT ? st->o->depth : 1;
	unsigned n_ops = (n_mounts + depth - 1) / depth;
	unsigned group = (unsigned)(st->n_waves % st->o->peers);
	struct ms_wave *w = new_wave(p, kind == OP_MOUNT ? "mount" : "bind", kind, n_ops);

	if (!w)
		return;
	for (unsigned i = 0; i < n_ops; i++) {
		struct ms_op *op = &w->ops[i];
		op->kind = (uint8_t)kind;
		op->group = (uint16_t)group;
		op->depth = (uint8_t)depth;
		snprintf(op->rel, sizeof(op->rel), "%c%u", kind == OP_MOUNT ? 't' : 'b', p->next_id++);
		if (add_unit(p, group, op->rel, depth) < 0)
			p->err = -ENOMEM;
		w->issued[MS_ARRIVE] += (uint64_t)depth * st->mult;
	}
	st->live += w->issued[MS_ARRIVE];
}

static void plan_move(struct planner *p, unsigned n)
{
	struct ms_storm *st = p->st;
	struct ms_wave *stage = new_wave(p, "stage", OP_STAGE, n);
	if (!stage)
		return;
	struct ms_wave *move = new_wave(p, "move", OP_MOVE, n);
	if (!move)
		return;
	for (unsigned i = 0; i < n; i++) {
		unsigned id = p->next_id++;
		unsigned group = i % st->o->peers;
		struct ms_op *s = &stage->ops[i], *m = &move->ops[i];

		s->kind = OP_STAGE;
		s->group = UINT16_MAX;
		s->depth = 1;
		snprintf(s->rel, sizeof(s->rel), "s%u", id);
		m->kind = OP_MOVE;
		m->group = (uint16_t)group;
		m->depth = 1;
		snprintf(m->rel, sizeof(m->rel), "v%u", id);
		snprintf(m->rel2, sizeof(m->rel2), "s%u", id);
		if (add_unit(p, group, m->rel, 1) < 0)
			p->err = -ENOMEM;
		stage->issued[MS_ARRIVE]++;
		/* The moved mount itself, plus a copy in every other member. */
		move->issued[MS_ARRIVE] += st->mult;
	}
	st->live += (uint64_t)n * st->mult;
}

static void plan_on_units(struct planner *p, const char *name, unsigned kind, size_t from,
			  size_t n)
{
	struct ms_storm *st = p->st;
	struct ms_wave *w = new_wave(p, name, kind, n);

	if (!w)
		return;
	for (size_t i = 0; i < n; i++) {
		struct unit *u = &p->units[from + i];
		struct ms_op *op = &w->ops[i];

		op->kind = (uint8_t)kind;
		op->group = u->group;
		op->depth = u->depth;
		snprintf(op->rel, sizeof(op->rel), "%s", u->rel);
		switch (kind) {
		case OP_REMOUNT_RO:
		case OP_REMOUNT_RW:
			/* Per-mount flags: a remount does not propagate. */
			w->issued[MS_ATTR]++;
			break;
		case OP_SETATTR:
			w->issued[MS_ATTR] += u->depth;
			break;
		case OP_UMOUNT:
			w->issued[MS_DEPART] += st->mult;
			u->depth--;
			break;
		case OP_UMOUNT_LAZY:
			w->issued[MS_DEPART] += (uint64_t)u->depth * st->mult;
			u->depth = 0;
			break;
		}
	}
}

static void plan_flap(struct planner *p, unsigned n)
{
	struct ms_storm *st = p->st;
	struct ms_wave *w = new_wave(p, "flap", OP_FLAP, n);

	if (!w)
		return;
	for (unsigned i = 0; i < n; i++) {
		struct ms_op *op = &w->ops[i];
		op->kind = OP_FLAP;
		op->group = (uint16_t)(i % st->o->peers);
		op->depth = 1;
		snprintf(op->rel, sizeof(op->rel), "f%u", p->next_id++);
		w->issued[MS_ARRIVE] += st->mult;
		w->issued[MS_DEPART] += st->mult;
	}
}

int ms_plan(struct ms_storm *st)
{
	const struct ms_opts *o = st->o;
	struct planner p = { .st = st };
	unsigned move_n = o->mounts;
	uint64_t target = o->total;

	st->n_waves = 0;
	st->live = 0;
	/* Wave 0 builds the topology; its changes are not modelled, only diffed. */
	struct ms_wave *w0 = new_wave(&p, "topology", UINT32_MAX, 0);
	if (w0)
		for (int c = 0; c < MS_NCLASS; c++)
			w0->issued[c] = UINT64_MAX;

	/* Build until the move wave would bring the live count to --total. */
	uint64_t move_adds = (uint64_t)move_n * st->mult;
	if (target < move_adds + st->mult)
		move_n = (unsigned)(target / 2 / st->mult), move_adds = (uint64_t)move_n * st->mult;
	for (unsigned i = 0; !p.err && st->live + move_adds < target; i++) {
		uint64_t room = (target - move_adds - st->live) / st->mult;
		unsigned kind = i % 2 ? OP_BIND : OP_MOUNT;
		unsigned n = room < o->mounts ? (unsigned)room : o->mounts;
		if (kind == OP_MOUNT)
			n -= n % o->depth; /* whole chains only */
		if (!n)
			break;
		plan_build(&p, kind, n);
	}
	if (move_n && !p.err)
		plan_move(&p, move_n);
	st->live_peak_model = st->live;

	shuffle(p.units, p.n_units);
	size_t n = p.n_units < o->mounts ? p.n_units : o->mounts;
	plan_on_units(&p, "remount-ro", OP_REMOUNT_RO, 0, n);
	plan_on_units(&p, "remount-rw", OP_REMOUNT_RW, 0, n);
	plan_on_units(&p, "setattr", OP_SETATTR, 0, n);
	plan_flap(&p, o->mounts);
	/* Non-lazy unmounts must hit leaves: a busy chain root would fail EBUSY. */
	plan_on_units(&p, "umount", OP_UMOUNT, 0, n);
	/* Then detach what is left, wave by wave, units whose depth went to 0 skipped. */
	size_t live_units = 0;
	for (size_t i = 0; i < p.n_units; i++)
		if (p.units[i].depth)
			p.units[live_units++] = p.units[i];
	for (size_t i = 0; i < live_units && !p.err; i += o->mounts) {
		size_t k = live_units - i < o->mounts ? live_units - i : o->mounts;
		plan_on_units(&p, "detach", OP_UMOUNT_LAZY, i, k);
	}
	free(p.units);
	return p.err;
}

void ms_plan_free(struct ms_storm *st)
{
	for (size_t i = 0; i < st->n_waves; i++)
		free(st->waves[i].ops);
	st->n_waves = 0;
}

uint64_t ms_wave_transient(const struct ms_storm *st, const struct ms_wave *w, const char *prefix)
{
	char p[MS_PATH];
	uint64_t n = 0;

	if (w->kind != OP_FLAP)
		return 0;
	for (size_t i = 0; i < w->n_ops; i++) {
		const struct ms_op *op = &w->ops[i];
		for (unsigned k = 0; k <= st->o->members; k++) {
			if (k == st->o->members && !st->o->slave)
				break;
			if (k < st->o->members)
				snprintf(p, sizeof(p), "%s/g%u/m%u/%s", st->root, op->group, k, op->rel);
			else
				snprintf(p, sizeof(p), "%s/g%u/s/%s", st->root, op->group, op->rel);
			/* Appeared and vanished: two changes nobody diffing tables can see. */
			n += 2 * ms_in_subtree(p, prefix);
		}
	}
	return n;
}

/* ---- running ---- */

struct runner {
	struct ms_storm *st;
	struct ms_wave *w;
	size_t from, to;
	uint64_t interval_ns; /* 0: no pacing */
	uint64_t next_ns;
	pthread_t thread;
};

static void pace(struct runner *r)
{
	if (!r->interval_ns)
		return;
	uint64_t now = ms_now_ns();
	if (r->next_ns > now) {
		struct timespec ts = { .tv_sec = (time_t)(r->next_ns / 1000000000u),
				       .tv_nsec = (long)(r->next_ns % 1000000000u) };
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	/* Absolute deadlines: a late op does not push every later one back. */
	r->next_ns = (r->next_ns ? r->next_ns : now) + r->interval_ns;
}

static int fail(struct ms_op *op)
{
	if (!op->err)
		op->err = errno;
	return -1;
}

static void path_level(char *out, size_t len, const char *base, unsigned level)
{
	size_t w = (size_t)snprintf(out, len, "%s", base);

	for (unsigned i = 0; i < level && w < len; i++)
		w += (size_t)snprintf(out + w, len - w, "/n");
}

static void run_op(struct runner *r, struct ms_op *op)
{
	struct ms_storm *st = r->st;
	char origin[MS_PATH], base[MS_PATH + 64], p[MS_PATH + 96], src[MS_PATH];

	if (op->group != UINT16_MAX) {
		ms_origin(st, op->group, origin, sizeof(origin));
		snprintf(base, sizeof(base), "%s/%s", origin, op->rel);
	}
	switch (op->kind) {
	case OP_MOUNT:
		for (unsigned l = 0; l < op->depth; l++) {
			path_level(p, sizeof(p), base, l);
			pace(r);
			if ((mkdir(p, 0755) < 0 && errno != EEXIST) ||
			    mount("storm", p, "tmpfs", 0, "size=1m") < 0) {
				fail(op);
				return;
			}
			op->t[l] = ms_now_ns();
		}
		break;
	case OP_BIND:
		snprintf(src, sizeof(src), "%s/src/%s", st->root, op->rel);
		pace(r);
		if ((mkdir(src, 0755) < 0 && errno != EEXIST) || (mkdir(base, 0755) < 0 && errno != EEXIST) ||
		    mount(src, base, NULL, MS_BIND, NULL) < 0)
			fail(op);
		op->t[0] = ms_now_ns();
		break;
	case OP_STAGE:
		snprintf(p, sizeof(p), "%s/stage/%s", st->root, op->rel);
		pace(r);
		if ((mkdir(p, 0755) < 0 && errno != EEXIST) || mount("storm", p, "tmpfs", 0, "size=1m") < 0)
			fail(op);
		op->t[0] = ms_now_ns();
		break;
	case OP_MOVE:
		snprintf(src, sizeof(src), "%s/stage/%s", st->root, op->rel2);
		pace(r);
		if ((mkdir(base, 0755) < 0 && errno != EEXIST) || mount(src, base, NULL, MS_MOVE, NULL) < 0)
			fail(op);
		op->t[0] = ms_now_ns();
		break;
	case OP_REMOUNT_RO:
	case OP_REMOUNT_RW:
		pace(r);
		if (mount(NULL, base, NULL,
			  MS_REMOUNT | MS_BIND | (op->kind == OP_REMOUNT_RO ? MS_RDONLY : 0), NULL) < 0)
			fail(op);
		op->t[0] = ms_now_ns();
		break;
	case OP_SETATTR: {
		struct ms_mount_attr a = { .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
						       MOUNT_ATTR_NOEXEC };
		pace(r);
		if (syscall(__NR_mount_setattr, AT_FDCWD, base, AT_RECURSIVE, &a, sizeof(a)) < 0)
			fail(op);
		op->t[0] = ms_now_ns();
		break;
	}
	case OP_FLAP:
		pace(r);
		if ((mkdir(base, 0755) < 0 && errno != EEXIST) ||
		    mount("storm", base, "tmpfs", 0, "size=1m") < 0) {
			fail(op);
			return;
		}
		op->t[0] = ms_now_ns();
		pace(r);
		if (umount2(base, MNT_DETACH) < 0)
			fail(op);
		op->t[1] = ms_now_ns();
		break;
	case OP_UMOUNT:
		path_level(p, sizeof(p), base, op->depth - 1u);
		pace(r);
		if (umount2(p, 0) < 0)
			fail(op);
		op->t[0] = ms_now_ns();
		break;
	case OP_UMOUNT_LAZY:
		pace(r);
		if (umount2(base, MNT_DETACH) < 0)
			fail(op);
		op->t[0] = ms_now_ns();
		break;
	}
}

_Atomic uint64_t ms_runner_cpu_ns;

static void *runner_main(void *arg)
{
	struct runner *r = arg;

	for (size_t i = r->from; i < r->to; i++)
		run_op(r, &r->w->ops[i]);
	return NULL;
}

static void *runner_thread(void *arg)
{
	runner_main(arg);
	atomic_fetch_add(&ms_runner_cpu_ns, ms_thread_cpu_ns());
	return NULL;
}

int ms_wave_run(struct ms_storm *st, struct ms_wave *w)
{
	unsigned n = st->o->threads ? st->o->threads : 1;
	struct runner r[64];
	int err = 0;

	if (n > 64)
		n = 64;
	if (n > w->n_ops)
		n = w->n_ops ? (unsigned)w->n_ops : 1;
	w->t_start = ms_now_ns();
	if (w->kind == UINT32_MAX) {
		err = ms_topology_build(st);
		w->t_end = ms_now_ns();
		return err;
	}
	/* Build waves are the only ones made of OP_MOUNT and OP_BIND. */
	bool build = w->kind == OP_MOUNT || w->kind == OP_BIND;
	unsigned rate = build && st->o->build_at_max ? 0 : st->o->rate;
	for (unsigned i = 0; i < n; i++) {
		r[i] = (struct runner){
			.st = st, .w = w,
			.from = w->n_ops * i / n, .to = w->n_ops * (i + 1) / n,
			.interval_ns = rate ? 1000000000ull * n / rate : 0,
		};
	}
	/* One thread: run inline, so a single-threaded storm has no thread overhead at all. */
	bool started[64] = {false};
	for (unsigned i = 1; i < n; i++) {
		if (pthread_create(&r[i].thread, NULL, runner_thread, &r[i])) {
			/* Run what could not get a thread on this one instead. */
			runner_main(&r[i]);
			continue;
		}
		started[i] = true;
	}
	runner_main(&r[0]);
	for (unsigned i = 1; i < n; i++)
		if (started[i])
			pthread_join(r[i].thread, NULL);
	w->t_end = ms_now_ns();
	w->failed = 0;
	w->first_err = 0;
	for (size_t i = 0; i < w->n_ops; i++)
		if (w->ops[i].err) {
			w->failed++;
			if (!w->first_err)
				w->first_err = w->ops[i].err;
		}
	return err;
}
