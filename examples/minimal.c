/* SPDX-License-Identifier: MIT */
/* minimal [SUBTREE]: prints every mount change under SUBTREE (default /). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <mountrouter.h>
static void on_signal(int sig) { (void)sig; } /* makes poll() fail with EINTR */

int main(int argc, char **argv)
{
	struct mr_sub_opts so = {.size = sizeof(so), .subtree = argc > 1 ? argv[1] : "/"};
	const struct mr_event *ev;
	mr_router *r = NULL;
	mr_sub *s = NULL;
	int err;

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((err = mr_router_new(NULL, &r)) < 0 || (err = mr_subscribe(r, &so, &s)) < 0)
		goto out;
	printf("watching %s through %s\n", so.subtree, mr_router_source(r));
	/* One thread: the router's work and the subscriber's reads take turns. */
	struct pollfd pfd = {.fd = mr_router_fd(r), .events = POLLIN};
	for (err = mr_router_dispatch(r); err >= 0; /* EINTR: SIGINT or SIGTERM, a clean stop */
	     err = poll(&pfd, 1, -1) < 0 ? -errno : mr_router_dispatch(r))
		while (mr_sub_next(s, &ev) == 0) {
			printf("%s %s\n", mr_event_kind_name(ev->kind), ev->path);
			mr_event_unref(ev);
		}
out:
	if (err != -EINTR)
		fprintf(stderr, "minimal: %s\n", strerror(-err));
	mr_unsubscribe(s); /* the subscription before the router it belongs to */
	mr_router_free(r);
	return err != -EINTR;
}
