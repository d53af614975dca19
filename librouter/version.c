/* SPDX-License-Identifier: MIT */
#include "mountrouter.h"

const char *mr_version(void)
{
	return MR_VERSION_STRING;
}
