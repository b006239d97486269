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
 *   page holds nothing but the bytes of registered events;
 * - registering and deleting need a user_events_data fd open for writing:
 *   on a read-only one, root's or a member's that was only given read
 *   access, both ioctls fail with EBADF and change nothing;
 * - a member registers events although it cannot search the events
 *   directories: the event's directories appear, owned by root, at the
 *   top level and in a trace instance;
 * - a member deletes only its own events: those root made through the
 *   status page or dynamic_events, recorded or not, give EPERM and stay;
 *   its own, recorded by root, is deleted once root disabled it (a delete
 *   clears no buffer: root's records of it stay, printed with the
 *   deleted event's format, and so do the records of other events);
 *   ENOENT for no such event, EBUSY while the event is enabled or held by
 *   an fd;
 * - another unprivileged user registers a member's event with its fields
 *   (EADDRINUSE with others) but may not delete it (EPERM); root, with
 *   CAP_PERFMON, may.
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
#define INSTANCE	PREFIX "inst"
/* Events of the read-only and delete tests */
#define RO_EVENT	PREFIX "ro"
#define RECORDED	PREFIX "recorded"
#define OTHER		PREFIX "other"
#define UNRECORDED	PREFIX "unrecorded"
#define PERF_ONLY	PREFIX "perf_only"
#define MINE		PREFIX "mine"
#define NOBODYS		PREFIX "nobodys"
#define NOBODY		65534
/* Another unprivileged user, for the events of nobody */
#define STRANGER	65531
#define TEST_GID	65533

FIXTURE(perm) {
	struct ue_saved_attrs attrs;
	int status_fd;
	__u8 *status;
	int active0;
};

FIXTURE_SETUP(perm)
{
	self->status_fd = -1;
	UE_SKIP_IF_UNAVAILABLE();

	ue_setup_clean(_metadata, INSTANCE, PREFIX, &self->active0);
	ASSERT_EQ(0, ue_open_status_page(&self->status_fd, &self->status));
}

FIXTURE_TEARDOWN(perm)
{
	ue_restore_attrs(&self->attrs);
	ue_close_status_page(self->status_fd, self->status);
	ue_instance_remove(INSTANCE);
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
	__u8 used[UE_PAGE_MAX];
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
	__u8 used[UE_PAGE_MAX];
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
 * Run @fn in a child as uid @uid and gid nobody, with TEST_GID as
 * supplementary group if @member; 0 when it passed, else its exit status
 * or -1.
 */
static int run_as(uid_t uid, bool member, int (*fn)(struct child_ctx *),
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
		    setuid(uid) || getuid() != uid || geteuid() != uid) {
			fprintf(stderr, "# cannot become uid %d: %s\n", uid,
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

/* run_as() of uid nobody */
static int run_as_nobody(bool member, int (*fn)(struct child_ctx *),
			 struct child_ctx *ctx, void (*parent)(struct child_ctx *))
{
	return run_as(NOBODY, member, fn, ctx, parent);
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
	__u8 used[UE_PAGE_MAX];
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
	ASSERT_EQ(0, ue_grant_dirs(&self->attrs));
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
	int i;

	ASSERT_EQ(0, ue_grant_dirs(&self->attrs));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, ue_grant(&self->attrs, ue_path(files[i]),
				      TEST_GID, 0060));
	ASSERT_EQ(0, ue_clear_trace(NULL));
	ctx.inherited = self->status;
	ASSERT_LE(0, ue_status_indexes(ctx.used));

	ASSERT_EQ(0, run_as_nobody(true, child_member, &ctx, enable_for_child));
	UE_ASSERT_TRACE(NULL, CHILD_EVENT, "v=42\n");
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

/*
 * DIAG_IOCSREG of @cmd on @fd fails with @err and stores no index; 0 if
 * so, else what it did: -1 for a success, or its errno
 */
static int reg_fails(int fd, const char *cmd, int err)
{
	struct user_reg reg = {
		.size = sizeof(reg),
		.name_args = (__u64)(uintptr_t)cmd,
		.status_index = 0xaaaa,
		.write_index = 0xbbbb,
	};

	if (ioctl(fd, DIAG_IOCSREG, &reg) != -1)
		return -1;
	if (errno != err)
		return errno;
	if (reg.status_index != 0xaaaa || reg.write_index != 0xbbbb)
		return -1;

	return 0;
}

/* DIAG_IOCSDEL of @name on @fd: 0 or errno */
static int del_on(int fd, const char *name)
{
	return ioctl(fd, DIAG_IOCSDEL, name) == -1 ? errno : 0;
}

/* The child's side of a step the parent takes for it: ask, then wait */
static int child_ask_parent(struct child_ctx *ctx, __u32 step)
{
	char go;

	if (write(ctx->c2p[1], &step, 4) != 4 ||
	    read(ctx->p2c[0], &go, 1) != 1)
		return -1;

	return 0;
}

/* Root's user_events_data opened read-only: no registering, no deleting */
TEST_F(perm, root_readonly_fd)
{
	int ro, wo, active, busy, max;
	struct user_reg reg;
	__u32 v = 5;

	ASSERT_EQ(0, ue_dyn("u:" RO_EVENT " u32 v"));
	ro = ue_open("user_events_data", O_RDONLY);
	ASSERT_NE(-1, ro);

	/* A new event or an existing one: EBADF, no index stored */
	ASSERT_EQ(0, reg_fails(ro, PREFIX "ro_new u32 v", EBADF));
	ASSERT_EQ(0, reg_fails(ro, RO_EVENT " u32 v", EBADF));
	ASSERT_FALSE(ue_event_exists(PREFIX "ro_new"));
	ASSERT_EQ(EBADF, del_on(ro, RO_EVENT));
	ASSERT_EQ(EBADF, del_on(ro, PREFIX "no_such_event"));
	ASSERT_TRUE(ue_event_exists(RO_EVENT));
	ASSERT_EQ(-EBADF, ue_emit(ro, 0, &v, sizeof(v)));
	ASSERT_EQ(0, ue_status_counts(&active, &busy, &max));
	ASSERT_EQ(self->active0 + 1, active);
	close(ro);
	ue_msg("read-only fd: DIAG_IOCSREG and DIAG_IOCSDEL fail with EBADF\n");

	/* Write-only is enough, like read-write */
	wo = ue_open("user_events_data", O_WRONLY);
	ASSERT_NE(-1, wo);
	ASSERT_EQ(0, ue_reg(wo, PREFIX "wo u32 v", &reg));
	ASSERT_EQ(0, reg.write_index);
	ASSERT_NE(0, reg.status_index);
	ASSERT_EQ(0, ue_reg(wo, RO_EVENT " u32 v", &reg));
	ASSERT_EQ(1, reg.write_index);
	ASSERT_EQ(8, ue_emit(wo, 1, &v, sizeof(v)));
	/* Held by the fd itself */
	ASSERT_EQ(EBUSY, del_on(wo, RO_EVENT));
	close(wo);
	wo = ue_open("user_events_data", O_WRONLY);
	ASSERT_NE(-1, wo);
	ASSERT_EQ(0, del_on(wo, RO_EVENT));
	ASSERT_EQ(0, del_on(wo, PREFIX "wo"));
	close(wo);
	ue_msg("write-only fd: registers, writes and deletes\n");
}

/* A member that was only given read access to user_events_data */
static int child_readonly(struct child_ctx *ctx)
{
	int fd, bad = 0;
	__u32 v = 5;

	child_open("user_events_data", O_RDWR, EACCES, &bad);
	child_open("user_events_data", O_WRONLY, EACCES, &bad);
	fd = child_open("user_events_data", O_RDONLY, 0, &bad);
	if (bad)
		return child_fail(1, "user_events_data is not read-only for it");

	bad = reg_fails(fd, PREFIX "ro_new u32 v", EBADF);
	if (bad)
		return child_fail(2, "register on a read-only fd: %s",
				  bad == -1 ? "done" : strerror(bad));
	bad = reg_fails(fd, RO_EVENT " u32 v", EBADF);
	if (bad)
		return child_fail(3, "register %s on a read-only fd: %s",
				  RO_EVENT, bad == -1 ? "done" : strerror(bad));
	bad = del_on(fd, RO_EVENT);
	if (bad != EBADF)
		return child_fail(4, "delete %s on a read-only fd: %s",
				  RO_EVENT, strerror(bad));
	if (ue_emit(fd, 0, &v, sizeof(v)) != -EBADF)
		return child_fail(5, "write on a read-only fd: %s",
				  strerror(errno));
	close(fd);

	return 0;
}

TEST_F(perm, member_readonly_fd)
{
	struct child_ctx ctx;
	int active, busy, max;

	memset(&ctx, 0, sizeof(ctx));
	ASSERT_EQ(0, ue_dyn("u:" RO_EVENT " u32 v"));
	ASSERT_EQ(0, ue_grant_dirs(&self->attrs));
	ASSERT_EQ(0, ue_grant(&self->attrs, ue_path("user_events_data"), TEST_GID, 0040));
	ctx.inherited = self->status;

	ASSERT_EQ(0, run_as_nobody(true, child_readonly, &ctx, NULL));
	ASSERT_TRUE(ue_event_exists(RO_EVENT));
	ASSERT_FALSE(ue_event_exists(PREFIX "ro_new"));
	ASSERT_EQ(0, ue_status_counts(&active, &busy, &max));
	ASSERT_EQ(self->active0 + 1, active);
	/* No reference was left behind */
	ASSERT_EQ(0, ue_del(RO_EVENT));
	ue_msg("group %d member with read access: EBADF, nothing changed\n",
	       TEST_GID);
}

/*
 * A member registers an event, whose directories the kernel makes (on 6.1
 * in directories the member cannot search; eventfs makes them searchable)
 */
static int child_creates_dirs(struct child_ctx *ctx)
{
	struct user_reg reg;
	int fd, bad = 0;

	fd = child_open("user_events_data", O_RDWR, 0, &bad);
	if (bad)
		return child_fail(1, "cannot open user_events_data");
	bad = ue_reg(fd, MINE " u32 v", &reg);
	if (bad)
		return child_fail(2, "register %s: %s", MINE, strerror(bad));
	close(fd);

	return 0;
}

TEST_F(perm, member_creates_dirs)
{
	static const char * const where[] = { NULL, INSTANCE };
	struct stat st, ref;
	struct child_ctx ctx;
	char rel[256];
	int i;

	memset(&ctx, 0, sizeof(ctx));
	ASSERT_EQ(0, ue_grant_dirs(&self->attrs));
	ASSERT_EQ(0, ue_grant(&self->attrs, ue_path("user_events_data"), TEST_GID, 0060));
	ASSERT_EQ(0, ue_instance_create(INSTANCE));
	/* A directory root made, to compare with */
	ASSERT_EQ(0, ue_dyn("u:" UNRECORDED " u32 v"));
	ctx.inherited = self->status;

	ASSERT_EQ(0, run_as_nobody(true, child_creates_dirs, &ctx, NULL));
	for (i = 0; i < 2; i++) {
		const char *inst = where[i];

		snprintf(rel, sizeof(rel), "%s", ue_event_file(inst, MINE, ""));
		ASSERT_EQ(0, stat(ue_path(rel), &st)) {
			TH_LOG("%s: %s", rel, strerror(errno));
		}
		ASSERT_EQ(0, stat(ue_path(ue_event_file(inst, UNRECORDED, "")),
				  &ref));
		ASSERT_TRUE(S_ISDIR(st.st_mode));
		ASSERT_EQ(0, st.st_uid);
		ASSERT_EQ(0, st.st_gid);
		ASSERT_EQ(ref.st_mode, st.st_mode);
		ASSERT_EQ(0, stat(ue_path(ue_event_file(inst, MINE, "enable")),
				  &st));
		ASSERT_EQ(0, st.st_uid);
		ASSERT_EQ(0, st.st_gid);
	}
	ue_msg("group %d member, no search access: its event directories made, owned by root\n",
	       TEST_GID);
	ASSERT_EQ(0, ue_del(MINE));
	ASSERT_EQ(0, ue_del(UNRECORDED));
}

/*
 * Delete events as a member: root's may not be, its own may once root
 * stopped recording it (the parent enables MINE at step 1, disables it at
 * step 2)
 */
static int child_delete(struct child_ctx *ctx)
{
	static const char * const roots[] = {
		RECORDED, OTHER, UNRECORDED, PERF_ONLY,
	};
	struct user_reg reg;
	int fd, fd2, i, ret, bad = 0;
	__u32 v = 3;

	fd = child_open("user_events_data", O_RDWR, 0, &bad);
	if (bad)
		return child_fail(1, "cannot open user_events_data");
	ret = del_on(fd, PREFIX "no_such_event");
	if (ret != ENOENT)
		return child_fail(2, "delete of no event: %s", strerror(ret));
	/* Root's, made by its status page or dynamic_events, used or not */
	for (i = 0; i < 4; i++) {
		ret = del_on(fd, roots[i]);
		if (ret != EPERM)
			return child_fail(3, "delete of root's %s: %s",
					  roots[i], strerror(ret));
	}

	/* Its own, recorded by root: in use while enabled or held */
	fd2 = child_open("user_events_data", O_RDWR, 0, &bad);
	if (bad || ue_reg(fd2, MINE " u32 v", &reg))
		return child_fail(4, "cannot register %s", MINE);
	if (child_ask_parent(ctx, 1))
		return child_fail(5, "pipe");
	if (ue_emit(fd2, reg.write_index, &v, sizeof(v)) != 8)
		return child_fail(6, "write of %s", MINE);
	ret = del_on(fd, MINE);
	if (ret != EBUSY)
		return child_fail(7, "delete of its enabled event: %s",
				  strerror(ret));
	if (child_ask_parent(ctx, 2))
		return child_fail(8, "pipe");
	ret = del_on(fd, MINE);
	if (ret != EBUSY)
		return child_fail(9, "delete of its held event: %s",
				  strerror(ret));
	close(fd2);
	ret = del_on(fd, MINE);
	if (ret)
		return child_fail(10, "delete of its recorded event: %s",
				  strerror(ret));
	ret = del_on(fd, MINE);
	if (ret != ENOENT)
		return child_fail(11, "second delete of its event: %s",
				  strerror(ret));

	/* One left for another user to try, and for root to delete */
	fd2 = child_open("user_events_data", O_RDWR, 0, &bad);
	if (bad || ue_reg(fd2, NOBODYS " u32 v", &reg))
		return child_fail(12, "cannot register %s", NOBODYS);
	close(fd2);
	close(fd);

	return 0;
}

/* Another member may use nobody's event, not delete it */
static int child_stranger(struct child_ctx *ctx)
{
	struct user_reg reg;
	int fd, ret, bad = 0;
	__u32 v = 4;

	fd = child_open("user_events_data", O_RDWR, 0, &bad);
	if (bad)
		return child_fail(1, "cannot open user_events_data");
	ret = ue_reg(fd, NOBODYS " u64 v", &reg);
	if (ret != EADDRINUSE)
		return child_fail(2, "register with other fields: %s",
				  strerror(ret));
	if (ue_reg(fd, NOBODYS " u32 v", &reg) ||
	    ue_emit(fd, reg.write_index, &v, sizeof(v)) != 8)
		return child_fail(3, "register and write of nobody's event");
	close(fd);
	fd = child_open("user_events_data", O_RDWR, 0, &bad);
	if (bad)
		return child_fail(4, "cannot open user_events_data");
	ret = del_on(fd, NOBODYS);
	if (ret != EPERM)
		return child_fail(5, "delete of nobody's event: %s",
				  strerror(ret));
	close(fd);

	return 0;
}

/* The parent's side of child_delete(): enable MINE, then disable it */
static void record_for_child(struct child_ctx *ctx)
{
	__u32 step;
	char go = 1;

	while (read(ctx->c2p[0], &step, 4) == 4) {
		errno = ue_enable(INSTANCE, MINE, step == 1);
		if (errno)
			fprintf(stderr, "# step %u: cannot switch %s: %s\n",
				step, MINE, strerror(errno));
		if (write(ctx->p2c[1], &go, 1) != 1)
			fprintf(stderr, "# pipe to the child: %s\n",
				strerror(errno));
	}
}

TEST_F(perm, member_deletes_its_own)
{
	static const char * const dyn_names[] = {
		OTHER, UNRECORDED, PERF_ONLY,
	};
	static const char * const files[] = {
		"user_events_data", "user_events_status",
	};
	struct user_reg reg[2];
	struct child_ctx ctx;
	int i, fd, perf;
	char cmd[64];
	__u32 v;

	memset(&ctx, 0, sizeof(ctx));
	ASSERT_EQ(0, ue_grant_dirs(&self->attrs));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, ue_grant(&self->attrs, ue_path(files[i]), TEST_GID, 0060));
	ASSERT_EQ(0, ue_instance_create(INSTANCE));

	/* RECORDED made by root's status page registration, the rest not */
	fd = ue_open_data();
	ASSERT_NE(-1, fd);
	ASSERT_EQ(0, ue_reg(fd, RECORDED " u32 v", &reg[0]));
	for (i = 0; i < 3; i++) {
		snprintf(cmd, sizeof(cmd), "u:%s u32 v", dyn_names[i]);
		ASSERT_EQ(0, ue_dyn(cmd));
	}

	/* Root records RECORDED and OTHER in its instance */
	ASSERT_EQ(0, ue_enable(INSTANCE, RECORDED, true));
	ASSERT_EQ(0, ue_enable(INSTANCE, OTHER, true));
	ASSERT_EQ(0, ue_reg(fd, OTHER " u32 v", &reg[1]));
	v = 1;
	ASSERT_EQ(8, ue_emit(fd, reg[0].write_index, &v, sizeof(v)));
	v = 2;
	ASSERT_EQ(8, ue_emit(fd, reg[1].write_index, &v, sizeof(v)));
	close(fd);
	ASSERT_EQ(0, ue_enable(INSTANCE, RECORDED, false));
	ASSERT_EQ(0, ue_enable(INSTANCE, OTHER, false));

	/* PERF_ONLY is attached to perf, and detached again */
	perf = ue_perf_open(ue_event_id(PERF_ONLY), 0, -1);
	ASSERT_NE(-1, perf);
	close(perf);

	ASSERT_EQ(0, run_as_nobody(true, child_delete, &ctx,
				   record_for_child));
	ue_msg("group %d member: root's events EPERM, its own EBUSY, then deleted\n",
	       TEST_GID);

	/* Root's stay, the member's is gone; every record stays */
	for (i = 0; i < 3; i++)
		ASSERT_TRUE(ue_event_exists(dyn_names[i]));
	ASSERT_TRUE(ue_event_exists(RECORDED));
	ASSERT_FALSE(ue_event_exists(MINE));
	UE_ASSERT_TRACE(INSTANCE, RECORDED, "v=1\n");
	UE_ASSERT_TRACE(INSTANCE, OTHER, "v=2\n");
	UE_ASSERT_TRACE(INSTANCE, MINE, "v=3\n");
	ue_msg("root's records, and those of the member's deleted event, stayed\n");

	/* Another user uses nobody's event, cannot delete it; root can */
	ASSERT_TRUE(ue_event_exists(NOBODYS));
	memset(&ctx, 0, sizeof(ctx));
	ASSERT_EQ(0, run_as(STRANGER, true, child_stranger, &ctx, NULL));
	ASSERT_TRUE(ue_event_exists(NOBODYS));
	ue_msg("uid %d: registers and writes nobody's event, EPERM to delete it\n",
	       STRANGER);
	ASSERT_EQ(0, ue_del(NOBODYS));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, ue_del(dyn_names[i]));
	ASSERT_EQ(0, ue_del(RECORDED));
	ue_msg("root (CAP_PERFMON) deletes them all\n");
}

TEST_HARNESS_MAIN
