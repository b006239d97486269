/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the user_events selftests.
 *
 * Every helper that talks to the kernel returns 0 on success or a positive
 * errno value, so that tests can write ASSERT_EQ(EINVAL, ue_reg(...)).
 * Paths given as "rel" are relative to the tracefs mount.
 */
#ifndef _USER_EVENTS_SELFTESTS_H
#define _USER_EVENTS_SELFTESTS_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
/* The status page layout of struct user_reg, unless a test asks for the other */
#ifndef USER_EVENTS_ENABLE_BIT_ABI
#define USER_EVENTS_STATUS_PAGE_ABI
#endif
#include <linux/user_events.h>
#include <linux/userfaultfd.h>

#include "../kselftest_harness.h"

/*
 * Seconds a test case may run before the harness stops it, for the cases
 * that do not set their own.  The harness's 30 catch a hang on a fast
 * machine; a case that creates and removes tracefs directories takes ten
 * times as long in a kernel with KASAN, lockdep and kmemleak, and that
 * again on a slow host.  Only a case that hangs gets near this.
 */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT	300

/*
 * Running some of a program's cases: UE_CASES, when set, names the only
 * cases that run, UE_SKIP_CASES cases that do not; each a list of full
 * names (FIXTURE.VARIANT.TEST as the harness prints them, "global.TEST"
 * for a TEST()) separated by spaces.  A case left out is reported as
 * skipped.  The test harness of older kernels has no filter of its own:
 * this one works on every kernel, through test_harness_run(), which
 * TEST_HARNESS_MAIN calls.
 */
#define UE_CASES_MAX	256

typedef void (*ue_case_fn)(struct __test_metadata *,
			   struct __fixture_variant_metadata *);

static struct {
	struct __test_metadata *test;
	ue_case_fn fn;
} ue_cases[UE_CASES_MAX];

/* Is @name a word of the environment variable @var? */
static inline bool ue_case_listed(const char *var, const char *name)
{
	const char *p = getenv(var);
	size_t len = strlen(name);

	while (p && *p) {
		p += strspn(p, " ");
		if (!strncmp(p, name, len) && (!p[len] || p[len] == ' '))
			return true;
		p += strcspn(p, " ");
	}
	return false;
}

static inline void ue_case_run(struct __test_metadata *_metadata,
			       struct __fixture_variant_metadata *variant)
{
	char name[256];
	int i;

	snprintf(name, sizeof(name), "%s%s%s.%s", _metadata->fixture->name,
		 variant->name[0] ? "." : "", variant->name, _metadata->name);
	if ((getenv("UE_CASES") && !ue_case_listed("UE_CASES", name)) ||
	    ue_case_listed("UE_SKIP_CASES", name))
		SKIP(return, "%s: left out by UE_CASES or UE_SKIP_CASES", name);
	for (i = 0; i < UE_CASES_MAX && ue_cases[i].test; i++) {
		if (ue_cases[i].test == _metadata) {
			ue_cases[i].fn(_metadata, variant);
			return;
		}
	}
}

static inline int ue_test_harness_run(int argc, char **argv)
{
	struct __fixture_metadata *f;
	struct __test_metadata *t;
	int n = 0;

	if (!getenv("UE_CASES") && !getenv("UE_SKIP_CASES"))
		return test_harness_run(argc, argv);
	for (f = __fixture_list; f; f = f->next) {
		for (t = f->tests; t; t = t->next) {
			if (n == UE_CASES_MAX) {
				fprintf(stderr, "more than %d tests\n", n);
				return KSFT_FAIL;
			}
			ue_cases[n].test = t;
			ue_cases[n++].fn = t->fn;
			t->fn = ue_case_run;
		}
	}
	return test_harness_run(argc, argv);
}

#define test_harness_run ue_test_harness_run

/*
 * The kernel's page size: what the status page, the struct sizes that
 * DIAG_IOCSREG and DIAG_IOCSUNREG accept, and mmap() go by.  Arrays that
 * hold a page are UE_PAGE_MAX long, the largest of the architectures
 * (arm64 and ppc64el with 64 KiB pages).
 */
#define UE_PAGE_SIZE		((size_t)sysconf(_SC_PAGESIZE))
#define UE_PAGE_MAX		65536

/*
 * Where the program's ABI puts a __u64 that follows a __u32 in a struct,
 * as in struct user_reg of the status page layout: at 8, but at 4 on
 * i386, which aligns it to 4 bytes there (offsetof(), from <stddef.h>)
 */
struct ue_u64_after_u32 {
	__u32 a;
	__u64 b;
};

#define UE_U64_OFFSET		offsetof(struct ue_u64_after_u32, b)

/*
 * Is the kernel 64-bit?  What the kernel reads as a long has the size of
 * the kernel's long, not the program's: a 32-bit program may run on a
 * 64-bit kernel, so the kernel's machine tells.
 */
static inline bool ue_kernel_64bit(void)
{
	struct utsname u;

	if (sizeof(long) == 8)
		return true;
	return !uname(&u) && (strstr(u.machine, "64") ||
			      !strcmp(u.machine, "s390x"));
}

/* Limits of the ABI */
#define UE_PAYLOAD_MAX		4048	/* payload bytes of one event */
#define UE_STATUS_EVENTS	(UE_PAGE_SIZE - 1) /* events with a status byte */
#define UE_CMD_MAX		4095	/* longest command, without its NUL */
/* Size of the common fields in front of the payload in a record */
#define UE_COMMON_SIZE		8
/* The error_log prefix put in front of the logged command */
#define UE_CMD_PREFIX		"  Command: "

/* Directory of the tracefs mount that has user_events, if any */
static inline const char *ue_root(void)
{
	static const char *root;

	if (!root) {
		if (!access("/sys/kernel/tracing/user_events_data", F_OK))
			root = "/sys/kernel/tracing";
		else if (!access("/sys/kernel/debug/tracing/user_events_data", F_OK))
			root = "/sys/kernel/debug/tracing";
		else
			root = "/sys/kernel/tracing";
	}

	return root;
}

/*
 * Full path of a tracefs file, in a buffer that lives until the next call
 * (the buffers are per thread: threaded tests use the helpers at once)
 */
static inline const char *ue_path(const char *rel)
{
	static __thread char path[4][512];
	static __thread int slot;
	char *buf = path[slot++ & 3];

	snprintf(buf, sizeof(path[0]), "%s/%s", ue_root(), rel);

	return buf;
}

/* NULL when the tests can run, otherwise why they cannot */
static inline const char *ue_unavailable(void)
{
	if (geteuid() != 0)
		return "user_events tests must run as root";
	if (access(ue_path("user_events_data"), F_OK))
		return "user_events is not available (no user_events_data)";

	return NULL;
}

/*
 * Skip the current test when user_events cannot be used.  The 6.1 harness
 * still runs the test body after a SKIP() in FIXTURE_SETUP(), so leave the
 * test's child process with the harness' skip exit code instead.
 */
#define UE_SKIP_IF_UNAVAILABLE() do {					\
	const char *__why = ue_unavailable();				\
	if (__why)							\
		SKIP(_exit(255), "%s", __why);				\
} while (0)

static inline int ue_open(const char *rel, int flags)
{
	return open(ue_path(rel), flags | O_CLOEXEC);
}

static inline int ue_open_data(void)
{
	return ue_open("user_events_data", O_RDWR);
}

static inline int ue_open_status(void)
{
	return ue_open("user_events_status", O_RDWR);
}

#ifdef USER_EVENTS_ENABLE_BIT_ABI
/*
 * A program that defines USER_EVENTS_ENABLE_BIT_ABI before including this
 * file gets the enable bit layout as struct user_reg, and the header gives
 * the status page layout no name: the helpers use this copy of it.
 */
struct ue_status_reg {
	__u32 size;
	__u64 name_args;
	__u32 status_index;
	__u32 write_index;
};
#else
#define ue_status_reg user_reg
#endif

/* Register @cmd on @fd with the status page layout; @reg gets the indexes */
static inline int ue_reg(int fd, const char *cmd, struct ue_status_reg *reg)
{
	memset(reg, 0, sizeof(*reg));
	reg->size = sizeof(*reg);
	reg->name_args = (__u64)(uintptr_t)cmd;

	if (ioctl(fd, DIAG_IOCSREG, reg) == -1)
		return errno;

	return 0;
}

/* Delete event @name through an fd of its own */
static inline int ue_del(const char *name)
{
	int fd = ue_open_data();
	int ret = 0;

	if (fd == -1)
		return errno;
	if (ioctl(fd, DIAG_IOCSDEL, name) == -1)
		ret = errno;
	close(fd);

	return ret;
}

/* ioctl() @req of @fd with @arg; 0 or errno */
static inline int ue_ioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) == -1 ? errno : 0;
}

/*
 * Write @len bytes of @buf at once to the file at @path (a whole path, of
 * any file system) opened O_WRONLY | @flags; EIO when the write is short
 */
static inline int ue_write_path(const char *path, const void *buf, size_t len,
				int flags)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | flags);
	int ret = 0;
	ssize_t n;

	if (fd == -1)
		return errno;
	n = write(fd, buf, len);
	if (n == -1)
		ret = errno;
	else if ((size_t)n != len)
		ret = EIO;
	close(fd);

	return ret;
}

/* Write @len bytes of @buf at once to a file opened O_WRONLY | @flags */
static inline int ue_write_buf(const char *rel, const void *buf, size_t len,
			       int flags)
{
	return ue_write_path(ue_path(rel), buf, len, flags);
}

/* Write @text to a tracefs file opened with O_WRONLY | @flags */
static inline int ue_write_file(const char *rel, const char *text, int flags)
{
	return ue_write_buf(rel, text, strlen(text), flags);
}

/* Run one dynamic_events command, the way "echo CMD >> dynamic_events" does */
static inline int ue_dyn(const char *cmd)
{
	char *line = malloc(strlen(cmd) + 2);
	int ret = ENOMEM;

	if (line) {
		sprintf(line, "%s\n", cmd);
		/* Never O_TRUNC: that way dynamic_events removes all events */
		ret = ue_write_file("dynamic_events", line, O_APPEND);
		free(line);
	}

	return ret;
}

/*
 * Emit an event: write index @idx in its own iovec, then @len payload bytes.
 * Returns what writev() returned, or -errno.
 */
static inline ssize_t ue_emit(int fd, __u32 idx, const void *data, size_t len)
{
	struct iovec io[2] = {
		{ .iov_base = &idx, .iov_len = sizeof(idx) },
		{ .iov_base = (void *)data, .iov_len = len },
	};
	ssize_t ret = writev(fd, io, 2);

	return ret == -1 ? -errno : ret;
}

/* A payload put together field by field, with no padding between them */
struct ue_payload {
	size_t len;
	__u8 data[2 * 4096];
};

static inline void ue_put(struct ue_payload *p, const void *field, size_t size)
{
	memcpy(p->data + p->len, field, size);
	p->len += size;
}

/* Append @value as a @type */
#define UE_PUT(p, type, value) do {					\
	type __val = (value);						\
	ue_put(p, &__val, sizeof(__val));				\
} while (0)

/*
 * "events/SYSTEM/NAME/FILE", optionally inside instances/INSTANCE, in a
 * buffer that lives until the fourth next call
 */
static inline const char *ue_system_event_file(const char *system,
					       const char *instance,
					       const char *name,
					       const char *file)
{
	static __thread char rel[4][384];
	static __thread int slot;
	char *buf = rel[slot++ & 3];

	if (instance)
		snprintf(buf, sizeof(rel[0]), "instances/%s/events/%s/%s/%s",
			 instance, system, name, file);
	else
		snprintf(buf, sizeof(rel[0]), "events/%s/%s/%s", system, name,
			 file);

	return buf;
}

/* "events/user_events/NAME/FILE", optionally inside instances/INSTANCE */
static inline const char *ue_event_file(const char *instance, const char *name,
					const char *file)
{
	return ue_system_event_file(USER_EVENTS_SYSTEM, instance, name, file);
}

/* Enable or disable event @name for ftrace (top level when !instance) */
static inline int ue_enable(const char *instance, const char *name, bool on)
{
	return ue_write_file(ue_event_file(instance, name, "enable"),
			     on ? "1\n" : "0\n", O_TRUNC);
}

/* Does the event directory of @name exist? */
static inline bool ue_event_exists(const char *name)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "events/%s/%s", USER_EVENTS_SYSTEM, name);

	return access(ue_path(rel), F_OK) == 0;
}

/*
 * Content of a tracefs file opened with @flags, NUL-terminated; NULL and
 * errno on error.  With O_NONBLOCK, what can be read without waiting (a
 * trace_pipe, consumed).
 */
static inline char *ue_read_file_flags(const char *rel, int flags)
{
	size_t cap = 8192, len = 0;
	char *buf = malloc(cap);
	int fd = ue_open(rel, flags);
	ssize_t n;

	if (fd == -1 || !buf)
		goto fail;

	for (;;) {
		if (cap - len < 4096) {
			char *bigger = realloc(buf, cap * 2);

			if (!bigger)
				goto fail;
			buf = bigger;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n == -1 && errno == EAGAIN && (flags & O_NONBLOCK))
			break;
		if (n == -1)
			goto fail;
		if (n == 0)
			break;
		len += n;
	}
	buf[len] = '\0';
	close(fd);

	return buf;
fail:
	n = errno;
	if (fd != -1)
		close(fd);
	free(buf);
	errno = n;

	return NULL;
}

/* Whole content of a tracefs file, NUL-terminated; NULL and errno on error */
static inline char *ue_read_file(const char *rel)
{
	return ue_read_file_flags(rel, O_RDONLY);
}

/* Empty the trace buffer (of @instance, or the top-level one) */
static inline int ue_clear_trace(const char *instance)
{
	char rel[256];

	if (instance)
		snprintf(rel, sizeof(rel), "instances/%s/trace", instance);
	else
		snprintf(rel, sizeof(rel), "trace");

	return ue_write_file(rel, "", O_TRUNC);
}

#define UE_MAX_PATH	"/proc/sys/kernel/user_events_max"
/* The limits of each user, in the caller's user namespace */
#define UE_USER_EVENTS_PATH	"/proc/sys/user/max_user_events"
#define UE_USER_BITS_PATH	"/proc/sys/user/max_user_event_bits"

/* The number in sysctl file @path, or -1 */
static inline long ue_get_sysctl(const char *path)
{
	char buf[32];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd == -1)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';

	return strtol(buf, NULL, 10);
}

/* Set sysctl file @path to @val; 0 or errno */
static inline int ue_set_sysctl(const char *path, long val)
{
	char text[32];

	snprintf(text, sizeof(text), "%ld\n", val);

	return ue_write_path(path, text, strlen(text), 0);
}

/* kernel.user_events_max, or -1 */
static inline long ue_get_max(void)
{
	return ue_get_sysctl(UE_MAX_PATH);
}

/* Set kernel.user_events_max; 0 or errno */
static inline int ue_set_max(long max)
{
	return ue_set_sysctl(UE_MAX_PATH, max);
}

/*
 * userfaultfd: pages whose faults a test serves when it wants, or never.
 * Faults of the kernel on them (not only of user mode) go to the test.
 */
static inline int ue_uffd_open(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	/* poll() of a blocking userfaultfd always says POLLERR */
	int uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (uffd == -1)
		return -1;
	if (ioctl(uffd, UFFDIO_API, &api)) {
		close(uffd);
		return -1;
	}

	return uffd;
}

/* Have @uffd handle the missing pages of [@addr, @addr + @len); 0 or -1 */
static inline int ue_uffd_register(int uffd, void *addr, size_t len)
{
	struct uffdio_register reg = {
		.range = { .start = (unsigned long)addr, .len = len },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};

	return ioctl(uffd, UFFDIO_REGISTER, &reg);
}

/* The page of the next fault of @uffd, within @ms; 0 if none came */
static inline unsigned long ue_uffd_next_fault(int uffd, int ms)
{
	struct pollfd pfd = { .fd = uffd, .events = POLLIN };
	struct uffd_msg msg;

	if (poll(&pfd, 1, ms) != 1 || !(pfd.revents & POLLIN) ||
	    read(uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT)
		return 0;

	return msg.arg.pagefault.address & ~(unsigned long)(UE_PAGE_SIZE - 1);
}

/* Fill the missing page @dst of @uffd with a copy of the page @src */
static inline int ue_uffd_copy(int uffd, void *dst, const void *src)
{
	struct uffdio_copy copy = {
		.dst = (unsigned long)dst,
		.src = (unsigned long)src,
		.len = UE_PAGE_SIZE,
	};

	return ioctl(uffd, UFFDIO_COPY, &copy);
}

/*
 * The text after "NAME: " of every line event @name left in the trace
 * buffer, one per line, oldest first: "a=1 b=2\na=3 b=4\n".  An empty
 * string when there is none, NULL when the trace cannot be read.
 */
static inline char *ue_trace_collect(const char *instance, const char *name)
{
	char rel[256], key[128];
	char *trace, *line, *next, *out;
	size_t keylen, outlen = 0;

	if (instance)
		snprintf(rel, sizeof(rel), "instances/%s/trace", instance);
	else
		snprintf(rel, sizeof(rel), "trace");
	snprintf(key, sizeof(key), ": %s:", name);
	keylen = strlen(key);

	trace = ue_read_file(rel);
	if (!trace)
		return NULL;
	out = calloc(1, strlen(trace) + 1);
	if (!out) {
		free(trace);
		return NULL;
	}

	for (line = trace; *line; line = next) {
		char *hit, *text;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);

		if (line[0] == '#')
			continue;
		hit = strstr(line, key);
		if (!hit || (hit[keylen] != ' ' && hit[keylen] != '\0'))
			continue;
		text = hit + keylen;
		if (*text == ' ')
			text++;
		outlen += sprintf(out + outlen, "%s\n", text);
	}
	free(trace);

	return out;
}

/*
 * Assert that the trace of event @name (of @instance, or the top level)
 * holds exactly @want, as ue_trace_collect() gives it
 */
#define UE_ASSERT_TRACE(instance, name, want) do {			\
	char *__got = ue_trace_collect(instance, name);			\
									\
	ASSERT_TRUE(!!__got);						\
	ASSERT_STREQ(want, __got);					\
	free(__got);							\
} while (0)

/* Is @line one of the lines of @text (exact match)? */
static inline bool ue_has_line(const char *text, const char *line)
{
	size_t len = strlen(line);
	const char *p = text;

	while ((p = strstr(p, line))) {
		if ((p == text || p[-1] == '\n') &&
		    (p[len] == '\n' || p[len] == '\0'))
			return true;
		p++;
	}

	return false;
}

/*
 * Copy of the first line of @text that starts with @prefix once its leading
 * blanks are skipped (the blanks are not part of the copy); NULL if none.
 */
static inline char *ue_line_with_prefix(const char *text, const char *prefix)
{
	const char *line = text;

	while (line && *line) {
		const char *start = line + strspn(line, " \t");
		const char *end = strchr(line, '\n');

		if (!strncmp(start, prefix, strlen(prefix))) {
			size_t len = end ? (size_t)(end - start) : strlen(start);

			return strndup(start, len);
		}
		line = end ? end + 1 : NULL;
	}

	return NULL;
}

/*
 * Is "INDEX:NAME", followed by " # Used by USERS" unless @users is NULL,
 * a line of @text, the content of user_events_status?
 */
static inline bool ue_status_has(const char *text, __u32 index,
				 const char *name, const char *users)
{
	char line[256];

	snprintf(line, sizeof(line), "%u:%s%s%s", index, name,
		 users ? " # Used by " : "", users ? users : "");

	return ue_has_line(text, line);
}

/* The status page, mapped read-only from @status_fd; MAP_FAILED on error */
static inline __u8 *ue_map_status(int status_fd)
{
	return mmap(NULL, UE_PAGE_SIZE, PROT_READ, MAP_SHARED, status_fd, 0);
}

/*
 * Open user_events_status into *@fd and map its page read-only into
 * *@page; 0, or errno with what failed -1 or MAP_FAILED
 */
static inline int ue_open_status_page(int *fd, __u8 **page)
{
	*page = MAP_FAILED;
	*fd = ue_open_status();
	if (*fd == -1)
		return errno;
	*page = ue_map_status(*fd);
	if (*page == MAP_FAILED)
		return errno;

	return 0;
}

/* Undo ue_open_status_page(), as far as it got */
static inline void ue_close_status_page(int fd, __u8 *page)
{
	if (page && page != MAP_FAILED)
		munmap(page, UE_PAGE_SIZE);
	if (fd != -1)
		close(fd);
}

/* Parse the counters at the end of @text, read from user_events_status */
static inline bool ue_parse_status_counts(const char *text, int *active,
					  int *busy, int *max)
{
	const char *p = strstr(text, "\nActive: ");

	return p && sscanf(p, "\nActive: %d\nBusy: %d\nMax: %d",
			   active, busy, max) == 3;
}

/* Counters at the end of user_events_status; 0 or errno */
static inline int ue_status_counts(int *active, int *busy, int *max)
{
	char *text = ue_read_file("user_events_status");
	int ret;

	if (!text)
		return errno;
	ret = ue_parse_status_counts(text, active, busy, max) ? 0 : EPROTO;
	free(text);

	return ret;
}

/*
 * For a FIXTURE_TEARDOWN(): fail the test unless the Active count of
 * user_events_status is back to @active0, what it was before the test
 */
static inline void ue_expect_active(struct __test_metadata *_metadata,
				    int active0)
{
	int active, busy, max;

	if (!ue_status_counts(&active, &busy, &max) && active != active0) {
		TH_LOG("Active is %d after the test, was %d", active, active0);
		EXPECT_EQ(active0, active);
	}
}

/* The ftrace event id of @name, or -1 */
static inline int ue_event_id(const char *name)
{
	char *text = ue_read_file(ue_event_file(NULL, name, "id"));
	int id = -1;

	if (text) {
		id = atoi(text);
		free(text);
	}

	return id;
}

/* Remove the triggers (hist and others) of event @name */
static inline int ue_clear_triggers(const char *name)
{
	/* Opening the trigger file with O_TRUNC removes them all */
	return ue_write_file(ue_event_file(NULL, name, "trigger"), "", O_TRUNC);
}

/*
 * Remove every user event of event system @system (user_events or
 * user_events_multi) whose name starts with @prefix, whatever state a test
 * left it in (disabling it and removing its triggers if needed).  Callers
 * close their user_events_data fds first.
 */
static inline void ue_cleanup_system_events(const char *system,
					    const char *prefix)
{
	char rel[256], **names = NULL;
	size_t count = 0, cap = 0, i;
	struct dirent *de;
	DIR *dir;

	snprintf(rel, sizeof(rel), "events/%s", system);
	dir = opendir(ue_path(rel));
	if (!dir)
		return;

	/* Collect first: removing entries while reading the directory skips some */
	while ((de = readdir(dir))) {
		if (de->d_type != DT_DIR ||
		    strncmp(de->d_name, prefix, strlen(prefix)))
			continue;
		if (count == cap) {
			char **more = realloc(names, (cap + 64) * sizeof(*names));

			if (!more)
				break;
			names = more;
			cap += 64;
		}
		names[count] = strdup(de->d_name);
		if (names[count])
			count++;
	}
	closedir(dir);

	for (i = 0; i < count; i++) {
		if (ue_del(names[i]) == EBUSY) {
			ue_write_file(ue_system_event_file(system, NULL,
							   names[i], "enable"),
				      "0\n", O_TRUNC);
			/* O_TRUNC on the trigger file removes them all */
			ue_write_file(ue_system_event_file(system, NULL,
							   names[i], "trigger"),
				      "", O_TRUNC);
			ue_del(names[i]);
		}
		free(names[i]);
	}
	free(names);
}

/* ue_cleanup_system_events() of the user_events system */
static inline void ue_cleanup_events(const char *prefix)
{
	ue_cleanup_system_events(USER_EVENTS_SYSTEM, prefix);
}

/* Empty the top-level error_log */
static inline int ue_clear_error_log(void)
{
	return ue_write_file("error_log", "\n", O_TRUNC);
}

/* The newest user_events entry of error_log, split into its parts */
struct ue_log_entry {
	char msg[128];		/* text after "user_events: error: " */
	char cmd[4200];		/* the command as logged */
	int caret;		/* index into cmd the caret points at */
};

/* 0 when an entry was found, ENOENT when there is none, or errno */
static inline int ue_last_error(struct ue_log_entry *e)
{
	static const char tag[] = "user_events: error: ";
	char *text = ue_read_file("error_log");
	char *p, *last = NULL, *eol;
	size_t len;
	int ret = ENOENT;

	if (!text)
		return errno;

	for (p = text; (p = strstr(p, tag)); p++)
		last = p;
	if (!last)
		goto out;
	ret = EPROTO;

	memset(e, 0, sizeof(*e));
	p = last + strlen(tag);
	eol = strchr(p, '\n');
	if (!eol)
		goto out;
	len = eol - p;
	if (len >= sizeof(e->msg))
		len = sizeof(e->msg) - 1;
	memcpy(e->msg, p, len);

	p = eol + 1;
	if (strncmp(p, UE_CMD_PREFIX, strlen(UE_CMD_PREFIX)))
		goto out;
	p += strlen(UE_CMD_PREFIX);
	eol = strchr(p, '\n');
	if (!eol)
		goto out;
	len = eol - p;
	if (len >= sizeof(e->cmd))
		len = sizeof(e->cmd) - 1;
	memcpy(e->cmd, p, len);

	p = eol + 1;
	len = strspn(p, " ");
	if (p[len] != '^' || len < strlen(UE_CMD_PREFIX))
		goto out;
	e->caret = len - strlen(UE_CMD_PREFIX);
	ret = 0;
out:
	free(text);

	return ret;
}

/*
 * Helpers of the hardening tests (stress, fuzz, permissions, limits and
 * races).
 */

/*
 * A "# " line of the test's report on stdout, flushed at once: the test
 * processes of the harness end with _exit(), which drops buffered output.
 */
#define ue_msg(fmt, ...) do {						\
	ksft_print_msg(fmt, ##__VA_ARGS__);				\
	fflush(stdout);							\
} while (0)

/* Integer value of environment variable @name; @def when unset or bad */
static inline long ue_env_long(const char *name, long def)
{
	const char *text = getenv(name);
	char *end;
	long val;

	if (!text || !*text)
		return def;
	errno = 0;
	val = strtol(text, &end, 0);
	if (errno || *end)
		return def;

	return val;
}

/* Milliseconds of CLOCK_MONOTONIC */
static inline long long ue_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);

	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Remove trace instance @name (which disables its events); 0 or errno */
static inline int ue_instance_remove(const char *name)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "instances/%s", name);
	if (rmdir(ue_path(rel)) && errno != ENOENT)
		return errno;

	return 0;
}

/* Create trace instance @name, removing a leftover of it first */
static inline int ue_instance_create(const char *name)
{
	char rel[256];
	int ret = ue_instance_remove(name);

	if (ret)
		return ret;
	snprintf(rel, sizeof(rel), "instances/%s", name);
	if (mkdir(ue_path(rel), 0750))
		return errno;

	return 0;
}

/*
 * For a FIXTURE_SETUP(): remove what an earlier run may have left, trace
 * instance @instance (unless NULL) and the user events whose names start
 * with @prefix, then note the Active count of user_events_status in
 * *@active0 for ue_expect_active()
 */
static inline void ue_setup_clean(struct __test_metadata *_metadata,
				  const char *instance, const char *prefix,
				  int *active0)
{
	int busy, max;

	if (instance)
		ue_instance_remove(instance);
	ue_cleanup_events(prefix);
	ASSERT_EQ(0, ue_status_counts(active0, &busy, &max));
}

/* Set buffer_size_kb (per CPU) of @instance, or of the top level */
static inline int ue_set_buffer_kb(const char *instance, unsigned int kb)
{
	char rel[256], text[32];

	if (instance)
		snprintf(rel, sizeof(rel), "instances/%s/buffer_size_kb",
			 instance);
	else
		snprintf(rel, sizeof(rel), "buffer_size_kb");
	snprintf(text, sizeof(text), "%u\n", kb);

	return ue_write_file(rel, text, O_TRUNC);
}

/* Grow the top-level buffer to at least @kb per CPU; 0 or an errno */
static inline int ue_ensure_top_buffer_kb(unsigned int kb)
{
	char *text = ue_read_file("buffer_size_kb");
	unsigned long cur;

	if (!text)
		return errno;
	/* "7 (expanded: 1408)" until first expanded: the current size first */
	cur = strtoul(text, NULL, 10);
	free(text);
	if (cur >= kb)
		return 0;

	return ue_set_buffer_kb(NULL, kb);
}

/* Records of event @name in the trace of @instance; -1 (errno) on error */
static inline int ue_trace_count(const char *instance, const char *name)
{
	char *text = ue_trace_collect(instance, name);
	int count = 0;
	char *p;

	if (!text)
		return -1;
	for (p = text; *p; p++)
		count += *p == '\n';
	free(text);

	return count;
}

/*
 * Set @used[i] (UE_PAGE_SIZE bytes, cleared first) for the status index i
 * of every user event that user_events_status lists.  Returns the number of
 * events listed, or -errno.
 */
static inline int ue_status_indexes(__u8 *used)
{
	char *text = ue_read_file("user_events_status");
	char *line, *next;
	int count = 0;

	if (!text)
		return -errno;
	memset(used, 0, UE_PAGE_SIZE);
	for (line = text; *line; line = next) {
		unsigned int index;
		char colon;

		next = strchr(line, '\n');
		next = next ? next + 1 : line + strlen(line);
		if (sscanf(line, "%u%c", &index, &colon) != 2 || colon != ':')
			continue;
		if (index < UE_PAGE_SIZE)
			used[index] = 1;
		count++;
	}
	free(text);

	return count;
}

/*
 * Errors found by the threads of a test while it runs, logged at its end:
 * the first UE_MAX_ERRORS of them, and how many there were in all.
 */
#define UE_MAX_ERRORS		16

struct ue_errors {
	pthread_mutex_t lock;
	int count;
	char msg[UE_MAX_ERRORS][256];
};

static inline void ue_errors_init(struct ue_errors *e)
{
	pthread_mutex_init(&e->lock, NULL);
	e->count = 0;
}

/* Record an error (printf() format); any thread may call it */
static inline void ue_fail(struct ue_errors *e, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&e->lock);
	if (e->count < UE_MAX_ERRORS) {
		va_start(ap, fmt);
		vsnprintf(e->msg[e->count], sizeof(e->msg[0]), fmt, ap);
		va_end(ap);
	}
	e->count++;
	pthread_mutex_unlock(&e->lock);
}

/* Log the recorded errors to the report of the running test */
static inline void ue_errors_report(struct __test_metadata *_metadata,
				    const struct ue_errors *e)
{
	int i;

	for (i = 0; i < e->count && i < UE_MAX_ERRORS; i++)
		TH_LOG("%s", e->msg[i]);
	if (e->count > UE_MAX_ERRORS)
		TH_LOG("... and %d more errors", e->count - UE_MAX_ERRORS);
}

/* Threads of a test, started one by one and joined all at once */
#define UE_MAX_THREADS		16

struct ue_threads {
	pthread_t id[UE_MAX_THREADS];
	int count;
};

/* Run @fn(@arg) in one more thread of @t; 0 or an errno value */
static inline int ue_thread_start(struct ue_threads *t, void *(*fn)(void *),
				  void *arg)
{
	int ret = EAGAIN;

	if (t->count < UE_MAX_THREADS)
		ret = pthread_create(&t->id[t->count], NULL, fn, arg);
	if (!ret)
		t->count++;

	return ret;
}

/* Wait for every thread of @t to end */
static inline void ue_threads_join(struct ue_threads *t)
{
	while (t->count > 0)
		pthread_join(t->id[--t->count], NULL);
}

/*
 * A perf event on tracepoint @id that samples every hit with its raw
 * record, and with its time if @timed, for task @pid on @cpu as
 * perf_event_open() takes them; the fd, or -1 and errno
 */
static inline int ue_perf_open_sampling(int id, pid_t pid, int cpu,
					bool timed)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.size = sizeof(attr);
	attr.config = id;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_RAW | (timed ? PERF_SAMPLE_TIME : 0);

	return syscall(__NR_perf_event_open, &attr, pid, cpu, -1,
		       PERF_FLAG_FD_CLOEXEC);
}

/* ue_perf_open_sampling() of the raw record alone */
static inline int ue_perf_open(int id, pid_t pid, int cpu)
{
	return ue_perf_open_sampling(id, pid, cpu, false);
}

/* A perf event of this task with its ring buffer mapped */
struct ue_perf_ring {
	int fd;			/* -1 when not open */
	void *map;
	size_t size;		/* of the mapping: a header page, then data */
};

/*
 * ue_perf_open_sampling() for this task on any CPU, with a ring buffer of
 * @pages data pages (a power of two); 0, or errno with ring->fd -1
 */
static inline int ue_perf_ring_open_sampling(struct ue_perf_ring *ring,
					     int id, unsigned int pages,
					     bool timed)
{
	int err;

	ring->size = (1 + pages) * UE_PAGE_SIZE;
	ring->fd = ue_perf_open_sampling(id, 0, -1, timed);
	if (ring->fd == -1)
		return errno;
	ring->map = mmap(NULL, ring->size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 ring->fd, 0);
	if (ring->map == MAP_FAILED) {
		err = errno;
		close(ring->fd);
		ring->fd = -1;
		return err;
	}

	return 0;
}

/* ue_perf_ring_open_sampling() of the raw record alone */
static inline int ue_perf_ring_open(struct ue_perf_ring *ring, int id,
				    unsigned int pages)
{
	return ue_perf_ring_open_sampling(ring, id, pages, false);
}

/* Unmap and close @ring, if it is open */
static inline void ue_perf_ring_close(struct ue_perf_ring *ring)
{
	if (ring->fd == -1)
		return;
	munmap(ring->map, ring->size);
	close(ring->fd);
	ring->fd = -1;
}

/*
 * Copy the raw data of sample @nth (0-based) of @ring into @raw, at most
 * @max bytes, and its time into *@time if the ring's samples have one
 * (@time not NULL: ue_perf_ring_open_sampling() with @timed); returns
 * the raw data's size, or -1 when there are not that many samples.
 * Records may wrap around the end of the data area, so bytes are copied
 * one by one.
 */
static inline int ue_perf_sample(const struct ue_perf_ring *ring, int nth,
				 __u64 *time, void *raw, size_t max)
{
	struct perf_event_mmap_page *page = ring->map;
	const __u8 *data = (__u8 *)ring->map + page->data_offset;
	__u64 size = page->data_size, head, pos;
	struct perf_event_header hdr;
	__u32 raw_size;
	size_t i;

	head = __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE);
	for (pos = page->data_tail; pos < head; pos += hdr.size) {
		for (i = 0; i < sizeof(hdr); i++)
			((__u8 *)&hdr)[i] = data[(pos + i) % size];
		if (!hdr.size)
			break;
		if (hdr.type != PERF_RECORD_SAMPLE || nth--)
			continue;

		/* The time, if any, then the raw data's size and bytes */
		pos += sizeof(hdr);
		for (i = 0; time && i < sizeof(*time); i++)
			((__u8 *)time)[i] = data[(pos + i) % size];
		if (time)
			pos += sizeof(*time);
		for (i = 0; i < sizeof(raw_size); i++)
			((__u8 *)&raw_size)[i] = data[(pos + i) % size];
		pos += sizeof(raw_size);
		for (i = 0; i < raw_size && i < max; i++)
			((__u8 *)raw)[i] = data[(pos + i) % size];
		return raw_size;
	}

	return -1;
}

/* ue_perf_sample() of a ring whose samples have no time */
static inline int ue_perf_raw_sample(const struct ue_perf_ring *ring, int nth,
				     void *raw, size_t max)
{
	return ue_perf_sample(ring, nth, NULL, raw, max);
}

/*
 * eBPF without a BPF toolchain: programs of raw instructions loaded with
 * the bpf() system call, and array maps they leave their results in.
 */
#define UE_BPF_INSN(c, d, s, o, i)					\
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
			    .off = (o), .imm = (i) })

/*
 * Put at @insn the instructions of r0 = bpf_map_lookup_elem(@map_fd,
 * r10 + @key_off), which lose r1 to r5; the place after them
 */
static inline struct bpf_insn *ue_bpf_map_lookup(struct bpf_insn *insn,
						 int map_fd, int key_off)
{
	*insn++ = UE_BPF_INSN(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0);
	*insn++ = UE_BPF_INSN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, key_off);
	/* The map's address takes two instructions */
	*insn++ = UE_BPF_INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD,
			      0, map_fd);
	*insn++ = UE_BPF_INSN(0, 0, 0, 0, 0);
	*insn++ = UE_BPF_INSN(BPF_JMP | BPF_CALL, 0, 0, 0,
			      BPF_FUNC_map_lookup_elem);

	return insn;
}

static inline int ue_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* An array map of @entries values of @value_size bytes; its fd or -1 */
static inline int ue_bpf_array_create(__u32 value_size, __u32 entries)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = sizeof(__u32);
	attr.value_size = value_size;
	attr.max_entries = entries;

	return ue_bpf(BPF_MAP_CREATE, &attr);
}

/* Copy value @key of array map @map_fd to @value; 0 or errno */
static inline int ue_bpf_array_read(int map_fd, __u32 key, void *value)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = map_fd;
	attr.key = (uintptr_t)&key;
	attr.value = (uintptr_t)value;

	return ue_bpf(BPF_MAP_LOOKUP_ELEM, &attr) ? errno : 0;
}

/*
 * Load @insns as a tracepoint program; its fd, or -1 with the verifier's
 * log in @log (unless @log is NULL)
 */
static inline int ue_bpf_tp_load(const struct bpf_insn *insns,
				 unsigned int insn_cnt, char *log,
				 size_t log_size)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_TRACEPOINT;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = insn_cnt;
	attr.license = (uintptr_t)"GPL";
	if (log) {
		log[0] = '\0';
		attr.log_buf = (uintptr_t)log;
		attr.log_size = log_size;
		attr.log_level = 1;
	}

	return ue_bpf(BPF_PROG_LOAD, &attr);
}

/* This task's perf event of event @id running program @prog_fd; or -1 */
static inline int ue_perf_open_bpf(int id, int prog_fd)
{
	int fd = ue_perf_open(id, 0, -1);

	if (fd == -1)
		return -1;
	if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd) ||
	    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}

	return fd;
}

/*
 * Event probes (eprobes) on user events: "e:GROUP/NAME SYSTEM/EVENT ..."
 * lines of dynamic_events.
 */

/* "events/GROUP/NAME/FILE" of eprobe @group/@name */
static inline const char *ue_eprobe_file(const char *group, const char *name,
					 const char *file)
{
	static __thread char rel[4][384];
	static __thread int slot;
	char *buf = rel[slot++ & 3];

	snprintf(buf, sizeof(rel[0]), "events/%s/%s/%s", group, name, file);

	return buf;
}

/* Enable or disable eprobe @group/@name in the top-level buffer */
static inline int ue_eprobe_enable(const char *group, const char *name,
				   bool on)
{
	return ue_write_file(ue_eprobe_file(group, name, "enable"),
			     on ? "1\n" : "0\n", O_TRUNC);
}

/*
 * Remove eprobe @group/@name, disabling it first, whatever state a test
 * left it in; 0 or an errno (ENOENT when there is none)
 */
static inline int ue_eprobe_remove(const char *group, const char *name)
{
	char cmd[256];

	ue_eprobe_enable(group, name, false);
	snprintf(cmd, sizeof(cmd), "-:%s/%s", group, name);

	return ue_dyn(cmd);
}

/*
 * Handing tracefs files to a group, as an administrator would, and giving
 * them back: the owner and mode of each file or directory changed are
 * saved the first time, and ue_restore_attrs() restores them all.
 */
#define UE_MAX_SAVED		8

struct ue_saved_attr {
	char path[512];
	uid_t uid;
	gid_t gid;
	mode_t mode;
};

struct ue_saved_attrs {
	struct ue_saved_attr saved[UE_MAX_SAVED];
	int nsaved;
};

/* Remember the owner and mode of @path, unless they are saved already */
static inline int ue_save_attr(struct ue_saved_attrs *attrs, const char *path)
{
	struct ue_saved_attr *s;
	struct stat st;
	int i;

	for (i = 0; i < attrs->nsaved; i++) {
		if (!strcmp(attrs->saved[i].path, path))
			return 0;
	}
	if (attrs->nsaved == UE_MAX_SAVED || stat(path, &st))
		return -1;
	s = &attrs->saved[attrs->nsaved++];
	snprintf(s->path, sizeof(s->path), "%s", path);
	s->uid = st.st_uid;
	s->gid = st.st_gid;
	s->mode = st.st_mode & 07777;

	return 0;
}

/* Give @path to group @gid and add @bits to its mode; 0 or errno */
static inline int ue_grant(struct ue_saved_attrs *attrs, const char *path,
			   gid_t gid, mode_t bits)
{
	struct stat st;

	if (ue_save_attr(attrs, path) || stat(path, &st) ||
	    chown(path, -1, gid) || chmod(path, (st.st_mode & 07777) | bits))
		return errno ?: EIO;

	return 0;
}

/*
 * Let the files be reached: search permission for others on the tracefs
 * mount and its parents that others cannot search, as an administrator
 * gives it who hands some files of tracefs to a group (their own groups
 * and modes decide who opens them); 0 or errno.  The directories keep
 * their group: the tracefs of Linux 6.12 gives the group of its root to
 * every file that was not given one of its own.
 */
static inline int ue_grant_dirs(struct ue_saved_attrs *attrs)
{
	char dir[512], *slash;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", ue_root());
	while (dir[0]) {
		if (stat(dir, &st))
			return errno;
		if (!(st.st_mode & 0001) &&
		    (ue_save_attr(attrs, dir) ||
		     chmod(dir, (st.st_mode & 07777) | 0001)))
			return errno ?: EIO;
		slash = strrchr(dir, '/');
		if (!slash)
			break;
		*slash = '\0';
	}

	return 0;
}

/* Give back the owner and mode of everything saved, newest first */
static inline void ue_restore_attrs(struct ue_saved_attrs *attrs)
{
	struct ue_saved_attr *s;

	while (attrs->nsaved > 0) {
		s = &attrs->saved[--attrs->nsaved];
		if (chown(s->path, s->uid, s->gid) || chmod(s->path, s->mode))
			fprintf(stderr, "# cannot restore %s: %s\n", s->path,
				strerror(errno));
	}
}

/* The unprivileged user and the group that tests hand the files to */
#define UE_NOBODY	65534
#define UE_TEST_GID	65533

/*
 * In a child: keep no capability but CAP_PERFMON if @perfmon (and it has
 * it), whatever the uid; 0, or -1 and errno
 */
static inline int ue_set_caps(bool perfmon)
{
	struct __user_cap_header_struct head = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	if (perfmon) {
		data[CAP_TO_INDEX(CAP_PERFMON)].effective = CAP_TO_MASK(CAP_PERFMON);
		data[CAP_TO_INDEX(CAP_PERFMON)].permitted = CAP_TO_MASK(CAP_PERFMON);
	}
	return syscall(SYS_capset, &head, data);
}

/*
 * In a child: become @uid, gid UE_NOBODY, in group UE_TEST_GID, keeping
 * nothing but CAP_PERFMON if @keep_perfmon; 0, or -1 and errno
 */
static inline int ue_become(uid_t uid, bool keep_perfmon)
{
	gid_t groups[1] = { UE_TEST_GID };

	if (keep_perfmon && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0))
		return -1;
	if (setgroups(1, groups) || setgid(UE_NOBODY) || setuid(uid))
		return -1;
	if (getuid() != uid || geteuid() != uid) {
		errno = EPERM;
		return -1;
	}
	return keep_perfmon ? ue_set_caps(true) : 0;
}

/* ue_become() of uid UE_NOBODY */
static inline int ue_become_nobody(bool keep_perfmon)
{
	return ue_become(UE_NOBODY, keep_perfmon);
}

/*
 * The debug kernel (lockdep, KASAN, kmemleak) under emulation is about ten
 * times slower: the hardening tests run fewer rounds there.  Lockdep shows
 * as /proc/lockdep, kmemleak as its debugfs file.
 */
static inline bool ue_debug_kernel(void)
{
	static int debug = -1;

	if (debug < 0)
		debug = !access("/proc/lockdep", F_OK) ||
			!access("/sys/kernel/debug/kmemleak", F_OK);

	return debug;
}

/* @n, divided by @div in the debug kernel (at least 1) */
static inline long ue_scaled(long n, long div)
{
	if (!ue_debug_kernel() || div <= 1)
		return n;

	return n / div > 0 ? n / div : 1;
}

/*
 * How long to wait for what the kernel does in the background (a bit
 * written by its worker, an automatic deletion) before calling it lost:
 * they take milliseconds; only a kernel that never does them, not a
 * slow machine, waits this long.
 */
#define UE_WAIT_MS		120000

/* The @size-byte (4 or 8) value at @addr */
static inline __u64 ue_load(const void *addr, int size)
{
	if (size == 4)
		return __atomic_load_n((const __u32 *)addr, __ATOMIC_SEQ_CST);

	return __atomic_load_n((const __u64 *)addr, __ATOMIC_SEQ_CST);
}

static inline void ue_store(void *addr, int size, __u64 val)
{
	if (size == 4)
		__atomic_store_n((__u32 *)addr, (__u32)val, __ATOMIC_SEQ_CST);
	else
		__atomic_store_n((__u64 *)addr, val, __ATOMIC_SEQ_CST);
}

/* Bit @bit of the @size-byte value at @addr */
static inline bool ue_bit(const void *addr, int size, int bit)
{
	return (ue_load(addr, size) >> bit) & 1;
}

/*
 * Wait until bit @bit of the value at @addr is @want, as it becomes when
 * the kernel had to fault its page in; is it?
 */
static inline bool ue_wait_bit(const void *addr, int size, int bit, bool want)
{
	long long end = ue_now_ms() + UE_WAIT_MS;

	while (ue_bit(addr, size, bit) != want && ue_now_ms() < end)
		usleep(1000);

	return ue_bit(addr, size, bit) == want;
}

/* Number of user events of all kinds, from dynamic_events; -1 on error */
static inline int ue_count_events(void)
{
	char *text = ue_read_file("dynamic_events");
	char *line, *next;
	int count = 0;

	if (!text)
		return -1;
	for (line = text; *line; line = next) {
		next = strchr(line, '\n');
		next = next ? next + 1 : line + strlen(line);
		if (!strncmp(line, "u:", 2))
			count++;
	}
	free(text);

	return count;
}

/*
 * A child process the test talks to over two pipes, one character per
 * message.  ue_child_start() runs a function in it, which talks with
 * ue_child_say() and ue_child_hear(); the test talks with ue_parent_say()
 * and ue_parent_hear(), and reaps it with ue_child_finish().  The pipes
 * are close-on-exec: the parent reads EOF once the child exited or
 * exec'd.  The children running are remembered, for ue_child_kill_all()
 * in a teardown: a test that fails half-way leaves no child behind.
 */
struct ue_child {
	pid_t pid;
	int to_child;		/* parent: write end */
	int from_child;		/* parent: read end */
	int in;			/* child: read end */
	int out;		/* child: write end */
};

/* Children a test may have running at once */
#define UE_MAX_CHILDREN	4

/* The pids of the children running, 0 in a free slot */
static inline pid_t *ue_children(void)
{
	static pid_t pids[UE_MAX_CHILDREN];

	return pids;
}

/* In a child: report a failed step on stderr, return it as exit code */
static inline int ue_child_fail(int step, const char *what)
{
	fprintf(stderr, "# child %d (uid %d): step %d: %s (errno: %s)\n",
		getpid(), getuid(), step, what, strerror(errno));

	return step;
}

/* In a child: tell the parent @what */
static inline bool ue_child_say(struct ue_child *c, char what)
{
	return write(c->out, &what, 1) == 1;
}

/* In a child: the next character the parent sends, or -1 (EOF) */
static inline int ue_child_hear(struct ue_child *c)
{
	char what;

	return read(c->in, &what, 1) == 1 ? what : -1;
}

/* In the parent: tell the child @what */
static inline bool ue_parent_say(struct ue_child *c, char what)
{
	return write(c->to_child, &what, 1) == 1;
}

/* In the parent: the next character the child sends, or -1 (EOF) */
static inline int ue_parent_hear(struct ue_child *c)
{
	char what;

	return read(c->from_child, &what, 1) == 1 ? what : -1;
}

/*
 * Run @fn(@c, @arg) in a child, whose exit code it gives; 0 or errno.
 * The pipes come from the system call: pipe2() is only declared where
 * _GNU_SOURCE comes before the first include, which not every test has.
 */
static inline int ue_child_start(struct ue_child *c,
				 int (*fn)(struct ue_child *c, void *arg),
				 void *arg)
{
	pid_t *pids = ue_children();
	int p2c[2], c2p[2], slot, ret;

	for (slot = 0; slot < UE_MAX_CHILDREN && pids[slot]; slot++)
		;
	/* No slot: a teardown could not kill it */
	if (slot == UE_MAX_CHILDREN) {
		errno = ENOSPC;
		return errno;
	}
	if (syscall(SYS_pipe2, p2c, O_CLOEXEC))
		return errno;
	if (syscall(SYS_pipe2, c2p, O_CLOEXEC)) {
		ret = errno;
		close(p2c[0]);
		close(p2c[1]);
		return ret;
	}
	fflush(stdout);
	fflush(stderr);
	c->pid = fork();
	if (c->pid == -1) {
		ret = errno;
		close(p2c[0]);
		close(p2c[1]);
		close(c2p[0]);
		close(c2p[1]);
		return ret;
	}
	if (c->pid == 0) {
		/* The parent's other children are not this one's to kill */
		memset(pids, 0, UE_MAX_CHILDREN * sizeof(*pids));
		close(p2c[1]);
		close(c2p[0]);
		c->in = p2c[0];
		c->out = c2p[1];
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(fn(c, arg));
	}
	close(p2c[0]);
	close(c2p[1]);
	c->to_child = p2c[1];
	c->from_child = c2p[0];
	pids[slot] = c->pid;

	return 0;
}

/* Close the pipes and reap the child: its exit code, or -1 */
static inline int ue_child_finish(struct ue_child *c)
{
	pid_t *pids = ue_children();
	int status, i;

	close(c->to_child);
	close(c->from_child);
	for (i = 0; i < UE_MAX_CHILDREN; i++) {
		if (pids[i] == c->pid)
			pids[i] = 0;
	}
	if (waitpid(c->pid, &status, 0) != c->pid || !WIFEXITED(status))
		return -1;

	return WEXITSTATUS(status);
}

/*
 * In a teardown: kill and reap the children that a failed test left
 * running, with the registrations and whatever else they hold
 */
static inline void ue_child_kill_all(void)
{
	pid_t *pids = ue_children();
	int i;

	for (i = 0; i < UE_MAX_CHILDREN; i++) {
		if (pids[i] > 0) {
			kill(pids[i], SIGKILL);
			waitpid(pids[i], NULL, 0);
			pids[i] = 0;
		}
	}
}

#ifdef USER_EVENTS_ENABLE_BIT_ABI
/*
 * Register @cmd with the enable bit layout: bit @bit of the @size-byte
 * value at @addr, USER_EVENT_REG_* @flags; 0 or errno.  *@index, unless
 * NULL, gets the write index.
 */
static inline int ue_reg_bit(int fd, const char *cmd, void *addr, int size,
			     int bit, int flags, __u32 *index)
{
	struct user_reg reg;

	memset(&reg, 0, sizeof(reg));
	reg.size = sizeof(reg);
	reg.enable_bit = bit;
	reg.enable_size = size;
	reg.flags = flags;
	reg.enable_addr = (__u64)(uintptr_t)addr;
	reg.name_args = (__u64)(uintptr_t)cmd;
	reg.write_index = ~0U;
	if (ioctl(fd, DIAG_IOCSREG, &reg) == -1)
		return errno;
	if (index)
		*index = reg.write_index;

	return 0;
}

/* DIAG_IOCSUNREG of bit @bit at @addr; 0 or errno */
static inline int ue_unreg_bit(int fd, void *addr, int bit)
{
	struct user_unreg unreg;

	memset(&unreg, 0, sizeof(unreg));
	unreg.size = sizeof(unreg);
	unreg.disable_bit = bit;
	unreg.disable_addr = (__u64)(uintptr_t)addr;
	if (ioctl(fd, DIAG_IOCSUNREG, &unreg) == -1)
		return errno;

	return 0;
}

/*
 * In a forked child: unregister its copies of bits 0 to @bits - 1 of
 * the u32 at @word, which the parent registered on @fd.  Returns how
 * many it could, 100 + the first bit found set with no registration
 * behind it (nothing would ever clear it), or 99 on another error: what
 * the child exits with, for the parent to check.
 */
static inline int ue_unreg_copied_bits(__u32 *word, int fd, int bits)
{
	int bit, copies = 0;

	for (bit = 0; bit < bits; bit++) {
		switch (ue_unreg_bit(fd, word, bit)) {
		case 0:
			copies++;
			break;
		case ENOENT:
			if (ue_bit(word, 4, bit))
				return 100 + bit;
			break;
		default:
			return 99;
		}
	}
	return copies;
}

#ifdef UE_EN_FIXTURE
/*
 * FIXTURE(en) of the programs that test the enable bit ABI (enable_test,
 * and lifetime_test for the lifetime of the events it creates), and what
 * their tests share.  Such a program defines UE_EN_FIXTURE, and
 * USER_EVENTS_ENABLE_BIT_ABI, before including this file.  Each test
 * gets an fd of user_events_data, the status page and a resident page
 * for enable bits; the teardown undoes what the test left: children,
 * enable bits, kernel.user_events_max, the owners and modes it changed,
 * the events named PREFIX... in both systems, and what held them.  It is
 * part of each program as if written there: its variables and functions
 * are static, not inline, and both programs use every one of them.
 */
#define PREFIX		"ue_en_"
#define MULTI		USER_EVENTS_MULTI_SYSTEM
#define INSTANCE	"ue_en_inst"
#define SENTINEL	PREFIX "gc_sentinel"
/* Room in the top-level buffer for the few records the tests read back */
#define MIN_BUFFER_KB	64
/* The tests that wait for children or workers: slow in a debug kernel */
#define LONG_TIMEOUT	300
/* The eprobe and the trigger source event that hold events of the tests */
#define EP_GROUP	"ue_ep"
#define EP_NAME		PREFIX "ep"
#define TRIG_SRC	PREFIX "trig_src"

/*
 * Enable or disable event @name for ftrace (in @instance, or the top
 * level); the value at @p must then be @want
 */
#define EN_SWITCH(instance, name, on, p, want) do {			\
	ASSERT_EQ(0, ue_enable(instance, name, on));			\
	ASSERT_EQ(want, *(p));						\
} while (0)

/*
 * The enable bits this process registered, unregistered at teardown:
 * they belong to the address space, which outlives the test's fds.
 */
#define MAX_REGS	64

static struct {
	__u64 addr;
	__u8 bit;
} en_regs[MAX_REGS];
static int en_nregs;

static void en_track(__u64 addr, __u8 bit)
{
	if (en_nregs < MAX_REGS) {
		en_regs[en_nregs].addr = addr;
		en_regs[en_nregs].bit = bit;
		en_nregs++;
	}
}

static void en_untrack(__u64 addr, __u8 bit)
{
	int i;

	for (i = 0; i < en_nregs; i++) {
		if (en_regs[i].addr == addr && en_regs[i].bit == bit) {
			en_regs[i] = en_regs[--en_nregs];
			return;
		}
	}
}

/* ue_reg_bit(), tracking the registration for the teardown */
static int en_reg(int fd, const char *cmd, void *addr, int size, int bit,
		  int flags, __u32 *index)
{
	int ret = ue_reg_bit(fd, cmd, addr, size, bit, flags, index);

	if (!ret)
		en_track((uintptr_t)addr, bit);

	return ret;
}

/* ue_unreg_bit(), forgetting the registration */
static int en_unreg(int fd, void *addr, int bit)
{
	int ret = ue_unreg_bit(fd, addr, bit);

	if (!ret)
		en_untrack((uintptr_t)addr, bit);

	return ret;
}

/* Remove the registrations the test left */
static void en_unreg_all(void)
{
	struct user_unreg unreg;
	int fd = ue_open_data();

	if (fd == -1)
		return;
	while (en_nregs > 0) {
		en_nregs--;
		memset(&unreg, 0, sizeof(unreg));
		unreg.size = sizeof(unreg);
		unreg.disable_bit = en_regs[en_nregs].bit;
		unreg.disable_addr = en_regs[en_nregs].addr;
		ioctl(fd, DIAG_IOCSUNREG, &unreg);
	}
	close(fd);
}

/*
 * Wait at most @ms milliseconds until event @name of @system is gone
 * (deleted automatically); is it?
 */
static bool en_wait_gone_ms(const char *system, const char *name, long ms)
{
	long long end = ue_now_ms() + ms;
	char rel[256];

	snprintf(rel, sizeof(rel), "events/%s/%s", system, name);
	while (!access(ue_path(rel), F_OK) && ue_now_ms() < end)
		usleep(1000);

	return access(ue_path(rel), F_OK) && errno == ENOENT;
}

static bool en_wait_gone_in(const char *system, const char *name)
{
	return en_wait_gone_ms(system, name, UE_WAIT_MS);
}

static bool en_wait_gone(const char *name)
{
	return en_wait_gone_in(USER_EVENTS_SYSTEM, name);
}

/* Remove every event of the tests, in both systems */
static void en_cleanup(void)
{
	/* What holds events of the tests, besides fds and enable bits */
	ue_eprobe_remove(EP_GROUP, EP_NAME);
	ue_clear_triggers(TRIG_SRC);
	ue_cleanup_events(PREFIX);
	ue_cleanup_system_events(MULTI, PREFIX);
}

/* Is user_events_status listing event @name, with or without comment? */
static bool en_listed(const char *name)
{
	char *text = ue_read_file("user_events_status");
	char key[128];
	const char *p;
	bool found = false;

	if (!text)
		return false;
	snprintf(key, sizeof(key), ":%s", name);
	for (p = text; (p = strstr(p, key)); p++) {
		size_t end = strlen(key);

		if (p[end] == '\n' || p[end] == ' ') {
			found = true;
			break;
		}
	}
	free(text);

	return found;
}

/* The common_type of a raw perf sample: its first two bytes */
static int raw_type(const void *raw)
{
	__u16 type;

	memcpy(&type, raw, sizeof(type));
	return type;
}

FIXTURE(en) {
	int fd;
	int status_fd;
	__u8 *status;
	/* A resident page for the values of enable bits */
	__u64 *page;
	struct ue_saved_attrs attrs;
	/* kernel.user_events_max before the test changed it, else -1 */
	long max0;
	int active0;
};

FIXTURE_SETUP(en)
{
	int busy, max;

	self->fd = -1;
	self->status_fd = -1;
	self->status = MAP_FAILED;
	self->page = MAP_FAILED;
	self->max0 = -1;
	UE_SKIP_IF_UNAVAILABLE();

	/* Leftovers of an interrupted run */
	ue_instance_remove(INSTANCE);
	en_cleanup();
	ue_del(SENTINEL);

	ASSERT_EQ(0, ue_status_counts(&self->active0, &busy, &max));
	self->fd = ue_open_data();
	ASSERT_NE(-1, self->fd);
	ASSERT_EQ(0, ue_open_status_page(&self->status_fd, &self->status));
	self->page = mmap(NULL, UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->page);
	memset(self->page, 0, UE_PAGE_SIZE);
	ASSERT_EQ(0, ue_ensure_top_buffer_kb(MIN_BUFFER_KB));
	ASSERT_EQ(0, ue_clear_trace(NULL));
}

FIXTURE_TEARDOWN(en)
{
	/* A child left by a failed check holds registrations of its own */
	ue_child_kill_all();
	en_unreg_all();
	if (self->max0 >= 0 && ue_set_max(self->max0)) {
		TH_LOG("cannot restore %s to %ld", UE_MAX_PATH, self->max0);
		EXPECT_TRUE(0);
	}
	ue_restore_attrs(&self->attrs);
	if (self->fd != -1)
		close(self->fd);
	ue_close_status_page(self->status_fd, self->status);
	if (self->page != MAP_FAILED)
		munmap(self->page, UE_PAGE_SIZE);
	ue_instance_remove(INSTANCE);
	en_cleanup();
	ue_del(SENTINEL);
	ue_clear_trace(NULL);
	ue_expect_active(_metadata, self->active0);
}
#endif /* UE_EN_FIXTURE */
#endif /* USER_EVENTS_ENABLE_BIT_ABI */

#endif /* _USER_EVENTS_SELFTESTS_H */
