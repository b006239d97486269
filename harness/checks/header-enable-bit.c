// SPDX-License-Identifier: GPL-2.0
/*
 * A program written for the enable bit ABI of Linux 6.4 and later, as it
 * would be written against mainline's <linux/user_events.h>.  "harness/ue
 * test" (check header-abi) compiles it against the installed UAPI headers
 * with -Wall -Werror, with the macro USER_EVENTS_ENABLE_BIT_ABI defined
 * (-D), and without it on a base whose programs have that layout by
 * default (6.12); the layouts and numbers of that ABI are asserted at
 * compile time.  It is never run.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <linux/user_events.h>

#define ABI_ASSERT(cond) _Static_assert(cond, #cond)

/* struct user_reg: packed, 28 bytes */
ABI_ASSERT(sizeof(struct user_reg) == 28);
ABI_ASSERT(offsetof(struct user_reg, size) == 0);
ABI_ASSERT(offsetof(struct user_reg, enable_bit) == 4);
ABI_ASSERT(offsetof(struct user_reg, enable_size) == 5);
ABI_ASSERT(offsetof(struct user_reg, flags) == 6);
ABI_ASSERT(offsetof(struct user_reg, enable_addr) == 8);
ABI_ASSERT(offsetof(struct user_reg, name_args) == 16);
ABI_ASSERT(offsetof(struct user_reg, write_index) == 24);

/* struct user_unreg: packed, 16 bytes */
ABI_ASSERT(sizeof(struct user_unreg) == 16);
ABI_ASSERT(offsetof(struct user_unreg, size) == 0);
ABI_ASSERT(offsetof(struct user_unreg, disable_bit) == 4);
ABI_ASSERT(offsetof(struct user_unreg, __reserved) == 5);
ABI_ASSERT(offsetof(struct user_unreg, __reserved2) == 6);
ABI_ASSERT(offsetof(struct user_unreg, disable_addr) == 8);

/* The ioctl numbers encode a pointer type: these are the 64-bit ones */
ABI_ASSERT(DIAG_IOCSREG == 0xc0082a00);
ABI_ASSERT(DIAG_IOCSDEL == 0x40082a01);
ABI_ASSERT(DIAG_IOCSUNREG == 0x40082a02);

ABI_ASSERT(USER_EVENT_REG_PERSIST == 1 << 0);
ABI_ASSERT(USER_EVENT_REG_MULTI_FORMAT == 1 << 1);
ABI_ASSERT(sizeof(USER_EVENTS_MULTI_SYSTEM) == sizeof("user_events_multi"));
ABI_ASSERT(sizeof(USER_EVENTS_SYSTEM) == sizeof("user_events"));

/* Called only if a name is not the expected one: fails the build */
extern void wrong_system_name(void)
	__attribute__((error("wrong USER_EVENTS_SYSTEM or USER_EVENTS_MULTI_SYSTEM")));

static uint32_t enabled;

int main(void)
{
	const char *cmd = "compat_64 u32 count; __data_loc char[] msg";
	struct user_unreg unreg = { 0 };
	struct user_reg reg = { 0 };
	uint32_t count = 64, loc;
	const char msg[] = "enable bit";
	struct iovec io[4];
	int fd;

	if (__builtin_strcmp(USER_EVENTS_MULTI_SYSTEM, "user_events_multi") ||
	    __builtin_strcmp(USER_EVENTS_SYSTEM, "user_events"))
		wrong_system_name();

	fd = open("/sys/kernel/tracing/user_events_data", O_RDWR);
	if (fd == -1)
		return 1;

	reg.size = sizeof(reg);
	reg.enable_bit = 31;
	reg.enable_size = sizeof(enabled);
	reg.flags = 0;
	reg.enable_addr = (uint64_t)(uintptr_t)&enabled;
	reg.name_args = (uint64_t)(uintptr_t)cmd;
	if (ioctl(fd, DIAG_IOCSREG, &reg) == -1) {
		perror("DIAG_IOCSREG");
		return 1;
	}

	loc = DYN_LOC(8 + 2 * sizeof(uint32_t), sizeof(msg));
	io[0].iov_base = &reg.write_index;
	io[0].iov_len = sizeof(reg.write_index);
	io[1].iov_base = &count;
	io[1].iov_len = sizeof(count);
	io[2].iov_base = &loc;
	io[2].iov_len = sizeof(loc);
	io[3].iov_base = (void *)msg;
	io[3].iov_len = sizeof(msg);
	if (enabled & 1U << 31 && writev(fd, io, 4) == -1)
		perror("writev");

	unreg.size = sizeof(unreg);
	unreg.disable_bit = 31;
	unreg.disable_addr = (uint64_t)(uintptr_t)&enabled;
	if (ioctl(fd, DIAG_IOCSUNREG, &unreg) == -1)
		perror("DIAG_IOCSUNREG");

	close(fd);
	return 0;
}
