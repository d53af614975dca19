/* SPDX-License-Identifier: MIT */
/*
 * mount-load: the scripted workload the example tests and benchmarks run
 * against unit-tracker, in the caller's (private) mount namespace.
 *
 *   mount-load base DIR N          N tmpfs mounts DIR/b/0 .. DIR/b/N-1
 *   mount-load change DIR K GAP_MS [attach]
 *                                  K changes under DIR/c, GAP_MS apart
 *                                  (0: a burst, back to back); "attach":
 *                                  no remounts, mounts and unmounts only
 *
 * Change i is one of three, by i % 3, on slot DIR/c/(i/3): mount a tmpfs,
 * remount it read-only, and, for even slots, unmount it.  After K = 3*S
 * changes: S slots mounted read-only for odd slots and gone for even ones.
 * Prints "changes: M", the changes made (odd slots' third step is none).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>

static int fail(const char *what, const char *path)
{
	fprintf(stderr, "mount-load: %s %s: %s\n", what, path, strerror(errno));
	return 1;
}

static int base(const char *dir, long n)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/b", dir);
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		return fail("mkdir", p);
	for (long i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "%s/b/%ld", dir, i);
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return fail("mkdir", p);
		if (mount("load", p, "tmpfs", 0, "size=64k") < 0)
			return fail("mount", p);
	}
	printf("base: %ld\n", n);
	return 0;
}

static int change(const char *dir, long k, long gap_ms, bool remounts)
{
	struct timespec gap = {gap_ms / 1000, (gap_ms % 1000) * 1000000};
	long made = 0;
	char p[4096];

	snprintf(p, sizeof(p), "%s/c", dir);
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		return fail("mkdir", p);
	for (long i = 0; i < k; i++) {
		long slot = i / 3;
		snprintf(p, sizeof(p), "%s/c/%ld", dir, slot);
		switch (i % 3) {
		case 0:
			if ((mkdir(p, 0755) < 0 && errno != EEXIST) ||
			    mount("change", p, "tmpfs", 0, "size=64k") < 0)
				return fail("mount", p);
			break;
		case 1:
			if (!remounts)
				continue;
			if (mount(NULL, p, NULL, MS_REMOUNT | MS_RDONLY, "size=64k") < 0)
				return fail("remount,ro", p);
			break;
		case 2:
			if (slot % 2)
				continue; /* odd slots stay mounted: no change, no gap */
			if (umount(p) < 0)
				return fail("umount", p);
			break;
		}
		made++;
		if (gap_ms)
			nanosleep(&gap, NULL);
	}
	printf("changes: %ld\n", made);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "base") == 0)
		return base(argv[2], atol(argv[3]));
	if ((argc == 5 || (argc == 6 && strcmp(argv[5], "attach") == 0)) &&
	    strcmp(argv[1], "change") == 0)
		return change(argv[2], atol(argv[3]), atol(argv[4]), argc == 5);
	fprintf(stderr, "usage: mount-load base DIR N | change DIR K GAP_MS [attach]\n");
	return 2;
}
