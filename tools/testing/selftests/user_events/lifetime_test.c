// SPDX-License-Identifier: GPL-2.0
/*
 * The lifetime of the events that enable bit registrations (the
 * registration ABI of Linux 6.4 and later, which enable_test checks)
 * create, and of the other events of their names:
 *
 * - automatic or persistent (USER_EVENT_REG_PERSIST, which needs
 *   CAP_PERFMON: checked as an unprivileged user too).  An automatic
 *   event goes within a second of losing its last reference, whichever
 *   it was (the last fd slot, the last enable bit, the exit of the
 *   process, ftrace, perf, an eprobe, a trigger of another event),
 *   recorded and once enabled or not; the records it left stay in the
 *   buffer, printed with its format, and the name is free for other
 *   fields: at once for a program that comes back with other fields
 *   after its exit left thousands of them to delete.  A recorded event
 *   deleted, by itself or explicitly, keeps its type: registered again
 *   with the same fields it has the same id;
 * - USER_EVENT_REG_MULTI_FORMAT events: formats of one name side by
 *   side, each its own NAME.ID in user_events_multi, with its own bits
 *   and records;
 * - DIAG_IOCSDEL of a name deletes every event of it, in user_events and
 *   user_events_multi, all or nothing: EBUSY if one of them is held, and
 *   EPERM for a caller without CAP_PERFMON if one of them is another
 *   user's (root's, here), made persistent by USER_EVENT_REG_PERSIST or
 *   made by dynamic_events; "NAME.ID" deletes one;
 * - kernel.user_events_max: past it, no new event of any kind, by any
 *   way; existing events still register.
 *
 * FIXTURE(en), which enable_test shares, is in user_events_selftests.h.
 */
#define _GNU_SOURCE
#define USER_EVENTS_ENABLE_BIT_ABI
#define UE_EN_FIXTURE
#include "user_events_selftests.h"

#include <ctype.h>

#define MAX_DEFAULT	32768
/*
 * How long an automatic event may outlive its last reference: mainline's
 * own tests wait at most one second for its directory to go
 */
#define GONE_MS		1000

/*
 * Is automatic event @name gone within GONE_MS of the call, which comes
 * right after its last reference was dropped?
 */
static bool en_gone_soon(const char *name)
{
	return en_wait_gone_ms(USER_EVENTS_SYSTEM, name, GONE_MS);
}

/*
 * Has the worker that deletes automatic events dealt with every event
 * dropped so far?  It has once an automatic event dropped after them,
 * the sentinel, is gone: the worker takes them in order.
 */
static bool en_gc_passed(void)
{
	static __u32 word;
	bool gone = false;
	int fd = ue_open_data();

	if (fd == -1)
		return false;
	if (!en_reg(fd, SENTINEL " u8 s", &word, 4, 0, 0, NULL)) {
		/* The fd's slot goes first, the enable bit last */
		close(fd);
		fd = ue_open_data();
		if (fd != -1 && !en_unreg(fd, &word, 0))
			gone = en_wait_gone(SENTINEL);
	}
	if (fd != -1)
		close(fd);

	return gone;
}

/* Does event @name of @system have its directory? */
static bool en_exists_in(const char *system, const char *name)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "events/%s/%s", system, name);

	return access(ue_path(rel), F_OK) == 0;
}

/* Enable or disable @name, an event of user_events_multi ("NAME.ID") */
static int en_multi_enable(const char *name, bool on)
{
	return ue_write_file(ue_system_event_file(MULTI, NULL, name, "enable"),
			     on ? "1\n" : "0\n", O_TRUNC);
}

/*
 * Find the multi-format event NAME.ID of @name whose fields, as listed by
 * dynamic_events, are @fields; copy "NAME.ID" to @out.  Returns how many
 * such events dynamic_events lists.
 */
static int en_multi_find(const char *name, const char *fields, char *out,
			 size_t len)
{
	char *text = ue_read_file("dynamic_events");
	char prefix[256], *line, *next, *p;
	int found = 0;

	if (!text)
		return -1;
	snprintf(prefix, sizeof(prefix), "u:%s/%s.", MULTI, name);
	for (line = text; *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		if (strncmp(line, prefix, strlen(prefix)))
			continue;
		p = line + strlen(prefix);
		if (!isxdigit(*p))
			continue;
		p += strspn(p, "0123456789abcdef");
		if (*p != ' ' || strcmp(p + 1, fields))
			continue;
		*p = '\0';
		snprintf(out, len, "%s", line + strlen("u:" MULTI "/"));
		found++;
	}
	free(text);

	return found;
}

/* Write @text to kernel.user_events_max; 0 or errno */
static int en_set_max_text(const char *text)
{
	return ue_write_path(UE_MAX_PATH, text, strlen(text), 0);
}

TEST_F_TIMEOUT(en, automatic_events, LONG_TIMEOUT)
{
	const char *name = PREFIX "auto";
	__u32 *word = (__u32 *)self->page;
	int fd2, perf_fd;

	/* Held by a slot of an open fd after unregistering */
	fd2 = ue_open_data();
	ASSERT_NE(-1, fd2);
	ASSERT_EQ(0, en_reg(fd2, PREFIX "auto u32 v", word, 4, 0, 0, NULL));
	ASSERT_EQ(0, en_unreg(fd2, word, 0));
	ASSERT_TRUE(ue_event_exists(name));
	ASSERT_EQ(EBUSY, ue_del(name));
	close(fd2);
	ASSERT_TRUE(en_wait_gone(name));

	/* Held by the enable bit after closing the fd */
	fd2 = ue_open_data();
	ASSERT_NE(-1, fd2);
	ASSERT_EQ(0, en_reg(fd2, PREFIX "auto u32 v", word, 4, 0, 0, NULL));
	close(fd2);
	ASSERT_TRUE(ue_event_exists(name));
	ASSERT_EQ(EBUSY, ue_del(name));

	/* Held by perf, which records nothing in a trace buffer */
	perf_fd = ue_perf_open(ue_event_id(name), 0, -1);
	ASSERT_NE(-1, perf_fd);
	ASSERT_EQ(1, *word);
	ASSERT_EQ(0, en_unreg(self->fd, word, 0));
	ASSERT_TRUE(ue_event_exists(name));
	close(perf_fd);
	ASSERT_TRUE(en_wait_gone(name));
}

/*
 * A program that comes back with other fields: the automatic events its
 * last run left at its exit make room for them at once, even before the
 * worker that deletes them one after the other comes to theirs.  The
 * child registers BACK_EVENTS automatic events and exits when told;
 * their worker deletes the last one last.
 */
#define BACK_EVENTS	1000

static int back_child(struct ue_child *c, void *arg)
{
	int n = *(int *)arg, fd = ue_open_data(), i;
	char cmd[64];
	__u32 *words;

	words = mmap(NULL, UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fd == -1 || words == MAP_FAILED)
		return ue_child_fail(1, "setup");
	for (i = 0; i < n; i++) {
		snprintf(cmd, sizeof(cmd), PREFIX "back%d u32 v", i);
		if (ue_reg_bit(fd, cmd, &words[i / 32], 4, i % 32, 0, NULL))
			return ue_child_fail(2, "register");
	}
	if (!ue_child_say(c, 'r') || ue_child_hear(c) != 'x')
		return ue_child_fail(3, "talk to the parent");
	return 0;
}

TEST_F_TIMEOUT(en, comes_back_with_other_fields, LONG_TIMEOUT)
{
	int n = ue_scaled(BACK_EVENTS, 10);
	__u32 *word = (__u32 *)self->page;
	char name[64], cmd[96], *format;
	struct ue_child c;

	snprintf(name, sizeof(name), PREFIX "back%d", n - 1);
	snprintf(cmd, sizeof(cmd), "%s u64 w", name);
	ASSERT_EQ(0, ue_child_start(&c, back_child, &n));
	ASSERT_EQ('r', ue_parent_hear(&c));
	ASSERT_TRUE(ue_parent_say(&c, 'x'));
	ASSERT_EQ(0, ue_child_finish(&c));

	ASSERT_EQ(0, en_reg(self->fd, cmd, word, 4, 0, 0, NULL));
	format = ue_read_file(ue_event_file(NULL, name, "format"));
	ASSERT_NE(NULL, format);
	EXPECT_NE(NULL, strstr(format, "u64 w;"));
	free(format);
	ASSERT_EQ(0, en_unreg(self->fd, word, 0));
}

/*
 * Register @cmd on a new fd with bit @bit of @word and @flags, then drop
 * the fd and the bit: nothing holds the event any more.  0 or errno.
 */
static int en_reg_free(const char *cmd, __u32 *word, int bit, int flags)
{
	int fd = ue_open_data();
	int ret;

	if (fd == -1)
		return errno;
	ret = en_reg(fd, cmd, word, 4, bit, flags, NULL);
	if (!ret)
		ret = en_unreg(fd, word, bit);
	close(fd);

	return ret;
}

/*
 * Register @cmd on a new fd with bit @bit of @word and @flags, write
 * "u32 v" @v while the event is enabled at the top level, then drop the
 * fd and the bit.  0 or errno (EIO: the write failed).
 */
static int en_record_once(const char *name, const char *cmd, __u32 *word,
			  int bit, int flags, __u32 v)
{
	int fd = ue_open_data();
	__u32 idx;
	int ret;

	if (fd == -1)
		return errno;
	ret = en_reg(fd, cmd, word, 4, bit, flags, &idx);
	if (!ret)
		ret = ue_enable(NULL, name, true);
	if (!ret && ue_emit(fd, idx, &v, sizeof(v)) != 8)
		ret = EIO;
	if (!ret)
		ret = ue_enable(NULL, name, false);
	if (!ret)
		ret = en_unreg(fd, word, bit);
	close(fd);

	return ret;
}

/*
 * Register automatic event rec on a new fd, write v=@v while it is
 * enabled, drop the fd and the bit: it must go within a second.  Its
 * event id while it existed goes to *@id.
 */
static void rec_round(struct __test_metadata *_metadata, int fd, __u32 *word,
		      __u32 v, int *id)
{
	const char *name = PREFIX "rec";
	__u32 idx;
	int fd2;

	fd2 = ue_open_data();
	ASSERT_NE(-1, fd2);
	ASSERT_EQ(0, en_reg(fd2, PREFIX "rec u32 v", word, 4, 0, 0, &idx));
	*id = ue_event_id(name);
	ASSERT_LT(0, *id);
	EN_SWITCH(NULL, name, true, word, 1);
	ASSERT_EQ(8, ue_emit(fd2, idx, &v, sizeof(v)));
	EN_SWITCH(NULL, name, false, word, 0);
	close(fd2);
	ASSERT_EQ(0, en_unreg(fd, word, 0));
	ASSERT_TRUE(en_gone_soon(name));
	ASSERT_EQ(ENOENT, ue_del(name));
}

TEST_F_TIMEOUT(en, recorded_automatic_event_goes, LONG_TIMEOUT)
{
	const char *name = PREFIX "rec";
	__u32 *word = (__u32 *)self->page;
	struct ue_status_reg sreg;
	int id, again;
	__u64 w = 5;

	/* Enabled and recorded, then nothing holds it: it goes all the same */
	rec_round(_metadata, self->fd, word, 3, &id);

	/* Its record stays, printed with its format */
	UE_ASSERT_TRACE(NULL, name, "v=3\n");

	/* Its type stays too: the same fields again are the same event type */
	rec_round(_metadata, self->fd, word, 4, &again);
	ASSERT_EQ(id, again);
	UE_ASSERT_TRACE(NULL, name, "v=3\nv=4\n");

	/* Other fields: another type; the old records keep their format */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "rec u64 w", &sreg));
	ASSERT_LT(0, ue_event_id(name));
	ASSERT_NE(id, ue_event_id(name));
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	ASSERT_EQ(12, ue_emit(self->fd, sreg.write_index, &w, sizeof(w)));
	ASSERT_EQ(0, ue_enable(NULL, name, false));
	UE_ASSERT_TRACE(NULL, name, "v=3\nv=4\nw=5\n");
}

/*
 * An event made persistent by USER_EVENT_REG_PERSIST, recorded, deleted
 * by DIAG_IOCSDEL or by "!u:NAME": its records stay, and its type for the
 * same fields.
 */
TEST_F_TIMEOUT(en, persistent_recorded_delete, LONG_TIMEOUT)
{
	const char *name = PREFIX "prec", *other = PREFIX "pother";
	__u32 *word = (__u32 *)self->page;
	int id;

	ASSERT_EQ(0, en_record_once(name, PREFIX "prec u32 v", word, 0,
				    USER_EVENT_REG_PERSIST, 1));
	ASSERT_EQ(0, en_record_once(other, PREFIX "pother u32 v", word, 1,
				    USER_EVENT_REG_PERSIST, 2));
	id = ue_event_id(name);
	ASSERT_LT(0, id);
	ASSERT_TRUE(en_gc_passed());
	ASSERT_TRUE(ue_event_exists(name));

	/* DIAG_IOCSDEL: gone, the records of both events stay */
	ASSERT_EQ(0, ue_del(name));
	ASSERT_FALSE(ue_event_exists(name));
	UE_ASSERT_TRACE(NULL, name, "v=1\n");
	UE_ASSERT_TRACE(NULL, other, "v=2\n");

	/* Back with the same fields: the same type, old and new records */
	ASSERT_EQ(0, en_record_once(name, PREFIX "prec u32 v", word, 0,
				    USER_EVENT_REG_PERSIST, 3));
	ASSERT_EQ(id, ue_event_id(name));
	UE_ASSERT_TRACE(NULL, name, "v=1\nv=3\n");

	/* "!u:NAME" in dynamic_events: the same */
	ASSERT_EQ(0, ue_dyn("!u:" PREFIX "prec"));
	ASSERT_FALSE(ue_event_exists(name));
	ASSERT_EQ(0, ue_dyn("!u:" PREFIX "pother"));
	ASSERT_FALSE(ue_event_exists(other));
	UE_ASSERT_TRACE(NULL, name, "v=1\nv=3\n");
	UE_ASSERT_TRACE(NULL, other, "v=2\n");
}

/*
 * An automatic event, which recorded v=42, kept by one holder once its fd
 * and enable bit are gone, then released by it: it goes within a second,
 * whatever the holder, and leaves its record.
 */
#define AUTO		PREFIX "auto_gone"
#define AUTO_CMD	AUTO " u32 v"

enum en_holder {
	HOLD_FD,		/* a slot of an open fd: the fd is closed */
	HOLD_BIT,		/* an enable bit: unregistered */
	HOLD_PROCESS,		/* the slot and bit of a child: it exits */
	HOLD_FTRACE,		/* enabled: disabled */
	HOLD_PERF,		/* a perf event: closed */
	HOLD_EPROBE,		/* an eprobe on it: removed */
	HOLD_TRIGGER,		/* enable_event trigger of another event */
};

FIXTURE(autodel) {
	FIXTURE_DATA(en) en;
	int fd2;
	int perf_fd;
};

FIXTURE_VARIANT(autodel) {
	enum en_holder holder;
};

FIXTURE_VARIANT_ADD(autodel, last_fd_closed) {
	.holder = HOLD_FD,
};

FIXTURE_VARIANT_ADD(autodel, last_bit_unregistered) {
	.holder = HOLD_BIT,
};

FIXTURE_VARIANT_ADD(autodel, process_exit) {
	.holder = HOLD_PROCESS,
};

FIXTURE_VARIANT_ADD(autodel, ftrace_disabled) {
	.holder = HOLD_FTRACE,
};

FIXTURE_VARIANT_ADD(autodel, perf_closed) {
	.holder = HOLD_PERF,
};

FIXTURE_VARIANT_ADD(autodel, eprobe_removed) {
	.holder = HOLD_EPROBE,
};

FIXTURE_VARIANT_ADD(autodel, trigger_removed) {
	.holder = HOLD_TRIGGER,
};

FIXTURE_SETUP(autodel)
{
	self->fd2 = -1;
	self->perf_fd = -1;
	en_setup(_metadata, &self->en, NULL);
}

FIXTURE_TEARDOWN(autodel)
{
	if (self->perf_fd != -1)
		close(self->perf_fd);
	if (self->fd2 != -1)
		close(self->fd2);
	en_teardown(_metadata, &self->en, NULL);
}

/*
 * The child of the process_exit variant: registers AUTO on its own fd
 * with an enable bit, writes v=42 once the parent enabled it, and exits
 * when told, with the fd open and the bit registered.
 */
static int auto_child(struct ue_child *c, void *arg)
{
	__u32 *word = arg;
	__u32 idx, v = 42;
	int fd = ue_open_data();

	if (fd == -1)
		return ue_child_fail(1, "open user_events_data");
	if (en_reg(fd, AUTO_CMD, word, 4, 0, 0, &idx))
		return ue_child_fail(2, "register");
	if (!ue_child_say(c, 'r') || ue_child_hear(c) != 'w')
		return ue_child_fail(3, "no word from the parent");
	if (!ue_wait_bit(word, 4, 0, true))
		return ue_child_fail(4, "the bit was not set");
	if (ue_emit(fd, idx, &v, sizeof(v)) != 8)
		return ue_child_fail(5, "write");
	if (!ue_child_say(c, 'd') || ue_child_hear(c) != 'x')
		return ue_child_fail(6, "no word from the parent");

	return 0;
}

TEST_F_TIMEOUT(autodel, goes_leaving_its_records, LONG_TIMEOUT)
{
	static const char enable_auto[] =
		"enable_event:" USER_EVENTS_SYSTEM ":" AUTO "\n";
	static const char disable_auto[] =
		"!enable_event:" USER_EVENTS_SYSTEM ":" AUTO "\n";
	enum en_holder holder = variant->holder;
	__u32 *word = (__u32 *)self->en.page;
	char cmd[256], trigger[256];
	struct ue_status_reg sreg;
	struct ue_child c;
	__u32 idx, v = 42;

	/* A copy: ue_event_file() reuses its buffers */
	snprintf(trigger, sizeof(trigger), "%s",
		 ue_event_file(NULL, TRIG_SRC, "trigger"));

	/* Made by an enable bit registration: automatic; it records v=42 */
	if (holder == HOLD_PROCESS) {
		ASSERT_EQ(0, ue_child_start(&c, auto_child, word));
		ASSERT_EQ('r', ue_parent_hear(&c));
		ASSERT_EQ(0, ue_enable(NULL, AUTO, true));
		ASSERT_TRUE(ue_parent_say(&c, 'w'));
		ASSERT_EQ('d', ue_parent_hear(&c));
		ASSERT_EQ(0, ue_enable(NULL, AUTO, false));
	} else {
		self->fd2 = ue_open_data();
		ASSERT_NE(-1, self->fd2);
		ASSERT_EQ(0, en_reg(self->fd2, AUTO_CMD, word, 4, 0, 0, &idx));
		EN_SWITCH(NULL, AUTO, true, word, 1);
		ASSERT_EQ(8, ue_emit(self->fd2, idx, &v, sizeof(v)));
		EN_SWITCH(NULL, AUTO, false, word, 0);
	}

	/* The holder takes it */
	switch (holder) {
	case HOLD_FTRACE:
		ASSERT_EQ(0, ue_enable(NULL, AUTO, true));
		break;
	case HOLD_PERF:
		self->perf_fd = ue_perf_open(ue_event_id(AUTO), 0, -1);
		ASSERT_NE(-1, self->perf_fd);
		break;
	case HOLD_EPROBE:
		snprintf(cmd, sizeof(cmd), "e:%s/%s %s/%s", EP_GROUP, EP_NAME,
			 USER_EVENTS_SYSTEM, AUTO);
		ASSERT_EQ(0, ue_dyn(cmd));
		break;
	case HOLD_TRIGGER:
		ASSERT_EQ(0, ue_dyn("u:" TRIG_SRC " u32 v"));
		ASSERT_EQ(0, ue_write_file(trigger, enable_auto, O_APPEND));
		break;
	default:
		break;
	}

	/* Everything else is dropped: the holder alone keeps it */
	if (holder != HOLD_FD && holder != HOLD_PROCESS) {
		close(self->fd2);
		self->fd2 = -1;
	}
	if (holder != HOLD_BIT && holder != HOLD_PROCESS)
		ASSERT_EQ(0, en_unreg(self->en.fd, word, 0));
	ASSERT_TRUE(en_gc_passed());
	ASSERT_TRUE(ue_event_exists(AUTO));
	ASSERT_EQ(EBUSY, ue_del(AUTO));

	/* Released: gone within a second */
	switch (holder) {
	case HOLD_FD:
		close(self->fd2);
		self->fd2 = -1;
		break;
	case HOLD_BIT:
		ASSERT_EQ(0, en_unreg(self->en.fd, word, 0));
		break;
	case HOLD_PROCESS:
		ASSERT_TRUE(ue_parent_say(&c, 'x'));
		ASSERT_EQ(0, ue_child_finish(&c));
		break;
	case HOLD_FTRACE:
		ASSERT_EQ(0, ue_enable(NULL, AUTO, false));
		break;
	case HOLD_PERF:
		close(self->perf_fd);
		self->perf_fd = -1;
		break;
	case HOLD_EPROBE:
		ASSERT_EQ(0, ue_eprobe_remove(EP_GROUP, EP_NAME));
		break;
	case HOLD_TRIGGER:
		ASSERT_EQ(0, ue_write_file(trigger, disable_auto, O_APPEND));
		break;
	}
	ASSERT_TRUE(en_gone_soon(AUTO));

	/* Its record stays, printed with its format */
	UE_ASSERT_TRACE(NULL, AUTO, "v=42\n");

	/* The name is free for other fields; the record keeps its format */
	ASSERT_EQ(0, ue_reg(self->en.fd, AUTO " u64 w; u8 x", &sreg));
	ASSERT_TRUE(ue_event_exists(AUTO));
	UE_ASSERT_TRACE(NULL, AUTO, "v=42\n");
}

TEST_F_TIMEOUT(en, persistent_events, LONG_TIMEOUT)
{
	static const char * const names[] = {
		PREFIX "keep_flag", PREFIX "keep_later", PREFIX "keep_status",
		PREFIX "keep_dyn",
	};
	__u32 *word = (__u32 *)self->page;
	struct ue_status_reg sreg;
	int fd2, i;

	fd2 = ue_open_data();
	ASSERT_NE(-1, fd2);

	/* Persistent from the start */
	ASSERT_EQ(0, en_reg(fd2, PREFIX "keep_flag u32 v", word, 4, 0,
			    USER_EVENT_REG_PERSIST, NULL));

	/* Automatic ones made persistent: by the flag, later */
	ASSERT_EQ(0, en_reg(fd2, PREFIX "keep_later u32 v", word, 4, 1, 0,
			    NULL));
	ASSERT_EQ(0, en_reg(fd2, PREFIX "keep_later u32 v", word, 4, 2,
			    USER_EVENT_REG_PERSIST, NULL));

	/* By a status page registration, which gives it a status byte */
	ASSERT_EQ(0, en_reg(fd2, PREFIX "keep_status u32 v", word, 4, 3, 0,
			    NULL));
	ASSERT_FALSE(en_listed(names[2]));
	ASSERT_EQ(0, ue_reg(fd2, PREFIX "keep_status u32 v", &sreg));

	/* By dynamic_events */
	ASSERT_EQ(0, en_reg(fd2, PREFIX "keep_dyn u32 v", word, 4, 4, 0,
			    NULL));
	ASSERT_EQ(0, ue_dyn("u:" PREFIX "keep_dyn u32 v"));

	close(fd2);
	for (i = 0; i <= 4; i++)
		ASSERT_EQ(0, en_unreg(self->fd, word, i));

	/* Nothing holds them, and they stay */
	ASSERT_TRUE(en_gc_passed());
	for (i = 0; i < 4; i++) {
		ASSERT_TRUE(ue_event_exists(names[i]));
		ASSERT_EQ(0, ue_del(names[i]));
	}
	ASSERT_EQ(0, *word);
}

/*
 * As nobody in group UE_TEST_GID, given user_events_data: register n1 with
 * USER_EVENT_REG_PERSIST (EPERM, needing CAP_PERFMON), then without
 * (automatic); with CAP_PERFMON, register n2 persistent.
 */
struct nobody_ctx {
	__u32 *word;
	bool perfmon;
};

static int nobody_child(struct ue_child *c, void *arg)
{
	struct nobody_ctx *x = arg;
	int fd;

	if (ue_become_nobody(x->perfmon))
		return ue_child_fail(1, "become nobody");
	fd = ue_open_data();
	if (fd == -1)
		return ue_child_fail(2, "open user_events_data");

	if (x->perfmon) {
		if (en_reg(fd, PREFIX "nobody_p u32 v", x->word, 4, 0,
			   USER_EVENT_REG_PERSIST, NULL))
			return ue_child_fail(3, "PERSIST with CAP_PERFMON");
		if (en_unreg(fd, x->word, 0))
			return ue_child_fail(4, "unregister");
		close(fd);
		return 0;
	}

	if (en_reg(fd, PREFIX "nobody_a u32 v", x->word, 4, 0,
		   USER_EVENT_REG_PERSIST, NULL) != EPERM)
		return ue_child_fail(5, "PERSIST without CAP_PERFMON was not EPERM");
	if (en_reg(fd, PREFIX "nobody_a u32 v", x->word, 4, 0,
		   USER_EVENT_REG_PERSIST | USER_EVENT_REG_MULTI_FORMAT,
		   NULL) != EPERM)
		return ue_child_fail(6, "PERSIST|MULTI_FORMAT was not EPERM");
	if (!ue_child_say(c, 'p') || ue_child_hear(c) != 'g')
		return ue_child_fail(7, "no word from the parent");
	if (en_reg(fd, PREFIX "nobody_a u32 v", x->word, 4, 0, 0, NULL))
		return ue_child_fail(8, "register without PERSIST");
	if (!ue_child_say(c, 'r') || ue_child_hear(c) != 'g')
		return ue_child_fail(9, "no word from the parent");
	if (en_unreg(fd, x->word, 0))
		return ue_child_fail(10, "unregister");
	close(fd);

	return 0;
}

TEST_F_TIMEOUT(en, persist_needs_perfmon, LONG_TIMEOUT)
{
	struct nobody_ctx x = { .word = (__u32 *)self->page };
	struct ue_child c;

	/* The admin hands user_events_data to the group */
	ASSERT_EQ(0, ue_grant_dirs(&self->attrs));
	ASSERT_EQ(0, ue_grant(&self->attrs, ue_path("user_events_data"),
			      UE_TEST_GID, 0060));

	ASSERT_EQ(0, ue_child_start(&c, nobody_child, &x));
	ASSERT_EQ('p', ue_parent_hear(&c));
	ASSERT_FALSE(ue_event_exists(PREFIX "nobody_a"));
	ASSERT_TRUE(ue_parent_say(&c, 'g'));
	ASSERT_EQ('r', ue_parent_hear(&c));
	ASSERT_TRUE(ue_event_exists(PREFIX "nobody_a"));
	ASSERT_EQ(EBUSY, ue_del(PREFIX "nobody_a"));
	ASSERT_TRUE(ue_parent_say(&c, 'g'));
	ASSERT_EQ(0, ue_child_finish(&c));
	/* Automatic: gone once the child dropped it */
	ASSERT_TRUE(en_wait_gone(PREFIX "nobody_a"));

	/* CAP_PERFMON alone is enough */
	x.perfmon = true;
	ASSERT_EQ(0, ue_child_start(&c, nobody_child, &x));
	ASSERT_EQ(0, ue_child_finish(&c));
	ASSERT_TRUE(en_gc_passed());
	ASSERT_TRUE(ue_event_exists(PREFIX "nobody_p"));
	ASSERT_EQ(0, ue_del(PREFIX "nobody_p"));
}

/* Does format file of @name (NAME.ID) describe field @field like this? */
static bool multi_format_has(const char *name, const char *field)
{
	char *text = ue_read_file(ue_system_event_file(MULTI, NULL, name,
							 "format"));
	bool found;

	if (!text)
		return false;
	found = strstr(text, field);
	free(text);

	return found;
}

TEST_F_TIMEOUT(en, multi_format, LONG_TIMEOUT)
{
	/* Bits 0 to 2: of 8 bytes, of 4 on a 32-bit kernel */
	int wide = ue_kernel_64bit() ? 8 : 4;
	const char *name = PREFIX "multi";
	__u64 *word = self->page;
	char n1[96], n2[96], line[256];
	struct ue_status_reg sreg;
	__u32 i1, i2, idx, a = 0x11223344;
	__u64 b = 0x1122334455667788ULL, raw[8];
	struct ue_perf_ring ring;
	__u16 plain = 7;
	char *text, *id;

	/* One name, two formats at once, beside a plain event of the name */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "multi u16 c", &sreg));
	ASSERT_EQ(0, sreg.write_index);
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "multi u32 a", word, wide, 0,
			    USER_EVENT_REG_MULTI_FORMAT, &i1));
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "multi u64 b", word, wide, 1,
			    USER_EVENT_REG_MULTI_FORMAT, &i2));
	ASSERT_EQ(1, i1);
	ASSERT_EQ(2, i2);

	/* A known format gets its event */
	ASSERT_EQ(0, en_reg(self->fd, PREFIX "multi u32 a", word, wide, 2,
			    USER_EVENT_REG_MULTI_FORMAT, &idx));
	ASSERT_EQ(i1, idx);

	/* NAME.ID each, listed in dynamic_events, not in user_events_status */
	ASSERT_EQ(1, en_multi_find(name, "u32 a", n1, sizeof(n1)));
	ASSERT_EQ(1, en_multi_find(name, "u64 b", n2, sizeof(n2)));
	ASSERT_STRNE(n1, n2);
	snprintf(line, sizeof(line), "u:%s u16 c", name);
	text = ue_read_file("dynamic_events");
	ASSERT_NE(NULL, text);
	ASSERT_TRUE(ue_has_line(text, line));
	free(text);
	ASSERT_TRUE(en_listed(name));
	ASSERT_FALSE(en_listed(n1));
	ASSERT_FALSE(en_listed(n2));
	ASSERT_TRUE(multi_format_has(n1, "field:u32 a;\toffset:8;\tsize:4;\tsigned:0;"));
	ASSERT_TRUE(multi_format_has(n2, "field:u64 b;\toffset:8;\tsize:8;\tsigned:0;"));

	/* Each its own bits, and its own records */
	ASSERT_EQ(0, en_multi_enable(n1, true));
	ASSERT_EQ(1 << 0 | 1 << 2, *word);
	ASSERT_EQ(0, en_multi_enable(n2, true));
	EN_SWITCH(NULL, name, true, word, 7);
	id = ue_read_file(ue_system_event_file(MULTI, NULL, n2, "id"));
	ASSERT_NE(NULL, id);
	ASSERT_EQ(0, ue_perf_ring_open(&ring, atoi(id), 1));
	ASSERT_EQ(8, ue_emit(self->fd, i1, &a, sizeof(a)));
	ASSERT_EQ(12, ue_emit(self->fd, i2, &b, sizeof(b)));

	/* Decoded by perf as the format says: type, then b at offset 8 */
	ASSERT_LE(16, ue_perf_raw_sample(&ring, 0, raw, sizeof(raw)));
	ue_perf_ring_close(&ring);
	ASSERT_EQ(atoi(id), raw_type(raw));
	ASSERT_EQ(b, raw[1]);
	free(id);
	ASSERT_EQ(6, ue_emit(self->fd, sreg.write_index, &plain,
			     sizeof(plain)));
	ASSERT_EQ(0, en_multi_enable(n1, false));
	ASSERT_EQ(1 << 1, *word);
	ASSERT_EQ(0, en_multi_enable(n2, false));
	ASSERT_EQ(0, *word);
	ASSERT_EQ(0, ue_enable(NULL, name, false));

	UE_ASSERT_TRACE(NULL, n1, "a=287454020\n");
	UE_ASSERT_TRACE(NULL, n2, "b=1234605616436508552\n");
	UE_ASSERT_TRACE(NULL, name, "c=7\n");
}

TEST_F_TIMEOUT(en, multi_format_delete, LONG_TIMEOUT)
{
	const char *name = PREFIX "mdel";
	__u32 *word = (__u32 *)self->page;
	char n1[96], n2[96], n3[96], cmd[256];
	int fd2;

	fd2 = ue_open_data();
	ASSERT_NE(-1, fd2);
	ASSERT_EQ(0, en_reg(fd2, PREFIX "mdel u32 a", word, 4, 0,
			    USER_EVENT_REG_MULTI_FORMAT | USER_EVENT_REG_PERSIST,
			    NULL));
	ASSERT_EQ(0, en_reg(fd2, PREFIX "mdel u64 b", word, 4, 1,
			    USER_EVENT_REG_MULTI_FORMAT | USER_EVENT_REG_PERSIST,
			    NULL));
	ASSERT_EQ(0, en_reg(fd2, PREFIX "mdel u8 c", word, 4, 2,
			    USER_EVENT_REG_MULTI_FORMAT, NULL));
	ASSERT_EQ(1, en_multi_find(name, "u32 a", n1, sizeof(n1)));
	ASSERT_EQ(1, en_multi_find(name, "u64 b", n2, sizeof(n2)));
	ASSERT_EQ(1, en_multi_find(name, "u8 c", n3, sizeof(n3)));

	/* Busy while registered, by either way of deleting */
	snprintf(cmd, sizeof(cmd), "!u:%s/%s", MULTI, n1);
	ASSERT_EQ(EBUSY, ue_dyn(cmd));
	ASSERT_EQ(EBUSY, ue_del(n2));
	close(fd2);
	ASSERT_EQ(0, en_unreg(self->fd, word, 0));
	ASSERT_EQ(0, en_unreg(self->fd, word, 1));
	ASSERT_EQ(0, en_unreg(self->fd, word, 2));

	/* The automatic one goes, the persistent ones stay */
	ASSERT_TRUE(en_wait_gone_in(MULTI, n3));
	ASSERT_EQ(0, en_multi_find(name, "u8 c", n3, sizeof(n3)));
	ASSERT_EQ(1, en_multi_find(name, "u32 a", n1, sizeof(n1)));

	/* "!u:user_events_multi/NAME.ID" deletes that one only */
	ASSERT_EQ(0, ue_dyn(cmd));
	ASSERT_EQ(ENOENT, ue_dyn(cmd));
	ASSERT_EQ(0, en_multi_find(name, "u32 a", n1, sizeof(n1)));
	ASSERT_EQ(1, en_multi_find(name, "u64 b", n2, sizeof(n2)));

	/* So does DIAG_IOCSDEL of NAME.ID */
	ASSERT_EQ(0, en_reg_free(PREFIX "mdel u32 a", word, 0,
				 USER_EVENT_REG_MULTI_FORMAT |
				 USER_EVENT_REG_PERSIST));
	ASSERT_EQ(1, en_multi_find(name, "u32 a", n1, sizeof(n1)));
	ASSERT_EQ(0, ue_del(n2));
	ASSERT_EQ(ENOENT, ue_del(n2));
	ASSERT_EQ(0, en_multi_find(name, "u64 b", n2, sizeof(n2)));
	ASSERT_EQ(1, en_multi_find(name, "u32 a", n1, sizeof(n1)));

	/* DIAG_IOCSDEL of NAME, the rest of them; then there is none */
	ASSERT_EQ(0, ue_del(name));
	ASSERT_EQ(0, en_multi_find(name, "u32 a", n1, sizeof(n1)));
	ASSERT_FALSE(en_exists_in(MULTI, n1));
	ASSERT_EQ(ENOENT, ue_del(name));
}

/*
 * DIAG_IOCSDEL of NAME: the event NAME of user_events and every NAME.ID
 * of user_events_multi, all or nothing
 */
TEST_F_TIMEOUT(en, delete_name_deletes_all_formats, LONG_TIMEOUT)
{
	const int both = USER_EVENT_REG_MULTI_FORMAT | USER_EVENT_REG_PERSIST;
	const char *name = PREFIX "dname";
	__u32 *word = (__u32 *)self->page;
	char n1[96], n2[96];
	int fd2;

	/* A plain event and two multi-format ones, one of them held */
	ASSERT_EQ(0, ue_dyn("u:" PREFIX "dname u16 p"));
	ASSERT_EQ(0, en_reg_free(PREFIX "dname u32 a", word, 0, both));
	fd2 = ue_open_data();
	ASSERT_NE(-1, fd2);
	ASSERT_EQ(0, en_reg(fd2, PREFIX "dname u64 b", word, 4, 1, both,
			    NULL));
	ASSERT_EQ(1, en_multi_find(name, "u32 a", n1, sizeof(n1)));
	ASSERT_EQ(1, en_multi_find(name, "u64 b", n2, sizeof(n2)));

	/* Held by an fd slot, then by an enable bit: none is deleted */
	ASSERT_EQ(EBUSY, ue_del(name));
	close(fd2);
	ASSERT_EQ(EBUSY, ue_del(name));
	ASSERT_TRUE(ue_event_exists(name));
	ASSERT_TRUE(en_exists_in(MULTI, n1));
	ASSERT_TRUE(en_exists_in(MULTI, n2));
	ASSERT_EQ(0, en_unreg(self->fd, word, 1));

	/* The plain one held (enabled): none is deleted either */
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	ASSERT_EQ(EBUSY, ue_del(name));
	ASSERT_EQ(0, ue_enable(NULL, name, false));
	ASSERT_TRUE(ue_event_exists(name));
	ASSERT_TRUE(en_exists_in(MULTI, n1));
	ASSERT_TRUE(en_exists_in(MULTI, n2));

	/* A multi-format one enabled */
	ASSERT_EQ(0, en_multi_enable(n2, true));
	ASSERT_EQ(EBUSY, ue_del(name));
	ASSERT_EQ(0, en_multi_enable(n2, false));
	ASSERT_TRUE(ue_event_exists(name));
	ASSERT_TRUE(en_exists_in(MULTI, n1));
	ASSERT_TRUE(en_exists_in(MULTI, n2));

	/* None held: all three go at once */
	ASSERT_EQ(0, ue_del(name));
	ASSERT_FALSE(ue_event_exists(name));
	ASSERT_FALSE(en_exists_in(MULTI, n1));
	ASSERT_FALSE(en_exists_in(MULTI, n2));
	ASSERT_EQ(0, en_multi_find(name, "u32 a", n1, sizeof(n1)));
	ASSERT_EQ(0, en_multi_find(name, "u64 b", n2, sizeof(n2)));
	ASSERT_EQ(ENOENT, ue_del(name));

	/* Multi-format events only */
	ASSERT_EQ(0, en_reg_free(PREFIX "dname u32 a", word, 0, both));
	ASSERT_EQ(0, en_reg_free(PREFIX "dname u64 b", word, 1, both));
	ASSERT_EQ(1, en_multi_find(name, "u32 a", n1, sizeof(n1)));
	ASSERT_EQ(1, en_multi_find(name, "u64 b", n2, sizeof(n2)));
	ASSERT_EQ(0, ue_del(name));
	ASSERT_FALSE(en_exists_in(MULTI, n1));
	ASSERT_FALSE(en_exists_in(MULTI, n2));
	ASSERT_EQ(ENOENT, ue_del(name));
}

/*
 * Delete the events root made, for all of a name's events or none: as
 * nobody in group UE_TEST_GID, given user_events_data, every one is EPERM
 * (another user's); as uid 0 without capabilities, only the status page
 * event, its own, may go: those of dynamic_events and
 * USER_EVENT_REG_PERSIST are EPERM for their owner too; as nobody with
 * CAP_PERFMON, the rest go.
 */
/* Plain (dynamic_events) and multi-format (USER_EVENT_REG_PERSIST) */
#define PDEL		PREFIX "pdel"
/* Plain, made by USER_EVENT_REG_PERSIST */
#define PPLAIN		PREFIX "pplain"
/* Made by a status page registration, by dynamic_events */
#define PSTATUS		PREFIX "pstatus"
#define PDYN		PREFIX "pdyn"

enum del_who { DEL_NOBODY, DEL_ROOT_NO_CAPS, DEL_PERFMON };

struct del_ctx {
	enum del_who who;
	char multi[96];		/* NAME.ID of PDEL in user_events_multi */
};

/*
 * What each deleter gets for NAME.ID, PDEL, PPLAIN, PSTATUS, PDYN; -1:
 * not tried, gone already (with PDEL, or by the deleter before)
 */
static const int del_want[][5] = {
	[DEL_NOBODY] = { EPERM, EPERM, EPERM, EPERM, EPERM },
	[DEL_ROOT_NO_CAPS] = { EPERM, EPERM, EPERM, 0, EPERM },
	[DEL_PERFMON] = { -1, 0, 0, -1, 0 },
};

/* The names deleted, in del_want[]'s order; the first is @multi */
static const char * const del_names[] = {
	NULL, PDEL, PPLAIN, PSTATUS, PDYN,
};

static int del_child(struct ue_child *c, void *arg)
{
	struct del_ctx *x = arg;
	const char *name;
	const int *want = del_want[x->who];
	gid_t groups[1] = { UE_TEST_GID };
	int fd, i, ret;

	/* uid 0 reaches user_events_data as a member too: its mode is 0060 */
	if (x->who == DEL_ROOT_NO_CAPS)
		ret = setgroups(1, groups) ?: ue_set_caps(false);
	else
		ret = ue_become_nobody(x->who == DEL_PERFMON);
	if (ret)
		return ue_child_fail(1, "change credentials");
	fd = ue_open_data();
	if (fd == -1)
		return ue_child_fail(2, "open user_events_data");

	for (i = 0; i < (int)ARRAY_SIZE(del_names); i++) {
		if (want[i] == -1)
			continue;
		name = i ? del_names[i] : x->multi;
		errno = ue_ioctl(fd, DIAG_IOCSDEL, (void *)name);
		if (errno != want[i]) {
			fprintf(stderr, "# deleter %d: delete %s: expected %s\n",
				x->who, name, strerror(want[i]));
			return ue_child_fail(3 + i, "delete");
		}
	}
	close(fd);

	return 0;
}

TEST_F_TIMEOUT(en, delete_persistent_needs_perfmon, LONG_TIMEOUT)
{
	__u32 *word = (__u32 *)self->page;
	struct ue_status_reg sreg;
	struct del_ctx x = { .who = DEL_NOBODY };
	struct ue_child c;
	int fd2;

	/* The admin hands user_events_data to the group */
	ASSERT_EQ(0, ue_grant_dirs(&self->attrs));
	ASSERT_EQ(0, ue_grant(&self->attrs, ue_path("user_events_data"),
			      UE_TEST_GID, 0060));

	/* Root makes them, each held by nothing */
	ASSERT_EQ(0, ue_dyn("u:" PDEL " u16 p"));
	ASSERT_EQ(0, en_reg_free(PDEL " u32 a", word, 0,
				 USER_EVENT_REG_MULTI_FORMAT |
				 USER_EVENT_REG_PERSIST));
	ASSERT_EQ(1, en_multi_find(PDEL, "u32 a", x.multi, sizeof(x.multi)));
	ASSERT_EQ(0, en_reg_free(PPLAIN " u32 a", word, 1,
				 USER_EVENT_REG_PERSIST));
	fd2 = ue_open_data();
	ASSERT_NE(-1, fd2);
	ASSERT_EQ(0, ue_reg(fd2, PSTATUS " u32 a", &sreg));
	close(fd2);
	ASSERT_EQ(0, ue_dyn("u:" PDYN " u32 a"));

	/* Without CAP_PERFMON: root's events all stay */
	ASSERT_EQ(0, ue_child_start(&c, del_child, &x));
	ASSERT_EQ(0, ue_child_finish(&c));
	ASSERT_TRUE(ue_event_exists(PDEL));
	ASSERT_TRUE(en_exists_in(MULTI, x.multi));
	ASSERT_TRUE(ue_event_exists(PPLAIN));
	ASSERT_TRUE(ue_event_exists(PSTATUS));
	ASSERT_TRUE(ue_event_exists(PDYN));

	/* Root's uid, no capability: its status page event only */
	x.who = DEL_ROOT_NO_CAPS;
	ASSERT_EQ(0, ue_child_start(&c, del_child, &x));
	ASSERT_EQ(0, ue_child_finish(&c));
	ASSERT_TRUE(ue_event_exists(PDEL));
	ASSERT_TRUE(en_exists_in(MULTI, x.multi));
	ASSERT_TRUE(ue_event_exists(PPLAIN));
	ASSERT_FALSE(ue_event_exists(PSTATUS));
	ASSERT_TRUE(ue_event_exists(PDYN));

	/* With CAP_PERFMON: every one of them */
	x.who = DEL_PERFMON;
	ASSERT_EQ(0, ue_child_start(&c, del_child, &x));
	ASSERT_EQ(0, ue_child_finish(&c));
	ASSERT_FALSE(ue_event_exists(PDEL));
	ASSERT_FALSE(en_exists_in(MULTI, x.multi));
	ASSERT_FALSE(ue_event_exists(PPLAIN));
	ASSERT_FALSE(ue_event_exists(PSTATUS));
	ASSERT_FALSE(ue_event_exists(PDYN));
}

TEST_F_TIMEOUT(en, user_events_max, LONG_TIMEOUT)
{
	const char *first = PREFIX "max_a u32 v", *next = PREFIX "max_b u32 v";
	__u32 *word = (__u32 *)self->page;
	struct ue_status_reg sreg;
	struct ue_log_entry e;
	int count;

	self->max0 = ue_get_max();
	ASSERT_EQ(MAX_DEFAULT, self->max0);
	ASSERT_EQ(EINVAL, en_set_max_text("-1\n"));
	ASSERT_EQ(MAX_DEFAULT, ue_get_max());

	/* Room for one more event, once pending deletions are done */
	ASSERT_TRUE(en_gc_passed());
	count = ue_count_events();
	ASSERT_LE(0, count);
	ASSERT_EQ(0, ue_set_max(count + 1));
	ASSERT_EQ(0, en_reg(self->fd, first, word, 4, 0,
			    USER_EVENT_REG_PERSIST, NULL));

	/* No new event of any kind, by any way */
	ASSERT_EQ(0, ue_clear_error_log());
	ASSERT_EQ(EMFILE, en_reg(self->fd, next, word, 4, 1, 0, NULL));
	ASSERT_EQ(0, ue_last_error(&e));
	ASSERT_STREQ("Too many events, see kernel.user_events_max", e.msg);
	ASSERT_STREQ(next, e.cmd);
	ASSERT_EQ(EMFILE, en_reg(self->fd, next, word, 4, 1,
				 USER_EVENT_REG_MULTI_FORMAT, NULL));
	ASSERT_EQ(EMFILE, en_reg(self->fd, first, word, 4, 1,
				 USER_EVENT_REG_MULTI_FORMAT, NULL));
	ASSERT_EQ(EMFILE, ue_reg(self->fd, next, &sreg));
	ASSERT_EQ(EMFILE, ue_dyn("u:" PREFIX "max_b u32 v"));
	ASSERT_FALSE(ue_event_exists(PREFIX "max_b"));
	ASSERT_EQ(count + 1, ue_count_events());

	/* Existing events still register, both ways */
	ASSERT_EQ(0, en_reg(self->fd, first, word, 4, 1, 0, NULL));
	ASSERT_EQ(0, ue_reg(self->fd, first, &sreg));
	ASSERT_EQ(0, ue_dyn("u:" PREFIX "max_a u32 v"));

	/* Also with the limit below the count */
	ASSERT_EQ(0, ue_set_max(0));
	ASSERT_EQ(0, en_reg(self->fd, first, word, 4, 2, 0, NULL));
	ASSERT_EQ(EMFILE, en_reg(self->fd, next, word, 4, 3, 0, NULL));

	/* Room again */
	ASSERT_EQ(0, ue_set_max(count + 2));
	ASSERT_EQ(0, en_reg(self->fd, next, word, 4, 3,
			    USER_EVENT_REG_PERSIST, NULL));
	ASSERT_EQ(0, ue_set_max(self->max0));
	ASSERT_EQ(MAX_DEFAULT, ue_get_max());
}

TEST_HARNESS_MAIN
