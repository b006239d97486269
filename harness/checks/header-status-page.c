// SPDX-License-Identifier: GPL-2.0
/*
 * A program written for the status page ABI (Linux 5.18).  "harness/ue
 * test" (check header-abi) compiles it against the installed UAPI headers
 * with -Wall -Werror, with the macro USER_EVENTS_STATUS_PAGE_ABI defined
 * (-D), and without it on a base whose programs have that layout by
 * default (6.1); the layout and numbers of that ABI are asserted at
 * compile time.  It is never run.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <linux/user_events.h>

#define ABI_ASSERT(cond) _Static_assert(cond, #cond)

/* struct user_reg: natural alignment, 24 bytes on 64-bit */
ABI_ASSERT(sizeof(struct user_reg) == 24);
ABI_ASSERT(offsetof(struct user_reg, size) == 0);
ABI_ASSERT(offsetof(struct user_reg, name_args) == 8);
ABI_ASSERT(offsetof(struct user_reg, status_index) == 16);
ABI_ASSERT(offsetof(struct user_reg, write_index) == 20);

ABI_ASSERT(DIAG_IOCSREG == 0xc0082a00);
ABI_ASSERT(DIAG_IOCSDEL == 0x40082a01);

ABI_ASSERT(EVENT_BIT_FTRACE == 0 && EVENT_BIT_PERF == 1 &&
	   EVENT_BIT_OTHER == 7);
ABI_ASSERT(EVENT_STATUS_FTRACE == 1 && EVENT_STATUS_PERF == 2 &&
	   EVENT_STATUS_OTHER == 0x80);
ABI_ASSERT(DYN_LOC(0x12, 0x34) == 0x340012);

int main(void)
{
	struct user_reg reg = { .size = sizeof(reg) };
	const __u8 *page;
	__u32 count = 24;
	int fd, status;

	fd = open("/sys/kernel/tracing/user_events_data", O_RDWR);
	status = open("/sys/kernel/tracing/user_events_status", O_RDONLY);
	if (fd == -1 || status == -1)
		return 1;
	page = mmap(NULL, 4096, PROT_READ, MAP_SHARED, status, 0);
	if (page == MAP_FAILED)
		return 1;

	reg.name_args = (__u64)(unsigned long)"compat_page u32 count";
	if (ioctl(fd, DIAG_IOCSREG, &reg) == -1) {
		perror("DIAG_IOCSREG");
		return 1;
	}

	if (page[reg.status_index]) {
		struct iovec io[2] = {
			{ &reg.write_index, sizeof(reg.write_index) },
			{ &count, sizeof(count) },
		};

		if (writev(fd, io, 2) == -1)
			perror("writev");
	}

	/* Our descriptor holds the event: delete it through another one */
	close(fd);
	fd = open("/sys/kernel/tracing/user_events_data", O_RDWR);
	if (fd == -1 || ioctl(fd, DIAG_IOCSDEL, "compat_page") == -1)
		perror("DIAG_IOCSDEL");
	return 0;
}
