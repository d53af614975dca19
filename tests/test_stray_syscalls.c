/* SPDX-License-Identifier: MIT */
/*
 * The library never calls a syscall number mainline has given to something
 * else.  watch_mount(2) once sat at 463, which mainline 6.13 made
 * setxattrat(2): probing for it on a modern kernel called setxattrat with
 * arguments meant for another syscall.  A seccomp filter traps every number
 * from 463 (the first one mainline assigned after 6.12) up to, not
 * including, __NR_watch_mount; the library's probes, every source it can
 * open and a router that routes a real mount must not hit it.  The filter is
 * checked first: a direct setxattrat call must be caught.
 *
 * On the project's kernel (vm build, MR_TEST_SOURCE "watch_mount") the
 * probe must also find watch_mount at its own number; that kernel has no
 * seccomp, so there only that is checked.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "probe.h"
#include "mountrouter-uapi.h"
#include "testutil.h"

#ifndef MR_TEST_SOURCE
#define MR_TEST_SOURCE ""
#endif

/* setxattrat(2), 6.13: the first number mainline assigned after 6.12. */
#define FIRST_STRAY 463

static volatile sig_atomic_t trapped, trapped_nr;

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	trapped++;
	trapped_nr = si->si_syscall;
}

/* Traps FIRST_STRAY <= nr < __NR_watch_mount on x86_64; allows the rest. */
static int install_filter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, FIRST_STRAY, 0, 2),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, __NR_watch_mount, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = MR__ARRAY_SIZE(f), .filter = f};
	struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};

	if (sigaction(SIGSYS, &sa, NULL) < 0)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return -errno;
	return 0;
}

/* The filter catches what it must, and lets watch_mount's own number through. */
static int test_filter_catches(void)
{
	trapped = 0;
	syscall(FIRST_STRAY, AT_FDCWD, "/", 0, NULL, NULL, 0);
	CHECK(trapped == 1);
	CHECK(trapped_nr == FIRST_STRAY);
	trapped = 0;
	syscall(__NR_watch_mount, -1, "", 0, -1, -1);
	CHECK(trapped == 0);
	return 0;
}

static int test_probe(void)
{
	trapped = 0;
	const struct mr__features *f = mr__probe();
	if (trapped)
		fprintf(stderr, "the probe made syscall %d\n", (int)trapped_nr);
	CHECK(trapped == 0);
	if (!strcmp(MR_TEST_SOURCE, "watch_mount"))
		CHECK(f->watch_mount);
	return 0;
}

/* Every source by name, then the one picked: opened, started, fed a mount. */
static int test_sources(void)
{
	static const char *const names[] = {"watch_mount", "fanotify", "listmount", "mountinfo",
					    "auto"};
	char root[256], p[512];
	int err = tu_private_root(root, sizeof(root));

	if (err)
		return err;
	tu_path(p, sizeof(p), root, "m");
	CHECK(tu_mkdir(p) == 0);
	trapped = 0;
	for (size_t i = 0; i < MR__ARRAY_SIZE(names); i++) {
		struct mr_opts o = {.size = sizeof(o), .source = names[i]};
		struct mr_sub_opts so = {.size = sizeof(so), .subtree = root,
					 .kinds = MR_KIND(MR_EVENT_MOUNT)};
		mr_router *r = NULL;
		mr_sub *s = NULL;

		err = mr_router_new(&o, &r);
		if (err == -ENOSYS || err == -EINVAL)
			continue; /* absent here, or a name this build lacks */
		CHECK(err == 0);
		CHECK(mr_subscribe(r, &so, &s) == 0);
		CHECK(mr_router_start(r) == 0);
		CHECK(mount("t", p, "tmpfs", 0, NULL) == 0);
		const struct mr_event *ev = tu_next(s, 5000, false);
		CHECK(ev && ev->kind == MR_EVENT_MOUNT);
		mr_event_unref(ev);
		CHECK(umount(p) == 0);
		mr_unsubscribe(s);
		mr_router_free(r);
		if (trapped)
			fprintf(stderr, "source %s made syscall %d\n", names[i], (int)trapped_nr);
		CHECK(trapped == 0);
	}
	return 0;
}

int main(void)
{
	int fail = 0, err = install_filter();

	if (err == -EINVAL || err == -ENOSYS) {
		if (strcmp(MR_TEST_SOURCE, "watch_mount"))
			return tu_skip("seccomp filters are not available: %s", strerror(-err));
		/* Nothing is trapped: only whether the probe finds watch_mount. */
		fail |= RUN(test_probe);
		fail |= RUN(test_sources);
		return fail ? T_EXIT_FAIL : T_EXIT_PASS;
	}
	if (err < 0) {
		fprintf(stderr, "seccomp: %s\n", strerror(-err));
		return T_EXIT_FAIL;
	}
	fail |= RUN(test_filter_catches);
	fail |= RUN(test_probe);
	fail |= RUN(test_sources);
	return fail ? T_EXIT_FAIL : T_EXIT_PASS;
}
