/* SPDX-License-Identifier: MIT */
#include "internal.h"

const char *mr_version(void)
{
	return MR_VERSION_STRING;
}
