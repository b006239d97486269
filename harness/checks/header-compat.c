// SPDX-License-Identifier: GPL-2.0
/*
 * A program written for the <linux/user_events.h> of Linux 5.18, which
 * brought in <sys/uio.h>: it uses struct iovec and writev() without
 * including <sys/uio.h>.  "harness/ue test" (check header-compat) compiles
 * it against the installed UAPI headers, with -Wall -Werror, three ways:
 * as it is, and with <sys/uio.h> included before (-DUIO_BEFORE) or after
 * (-DUIO_AFTER) <linux/user_events.h>; on a base whose programs have the
 * enable bit layout by default (6.12), with USER_EVENTS_STATUS_PAGE_ABI
 * defined (-D).  It is never run.
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#ifdef UIO_BEFORE
#include <sys/uio.h>
#endif
#include <linux/user_events.h>
#ifdef UIO_AFTER
#include <sys/uio.h>
#endif

#define TRACEFS "/sys/kernel/tracing/"

int main(void)
{
	struct user_reg reg = { .size = sizeof(reg) };
	__u32 count = 518;
	struct iovec io[2];
	int data, status;
	__u8 *page;

	data = open(TRACEFS "user_events_data", O_RDWR);
	status = open(TRACEFS "user_events_status", O_RDONLY);
	if (data == -1 || status == -1)
		return 1;
	page = mmap(NULL, 4096, PROT_READ, MAP_SHARED, status, 0);
	if (page == MAP_FAILED)
		return 1;

	reg.name_args = (__u64)(unsigned long)"compat_518 u32 count";
	if (ioctl(data, DIAG_IOCSREG, &reg) == -1) {
		perror("DIAG_IOCSREG");
		return 1;
	}

	io[0].iov_base = &reg.write_index;
	io[0].iov_len = sizeof(reg.write_index);
	io[1].iov_base = &count;
	io[1].iov_len = sizeof(count);
	if (page[reg.status_index] & EVENT_STATUS_FTRACE &&
	    writev(data, io, 2) == -1) {
		perror("writev");
		return 1;
	}

	return 0;
}
