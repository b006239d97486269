// SPDX-License-Identifier: GPL-2.0
/*
 * Every fault site of every entry point of user_events, made to fail.
 *
 * The way syzkaller finds error paths: for one call at a time, the n-th
 * fault site the calling task meets fails (/proc/thread-self/fail-nth),
 * for n = 1, 2, ... until the call completes without meeting an n-th.  A
 * site is a slab allocation (failslab), a page allocation
 * (fail_page_alloc) or a copy from or to user memory (fail_usercopy),
 * whichever of the three the kernel has; the injection's kernel log line
 * (verbose 1) says which one failed, and an allocation that asked for
 * no warning (__GFP_NOWARN) fails without one.  After each try:
 *
 * - the call succeeded, or failed with ENOMEM for an allocation or
 *   EFAULT for a copy: never "invalid", "no such event", "busy";
 * - it made what it makes exactly when it succeeded: an event is
 *   registered (its tracefs files are the tracing core's, which makes
 *   them as it can: see inj_listed()), a trigger is set, a status byte or
 *   an enable bit is set while something is attached and clear while
 *   nothing is, a record reaches the trace;
 * - what it made goes away as it normally does: every event is deletable
 *   once its files are closed, and user_events_status's Active count is
 *   back where it was at the end of each test;
 * - a user without CAP_PERFMON, whose events and enable bits count, can
 *   still make as many as its limits allow (user_counts).
 *
 * Each entry point ends with its fault sites, by kind, and how many of
 * its calls failed, by errno.  A kernel with KASAN, lockdep and kmemleak
 * sees every error path these reach; there, where a fork takes a third
 * of a second, long runs of alike sites are tried in strides.
 */
#define _GNU_SOURCE
#define USER_EVENTS_ENABLE_BIT_ABI
#include <sys/mman.h>
#include <sys/ptrace.h>
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35)
#include <sys/rseq.h>		/* glibc's rseq area: since 2.35 */
#endif

#include "user_events_selftests.h"

#define PREFIX		"inj_"
#define INSTANCE	"inj_instance"
/* A try of each n up to this many: more sites than any call here has */
#define INJ_MAX_SITES	5000
/* The fields of the events registered: every kind of field */
#define INJ_FIELDS	"u32 a;u64 b;__data_loc char[] s;__rel_loc char[] r;char[8] c"

/*
 * The kinds of fault site; an allocation made with __GFP_NOWARN fails
 * without a log line (INJ_QUIET), slab or page
 */
enum inj_kind { INJ_SLAB, INJ_PAGE, INJ_COPY, INJ_QUIET, INJ_KINDS };

static const char *const inj_kind_name[INJ_KINDS] = {
	"slab", "page", "copy", "quiet allocation",
};

/* The fault attributes' debugfs directories, by kind */
static const char *const inj_attr_dir[INJ_QUIET] = {
	"/sys/kernel/debug/failslab",
	"/sys/kernel/debug/fail_page_alloc",
	"/sys/kernel/debug/fail_usercopy",
};

/* What fail-nth did to the calls of one entry point */
struct inj_stats {
	const char *what;
	int n;			/* the site the last try made fail */
	int stride;		/* sites to go on by after the first 40 */
	int last;		/* the last site met */
	bool done;		/* the last try met no n-th site */
	int kind;		/* the kind of the last try's fault, or -1 */
	int sites[INJ_KINDS];
	int enomem, efault;
	int partial;		/* events made without all their tracefs files */
};

#define INJ_SAVED_MAX	24

/*
 * Seconds a case may take: each fault site costs a call and its undoing,
 * a second or more in a kernel with KASAN, lockdep and kmemleak on a
 * slow machine, where the triggers' hundreds of sites took 165 s.
 */
#define INJ_TIMEOUT	900

FIXTURE(inj) {
	int nth_fd;
	int kmsg_fd;
	bool has[INJ_QUIET];
	int nsaved;
	char saved_path[INJ_SAVED_MAX][128];
	char saved_val[INJ_SAVED_MAX][64];
	int active0;
	int status_fd;
	__u8 *status;
};

/* Write @val to the file @path, first saving what it held for teardown */
static int inj_set(struct _test_data_inj *self, const char *path, const char *val)
{
	int i = self->nsaved, fd;
	ssize_t len;

	if (i == INJ_SAVED_MAX) {
		errno = EOVERFLOW;
		return errno;
	}
	/* Read, then written from a new open: some attributes cannot seek */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return errno;
	len = read(fd, self->saved_val[i], sizeof(self->saved_val[i]) - 1);
	close(fd);
	if (len < 0)
		return errno;
	self->saved_val[i][len] = '\0';
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd == -1)
		return errno;
	len = write(fd, val, strlen(val));
	close(fd);
	if (len != (ssize_t)strlen(val))
		return len < 0 ? errno : EIO;
	snprintf(self->saved_path[i], sizeof(self->saved_path[i]), "%s", path);
	self->nsaved++;

	return 0;
}

/* Set attribute @attr of the fault attributes of @kind */
static int inj_attr(struct _test_data_inj *self, int kind, const char *attr,
		    const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", inj_attr_dir[kind], attr);
	return inj_set(self, path, val);
}

/*
 * fork() makes the pages it leaves the parent copy-on-write, glibc's
 * rseq area among them, and a parent that was preempted or moved has the
 * kernel write that area on its way back to user space.  When fork()
 * met no n-th site, the count it left makes that write's copy-on-write
 * fault fail, and the kernel kills the process (SIGSEGV, no log line):
 * the tests run without rseq, which nothing here uses.
 */
static void inj_rseq_unregister(struct __test_metadata *_metadata)
{
#if defined(RSEQ_SIG) && __has_builtin(__builtin_thread_pointer)
	/* glibc 2.35 and later register it with the size of struct rseq */
	if (__rseq_size &&
	    syscall(SYS_rseq, (char *)__builtin_thread_pointer() + __rseq_offset,
		    sizeof(struct rseq), RSEQ_FLAG_UNREGISTER, RSEQ_SIG))
		TH_LOG("rseq stays registered: %s", strerror(errno));
#endif
}

FIXTURE_SETUP(inj)
{
	const char *why = ue_unavailable();
	char path[64];
	int kind;

	self->nth_fd = -1;
	self->kmsg_fd = -1;
	self->status_fd = -1;
	self->status = MAP_FAILED;
	self->nsaved = 0;
	if (why)
		SKIP(return, "%s", why);
	snprintf(path, sizeof(path), "/proc/self/task/%ld/fail-nth",
		 (long)syscall(SYS_gettid));
	self->nth_fd = open(path, O_RDWR | O_CLOEXEC);
	if (self->nth_fd == -1)
		SKIP(return, "no fail-nth (CONFIG_FAULT_INJECTION)");
	for (kind = 0; kind < INJ_QUIET; kind++)
		self->has[kind] = !access(inj_attr_dir[kind], F_OK);
	if (!self->has[INJ_SLAB])
		SKIP(return, "no failslab (CONFIG_FAILSLAB, debugfs)");

	/*
	 * Every allocation counts, those that may sleep too, and pages of
	 * any order; each injection logs one line that names its kind, and
	 * none is held back by the log's rate limit
	 */
	ASSERT_EQ(0, inj_attr(self, INJ_SLAB, "ignore-gfp-wait", "N"));
	if (self->has[INJ_PAGE]) {
		ASSERT_EQ(0, inj_attr(self, INJ_PAGE, "ignore-gfp-wait", "N"));
		ASSERT_EQ(0, inj_attr(self, INJ_PAGE, "ignore-gfp-highmem", "N"));
		ASSERT_EQ(0, inj_attr(self, INJ_PAGE, "min-order", "0"));
	}
	for (kind = 0; kind < INJ_QUIET; kind++) {
		if (!self->has[kind])
			continue;
		ASSERT_EQ(0, inj_attr(self, kind, "verbose", "1"));
		ASSERT_EQ(0, inj_attr(self, kind,
				      "verbose_ratelimit_interval_ms", "0"));
	}
	/* Thousands of those lines: to the log, not the console */
	ASSERT_EQ(0, inj_set(self, "/proc/sys/kernel/printk", "4"));
	self->kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_NE(-1, self->kmsg_fd);
	ASSERT_LE(0, lseek(self->kmsg_fd, 0, SEEK_END));

	ue_setup_clean(_metadata, INSTANCE, PREFIX, &self->active0);
	ASSERT_EQ(0, ue_open_status_page(&self->status_fd, &self->status));
	/*
	 * No page fault of this program between the arming of fail-nth and
	 * the call: it would meet the n-th site instead of the call
	 */
	ASSERT_EQ(0, mlockall(MCL_CURRENT | MCL_FUTURE));
	inj_rseq_unregister(_metadata);
}

FIXTURE_TEARDOWN(inj)
{
	int i;

	/* Root again, if a failed assertion left the test as a user */
	if (seteuid(0))
		TH_LOG("seteuid(0): %s", strerror(errno));

	for (i = self->nsaved - 1; i >= 0; i--) {
		int fd = open(self->saved_path[i], O_WRONLY | O_CLOEXEC);
		ssize_t len = strlen(self->saved_val[i]);

		EXPECT_NE(-1, fd);
		if (fd == -1)
			continue;
		EXPECT_EQ(len, write(fd, self->saved_val[i], len)) {
			TH_LOG("cannot restore %s", self->saved_path[i]);
		}
		close(fd);
	}
	if (self->kmsg_fd != -1)
		close(self->kmsg_fd);
	if (self->nth_fd != -1)
		close(self->nth_fd);
	if (self->status_fd == -1)
		return;
	ue_close_status_page(self->status_fd, self->status);
	ue_instance_remove(INSTANCE);
	ue_cleanup_events(PREFIX);
	ue_cleanup_system_events(USER_EVENTS_MULTI_SYSTEM, PREFIX);
	ue_expect_active(_metadata, self->active0);
}

/* The kind of the injection that the kernel log tells of since the last read */
static int inj_logged_kind(struct _test_data_inj *self)
{
	int kind = INJ_QUIET;
	char rec[8192];
	ssize_t len;

	for (;;) {
		len = read(self->kmsg_fd, rec, sizeof(rec) - 1);
		if (len < 0 && errno == EPIPE)
			continue;	/* records overwritten: read on */
		if (len <= 0)
			break;
		rec[len] = '\0';
		if (strstr(rec, "name failslab,"))
			kind = INJ_SLAB;
		else if (strstr(rec, "name fail_page_alloc,"))
			kind = INJ_PAGE;
		else if (strstr(rec, "name fail_usercopy,"))
			kind = INJ_COPY;
	}

	return kind;
}

/*
 * Each site of a call:
 *	inj_start(&st, "what");
 *	while (!st.done) { inj_arm(); the call; inj_disarm(); checks }
 */
static void inj_start(struct inj_stats *st, const char *what)
{
	memset(st, 0, sizeof(*st));
	st->what = what;
	st->kind = -1;
	st->stride = 1;
}

/*
 * Make the next site fail: the last system call before the call tried.
 * The log is read up to here first, so that the next line is the call's.
 */
static void inj_arm(struct __test_metadata *_metadata,
		    struct _test_data_inj *self, struct inj_stats *st)
{
	char text[16];
	int len;

	inj_logged_kind(self);
	st->n += st->n < 40 ? 1 : st->stride;
	len = snprintf(text, sizeof(text), "%d", st->n);
	ASSERT_EQ(len, pwrite(self->nth_fd, text, len, 0));
}

/*
 * The first system call after the call tried: whether it met the n-th
 * site, of which kind, and whether it failed as that site's failure
 * should make it (@err: 0 or the call's errno).  The read and the write
 * of fail-nth copy to and from user memory: when the call left a count of
 * one, the read's copy takes it and fails; either way the count is zero
 * after the write.
 */
static void inj_disarm(struct __test_metadata *_metadata,
		       struct _test_data_inj *self, struct inj_stats *st, int err)
{
	char text[16];
	ssize_t len;
	int left, want;

	len = pread(self->nth_fd, text, sizeof(text) - 1, 0);
	left = len > 0 ? (text[len] = '\0', atoi(text)) : 1;
	if (pwrite(self->nth_fd, "0", 1, 0) != 1)
		ASSERT_EQ(EFAULT, errno);
	if (left && st->n > st->last + 1) {
		/* Past the end in strides: the sites skipped at the end */
		st->n = st->last;
		st->stride = 1;
		return;
	}
	if (left) {
		/* It met no n-th site: the whole call, nothing injected */
		st->done = true;
		st->kind = -1;
		ASSERT_EQ(0, err) {
			TH_LOG("%s: %s with nothing injected", st->what,
			       strerror(err));
		}
		return;
	}
	ASSERT_GT(INJ_MAX_SITES, st->n) {
		TH_LOG("%s: still meets fault sites after %d", st->what,
		       st->n);
	}
	st->last = st->n;
	st->kind = inj_logged_kind(self);
	st->sites[st->kind]++;
	if (!err)
		return;
	st->enomem += err == ENOMEM;
	st->efault += err == EFAULT;
	want = st->kind == INJ_COPY ? EFAULT : ENOMEM;
	if (err == want)
		return;
	TH_LOG("%s: site %d (%s) failed: %s", st->what, st->n,
	       inj_kind_name[st->kind], strerror(err));
	ASSERT_EQ(want, err);
}

/* One line for the entry point: its sites, by kind, and failed calls */
static void inj_report(struct inj_stats *st)
{
	int total = 0, kind;

	for (kind = 0; kind < INJ_KINDS; kind++)
		total += st->sites[kind];
	ue_msg("%s: %d fault sites (%d slab, %d page, %d copy, %d quiet)\n",
	       st->what, total, st->sites[INJ_SLAB], st->sites[INJ_PAGE],
	       st->sites[INJ_COPY], st->sites[INJ_QUIET]);
	ue_msg("%s: calls failed: %d ENOMEM, %d EFAULT\n", st->what,
	       st->enomem, st->efault);
	if (st->partial)
		ue_msg("%s: %d events made without all their tracefs files\n",
		       st->what, st->partial);
}

/* The handler of a failed assertion in a loop: which site, of which kind */
static void inj_log_site(struct __test_metadata *_metadata,
			 const struct inj_stats *st)
{
	TH_LOG("%s: site %d (%s)", st->what, st->n,
	       st->kind < 0 ? "none" : inj_kind_name[st->kind]);
}

#define INJ_AT(st)	{ inj_log_site(_metadata, &(st)); }

/* 0 or errno of a syscall-like result */
#define INJ_ERR(ret)		((ret) == -1 ? errno : 0)

/* "@name @fields", the command registering an event; until the next call */
static const char *inj_cmd(const char *name, const char *fields)
{
	static char cmd[256];

	snprintf(cmd, sizeof(cmd), "%s %s", name, fields);
	return cmd;
}

/*
 * Close @fd (unless -1), then delete the events of @name, if any are
 * left (an automatic one may be on its way out already); 0 or errno
 */
static int inj_close_delete(int fd, const char *name)
{
	int ret;

	if (fd != -1)
		close(fd);
	ret = ue_del(name);

	return ret == ENOENT ? 0 : ret;
}

/*
 * Bit @bit of *@word once an enable or disable returned: waited for when
 * @want is set (the kernel may set it from a worker), read at once when
 * not (this program's pages are present and locked: the kernel writes
 * them before the enable returns), so that what must not happen is not
 * waited for
 */
static bool inj_bit(__u32 *word, int bit, bool want)
{
	return want ? ue_wait_bit(word, 4, bit, true) : ue_bit(word, 4, bit);
}

/*
 * Is user event @name registered, as dynamic_events lists it?  Its
 * tracefs directory and files are the tracing core's, made as it makes
 * every event's: one that it cannot allocate is left out, with a line in
 * the kernel log.  A registration that meets a failed allocation there
 * succeeds with an event that ftrace cannot reach through them (see
 * inj_has_files()); perf, the status byte and the enable bits work.
 */
static bool inj_listed(const char *name)
{
	char *text = ue_read_file("dynamic_events"), *p;
	size_t len = strlen(name);
	bool found = false;

	if (!text)
		return false;
	for (p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, "u:", 2) && !strncmp(p + 2, name, len) &&
		    (p[2 + len] == ' ' || p[2 + len] == '\n' || !p[2 + len]))
			found = true;
	}
	free(text);

	return found;
}

/*
 * After a registration that succeeded: has the event the tracefs files
 * the tests switch it with?  Those it lacks after a try that met a failed
 * allocation count in st->partial; after the whole call it has them all.
 */
static bool inj_has_files(struct __test_metadata *_metadata,
			  struct inj_stats *st, const char *name)
{
	bool has = !access(ue_path(ue_event_file(NULL, name, "enable")),
			   F_OK) &&
		   !access(ue_path(ue_event_file(NULL, name, "trigger")),
			   F_OK);

	if (!has && st->kind >= 0) {
		st->partial++;
		return false;
	}
	EXPECT_TRUE(has) INJ_AT(*st);

	return has;
}

/* The status byte of @idx as the mapped page shows it */
static __u8 inj_status(struct _test_data_inj *self, __u32 idx)
{
	return __atomic_load_n(&self->status[idx], __ATOMIC_RELAXED);
}

TEST_F_TIMEOUT(inj, open_and_map, INJ_TIMEOUT)
{
	struct inj_stats st;
	void *page;
	int fd;

	inj_start(&st, "open user_events_data");
	while (!st.done) {
		inj_arm(_metadata, self, &st);
		fd = ue_open_data();
		inj_disarm(_metadata, self, &st, INJ_ERR(fd));
		if (fd != -1)
			close(fd);
	}
	inj_report(&st);

	inj_start(&st, "open user_events_status");
	while (!st.done) {
		inj_arm(_metadata, self, &st);
		fd = ue_open_status();
		inj_disarm(_metadata, self, &st, INJ_ERR(fd));
		if (fd != -1)
			close(fd);
	}
	inj_report(&st);

	fd = ue_open_status();
	ASSERT_NE(-1, fd);
	inj_start(&st, "mmap user_events_status");
	while (!st.done) {
		inj_arm(_metadata, self, &st);
		page = mmap(NULL, UE_PAGE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
		inj_disarm(_metadata, self, &st,
			   page == MAP_FAILED ? errno : 0);
		if (page == MAP_FAILED)
			continue;
		/* The same page as the fixture's */
		EXPECT_EQ(0, memcmp(page, self->status, UE_PAGE_SIZE));
		munmap(page, UE_PAGE_SIZE);
	}
	inj_report(&st);
	close(fd);
}

/*
 * After a registration: the event is there exactly when it succeeded,
 * and its status byte is set while ftrace records it and clear otherwise
 */
TEST_F_TIMEOUT(inj, register_status_page, INJ_TIMEOUT)
{
	const char *name = PREFIX "reg";
	struct ue_status_reg reg;
	struct inj_stats st;
	int fd, err;

	inj_start(&st, "DIAG_IOCSREG, status page");
	while (!st.done) {
		fd = ue_open_data();
		ASSERT_NE(-1, fd);
		inj_arm(_metadata, self, &st);
		err = ue_reg(fd, inj_cmd(name, INJ_FIELDS), &reg);
		inj_disarm(_metadata, self, &st, err);
		ASSERT_EQ(!err, inj_listed(name)) INJ_AT(st);
		if (!err)
			ASSERT_EQ(0, inj_status(self, reg.status_index));
		if (!err && inj_has_files(_metadata, &st, name)) {
			ASSERT_EQ(0, ue_enable(NULL, name, true));
			ASSERT_EQ(EVENT_STATUS_FTRACE,
				  inj_status(self, reg.status_index));
			ASSERT_EQ(0, ue_enable(NULL, name, false));
			ASSERT_EQ(0, inj_status(self, reg.status_index));
		}
		ASSERT_EQ(0, inj_close_delete(fd, name));
		ASSERT_FALSE(inj_listed(name));
		ASSERT_FALSE(ue_event_exists(name));
	}
	inj_report(&st);
}

/*
 * The enable bit ABI, with each flag: the bit is maintained exactly when
 * the registration succeeded, and the event (kept with PERSIST) is
 * deletable once the fd is closed
 */
TEST_F_TIMEOUT(inj, register_enable_bit, INJ_TIMEOUT)
{
	static const struct {
		const char *what;
		int flags;
	} variants[] = {
		{ "DIAG_IOCSREG, enable bit", 0 },
		{ "DIAG_IOCSREG, enable bit, PERSIST", USER_EVENT_REG_PERSIST },
		{ "DIAG_IOCSREG, enable bit, MULTI_FORMAT",
		  USER_EVENT_REG_MULTI_FORMAT },
	};
	const char *name = PREFIX "bit";
	struct inj_stats st;
	__u32 word;
	int v, fd, err, active, busy, max;

	for (v = 0; v < (int)ARRAY_SIZE(variants); v++) {
		bool multi = variants[v].flags & USER_EVENT_REG_MULTI_FORMAT;

		inj_start(&st, variants[v].what);
		while (!st.done) {
			fd = ue_open_data();
			ASSERT_NE(-1, fd);
			word = 0;
			inj_arm(_metadata, self, &st);
			err = ue_reg_bit(fd, inj_cmd(name, INJ_FIELDS), &word, 4, 5,
					 variants[v].flags, NULL);
			inj_disarm(_metadata, self, &st, err);
			if (!multi)
				ASSERT_EQ(!err, inj_listed(name)) INJ_AT(st);
			if (!err && !multi && inj_has_files(_metadata, &st, name)) {
				ASSERT_EQ(0, ue_enable(NULL, name, true));
				ASSERT_TRUE(inj_bit(&word, 5, true)) INJ_AT(st);
				ASSERT_EQ(0, ue_enable(NULL, name, false));
			}
			ASSERT_FALSE(inj_bit(&word, 5, false));
			if (!err)
				ASSERT_EQ(0, ue_unreg_bit(fd, &word, 5));
			ASSERT_EQ(0, inj_close_delete(fd, name));
			ASSERT_FALSE(inj_listed(name));
			/* A multi-format event goes with its last registration */
			ASSERT_EQ(0, ue_status_counts(&active, &busy, &max));
			ASSERT_EQ(self->active0, active);
			ASSERT_EQ(0, word);
		}
		inj_report(&st);
	}
}

/* DIAG_IOCSUNREG: the bit stops being maintained exactly when it succeeds */
TEST_F_TIMEOUT(inj, unregister, INJ_TIMEOUT)
{
	const char *name = PREFIX "unreg";
	struct inj_stats st;
	__u32 word, keep = 0;
	int fd, err;

	fd = ue_open_data();
	ASSERT_NE(-1, fd);
	/* Another bit keeps the event while the first comes and goes */
	ASSERT_EQ(0, ue_reg_bit(fd, inj_cmd(name, "u32 a"), &keep, 4, 0, 0,
				NULL));
	inj_start(&st, "DIAG_IOCSUNREG");
	while (!st.done) {
		word = 0;
		ASSERT_EQ(0, ue_reg_bit(fd, inj_cmd(name, "u32 a"), &word, 4, 0, 0,
					NULL));
		inj_arm(_metadata, self, &st);
		err = ue_unreg_bit(fd, &word, 0);
		inj_disarm(_metadata, self, &st, err);
		ASSERT_EQ(0, ue_enable(NULL, name, true));
		ASSERT_EQ(!!err, inj_bit(&word, 0, !!err));
		ASSERT_EQ(0, ue_enable(NULL, name, false));
		ASSERT_FALSE(inj_bit(&word, 0, false));
		if (err)
			ASSERT_EQ(0, ue_unreg_bit(fd, &word, 0));
	}
	inj_report(&st);
	ASSERT_EQ(0, ue_unreg_bit(fd, &keep, 0));
	ASSERT_EQ(0, inj_close_delete(fd, name));
}

/* DIAG_IOCSDEL of an unused event: it is gone exactly when it succeeds */
TEST_F_TIMEOUT(inj, delete, INJ_TIMEOUT)
{
	const char *name = PREFIX "del";
	struct inj_stats st;
	int fd, err;

	fd = ue_open_data();
	ASSERT_NE(-1, fd);
	inj_start(&st, "DIAG_IOCSDEL");
	while (!st.done) {
		ASSERT_EQ(0, ue_dyn("u:" PREFIX "del " INJ_FIELDS));
		inj_arm(_metadata, self, &st);
		err = ue_ioctl(fd, DIAG_IOCSDEL, (void *)name);
		inj_disarm(_metadata, self, &st, err);
		ASSERT_EQ(!!err, inj_listed(name)) INJ_AT(st);
		if (err)
			ASSERT_EQ(0, ue_del(name));
	}
	inj_report(&st);
	close(fd);
}

/* Write @cmd, one line, to the open dynamic_events fd @fd; 0 or errno */
static int inj_dyn_write(int fd, const char *cmd)
{
	ssize_t n = write(fd, cmd, strlen(cmd));

	if (n == -1)
		return errno;

	return n == (ssize_t)strlen(cmd) ? 0 : EIO;
}

/* u: and !u: through dynamic_events */
TEST_F_TIMEOUT(inj, dynamic_events, INJ_TIMEOUT)
{
	const char *name = PREFIX "dyn";
	struct inj_stats st;
	int fd, err;

	fd = ue_open("dynamic_events", O_WRONLY | O_APPEND);
	ASSERT_NE(-1, fd);
	inj_start(&st, "dynamic_events u:");
	while (!st.done) {
		inj_arm(_metadata, self, &st);
		err = inj_dyn_write(fd, "u:" PREFIX "dyn " INJ_FIELDS "\n");
		inj_disarm(_metadata, self, &st, err);
		ASSERT_EQ(!err, inj_listed(name)) INJ_AT(st);
		if (!err)
			inj_has_files(_metadata, &st, name);
		if (!err)
			ASSERT_EQ(0, ue_dyn("!u:" PREFIX "dyn"));
	}
	inj_report(&st);

	inj_start(&st, "dynamic_events !u:");
	while (!st.done) {
		ASSERT_EQ(0, ue_dyn("u:" PREFIX "dyn " INJ_FIELDS));
		inj_arm(_metadata, self, &st);
		err = inj_dyn_write(fd, "!u:" PREFIX "dyn\n");
		inj_disarm(_metadata, self, &st, err);
		ASSERT_EQ(!!err, inj_listed(name)) INJ_AT(st);
		if (err)
			ASSERT_EQ(0, ue_dyn("!u:" PREFIX "dyn"));
	}
	inj_report(&st);
	close(fd);
}

/*
 * Enabling through an enable file, at the top level and in an instance:
 * the status byte is set exactly when the enable succeeded, and a write
 * is then recorded
 */
TEST_F_TIMEOUT(inj, ftrace_enable, INJ_TIMEOUT)
{
	const char *name = PREFIX "ftr";
	static const char * const instances[] = { NULL, INSTANCE };
	struct ue_status_reg reg;
	struct inj_stats st;
	int i, fd, efd;
	__u32 v = 7;
	ssize_t n;

	ASSERT_EQ(0, ue_instance_create(INSTANCE));
	fd = ue_open_data();
	ASSERT_NE(-1, fd);
	ASSERT_EQ(0, ue_reg(fd, inj_cmd(name, "u32 v"), &reg));
	for (i = 0; i < 2; i++) {
		const char *inst = instances[i];

		efd = ue_open(ue_event_file(inst, name, "enable"), O_WRONLY);
		ASSERT_NE(-1, efd);
		inj_start(&st, inst ? "enable in an instance" : "enable");
		while (!st.done) {
			ASSERT_EQ(0, ue_clear_trace(inst));
			inj_arm(_metadata, self, &st);
			n = pwrite(efd, "1", 1, 0);
			inj_disarm(_metadata, self, &st, INJ_ERR(n));
			ASSERT_EQ(n == 1 ? EVENT_STATUS_FTRACE : 0,
				  inj_status(self, reg.status_index));
			ASSERT_EQ(8, ue_emit(fd, reg.write_index, &v, sizeof(v)));
			ASSERT_EQ(n == 1, ue_trace_count(inst, name));
			ASSERT_EQ(1, pwrite(efd, "0", 1, 0));
			ASSERT_EQ(0, inj_status(self, reg.status_index));
		}
		inj_report(&st);
		close(efd);
	}
	ASSERT_EQ(0, inj_close_delete(fd, name));
	ASSERT_EQ(0, ue_instance_remove(INSTANCE));
}

/* perf_event_open() of a user event, and a BPF program attached to it */
TEST_F_TIMEOUT(inj, perf_and_bpf, INJ_TIMEOUT)
{
	const char *name = PREFIX "perf";
	struct bpf_insn prog[] = {
		UE_BPF_INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0),
		UE_BPF_INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	struct ue_status_reg reg;
	struct inj_stats st;
	int fd, pfd, prog_fd, id, err;

	fd = ue_open_data();
	ASSERT_NE(-1, fd);
	ASSERT_EQ(0, ue_reg(fd, inj_cmd(name, "u32 v"), &reg));
	id = ue_event_id(name);
	ASSERT_LT(0, id);
	inj_start(&st, "perf_event_open");
	while (!st.done) {
		inj_arm(_metadata, self, &st);
		pfd = ue_perf_open(id, 0, -1);
		inj_disarm(_metadata, self, &st, INJ_ERR(pfd));
		ASSERT_EQ(pfd != -1 ? EVENT_STATUS_PERF : 0,
			  inj_status(self, reg.status_index));
		if (pfd != -1)
			close(pfd);
		ASSERT_EQ(0, inj_status(self, reg.status_index));
	}
	inj_report(&st);

	prog_fd = ue_bpf_tp_load(prog, ARRAY_SIZE(prog), NULL, 0);
	if (prog_fd == -1) {
		TH_LOG("no BPF program: %s", strerror(errno));
	} else {
		inj_start(&st, "PERF_EVENT_IOC_SET_BPF");
		while (!st.done) {
			pfd = ue_perf_open(id, 0, -1);
			ASSERT_NE(-1, pfd);
			inj_arm(_metadata, self, &st);
			err = ue_ioctl(pfd, PERF_EVENT_IOC_SET_BPF,
				       (void *)(long)prog_fd);
			inj_disarm(_metadata, self, &st, err);
			close(pfd);
			ASSERT_EQ(0, inj_status(self, reg.status_index));
		}
		inj_report(&st);
		close(prog_fd);
	}
	ASSERT_EQ(0, inj_close_delete(fd, name));
}

/* Does the trigger file of @name list a trigger that starts with @trigger? */
static bool inj_has_trigger(const char *name, const char *trigger)
{
	char *text = ue_read_file(ue_event_file(NULL, name, "trigger"));
	char *p;
	bool found = false;

	if (!text)
		return false;
	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, trigger, strcspn(trigger, ":")) && *p != '#')
			found = true;
	}
	free(text);

	return found;
}

/* Triggers on a user event: set exactly when the write succeeded */
TEST_F_TIMEOUT(inj, triggers, INJ_TIMEOUT)
{
	static const char *const triggers[] = {
		/* Small maps: each of their elements is allocated */
		"hist:keys=a:vals=b:sort=a:size=128",
		"hist:keys=s:vals=hitcount:size=128",
		"traceoff",
		"stacktrace",
		"enable_event:user_events:" PREFIX "trig2",
	};
	const char *name = PREFIX "trig";
	char cmd[128], what[128];
	struct ue_status_reg reg, reg2;
	struct inj_stats st;
	int i, fd, tfd;
	ssize_t n;

	fd = ue_open_data();
	ASSERT_NE(-1, fd);
	ASSERT_EQ(0, ue_reg(fd, inj_cmd(name, "u32 a;u64 b;__data_loc char[] s"), &reg));
	ASSERT_EQ(0, ue_reg(fd, PREFIX "trig2 u32 v", &reg2));
	for (i = 0; i < (int)ARRAY_SIZE(triggers); i++) {
		snprintf(what, sizeof(what), "trigger %s", triggers[i]);
		tfd = ue_open(ue_event_file(NULL, name, "trigger"),
			      O_WRONLY | O_APPEND);
		ASSERT_NE(-1, tfd);
		/*
		 * The debug kernel tries every tenth site after the first 40
		 * (a hist map's elements, alike), and each of those at the end
		 */
		inj_start(&st, what);
		st.stride = ue_debug_kernel() ? 10 : 1;
		while (!st.done) {
			inj_arm(_metadata, self, &st);
			n = write(tfd, triggers[i], strlen(triggers[i]));
			inj_disarm(_metadata, self, &st, INJ_ERR(n));
			ASSERT_EQ(n != -1, inj_has_trigger(name, triggers[i]));
			/* A trigger attaches: the status byte shows it */
			ASSERT_EQ(n != -1 ? EVENT_STATUS_FTRACE : 0,
				  inj_status(self, reg.status_index));
			if (n == -1)
				continue;
			snprintf(cmd, sizeof(cmd), "!%s", triggers[i]);
			ASSERT_EQ(0, ue_write_file(ue_event_file(NULL, name, "trigger"),
						   cmd, O_APPEND));
			ASSERT_EQ(0, inj_status(self, reg.status_index));
		}
		inj_report(&st);
		close(tfd);
	}
	ASSERT_EQ(0, ue_clear_triggers(name));
	close(fd);
	ASSERT_EQ(0, ue_del(PREFIX "trig2"));
	ASSERT_EQ(0, ue_del(name));
}

/*
 * A record of "u32 a;u64 b;__data_loc char[] s": a = 1, b = 2, s = "str";
 * every member at its natural alignment, so no padding
 */
struct inj_rec {
	__u32 idx;
	__u32 a;
	__u64 b;
	__u32 loc;
	char s[4];
};

/* Where s sits in the event's record: behind the common fields */
#define INJ_REC_S	(UE_COMMON_SIZE + offsetof(struct inj_rec, s) - \
			 offsetof(struct inj_rec, a))

/* What the trace shows of @n records of struct inj_rec (at most 3) */
#define INJ_REC_LINE	"a=1 b=2 s=str\n"
static const char *inj_rec_lines(int n)
{
	static const char lines[] = INJ_REC_LINE INJ_REC_LINE INJ_REC_LINE;

	return lines + (3 - n) * strlen(INJ_REC_LINE);
}

/*
 * Writes: write(), writev() and a batch of three records, each recorded
 * exactly when (and as far as) it succeeded
 */
TEST_F_TIMEOUT(inj, writes, INJ_TIMEOUT)
{
	const char *name = PREFIX "wr";
	struct ue_status_reg reg;
	struct inj_stats st;
	struct inj_rec rec;
	struct user_batch_record hdr;
	__u8 batch[4 + 3 * (sizeof(hdr) + sizeof(rec) - 4)];
	struct iovec io[3];
	size_t psize = sizeof(rec) - 4, off;
	ssize_t n;
	int fd, i, want;
	__u32 marker = USER_EVENT_BATCH;

	fd = ue_open_data();
	ASSERT_NE(-1, fd);
	ASSERT_EQ(0, ue_reg(fd, inj_cmd(name, "u32 a;u64 b;__data_loc char[] s"), &reg));
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	rec.idx = reg.write_index;
	rec.a = 1;
	rec.b = 2;
	rec.loc = DYN_LOC(INJ_REC_S, sizeof(rec.s));
	memcpy(rec.s, "str", 4);
	memcpy(batch, &marker, 4);
	off = 4;
	for (i = 0; i < 3; i++) {
		hdr.write_index = reg.write_index;
		hdr.size = psize;
		memcpy(batch + off, &hdr, sizeof(hdr));
		memcpy(batch + off + sizeof(hdr), &rec.a, psize);
		off += sizeof(hdr) + psize;
	}

	inj_start(&st, "write");
	while (!st.done) {
		ASSERT_EQ(0, ue_clear_trace(NULL));
		inj_arm(_metadata, self, &st);
		n = write(fd, &rec, sizeof(rec));
		inj_disarm(_metadata, self, &st, INJ_ERR(n));
		ASSERT_TRUE(n == -1 || n == sizeof(rec));
		UE_ASSERT_TRACE(NULL, name, inj_rec_lines(n != -1));
	}
	inj_report(&st);

	io[0].iov_base = &rec.idx;
	io[0].iov_len = 4;
	io[1].iov_base = &rec.a;
	io[1].iov_len = 12;
	io[2].iov_base = &rec.loc;
	io[2].iov_len = 8;
	inj_start(&st, "writev");
	while (!st.done) {
		ASSERT_EQ(0, ue_clear_trace(NULL));
		inj_arm(_metadata, self, &st);
		n = writev(fd, io, 3);
		inj_disarm(_metadata, self, &st, INJ_ERR(n));
		ASSERT_TRUE(n == -1 || n == sizeof(rec));
		UE_ASSERT_TRACE(NULL, name, inj_rec_lines(n != -1));
	}
	inj_report(&st);

	inj_start(&st, "write of a batch");
	while (!st.done) {
		ASSERT_EQ(0, ue_clear_trace(NULL));
		inj_arm(_metadata, self, &st);
		n = write(fd, batch, sizeof(batch));
		inj_disarm(_metadata, self, &st, INJ_ERR(n));
		/* Records up to the first that failed, or all */
		want = n == -1 ? 0 : (int)((n - 4) / (sizeof(hdr) + psize));
		ASSERT_TRUE(n == -1 || n == 4 + want * (sizeof(hdr) + psize));
		UE_ASSERT_TRACE(NULL, name, inj_rec_lines(want));
	}
	inj_report(&st);

	ASSERT_EQ(0, ue_enable(NULL, name, false));
	ASSERT_EQ(0, inj_close_delete(fd, name));
}

#define INJ_FORK_BITS	4

/* fork() with enable bits: every copy complete or absent, none half made */
TEST_F_TIMEOUT(inj, fork_with_enablers, INJ_TIMEOUT)
{
	const char *name = PREFIX "fork";
	struct inj_stats st;
	int bit, fd, status, lost = 0;
	__u32 *word;
	pid_t pid;

	word = mmap(NULL, UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, word);
	fd = ue_open_data();
	ASSERT_NE(-1, fd);
	for (bit = 0; bit < INJ_FORK_BITS; bit++)
		ASSERT_EQ(0, ue_reg_bit(fd, inj_cmd(name, "u32 v"), word, 4, bit, 0,
					NULL));
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	ASSERT_TRUE(ue_wait_bit(word, 4, INJ_FORK_BITS - 1, true));
	/*
	 * The debug kernel, where a fork takes a third of a second: every
	 * fourth site after the first 40, and each of those at the end
	 */
	inj_start(&st, "fork with enable bits");
	st.stride = ue_debug_kernel() ? 4 : 1;
	while (!st.done) {
		inj_arm(_metadata, self, &st);
		pid = fork();
		if (pid == 0)
			_exit(ue_unreg_copied_bits(word, fd, INJ_FORK_BITS));
		inj_disarm(_metadata, self, &st, INJ_ERR(pid));
		if (pid == -1)
			continue;
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		ASSERT_GE(INJ_FORK_BITS, WEXITSTATUS(status)) {
			TH_LOG("site %d: the child's bit %d is set, not registered",
			       st.n, WEXITSTATUS(status) - 100);
		}
		lost += WEXITSTATUS(status) < INJ_FORK_BITS;
	}
	inj_report(&st);
	ue_msg("%d forks lost registrations, none made half\n", lost);

	ASSERT_EQ(0, ue_enable(NULL, name, false));
	for (bit = 0; bit < INJ_FORK_BITS; bit++)
		ASSERT_EQ(0, ue_unreg_bit(fd, word, bit));
	ASSERT_EQ(0, inj_close_delete(fd, name));
	munmap(word, UE_PAGE_SIZE);
}

/*
 * The other ends of a process with enable bits: exec, which drops them,
 * and exit.  A child registers bits, then execs or exits with its n-th
 * site made to fail.  Where the exec or exit ended, the parent reads what
 * is left of the child's count: an exec stops the child, traced, before
 * its new program runs (whose own page faults would count), and an exit
 * leaves a zombie.
 */
#define INJ_EXEC_FAILED	100	/* + errno: the child's exec failed */

static int inj_end_child(const char *name, int n, bool exec)
{
	char *const argv[] = { "true", NULL };
	char text[16], path[64];
	int bit, fd, nth;
	__u32 word = 0;

	fd = ue_open_data();
	for (bit = 0; bit < INJ_FORK_BITS; bit++) {
		if (ue_reg_bit(fd, name, &word, 4, bit, 0, NULL))
			return 1;
	}
	snprintf(path, sizeof(path), "/proc/self/task/%ld/fail-nth",
		 (long)syscall(SYS_gettid));
	nth = open(path, O_WRONLY);
	if (nth == -1)
		return 2;
	if (exec && ptrace(PTRACE_TRACEME, 0, NULL, NULL))
		return 3;
	/* No page fault of the child (copy on write) takes the site */
	if (mlockall(MCL_CURRENT))
		return 4;
	snprintf(text, sizeof(text), "%d", n);
	if (write(nth, text, strlen(text)) != (ssize_t)strlen(text))
		return 5;
	if (!exec)
		_exit(0);
	execv("/bin/true", argv);
	return INJ_EXEC_FAILED + errno;
}

/*
 * What is left of the fail-nth count of the stopped or dead child @pid,
 * which is then disarmed: a stopped child is killed next, and its exit,
 * which closes the files its exec opened, must not meet the site.  The
 * 9p client, for one, forgets a file whose clunk failed while the
 * server keeps it open, and a 9p root then fails every later lookup
 * that reuses the file's number with EINVAL.
 */
static int inj_child_left(pid_t pid)
{
	char path[64];
	int left;

	snprintf(path, sizeof(path), "/proc/%d/fail-nth", pid);
	/* A number in a file, read and written as a sysctl's */
	left = ue_get_sysctl(path);
	if (left > 0 && ue_set_sysctl(path, 0))
		return -1;

	return left;
}

TEST_F_TIMEOUT(inj, exec_and_exit_with_enablers, INJ_TIMEOUT)
{
	const char *name = PREFIX "end u32 v";
	int n, status, left, failed, active, busy, max;
	bool exec = false, done;
	siginfo_t info;
	pid_t pid;

	for (;;) {
		done = false;
		failed = 0;
		/*
		 * The debug kernel, where a fork and exec take a second:
		 * every fourth site after the first 40
		 */
		for (n = 1; !done; n += n >= 40 && ue_debug_kernel() ? 4 : 1) {
			ASSERT_GT(INJ_MAX_SITES, n);
			pid = fork();
			ASSERT_NE(-1, pid);
			if (pid == 0)
				_exit(inj_end_child(name, n, exec));
			/* Stopped after its exec, or a zombie */
			memset(&info, 0, sizeof(info));
			ASSERT_EQ(0, waitid(P_PID, pid, &info,
					    WEXITED | WSTOPPED | WNOWAIT));
			left = inj_child_left(pid);
			if (info.si_code == CLD_STOPPED ||
			    info.si_code == CLD_TRAPPED)
				kill(pid, SIGKILL);
			/* A traced child reports its stop again first */
			do {
				ASSERT_EQ(pid, waitpid(pid, &status, 0));
			} while (WIFSTOPPED(status));
			/*
			 * The exec failed: with the errno the core gives
			 * (E2BIG for an argument it could not copy); the
			 * child's bits go with it either way
			 */
			if (info.si_code == CLD_EXITED && info.si_status) {
				ASSERT_LE(INJ_EXEC_FAILED, info.si_status) {
					TH_LOG("%s, site %d: the child exited %d",
					       exec ? "exec" : "exit", n,
					       info.si_status);
				}
				failed++;
				continue;
			}
			ASSERT_LE(0, left);
			done = left > 0;
		}
		ue_msg("%s with enable bits: about %d fault sites, %d failed\n",
		       exec ? "exec" : "exit", n - 2, failed);
		/* Nothing keeps the event: the last fd and bits are gone */
		ASSERT_EQ(0, inj_close_delete(-1, PREFIX "end"));
		ASSERT_EQ(0, ue_status_counts(&active, &busy, &max));
		ASSERT_EQ(self->active0, active);
		if (exec)
			break;
		exec = true;
	}
}

/*
 * close() of a file with registrations of both layouts: the status page
 * event is then unreferenced and deletable; an enable bit belongs to the
 * address space, not the file, and stays maintained until unregistered
 * (through any file)
 */
TEST_F_TIMEOUT(inj, close_with_registrations, INJ_TIMEOUT)
{
	struct ue_status_reg reg;
	struct inj_stats st;
	__u32 word = 0;
	int fd, err;

	inj_start(&st, "close with registrations");
	while (!st.done) {
		fd = ue_open_data();
		ASSERT_NE(-1, fd);
		ASSERT_EQ(0, ue_reg(fd, PREFIX "cl1 " INJ_FIELDS, &reg));
		ASSERT_EQ(0, ue_reg_bit(fd, PREFIX "cl2 u32 v", &word, 4, 1,
					0, NULL));
		ASSERT_EQ(0, ue_enable(NULL, PREFIX "cl2", true));
		ASSERT_TRUE(inj_bit(&word, 1, true));
		inj_arm(_metadata, self, &st);
		err = INJ_ERR(close(fd));
		inj_disarm(_metadata, self, &st, err);
		ASSERT_EQ(0, ue_del(PREFIX "cl1")) INJ_AT(st);
		ASSERT_EQ(0, ue_enable(NULL, PREFIX "cl2", false));
		ASSERT_FALSE(inj_bit(&word, 1, false)) INJ_AT(st);
		fd = ue_open_data();
		ASSERT_NE(-1, fd);
		ASSERT_EQ(0, ue_unreg_bit(fd, &word, 1)) INJ_AT(st);
		ASSERT_EQ(0, inj_close_delete(fd, PREFIX "cl2"));
	}
	inj_report(&st);
}

/* rmdir of an instance that holds records of a deleted user event */
TEST_F_TIMEOUT(inj, instance_rmdir_with_kept_records, INJ_TIMEOUT)
{
	const char *name = PREFIX "kept";
	struct ue_status_reg reg;
	struct inj_stats st;
	char path[256];
	__u32 v = 3;
	int fd, err;

	snprintf(path, sizeof(path), "%s", ue_path("instances/" INSTANCE));
	inj_start(&st, "rmdir of an instance with kept records");
	while (!st.done) {
		ASSERT_EQ(0, ue_instance_create(INSTANCE));
		fd = ue_open_data();
		ASSERT_NE(-1, fd);
		ASSERT_EQ(0, ue_reg(fd, inj_cmd(name, "u32 v"), &reg));
		ASSERT_EQ(0, ue_enable(INSTANCE, name, true));
		ASSERT_EQ(8, ue_emit(fd, reg.write_index, &v, sizeof(v)));
		ASSERT_EQ(0, ue_enable(INSTANCE, name, false));
		ASSERT_EQ(0, inj_close_delete(fd, name));
		inj_arm(_metadata, self, &st);
		err = INJ_ERR(rmdir(path));
		inj_disarm(_metadata, self, &st, err);
		ASSERT_EQ(!!err, !access(path, F_OK));
		if (err)
			ASSERT_EQ(0, ue_instance_remove(INSTANCE));
	}
	inj_report(&st);
}

#define INJ_USER_MAX	4	/* the user's limit of events and of bits */

/* Become @uid for the next calls, keeping the way back to root */
static int inj_euid(uid_t uid)
{
	return seteuid(uid) ? errno : 0;
}

/*
 * The per-user counts: each registration of a user without CAP_PERFMON
 * charges its events and enable bits to that user.  Both registrations,
 * as such a user, under fail-nth; afterwards the user can still make
 * exactly as many events and bits as its limits allow, so no failed try
 * kept a charge, and none of a successful one outlived what it counted.
 */
TEST_F_TIMEOUT(inj, user_counts, INJ_TIMEOUT)
{
	const char *name = PREFIX "cnt";
	struct ue_status_reg reg;
	struct inj_stats st;
	char text[16], ename[32];
	int fd, err, i, bit;
	__u32 word;

	snprintf(text, sizeof(text), "%d", INJ_USER_MAX);
	ASSERT_EQ(0, inj_set(self, UE_USER_EVENTS_PATH, text));
	ASSERT_EQ(0, inj_set(self, UE_USER_BITS_PATH, text));

	inj_start(&st, "DIAG_IOCSREG as a user, status page");
	while (!st.done) {
		fd = ue_open_data();
		ASSERT_NE(-1, fd);
		ASSERT_EQ(0, inj_euid(UE_NOBODY));
		inj_arm(_metadata, self, &st);
		err = ue_reg(fd, inj_cmd(name, INJ_FIELDS), &reg);
		inj_disarm(_metadata, self, &st, err);
		ASSERT_EQ(0, inj_euid(0));
		ASSERT_EQ(!err, inj_listed(name)) INJ_AT(st);
		ASSERT_EQ(0, inj_close_delete(fd, name));
	}
	inj_report(&st);

	inj_start(&st, "DIAG_IOCSREG as a user, enable bit");
	while (!st.done) {
		fd = ue_open_data();
		ASSERT_NE(-1, fd);
		word = 0;
		ASSERT_EQ(0, inj_euid(UE_NOBODY));
		inj_arm(_metadata, self, &st);
		err = ue_reg_bit(fd, inj_cmd(name, INJ_FIELDS), &word, 4, 0, 0,
				 NULL);
		inj_disarm(_metadata, self, &st, err);
		if (!err)
			ASSERT_EQ(0, ue_unreg_bit(fd, &word, 0));
		ASSERT_EQ(0, inj_euid(0));
		ASSERT_EQ(0, inj_close_delete(fd, name));
	}
	inj_report(&st);

	/* The user's events: up to the limit, and EMFILE past it */
	fd = ue_open_data();
	ASSERT_NE(-1, fd);
	ASSERT_EQ(0, inj_euid(UE_NOBODY));
	for (i = 0; i <= INJ_USER_MAX; i++) {
		snprintf(ename, sizeof(ename), "%s%d", name, i);
		EXPECT_EQ(i < INJ_USER_MAX ? 0 : EMFILE,
			  ue_reg(fd, inj_cmd(ename, "u32 a"), &reg)) {
			TH_LOG("the user's event %d of %d", i + 1,
			       INJ_USER_MAX);
		}
	}
	ASSERT_EQ(0, inj_euid(0));
	close(fd);
	for (i = 0; i <= INJ_USER_MAX; i++) {
		snprintf(ename, sizeof(ename), "%s%d", name, i);
		ASSERT_EQ(0, inj_close_delete(-1, ename));
	}

	/* Its enable bits, of one event: the same, with ENOSPC */
	fd = ue_open_data();
	ASSERT_NE(-1, fd);
	ASSERT_EQ(0, inj_euid(UE_NOBODY));
	word = 0;
	for (bit = 0; bit <= INJ_USER_MAX; bit++) {
		EXPECT_EQ(bit < INJ_USER_MAX ? 0 : ENOSPC,
			  ue_reg_bit(fd, inj_cmd(name, "u32 a"), &word, 4, bit, 0,
				     NULL)) {
			TH_LOG("the user's enable bit %d of %d", bit + 1,
			       INJ_USER_MAX);
		}
	}
	for (bit = 0; bit < INJ_USER_MAX; bit++)
		ue_unreg_bit(fd, &word, bit);
	ASSERT_EQ(0, inj_euid(0));
	ASSERT_EQ(0, inj_close_delete(fd, name));
}

/* The sysctls: the value changes exactly when the write succeeded */
TEST_F_TIMEOUT(inj, sysctls, INJ_TIMEOUT)
{
	static const char *const sysctls[] = {
		UE_MAX_PATH,
		"/proc/sys/kernel/user_events_kept_max",
		UE_USER_EVENTS_PATH,
		UE_USER_BITS_PATH,
	};
	struct inj_stats st;
	long old, want;
	char text[32];
	int i, fd;
	ssize_t n;

	for (i = 0; i < (int)ARRAY_SIZE(sysctls); i++) {
		old = ue_get_sysctl(sysctls[i]);
		ASSERT_LE(1, old);
		fd = open(sysctls[i], O_WRONLY | O_CLOEXEC);
		ASSERT_NE(-1, fd);
		inj_start(&st, strrchr(sysctls[i], '/') + 1);
		while (!st.done) {
			want = old > 2 ? old - 1 - st.n % 2 : old + 1 + st.n % 2;
			snprintf(text, sizeof(text), "%ld\n", want);
			inj_arm(_metadata, self, &st);
			n = pwrite(fd, text, strlen(text), 0);
			inj_disarm(_metadata, self, &st, INJ_ERR(n));
			ASSERT_EQ(n != -1 ? want : old,
				  ue_get_sysctl(sysctls[i]));
			ASSERT_EQ(0, ue_set_sysctl(sysctls[i], old));
		}
		inj_report(&st);
		close(fd);
	}
}

TEST_HARNESS_MAIN
