/* SPDX-License-Identifier: MIT */
/*
 * io_uring ABI newer than Debian 12's liburing 2.3 headers, from the
 * kernel's include/uapi/linux/io_uring.h.  The opcodes there are enum
 * constants, which #ifndef cannot see: a newer header's enumerator and this
 * macro carry the same value, so either spelling reaches the kernel alike.
 */
#ifndef MR_IO_URING_COMPAT_H
#define MR_IO_URING_COMPAT_H

#include <liburing.h>

#ifndef IORING_OP_READ_MULTISHOT
#define IORING_OP_READ_MULTISHOT 49 /* 6.7 */
#endif

#endif /* MR_IO_URING_COMPAT_H */
