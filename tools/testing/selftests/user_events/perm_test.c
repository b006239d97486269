// SPDX-License-Identifier: GPL-2.0
/*
 * Who may use user_events.  Children drop to uid/gid nobody (65534), with
 * or without the supplementary group TEST_GID (65533):
 *
 * - with the files as the kernel creates them (root, 0640 or tighter),
 *   nobody opens neither user_events_data nor user_events_status
 *   (EACCES), even once the directories are searchable for the group;
 * - once an administrator hands both files to TEST_GID (chgrp, g+rw), a
 *   member of it opens them, registers an event and writes it (recorded
 *   when root enables it), but may not write dynamic_events nor the
 *   event's enable file (EACCES); others still get EACCES;
 * - in every case the status page mapping cannot be made writable or
 *   executable (mprotect: EACCES), not even an inherited one, and the
 *   page holds nothing but the bytes of registered events.
 *
 * The owner and mode of every file or directory changed are restored at
 * the end, also when a check fails.
 */
#include <grp.h>
#include <stdarg.h>
#include <sys/wait.h>

#include "user_events_selftests.h"

#define PREFIX		"ue_perm_"
#define CHILD_EVENT	PREFIX "child"
#define SCRATCH		PREFIX "scratch"
#define NOBODY		65534
#define TEST_GID	65533

FIXTURE(perm) {
	struct ue_saved_attrs attrs;
	int status_fd;
	__u8 *status;
	int active0;
};

FIXTURE_SETUP(perm)
{
	int busy, max;

	self->status_fd = -1;
	UE_SKIP_IF_UNAVAILABLE();

	ue_cleanup_events(PREFIX);
	ASSERT_EQ(0, ue_status_counts(&self->active0, &busy, &max));
	ASSERT_EQ(0, ue_open_status_page(&self->status_fd, &self->status));
}

FIXTURE_TEARDOWN(perm)
{
	ue_restore_attrs(&self->attrs);
	ue_close_status_page(self->status_fd, self->status);
	ue_enable(NULL, CHILD_EVENT, false);
	ue_cleanup_events(PREFIX);
	/* By name: it may lack its directory, which ue_cleanup_events() uses */
	ue_del(CHILD_EVENT);
}

/* What a child reports about a failed check: the step it failed at */
static int child_fail(int step, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "# child (uid %d): step %d: ", getuid(), step);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);

	return step;
}

/* Open @rel as the child: expect @err (0: success); returns fd or -1 */
static int child_open(const char *rel, int flags, int err, int *bad)
{
	int fd = open(ue_path(rel), flags | O_CLOEXEC);

	if (err ? fd != -1 || errno != err : fd == -1) {
		fprintf(stderr, "# child (uid %d): open %s (flags 0x%x): %s, expected %s\n",
			getuid(), rel, flags, fd == -1 ? strerror(errno) : "opened",
			err ? strerror(err) : "success");
		*bad = 1;
	}

	return fd;
}

/*
 * The status page seen through @map holds nothing but event bytes: byte
 * 0 and every byte of no registered event (per @used) are 0.
 */
static int page_only_events(const __u8 *map, const __u8 *used)
{
	int i;

	for (i = 0; i < UE_PAGE_SIZE; i++) {
		if (map[i] && (!i || !used[i])) {
			fprintf(stderr, "# status byte %d is 0x%x, no event has it\n",
				i, map[i]);
			return -1;
		}
	}

	return 0;
}

/* Neither a writable nor an executable mapping of the page */
static int page_stays_readonly(__u8 *map)
{
	if (mprotect(map, UE_PAGE_SIZE, PROT_READ | PROT_WRITE) != -1 ||
	    errno != EACCES) {
		fprintf(stderr, "# mprotect(PROT_WRITE) on the status page: %s\n",
			strerror(errno));
		return -1;
	}
	if (mprotect(map, UE_PAGE_SIZE, PROT_READ | PROT_EXEC) != -1 ||
	    errno != EACCES) {
		fprintf(stderr, "# mprotect(PROT_EXEC) on the status page: %s\n",
			strerror(errno));
		return -1;
	}

	return 0;
}

struct child_ctx {
	/* The parent's mapping (inherited) and what is registered */
	__u8 *inherited;
	__u8 used[UE_PAGE_SIZE];
	/* Pipes: parent to child, child to parent */
	int p2c[2];
	int c2p[2];
};

/* Without access to the files: every open is refused */
static int child_denied(struct child_ctx *ctx)
{
	int bad = 0;

	child_open("user_events_data", O_RDWR, EACCES, &bad);
	child_open("user_events_data", O_WRONLY, EACCES, &bad);
	child_open("user_events_data", O_RDONLY, EACCES, &bad);
	child_open("user_events_status", O_RDONLY, EACCES, &bad);
	child_open("user_events_status", O_RDWR, EACCES, &bad);
	child_open("dynamic_events", O_WRONLY, EACCES, &bad);
	if (bad)
		return child_fail(1, "opened a file it should not have");

	/* A mapping inherited from root does not help either */
	if (page_stays_readonly(ctx->inherited))
		return child_fail(2, "inherited status page mapping made writable");
	if (page_only_events(ctx->inherited, ctx->used))
		return child_fail(3, "status page has bytes of no event");

	return 0;
}

/* A member of the group the files were handed to */
static int child_member(struct child_ctx *ctx)
{
	int data, status, bad = 0;
	struct user_reg reg;
	__u8 used[UE_PAGE_SIZE];
	__u8 *map;
	char go;
	__u32 v = 42;

	data = child_open("user_events_data", O_RDWR, 0, &bad);
	status = child_open("user_events_status", O_RDONLY, 0, &bad);
	if (bad)
		return child_fail(1, "cannot open the files handed to its group");

	/* The page: mapped read-only, never more */
	map = ue_map_status(status);
	if (map == MAP_FAILED)
		return child_fail(2, "mmap of the status page: %s",
				  strerror(errno));
	if (page_stays_readonly(map) || page_stays_readonly(ctx->inherited))
		return child_fail(3, "status page mapping made writable");
	if (mmap(NULL, UE_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, status,
		 0) != MAP_FAILED || errno != EACCES)
		return child_fail(4, "writable mapping of a read-only fd: %s",
				  strerror(errno));

	/* Register and learn what exists (the file is readable now) */
	if (ue_reg(data, CHILD_EVENT " u32 v", &reg))
		return child_fail(5, "register: %s", strerror(errno));
	if (reg.write_index || !reg.status_index ||
	    reg.status_index >= UE_PAGE_SIZE)
		return child_fail(6, "indexes %u %u", reg.status_index,
				  reg.write_index);
	if (ue_status_indexes(used) <= 0 || !used[reg.status_index])
		return child_fail(7, "its event is not in user_events_status");
	if (page_only_events(map, used))
		return child_fail(8, "status page has bytes of no event");
	if (map[reg.status_index])
		return child_fail(9, "status byte set before enable");

	/* Root enables the event; the child sees it and writes it */
	if (write(ctx->c2p[1], &reg.status_index, 4) != 4)
		return child_fail(10, "pipe");
	if (read(ctx->p2c[0], &go, 1) != 1)
		return child_fail(11, "no go from parent");
	if (map[reg.status_index] != EVENT_STATUS_FTRACE)
		return child_fail(12, "status byte 0x%x once enabled",
				  map[reg.status_index]);
	if (ue_emit(data, reg.write_index, &v, sizeof(v)) != 8)
		return child_fail(13, "write: %s", strerror(errno));

	/* But it is no administrator of events */
	child_open("dynamic_events", O_WRONLY, EACCES, &bad);
	child_open(ue_event_file(NULL, CHILD_EVENT, "enable"), O_WRONLY, EACCES,
		   &bad);
	child_open(ue_event_file(NULL, CHILD_EVENT, "filter"), O_WRONLY, EACCES,
		   &bad);
	if (bad)
		return child_fail(14, "could change what is traced");
	if (ue_dyn("u:" PREFIX "dyn u32 v") != EACCES)
		return child_fail(15, "dynamic_events accepted a command");
	if (ue_event_exists(PREFIX "dyn"))
		return child_fail(16, "dynamic_events made an event");

	close(data);
	close(status);
	munmap(map, UE_PAGE_SIZE);

	return 0;
}

/*
 * Run @fn in a child as uid/gid nobody, with TEST_GID as supplementary
 * group if @member; 0 when it passed, else its exit status or -1.
 */
static int run_as_nobody(bool member, int (*fn)(struct child_ctx *),
			 struct child_ctx *ctx, void (*parent)(struct child_ctx *))
{
	gid_t groups[1] = { TEST_GID };
	int status, ret = 0;
	pid_t pid;

	if (pipe(ctx->p2c))
		return -1;
	if (pipe(ctx->c2p)) {
		close(ctx->p2c[0]);
		close(ctx->p2c[1]);
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		close(ctx->p2c[1]);
		close(ctx->c2p[0]);
		if (setgroups(member ? 1 : 0, groups) || setgid(NOBODY) ||
		    setuid(NOBODY) || getuid() != NOBODY || geteuid() != NOBODY) {
			fprintf(stderr, "# cannot become nobody: %s\n",
				strerror(errno));
			_exit(100);
		}
		_exit(fn(ctx));
	}
	/* Only the child may write to the parent: its exit means EOF */
	close(ctx->c2p[1]);
	close(ctx->p2c[0]);
	if (pid != -1 && parent)
		parent(ctx);
	close(ctx->p2c[1]);
	close(ctx->c2p[0]);
	if (pid == -1 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		ret = -1;

	return ret ?: WEXITSTATUS(status);
}

/* The parent's side of child_member(): enable its event when asked */
static void enable_for_child(struct child_ctx *ctx)
{
	__u32 index;
	char go = 1;

	if (read(ctx->c2p[0], &index, 4) != 4)
		return;
	if (!ue_event_exists(CHILD_EVENT))
		fprintf(stderr, "# %s (status index %u) has no directory in %s/events/%s\n",
			CHILD_EVENT, index, ue_root(), USER_EVENTS_SYSTEM);
	errno = ue_enable(NULL, CHILD_EVENT, true);
	if (errno)
		fprintf(stderr, "# cannot enable %s: %s\n", CHILD_EVENT,
			strerror(errno));
	if (write(ctx->p2c[1], &go, 1) != 1)
		fprintf(stderr, "# pipe to the child: %s\n", strerror(errno));
}

/* Register the scratch event on a new fd and enable it; the fd, or -1 */
static int scratch_event(struct user_reg *reg)
{
	int fd = ue_open_data();

	if (fd == -1)
		return -1;
	if (ue_reg(fd, SCRATCH " u32 v", reg) ||
	    ue_enable(NULL, SCRATCH, true)) {
		close(fd);
		return -1;
	}

	return fd;
}

TEST_F(perm, root_status_page)
{
	__u8 used[UE_PAGE_SIZE];
	struct user_reg reg;
	int fd;

	/* A scratch event, enabled: root's page is read-only all the same */
	fd = scratch_event(&reg);
	ASSERT_NE(-1, fd);
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->status[reg.status_index]);
	ASSERT_EQ(0, page_stays_readonly(self->status));
	ASSERT_LT(0, ue_status_indexes(used));
	ASSERT_EQ(0, page_only_events(self->status, used));
	ASSERT_EQ(0, ue_enable(NULL, SCRATCH, false));
	close(fd);
	ue_msg("root: status page read-only, only event bytes set\n");
}

TEST_F(perm, nobody_denied)
{
	struct child_ctx ctx;
	struct user_reg reg;
	int fd;

	/* Something registered, so that the page has a byte in use */
	fd = scratch_event(&reg);
	ASSERT_NE(-1, fd);
	ctx.inherited = self->status;
	ASSERT_LT(0, ue_status_indexes(ctx.used));

	/* As the kernel made them */
	ASSERT_EQ(0, run_as_nobody(false, child_denied, &ctx, NULL));
	ASSERT_EQ(0, run_as_nobody(true, child_denied, &ctx, NULL));
	ue_msg("nobody, with or without group %d: EACCES on every file\n",
	       TEST_GID);

	/*
	 * The directories searchable for the group: now the files' own
	 * modes are what refuses it
	 */
	ASSERT_EQ(0, ue_grant_dirs(&self->attrs, TEST_GID));
	ASSERT_EQ(0, run_as_nobody(true, child_denied, &ctx, NULL));
	ue_msg("group %d can reach the files, still EACCES: their modes refuse it\n",
	       TEST_GID);

	ASSERT_EQ(0, ue_enable(NULL, SCRATCH, false));
	close(fd);
}

TEST_F(perm, group_member)
{
	static const char * const files[] = {
		"user_events_data", "user_events_status",
	};
	struct child_ctx ctx;
	char *text;
	int i;

	ASSERT_EQ(0, ue_grant_dirs(&self->attrs, TEST_GID));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, ue_grant(&self->attrs, ue_path(files[i]),
				      TEST_GID, 0060));
	ASSERT_EQ(0, ue_clear_trace(NULL));
	ctx.inherited = self->status;
	ASSERT_LE(0, ue_status_indexes(ctx.used));

	ASSERT_EQ(0, run_as_nobody(true, child_member, &ctx, enable_for_child));
	text = ue_trace_collect(NULL, CHILD_EVENT);
	ASSERT_NE(NULL, text);
	ASSERT_STREQ("v=42\n", text);
	free(text);
	ue_msg("group %d member: registered, wrote a record root enabled\n",
	       TEST_GID);
	ue_msg("group %d member: no dynamic_events, no enable file\n", TEST_GID);

	/* Others are still refused */
	ASSERT_LT(0, ue_status_indexes(ctx.used));
	ASSERT_EQ(0, run_as_nobody(false, child_denied, &ctx, NULL));
	ue_msg("nobody outside group %d: still EACCES\n", TEST_GID);

	/* The child's exit closed its fd: root can delete its event */
	ASSERT_EQ(0, ue_enable(NULL, CHILD_EVENT, false));
	ASSERT_EQ(0, ue_del(CHILD_EVENT));
}

TEST_HARNESS_MAIN
