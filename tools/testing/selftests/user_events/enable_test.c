// SPDX-License-Identifier: GPL-2.0
/*
 * user_events with an enable bit, the registration ABI of Linux 6.4 and
 * later, served by the same user_events_data file as the status page:
 *
 * - the enable bit layout of DIAG_IOCSREG and DIAG_IOCSUNREG: every size,
 *   flag, alignment, bit range and address check, with its errno, and
 *   that a registration that fails leaves nothing behind;
 * - the bit: set by ftrace (top level and instances) and perf, cleared
 *   when the last of them detaches, for 4- and 8-byte values and bits 0,
 *   31 and 63, with the value's other bits and its neighbours untouched,
 *   also while the program changes them at the same time; several bits
 *   in one word; unregistering and registering again;
 * - whose the registrations are: the address space, not the fd; threads
 *   and CLONE_VM children share them, a fork copies them, exec and exit
 *   drop them;
 * - pages the bit cannot be written in at once (not present, never
 *   touched, shared copy-on-write after a fork) and pages it cannot be
 *   written in at all (unmapped, read-only);
 * - writes: through a slot that only enable bit registrations handed out
 *   on the fd (mainline's rule), EBADF while nothing is attached, after
 *   the ENOENT, EINVAL and E2BIG checks; once a status page registration
 *   handed the slot out (5.18's rule), before or after, the write
 *   succeeds and records nothing; slots are per fd;
 * - one event registered with both layouts, its status byte and enable
 *   bit agreeing.
 *
 * The lifetime of the events that enable bits create is lifetime_test's;
 * both programs share FIXTURE(en), in user_events_selftests.h.
 */
#define _GNU_SOURCE
#define USER_EVENTS_ENABLE_BIT_ABI
#define UE_EN_FIXTURE
#include "user_events_selftests.h"

#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/wait.h>

/* Set in the environment of the image a child execs: see en_exec_image() */
#define EXEC_ENV	"UE_ENABLE_TEST_EXEC"

/*
 * The image a child execs is this program, with EXEC_ENV set: it waits
 * for its standard input to close, which the parent does once it has
 * checked what the exec dropped.
 */
static void __attribute__((constructor)) en_exec_image(void)
{
	char c;

	if (!getenv(EXEC_ENV))
		return;
	while (read(0, &c, 1) > 0)
		;
	_exit(0);
}

/* DIAG_IOCSREG with @reg; 0 or errno */
static int en_ioctl_reg(int fd, struct user_reg *reg)
{
	int ret = ue_ioctl(fd, DIAG_IOCSREG, reg);

	if (!ret)
		en_track(reg->enable_addr, reg->enable_bit);

	return ret;
}

/*
 * Bit @bit (63: present, 56: mapped by this process only) of the
 * /proc/self/pagemap entry of the page of @addr; -1 when unknown.  The
 * tests use it to check that they exercise what they mean to.
 */
static int en_pagemap_bit(const void *addr, int bit)
{
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	__u64 entry;
	ssize_t n;

	if (fd == -1)
		return -1;
	n = pread(fd, &entry, sizeof(entry),
		  (uintptr_t)addr / UE_PAGE_SIZE * sizeof(entry));
	close(fd);
	if (n != sizeof(entry))
		return -1;

	return (entry >> bit) & 1;
}

#define PM_PRESENT	63
#define PM_EXCLUSIVE	56

/*
 * DIAG_IOCSDEL of @name once nothing holds it any more: an exiting
 * process drops its registrations a little after waitpid() may return.
 */
static int en_del_when_free(const char *name)
{
	long long end = ue_now_ms() + UE_WAIT_MS;
	int ret;

	while ((ret = ue_del(name)) == EBUSY && ue_now_ms() < end)
		usleep(1000);

	return ret;
}

/*
 * After a fork, the parent's pages are shared copy-on-write until it
 * writes them: the kernel then writes their bits from a worker, shortly
 * after a change of state, as it never faults a page in under the locks
 * that every tracer needs.  A test that checks a bit right after a change
 * writes its page first, as the program would.
 */
static void en_own_page(void *page)
{
	__atomic_fetch_or((__u32 *)page, 0, __ATOMIC_SEQ_CST);
}

TEST(abi_numbers)
{
	/* The enable bit layout: packed, 28 bytes */
	ASSERT_EQ(28, sizeof(struct user_reg));
	ASSERT_EQ(0, offsetof(struct user_reg, size));
	ASSERT_EQ(4, offsetof(struct user_reg, enable_bit));
	ASSERT_EQ(5, offsetof(struct user_reg, enable_size));
	ASSERT_EQ(6, offsetof(struct user_reg, flags));
	ASSERT_EQ(8, offsetof(struct user_reg, enable_addr));
	ASSERT_EQ(16, offsetof(struct user_reg, name_args));
	ASSERT_EQ(24, offsetof(struct user_reg, write_index));

	ASSERT_EQ(16, sizeof(struct user_unreg));
	ASSERT_EQ(4, offsetof(struct user_unreg, disable_bit));
	ASSERT_EQ(5, offsetof(struct user_unreg, __reserved));
	ASSERT_EQ(6, offsetof(struct user_unreg, __reserved2));
	ASSERT_EQ(8, offsetof(struct user_unreg, disable_addr));

	/* The status page layout, the helpers' copy of it (not packed) */
	ASSERT_EQ(UE_U64_OFFSET + 16, sizeof(struct ue_status_reg));
	ASSERT_EQ(UE_U64_OFFSET, offsetof(struct ue_status_reg, name_args));

	/* The size of a pointer is part of the numbers */
	ASSERT_EQ(0xc0002a00 | sizeof(void *) << 16, DIAG_IOCSREG);
	ASSERT_EQ(0x40002a01 | sizeof(void *) << 16, DIAG_IOCSDEL);
	ASSERT_EQ(0x40002a02 | sizeof(void *) << 16, DIAG_IOCSUNREG);
	ASSERT_EQ(1, USER_EVENT_REG_PERSIST);
	ASSERT_EQ(2, USER_EVENT_REG_MULTI_FORMAT);
	ASSERT_STREQ("user_events_multi", USER_EVENTS_MULTI_SYSTEM);
}

TEST_F(en, reg_sizes)
{
	const char *cmd = PREFIX "size u32 v";
	const char *bad = PREFIX "size_bad u32 v";
	__u32 *word = (__u32 *)self->page;
	struct {
		struct user_reg reg;
		__u8 tail[UE_PAGE_MAX];
	} *big;
	__u32 size;

	big = calloc(1, sizeof(*big));
	ASSERT_NE(NULL, big);
	big->reg.enable_size = 4;
	big->reg.enable_addr = (__u64)(uintptr_t)word;
	big->reg.name_args = (__u64)(uintptr_t)bad;

	/* Below 28 only the status page layout's 24 is known */
	for (size = 0; size < sizeof(struct user_reg); size++) {
		if (size == sizeof(struct ue_status_reg))
			continue;
		big->reg.size = size;
		ASSERT_EQ(EINVAL, ue_ioctl(self->fd, DIAG_IOCSREG, big)) {
			TH_LOG("size %u", size);
		}
	}

	/* Bigger than known: the unknown bytes must be zero */
	big->reg.size = sizeof(struct user_reg) + 1;
	big->tail[0] = 1;
	ASSERT_EQ(E2BIG, ue_ioctl(self->fd, DIAG_IOCSREG, big));
	big->tail[0] = 0;
	big->tail[UE_PAGE_SIZE - sizeof(struct user_reg) - 1] = 1;
	big->reg.size = UE_PAGE_SIZE;
	ASSERT_EQ(E2BIG, ue_ioctl(self->fd, DIAG_IOCSREG, big));
	big->tail[UE_PAGE_SIZE - sizeof(struct user_reg) - 1] = 0;

	/* Beyond a page: E2BIG, whatever the bytes */
	big->reg.size = UE_PAGE_SIZE + 1;
	ASSERT_EQ(E2BIG, ue_ioctl(self->fd, DIAG_IOCSREG, big));
	big->reg.size = ~0U;
	ASSERT_EQ(E2BIG, ue_ioctl(self->fd, DIAG_IOCSREG, big));

	/* None of that created the event or touched the value */
	ASSERT_FALSE(ue_event_exists(PREFIX "size_bad"));
	ASSERT_EQ(0, *word);

	/* 28 and a page with a zero tail: one event, one slot */
	big->reg.name_args = (__u64)(uintptr_t)cmd;
	big->reg.size = sizeof(struct user_reg);
	big->reg.write_index = 77;
	ASSERT_EQ(0, en_ioctl_reg(self->fd, &big->reg));
	ASSERT_EQ(0, big->reg.write_index);
	big->reg.size = UE_PAGE_SIZE;
	big->reg.enable_bit = 1;
	big->reg.write_index = 77;
	ASSERT_EQ(0, en_ioctl_reg(self->fd, &big->reg));
	ASSERT_EQ(0, big->reg.write_index);
	ASSERT_TRUE(ue_event_exists(PREFIX "size"));
	free(big);
}

/*
 * A struct of the status page layout with a size of 28 or more is read as
 * the enable bit layout: a non-zero tail is E2BIG, and so is any size
 * beyond a page; with a zero tail its enable_size is 0 (the status page
 * layout's padding): EINVAL
 */
TEST_F(en, reg_sizes_status_layout)
{
	struct {
		struct ue_status_reg reg;
		__u8 tail[16];
	} big;
	const char *name = PREFIX "size_st u32 a";

	memset(&big, 0, sizeof(big));
	big.reg.size = sizeof(big);
	big.reg.name_args = (__u64)(uintptr_t)name;
	big.tail[15] = 1;
	ASSERT_EQ(E2BIG, ue_ioctl(self->fd, DIAG_IOCSREG, &big));
	big.tail[15] = 0;
	big.reg.size = UE_PAGE_SIZE + 1;
	ASSERT_EQ(E2BIG, ue_ioctl(self->fd, DIAG_IOCSREG, &big));

	big.reg.size = sizeof(big);
	ASSERT_EQ(EINVAL, ue_ioctl(self->fd, DIAG_IOCSREG, &big));
	big.reg.size = 28;
	ASSERT_EQ(EINVAL, ue_ioctl(self->fd, DIAG_IOCSREG, &big));
	ASSERT_FALSE(ue_event_exists(PREFIX "size_st"));
}

TEST_F(en, reg_einval)
{
	static const int bad_sizes[] = { 0, 1, 2, 3, 5, 6, 7, 9, 16, 255 };
	const char *cmd = PREFIX "inval u32 v";
	__u64 *value = self->page;
	__u32 idx;
	int i;

	*value = 0x5a5a5a5a5a5a5a5aULL;

	/* Flags beyond PERSIST and MULTI_FORMAT */
	ASSERT_EQ(EINVAL, en_reg(self->fd, cmd, value, 8, 0, 1 << 2, NULL));
	ASSERT_EQ(EINVAL, en_reg(self->fd, cmd, value, 8, 0, 1 << 15, NULL));
	ASSERT_EQ(EINVAL, en_reg(self->fd, cmd, value, 8, 0, 0xffff, NULL));

	/* Sizes other than 4 and 8 */
	for (i = 0; i < ARRAY_SIZE(bad_sizes); i++)
		ASSERT_EQ(EINVAL, en_reg(self->fd, cmd, value, bad_sizes[i], 0,
					 0, NULL));

	/* Addresses not aligned to the size */
	for (i = 1; i < 4; i++)
		ASSERT_EQ(EINVAL, en_reg(self->fd, cmd, (char *)value + i, 4, 0,
					 0, NULL));
	for (i = 1; i < 8; i++)
		ASSERT_EQ(EINVAL, en_reg(self->fd, cmd, (char *)value + i, 8, 0,
					 0, NULL));

	/* Bits beyond the value */
	ASSERT_EQ(EINVAL, en_reg(self->fd, cmd, value, 4, 32, 0, NULL));
	ASSERT_EQ(EINVAL, en_reg(self->fd, cmd, value, 4, 63, 0, NULL));
	ASSERT_EQ(EINVAL, en_reg(self->fd, cmd, value, 8, 64, 0, NULL));
	ASSERT_EQ(EINVAL, en_reg(self->fd, cmd, value, 8, 255, 0, NULL));

	/* Nothing was created, nothing written */
	ASSERT_FALSE(ue_event_exists(PREFIX "inval"));
	ASSERT_EQ(0x5a5a5a5a5a5a5a5aULL, *value);

	/* The edges that are valid; the first slot is still free */
	ASSERT_EQ(0, en_reg(self->fd, cmd, value, 4, 31, 0, &idx));
	ASSERT_EQ(0, idx);
	ASSERT_EQ(0, en_reg(self->fd, cmd, (char *)value + 4, 4, 31, 0, &idx));
	ASSERT_EQ(0, idx);
	/* A 32-bit kernel takes no 8-byte value */
	ASSERT_EQ(ue_kernel_64bit() ? 0 : EINVAL,
		  en_reg(self->fd, cmd, value + 1, 8, 63, 0, &idx));
	ASSERT_EQ(0, idx);
	ASSERT_EQ(0x5a5a5a5a5a5a5a5aULL, *value);
}

TEST_F(en, reg_efault)
{
	const char *cmd = PREFIX "fault u32 v";
	uintptr_t top_bit = (uintptr_t)1 << (sizeof(void *) * 8 - 1);
	int wide = ue_kernel_64bit() ? 8 : 4;
	struct user_reg *reg;
	char *pages;
	__u32 idx;

	/* Page 0 read-only, page 1 inaccessible, page 2 unmapped */
	pages = mmap(NULL, 3 * UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, pages);
	memset(pages, 0, 2 * UE_PAGE_SIZE);
	ASSERT_EQ(0, mprotect(pages, UE_PAGE_SIZE, PROT_READ));
	ASSERT_EQ(0, mprotect(pages + UE_PAGE_SIZE, UE_PAGE_SIZE, PROT_NONE));
	ASSERT_EQ(0, munmap(pages + 2 * UE_PAGE_SIZE, UE_PAGE_SIZE));

	/* The value not writable (in a long: 8 bytes, 4 on a 32-bit kernel) */
	ASSERT_EQ(EFAULT, en_reg(self->fd, cmd, NULL, 4, 0, 0, NULL));
	ASSERT_EQ(EFAULT, en_reg(self->fd, cmd, pages, 4, 0, 0, NULL));
	ASSERT_EQ(EFAULT, en_reg(self->fd, cmd, pages + UE_PAGE_SIZE, wide, 0,
				 0, NULL));
	ASSERT_EQ(EFAULT, en_reg(self->fd, cmd, pages + 2 * UE_PAGE_SIZE, 4, 0,
				 0, NULL));
	ASSERT_EQ(EFAULT, en_reg(self->fd, cmd, (void *)-8L, wide, 0, 0, NULL));
	ASSERT_EQ(EFAULT, en_reg(self->fd, cmd, (void *)top_bit, wide, 0, 0,
				 NULL));
	ASSERT_EQ(0, *(__u32 *)pages);

	/* The command not readable */
	ASSERT_EQ(EFAULT, en_reg(self->fd, NULL, self->page, 4, 0, 0, NULL));
	ASSERT_EQ(EFAULT, en_reg(self->fd, pages + UE_PAGE_SIZE, self->page, 4,
				 0, 0, NULL));

	/* The struct readable, but its write_index not writable */
	ASSERT_EQ(0, mprotect(pages, UE_PAGE_SIZE, PROT_READ | PROT_WRITE));
	reg = (struct user_reg *)pages;
	reg->size = sizeof(*reg);
	reg->enable_size = 4;
	reg->enable_addr = (__u64)(uintptr_t)self->page;
	reg->name_args = (__u64)(uintptr_t)cmd;
	ASSERT_EQ(0, mprotect(pages, UE_PAGE_SIZE, PROT_READ));
	ASSERT_EQ(EFAULT, ue_ioctl(self->fd, DIAG_IOCSREG, reg));

	/* The struct running into the inaccessible page */
	ASSERT_EQ(0, mprotect(pages, UE_PAGE_SIZE, PROT_READ | PROT_WRITE));
	reg = (struct user_reg *)(pages + UE_PAGE_SIZE - 8);
	reg->size = sizeof(*reg);
	ASSERT_EQ(EFAULT, ue_ioctl(self->fd, DIAG_IOCSREG, reg));
	ASSERT_EQ(EFAULT, ue_ioctl(self->fd, DIAG_IOCSREG,
				   pages + UE_PAGE_SIZE));

	/* Nothing made, no slot used, the bit untouched */
	ASSERT_FALSE(ue_event_exists(PREFIX "fault"));
	ASSERT_EQ(0, self->page[0]);
	ASSERT_EQ(0, en_reg(self->fd, cmd, self->page, 4, 0, 0, &idx));
	ASSERT_EQ(0, idx);
	ASSERT_EQ(0, munmap(pages, 2 * UE_PAGE_SIZE));
}

TEST_F(en, reg_outputs)
{
	const char *cmd = PREFIX "out u32 v";
	struct user_reg reg, before;
	__u32 idx;
	int ro;

	memset(&reg, 0, sizeof(reg));
	reg.size = sizeof(reg);
	reg.enable_bit = 9;
	reg.enable_size = ue_kernel_64bit() ? 8 : 4;
	reg.flags = 0;
	reg.enable_addr = (__u64)(uintptr_t)(self->page + 3);
	reg.name_args = (__u64)(uintptr_t)cmd;
	reg.write_index = 0xdeadbeef;
	before = reg;

	/* The write index is the only output */
	ASSERT_EQ(0, en_ioctl_reg(self->fd, &reg));
	ASSERT_EQ(0, reg.write_index);
	reg.write_index = before.write_index;
	ASSERT_EQ(0, memcmp(&before, &reg, sizeof(reg)));

	/* A second event takes the next slot */
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "out2", self->page, 4, 0, 0,
			    &idx));
	ASSERT_EQ(1, idx);

	/* The ioctls need a writable fd */
	ro = ue_open("user_events_data", O_RDONLY);
	ASSERT_NE(-1, ro);
	ASSERT_EQ(EBADF, en_reg(ro, cmd, self->page + 4, 4, 0, 0, NULL));
	ASSERT_EQ(EBADF, en_unreg(ro, self->page + 3, 9));
	close(ro);
	ASSERT_EQ(0, en_unreg(self->fd, self->page + 3, 9));
}

TEST_F(en, reg_eaddrinuse)
{
	const char *a = PREFIX "inuse_a u32 v";
	const char *b = PREFIX "inuse_b u32 v";
	__u32 *word = (__u32 *)self->page;
	__u32 idx;
	int fd2;

	ASSERT_EQ(0, en_reg(self->fd, a, word, 4, 0, 0, &idx));
	ASSERT_EQ(0, idx);

	/* Same address and bit: for the same event and for any other */
	ASSERT_EQ(EADDRINUSE, en_reg(self->fd, a, word, 4, 0, 0, NULL));
	ASSERT_EQ(EADDRINUSE, en_reg(self->fd, b, word, 4, 0, 0, NULL));
	ASSERT_EQ(ue_kernel_64bit() ? EADDRINUSE : EINVAL,
		  en_reg(self->fd, b, word, 8, 0, 0, NULL));
	ASSERT_FALSE(ue_event_exists(PREFIX "inuse_b"));

	/* Through another fd of the same process too */
	fd2 = ue_open_data();
	ASSERT_NE(-1, fd2);
	ASSERT_EQ(EADDRINUSE, en_reg(fd2, a, word, 4, 0, 0, NULL));
	ASSERT_EQ(EADDRINUSE, en_reg(fd2, b, word, 4, 0, 0, NULL));
	ASSERT_FALSE(ue_event_exists(PREFIX "inuse_b"));

	/* The failures took no slot; other bits of the word are free */
	ASSERT_EQ(0, en_reg(fd2, b, word, 4, 1, 0, &idx));
	ASSERT_EQ(0, idx);
	ASSERT_EQ(0, en_reg(self->fd, b, word, 4, 2, 0, &idx));
	ASSERT_EQ(1, idx);
	close(fd2);

	/* The first registration is still in place */
	EN_SWITCH(NULL, PREFIX "inuse_a", true, word, 1);
	EN_SWITCH(NULL, PREFIX "inuse_a", false, word, 0);
}

/* In the program's data and bss, the usual home of enable bits */
static __u32 data_word = 0x100;
static __u64 bss_word;

TEST_F(en, static_variables)
{
	const char *name = PREFIX "static";
	/* A 32-bit kernel takes the first half of the 8 bytes */
	int size = ue_kernel_64bit() ? 8 : 4, nr = size == 8 ? 40 : 8;

	ASSERT_EQ(0, en_reg(self->fd, PREFIX "static u32 v", &data_word, 4, 0,
			    0, NULL));
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "static u32 v", &bss_word, size,
			    nr, 0, NULL));
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	ASSERT_EQ(0x101, data_word);
	ASSERT_EQ(1ULL << nr, ue_load(&bss_word, size));
	ASSERT_EQ(0, ue_enable(NULL, name, false));
	ASSERT_EQ(0x100, data_word);
	ASSERT_EQ(0, bss_word);
}

FIXTURE(bit) {
	FIXTURE_DATA(en) en;
};

/* One value: its size, the bit used, its offset in the page */
FIXTURE_VARIANT(bit) {
	int size;
	int bit;
	int offset;
};

FIXTURE_VARIANT_ADD(bit, u32_bit0) {
	.size = 4, .bit = 0, .offset = 8,
};

/* The upper half of a 64-bit word */
FIXTURE_VARIANT_ADD(bit, u32_bit31_upper_half) {
	.size = 4, .bit = 31, .offset = 12,
};

FIXTURE_VARIANT_ADD(bit, u64_bit0) {
	.size = 8, .bit = 0, .offset = 8,
};

FIXTURE_VARIANT_ADD(bit, u64_bit31) {
	.size = 8, .bit = 31, .offset = 8,
};

FIXTURE_VARIANT_ADD(bit, u64_bit63) {
	.size = 8, .bit = 63, .offset = 8,
};

FIXTURE_SETUP(bit)
{
	en_setup(_metadata, &self->en, NULL);
}

FIXTURE_TEARDOWN(bit)
{
	en_teardown(_metadata, &self->en, NULL);
}

/* Is everything around the value at @offset in @page still 0xa5? */
static bool neighbours_intact(const __u8 *page, int offset, int size)
{
	int i;

	for (i = 0; i < 64; i++) {
		if ((i < offset || i >= offset + size) && page[i] != 0xa5)
			return false;
	}

	return true;
}

TEST_F_TIMEOUT(bit, attach_detach, LONG_TIMEOUT)
{
	const char *name = PREFIX "bit";
	int size = variant->size, nr = variant->bit;
	__u8 *page = (__u8 *)self->en.page;
	void *value = page + variant->offset;
	void *late = page + 512 + variant->offset;
	__u64 mask = 1ULL << nr;
	__u64 ones = size == 4 ? 0xffffffffULL : ~0ULL;
	struct ue_perf_ring ring;
	__u32 idx, v, raw[16];
	int id;

	/* The other bits set, and the bytes around the value marked */
	memset(page, 0xa5, 64);
	ue_store(value, size, ones & ~mask);
	if (size == 8 && !ue_kernel_64bit()) {
		/* A 32-bit kernel takes no 8-byte value, and touches none */
		ASSERT_EQ(EINVAL, en_reg(self->en.fd, PREFIX "bit u32 v", value,
					 size, nr, 0, &idx));
		ASSERT_EQ(ones & ~mask, ue_load(value, size));
		ASSERT_FALSE(ue_event_exists(name));
		return;
	}
	ASSERT_EQ(0, en_reg(self->en.fd, PREFIX "bit u32 v", value, size, nr,
			    0, &idx));
	ASSERT_EQ(0, idx);
	ASSERT_EQ(ones & ~mask, ue_load(value, size));
	id = ue_event_id(name);
	ASSERT_LT(0, id);

	/* ftrace: set when enable returns, cleared when disable does */
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	ASSERT_EQ(ones, ue_load(value, size));
	v = 1234;
	ASSERT_EQ(8, ue_emit(self->en.fd, idx, &v, sizeof(v)));
	ASSERT_EQ(0, ue_enable(NULL, name, false));
	ASSERT_EQ(ones & ~mask, ue_load(value, size));
	ASSERT_TRUE(neighbours_intact(page, variant->offset, size));
	UE_ASSERT_TRACE(NULL, name, "v=1234\n");

	/* perf: the same */
	ASSERT_EQ(0, ue_perf_ring_open(&ring, id, 1));
	ASSERT_EQ(ones, ue_load(value, size));
	v = 0xabcdef01;
	ASSERT_EQ(8, ue_emit(self->en.fd, idx, &v, sizeof(v)));
	ASSERT_LE(12, ue_perf_raw_sample(&ring, 0, raw, sizeof(raw)));
	/* Common fields (type first), then the payload */
	ASSERT_EQ(id, raw_type(raw));
	ASSERT_EQ(0xabcdef01, raw[2]);
	ue_perf_ring_close(&ring);
	ASSERT_EQ(ones & ~mask, ue_load(value, size));
	ASSERT_TRUE(neighbours_intact(page, variant->offset, size));

	/* Registered while attached: set by the registration */
	ue_store(late, size, 0);
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	ASSERT_EQ(ones, ue_load(value, size));
	ASSERT_EQ(0, en_reg(self->en.fd, PREFIX "bit u32 v", late, size, nr,
			    0, &idx));
	ASSERT_EQ(0, idx);
	ASSERT_EQ(mask, ue_load(late, size));

	/* Unregistering clears it, though the event stays enabled */
	ASSERT_EQ(0, en_unreg(self->en.fd, late, nr));
	ASSERT_EQ(0, ue_load(late, size));
	ASSERT_EQ(0, ue_enable(NULL, name, false));
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	ASSERT_EQ(0, ue_load(late, size));
	ASSERT_EQ(ones, ue_load(value, size));
	ASSERT_EQ(0, ue_enable(NULL, name, false));
	ASSERT_EQ(ones & ~mask, ue_load(value, size));
	ASSERT_TRUE(neighbours_intact(page, variant->offset, size));
}

TEST_F(en, consumers)
{
	const char *name = PREFIX "cons";
	__u32 *word = (__u32 *)self->page;
	int perf_fd;

	ASSERT_EQ(0, en_reg(self->fd, PREFIX "cons u32 v", word, 4, 5, 0,
			    NULL));
	ASSERT_EQ(0, ue_instance_create(INSTANCE));

	/* Set while any consumer is attached, cleared after the last */
	EN_SWITCH(NULL, name, true, word, 1 << 5);
	EN_SWITCH(INSTANCE, name, true, word, 1 << 5);
	perf_fd = ue_perf_open(ue_event_id(name), 0, -1);
	ASSERT_NE(-1, perf_fd);
	EN_SWITCH(NULL, name, false, word, 1 << 5);
	EN_SWITCH(INSTANCE, name, false, word, 1 << 5);
	close(perf_fd);
	ASSERT_EQ(0, *word);

	/* An instance removed with the event enabled detaches it too */
	EN_SWITCH(INSTANCE, name, true, word, 1 << 5);
	ASSERT_EQ(0, ue_instance_remove(INSTANCE));
	ASSERT_EQ(0, *word);
}

TEST_F(en, bits_of_one_word)
{
	const char *a = PREFIX "word_a", *b = PREFIX "word_b";
	__u32 *word = (__u32 *)self->page;
	__u32 base = 0x80000001, idx_a, idx_b, idx;
	__u32 v = 5;

	/* Bits 0 and 31 are the program's; a on 3 and 5, b on 4 */
	*word = base;
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "word_a u32 v", word, 4, 3, 0,
			    &idx_a));
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "word_b u32 v", word, 4, 4, 0,
			    &idx_b));
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "word_a u32 v", word, 4, 5, 0,
			    &idx));
	ASSERT_EQ(0, idx_a);
	ASSERT_EQ(1, idx_b);
	ASSERT_EQ(idx_a, idx);
	ASSERT_EQ(base, *word);

	EN_SWITCH(NULL, a, true, word, base | 1 << 3 | 1 << 5);
	EN_SWITCH(NULL, b, true, word, base | 1 << 3 | 1 << 4 | 1 << 5);
	ASSERT_EQ(8, ue_emit(self->fd, idx_a, &v, sizeof(v)));
	v = 6;
	ASSERT_EQ(8, ue_emit(self->fd, idx_b, &v, sizeof(v)));
	EN_SWITCH(NULL, a, false, word, base | 1 << 4);

	/* One of a's bits gone: the other one still follows a */
	ASSERT_EQ(0, en_unreg(self->fd, word, 3));
	EN_SWITCH(NULL, a, true, word, base | 1 << 4 | 1 << 5);
	EN_SWITCH(NULL, b, false, word, base | 1 << 5);
	EN_SWITCH(NULL, a, false, word, base);

	UE_ASSERT_TRACE(NULL, a, "v=5\n");
	UE_ASSERT_TRACE(NULL, b, "v=6\n");
}

struct flipper {
	__u32 *word;
	bool stop;
	unsigned long flips;
};

/* Flip bits 8-15 of the word, atomically, until told to stop */
static void *flip_bits(void *arg)
{
	struct flipper *f = arg;

	while (!__atomic_load_n(&f->stop, __ATOMIC_RELAXED)) {
		__atomic_fetch_xor(f->word, 0xff00, __ATOMIC_SEQ_CST);
		f->flips++;
	}

	return NULL;
}

TEST_F_TIMEOUT(en, only_the_bit_changes, LONG_TIMEOUT)
{
	const char *name = PREFIX "atomic";
	struct flipper f = { .word = (__u32 *)self->page };
	int i, wrong = 0;
	pthread_t thread;

	ASSERT_EQ(0, en_reg(self->fd, PREFIX "atomic u32 v", f.word, 4, 0, 0,
			    NULL));

	/*
	 * The kernel sets and clears bit 0 while the program changes bits
	 * 8-15: none of the program's changes may be lost
	 */
	ASSERT_EQ(0, pthread_create(&thread, NULL, flip_bits, &f));
	for (i = 0; i < 10; i++) {
		if (ue_enable(NULL, name, true) || !(*f.word & 1))
			wrong++;
		if (ue_enable(NULL, name, false) || (*f.word & 1))
			wrong++;
	}
	__atomic_store_n(&f.stop, true, __ATOMIC_RELAXED);
	pthread_join(thread, NULL);
	ASSERT_EQ(0, wrong);
	ASSERT_LT(0, f.flips);
	ASSERT_EQ(f.flips & 1 ? 0xff00 : 0, *f.word);
}

TEST_F(en, unregister)
{
	const char *name = PREFIX "unreg";
	__u32 *word = (__u32 *)self->page;
	struct {
		struct user_unreg unreg;
		__u8 tail[8];
	} big;
	struct user_unreg *edge;
	char *pages;
	int ro;

	ASSERT_EQ(0, en_reg(self->fd, PREFIX "unreg u32 v", word, 4, 2, 0,
			    NULL));
	EN_SWITCH(NULL, name, true, word, 1 << 2);

	/* Malformed: EINVAL, and the registration stays */
	memset(&big, 0, sizeof(big));
	big.unreg.disable_bit = 2;
	big.unreg.disable_addr = (__u64)(uintptr_t)word;
	for (big.unreg.size = 0; big.unreg.size < sizeof(big.unreg);
	     big.unreg.size++) {
		ASSERT_EQ(EINVAL, ue_ioctl(self->fd, DIAG_IOCSUNREG, &big)) {
			TH_LOG("size %u", big.unreg.size);
		}
	}
	big.unreg.size = sizeof(big.unreg);
	big.unreg.__reserved = 1;
	ASSERT_EQ(EINVAL, ue_ioctl(self->fd, DIAG_IOCSUNREG, &big));
	big.unreg.__reserved = 0;
	big.unreg.__reserved2 = 0x100;
	ASSERT_EQ(EINVAL, ue_ioctl(self->fd, DIAG_IOCSUNREG, &big));
	big.unreg.__reserved2 = 0;

	/* Bigger: the tail must be zero, and at most a page */
	big.unreg.size = sizeof(big);
	big.tail[7] = 1;
	ASSERT_EQ(E2BIG, ue_ioctl(self->fd, DIAG_IOCSUNREG, &big));
	big.tail[7] = 0;
	big.unreg.size = UE_PAGE_SIZE + 1;
	ASSERT_EQ(E2BIG, ue_ioctl(self->fd, DIAG_IOCSUNREG, &big));

	/* Unreadable */
	pages = mmap(NULL, 2 * UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, pages);
	ASSERT_EQ(0, mprotect(pages + UE_PAGE_SIZE, UE_PAGE_SIZE, PROT_NONE));
	edge = (struct user_unreg *)(pages + UE_PAGE_SIZE - 8);
	edge->size = sizeof(*edge);
	ASSERT_EQ(EFAULT, ue_ioctl(self->fd, DIAG_IOCSUNREG, edge));
	ASSERT_EQ(EFAULT, ue_ioctl(self->fd, DIAG_IOCSUNREG,
				   pages + UE_PAGE_SIZE));
	munmap(pages, 2 * UE_PAGE_SIZE);

	/* No such registration: ENOENT */
	ASSERT_EQ(ENOENT, en_unreg(self->fd, word, 3));
	ASSERT_EQ(ENOENT, en_unreg(self->fd, word + 1, 2));
	ASSERT_EQ(ENOENT, en_unreg(self->fd, NULL, 0));
	ASSERT_EQ(1 << 2, *word);

	/* A zero tail is fine: unregistered, and the bit cleared at once */
	big.unreg.size = sizeof(big);
	ASSERT_EQ(0, ioctl(self->fd, DIAG_IOCSUNREG, &big));
	en_untrack((__u64)(uintptr_t)word, 2);
	ASSERT_EQ(0, *word);
	ASSERT_EQ(ENOENT, en_unreg(self->fd, word, 2));

	/* The bit is not maintained any more */
	ASSERT_EQ(0, ue_enable(NULL, name, false));
	EN_SWITCH(NULL, name, true, word, 0);
	ASSERT_EQ(0, ue_enable(NULL, name, false));

	/* Read-only fds cannot unregister */
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "unreg u32 v", word, 4, 2, 0,
			    NULL));
	ro = ue_open("user_events_data", O_RDONLY);
	ASSERT_NE(-1, ro);
	ASSERT_EQ(EBADF, en_unreg(ro, word, 2));
	close(ro);
	ASSERT_EQ(0, en_unreg(self->fd, word, 2));
}

TEST_F(en, reregister)
{
	__u32 *word = (__u32 *)self->page;
	const char *a = PREFIX "again_a", *b = PREFIX "again_b";
	__u32 idx;

	ASSERT_EQ(0, en_reg(self->fd, PREFIX "again_a u32 v", word, 4, 7, 0,
			    &idx));
	ASSERT_EQ(0, idx);
	ASSERT_EQ(0, en_unreg(self->fd, word, 7));

	/* The same bit again: same event, same slot, maintained again */
	EN_SWITCH(NULL, a, true, word, 0);
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "again_a u32 v", word, 4, 7, 0,
			    &idx));
	ASSERT_EQ(0, idx);
	ASSERT_EQ(1 << 7, *word);
	EN_SWITCH(NULL, a, false, word, 0);
	ASSERT_EQ(0, en_unreg(self->fd, word, 7));

	/* For another event: it follows that one now */
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "again_b u32 v", word, 4, 7, 0,
			    &idx));
	ASSERT_EQ(1, idx);
	EN_SWITCH(NULL, a, true, word, 0);
	EN_SWITCH(NULL, b, true, word, 1 << 7);
	EN_SWITCH(NULL, b, false, word, 0);
	ASSERT_EQ(0, ue_enable(NULL, a, false));
}

TEST_F(en, fd_close_keeps_registration)
{
	const char *name = PREFIX "close";
	__u32 *word = (__u32 *)self->page;
	int fd2;

	/* Made in dynamic_events: only the registration holds it */
	ASSERT_EQ(0, ue_dyn("u:" PREFIX "close u32 v"));
	fd2 = ue_open_data();
	ASSERT_NE(-1, fd2);
	ASSERT_EQ(0, en_reg(fd2, PREFIX "close u32 v", word, 4, 0, 0, NULL));
	close(fd2);

	/* Closing the fd kept the registration */
	ASSERT_EQ(EBUSY, ue_del(name));
	EN_SWITCH(NULL, name, true, word, 1);
	EN_SWITCH(NULL, name, false, word, 0);

	/* Any fd unregisters it; then the event can go */
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	ASSERT_EQ(0, en_unreg(self->fd, word, 0));
	ASSERT_EQ(0, *word);
	ASSERT_EQ(EBUSY, ue_del(name));
	ASSERT_EQ(0, ue_enable(NULL, name, false));
	ASSERT_EQ(0, ue_del(name));
}

struct thread_reg {
	int fd;
	void *addr;
	int bit;
	int ret;
	__u32 idx;
};

static void *thread_register(void *arg)
{
	struct thread_reg *t = arg;

	t->ret = en_reg(t->fd, PREFIX "thr u32 v", t->addr, 4, t->bit, 0,
			&t->idx);

	return NULL;
}

static void *thread_unregister(void *arg)
{
	struct thread_reg *t = arg;

	t->ret = en_unreg(t->fd, t->addr, t->bit);

	return NULL;
}

TEST_F(en, threads_share)
{
	const char *name = PREFIX "thr";
	__u32 *word = (__u32 *)self->page;
	struct thread_reg t = { .fd = self->fd, .addr = word, .bit = 1 };
	pthread_t thread;
	__u32 v = 9;

	/* A thread registers and ends: its registration stays */
	ASSERT_EQ(0, pthread_create(&thread, NULL, thread_register, &t));
	pthread_join(thread, NULL);
	ASSERT_EQ(0, t.ret);
	ASSERT_EQ(0, t.idx);
	EN_SWITCH(NULL, name, true, word, 1 << 1);
	ASSERT_EQ(8, ue_emit(self->fd, t.idx, &v, sizeof(v)));
	EN_SWITCH(NULL, name, false, word, 0);

	/* It is the main thread's as well */
	ASSERT_EQ(EADDRINUSE, en_reg(self->fd, PREFIX "thr u32 v", word, 4, 1,
				     0, NULL));

	/* And the other way round: a thread unregisters the main's */
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "thr u32 v", word, 4, 2, 0,
			    NULL));
	EN_SWITCH(NULL, name, true, word, 1 << 1 | 1 << 2);
	t.bit = 2;
	ASSERT_EQ(0, pthread_create(&thread, NULL, thread_unregister, &t));
	pthread_join(thread, NULL);
	ASSERT_EQ(0, t.ret);
	ASSERT_EQ(1 << 1, *word);
	ASSERT_EQ(0, en_unreg(self->fd, word, 1));
	ASSERT_EQ(0, *word);
	ASSERT_EQ(0, ue_enable(NULL, name, false));

	UE_ASSERT_TRACE(NULL, name, "v=9\n");
}

struct clone_ctx {
	int fd;
	__u32 *word;
	int ret;
};

/* A child sharing the address space: registers, and exits */
static int clone_vm_child(void *arg)
{
	struct clone_ctx *x = arg;

	x->ret = en_reg(x->fd, PREFIX "clone u32 v", x->word, 4, 0, 0, NULL);

	return 0;
}

TEST_F(en, clone_vm_shares)
{
	struct clone_ctx x = { .fd = self->fd, .word = (__u32 *)self->page };
	const char *name = PREFIX "clone";
	size_t stack_size = 64 * 1024;
	int status;
	char *stack;
	pid_t pid;

	stack = malloc(stack_size);
	ASSERT_NE(NULL, stack);
	x.ret = -1;
	pid = clone(clone_vm_child, stack + stack_size, CLONE_VM | SIGCHLD,
		    &x);
	ASSERT_NE(-1, pid);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	free(stack);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, x.ret);

	/* Its registration is the parent's too, and outlived its exit */
	EN_SWITCH(NULL, name, true, x.word, 1);
	ASSERT_EQ(EADDRINUSE, en_reg(self->fd, PREFIX "clone u32 v", x.word, 4,
				     0, 0, NULL));
	ASSERT_EQ(0, en_unreg(self->fd, x.word, 0));
	ASSERT_EQ(0, *x.word);
	ASSERT_EQ(0, ue_enable(NULL, name, false));
}

struct fork_ctx {
	int fd;
	__u32 idx;
	__u32 *word;
};

/*
 * The child of the fork test: its copies of x (word[0]) and y (word[1])
 * follow the event, on pages the fork made copy-on-write.
 */
static int fork_child(struct ue_child *c, void *arg)
{
	struct fork_ctx *x = arg;
	__u32 v = 77;

	if (ue_child_hear(c) != 'e')
		return ue_child_fail(1, "no word from the parent");
	if (!ue_wait_bit(&x->word[0], 4, 0, true) ||
	    !ue_wait_bit(&x->word[1], 4, 0, true))
		return ue_child_fail(2, "the child's bits were not set");
	if (ue_emit(x->fd, x->idx, &v, sizeof(v)) != 8)
		return ue_child_fail(3, "write with the inherited fd");
	if (en_reg(x->fd, PREFIX "fork u32 v", &x->word[0], 4, 0, 0,
		   NULL) != EADDRINUSE)
		return ue_child_fail(4, "registering its copy again was not EADDRINUSE");
	if (en_unreg(x->fd, &x->word[0], 0))
		return ue_child_fail(5, "unregister its copy of x");
	if (ue_bit(&x->word[0], 4, 0))
		return ue_child_fail(6, "x still set after unregistering it");
	if (!ue_child_say(c, 'u') || ue_child_hear(c) != 'd')
		return ue_child_fail(7, "no word from the parent");
	/* Disabled: y follows, x stays clear */
	if (!ue_wait_bit(&x->word[1], 4, 0, false) || ue_bit(&x->word[0], 4, 0))
		return ue_child_fail(8, "bits after the event was disabled");
	if (!ue_child_say(c, 'D') || ue_child_hear(c) != 'E')
		return ue_child_fail(9, "no word from the parent");
	/* The parent unregistered its y: the child's y still follows */
	if (!ue_wait_bit(&x->word[1], 4, 0, true) || ue_bit(&x->word[0], 4, 0))
		return ue_child_fail(10, "bits after the event was enabled again");
	if (!ue_child_say(c, 'k') || ue_child_hear(c) != 'q')
		return ue_child_fail(11, "no word from the parent");

	return 0;
}

TEST_F_TIMEOUT(en, fork_copies, LONG_TIMEOUT)
{
	const char *name = PREFIX "fork";
	struct fork_ctx x = { .fd = self->fd, .word = (__u32 *)self->page };
	struct ue_child c;

	ASSERT_EQ(0, en_reg(self->fd, PREFIX "fork u32 v", &x.word[0], 4, 0, 0,
			    &x.idx));
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "fork u32 v", &x.word[1], 4, 0, 0,
			    NULL));
	ASSERT_EQ(0, ue_child_start(&c, fork_child, &x));

	/* Both processes' bits set; the pages are copy-on-write now */
	ASSERT_NE(1, en_pagemap_bit(x.word, PM_EXCLUSIVE));
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	ASSERT_TRUE(ue_wait_bit(&x.word[0], 4, 0, true));
	ASSERT_TRUE(ue_wait_bit(&x.word[1], 4, 0, true));
	ASSERT_TRUE(ue_parent_say(&c, 'e'));

	/* The child unregistered its x: the parent's stays */
	ASSERT_EQ('u', ue_parent_hear(&c));
	ASSERT_EQ(3, x.word[0] | x.word[1] << 1);
	ASSERT_EQ(EADDRINUSE, en_reg(self->fd, PREFIX "fork u32 v", &x.word[0],
				     4, 0, 0, NULL));
	ASSERT_EQ(0, ue_enable(NULL, name, false));
	ASSERT_EQ(0, x.word[0] | x.word[1]);
	ASSERT_TRUE(ue_parent_say(&c, 'd'));

	/* The parent unregisters its y: the child's stays */
	ASSERT_EQ('D', ue_parent_hear(&c));
	ASSERT_EQ(0, en_unreg(self->fd, &x.word[1], 0));
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	ASSERT_EQ(1, x.word[0]);
	ASSERT_EQ(0, x.word[1]);
	ASSERT_TRUE(ue_parent_say(&c, 'E'));
	ASSERT_EQ('k', ue_parent_hear(&c));
	ASSERT_EQ(0, ue_enable(NULL, name, false));
	ASSERT_TRUE(ue_parent_say(&c, 'q'));
	ASSERT_EQ(0, ue_child_finish(&c));

	/* The child's write went through the inherited slot */
	UE_ASSERT_TRACE(NULL, name, "v=77\n");
}

/*
 * A thread registers and unregisters a bit of an enabled event, over and
 * over, while another forks: each child has a registration of its own,
 * or its copy of the bit is clear, never set with nothing behind it.
 * Every other round the thread writes to the page before unregistering,
 * so that the unregistration clears the bit without a fault.  The debug
 * kernel, where a fork takes a third of a second under emulation, forks a
 * quarter as often.
 */
#define CHURN_FORKS	200

struct churn_ctx {
	int fd;
	__u32 *word;
	bool stop;
	int rounds;
	int errors;
};

static void *churn_bit(void *arg)
{
	struct churn_ctx *x = arg;

	while (!__atomic_load_n(&x->stop, __ATOMIC_ACQUIRE)) {
		if (ue_reg_bit(x->fd, PREFIX "churn u32 v", x->word, 4, 0, 0,
			       NULL))
			x->errors++;
		if (x->rounds++ & 1)
			__atomic_add_fetch(&x->word[1], 1, __ATOMIC_RELAXED);
		if (ue_unreg_bit(x->fd, x->word, 0))
			x->errors++;
	}
	return NULL;
}

/* The child: 1 if its bit is set with no registration behind it */
static int churn_child(int fd, __u32 *word)
{
	bool set = ue_bit(word, 4, 0);
	int ret = ue_unreg_bit(fd, word, 0);

	if (ret && ret != ENOENT)
		return 2;
	return set && ret == ENOENT;
}

TEST_F_TIMEOUT(en, unreg_racing_fork, LONG_TIMEOUT)
{
	const char *name = PREFIX "churn";
	struct churn_ctx x = { .fd = self->fd, .word = (__u32 *)self->page };
	int i, status, orphans = 0, others = 0;
	int forks = ue_scaled(CHURN_FORKS, 4);
	pthread_t thread;
	pid_t pid;

	/* The event exists and is enabled: a registration sets the bit */
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "churn u32 v", &x.word[2], 4, 0,
			    0, NULL));
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	ASSERT_TRUE(ue_wait_bit(&x.word[2], 4, 0, true));

	ASSERT_EQ(0, pthread_create(&thread, NULL, churn_bit, &x));
	for (i = 0; i < forks; i++) {
		pid = fork();
		if (pid == 0)
			_exit(churn_child(self->fd, x.word));
		ASSERT_NE(-1, pid);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		if (WEXITSTATUS(status) == 1)
			orphans++;
		else if (WEXITSTATUS(status))
			others++;
	}
	__atomic_store_n(&x.stop, true, __ATOMIC_RELEASE);
	pthread_join(thread, NULL);
	TH_LOG("%d forks during %d registrations: %d bits left set",
	       forks, x.rounds, orphans);
	ASSERT_EQ(0, x.errors);
	ASSERT_EQ(0, others);
	ASSERT_EQ(0, orphans);
	ASSERT_EQ(0, ue_enable(NULL, name, false));
}

/*
 * Register, in a child, p (made persistent by the parent) on word[0],
 * a (new, automatic) on word[1] and, unless @exec, r (new, automatic)
 * on word[2]; close the fd; report, then exec or exit.
 */
struct drop_ctx {
	__u32 *word;
	bool exec;
};

static int drop_child(struct ue_child *c, void *arg)
{
	struct drop_ctx *x = arg;
	int fd = ue_open_data();

	if (fd == -1)
		return ue_child_fail(1, "open user_events_data");
	if (!x->exec && en_reg(fd, PREFIX "drop_r u32 v", &x->word[2], 4, 0,
			       0, NULL))
		return ue_child_fail(2, "register r");
	if (en_reg(fd, PREFIX "drop_a u32 v", &x->word[1], 4, 0, 0, NULL))
		return ue_child_fail(3, "register a");
	if (en_reg(fd, PREFIX "drop_p u32 v", &x->word[0], 4, 0, 0, NULL))
		return ue_child_fail(4, "register p");
	close(fd);
	if (!ue_child_say(c, 'r'))
		return ue_child_fail(5, "pipe");
	/* Not before the parent saw the bits hold p and a */
	if (ue_child_hear(c) != 'e')
		return ue_child_fail(8, "no word from the parent");

	if (x->exec) {
		static char * const argv[] = { "enable_test", NULL };
		static char * const envp[] = { EXEC_ENV "=1", NULL };

		if (dup2(c->in, 0) != 0)
			return ue_child_fail(6, "dup2");
		execve("/proc/self/exe", argv, envp);
		return ue_child_fail(7, "execve");
	}

	/* r enabled by the parent, in the child's memory */
	if (!ue_wait_bit(&x->word[2], 4, 0, true) || x->word[0] || x->word[1])
		return ue_child_fail(9, "bits with r enabled");
	if (!ue_child_say(c, 'E') || ue_child_hear(c) != 'x')
		return ue_child_fail(10, "no word from the parent");

	return 0;
}

/* Make p and start drop_child() with @x: its enable bits hold p and a */
static void drop_start(struct __test_metadata *_metadata, struct ue_child *c,
		       struct drop_ctx *x)
{
	ASSERT_EQ(0, ue_dyn("u:" PREFIX "drop_p u32 v"));
	ASSERT_EQ(0, ue_child_start(c, drop_child, x));
	ASSERT_EQ('r', ue_parent_hear(c));
	ASSERT_EQ(EBUSY, ue_del(PREFIX "drop_p"));
	ASSERT_EQ(EBUSY, ue_del(PREFIX "drop_a"));
}

TEST_F_TIMEOUT(en, exit_drops, LONG_TIMEOUT)
{
	struct drop_ctx x = { .word = (__u32 *)self->page };
	const char *r = PREFIX "drop_r";
	struct ue_child c;

	/* The child's enable bits hold all three */
	drop_start(_metadata, &c, &x);
	ASSERT_EQ(EBUSY, ue_del(r));

	/* r gets recorded in the trace buffer */
	ASSERT_EQ(0, ue_enable(NULL, r, true));
	ASSERT_TRUE(ue_parent_say(&c, 'e'));
	ASSERT_EQ('E', ue_parent_hear(&c));
	ASSERT_EQ(0, ue_enable(NULL, r, false));
	ASSERT_TRUE(ue_parent_say(&c, 'x'));
	ASSERT_EQ(0, ue_child_finish(&c));

	/*
	 * Its exit dropped them: p can be deleted, a went by itself, and so
	 * did r, enabled once though it was
	 */
	ASSERT_EQ(0, en_del_when_free(PREFIX "drop_p"));
	ASSERT_TRUE(en_wait_gone(PREFIX "drop_a"));
	ASSERT_TRUE(en_wait_gone(r));
	ASSERT_EQ(ENOENT, ue_del(r));
}

TEST_F_TIMEOUT(en, exec_drops, LONG_TIMEOUT)
{
	struct drop_ctx x = { .word = (__u32 *)self->page, .exec = true };
	struct ue_child c;

	drop_start(_metadata, &c, &x);
	ASSERT_TRUE(ue_parent_say(&c, 'e'));

	/* EOF: the exec closed the pipe, the old address space is gone */
	ASSERT_EQ(-1, ue_parent_hear(&c));
	ASSERT_EQ(0, en_del_when_free(PREFIX "drop_p"));
	ASSERT_TRUE(en_wait_gone(PREFIX "drop_a"));

	/* While the new image still runs */
	ASSERT_EQ(0, waitpid(c.pid, NULL, WNOHANG));
	ASSERT_EQ(0, ue_child_finish(&c));
}

/*
 * A child registers on its view of a shared page, drops the page from its
 * page table and exits when told: the parent attaches perf meanwhile, so
 * the kernel may be faulting the page in while the child's address space
 * goes away.
 */
static int exit_faulting_child(struct ue_child *c, void *arg)
{
	__u32 *word = arg;
	int fd = ue_open_data();

	if (fd == -1)
		return ue_child_fail(1, "open user_events_data");
	if (en_reg(fd, PREFIX "fexit u32 v", word, 4, 0, 0, NULL))
		return ue_child_fail(2, "register");
	close(fd);
	if (madvise(word, UE_PAGE_SIZE, MADV_DONTNEED))
		return ue_child_fail(3, "madvise");
	if (!ue_child_say(c, 'r') || ue_child_hear(c) != 'x')
		return ue_child_fail(4, "no word from the parent");

	return 0;
}

TEST_F_TIMEOUT(en, vfork_exec_keeps, LONG_TIMEOUT)
{
	static char * const argv[] = { "enable_test", NULL };
	static char * const envp[] = { EXEC_ENV "=1", NULL };
	const char *name = PREFIX "vfork";
	__u32 *word = (__u32 *)self->page;
	int in[2], status;
	pid_t pid;

	ASSERT_EQ(0, en_reg(self->fd, PREFIX "vfork u32 v", word, 4, 0, 0,
			    NULL));
	ASSERT_EQ(0, pipe2(in, O_CLOEXEC));

	/*
	 * The child's exec leaves the address space it shared: that is
	 * not the end of it, nor of its registrations
	 */
	pid = vfork();
	if (pid == 0) {
		if (dup2(in[0], 0) == 0)
			execve("/proc/self/exe", argv, envp);
		_exit(1);
	}
	close(in[0]);
	ASSERT_NE(-1, pid);
	EN_SWITCH(NULL, name, true, word, 1);
	ASSERT_EQ(EBUSY, ue_del(name));
	EN_SWITCH(NULL, name, false, word, 0);
	ASSERT_EQ(0, waitpid(pid, NULL, WNOHANG));
	close(in[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, en_unreg(self->fd, word, 0));
}

/*
 * A page of a new memfd @name, mapped shared: it stays in the page cache
 * when it leaves the page table.  MAP_FAILED on error; *@mfd gets the fd.
 */
static __u32 *en_shared_page(const char *name, int *mfd)
{
	*mfd = memfd_create(name, MFD_CLOEXEC);
	if (*mfd == -1 || ftruncate(*mfd, UE_PAGE_SIZE))
		return MAP_FAILED;

	return mmap(NULL, UE_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		    *mfd, 0);
}

TEST_F_TIMEOUT(en, exit_while_faulting_in, LONG_TIMEOUT)
{
	const char *name = PREFIX "fexit";
	struct ue_child c;
	__u32 *word;
	int i, mfd, perf_fd;

	word = en_shared_page("ue_en_fexit", &mfd);
	ASSERT_NE(MAP_FAILED, word);

	for (i = 0; i < 5; i++) {
		*word = 0;
		ASSERT_EQ(0, ue_child_start(&c, exit_faulting_child, word));
		ASSERT_EQ('r', ue_parent_hear(&c));
		perf_fd = ue_perf_open(ue_event_id(name), 0, -1);
		ASSERT_NE(-1, perf_fd);
		/* Sooner or later after the attach */
		if (i & 1)
			usleep(i * 1000);
		ASSERT_TRUE(ue_parent_say(&c, 'x'));
		ASSERT_EQ(0, ue_child_finish(&c));
		close(perf_fd);
		/* Automatic, and only perf traced it: gone with the child */
		ASSERT_TRUE(en_wait_gone(name));
	}
	munmap(word, UE_PAGE_SIZE);
	close(mfd);
}

TEST_F_TIMEOUT(en, page_not_present, LONG_TIMEOUT)
{
	const char *name = PREFIX "absent";
	__u32 *word;
	int mfd;

	/* A shared page stays in the page cache, out of the page table */
	word = en_shared_page("ue_en_absent", &mfd);
	ASSERT_NE(MAP_FAILED, word);
	*word = 0xf0f0f0f0;
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "absent u32 v", word, 4, 0, 0,
			    NULL));

	ASSERT_EQ(0, madvise(word, UE_PAGE_SIZE, MADV_DONTNEED));
	ASSERT_NE(1, en_pagemap_bit(word, PM_PRESENT));
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	ASSERT_TRUE(ue_wait_bit(word, 4, 0, true));
	ASSERT_EQ(0xf0f0f0f1, *word);

	ASSERT_EQ(0, madvise(word, UE_PAGE_SIZE, MADV_DONTNEED));
	ASSERT_NE(1, en_pagemap_bit(word, PM_PRESENT));
	ASSERT_EQ(0, ue_enable(NULL, name, false));
	ASSERT_TRUE(ue_wait_bit(word, 4, 0, false));
	ASSERT_EQ(0xf0f0f0f0, *word);

	/*
	 * The registering or unregistering task faults the page in itself:
	 * the bit is written when the ioctl returns
	 */
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	ASSERT_TRUE(ue_wait_bit(word, 4, 0, true));
	ASSERT_EQ(0, madvise(word, UE_PAGE_SIZE, MADV_DONTNEED));
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "absent u32 v", word, 4, 1, 0,
			    NULL));
	ASSERT_EQ(0xf0f0f0f3, *word);
	ASSERT_EQ(0, madvise(word, UE_PAGE_SIZE, MADV_DONTNEED));
	ASSERT_EQ(0, en_unreg(self->fd, word, 0));
	ASSERT_EQ(0xf0f0f0f2, *word);
	ASSERT_EQ(0, madvise(word, UE_PAGE_SIZE, MADV_DONTNEED));
	ASSERT_EQ(0, en_unreg(self->fd, word, 1));
	ASSERT_EQ(0xf0f0f0f0, *word);
	ASSERT_EQ(0, ue_enable(NULL, name, false));

	munmap(word, UE_PAGE_SIZE);
	close(mfd);
}

/*
 * A page under userfaultfd: the worker of the address space faults it in
 * like the program would, retriable, and the program's handler (a thread
 * of its own) serves the fault: the bit is written in the page it served.
 */
struct uffd_server {
	int uffd;
	bool stop;
	int served;
	char page[UE_PAGE_MAX];
};

static void *uffd_serve(void *arg)
{
	struct uffd_server *srv = arg;
	unsigned long fault;

	while (!__atomic_load_n(&srv->stop, __ATOMIC_ACQUIRE)) {
		fault = ue_uffd_next_fault(srv->uffd, 100);
		if (fault && !ue_uffd_copy(srv->uffd, (void *)fault, srv->page))
			__atomic_add_fetch(&srv->served, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* Wait until @srv served more than @n faults */
static bool uffd_served(struct uffd_server *srv, int n)
{
	long long end = ue_now_ms() + UE_WAIT_MS;

	while (__atomic_load_n(&srv->served, __ATOMIC_ACQUIRE) <= n) {
		if (ue_now_ms() > end)
			return false;
		usleep(1000);
	}
	return true;
}

TEST_F_TIMEOUT(en, page_under_userfaultfd, LONG_TIMEOUT)
{
	const char *name = PREFIX "uffd";
	static struct uffd_server srv;
	pthread_t thread;
	int served, on;
	__u32 *word;

	srv.uffd = ue_uffd_open();
	if (srv.uffd == -1)
		SKIP(return, "no userfaultfd: %s", strerror(errno));
	*(__u32 *)srv.page = 0xf0f0f0f0;
	word = mmap(NULL, UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, word);
	ASSERT_EQ(0, ue_uffd_register(srv.uffd, word, UE_PAGE_SIZE));
	ASSERT_EQ(0, pthread_create(&thread, NULL, uffd_serve, &srv));

	/*
	 * The registration faults the page in: the handler serves it.  The
	 * fault may end before the handler counts it: wait for the count.
	 */
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "uffd u32 v", word, 4, 0, 0,
			    NULL));
	ASSERT_TRUE(uffd_served(&srv, 0));
	ASSERT_EQ(1, __atomic_load_n(&srv.served, __ATOMIC_ACQUIRE));
	ASSERT_EQ(0xf0f0f0f0, *word);

	/* The page dropped, the worker faults it in when the event changes */
	for (on = 1; on >= 0; on--) {
		served = srv.served;
		ASSERT_EQ(0, madvise(word, UE_PAGE_SIZE, MADV_DONTNEED));
		ASSERT_EQ(0, ue_enable(NULL, name, on));
		ASSERT_TRUE(uffd_served(&srv, served));
		ASSERT_TRUE(ue_wait_bit(word, 4, 0, on));
		ASSERT_EQ(0xf0f0f0f0 | on, *word);
	}

	ASSERT_EQ(0, en_unreg(self->fd, word, 0));
	__atomic_store_n(&srv.stop, true, __ATOMIC_RELEASE);
	pthread_join(thread, NULL);
	munmap(word, UE_PAGE_SIZE);
	close(srv.uffd);
}

/*
 * A page under userfaultfd that its handler never serves holds up no other
 * process: a child's bit is on such a page, dropped, when its event is
 * enabled; meanwhile this process's bit of another event follows every
 * change of that event, and enabling stays prompt.  The child's fault
 * ends with it.
 */
static int stuck_child(struct ue_child *c, void *arg)
{
	__u32 *word;
	int uffd, fd;

	uffd = ue_uffd_open();
	if (uffd == -1)
		return ue_child_fail(1, "userfaultfd");
	word = mmap(NULL, UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (word == MAP_FAILED)
		return ue_child_fail(2, "mmap");
	/* Present for the registration, then missing: nobody serves it */
	*word = 0;
	if (ue_uffd_register(uffd, word, UE_PAGE_SIZE))
		return ue_child_fail(3, "UFFDIO_REGISTER");
	fd = ue_open_data();
	if (fd == -1 || en_reg(fd, PREFIX "stuck u32 v", word, 4, 0, 0, NULL))
		return ue_child_fail(4, "register");
	if (madvise(word, UE_PAGE_SIZE, MADV_DONTNEED))
		return ue_child_fail(5, "madvise");
	if (!ue_child_say(c, 'r'))
		return ue_child_fail(6, "tell the parent");
	/* Until killed */
	for (;;)
		pause();
	return 0;
}

/*
 * The slowest of ten switches of event @name on and off, with its bit in
 * the 4-byte @word checked each time; -1 on an error
 */
static long long en_slowest_switch(const char *name, __u32 *word)
{
	long long t0, ms, slowest = 0;
	int i;

	for (i = 0; i < 10; i++) {
		t0 = ue_now_ms();
		if (ue_enable(NULL, name, true) || *word != 1 ||
		    ue_enable(NULL, name, false) || *word != 0)
			return -1;
		ms = ue_now_ms() - t0;
		if (ms > slowest)
			slowest = ms;
	}
	return slowest;
}

TEST_F_TIMEOUT(en, page_never_served, LONG_TIMEOUT)
{
	const char *stuck = PREFIX "stuck", *other = PREFIX "other";
	__u32 *word = (__u32 *)self->page;
	long long slowest, idle, bound;
	struct ue_child c;

	ASSERT_EQ(0, en_reg(self->fd, PREFIX "other u32 v", word, 4, 0, 0,
			    NULL));
	ASSERT_EQ(0, ue_child_start(&c, stuck_child, NULL));
	ASSERT_EQ('r', ue_parent_hear(&c));
	en_own_page(word);

	/*
	 * The other event's switches before anything is stuck: what this
	 * machine and kernel take.  One that waited for the stuck fault
	 * would take until the child is killed below; one that did not
	 * stays within a few times its idle time.  The floor keeps a fast
	 * machine's few milliseconds from making a late vCPU a failure.
	 */
	idle = en_slowest_switch(other, word);
	ASSERT_LE(0, idle);
	bound = ue_debug_kernel() ? 20000 : 2000;
	if (bound < 20 * idle)
		bound = 20 * idle;

	/* The child's worker waits for its fault from now on */
	ASSERT_EQ(0, ue_enable(NULL, stuck, true));

	slowest = en_slowest_switch(other, word);
	ue_msg("slowest enable and disable: %lld ms, idle %lld ms\n",
	       slowest, idle);
	ASSERT_LE(0, slowest);
	EXPECT_GT(bound, slowest);
	ASSERT_EQ(0, ue_enable(NULL, stuck, false));

	/* The child killed, its fault ends, and its event goes */
	ASSERT_EQ(0, kill(c.pid, SIGKILL));
	ue_child_finish(&c);
	ASSERT_TRUE(en_wait_gone(stuck));
	ASSERT_EQ(0, en_unreg(self->fd, word, 0));
}

/*
 * A process whose mmap_lock is held for seconds holds up nothing but its
 * own bits.  mprotect() of a large region of mapped zero pages holds the
 * lock for writing while it changes every entry: the child grows such a
 * region until one mprotect() takes HELD_MS (or growing it more would
 * take too long), then holds the lock with one
 * while the parent enables the child's event (which returns at once, the
 * child's bit waiting for its worker) and switches another event on and
 * off, whose bit follows every change promptly.  The child's bit is set
 * once the lock is free.  The debug kernel maps zero pages at 25 MiB/s
 * under emulation and cannot hold the lock long enough to tell a wait from
 * its own slowness (the timing checks skip): it starts from 128 MiB and
 * grows for a sixth of the time, to check the mechanics only.
 */
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#endif

#define HELD_MS			1500
/* Page tables of 64 GiB of zero pages, 128 MiB; 1 GiB for a 32-bit program */
#define HELD_MAX_LEN		((size_t)1 << (sizeof(long) == 8 ? 36 : 30))
/* Mapping zero pages costs more than changing them: stop in time */
#define HELD_BUDGET_MS		60000

/* mprotect() of [@p, @p + @len) to @prot: how long it took, or -1 */
static long long held_mprotect(char *p, size_t len, int prot)
{
	long long t0 = ue_now_ms();

	if (mprotect(p, len, prot))
		return -1;
	return ue_now_ms() - t0;
}

static int held_child(struct ue_child *c, void *arg)
{
	size_t len = ue_debug_kernel() ? 1UL << 27 : 1UL << 30, done = 0;
	long long ms = 0, t0 = ue_now_ms();
	__u32 *word;
	char *region;
	int fd;

	word = mmap(NULL, UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fd = ue_open_data();
	if (word == MAP_FAILED || fd == -1 ||
	    en_reg(fd, PREFIX "held u32 v", word, 4, 0, 0, NULL))
		return ue_child_fail(1, "register");
	region = mmap(NULL, HELD_MAX_LEN, PROT_READ,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (region == MAP_FAILED)
		return ue_child_fail(2, "mmap");
	/*
	 * Double the zero pages mapped until one mprotect() is slow enough,
	 * or the next doubling would cost more than the budget has left
	 */
	for (; len <= HELD_MAX_LEN && ms < HELD_MS; len *= 2) {
		if (done && 2 * (ue_now_ms() - t0) >
			    ue_scaled(HELD_BUDGET_MS, 6))
			break;
		if (madvise(region + done, len - done, MADV_POPULATE_READ))
			return ue_child_fail(3, "MADV_POPULATE_READ");
		done = len;
		ms = held_mprotect(region, len, PROT_NONE);
		if (ms == -1 || held_mprotect(region, len, PROT_READ) == -1)
			return ue_child_fail(4, "mprotect");
	}
	fprintf(stderr, "# %zu MiB of zero pages, mapped and measured in %lld ms\n",
		done >> 20, ue_now_ms() - t0);
	if (!ue_child_say(c, 'r') || ue_child_hear(c) != 'g')
		return ue_child_fail(5, "talk to the parent");
	ms = held_mprotect(region, done, PROT_NONE);
	if (write(c->out, &ms, sizeof(ms)) != sizeof(ms))
		return ue_child_fail(6, "tell the parent");
	if (!ue_wait_bit(word, 4, 0, true))
		return ue_child_fail(7, "the bit was not set after the lock was free");
	return 0;
}

TEST_F_TIMEOUT(en, mmap_lock_held, LONG_TIMEOUT)
{
	const char *held = PREFIX "held", *other = PREFIX "other";
	long long t0, enable_ms, idle = 0, slowest = 0, held_ms = -1;
	__u32 *word = (__u32 *)self->page;
	struct pollfd pfd;
	struct ue_child c;
	int i, rounds = 0;

	ASSERT_EQ(0, en_reg(self->fd, PREFIX "other u32 v", word, 4, 0, 0,
			    NULL));
	ASSERT_EQ(0, ue_child_start(&c, held_child, NULL));
	ASSERT_EQ('r', ue_parent_hear(&c));
	en_own_page(word);
	/* For the log: switching the other event while nothing holds a lock */
	for (i = 0; i < 3; i++) {
		t0 = ue_now_ms();
		EN_SWITCH(NULL, other, true, word, 1);
		EN_SWITCH(NULL, other, false, word, 0);
		if (ue_now_ms() - t0 > idle)
			idle = ue_now_ms() - t0;
	}
	ASSERT_TRUE(ue_parent_say(&c, 'g'));
	/* The child's mprotect() under way */
	usleep(100 * 1000);

	t0 = ue_now_ms();
	ASSERT_EQ(0, ue_enable(NULL, held, true));
	enable_ms = ue_now_ms() - t0;

	pfd.fd = c.from_child;
	pfd.events = POLLIN;
	while (poll(&pfd, 1, 0) == 0) {
		t0 = ue_now_ms();
		EN_SWITCH(NULL, other, true, word, 1);
		EN_SWITCH(NULL, other, false, word, 0);
		if (ue_now_ms() - t0 > slowest)
			slowest = ue_now_ms() - t0;
		rounds++;
	}
	ASSERT_EQ(sizeof(held_ms), read(c.from_child, &held_ms,
					sizeof(held_ms)));
	ue_msg("mmap_lock held %lld ms: enabling its event took %lld ms\n",
	       held_ms, enable_ms);
	ue_msg("%d rounds of another event meanwhile, the slowest %lld ms (idle: %lld ms)\n",
	       rounds, slowest, idle);
	ASSERT_EQ(0, ue_child_finish(&c));
	ASSERT_EQ(0, ue_enable(NULL, held, false));
	ASSERT_EQ(0, en_unreg(self->fd, word, 0));

	if (held_ms < HELD_MS / 4)
		SKIP(return, "the zero pages held mmap_lock %lld ms only",
		     held_ms);
	/*
	 * Waiting for the lock cannot be told from an ordinary enable that
	 * takes as long (the debug kernel on a busy host)
	 */
	if (held_ms / 4 <= 2 * idle)
		SKIP(return, "mmap_lock held %lld ms, an idle switch takes %lld ms",
		     held_ms, idle);
	/*
	 * Enabling waits for a grace period (tp_rcu_cond_sync()), which the
	 * mprotect() may hold up a tenth of a second where RCU cannot preempt
	 */
	EXPECT_GT(held_ms / 4 + 100, enable_ms);
	EXPECT_GT(held_ms / 2, slowest);
	EXPECT_LT(0, rounds);
}

/*
 * A fork whose copy of an enable bit's registration fails (an allocation
 * made to fail with fail-nth and failslab) leaves the child fewer
 * registrations, never a bit set that nothing maintains: every bit the
 * child finds set, it can unregister.  Each fork fails the n-th
 * allocation of the forking task, for every n until one fork makes fewer
 * than n; some of them must fail a copy and succeed.  The debug kernel,
 * whose forks make about 220 allocations and take a third of a second
 * each under emulation, tries every third n: the copies of the FORK_BITS
 * registrations are consecutive allocations, so some still fail.
 */
#define FORK_BITS		8
#define FAULT_DIR		"/sys/kernel/debug/"
/* The kinds of fault that fail-nth makes, those the kernel has */
static const char *const fault_dirs[] = {
	"failslab", "fail_page_alloc", "fail_usercopy",
};

/* Write @text to attribute @attr of fault @dir; @old gets its value */
static int fault_attr_set(const char *dir, const char *attr, const char *text,
			  char *old, size_t len)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), FAULT_DIR "%s/%s", dir, attr);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd == -1)
		return errno;
	n = read(fd, old, len - 1);
	old[n > 0 ? n : 0] = '\0';
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : EIO;
}

TEST_F_TIMEOUT(en, fork_copy_fails, LONG_TIMEOUT)
{
	const char *name = PREFIX "forkfail";
	int bit, i, n, status, nth_fd, fewer = 0, failed = 0, whole = 0;
	char wait_old[16], verbose_old[3][16], path[64], text[16];
	bool verbose_set[3];
	ssize_t len;
	__u32 *word;
	int left;
	pid_t pid;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/fail-nth",
		 (long)syscall(SYS_gettid));
	nth_fd = open(path, O_RDWR | O_CLOEXEC);
	if (nth_fd == -1)
		SKIP(return, "no fail-nth (CONFIG_FAULT_INJECTION)");
	if (fault_attr_set("failslab", "ignore-gfp-wait", "N", wait_old,
			   sizeof(wait_old))) {
		close(nth_fd);
		SKIP(return, "no failslab (CONFIG_FAILSLAB, debugfs)");
	}
	/*
	 * An injected failure is no incident: keep it out of the log, of
	 * every kind (fail-nth fails pages and copies too, if it can)
	 */
	for (i = 0; i < 3; i++)
		verbose_set[i] = !fault_attr_set(fault_dirs[i], "verbose", "0",
						 verbose_old[i],
						 sizeof(verbose_old[i]));
	ASSERT_TRUE(verbose_set[0]);

	word = mmap(NULL, UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, word);
	for (bit = 0; bit < FORK_BITS; bit++)
		ASSERT_EQ(0, en_reg(self->fd, PREFIX "forkfail u32 v", word, 4,
				    bit, 0, NULL));
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	ASSERT_EQ((1u << FORK_BITS) - 1, *word);

	for (n = 1; n < 10000; n += ue_debug_kernel() ? 3 : 1) {
		snprintf(text, sizeof(text), "%d", n);
		ASSERT_EQ((ssize_t)strlen(text), pwrite(nth_fd, text,
							strlen(text), 0));
		pid = fork();
		if (pid == 0)
			_exit(ue_unreg_copied_bits(word, self->fd, FORK_BITS));
		/*
		 * What is left of the count: the fork made fewer than n.  A
		 * read that fails took the last one: its copy to user memory
		 * is a fault site too (fail_usercopy), as is the write's, and
		 * the count is 0 after the write whether it fails or not.
		 */
		len = pread(nth_fd, text, sizeof(text) - 1, 0);
		text[len > 0 ? len : 0] = '\0';
		left = len > 0 ? atoi(text) : 1;
		if (pwrite(nth_fd, "0", 1, 0) != 1)
			ASSERT_EQ(EFAULT, errno);
		if (pid == -1) {
			failed++;
			continue;
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		ASSERT_GE(FORK_BITS, WEXITSTATUS(status)) {
			TH_LOG("fail-nth %d: child's bit %d set, unregistered",
			       n, WEXITSTATUS(status) - 100);
		}
		if (WEXITSTATUS(status) < FORK_BITS)
			fewer++;
		else
			whole++;
		if (left)
			break;
	}
	ue_msg("%d forks: %d failed, %d lost registrations, %d kept all\n",
	       n, failed, fewer, whole);
	for (i = 0; i < 3; i++) {
		if (verbose_set[i])
			ASSERT_EQ(0, fault_attr_set(fault_dirs[i], "verbose",
						    verbose_old[i], text,
						    sizeof(text)));
	}
	ASSERT_EQ(0, fault_attr_set("failslab", "ignore-gfp-wait", wait_old,
				    text, sizeof(text)));
	close(nth_fd);
	EXPECT_LT(0, fewer);
	EXPECT_LT(0, whole);

	for (bit = 0; bit < FORK_BITS; bit++)
		ASSERT_EQ(0, en_unreg(self->fd, word, bit));
	ASSERT_EQ(0, ue_enable(NULL, name, false));
	munmap(word, UE_PAGE_SIZE);
}

TEST_F_TIMEOUT(en, page_untouched, LONG_TIMEOUT)
{
	const char *name = PREFIX "fresh";
	/* Its top bit: of 8 bytes, of 4 on a 32-bit kernel */
	int wide = ue_kernel_64bit() ? 8 : 4;
	__u64 *fresh;

	fresh = mmap(NULL, 2 * UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, fresh);
	ASSERT_NE(1, en_pagemap_bit(fresh, PM_PRESENT));

	/* Registered on a page never touched, while enabled: set at once */
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "fresh u32 v", self->page, 4, 0,
			    0, NULL));
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "fresh u32 v", fresh, wide,
			    wide * 8 - 1, 0, NULL));
	ASSERT_EQ(1ULL << (wide * 8 - 1), ue_load(fresh, wide));
	EN_SWITCH(NULL, name, false, fresh, 0);

	/*
	 * Gone from the page table again: the next write of the bit faults
	 * a new zero page in
	 */
	ASSERT_EQ(0, madvise(fresh, UE_PAGE_SIZE, MADV_DONTNEED));
	ASSERT_NE(1, en_pagemap_bit(fresh, PM_PRESENT));
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	ASSERT_TRUE(ue_wait_bit(fresh, wide, wide * 8 - 1, true));
	ASSERT_EQ(1ULL << (wide * 8 - 1), ue_load(fresh, wide));
	EN_SWITCH(NULL, name, false, fresh, 0);

	/* And the second page, registered never touched while disabled */
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "fresh u32 v",
			    fresh + UE_PAGE_SIZE / 8, 4, 3, 0, NULL));
	ASSERT_EQ(0, madvise(fresh + UE_PAGE_SIZE / 8, UE_PAGE_SIZE,
			     MADV_DONTNEED));
	ASSERT_NE(1, en_pagemap_bit(fresh + UE_PAGE_SIZE / 8, PM_PRESENT));
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	ASSERT_TRUE(ue_wait_bit(fresh + UE_PAGE_SIZE / 8, 4, 3, true));
	ASSERT_EQ(0, ue_enable(NULL, name, false));
	ASSERT_TRUE(ue_wait_bit(fresh + UE_PAGE_SIZE / 8, 4, 3, false));

	ASSERT_EQ(0, en_unreg(self->fd, fresh, wide * 8 - 1));
	ASSERT_EQ(0, en_unreg(self->fd, fresh + UE_PAGE_SIZE / 8, 3));
	munmap(fresh, 2 * UE_PAGE_SIZE);
}

TEST_F(en, page_unmapped)
{
	const char *name = PREFIX "gone";
	__u32 *word, *again;
	int fd2;

	word = mmap(NULL, UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, word);
	*word = 0;

	/* Only the registration holds the event */
	ASSERT_EQ(0, ue_dyn("u:" PREFIX "gone u32 v"));
	fd2 = ue_open_data();
	ASSERT_NE(-1, fd2);
	ASSERT_EQ(0, en_reg(fd2, PREFIX "gone u32 v", word, 4, 4, 0, NULL));
	close(fd2);
	ASSERT_EQ(0, munmap(word, UE_PAGE_SIZE));

	/* Nothing to write to: nothing happens, the registration stays */
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	ASSERT_EQ(0, ue_enable(NULL, name, false));
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	ASSERT_EQ(EBUSY, ue_del(name));

	/* Memory there again: written at the next change */
	again = mmap(word, UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ASSERT_EQ(word, again);
	*again = 0x100;
	EN_SWITCH(NULL, name, false, again, 0x100);
	EN_SWITCH(NULL, name, true, again, 0x110);
	ASSERT_EQ(0, munmap(again, UE_PAGE_SIZE));

	/* Unregistering with nothing mapped works, and frees the event */
	ASSERT_EQ(0, en_unreg(self->fd, word, 4));
	ASSERT_EQ(ENOENT, en_unreg(self->fd, word, 4));
	ASSERT_EQ(EBUSY, ue_del(name));
	ASSERT_EQ(0, ue_enable(NULL, name, false));
	ASSERT_EQ(0, ue_del(name));
}

TEST_F(en, page_read_only)
{
	const char *name = PREFIX "ro";
	__u32 *word;

	word = mmap(NULL, UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, word);
	*word = 0x40;
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "ro u32 v", word, 4, 1, 0, NULL));

	/* Read-only: the bit is not set, and nothing else happens */
	ASSERT_EQ(0, mprotect(word, UE_PAGE_SIZE, PROT_READ));
	EN_SWITCH(NULL, name, true, word, 0x40);
	usleep(200 * 1000);
	ASSERT_EQ(0x40, *word);

	/* Writable again (and written): the next change writes it */
	ASSERT_EQ(0, mprotect(word, UE_PAGE_SIZE, PROT_READ | PROT_WRITE));
	*word = 0x40;
	EN_SWITCH(NULL, name, false, word, 0x40);
	EN_SWITCH(NULL, name, true, word, 0x42);

	/* Read-only while set: it stays set */
	ASSERT_EQ(0, mprotect(word, UE_PAGE_SIZE, PROT_READ));
	EN_SWITCH(NULL, name, false, word, 0x42);
	ASSERT_EQ(0, mprotect(word, UE_PAGE_SIZE, PROT_READ | PROT_WRITE));
	*word = 0x42;
	EN_SWITCH(NULL, name, true, word, 0x42);
	EN_SWITCH(NULL, name, false, word, 0x40);

	/* Unregistering a read-only value works; it cannot be cleared */
	EN_SWITCH(NULL, name, true, word, 0x42);
	ASSERT_EQ(0, mprotect(word, UE_PAGE_SIZE, PROT_READ));
	ASSERT_EQ(0, en_unreg(self->fd, word, 1));
	ASSERT_EQ(ENOENT, en_unreg(self->fd, word, 1));
	ASSERT_EQ(0x42, *word);
	ASSERT_EQ(0, ue_enable(NULL, name, false));
	munmap(word, UE_PAGE_SIZE);
}

/*
 * An address space registers at most 65536 enable bits: the next one gets
 * ENOSPC, and its registrations cost the same however many it has (the
 * 65536th takes as long as the first ones, within a factor of 10).  Not
 * in a debug kernel, where 65536 registrations take an hour.
 */
#define MM_ENABLERS_MAX	65536

TEST_F_TIMEOUT(en, enablers_per_address_space, LONG_TIMEOUT)
{
	/* 32 bits of each word, and one word more */
	size_t len = (MM_ENABLERS_MAX / 32 + 1) * sizeof(__u32);
	long long t0 = 0, first_ms = 0, last_ms;
	__u32 *words;
	int i;

	if (ue_debug_kernel())
		SKIP(return, "65536 registrations: too slow in a debug kernel");
	words = mmap(NULL, len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, words);

	for (i = 0; i < MM_ENABLERS_MAX; i++) {
		if (i == 0 || i == MM_ENABLERS_MAX - 1024)
			t0 = ue_now_ms();
		ASSERT_EQ(0, ue_reg_bit(self->fd, PREFIX "many u32 v",
					&words[i / 32], 4, i % 32, 0, NULL)) {
			TH_LOG("bit %d", i);
		}
		if (i == 1023)
			first_ms = ue_now_ms() - t0;
	}
	last_ms = ue_now_ms() - t0;
	ue_msg("1024 registrations: %lld ms for the first, %lld ms for the last\n",
	       first_ms, last_ms);
	EXPECT_GT(10 * first_ms + 100, last_ms);

	/* One more: ENOSPC, whatever the word and the event */
	ASSERT_EQ(ENOSPC, ue_reg_bit(self->fd, PREFIX "many u32 v",
				     &words[MM_ENABLERS_MAX / 32], 4, 0, 0,
				     NULL));
	ASSERT_EQ(ENOSPC, ue_reg_bit(self->fd, PREFIX "more u32 v",
				     &words[MM_ENABLERS_MAX / 32], 4, 0, 0,
				     NULL));
	ASSERT_FALSE(ue_event_exists(PREFIX "more"));

	/* Unregistered, all of them; room again */
	for (i = 0; i < MM_ENABLERS_MAX; i++)
		ASSERT_EQ(0, ue_unreg_bit(self->fd, &words[i / 32], i % 32));
	ASSERT_EQ(0, ue_reg_bit(self->fd, PREFIX "many u32 v",
				&words[MM_ENABLERS_MAX / 32], 4, 0, 0, NULL));
	ASSERT_EQ(0, ue_unreg_bit(self->fd, &words[MM_ENABLERS_MAX / 32], 0));
	munmap(words, len);
}

TEST_F(en, both_layouts_one_fd)
{
	const char *name = PREFIX "both";
	__u32 *word = (__u32 *)self->page;
	struct ue_status_reg sreg;
	__u32 idx, v = 31;
	int perf_fd;

	/* The same event, the same slot */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "both u32 v", &sreg));
	ASSERT_EQ(0, sreg.write_index);
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "both u32 v", word, 4, 6, 0,
			    &idx));
	ASSERT_EQ(sreg.write_index, idx);
	ASSERT_EQ(0, self->status[sreg.status_index]);
	ASSERT_EQ(0, *word);

	/* The byte and the bit agree */
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->status[sreg.status_index]);
	ASSERT_EQ(1 << 6, *word);
	perf_fd = ue_perf_open(ue_event_id(name), 0, -1);
	ASSERT_NE(-1, perf_fd);
	ASSERT_EQ(EVENT_STATUS_FTRACE | EVENT_STATUS_PERF,
		  self->status[sreg.status_index]);
	ASSERT_EQ(1 << 6, *word);
	ASSERT_EQ(0, ue_enable(NULL, name, false));
	ASSERT_EQ(EVENT_STATUS_PERF, self->status[sreg.status_index]);
	ASSERT_EQ(1 << 6, *word);
	close(perf_fd);
	ASSERT_EQ(0, self->status[sreg.status_index]);
	ASSERT_EQ(0, *word);

	/* One write path */
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	ASSERT_EQ(8, ue_emit(self->fd, idx, &v, sizeof(v)));
	ASSERT_EQ(0, ue_enable(NULL, name, false));
	UE_ASSERT_TRACE(NULL, name, "v=31\n");
	ASSERT_EQ(-ENOENT, ue_emit(self->fd, idx + 1, &v, sizeof(v)));
	ASSERT_EQ(-EINVAL, ue_emit(self->fd, idx, &v, 2));

	/* Unregistering the bit leaves the status byte working */
	ASSERT_EQ(0, en_unreg(self->fd, word, 6));
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->status[sreg.status_index]);
	ASSERT_EQ(0, *word);
	ASSERT_EQ(0, ue_enable(NULL, name, false));
}

TEST_F(en, status_byte_given_later)
{
	const char *name = PREFIX "later";
	__u32 *word = (__u32 *)self->page;
	struct ue_status_reg sreg;
	int active, busy, max, fd2;
	char *text;

	/* Registered with an enable bit only: no status byte, not listed */
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "later u32 v", word, 4, 0, 0,
			    NULL));
	ASSERT_FALSE(en_listed(name));
	ASSERT_EQ(0, ue_status_counts(&active, &busy, &max));
	ASSERT_EQ(self->active0, active);
	EN_SWITCH(NULL, name, true, word, 1);

	/* A status page program registers it: its byte agrees already */
	fd2 = ue_open_data();
	ASSERT_NE(-1, fd2);
	ASSERT_EQ(0, ue_reg(fd2, PREFIX "later u32 v", &sreg));
	ASSERT_EQ(0, sreg.write_index);
	ASSERT_NE(0, sreg.status_index);
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->status[sreg.status_index]);
	text = ue_read_file("user_events_status");
	ASSERT_NE(NULL, text);
	ASSERT_TRUE(ue_status_has(text, sreg.status_index, name, "ftrace"));
	free(text);
	ASSERT_EQ(0, ue_status_counts(&active, &busy, &max));
	ASSERT_EQ(self->active0 + 1, active);

	ASSERT_EQ(0, ue_enable(NULL, name, false));
	ASSERT_EQ(0, self->status[sreg.status_index]);
	ASSERT_EQ(0, *word);
	close(fd2);
}

/*
 * Writes while nothing is attached.  A slot (write index) of an fd that
 * only enable bit registrations handed out is strict: EBADF, as on Linux
 * 6.4 and later.  Once a status page registration handed it out on that
 * fd, it is lenient: the write succeeds and records nothing, as on 5.18.
 */

/* write() of index @idx and u32 @v in one buffer: its result, or -errno */
static ssize_t en_write_u32(int fd, __u32 idx, __u32 v)
{
	__u32 buf[2] = { idx, v };
	ssize_t ret = write(fd, buf, sizeof(buf));

	return ret == -1 ? -errno : ret;
}

/*
 * write() of index @idx and u32 @v in one buffer, and writev() with the
 * index in an iovec of its own, both give @want
 */
#define EN_ASSERT_WRITES(fd, idx, v, want) do {				\
	ssize_t __want = (want);					\
	int __fd = (fd);						\
	__u32 __idx = (idx), __v = (v);					\
									\
	ASSERT_EQ(__want, en_write_u32(__fd, __idx, __v));		\
	ASSERT_EQ(__want, ue_emit(__fd, __idx, &__v, sizeof(__v)));	\
} while (0)

TEST_F(en, write_strict_slot)
{
	static __u8 big[UE_PAYLOAD_MAX + 1];
	const char *name = PREFIX "strict";
	__u32 *word = (__u32 *)self->page;
	struct iovec io[2];
	__u32 idx, rec[2];

	ASSERT_EQ(0, en_reg(self->fd, PREFIX "strict u32 v", word, 4, 0, 0,
			    &idx));
	ASSERT_EQ(0, idx);

	/* Nothing attached: EBADF, however the write is cut into iovecs */
	EN_ASSERT_WRITES(self->fd, idx, 1, -EBADF);
	rec[0] = idx;
	rec[1] = 1;
	io[0].iov_base = rec;
	io[0].iov_len = sizeof(rec);
	ASSERT_EQ(-1, writev(self->fd, io, 1));
	ASSERT_EQ(EBADF, errno);
	io[0].iov_len = 2;
	io[1].iov_base = (char *)rec + 2;
	io[1].iov_len = sizeof(rec) - 2;
	ASSERT_EQ(-1, writev(self->fd, io, 2));
	ASSERT_EQ(EBADF, errno);
	ASSERT_EQ(-EBADF, ue_emit(self->fd, idx, big, UE_PAYLOAD_MAX));

	/* An unknown index, too few bytes, too many: those errors first */
	ASSERT_EQ(-ENOENT, ue_emit(self->fd, idx + 1, big, 4));
	ASSERT_EQ(-1, write(self->fd, rec, 3));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, write(self->fd, rec, 4));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-EINVAL, ue_emit(self->fd, idx, big, 3));
	ASSERT_EQ(-E2BIG, ue_emit(self->fd, idx, big, sizeof(big)));

	/* Attached in an instance, then at the top level: recorded */
	ASSERT_EQ(0, ue_instance_create(INSTANCE));
	EN_SWITCH(INSTANCE, name, true, word, 1);
	EN_ASSERT_WRITES(self->fd, idx, 2, 8);
	EN_SWITCH(INSTANCE, name, false, word, 0);
	EN_ASSERT_WRITES(self->fd, idx, 3, -EBADF);
	EN_SWITCH(NULL, name, true, word, 1);
	EN_ASSERT_WRITES(self->fd, idx, 4, 8);
	EN_SWITCH(NULL, name, false, word, 0);

	/* Detached: EBADF again */
	EN_ASSERT_WRITES(self->fd, idx, 5, -EBADF);

	UE_ASSERT_TRACE(INSTANCE, name, "v=2\nv=2\n");
	UE_ASSERT_TRACE(NULL, name, "v=4\nv=4\n");
}

TEST_F(en, write_strict_slot_perf)
{
	const char *name = PREFIX "sperf";
	__u32 *word = (__u32 *)self->page;
	struct ue_perf_ring ring;
	__u32 idx, raw[16];
	int id;

	ASSERT_EQ(0, en_reg(self->fd, PREFIX "sperf u32 v", word, 4, 0, 0,
			    &idx));
	EN_ASSERT_WRITES(self->fd, idx, 1, -EBADF);
	id = ue_event_id(name);
	ASSERT_LT(0, id);

	/* perf alone attached: both writes succeed, and are sampled */
	ASSERT_EQ(0, ue_perf_ring_open(&ring, id, 1));
	ASSERT_EQ(1, *word);
	EN_ASSERT_WRITES(self->fd, idx, 0x11223344, 8);
	ASSERT_LE(12, ue_perf_raw_sample(&ring, 0, raw, sizeof(raw)));
	ASSERT_EQ(id, raw_type(raw));
	ASSERT_EQ(0x11223344, raw[2]);
	ASSERT_LE(12, ue_perf_raw_sample(&ring, 1, raw, sizeof(raw)));
	ASSERT_EQ(0x11223344, raw[2]);
	ASSERT_EQ(-1, ue_perf_raw_sample(&ring, 2, raw, sizeof(raw)));
	ue_perf_ring_close(&ring);
	ASSERT_EQ(0, *word);

	/* Detached: EBADF again; ftrace never saw any of it */
	EN_ASSERT_WRITES(self->fd, idx, 2, -EBADF);
	UE_ASSERT_TRACE(NULL, name, "");
}

TEST_F(en, write_lenient_slot)
{
	static __u8 big[UE_PAYLOAD_MAX + 1];
	const char *name = PREFIX "lenient";
	struct ue_status_reg sreg;
	__u32 idx;

	/* A slot of a status page registration */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "lenient u32 v", &sreg));
	idx = sreg.write_index;

	/* Nothing attached: the whole length, nothing recorded */
	EN_ASSERT_WRITES(self->fd, idx, 1, 8);
	ASSERT_EQ(4 + UE_PAYLOAD_MAX,
		  ue_emit(self->fd, idx, big, UE_PAYLOAD_MAX));

	/* The same errors as a strict slot gets */
	ASSERT_EQ(-ENOENT, ue_emit(self->fd, idx + 1, big, 4));
	ASSERT_EQ(-EINVAL, ue_emit(self->fd, idx, big, 3));
	ASSERT_EQ(-E2BIG, ue_emit(self->fd, idx, big, sizeof(big)));

	ASSERT_EQ(0, ue_enable(NULL, name, true));
	EN_ASSERT_WRITES(self->fd, idx, 2, 8);
	ASSERT_EQ(0, ue_enable(NULL, name, false));
	EN_ASSERT_WRITES(self->fd, idx, 3, 8);
	UE_ASSERT_TRACE(NULL, name, "v=2\nv=2\n");
}

TEST_F(en, write_slot_kind_mixed_and_per_fd)
{
	const char *a = PREFIX "mix_a", *b = PREFIX "mix_b";
	const char *c = PREFIX "mix_c";
	__u32 *word = (__u32 *)self->page;
	struct ue_status_reg sreg;
	__u32 ia, ib, ic, idx;
	int fd2;

	/* An enable bit, then the status page: the same slot, now lenient */
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "mix_a u32 v", word, 4, 0, 0,
			    &ia));
	ASSERT_EQ(0, ia);
	EN_ASSERT_WRITES(self->fd, ia, 1, -EBADF);
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "mix_a u32 v", &sreg));
	ASSERT_EQ(ia, sreg.write_index);
	EN_ASSERT_WRITES(self->fd, ia, 2, 8);

	/* The status page, then an enable bit: it stays lenient */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "mix_b u32 v", &sreg));
	ib = sreg.write_index;
	ASSERT_EQ(1, ib);
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "mix_b u32 v", word, 4, 1, 0,
			    &idx));
	ASSERT_EQ(ib, idx);
	EN_ASSERT_WRITES(self->fd, ib, 3, 8);

	/* Per slot: another event by enable bit only is strict on this fd */
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "mix_c u32 v", word, 4, 2, 0,
			    &ic));
	ASSERT_EQ(2, ic);
	EN_ASSERT_WRITES(self->fd, ic, 4, -EBADF);

	/* Per fd: a, by enable bit only on another fd, is strict there */
	fd2 = ue_open_data();
	ASSERT_NE(-1, fd2);
	ASSERT_EQ(0, en_reg(fd2, PREFIX "mix_a u32 v", word, 4, 3, 0, &idx));
	ASSERT_EQ(0, idx);
	EN_ASSERT_WRITES(fd2, idx, 5, -EBADF);
	EN_ASSERT_WRITES(self->fd, ia, 6, 8);

	/* Nothing was recorded; attached, each slot writes */
	ASSERT_EQ(0, ue_enable(NULL, a, true));
	ASSERT_EQ(0, ue_enable(NULL, c, true));
	EN_ASSERT_WRITES(fd2, idx, 7, 8);
	EN_ASSERT_WRITES(self->fd, ia, 8, 8);
	EN_ASSERT_WRITES(self->fd, ic, 9, 8);
	ASSERT_EQ(0, ue_enable(NULL, a, false));
	ASSERT_EQ(0, ue_enable(NULL, c, false));
	EN_ASSERT_WRITES(fd2, idx, 10, -EBADF);
	EN_ASSERT_WRITES(self->fd, ic, 11, -EBADF);
	EN_ASSERT_WRITES(self->fd, ia, 12, 8);
	close(fd2);

	UE_ASSERT_TRACE(NULL, a, "v=7\nv=7\nv=8\nv=8\n");
	UE_ASSERT_TRACE(NULL, b, "");
	UE_ASSERT_TRACE(NULL, c, "v=9\nv=9\n");
}

TEST_HARNESS_MAIN
