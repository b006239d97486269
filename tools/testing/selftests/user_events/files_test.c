// SPDX-License-Identifier: GPL-2.0
/*
 * The tracefs files of a user event that is deleted while they are open.
 *
 * Each test opens files of an event's directory (format, enable, filter,
 * trigger, hist, id), deletes the event through DIAG_IOCSDEL or through
 * "!u:NAME" in dynamic_events (one variant each), then uses the open
 * files:
 *
 * - the open files do not keep the event: the delete succeeds (only what
 *   makes an event busy, such as an enabled event or a trigger, refuses
 *   it with EBUSY);
 * - afterwards every read and write of such a file fails with ENODEV
 *   (format gives back what it had buffered before the delete, then
 *   ENODEV); opening them again by path fails with ENOENT;
 * - an event created again with the same name is not reachable through
 *   the files of the deleted one;
 * - closing the files releases what they held: the trace instance whose
 *   files they were can be removed afterwards.
 *
 * Before the tracing core cleared the pointers these files keep in their
 * inodes, format and trigger read the freed event (KASAN reports a
 * use-after-free), filter and hist read an empty text and filter took new
 * filters, and id kept giving the old id.
 */
#include "user_events_selftests.h"

#define PREFIX		"ue_files_"
#define INSTANCE	PREFIX "inst"
#define FIELDS		"u32 a; char[8] s"
#define MAX_FDS		16

static const char * const all_files[] = {
	"format", "enable", "filter", "trigger", "hist", "id",
};

#define NR_FILES	ARRAY_SIZE(all_files)

/* Files a test opened, closed by the teardown */
struct open_files {
	int fd[MAX_FDS];
	int count;
};

FIXTURE(files) {
	struct open_files open;
	int active0;
};

FIXTURE_VARIANT(files) {
	/* Create and delete through dynamic_events, else through the ioctls */
	bool dyn;
};

FIXTURE_VARIANT_ADD(files, ioctl) {
	.dyn = false,
};

FIXTURE_VARIANT_ADD(files, dynamic_events) {
	.dyn = true,
};

static void close_files(struct open_files *open)
{
	while (open->count > 0)
		close(open->fd[--open->count]);
}

FIXTURE_SETUP(files)
{
	UE_SKIP_IF_UNAVAILABLE();

	ue_setup_clean(_metadata, INSTANCE, PREFIX, &self->active0);
}

FIXTURE_TEARDOWN(files)
{
	close_files(&self->open);
	ue_instance_remove(INSTANCE);
	ue_cleanup_events(PREFIX);
	ue_expect_active(_metadata, self->active0);
}

/* Create event @name with FIELDS, through dynamic_events if @dyn */
static int create_event(bool dyn, const char *name)
{
	struct user_reg reg;
	char cmd[128];
	int fd, ret;

	if (dyn) {
		snprintf(cmd, sizeof(cmd), "u:%s " FIELDS, name);
		return ue_dyn(cmd);
	}

	/* The event outlives the fd that registered it */
	snprintf(cmd, sizeof(cmd), "%s " FIELDS, name);
	fd = ue_open_data();
	if (fd == -1)
		return errno;
	ret = ue_reg(fd, cmd, &reg);
	close(fd);

	return ret;
}

/* Delete event @name, through dynamic_events if @dyn; 0 or errno */
static int delete_event(bool dyn, const char *name)
{
	char cmd[128];

	if (dyn) {
		snprintf(cmd, sizeof(cmd), "!u:%s", name);
		return ue_dyn(cmd);
	}

	return ue_del(name);
}

/*
 * Open @file of event @name (in @instance, or at the top level) with
 * @flags and add the fd to @open; the fd or -1
 */
static int open_file(struct open_files *open, const char *instance,
		     const char *name, const char *file, int flags)
{
	int fd;

	if (open->count == MAX_FDS) {
		errno = EMFILE;
		return -1;
	}
	fd = ue_open(ue_event_file(instance, name, file), flags);
	if (fd != -1)
		open->fd[open->count++] = fd;

	return fd;
}

/* Up to @size - 1 bytes from offset 0, NUL-terminated; count or -errno */
static ssize_t read_at0(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);

	if (n == -1)
		return -errno;
	buf[n] = '\0';

	return n;
}

/* Up to @size - 1 bytes from the file position, NUL-terminated */
static ssize_t read_next(int fd, char *buf, size_t size)
{
	ssize_t n = read(fd, buf, size - 1);

	if (n == -1)
		return -errno;
	buf[n] = '\0';

	return n;
}

/* Write all of @text in one write(); 0 or errno (EIO if short) */
static int write_text(int fd, const char *text)
{
	ssize_t n = write(fd, text, strlen(text));

	if (n == -1)
		return errno;

	return (size_t)n == strlen(text) ? 0 : EIO;
}

/* Register @name with FIELDS on a new fd and write one record a=@a */
static int write_record(const char *name, __u32 a)
{
	struct {
		__u32 a;
		char s[8];
	} rec = { .a = a, .s = "x" };
	struct user_reg reg;
	char cmd[128];
	int fd, ret;

	snprintf(cmd, sizeof(cmd), "%s " FIELDS, name);
	fd = ue_open_data();
	if (fd == -1)
		return errno;
	ret = ue_reg(fd, cmd, &reg);
	if (!ret && ue_emit(fd, reg.write_index, &rec, sizeof(rec)) !=
	    (ssize_t)(4 + sizeof(rec)))
		ret = EIO;
	close(fd);

	return ret;
}

/* Create event @name and open its @file with @flags; the fd */
static int create_open(struct __test_metadata *_metadata,
		       struct open_files *open, bool dyn, const char *name,
		       const char *file, int flags)
{
	int fd;

	ASSERT_EQ(0, create_event(dyn, name));
	fd = open_file(open, NULL, name, file, flags);
	ASSERT_NE(-1, fd) {
		TH_LOG("open %s: %s", file, strerror(errno));
	}

	return fd;
}

/*
 * Delete event @name, whose file @fd is open: it is gone, and reading @fd
 * fails with ENODEV, as does writing each text of @refused (up to a NULL;
 * @refused may be NULL)
 */
static void delete_check(struct __test_metadata *_metadata, bool dyn,
			 const char *name, int fd,
			 const char *const *refused)
{
	char buf[4096];
	int i;

	ASSERT_EQ(0, delete_event(dyn, name));
	ASSERT_FALSE(ue_event_exists(name));

	ASSERT_EQ(-ENODEV, read_at0(fd, buf, sizeof(buf)));
	for (i = 0; refused && refused[i]; i++) {
		ASSERT_EQ(ENODEV, write_text(fd, refused[i])) {
			TH_LOG("write \"%s\" after the delete", refused[i]);
		}
	}
}

/* The text of @fd from offset 0 is @want, or starts with it if @prefix */
static void check_text(struct __test_metadata *_metadata, int fd,
		       const char *want, bool prefix)
{
	size_t len = strlen(want) + !prefix;
	char buf[1024];

	ASSERT_LT(0, read_at0(fd, buf, sizeof(buf)));
	/* With its NUL, the whole text */
	ASSERT_EQ(0, strncmp(buf, want, len)) {
		TH_LOG("read \"%s\", wanted \"%s\"%s", buf, want,
		       prefix ? " at the start" : "");
	}
}

/*
 * A file that takes writes: writing @set sets something through it, which
 * the file then shows.  That makes the event busy until writing @unset
 * takes it back, unless @unset is NULL.
 */
struct setting {
	const char *file;
	const char *before;	/* what the file shows at first, or NULL */
	const char *set;
	const char *shown;	/* what it shows after @set */
	bool prefix;		/* the texts are the start of what it shows */
	const char *unset;
	const char *refused[3];	/* writes that fail once the event is gone */
};

/*
 * Set @s through the open file of an event, then delete the event: the
 * file, whose fd this returns, fails from then on
 */
static int check_setting(struct __test_metadata *_metadata,
			 struct open_files *open, bool dyn,
			 const struct setting *s)
{
	char name[64];
	int fd;

	snprintf(name, sizeof(name), PREFIX "%s", s->file);
	fd = create_open(_metadata, open, dyn, name, s->file, O_RDWR);
	if (s->before)
		check_text(_metadata, fd, s->before, s->prefix);

	ASSERT_EQ(0, write_text(fd, s->set));
	if (s->unset)
		ASSERT_EQ(EBUSY, delete_event(dyn, name));
	check_text(_metadata, fd, s->shown, s->prefix);
	if (s->unset)
		ASSERT_EQ(0, write_text(fd, s->unset));

	delete_check(_metadata, dyn, name, fd, s->refused);

	return fd;
}

/* The first record of format, read in two parts around the delete */
TEST_F(files, format)
{
	const char *name = PREFIX "format";
	char head[256], buf[4096];
	int fd, unread, id;

	fd = create_open(_metadata, &self->open, variant->dyn, name, "format",
			 O_RDONLY);
	id = ue_event_id(name);
	ASSERT_LT(0, id);
	snprintf(head, sizeof(head), "name: %s\nID: %d\nformat:\n", name, id);
	unread = open_file(&self->open, NULL, name, "format", O_RDONLY);
	ASSERT_NE(-1, unread);
	ASSERT_EQ(10, read_next(fd, buf, 11));
	ASSERT_EQ(0, strncmp(buf, head, 10));

	ASSERT_EQ(0, delete_event(variant->dyn, name));
	ASSERT_FALSE(ue_event_exists(name));

	/* What the first read buffered (the rest of the header), no more */
	ASSERT_EQ(strlen(head) - 10, read_next(fd, buf, sizeof(buf)));
	ASSERT_STREQ(head + 10, buf);
	ASSERT_EQ(-ENODEV, read_next(fd, buf, sizeof(buf)));
	ASSERT_EQ(-ENODEV, read_at0(fd, buf, sizeof(buf)));
	ASSERT_EQ(-ENODEV, read_next(unread, buf, sizeof(buf)));
}

/* Enabled through the file, the event is busy; disabled, it is not */
static const struct setting enable_setting = {
	.file = "enable",
	.before = "0\n",
	.set = "1\n",
	.shown = "1\n",
	.unset = "0\n",
	.refused = { "1\n", "0\n" },
};

TEST_F(files, enable)
{
	int fd = check_setting(_metadata, &self->open, variant->dyn,
			       &enable_setting);

	/* Not a number: refused before the event is looked at */
	ASSERT_EQ(EINVAL, write_text(fd, "x\n"));
}

/* A filter does not make the event busy */
static const struct setting filter_setting = {
	.file = "filter",
	.set = "a == 1\n",
	.shown = "a == 1\n",
	.refused = { "a == 2\n", "0\n" },
};

TEST_F(files, filter)
{
	check_setting(_metadata, &self->open, variant->dyn, &filter_setting);
}

/* A trigger, added through the open file, makes it busy */
static const struct setting trigger_setting = {
	.file = "trigger",
	.before = "# Available triggers:",
	.set = "traceoff\n",
	.shown = "traceoff:unlimited",
	.prefix = true,
	.unset = "!traceoff\n",
	.refused = { "traceoff\n", "!traceoff\n" },
};

TEST_F(files, trigger)
{
	check_setting(_metadata, &self->open, variant->dyn, &trigger_setting);
}

TEST_F(files, hist)
{
	const char *name = PREFIX "hist";
	const char *trigger = ue_event_file(NULL, name, "trigger");
	char buf[4096];
	int fd, early;

	/* Opened with no histogram yet: nothing to show */
	early = create_open(_metadata, &self->open, variant->dyn, name, "hist",
			    O_RDONLY);
	ASSERT_EQ(0, read_at0(early, buf, sizeof(buf)));

	ASSERT_EQ(0, ue_write_file(trigger, "hist:keys=a\n", O_TRUNC));
	ASSERT_EQ(0, write_record(name, 7));
	fd = open_file(&self->open, NULL, name, "hist", O_RDONLY);
	ASSERT_NE(-1, fd);
	ASSERT_LT(0, read_at0(fd, buf, sizeof(buf)));
	ASSERT_NE(NULL, strstr(buf, "# event histogram")) {
		TH_LOG("hist: \"%s\"", buf);
	}
	ASSERT_NE(NULL, strstr(buf, "hitcount:          1")) {
		TH_LOG("hist: \"%s\"", buf);
	}

	/* The hist trigger keeps it; once removed, the open files do not */
	ASSERT_EQ(EBUSY, delete_event(variant->dyn, name));
	ASSERT_EQ(0, ue_clear_triggers(name));
	delete_check(_metadata, variant->dyn, name, fd, NULL);
	ASSERT_EQ(-ENODEV, read_at0(early, buf, sizeof(buf)));
}

TEST_F(files, id)
{
	const char *name = PREFIX "id";
	char buf[64], want[32];
	int fd, id;

	fd = create_open(_metadata, &self->open, variant->dyn, name, "id",
			 O_RDONLY);
	id = ue_event_id(name);
	ASSERT_LT(0, id);
	snprintf(want, sizeof(want), "%d\n", id);
	ASSERT_LT(0, read_at0(fd, buf, sizeof(buf)));
	ASSERT_STREQ(want, buf);

	delete_check(_metadata, variant->dyn, name, fd, NULL);
}

/*
 * Every file open at once, then the event deleted and created again under
 * the same name: the paths are gone until then (ENOENT), and the old
 * files never reach the new event.
 */
TEST_F(files, recreated_name)
{
	const char *name = PREFIX "again";
	int fds[NR_FILES], i, fd;
	char buf[4096], *text;

	ASSERT_EQ(0, create_event(variant->dyn, name));
	for (i = 0; i < (int)NR_FILES; i++) {
		fds[i] = open_file(&self->open, NULL, name, all_files[i], O_RDONLY);
		ASSERT_NE(-1, fds[i]) {
			TH_LOG("open %s: %s", all_files[i], strerror(errno));
		}
	}
	fd = open_file(&self->open, NULL, name, "enable", O_WRONLY);
	ASSERT_NE(-1, fd);

	ASSERT_EQ(0, delete_event(variant->dyn, name));
	for (i = 0; i < (int)NR_FILES; i++) {
		ASSERT_EQ(-1, ue_open(ue_event_file(NULL, name, all_files[i]),
				      O_RDONLY));
		ASSERT_EQ(ENOENT, errno);
	}
	ASSERT_EQ(-1, ue_open(ue_event_file(NULL, name, "enable"), O_WRONLY));
	ASSERT_EQ(ENOENT, errno);

	ASSERT_EQ(0, create_event(variant->dyn, name));
	ASSERT_TRUE(ue_event_exists(name));
	for (i = 0; i < (int)NR_FILES; i++) {
		ASSERT_EQ(-ENODEV, read_at0(fds[i], buf, sizeof(buf))) {
			TH_LOG("%s of the deleted event", all_files[i]);
		}
	}
	/* Enabling through the old file does not enable the new event */
	ASSERT_EQ(ENODEV, write_text(fd, "1\n"));
	text = ue_read_file(ue_event_file(NULL, name, "enable"));
	ASSERT_NE(NULL, text);
	ASSERT_STREQ("0\n", text);
	free(text);
	ASSERT_EQ(0, delete_event(variant->dyn, name));
}

/*
 * The files of an event in a trace instance: the same once the event is
 * deleted, and closing them gives back the instance, which can then be
 * removed (the files hold it while they are open).
 */
TEST_F(files, instance)
{
	static const char * const writable[] = { "enable", "filter", "trigger" };
	const char *name = PREFIX "inst_ev";
	int fds[NR_FILES], wfds[3], i;
	char buf[4096];

	ASSERT_EQ(0, ue_instance_create(INSTANCE));
	ASSERT_EQ(0, create_event(variant->dyn, name));
	for (i = 0; i < (int)NR_FILES; i++) {
		fds[i] = open_file(&self->open, INSTANCE, name, all_files[i],
				   O_RDONLY);
		ASSERT_NE(-1, fds[i]) {
			TH_LOG("open %s: %s", all_files[i], strerror(errno));
		}
	}
	for (i = 0; i < 3; i++) {
		wfds[i] = open_file(&self->open, INSTANCE, name, writable[i],
				    O_WRONLY);
		ASSERT_NE(-1, wfds[i]);
	}

	ASSERT_EQ(0, delete_event(variant->dyn, name));
	ASSERT_FALSE(ue_event_exists(name));
	for (i = 0; i < (int)NR_FILES; i++) {
		ASSERT_EQ(-ENODEV, read_at0(fds[i], buf, sizeof(buf))) {
			TH_LOG("%s of the deleted event", all_files[i]);
		}
	}
	ASSERT_EQ(ENODEV, write_text(wfds[0], "1\n"));
	ASSERT_EQ(ENODEV, write_text(wfds[1], "a == 1\n"));
	ASSERT_EQ(ENODEV, write_text(wfds[2], "traceoff\n"));

	/* Still held by the open files */
	ASSERT_EQ(EBUSY, ue_instance_remove(INSTANCE));
	close_files(&self->open);
	ASSERT_EQ(0, ue_instance_remove(INSTANCE));
}

TEST_HARNESS_MAIN
