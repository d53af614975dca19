/* SPDX-License-Identifier: MIT */
/*
 * mw_setattr PATH +ATTR|-ATTR...: mount_setattr(2) on the mount at PATH
 * (ATTR: ro, nosuid, nodev, noexec, noatime, nodiratime).  util-linux's
 * mount(8) may go through mount(2) remount instead; the tests need the
 * syscall itself.  Exits 77 if the kernel lacks mount_setattr (5.12).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif

struct mount_attr_arg {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

static const struct {
	const char *name;
	uint64_t bit;
} attrs[] = {
	{"ro", 0x1}, {"nosuid", 0x2}, {"nodev", 0x4}, {"noexec", 0x8},
	{"noatime", 0x10}, {"nodiratime", 0x80},
};

int main(int argc, char **argv)
{
	struct mount_attr_arg a = {0};

	if (argc < 3) {
		fprintf(stderr, "usage: mw_setattr PATH +ATTR|-ATTR...\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		uint64_t bit = 0;
		for (size_t k = 0; k < sizeof(attrs) / sizeof(*attrs); k++)
			if (!strcmp(argv[i] + 1, attrs[k].name))
				bit = attrs[k].bit;
		if (!bit || (argv[i][0] != '+' && argv[i][0] != '-')) {
			fprintf(stderr, "mw_setattr: bad attribute '%s'\n", argv[i]);
			return 2;
		}
		if (argv[i][0] == '+')
			a.attr_set |= bit;
		else
			a.attr_clr |= bit;
	}
	if (syscall(SYS_mount_setattr, AT_FDCWD, argv[1], 0, &a, sizeof(a)) < 0) {
		if (errno == ENOSYS) {
			printf("SKIP: mount_setattr(2) is not available\n");
			return 77;
		}
		fprintf(stderr, "mw_setattr: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	return 0;
}
