// SPDX-License-Identifier: GPL-2.0
/*
 * user_events_bench: registrations with the enable bit layout, the way
 * programs written for Linux 6.4 and later make them.
 */
#define USER_EVENTS_ENABLE_BIT_ABI
#include <errno.h>
#include <sys/ioctl.h>

#include <linux/user_events.h>

#include "user_events_bench.h"

/*
 * Register @cmd on @fd with bit @bit of the 4-byte value at @addr; the
 * write index, or -errno.  -EINVAL for a correct request means the kernel
 * has only the status page layout.
 */
int ue_bit_register(int fd, const char *cmd, __u32 *addr, int bit)
{
	struct user_reg reg = {
		.size = sizeof(reg),
		.enable_bit = bit,
		.enable_size = sizeof(*addr),
		.enable_addr = (__u64)(unsigned long)addr,
		.name_args = (__u64)(unsigned long)cmd,
	};

	if (ioctl(fd, DIAG_IOCSREG, &reg) < 0)
		return -errno;
	return reg.write_index;
}

/* Remove this process's registration of bit @bit at @addr; 0 or errno */
int ue_bit_unregister(int fd, __u32 *addr, int bit)
{
	struct user_unreg unreg = {
		.size = sizeof(unreg),
		.disable_bit = bit,
		.disable_addr = (__u64)(unsigned long)addr,
	};

	return ioctl(fd, DIAG_IOCSUNREG, &unreg) < 0 ? errno : 0;
}
