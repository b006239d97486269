// SPDX-License-Identifier: GPL-2.0
/*
 * The limits of each user: /proc/sys/user/max_user_events bounds the
 * events that one user's registrations created and that still exist,
 * /proc/sys/user/max_user_event_bits the enable bits of its processes.
 * Children drop to unprivileged uids of the test's own, USER1 and USER2,
 * without capabilities, in the group UE_TEST_GID that the files are
 * handed to:
 *
 * - past max_user_events, registering a new event fails with EMFILE in
 *   both layouts and creates nothing, while registering an existing one
 *   works; another user has a count of its own; room comes back when the
 *   user deletes an event (one kept for its records too, which stay
 *   printed), when an automatic event goes with its last enable bit, and
 *   when root deletes one; an event counts against the user it stays
 *   for, who takes the count over when it makes another user's automatic
 *   event persistent, or root when it makes the event its own;
 * - past max_user_event_bits, registering a bit fails with ENOSPC, and
 *   the bit is neither registered nor set; unregistering one makes room;
 *   the copies a fork makes count: those past the limit are not made and
 *   their bits are clear in the child, and the child's exec or exit gives
 *   its copies back;
 * - the limits of a user namespace hold for its users, whose events also
 *   count against the limits of the namespace's owner outside;
 * - CAP_PERFMON is exempt, also for an unprivileged uid that keeps it;
 * - the events kept for their records after a delete count against no
 *   limit: a user that creates, records and deletes events can always
 *   create another.
 *
 * The limits and the owner and mode of the files are restored at the end.
 */
#define _GNU_SOURCE
#define USER_EVENTS_ENABLE_BIT_ABI
#include "user_events_selftests.h"

#include <sched.h>

#define PREFIX		"ue_ul_"
#define INSTANCE	"ue_ul_inst"
/* The event of the enable bit tests, made by root */
#define BITS_EVENT	PREFIX "bits"
/*
 * The unprivileged users of the tests, theirs alone: no other test's
 * events, reaped asynchronously or left by a failure, count for them
 */
#define USER1		65529
#define USER2		65530
/* How long a count that a worker or the event reaper drops may take */
#define DROP_MS		5000
/* Children, forks and tracefs directories: slow in a debug kernel */
#define LONG_TIMEOUT	300
#define DEFAULT_EVENTS	2048
#define DEFAULT_BITS	1048576

FIXTURE(ul) {
	struct ue_saved_attrs attrs;
	long events0;
	long bits0;
	long max0;
};

FIXTURE_SETUP(ul)
{
	static const char * const files[] = {
		"user_events_data", "user_events_status",
	};
	int i;

	self->events0 = -1;
	self->bits0 = -1;
	self->max0 = -1;
	UE_SKIP_IF_UNAVAILABLE();

	ue_cleanup_events(PREFIX);
	ue_instance_remove(INSTANCE);
	self->events0 = ue_get_sysctl(UE_USER_EVENTS_PATH);
	self->bits0 = ue_get_sysctl(UE_USER_BITS_PATH);
	self->max0 = ue_get_max();
	ASSERT_LE(0, self->events0);
	ASSERT_LE(0, self->bits0);
	ASSERT_EQ(0, ue_grant_dirs(&self->attrs));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, ue_grant(&self->attrs, ue_path(files[i]),
				      UE_TEST_GID, 0060));
}

FIXTURE_TEARDOWN(ul)
{
	ue_child_kill_all();
	if (self->events0 >= 0)
		ue_set_sysctl(UE_USER_EVENTS_PATH, self->events0);
	if (self->bits0 >= 0)
		ue_set_sysctl(UE_USER_BITS_PATH, self->bits0);
	if (self->max0 > 0)
		ue_set_max(self->max0);
	ue_restore_attrs(&self->attrs);
	ue_instance_remove(INSTANCE);
	ue_cleanup_events(PREFIX);
}

/* The name of event @n of the tests: PREFIX "e@n" */
static const char *ul_name(int n)
{
	static char name[4][32];
	static int next;
	char *buf = name[next++ % 4];

	snprintf(buf, sizeof(name[0]), PREFIX "e%d", n);
	return buf;
}

/* Register event @n with the status page layout on @fd; 0 or errno */
static int ul_reg(int fd, int n)
{
	char cmd[64];
	struct ue_status_reg reg;

	snprintf(cmd, sizeof(cmd), "%s u32 v", ul_name(n));
	return ue_reg(fd, cmd, &reg);
}

/* The value of the enable bits of bits_child() */
static __u32 ul_word;

/* Register bit @bit of ul_word for BITS_EVENT on @fd; 0 or errno */
static int ul_reg_bit(int fd, int bit)
{
	return ue_reg_bit(fd, BITS_EVENT " u32 v", &ul_word, 4, bit, 0, NULL);
}

/*
 * @reg(@fd, @n), retried while it fails with @err, until a count that
 * drops asynchronously (the event reaper, a worker's mm reference) has
 * dropped; 0 or errno
 */
static int ul_soon(int (*reg)(int fd, int n), int fd, int n, int err)
{
	long long end = ue_now_ms() + DROP_MS;
	int ret;

	while ((ret = reg(fd, n)) == err && ue_now_ms() < end)
		usleep(10000);
	return ret;
}

/*
 * In a child: become @uid, keeping CAP_PERFMON if @perfmon, and open
 * user_events_data; the fd, or -1 once the failure is reported
 */
static int ul_become_open(uid_t uid, bool perfmon)
{
	int fd;

	if (ue_become(uid, perfmon)) {
		ue_child_fail(1, "change credentials");
		return -1;
	}
	fd = ue_open_data();
	if (fd == -1)
		ue_child_fail(2, "open user_events_data");
	return fd;
}

struct ul_fill {
	uid_t uid;
	/* Events first .. first + ok - 1 register, the next one gets EMFILE */
	int first;
	int ok;
};

/* As @arg's uid: register its events up to the limit, and one past it */
static int fill_child(struct ue_child *c, void *arg)
{
	struct ul_fill *x = arg;
	int fd, i;

	fd = ul_become_open(x->uid, false);
	if (fd == -1)
		return 1;
	for (i = 0; i < x->ok; i++) {
		errno = ul_reg(fd, x->first + i);
		if (errno)
			return ue_child_fail(3, "register below the limit");
	}
	errno = ul_reg(fd, x->first + x->ok);
	if (errno != EMFILE)
		return ue_child_fail(4, "register past the limit: not EMFILE");
	close(fd);
	return 0;
}

/* Run fill_child() as @uid; its exit code */
static int ul_fill(uid_t uid, int first, int ok)
{
	struct ul_fill x = { .uid = uid, .first = first, .ok = ok };
	struct ue_child c;

	if (ue_child_start(&c, fill_child, &x))
		return -1;
	return ue_child_finish(&c);
}

/*
 * As USER1, with max_user_events 3: e0 and e1 with the status page,
 * "auto" with an enable bit; e2 gets EMFILE.  The parent records e1,
 * which USER1 then deletes: e2 fits, e3 and e1 again do not until
 * "auto" went with its bit and write index.
 */
static int events_child(struct ue_child *c, void *arg)
{
	int fd, fd1, fd_auto;
	__u32 index = 0, v = 7;

	fd = ul_become_open(USER1, false);
	if (fd == -1)
		return 1;
	fd1 = ue_open_data();
	fd_auto = ue_open_data();
	if (fd1 == -1 || fd_auto == -1)
		return ue_child_fail(2, "open user_events_data");
	if (ul_reg(fd, 0) || ul_reg(fd1, 1) ||
	    ue_reg_bit(fd_auto, PREFIX "auto u32 v", &ul_word, 4, 0, 0, NULL))
		return ue_child_fail(3, "register up to the limit");

	/* Past it: no new event, in either layout; existing ones register */
	errno = ul_reg(fd, 2);
	if (errno != EMFILE)
		return ue_child_fail(4, "status page registration past the limit");
	errno = ue_reg_bit(fd, PREFIX "e2 u32 v", &ul_word, 4, 1, 0, NULL);
	if (errno != EMFILE)
		return ue_child_fail(5, "enable bit registration past the limit");
	errno = ue_unreg_bit(fd, &ul_word, 1);
	if (errno != ENOENT || (ul_word & 2))
		return ue_child_fail(5, "bit of a refused registration");
	if (ul_reg(fd, 0) ||
	    ue_reg_bit(fd_auto, PREFIX "auto u32 v", &ul_word, 4, 2, 0, NULL) ||
	    ue_unreg_bit(fd_auto, &ul_word, 2))
		return ue_child_fail(6, "register an existing event at the limit");
	if (!ue_child_say(c, 'f'))
		return ue_child_fail(7, "pipe");

	/* The parent enables e1: write it, and delete it once disabled */
	errno = ue_reg_bit(fd1, PREFIX "e1 u32 v", &ul_word, 4, 3, 0, &index);
	if (errno || ue_child_hear(c) != 'g' ||
	    ue_emit(fd1, index, &v, sizeof(v)) != 8 || ue_unreg_bit(fd1, &ul_word, 3))
		return ue_child_fail(8, "write e1");
	close(fd1);
	if (!ue_child_say(c, 'w') || ue_child_hear(c) != 'g')
		return ue_child_fail(9, "pipe");
	errno = ue_ioctl(fd, DIAG_IOCSDEL, (void *)ul_name(1));
	if (errno)
		return ue_child_fail(10, "delete its recorded event");
	errno = ul_reg(fd, 2);
	if (errno)
		return ue_child_fail(11, "register after a delete (e1 kept)");
	errno = ul_reg(fd, 3);
	if (errno != EMFILE)
		return ue_child_fail(12, "register past the limit again");
	/* Brought back, a kept event counts again */
	errno = ul_reg(fd, 1);
	if (errno != EMFILE)
		return ue_child_fail(12, "register the kept event past the limit");

	/* "auto" goes with its last bit and write index: room for e3 only */
	if (ue_unreg_bit(fd_auto, &ul_word, 0))
		return ue_child_fail(13, "unregister auto's bit");
	close(fd_auto);
	errno = ul_soon(ul_reg, fd, 3, EMFILE);
	if (errno)
		return ue_child_fail(14, "register once auto is gone");
	errno = ul_reg(fd, 4);
	if (errno != EMFILE)
		return ue_child_fail(15, "register past the limit, third time");
	close(fd);
	return 0;
}

TEST_F(ul, defaults)
{
	ASSERT_EQ(DEFAULT_EVENTS, self->events0);
	ASSERT_EQ(DEFAULT_BITS, self->bits0);
	ASSERT_GT(ue_get_max(), self->events0);
	ue_msg("max_user_events %ld (kernel.user_events_max %ld), max_user_event_bits %ld\n",
	       self->events0, ue_get_max(), self->bits0);
}

TEST_F_TIMEOUT(ul, events_per_user, LONG_TIMEOUT)
{
	struct ue_log_entry e;
	struct ue_child c;

	ASSERT_EQ(0, ue_set_sysctl(UE_USER_EVENTS_PATH, 3));
	ASSERT_EQ(0, ue_instance_create(INSTANCE));
	ASSERT_EQ(0, ue_clear_error_log());

	ASSERT_EQ(0, ue_child_start(&c, events_child, NULL));
	ASSERT_EQ('f', ue_parent_hear(&c));
	ASSERT_FALSE(ue_event_exists(ul_name(2)));
	ASSERT_EQ(0, ue_last_error(&e));
	ASSERT_STREQ("User has too many events, see max_user_events", e.msg);
	ue_msg("uid %d: 3 events, the 4th EMFILE in both layouts, not created\n", USER1);

	/* Another user's count is its own */
	ASSERT_EQ(0, ul_fill(USER2, 10, 3));
	ue_msg("uid %d: 3 events of its own, the 4th EMFILE\n", USER2);

	/* Root records e1 for USER1, which then deletes it */
	ASSERT_EQ(0, ue_enable(INSTANCE, ul_name(1), true));
	ASSERT_TRUE(ue_parent_say(&c, 'g'));
	ASSERT_EQ('w', ue_parent_hear(&c));
	ASSERT_EQ(0, ue_enable(INSTANCE, ul_name(1), false));
	ASSERT_TRUE(ue_parent_say(&c, 'g'));
	ASSERT_EQ(0, ue_child_finish(&c));
	ASSERT_FALSE(ue_event_exists(ul_name(1)));
	UE_ASSERT_TRACE(INSTANCE, ul_name(1), "v=7\n");
	ue_msg("room again after its delete (record kept and printed) and auto's last bit\n");

	/* Root's delete of one of USER1's events is room for one more */
	ASSERT_EQ(0, ue_del(ul_name(0)));
	ASSERT_EQ(0, ul_fill(USER1, 5, 1));
	ue_msg("room again after root deleted one\n");
}

/* The events kept_child() creates, records and deletes */
#define KEPT_LOOPS	5
#define KEPT_FIRST	20

/*
 * As USER1, with max_user_events 1 and room for one more event in all:
 * KEPT_LOOPS times, create an event, write it while the parent has it
 * enabled, and delete it; then create one more.  Kept for their records,
 * the deleted events count against neither limit.
 */
static int kept_child(struct ue_child *c, void *arg)
{
	int fd, fdw, i;
	__u32 v;

	fd = ul_become_open(USER1, false);
	if (fd == -1)
		return 1;
	for (i = 0; i < KEPT_LOOPS; i++) {
		fdw = ue_open_data();
		if (fdw == -1)
			return ue_child_fail(2, "open user_events_data");
		errno = ul_reg(fdw, KEPT_FIRST + i);
		if (errno)
			return ue_child_fail(3, "register after kept events");
		if (!ue_child_say(c, 'r') || ue_child_hear(c) != 'g')
			return ue_child_fail(4, "pipe");
		v = 100 + i;
		/* Write index 0, the only one of this fd */
		if (ue_emit(fdw, 0, &v, sizeof(v)) != 8)
			return ue_child_fail(5, "write while enabled");
		close(fdw);
		if (!ue_child_say(c, 'w') || ue_child_hear(c) != 'g')
			return ue_child_fail(4, "pipe");
		errno = ue_ioctl(fd, DIAG_IOCSDEL,
				 (void *)ul_name(KEPT_FIRST + i));
		if (errno)
			return ue_child_fail(6, "delete its recorded event");
	}
	errno = ul_reg(fd, KEPT_FIRST + KEPT_LOOPS);
	if (errno)
		return ue_child_fail(7, "register after the kept events");
	close(fd);
	return 0;
}

/*
 * Records of deleted events never block registration: an unprivileged
 * user creates, records and deletes events with its own limit at 1 and
 * room for one more event in kernel.user_events_max, then creates
 * another; the records stay printed.
 */
TEST_F_TIMEOUT(ul, kept_records_take_no_room, LONG_TIMEOUT)
{
	struct ue_child c;
	char want[16];
	int i, live;

	ASSERT_LT(0, self->max0);
	ASSERT_EQ(0, ue_set_sysctl(UE_USER_EVENTS_PATH, 1));
	ASSERT_EQ(0, ue_instance_create(INSTANCE));
	live = ue_count_events();
	ASSERT_LE(0, live);
	ASSERT_EQ(0, ue_set_max(live + 1));

	ASSERT_EQ(0, ue_child_start(&c, kept_child, NULL));
	for (i = 0; i < KEPT_LOOPS; i++) {
		ASSERT_EQ('r', ue_parent_hear(&c));
		ASSERT_EQ(0, ue_enable(INSTANCE, ul_name(KEPT_FIRST + i), true));
		ASSERT_TRUE(ue_parent_say(&c, 'g'));
		ASSERT_EQ('w', ue_parent_hear(&c));
		ASSERT_EQ(0, ue_enable(INSTANCE, ul_name(KEPT_FIRST + i), false));
		ASSERT_TRUE(ue_parent_say(&c, 'g'));
	}
	ASSERT_EQ(0, ue_child_finish(&c));

	for (i = 0; i < KEPT_LOOPS; i++) {
		ASSERT_FALSE(ue_event_exists(ul_name(KEPT_FIRST + i)));
		snprintf(want, sizeof(want), "v=%d\n", 100 + i);
		UE_ASSERT_TRACE(INSTANCE, ul_name(KEPT_FIRST + i), want);
	}
	ASSERT_TRUE(ue_event_exists(ul_name(KEPT_FIRST + KEPT_LOOPS)));
	ue_msg("uid %d: %d events created, recorded, deleted, then one more\n",
	       USER1, KEPT_LOOPS);
}

/*
 * As USER1, with max_user_events 1: its automatic event "moved" fills its
 * count until USER2 makes it persistent; then e0 fills it until root
 * names e0 in dynamic_events, which makes it the administrator's
 */
static int moved_child(struct ue_child *c, void *arg)
{
	int fd;

	fd = ul_become_open(USER1, false);
	if (fd == -1)
		return 1;
	if (ue_reg_bit(fd, PREFIX "moved u32 v", &ul_word, 4, 0, 0, NULL))
		return ue_child_fail(3, "register below the limit");
	errno = ul_reg(fd, 0);
	if (errno != EMFILE)
		return ue_child_fail(4, "register past the limit");
	if (!ue_child_say(c, 'a') || ue_child_hear(c) != 'g')
		return ue_child_fail(5, "pipe");
	errno = ul_reg(fd, 0);
	if (errno)
		return ue_child_fail(6, "register once USER2 made its event stay");
	errno = ul_reg(fd, 1);
	if (errno != EMFILE)
		return ue_child_fail(7, "register past the limit again");
	if (!ue_child_say(c, 'b') || ue_child_hear(c) != 'g')
		return ue_child_fail(8, "pipe");
	errno = ul_reg(fd, 1);
	if (errno)
		return ue_child_fail(9, "register once root made its event stay");
	close(fd);
	return 0;
}

/* As USER2, with max_user_events 1: make USER1's "moved" persistent */
static int mover_child(struct ue_child *c, void *arg)
{
	struct ue_status_reg reg;
	int fd;

	fd = ul_become_open(USER2, false);
	if (fd == -1)
		return 1;
	errno = ue_reg(fd, PREFIX "moved u32 v", &reg);
	if (errno)
		return ue_child_fail(3, "status page registration of USER1's event");
	errno = ul_reg(fd, 20);
	if (errno != EMFILE)
		return ue_child_fail(4, "register with USER1's event counted");
	close(fd);
	return 0;
}

/*
 * An event counts against the user it stays for: a registration that
 * makes another user's automatic event persistent, or an event the
 * administrator's, takes its count over
 */
TEST_F_TIMEOUT(ul, persist_moves_count, LONG_TIMEOUT)
{
	struct ue_child c, m;

	ASSERT_EQ(0, ue_set_sysctl(UE_USER_EVENTS_PATH, 1));
	ASSERT_EQ(0, ue_child_start(&c, moved_child, NULL));
	ASSERT_EQ('a', ue_parent_hear(&c));
	ASSERT_EQ(0, ue_child_start(&m, mover_child, NULL));
	ASSERT_EQ(0, ue_child_finish(&m));
	ue_msg("uid %d made uid %d's automatic event persistent: it counts for %d\n",
	       USER2, USER1, USER2);
	ASSERT_TRUE(ue_parent_say(&c, 'g'));
	ASSERT_EQ('b', ue_parent_hear(&c));
	ASSERT_EQ(0, ue_dyn("u:" PREFIX "e0 u32 v"));
	ASSERT_TRUE(ue_parent_say(&c, 'g'));
	ASSERT_EQ(0, ue_child_finish(&c));
	ue_msg("root named uid %d's event in dynamic_events: it counts for nobody\n",
	       USER1);
	ASSERT_TRUE(ue_event_exists(PREFIX "moved"));
}

/*
 * As USER1, with max_user_event_bits 4 then 8, bits of ul_word for
 * BITS_EVENT, which root enabled
 */
static int bits_child(struct ue_child *c, void *arg)
{
	int fd, bit, status, in[2], out[2];
	pid_t pid;
	char go;

	fd = ul_become_open(USER1, false);
	if (fd == -1)
		return 1;
	for (bit = 0; bit < 4; bit++) {
		errno = ul_reg_bit(fd, bit);
		if (errno)
			return ue_child_fail(3, "register below the limit");
	}
	errno = ul_reg_bit(fd, 4);
	if (errno != ENOSPC)
		return ue_child_fail(4, "register past the limit: not ENOSPC");
	errno = ue_unreg_bit(fd, &ul_word, 4);
	if (ul_word != 0xf || errno != ENOENT)
		return ue_child_fail(5, "bit past the limit set or registered");
	if (ue_unreg_bit(fd, &ul_word, 0) || ul_reg_bit(fd, 4) ||
	    ul_word != 0x1e)
		return ue_child_fail(6, "register after an unregistration");

	/* At the limit, a fork copies none: the child's bits are clear */
	pid = fork();
	if (pid == 0)
		_exit(ul_word != 0);
	if (pid == -1 || waitpid(pid, &status, 0) != pid || status)
		return ue_child_fail(7, "forked child at the limit has bits set");
	if (ul_word != 0x1e || !ue_child_say(c, 'l') || ue_child_hear(c) != 'g')
		return ue_child_fail(8, "parent's bits after the fork");

	/* Limit 8: a fork copies all four, which count until it execs */
	if (syscall(SYS_pipe2, in, O_CLOEXEC) || syscall(SYS_pipe2, out, 0))
		return ue_child_fail(9, "pipe");
	pid = fork();
	if (pid == 0) {
		/* Gone with its parent, which alone writes to it */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(out[1]);
		if (ul_word != 0x1e || write(in[1], "c", 1) != 1 ||
		    read(out[0], &go, 1) != 1)
			_exit(1);
		execlp("sleep", "sleep", "60", (char *)NULL);
		_exit(2);
	}
	close(in[1]);
	if (pid == -1 || read(in[0], &go, 1) != 1)
		return ue_child_fail(10, "forked child with all bits");
	errno = ul_reg_bit(fd, 5);
	if (errno != ENOSPC)
		return ue_child_fail(11, "register while the copies exist");
	/* EOF: the close-on-exec end went with the exec */
	if (write(out[1], "g", 1) != 1 || read(in[0], &go, 1) != 0)
		return ue_child_fail(12, "exec of the forked child");
	errno = ul_soon(ul_reg_bit, fd, 5, ENOSPC);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (errno || ul_word != 0x3e)
		return ue_child_fail(13, "register once the child exec'd");

	/* Five bits: a fork copies three of them, then exits */
	pid = fork();
	if (pid == 0)
		_exit(__builtin_popcount(ul_word) != 3 || (ul_word & ~0x3eu));
	if (pid == -1 || waitpid(pid, &status, 0) != pid || status)
		return ue_child_fail(14, "child past the limit: not 3 bits");
	for (bit = 6; bit < 9; bit++) {
		errno = ul_soon(ul_reg_bit, fd, bit, ENOSPC);
		if (errno)
			return ue_child_fail(15, "register once the child exited");
	}
	errno = ul_reg_bit(fd, 9);
	if (errno != ENOSPC || ul_word != 0x1fe)
		return ue_child_fail(16, "register past the limit again");
	close(fd);
	return 0;
}

TEST_F_TIMEOUT(ul, bits_per_user, LONG_TIMEOUT)
{
	struct ue_child c;

	ASSERT_EQ(0, ue_set_sysctl(UE_USER_BITS_PATH, 4));
	ASSERT_EQ(0, ue_dyn("u:" BITS_EVENT " u32 v"));
	ASSERT_EQ(0, ue_enable(NULL, BITS_EVENT, true));

	ASSERT_EQ(0, ue_child_start(&c, bits_child, NULL));
	ASSERT_EQ('l', ue_parent_hear(&c));
	ue_msg("uid %d: 4 bits, the 5th ENOSPC and clear; a fork at the limit copies none\n",
	       USER1);
	ASSERT_EQ(0, ue_set_sysctl(UE_USER_BITS_PATH, 8));
	ASSERT_TRUE(ue_parent_say(&c, 'g'));
	ASSERT_EQ(0, ue_child_finish(&c));
	ue_msg("a fork's copies count until its exec or exit; past the limit they are clear\n");

	ASSERT_EQ(0, ue_enable(NULL, BITS_EVENT, false));
	ASSERT_EQ(0, ue_del(BITS_EVENT));
}

/*
 * Register a new event and a bit with both limits at 0: only CAP_PERFMON
 * can; @arg says whether the child keeps it
 */
static int exempt_child(struct ue_child *c, void *arg)
{
	bool perfmon = arg;
	int fd, want = perfmon ? 0 : EMFILE;

	fd = ul_become_open(USER1, perfmon);
	if (fd == -1)
		return 1;
	errno = ue_reg_bit(fd, PREFIX "exempt u32 v", &ul_word, 4, 2, 0, NULL);
	if (errno != want)
		return ue_child_fail(3, "new event");
	want = perfmon ? 0 : ENOSPC;
	errno = ul_reg_bit(fd, 1);
	if (errno != want)
		return ue_child_fail(4, "enable bit");
	close(fd);
	return 0;
}

TEST_F_TIMEOUT(ul, perfmon_exempt, LONG_TIMEOUT)
{
	struct ue_child c;
	int fd;

	ASSERT_EQ(0, ue_set_sysctl(UE_USER_EVENTS_PATH, 0));
	ASSERT_EQ(0, ue_set_sysctl(UE_USER_BITS_PATH, 0));

	fd = ue_open_data();
	ASSERT_NE(-1, fd);
	ASSERT_EQ(0, ul_reg_bit(fd, 0));
	ue_msg("root: a new event and a bit with both limits 0\n");

	ASSERT_EQ(0, ue_child_start(&c, exempt_child, (void *)1));
	ASSERT_EQ(0, ue_child_finish(&c));
	ASSERT_EQ(0, ue_child_start(&c, exempt_child, NULL));
	ASSERT_EQ(0, ue_child_finish(&c));
	ue_msg("uid %d with CAP_PERFMON: both; without: EMFILE, ENOSPC\n", USER1);
	close(fd);
}

/* Write @text to /proc/self/@file; 0 or errno */
static int ul_proc_self(const char *file, const char *text)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/%s", file);
	return ue_write_path(path, text, strlen(text), 0);
}

/*
 * As USER1 in a user namespace of its own, mapped to its root: the
 * namespace's max_user_events is 1, then 100, while USER1's outside is 3
 */
static int userns_child(struct ue_child *c, void *arg)
{
	char map[32];
	int fd;

	fd = ul_become_open(USER1, false);
	if (fd == -1)
		return 1;
	/* Dumpable again, so that its /proc/self files are its own */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return ue_child_fail(1, "make it dumpable");
	if (unshare(CLONE_NEWUSER))
		return errno == EPERM || errno == EINVAL || errno == ENOSPC ?
		       100 : ue_child_fail(3, "unshare");
	snprintf(map, sizeof(map), "0 %d 1", USER1);
	if (ul_proc_self("setgroups", "deny") || ul_proc_self("uid_map", map))
		return ue_child_fail(4, "map root of the namespace");
	snprintf(map, sizeof(map), "0 %d 1", UE_NOBODY);
	if (ul_proc_self("gid_map", map))
		return ue_child_fail(4, "map root of the namespace");

	if (ue_get_sysctl(UE_USER_EVENTS_PATH) != INT32_MAX)
		return ue_child_fail(5, "a new namespace's limit is not INT_MAX");
	errno = ue_set_sysctl(UE_USER_EVENTS_PATH, 1);
	if (errno)
		return ue_child_fail(6, "set the namespace's limit");
	if (ul_reg(fd, 0))
		return ue_child_fail(7, "register below the namespace's limit");
	errno = ul_reg(fd, 1);
	if (errno != EMFILE)
		return ue_child_fail(8, "register past the namespace's limit");

	/* USER1's limit outside holds too */
	errno = ue_set_sysctl(UE_USER_EVENTS_PATH, 100);
	if (errno)
		return ue_child_fail(9, "raise the namespace's limit");
	if (ul_reg(fd, 1) || ul_reg(fd, 2))
		return ue_child_fail(10, "register below the limit outside");
	errno = ul_reg(fd, 3);
	if (errno != EMFILE)
		return ue_child_fail(11, "register past the limit outside");
	close(fd);
	return 0;
}

TEST_F_TIMEOUT(ul, user_namespace, LONG_TIMEOUT)
{
	struct ue_child c;
	int ret;

	ASSERT_EQ(0, ue_set_sysctl(UE_USER_EVENTS_PATH, 3));
	ASSERT_EQ(0, ue_child_start(&c, userns_child, NULL));
	ret = ue_child_finish(&c);
	if (ret == 100)
		SKIP(return, "no user namespace for an unprivileged user");
	ASSERT_EQ(0, ret);
	ue_msg("in a user namespace: its own limit (1), and its owner's outside (3)\n");

	/* USER1's events counted outside as well: none fits now */
	ASSERT_EQ(0, ul_fill(USER1, 4, 0));
}

TEST_HARNESS_MAIN
