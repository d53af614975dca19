/* SPDX-License-Identifier: MIT */
/* A program built only from what `cmake --install` put in a prefix. */
#include <stdio.h>
#include <string.h>

#include <mountrouter.h>

int main(void)
{
	uint32_t kind;

	if (strcmp(mr_version(), MR_VERSION_STRING)) {
		fprintf(stderr, "header %s, library %s\n", MR_VERSION_STRING, mr_version());
		return 1;
	}
	if (mr_event_kind_parse("umount", &kind) || kind != MR_EVENT_UNMOUNT)
		return 1;
	printf("mountrouter %s\n", mr_version());
	return 0;
}
