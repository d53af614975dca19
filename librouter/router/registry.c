/* SPDX-License-Identifier: MIT */
/*
 * The control plane callers use from any thread: the namespaces they may
 * name (the registry, under ctl_lock), and subscribing and unsubscribing;
 * each change reaches the router thread as a command (commands.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "mountrouter-uapi.h"

#include "router.h"

struct mr__ns *mr__registry_find(mr_router *r, uint64_t id)
{
	for (size_t i = 0; i < r->n_registry; i++)
		if (r->registry[i]->id == id)
			return r->registry[i];
	return NULL;
}

static int add_ns_fd(mr_router *r, int nsfd, pid_t pid, uint64_t *ret_ns_id)
{
	struct mr__ns *ns;
	struct mr__cmd *c;
	int err;

	err = mr__ns_open(r, nsfd, pid,
			  &(struct mr__ns_source){.ops = r->ops, .fallback = r->source_auto,
						  .syscalls = &r->syscalls},
			  &ns);
	if (err < 0)
		return err;

	pthread_mutex_lock(&r->ctl_lock);
	if (mr__registry_find(r, ns->id)) {
		uint64_t id = ns->id;
		pthread_mutex_unlock(&r->ctl_lock);
		mr__ns_close(ns, NULL);
		if (ret_ns_id)
			*ret_ns_id = id;
		return -EEXIST;
	}
	c = mr__calloc(1, sizeof(*c));
	if (r->n_registry == r->cap_registry) {
		size_t cap = r->cap_registry ? r->cap_registry * 2 : 8;
		struct mr__ns **v = mr__realloc(r->registry, cap * sizeof(*v));
		if (v) {
			r->registry = v;
			r->cap_registry = cap;
		}
	}
	if (!c || r->n_registry == r->cap_registry) {
		pthread_mutex_unlock(&r->ctl_lock);
		mr__free(c);
		mr__ns_close(ns, NULL);
		return -ENOMEM;
	}
	r->registry[r->n_registry++] = ns;
	mr__count(&r->n_ns, 1);
	c->kind = MR__CMD_ADD_NS;
	c->ns = ns;
	mr__commands_push(r, c);
	pthread_mutex_unlock(&r->ctl_lock);
	if (ret_ns_id)
		*ret_ns_id = ns->id;
	return 0;
}

int mr_router_add_ns_self(mr_router *r, uint64_t *ret_ns_id)
{
	if (!r)
		return -EINVAL;
	int fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return add_ns_fd(r, fd, 0, ret_ns_id);
}

int mr_router_add_ns_pid(mr_router *r, pid_t pid, uint64_t *ret_ns_id)
{
	char p[64];

	if (!r || pid <= 0)
		return -EINVAL;
	snprintf(p, sizeof(p), "/proc/%d/ns/mnt", (int)pid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	return add_ns_fd(r, fd, pid, ret_ns_id);
}

int mr_router_add_ns_fd(mr_router *r, int nsfd, uint64_t *ret_ns_id)
{
	if (!r || nsfd < 0)
		return -EINVAL;
	/* 4.11: NS_GET_NSTYPE; anything but a mount namespace's nsfs file is the wrong fd. */
	int type = ioctl(nsfd, NS_GET_NSTYPE);
	if (type < 0)
		return errno == EBADF ? -EBADF : -EINVAL;
	if (type != CLONE_NEWNS)
		return -EINVAL;
	int fd = fcntl(nsfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	return add_ns_fd(r, fd, -1, ret_ns_id);
}

int mr_router_remove_ns(mr_router *r, uint64_t ns_id)
{
	struct mr__ns *ns;
	struct mr__cmd *c;

	if (!r)
		return -EINVAL;
	c = mr__calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	pthread_mutex_lock(&r->ctl_lock);
	ns = mr__registry_find(r, ns_id);
	if (!ns) {
		pthread_mutex_unlock(&r->ctl_lock);
		mr__free(c);
		return -ENOENT;
	}
	for (size_t i = 0; i < r->n_registry; i++)
		if (r->registry[i] == ns) {
			r->registry[i] = r->registry[--r->n_registry];
			break;
		}
	atomic_store_explicit(&r->n_ns, atomic_load(&r->n_ns) - 1, memory_order_relaxed);
	c->kind = MR__CMD_DEL_NS;
	c->ns = ns;
	mr__commands_push(r, c);
	pthread_mutex_unlock(&r->ctl_lock);
	return 0;
}

/* ---- subscribers ---- */

int mr_subscribe(mr_router *r, const struct mr_sub_opts *opts, mr_sub **ret)
{
	struct mr_sub_opts o = {0};
	struct mr_sub *s;
	struct mr__cmd *c;
	int err;

	if (!r || !ret)
		return -EINVAL;
	if (opts) {
		if (opts->size < offsetof(struct mr_sub_opts, capacity) + sizeof(uint32_t))
			return -EINVAL;
		memcpy(&o, opts, opts->size < sizeof(o) ? opts->size : sizeof(o));
	}
	if (o.flags & ~MR_SUB_SNAPSHOT)
		return -EINVAL;
	if (o.kinds & ~MR_KINDS_ALL)
		return -EINVAL;
	err = mr__sub_alloc(r, r->wake_efd, &o, &s);
	if (err < 0)
		return err;
	c = mr__calloc(1, sizeof(*c));
	if (!c) {
		mr__sub_destroy(s);
		return -ENOMEM;
	}

	pthread_mutex_lock(&r->ctl_lock);
	s->ns = o.ns_id ? mr__registry_find(r, o.ns_id) : r->n_registry ? r->registry[0] : NULL;
	if (!s->ns) {
		pthread_mutex_unlock(&r->ctl_lock);
		mr__free(c);
		mr__sub_destroy(s);
		return -ENOENT;
	}
	c->kind = MR__CMD_ADD_SUB;
	c->sub = s;
	mr__commands_push(r, c);
	pthread_mutex_unlock(&r->ctl_lock);
	*ret = s;
	return 0;
}

void mr_unsubscribe(mr_sub *s)
{
	struct mr__cmd *c;

	if (!s)
		return;
	/*
	 * The first free flips the handle to FREED at once, though the router
	 * releases it later: a second free is caught here, not as a use
	 * after free inside the router.
	 */
	uint32_t live = MR__SUB_LIVE;
	if (!atomic_compare_exchange_strong(&s->magic, &live, MR__SUB_FREED)) {
		mr__misuse("mr_unsubscribe", live == MR__SUB_FREED
						  ? "subscriber already freed"
						  : "not a live subscriber (freed, or never made)");
		return;
	}
	c = mr__calloc(1, sizeof(*c));
	if (!c) {
		/* Cannot queue the removal: leave the ring to the router's teardown. */
		return;
	}
	c->kind = MR__CMD_DEL_SUB;
	c->sub = s;
	mr__commands_push(s->r, c);
}

int mr_router_ns_source(mr_router *r, uint64_t ns_id, const char **ret_name,
			const char **ret_reason)
{
	struct mr__ns *ns;

	if (!r || !ret_name || !ret_reason)
		return -EINVAL;
	pthread_mutex_lock(&r->ctl_lock);
	ns = mr__registry_find(r, ns_id);
	if (ns) {
		*ret_name = ns->ops->name;
		*ret_reason = ns->ops == r->ops ? r->reason : ns->reason;
	}
	pthread_mutex_unlock(&r->ctl_lock);
	return ns ? 0 : -ENOENT;
}
