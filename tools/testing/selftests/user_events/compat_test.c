// SPDX-License-Identifier: GPL-2.0
/*
 * A 32-bit program on a 64-bit kernel (built with -m32 on x86, for armhf
 * on arm64): its ioctl numbers carry 4-byte pointers, and its struct
 * user_reg of the status page layout is 20 bytes long on i386 (a __u64 is
 * 4-byte aligned there), 24 on arm.  Both layouts must work as they do for
 * 64-bit programs: status byte and write index of the status page layout,
 * enable bits in 4-byte and 8-byte values (the kernel writes an 8-byte
 * aligned word the same way for it), DIAG_IOCSUNREG, DIAG_IOCSDEL, writes
 * read back from the trace buffer, and the EBADF of an enable bit's write
 * index while nothing is attached.
 *
 * Built as a 64-bit program, it skips: there is nothing of its own to
 * test.
 */
#define USER_EVENTS_ENABLE_BIT_ABI
#include "user_events_selftests.h"

#include <stddef.h>

#define PREFIX		"ue_compat_"
#define EV_STATUS	PREFIX "status"
#define EV_BIT		PREFIX "bit"
#define EV_BIT64	PREFIX "bit64"

#if __SIZEOF_POINTER__ == 4

TEST(abi_numbers)
{
	/* The pointer size is part of the numbers */
	ASSERT_EQ(0xc0042a00, (unsigned int)DIAG_IOCSREG);
	ASSERT_EQ(0x40042a01, (unsigned int)DIAG_IOCSDEL);
	ASSERT_EQ(0x40042a02, (unsigned int)DIAG_IOCSUNREG);

	/* The status page layout as the program's ABI lays it out */
	ASSERT_EQ(UE_U64_OFFSET + 16, sizeof(struct ue_status_reg));
	ASSERT_EQ(UE_U64_OFFSET, offsetof(struct ue_status_reg, name_args));
	ASSERT_EQ(UE_U64_OFFSET + 8,
		  offsetof(struct ue_status_reg, status_index));
	ASSERT_EQ(UE_U64_OFFSET + 12,
		  offsetof(struct ue_status_reg, write_index));
	/* i386 aligns a __u64 in a struct to 4 bytes, arm to 8 */
	ASSERT_TRUE(UE_U64_OFFSET == 4 || UE_U64_OFFSET == 8);

	/* The enable bit layout is packed: the same as on 64-bit */
	ASSERT_EQ(28, sizeof(struct user_reg));
	ASSERT_EQ(16, sizeof(struct user_unreg));
}

FIXTURE(compat) {
	int fd;
	int status_fd;
	__u8 *status;
	__u32 word;
	/* An i386 __u64 in a struct is only 4-byte aligned */
	__aligned_u64 word64;
};

FIXTURE_SETUP(compat)
{
	UE_SKIP_IF_UNAVAILABLE();
	ue_cleanup_events(PREFIX);
	self->fd = ue_open_data();
	ASSERT_NE(-1, self->fd);
	ASSERT_EQ(0, ue_open_status_page(&self->status_fd, &self->status));
	ASSERT_EQ(0, ue_clear_trace(NULL));
	self->word = 0;
	self->word64 = 0;
}

FIXTURE_TEARDOWN(compat)
{
	ue_unreg_bit(self->fd, &self->word, 31);
	ue_close_status_page(self->status_fd, self->status);
	close(self->fd);
	ue_cleanup_events(PREFIX);
	ue_clear_trace(NULL);
}

/* The status page layout: its outputs land at the program's offsets */
TEST_F(compat, status_page_layout)
{
	struct ue_status_reg reg;
	__u32 v = 7;
	int fd;

	ASSERT_EQ(0, ue_reg(self->fd, EV_STATUS " u32 v", &reg));
	ASSERT_LT(0, reg.status_index);
	ASSERT_GT(UE_STATUS_EVENTS + 1, reg.status_index);
	ASSERT_EQ(0, reg.write_index);
	ASSERT_EQ(0, self->status[reg.status_index]);

	/* Idle: a status page write index succeeds and records nothing */
	ASSERT_EQ(8, ue_emit(self->fd, reg.write_index, &v, sizeof(v)));

	ASSERT_EQ(0, ue_enable(NULL, EV_STATUS, true));
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->status[reg.status_index]);
	v = 8;
	ASSERT_EQ(8, ue_emit(self->fd, reg.write_index, &v, sizeof(v)));
	ASSERT_EQ(0, ue_enable(NULL, EV_STATUS, false));
	ASSERT_EQ(0, self->status[reg.status_index]);
	UE_ASSERT_TRACE(NULL, EV_STATUS, "v=8\n");

	/* DIAG_IOCSDEL: busy while this fd holds it, then deleted */
	ASSERT_EQ(EBUSY, ue_ioctl(self->fd, DIAG_IOCSDEL, EV_STATUS));
	fd = ue_open_data();
	ASSERT_NE(-1, fd);
	close(self->fd);
	self->fd = fd;
	ASSERT_EQ(0, ue_ioctl(self->fd, DIAG_IOCSDEL, EV_STATUS));
	ASSERT_FALSE(ue_event_exists(EV_STATUS));
}

/* The enable bit layout, with a 4-byte value */
TEST_F(compat, enable_bit_u32)
{
	__u32 idx = ~0U, v = 5;

	self->word = 0x1234;
	ASSERT_EQ(0, ue_reg_bit(self->fd, EV_BIT " u32 v", &self->word, 4, 31,
				0, &idx));
	ASSERT_EQ(0, idx);
	ASSERT_EQ(0x1234, self->word);

	/* Idle: an enable bit's write index gets EBADF */
	ASSERT_EQ(-EBADF, ue_emit(self->fd, idx, &v, sizeof(v)));

	ASSERT_EQ(0, ue_enable(NULL, EV_BIT, true));
	ASSERT_EQ(0x80001234, self->word);
	ASSERT_EQ(8, ue_emit(self->fd, idx, &v, sizeof(v)));
	ASSERT_EQ(0, ue_enable(NULL, EV_BIT, false));
	ASSERT_EQ(0x1234, self->word);
	UE_ASSERT_TRACE(NULL, EV_BIT, "v=5\n");

	/* Removed, and the bit follows the event no more */
	ASSERT_EQ(0, ue_unreg_bit(self->fd, &self->word, 31));
	ASSERT_EQ(ENOENT, ue_unreg_bit(self->fd, &self->word, 31));
	ASSERT_EQ(0, ue_enable(NULL, EV_BIT, true));
	ASSERT_EQ(0x1234, self->word);
	ASSERT_EQ(0, ue_enable(NULL, EV_BIT, false));
}

/*
 * An 8-byte value: bit 40 lands in the upper half, bit 3 in the lower,
 * and the other bits of the word stay the program's (on a 64-bit kernel;
 * a 32-bit one refuses it).
 */
TEST_F(compat, enable_bit_u64)
{
	__u32 idx = ~0U, v = 9;

	self->word64 = 0x0000fe00000000f0ULL;
	if (!ue_kernel_64bit()) {
		/* A 32-bit kernel's long is 4 bytes: it takes none of 8 */
		ASSERT_EQ(EINVAL, ue_reg_bit(self->fd, EV_BIT64 " u32 v",
					     &self->word64, 8, 3, 0, NULL));
		ASSERT_EQ(0x0000fe00000000f0ULL, self->word64);
		ASSERT_FALSE(ue_event_exists(EV_BIT64));
		return;
	}
	ASSERT_EQ(0, ue_reg_bit(self->fd, EV_BIT64 " u32 v", &self->word64, 8,
				40, 0, &idx));
	ASSERT_EQ(0, ue_reg_bit(self->fd, EV_BIT64 " u32 v", &self->word64, 8,
				3, 0, NULL));
	ASSERT_EQ(0x0000fe00000000f0ULL, self->word64);

	ASSERT_EQ(0, ue_enable(NULL, EV_BIT64, true));
	ASSERT_EQ(0x0000ff00000000f8ULL, self->word64);
	ASSERT_EQ(8, ue_emit(self->fd, idx, &v, sizeof(v)));
	ASSERT_EQ(0, ue_enable(NULL, EV_BIT64, false));
	ASSERT_EQ(0x0000fe00000000f0ULL, self->word64);
	UE_ASSERT_TRACE(NULL, EV_BIT64, "v=9\n");

	/* Bit 64 is past the value; a 4-byte aligned 8-byte one is not one */
	ASSERT_EQ(EINVAL, ue_reg_bit(self->fd, EV_BIT64 " u32 v",
				     &self->word64, 8, 64, 0, NULL));
	ASSERT_EQ(EINVAL, ue_reg_bit(self->fd, EV_BIT64 " u32 v",
				     (__u8 *)&self->word64 + 4, 8, 0, 0, NULL));
	ASSERT_EQ(0, ue_unreg_bit(self->fd, &self->word64, 40));
	ASSERT_EQ(0, ue_unreg_bit(self->fd, &self->word64, 3));
}

/* Both layouts on one fd, for one event: one write index */
TEST_F(compat, both_layouts)
{
	struct ue_status_reg reg;
	__u32 idx = ~0U;

	ASSERT_EQ(0, ue_reg_bit(self->fd, EV_BIT " u32 v", &self->word, 4, 31,
				0, &idx));
	ASSERT_EQ(0, ue_reg(self->fd, EV_BIT " u32 v", &reg));
	ASSERT_EQ(idx, reg.write_index);
	ASSERT_EQ(0, ue_enable(NULL, EV_BIT, true));
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->status[reg.status_index]);
	ASSERT_EQ(0x80000000, self->word);
	ASSERT_EQ(0, ue_enable(NULL, EV_BIT, false));
	ASSERT_EQ(0, self->word);
}

#else

/* A 64-bit build has nothing to test: the 32-bit one does */
TEST(built_64bit)
{
	SKIP(return, "a 64-bit build: the 32-bit one tests");
}

#endif

TEST_HARNESS_MAIN
