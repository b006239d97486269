// SPDX-License-Identifier: GPL-2.0
/*
 * user_events registration: DIAG_IOCSREG indexes and errors, DIAG_IOCSDEL,
 * references held by open files, the limit of one event per status byte
 * (PAGE_SIZE - 1: 4095 with 4 KiB pages), registrations whose answer
 * cannot be stored (they must leave nothing behind), and a registration
 * that waits, killable, for another one of its file that a page fault
 * holds up.
 */
#include "user_events_selftests.h"

#include <stddef.h>
#include <sys/wait.h>

#define PREFIX "ue_reg_"

FIXTURE(reg) {
	int fd;
	int fd2;
	/* kernel.user_events_max to restore, or -1 */
	long max0;
};

FIXTURE_SETUP(reg)
{
	UE_SKIP_IF_UNAVAILABLE();

	/* Leftovers of an interrupted run */
	ue_cleanup_events(PREFIX);

	self->fd = ue_open_data();
	ASSERT_NE(-1, self->fd);
	self->fd2 = -1;
	self->max0 = -1;
}

FIXTURE_TEARDOWN(reg)
{
	if (self->fd != -1)
		close(self->fd);
	if (self->fd2 != -1)
		close(self->fd2);
	ue_cleanup_events(PREFIX);
	if (self->max0 != -1)
		ue_set_max(self->max0);
}

TEST_F(reg, write_indexes)
{
	static const char * const cmds[] = {
		PREFIX "idx_a u32 a",
		PREFIX "idx_b u64 b",
		PREFIX "idx_c",
	};
	struct user_reg reg;
	__u32 status[3];
	int i;

	/* Slots 0, 1, 2 in registration order, distinct non-zero bytes */
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, ue_reg(self->fd, cmds[i], &reg));
		ASSERT_EQ(i, reg.write_index);
		ASSERT_NE(0, reg.status_index);
		ASSERT_LT(reg.status_index, UE_PAGE_SIZE);
		status[i] = reg.status_index;
	}
	ASSERT_NE(status[0], status[1]);
	ASSERT_NE(status[0], status[2]);
	ASSERT_NE(status[1], status[2]);

	/* The same event again on the same fd keeps its slot */
	ASSERT_EQ(0, ue_reg(self->fd, cmds[1], &reg));
	ASSERT_EQ(1, reg.write_index);
	ASSERT_EQ(status[1], reg.status_index);

	/* A new event after that takes the next slot */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "idx_d s8 d", &reg));
	ASSERT_EQ(3, reg.write_index);

	/* Another fd numbers its own slots from 0; the event bytes stay */
	self->fd2 = ue_open_data();
	ASSERT_NE(-1, self->fd2);
	ASSERT_EQ(0, ue_reg(self->fd2, cmds[2], &reg));
	ASSERT_EQ(0, reg.write_index);
	ASSERT_EQ(status[2], reg.status_index);
	ASSERT_EQ(0, ue_reg(self->fd2, cmds[0], &reg));
	ASSERT_EQ(1, reg.write_index);
	ASSERT_EQ(status[0], reg.status_index);
}

TEST_F(reg, same_fields_same_event)
{
	struct user_reg reg;
	__u32 status;
	int active, busy, max, active2;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "same u32 a; char[8] b", &reg));
	status = reg.status_index;
	ASSERT_EQ(0, ue_status_counts(&active, &busy, &max));

	/* Same fields written differently still name the same event */
	self->fd2 = ue_open_data();
	ASSERT_NE(-1, self->fd2);
	ASSERT_EQ(0, ue_reg(self->fd2, PREFIX "same u32 a; char[8] b", &reg));
	ASSERT_EQ(status, reg.status_index);
	ASSERT_EQ(0, reg.write_index);
	ASSERT_EQ(0, ue_reg(self->fd2, PREFIX "same u32 a;char[8] b;", &reg));
	ASSERT_EQ(status, reg.status_index);
	ASSERT_EQ(0, reg.write_index);
	ASSERT_EQ(0, ue_reg(self->fd2, PREFIX "same  u32 a ;  char[8] b", &reg));
	ASSERT_EQ(status, reg.status_index);

	/* And no new event was made */
	ASSERT_EQ(0, ue_status_counts(&active2, &busy, &max));
	ASSERT_EQ(active, active2);
}

TEST_F(reg, different_fields)
{
	struct user_reg reg;
	__u32 status;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "diff u32 a", &reg));
	status = reg.status_index;

	ASSERT_EQ(EADDRINUSE, ue_reg(self->fd, PREFIX "diff u64 a", &reg));
	ASSERT_EQ(EADDRINUSE, ue_reg(self->fd, PREFIX "diff u32 b", &reg));
	ASSERT_EQ(EADDRINUSE, ue_reg(self->fd, PREFIX "diff", &reg));
	ASSERT_EQ(EADDRINUSE, ue_reg(self->fd, PREFIX "diff u32 a; u32 b", &reg));
	ASSERT_EQ(EADDRINUSE, ue_reg(self->fd, PREFIX "diff s32 a", &reg));

	/* The failures changed nothing: the original still registers */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "diff u32 a", &reg));
	ASSERT_EQ(status, reg.status_index);
	ASSERT_EQ(0, reg.write_index);

	/* A field-less event conflicts with one that has fields, too */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "diff_none", &reg));
	ASSERT_EQ(EADDRINUSE, ue_reg(self->fd, PREFIX "diff_none u8 x", &reg));
}

TEST_F(reg, struct_size)
{
	struct {
		struct user_reg reg;
		__u8 tail[16];
	} big;
	const char *name = PREFIX "size u32 a";
	struct user_reg reg;
	__u32 size;

	/*
	 * Exactly 24 bytes is this layout, 28 or more the enable bit layout
	 * (enable_test has this layout with those sizes): every other size
	 * below 28 is EINVAL
	 */
	for (size = 0; size < 28; size++) {
		if (size == sizeof(struct user_reg))
			continue;
		memset(&big, 0, sizeof(big));
		big.reg.size = size;
		big.reg.name_args = (__u64)(uintptr_t)name;
		ASSERT_EQ(-1, ioctl(self->fd, DIAG_IOCSREG, &big));
		ASSERT_EQ(EINVAL, errno);
	}
	ASSERT_FALSE(ue_event_exists(PREFIX "size"));

	/* Exactly this layout: outputs filled in, the first slot used */
	memset(&reg, 0, sizeof(reg));
	reg.size = sizeof(reg);
	reg.name_args = (__u64)(uintptr_t)name;
	reg.write_index = 1234;
	ASSERT_EQ(0, ioctl(self->fd, DIAG_IOCSREG, &reg));
	ASSERT_EQ(0, reg.write_index);
	ASSERT_NE(0, reg.status_index);
	ASSERT_LT(reg.status_index, UE_PAGE_SIZE);
	ASSERT_TRUE(ue_event_exists(PREFIX "size"));
	/* Not packed: 24 bytes, 20 where a __u64 is 4-byte aligned (i386) */
	ASSERT_EQ(UE_U64_OFFSET, offsetof(struct user_reg, name_args));
	ASSERT_EQ(UE_U64_OFFSET + 16, sizeof(reg));
}

TEST_F(reg, bad_pointers)
{
	struct user_reg *edge;
	struct user_reg reg;
	char *pages;

	/* A readable page followed by an inaccessible one */
	pages = mmap(NULL, 2 * UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, pages);
	ASSERT_EQ(0, mprotect(pages + UE_PAGE_SIZE, UE_PAGE_SIZE, PROT_NONE));

	/* The whole struct unreadable */
	ASSERT_EQ(-1, ioctl(self->fd, DIAG_IOCSREG, pages + UE_PAGE_SIZE));
	ASSERT_EQ(EFAULT, errno);

	/* Only its first 8 bytes readable */
	edge = (struct user_reg *)(pages + UE_PAGE_SIZE - 8);
	edge->size = sizeof(*edge);
	ASSERT_EQ(-1, ioctl(self->fd, DIAG_IOCSREG, edge));
	ASSERT_EQ(EFAULT, errno);

	/* name_args NULL or unreadable */
	memset(&reg, 0, sizeof(reg));
	reg.size = sizeof(reg);
	ASSERT_EQ(-1, ioctl(self->fd, DIAG_IOCSREG, &reg));
	ASSERT_EQ(EFAULT, errno);
	reg.name_args = (__u64)(uintptr_t)(pages + UE_PAGE_SIZE);
	ASSERT_EQ(-1, ioctl(self->fd, DIAG_IOCSREG, &reg));
	ASSERT_EQ(EFAULT, errno);

	/* A name running into the inaccessible page */
	memset(pages, 'a', UE_PAGE_SIZE);
	reg.name_args = (__u64)(uintptr_t)(pages + UE_PAGE_SIZE - 10);
	ASSERT_EQ(-1, ioctl(self->fd, DIAG_IOCSREG, &reg));
	ASSERT_EQ(EFAULT, errno);

	/* DIAG_IOCSDEL with an unreadable name */
	ASSERT_EQ(-1, ioctl(self->fd, DIAG_IOCSDEL, pages + UE_PAGE_SIZE));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, ioctl(self->fd, DIAG_IOCSDEL, NULL));
	ASSERT_EQ(EFAULT, errno);

	/* The fd still works afterwards, and got slot 0 */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "ptr u32 a", &reg));
	ASSERT_EQ(0, reg.write_index);

	munmap(pages, 2 * UE_PAGE_SIZE);
}

TEST_F(reg, command_length)
{
	struct user_reg reg;
	char *cmd;
	int len;

	ASSERT_EQ(EINVAL, ue_reg(self->fd, "", &reg));
	ASSERT_EQ(EINVAL, ue_reg(self->fd, " ", &reg));

	/* 4096 bytes without the NUL: too long whatever it says */
	cmd = malloc(4097);
	ASSERT_NE(NULL, cmd);
	memset(cmd, 'a', 4096);
	cmd[4096] = '\0';
	ASSERT_EQ(E2BIG, ue_reg(self->fd, cmd, &reg));

	/* 8000 bytes: likewise */
	free(cmd);
	cmd = malloc(8001);
	ASSERT_NE(NULL, cmd);
	memset(cmd, 'b', 8000);
	cmd[8000] = '\0';
	ASSERT_EQ(E2BIG, ue_reg(self->fd, cmd, &reg));
	free(cmd);

	/*
	 * 4095 bytes is the longest command: pad "NAME u32 a ;" with blanks
	 * before the ';' up to that length, then one byte more.
	 */
	cmd = malloc(4097);
	ASSERT_NE(NULL, cmd);
	len = sprintf(cmd, PREFIX "len4095 u32 a");
	memset(cmd + len, ' ', 4094 - len);
	memcpy(cmd + 4094, ";", 2);
	ASSERT_EQ(4095, strlen(cmd));
	ASSERT_EQ(0, ue_reg(self->fd, cmd, &reg));
	ASSERT_EQ(0, reg.write_index);
	ASSERT_TRUE(ue_event_exists(PREFIX "len4095"));

	memcpy(cmd, PREFIX "len4096 u32 a", len);
	memset(cmd + len, ' ', 4095 - len);
	memcpy(cmd + 4095, ";", 2);
	ASSERT_EQ(4096, strlen(cmd));
	ASSERT_EQ(E2BIG, ue_reg(self->fd, cmd, &reg));
	ASSERT_FALSE(ue_event_exists(PREFIX "len4096"));
	free(cmd);

	/* Nothing else was registered on this fd */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "len u32 a", &reg));
	ASSERT_EQ(1, reg.write_index);
}

/* The same files under the debugfs mount point of tracefs */
TEST_F(reg, debugfs_path)
{
	const char *data = "/sys/kernel/debug/tracing/user_events_data";
	struct user_reg reg, reg2;
	int fd;

	if (access(data, F_OK))
		SKIP(return, "no %s (debugfs not mounted?)", data);

	fd = open(data, O_RDWR | O_CLOEXEC);
	ASSERT_NE(-1, fd);
	ASSERT_EQ(0, ue_reg(fd, PREFIX "dbg u32 a", &reg));
	ASSERT_EQ(0, reg.write_index);
	ASSERT_TRUE(ue_event_exists(PREFIX "dbg"));
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "dbg u32 a", &reg2));
	ASSERT_EQ(reg.status_index, reg2.status_index);
	close(fd);
}

TEST_F(reg, delete)
{
	struct user_reg reg;

	ASSERT_EQ(ENOENT, ue_del(PREFIX "nosuch"));

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "del u32 a", &reg));
	ASSERT_TRUE(ue_event_exists(PREFIX "del"));

	/* Held by an open fd: through another fd and through the holder */
	ASSERT_EQ(EBUSY, ue_del(PREFIX "del"));
	ASSERT_EQ(-1, ioctl(self->fd, DIAG_IOCSDEL, PREFIX "del"));
	ASSERT_EQ(EBUSY, errno);

	/* Held by two fds: closing one is not enough */
	self->fd2 = ue_open_data();
	ASSERT_NE(-1, self->fd2);
	ASSERT_EQ(0, ue_reg(self->fd2, PREFIX "del u32 a", &reg));
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(EBUSY, ue_del(PREFIX "del"));
	close(self->fd2);
	self->fd2 = -1;

	/* No fd, but enabled */
	ASSERT_EQ(0, ue_enable(NULL, PREFIX "del", true));
	ASSERT_EQ(EBUSY, ue_del(PREFIX "del"));
	ASSERT_TRUE(ue_event_exists(PREFIX "del"));

	/* Neither: deleted, its directory gone, a second delete finds nothing */
	ASSERT_EQ(0, ue_enable(NULL, PREFIX "del", false));
	ASSERT_EQ(0, ue_del(PREFIX "del"));
	ASSERT_FALSE(ue_event_exists(PREFIX "del"));
	ASSERT_EQ(ENOENT, ue_del(PREFIX "del"));

	/* The name is free again, with other fields if wanted */
	self->fd = ue_open_data();
	ASSERT_NE(-1, self->fd);
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "del u64 other", &reg));
}

TEST_F(reg, close_releases)
{
	struct user_reg reg;
	int i;

	for (i = 0; i < 3; i++) {
		char cmd[64];

		snprintf(cmd, sizeof(cmd), PREFIX "rel%d u32 a", i);
		ASSERT_EQ(0, ue_reg(self->fd, cmd, &reg));
	}
	/* Registering twice on one fd takes a single reference */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "rel0 u32 a", &reg));
	ASSERT_EQ(EBUSY, ue_del(PREFIX "rel0"));

	close(self->fd);
	self->fd = -1;

	for (i = 0; i < 3; i++) {
		char name[64];

		snprintf(name, sizeof(name), PREFIX "rel%d", i);
		ASSERT_EQ(0, ue_del(name));
		ASSERT_FALSE(ue_event_exists(name));
	}
}

TEST_F(reg, fork)
{
	struct user_reg reg;
	int status;
	pid_t pid;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "fork u32 a", &reg));

	pid = fork();
	ASSERT_NE(-1, pid);
	if (pid == 0) {
		struct user_reg child;
		int fd = ue_open_data();

		/* Another process finds the same event byte */
		if (fd == -1 || ue_reg(fd, PREFIX "fork u32 a", &child))
			_exit(1);
		if (child.status_index != reg.status_index ||
		    child.write_index != 0)
			_exit(2);
		/* The inherited fd is the parent's open file: same slot */
		if (ue_reg(self->fd, PREFIX "fork u32 a", &child) ||
		    child.write_index != reg.write_index)
			_exit(3);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));

	/* The child's own fd died with it; only ours holds the event */
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, ue_del(PREFIX "fork"));
}

TEST_F_TIMEOUT(reg, limit, 900)
{
	static __u8 used[UE_PAGE_MAX];
	int active0, active, busy, max, i, ret;
	struct user_reg reg;
	__u32 first_status;
	char cmd[64];
	int need;

	/*
	 * Two minutes of tracefs directories under KASAN, lockdep and
	 * kmemleak, for one branch of its own: the registration that finds
	 * no free byte discards the event it created, as one whose answer
	 * cannot be stored does (the rollback cases below, in that kernel
	 * too)
	 */
	if (ue_debug_kernel())
		SKIP(return, "the debug kernel: the plain kernel fills the page");

	ASSERT_EQ(0, ue_status_counts(&active0, &busy, &max));
	ASSERT_EQ(UE_STATUS_EVENTS + 1, max);
	need = UE_STATUS_EVENTS - active0;
	ASSERT_GT(need, 0);
	/*
	 * With 64 KiB pages, 65535 status bytes: more than the default of
	 * kernel.user_events_max, which would stop the registrations first
	 */
	self->max0 = ue_get_max();
	ASSERT_LT(0, self->max0);
	if (self->max0 < 2 * UE_PAGE_SIZE)
		ASSERT_EQ(0, ue_set_max(2 * UE_PAGE_SIZE));

	for (i = 0; i <= UE_STATUS_EVENTS; i++) {
		snprintf(cmd, sizeof(cmd), PREFIX "lim%d u32 a", i);
		ret = ue_reg(self->fd, cmd, &reg);
		if (ret)
			break;
		ASSERT_EQ(i, reg.write_index);
		ASSERT_NE(0, reg.status_index);
		ASSERT_LT(reg.status_index, UE_PAGE_SIZE);
		ASSERT_EQ(0, used[reg.status_index]) {
			TH_LOG("status byte %u handed out twice",
			       reg.status_index);
		}
		used[reg.status_index] = 1;
	}
	/*
	 * The tracing core numbers event types with 16 bits, and its own
	 * events have some: 65535 status bytes may be more than are left
	 */
	if (ret == ENODEV && i < need)
		SKIP(return, "%d events, then no event type number (of %d)",
		     i, need);
	ASSERT_TRUE(ret == ENOMEM || ret == EMFILE) {
		TH_LOG("register past the limit gave %d (%s)", ret,
		       strerror(ret));
	}
	ASSERT_EQ(need, i);

	/* The failed registration left nothing behind */
	snprintf(cmd, sizeof(cmd), PREFIX "lim%d", i);
	ASSERT_FALSE(ue_event_exists(cmd));
	ASSERT_EQ(0, ue_status_counts(&active, &busy, &max));
	ASSERT_EQ(UE_STATUS_EVENTS, active);

	/* Still full: a new name fails again, through either interface */
	ret = ue_reg(self->fd, PREFIX "extra u32 a", &reg);
	ASSERT_TRUE(ret == ENOMEM || ret == EMFILE);
	ASSERT_FALSE(ue_event_exists(PREFIX "extra"));
	ret = ue_dyn("u:" PREFIX "extra_dyn u32 a");
	ASSERT_TRUE(ret == ENOMEM || ret == EMFILE) {
		TH_LOG("dynamic_events past the limit gave %d", ret);
	}
	ASSERT_FALSE(ue_event_exists(PREFIX "extra_dyn"));

	/* Existing events can still be registered by others */
	self->fd2 = ue_open_data();
	ASSERT_NE(-1, self->fd2);
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "lim0 u32 a", &reg));
	first_status = reg.status_index;
	ASSERT_EQ(0, ue_reg(self->fd2, PREFIX "lim0 u32 a", &reg));
	ASSERT_EQ(first_status, reg.status_index);
	ASSERT_EQ(0, reg.write_index);
	close(self->fd2);
	self->fd2 = -1;

	/* Free one byte: exactly one more event fits, and it gets that byte */
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, ue_del(PREFIX "lim0"));
	self->fd = ue_open_data();
	ASSERT_NE(-1, self->fd);
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "again u32 a", &reg));
	ASSERT_EQ(first_status, reg.status_index);
	ASSERT_EQ(0, reg.write_index);
	ret = ue_reg(self->fd, PREFIX "again2 u32 a", &reg);
	ASSERT_TRUE(ret == ENOMEM || ret == EMFILE);
}

/*
 * A registration that fails storing its answer leaves nothing behind.
 *
 * DIAG_IOCSREG checks first that it can write the two outputs of the
 * caller's struct user_reg, then registers, then stores them.  When the
 * memory became unwritable in between, the registration must be undone:
 * no write index handed out (the next one is not skipped, the lost one
 * gets ENOENT) and no event left that the call created.
 *
 * There is no way to stop the kernel between the check and the store, so
 * this races: a thread flips the page of the struct user_reg between
 * writable and read-only while the test registers new events from it.
 * Each EFAULT is checked.  An EFAULT of the early check changes nothing
 * either, so to tell how often the race was hit, the test counts events
 * that were created and removed: every event takes the next number of
 * the kernel's trace event types (its "id"), so the numbers skipped
 * between two successful registrations are events rolled back.  On a
 * kernel without the rollback, each hit leaves its event and its write
 * index in place, and the test fails at once.
 */
#define RB_PREFIX	PREFIX "rb"
#define RB_MS		3000	/* how long the race runs at most */
#define RB_ENOUGH	100	/* rollbacks after which it stops earlier */
#define RB_BATCH	500	/* events per fd, then a new fd */

struct rollback_race {
	int fd;
	struct user_reg *reg;	/* alone in the page the thread flips */
	char cmd[128];		/* what reg->name_args points to */
	int stop;
	long flips;
	struct ue_threads threads;
};

FIXTURE(rollback) {
	struct rollback_race r;
};

/* Busy-wait @us microseconds: sleeping takes whole ticks */
static void spin_us(long us)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) * 1000000 +
		 (now.tv_nsec - start.tv_nsec) / 1000 < us);
}

/* Flip the page of the struct user_reg until told to stop */
static void *flip_thread(void *data)
{
	struct rollback_race *r = data;
	unsigned int n;

	/*
	 * Read-only and writable for varying times, about as long each: a
	 * registration may then find the page read-only at the early check
	 * (changing nothing), or writable there and read-only at the store.
	 */
	for (n = 0; !__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE); n++) {
		mprotect(r->reg, UE_PAGE_SIZE, PROT_READ);
		spin_us(10 + n * 7 % 13 * 25);
		mprotect(r->reg, UE_PAGE_SIZE, PROT_READ | PROT_WRITE);
		spin_us(10 + n % 16 * 20);
	}
	r->flips = n;

	return NULL;
}

/* Stop the flipping thread, if it runs; the page is writable then */
static void rollback_stop(struct rollback_race *r)
{
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	ue_threads_join(&r->threads);
}

FIXTURE_SETUP(rollback)
{
	struct rollback_race *r = &self->r;

	r->reg = MAP_FAILED;
	UE_SKIP_IF_UNAVAILABLE();
	ue_cleanup_events(RB_PREFIX);

	r->fd = ue_open_data();
	ASSERT_NE(-1, r->fd);
	r->reg = mmap(NULL, UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r->reg);
	/* The inputs stay: only the kernel writes to the page from now on */
	r->reg->size = sizeof(*r->reg);
	r->reg->name_args = (__u64)(uintptr_t)r->cmd;
}

FIXTURE_TEARDOWN(rollback)
{
	struct rollback_race *r = &self->r;

	rollback_stop(r);
	if (r->reg != MAP_FAILED)
		munmap(r->reg, UE_PAGE_SIZE);
	if (r->fd != -1)
		close(r->fd);
	ue_cleanup_events(RB_PREFIX);
}

/* How many lines of user_events_status name an event of this test */
static int rollback_listed(void)
{
	char *text = ue_read_file("user_events_status");
	const char *p;
	int n = 0;

	if (!text)
		return -1;
	for (p = text; (p = strstr(p, ":" RB_PREFIX)); p++)
		n++;
	free(text);

	return n;
}

/*
 * Register RB_PREFIX @suffix while the page stays writable, expecting
 * write index @index; returns the event's type number.
 */
static int rollback_reg_ok(struct __test_metadata *_metadata,
			   struct rollback_race *r, const char *suffix,
			   int index)
{
	char name[64];

	snprintf(name, sizeof(name), RB_PREFIX "%s", suffix);
	snprintf(r->cmd, sizeof(r->cmd), "%s u32 a", name);
	ASSERT_EQ(0, ioctl(r->fd, DIAG_IOCSREG, r->reg)) {
		TH_LOG("registering %s: %s", name, strerror(errno));
	}
	ASSERT_EQ(index, r->reg->write_index);

	return ue_event_id(name);
}

TEST_F_TIMEOUT(rollback, failed_store, 300)
{
	struct rollback_race *r = &self->r;
	int i, id, last_id, ok = 0, total = 0, efault = 0, since = 0;
	int rolled = 0, uncounted = 0;
	long long start;
	char name[64];
	__u32 val = 0;

	/* Type number to count from, and write index 0 */
	last_id = rollback_reg_ok(_metadata, r, "first", ok++);
	ASSERT_LT(0, last_id);

	ASSERT_EQ(0, ue_thread_start(&r->threads, flip_thread, r));
	start = ue_now_ms();

	for (i = 0; rolled < RB_ENOUGH && ue_now_ms() < start + RB_MS; i++) {
		if (ok == RB_BATCH) {
			/* Go on with a new fd, and without these events */
			close(r->fd);
			ue_cleanup_events(RB_PREFIX);
			r->fd = ue_open_data();
			ASSERT_NE(-1, r->fd);
			total += ok;
			ok = 0;
		}
		snprintf(name, sizeof(name), RB_PREFIX "%d", i);
		snprintf(r->cmd, sizeof(r->cmd), "%s u32 a", name);

		if (!ioctl(r->fd, DIAG_IOCSREG, r->reg)) {
			/* The next index: none was lost to a failure */
			ASSERT_EQ(ok, r->reg->write_index);
			ASSERT_TRUE(ue_event_exists(name));
			id = ue_event_id(name);
			ASSERT_LT(0, id);
			/* Type numbers skipped: events created, then removed */
			if (id > last_id && id - last_id - 1 <= since)
				rolled += id - last_id - 1;
			else
				uncounted += since;
			last_id = id;
			since = 0;
			ok++;
			continue;
		}
		ASSERT_EQ(EFAULT, errno);
		efault++;
		since++;
		ASSERT_FALSE(ue_event_exists(name)) {
			TH_LOG("registration %d failed with EFAULT, but left its event",
			       i);
		}
		ASSERT_EQ(ENOENT, ue_del(name));
		/* The index it would have had was not handed out */
		ASSERT_EQ(-ENOENT, ue_emit(r->fd, ok, &val, sizeof(val))) {
			TH_LOG("registration %d failed with EFAULT, but write index %d works",
			       i, ok);
		}
	}
	rollback_stop(r);

	/* Counts the rollbacks since the last success; index still next */
	id = rollback_reg_ok(_metadata, r, "last", ok++);
	if (id > last_id && id - last_id - 1 <= since)
		rolled += id - last_id - 1;
	else
		uncounted += since;

	/* Only the events of the fd's successful registrations are listed */
	ASSERT_EQ(ok, rollback_listed());

	ue_msg("%d registrations in %lld ms, %ld flips: %d ok, %d EFAULT, %d rolled back%s\n",
	       i, ue_now_ms() - start, r->flips, total + ok - 2, efault,
	       rolled, uncounted ? " (some not counted)" : "");
	if (!rolled && !uncounted)
		SKIP(return, "no registration failed after registering: race not hit");
}

/*
 * A registration holds its file's registration lock while it stores its
 * answer, which may fault.  Another process sharing the file waits for
 * the lock, killable: a fault that never ends must not leave it unkillable
 * (in D state) too.  The fault is one of a userfaultfd the test serves:
 * the registration's struct is on one page, its command on the next.  The
 * registration stops first at the missing command, before it takes the
 * lock; meanwhile the struct's page is dropped, so that storing the answer
 * under the lock faults and stops again.
 */
struct lock_holder {
	int fd;
	struct user_reg *reg;
	int ret;
};

static void *hold_reg_lock(void *arg)
{
	struct lock_holder *h = arg;

	h->ret = ue_ioctl(h->fd, DIAG_IOCSREG, h->reg);
	return NULL;
}

/* Has child @pid exited, within @ms? */
static bool reaped_within(pid_t pid, int ms)
{
	long long end = ue_now_ms() + ms;

	do {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return true;
		usleep(10000);
	} while (ue_now_ms() < end);

	return false;
}

TEST_F_TIMEOUT(reg, killable_behind_fault, 120)
{
	struct uffdio_zeropage zero;
	static char page[UE_PAGE_MAX];
	struct lock_holder holder;
	struct user_reg *reg;
	char *cmd_page, *reg_page;
	int uffd, go[2];
	pthread_t thread;
	pid_t child;

	uffd = ue_uffd_open();
	if (uffd == -1)
		SKIP(return, "no userfaultfd: %s", strerror(errno));

	cmd_page = mmap(NULL, 2 * UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, cmd_page);
	reg_page = cmd_page + UE_PAGE_SIZE;
	ASSERT_EQ(0, ue_uffd_register(uffd, cmd_page, 2 * UE_PAGE_SIZE));

	/* The struct is there, its command not yet */
	reg = (struct user_reg *)page;
	reg->size = sizeof(*reg);
	reg->name_args = (__u64)(uintptr_t)cmd_page;
	ASSERT_EQ(0, ue_uffd_copy(uffd, reg_page, page));
	reg = (struct user_reg *)reg_page;

	/* A child sharing the file registers when told to */
	ASSERT_EQ(0, pipe(go));
	child = fork();
	ASSERT_NE(-1, child);
	if (!child) {
		struct user_reg creg;
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		ue_reg(self->fd, PREFIX "lock_b u32 v", &creg);
		_exit(0);
	}
	close(go[0]);

	/* The registration stops at its command; its struct goes away */
	holder.fd = self->fd;
	holder.reg = reg;
	ASSERT_EQ(0, pthread_create(&thread, NULL, hold_reg_lock, &holder));
	ASSERT_EQ((unsigned long)cmd_page, ue_uffd_next_fault(uffd, 10000));
	ASSERT_EQ(0, madvise(reg_page, UE_PAGE_SIZE, MADV_DONTNEED));
	memset(page, 0, sizeof(page));
	snprintf(page, sizeof(page), PREFIX "lock_a u32 v");
	ASSERT_EQ(0, ue_uffd_copy(uffd, cmd_page, page));

	/* It stops again storing its answer, with the lock held */
	ASSERT_EQ((unsigned long)reg_page, ue_uffd_next_fault(uffd, 10000));

	/* The child waits for the lock, and dies when killed */
	ASSERT_EQ(1, write(go[1], "g", 1));
	usleep(300000);
	ASSERT_EQ(0, kill(child, SIGKILL));
	EXPECT_TRUE(reaped_within(child, 2000));

	/* The fault served, the registration completes */
	zero.range.start = (unsigned long)reg_page;
	zero.range.len = UE_PAGE_SIZE;
	zero.mode = 0;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_ZEROPAGE, &zero));
	ASSERT_EQ(0, pthread_join(thread, NULL));
	ASSERT_EQ(0, holder.ret);
	ASSERT_EQ(0, reg->write_index);
	ASSERT_LT(0, reg->status_index);
	ASSERT_TRUE(ue_event_exists(PREFIX "lock_a"));

	/* Not killed in time: it is reaped once the lock is free */
	waitpid(child, NULL, 0);
	close(go[1]);
	munmap(cmd_page, 2 * UE_PAGE_SIZE);
	close(uffd);
}

TEST_HARNESS_MAIN
