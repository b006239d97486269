// SPDX-License-Identifier: GPL-2.0
/*
 * user_events command parsing, through DIAG_IOCSREG and dynamic_events
 * alike: every accepted type, every rejection with its errno and error_log
 * entry, and the matching rules of "!u:" deletes.
 */
#include "user_events_selftests.h"

#define PREFIX "ue_dyn_"

/* Eprobes of the name_taken test: in the user_events system and another */
#define EP_TAKEN PREFIX "taken"
#define EP_GROUP PREFIX "group"
#define EP_OTHER PREFIX "other"

/* 64 characters: the longest name there may be */
#define NAME64 PREFIX "x12345678901234567890123456789012345678901234567890123456"

struct good_case {
	const char *flags;	/* ":FLAGS" after the name, or NULL */
	const char *fields;	/* after "NAME " */
	const char *listing;	/* fields as dynamic_events lists them, or NULL */
};

static const struct good_case good_cases[] = {
	{ NULL, "s8 a", "s8 a" },
	{ NULL, "u8 a", "u8 a" },
	{ NULL, "s16 a", "s16 a" },
	{ NULL, "u16 a", "u16 a" },
	{ NULL, "s32 a", "s32 a" },
	{ NULL, "u32 a", "u32 a" },
	{ NULL, "s64 a", "s64 a" },
	{ NULL, "u64 a", "u64 a" },
	{ NULL, "char a", "char a" },
	{ NULL, "unsigned char a", "unsigned char a" },
	{ NULL, "short a", "short a" },
	{ NULL, "unsigned short a", "unsigned short a" },
	{ NULL, "int a", "int a" },
	{ NULL, "unsigned int a", "unsigned int a" },
	{ NULL, "char[1] a", "char[1] a" },
	{ NULL, "char[20] a", "char[20] a" },
	{ NULL, "char[1024] a", "char[1024] a" },
	{ NULL, "char[0x14] a", NULL },
	{ NULL, "char[0x400] a", NULL },
	{ NULL, "unsigned char[16] a", "unsigned char[16] a" },
	{ NULL, "unsigned char[0x10] a", NULL },
	/* Array size literals of up to 6 characters, any spelling */
	{ NULL, "char[0x0400] a", "char[1024] a" },
	{ NULL, "char[001024] a", "char[1024] a" },
	{ NULL, "char[0X400] a", "char[1024] a" },
	{ NULL, "unsigned char[000016] a", "unsigned char[16] a" },
	{ NULL, "__data_loc char[] a", "__data_loc char[] a" },
	{ NULL, "__data_loc unsigned char[] a", "__data_loc unsigned char[] a" },
	{ NULL, "__rel_loc char[] a", "__rel_loc char[] a" },
	{ NULL, "__rel_loc unsigned char[] a", "__rel_loc unsigned char[] a" },
	{ NULL, "struct foo a 1", "struct foo a 1" },
	{ NULL, "struct foo a 20", "struct foo a 20" },
	{ NULL, "struct foo a 1024", "struct foo a 1024" },
	/* The literal length rule is for arrays only */
	{ NULL, "struct foo a 0x0000014", "struct foo a 20" },
	{ NULL, "struct foo a 00000000020", "struct foo a 20" },
	/* Tags the tracing core does not take for a string */
	{ NULL, "struct charger a 4", "struct charger a 4" },
	{ NULL, "struct __data_loc a 4", "struct __data_loc a 4" },
	{ NULL, "struct data_loc_char a 4", "struct data_loc_char a 4" },
	{ NULL, "struct __rel_loc_Char a 4", "struct __rel_loc_Char a 4" },
	{ NULL, "", "" },
	{ NULL, "u32 a; char[16] b", "u32 a; char[16] b" },
	{ NULL, "u32 _x; s64 y_2; __data_loc char[] Msg",
	  "u32 _x; s64 y_2; __data_loc char[] Msg" },
	{ NULL, "u32 a;", NULL },
	{ NULL, "u32 a;u64 b", NULL },
	{ NULL, "u32 a ; u64 b ;", NULL },
	{ NULL, "u32 a  ;  u64 b", NULL },
	/* Exactly the 4048 bytes a record can carry */
	{ NULL, "char[1024] a; char[1024] b; char[1024] c; char[976] d", NULL },
	{ "BPF_ITER", "u32 a", NULL },
	{ "FOO,BAR", "u32 a", NULL },
	{ "BPF_ITER", "", NULL },
};

/* Commands refused with one errno and one error_log message */
struct bad_case {
	int err;
	const char *msg;	/* error_log message, or NULL to not check */
	/*
	 * name_args as given to DIAG_IOCSREG ("u:" is put in front for
	 * dynamic_events), up to a NULL.  An '@' marks where the error_log
	 * caret must point and is removed before use; without '@' the caret
	 * is only checked to be within the command.  Bytes above 0x7f are
	 * there because the kernel's isalnum() takes Latin-1 letters.
	 */
	const char *cmds[10];
};

#define BAD PREFIX "bad "

static const struct bad_case bad_cases[] = {
	{ EINVAL, "Unknown field type", {
		BAD "u32 a; @bogus b", BAD "@s128 a", BAD "struct @t\xc2g s 4" } },
	{ EINVAL, NULL, {
		BAD "@unsigned a", BAD "@u32[4] a", BAD "@__data_loc char a",
		BAD "@__data_loc u32 a", BAD "@char[-1] a", BAD "@char[] a",
		BAD "@char[x] a" } },
	/* The last two are files of the user_events system directory */
	{ EINVAL, "Invalid event name", {
		"@1" BAD "u32 a", "@ue-dyn-bad u32 a", "@ue/dyn_bad u32 a",
		"@ue.dyn_bad u32 a", "@" PREFIX "bad\xc2 u32 a",
		"@\xe9" BAD "u32 a", "@" PREFIX "b\xc3\xa9 u32 a",
		"@enable u32 a", "@filter u32 a" } },
	{ EINVAL, "Event name is too long", { "@" NAME64 "x u32 a" } },
	{ EINVAL, "Type has no fixed size, use s64/u64 or s32/u32", {
		BAD "@long a", BAD "u32 a; @unsigned long b" } },
	/* A missing token: the caret marks where it should have been */
	{ EINVAL, "Missing field name", { BAD "u32@", BAD "u32 a; u64@" } },
	{ EINVAL, "Invalid field name", {
		BAD "u32 @1a", BAD "u32 @a-b", BAD "u32 @a.b", BAD "u32 @f\xe9",
		BAD "u32 a; u8 @\xc2z" } },
	/* The names of the common fields are taken */
	{ EINVAL, "Duplicate field name", {
		BAD "u32 a; u64 @a", BAD "u32 abc; char[4] x; s8 @abc",
		BAD "u32 @common_pid" } },
	{ EINVAL, "Invalid array size", {
		BAD "@char[0] a", BAD "@char[1025] a", BAD "@char[9999] a",
		BAD "@char[0x401] a", BAD "@unsigned char[0] a" } },
	{ EINVAL, "Array size literal is longer than 6 characters", {
		BAD "@char[99999999999999999999999999999] a",
		BAD "@char[0x0000000000001] a", BAD "@char[0000020] a",
		BAD "@char[1234567] a", BAD "u8 a; @unsigned char[0x00400] b" } },
	/* Struct tags the tracing core would read as a string */
	{ EINVAL, "Struct type would be read as a string", {
		BAD "struct @__data_loc_char s 1",
		BAD "struct @__rel_loc_char s 4",
		BAD "struct @x__data_loc_charx s 4",
		BAD "u32 a; struct @char__rel_loc s 4" } },
	{ EINVAL, "Struct field needs a size", { BAD "struct foo a@" } },
	{ EINVAL, "Invalid struct size", {
		BAD "struct foo a @0", BAD "struct foo a @1025",
		BAD "struct foo a @x" } },
	{ EINVAL, "Unexpected token", {
		BAD "u32 a @4", BAD "char[4] a @4" } },
	{ EINVAL, "Empty field", {
		BAD "u32 a;@;u32 b", BAD "u32 a; @; u32 b", BAD "@;u32 a" } },
	{ E2BIG, NULL, {
		BAD "char[1024] a; char[1024] b; char[1024] c; char[977] d" } },
};

FIXTURE(dyn) {
	int fd;
};

FIXTURE_SETUP(dyn)
{
	UE_SKIP_IF_UNAVAILABLE();

	ue_eprobe_remove(USER_EVENTS_SYSTEM, EP_TAKEN);
	ue_eprobe_remove(EP_GROUP, EP_OTHER);
	ue_cleanup_events(PREFIX);
	self->fd = ue_open_data();
	ASSERT_NE(-1, self->fd);
	ASSERT_EQ(0, ue_clear_error_log());
}

FIXTURE_TEARDOWN(dyn)
{
	if (self->fd != -1)
		close(self->fd);
	ue_eprobe_remove(USER_EVENTS_SYSTEM, EP_TAKEN);
	ue_eprobe_remove(EP_GROUP, EP_OTHER);
	ue_cleanup_events(PREFIX);
	ue_clear_error_log();
}

/* Is "u:NAME[ FIELDS]" a line of dynamic_events? */
static bool listed(const char *name, const char *fields)
{
	char *text = ue_read_file("dynamic_events");
	char line[4200];
	bool found;

	if (!text)
		return false;
	snprintf(line, sizeof(line), "u:%s%s%s", name,
		 fields && *fields ? " " : "", fields ? fields : "");
	if (fields) {
		found = ue_has_line(text, line);
	} else {
		/* Only the name matters: "u:NAME" alone or followed by fields */
		size_t len = strlen(line);
		char *p = text;

		found = false;
		while (p && *p && !found) {
			found = !strncmp(p, line, len) &&
				(p[len] == ' ' || p[len] == '\n' || !p[len]);
			p = strchr(p, '\n');
			if (p)
				p++;
		}
	}
	free(text);

	return found;
}

static void good_cmd(const struct good_case *c, const char *name, char *cmd,
		     size_t len)
{
	snprintf(cmd, len, "%s%s%s%s%s", name, c->flags ? ":" : "",
		 c->flags ? c->flags : "", *c->fields ? " " : "", c->fields);
}

TEST_F(dyn, accepted_ioctl)
{
	char cmd[256], name[64];
	struct user_reg reg;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(good_cases); i++) {
		const struct good_case *c = &good_cases[i];

		snprintf(name, sizeof(name), PREFIX "ok%zu", i);
		good_cmd(c, name, cmd, sizeof(cmd));

		ASSERT_EQ(0, ue_reg(self->fd, cmd, &reg)) {
			TH_LOG("refused: \"%s\"", cmd);
		}
		ASSERT_EQ(i, reg.write_index);
		ASSERT_TRUE(ue_event_exists(name)) {
			TH_LOG("no event directory for \"%s\"", cmd);
		}
		ASSERT_TRUE(listed(name, c->listing)) {
			TH_LOG("\"%s\" not listed as \"u:%s %s\"", cmd, name,
			       c->listing ? c->listing : "...");
		}
	}

	close(self->fd);
	self->fd = -1;
	for (i = 0; i < ARRAY_SIZE(good_cases); i++) {
		snprintf(name, sizeof(name), PREFIX "ok%zu", i);
		ASSERT_EQ(0, ue_del(name));
		ASSERT_FALSE(ue_event_exists(name));
		ASSERT_FALSE(listed(name, NULL));
	}
}

TEST_F(dyn, accepted_dynamic_events)
{
	char cmd[256], name[64];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(good_cases); i++) {
		const struct good_case *c = &good_cases[i];

		snprintf(name, sizeof(name), PREFIX "ok%zu", i);
		good_cmd(c, name, cmd + 2, sizeof(cmd) - 2);
		memcpy(cmd, "u:", 2);

		ASSERT_EQ(0, ue_dyn(cmd)) {
			TH_LOG("refused: \"%s\"", cmd);
		}
		ASSERT_TRUE(ue_event_exists(name)) {
			TH_LOG("no event directory for \"%s\"", cmd);
		}
		ASSERT_TRUE(listed(name, c->listing)) {
			TH_LOG("\"%s\" not listed as \"u:%s %s\"", cmd, name,
			       c->listing ? c->listing : "...");
		}

		/* Delete by name */
		snprintf(cmd, sizeof(cmd), "!u:%s", name);
		ASSERT_EQ(0, ue_dyn(cmd));
		ASSERT_FALSE(ue_event_exists(name));
		ASSERT_FALSE(listed(name, NULL));
	}
}

/* The longest name, and 256 fields */
TEST_F(dyn, limits_accepted)
{
	struct user_reg reg;
	char *cmd;
	int i, len;

	ASSERT_EQ(64, strlen(NAME64));
	ASSERT_EQ(0, ue_reg(self->fd, NAME64 " u32 a", &reg));
	ASSERT_TRUE(ue_event_exists(NAME64));
	ASSERT_EQ(EINVAL, ue_reg(self->fd, NAME64 "d u32 a", &reg));
	ASSERT_FALSE(ue_event_exists(NAME64 "d"));

	/* The same name through dynamic_events is the same event */
	ASSERT_EQ(EADDRINUSE, ue_dyn("u:" NAME64 " u8 b"));
	ASSERT_EQ(EINVAL, ue_dyn("u:" NAME64 "d u32 a"));
	ASSERT_FALSE(ue_event_exists(NAME64 "d"));

	cmd = malloc(4096);
	ASSERT_NE(NULL, cmd);
	len = sprintf(cmd, "u:" PREFIX "f256 ");
	for (i = 0; i < 256; i++)
		len += sprintf(cmd + len, "u8 f%d;", i);
	ASSERT_LT(len, 4000);

	ASSERT_EQ(0, ue_reg(self->fd, cmd + 2, &reg));
	ASSERT_TRUE(ue_event_exists(PREFIX "f256"));
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, ue_del(PREFIX "f256"));

	ASSERT_EQ(0, ue_dyn(cmd));
	ASSERT_TRUE(ue_event_exists(PREFIX "f256"));
	ASSERT_EQ(0, ue_dyn("!u:" PREFIX "f256"));
	free(cmd);

	ASSERT_EQ(0, ue_del(NAME64));
	ASSERT_EQ(0, ue_dyn("u:" NAME64 " u32 a"));
	ASSERT_TRUE(ue_event_exists(NAME64));
	ASSERT_EQ(0, ue_dyn("!u:" NAME64));
	ASSERT_FALSE(ue_event_exists(NAME64));
}

/* Split a bad_case command into the real command and the caret offset */
static int strip_marker(const char *in, char *out, size_t len)
{
	const char *at = strchr(in, '@');

	snprintf(out, len, "%s", in);
	if (!at)
		return -1;
	memmove(out + (at - in), out + (at - in) + 1,
		strlen(out + (at - in) + 1) + 1);

	return at - in;
}

/*
 * Check the newest error_log entry for a refused command.  @name_args is
 * the command without "u:"; the logged command may carry the "u:" of a
 * dynamic_events line in front of it, which moves the caret along.
 */
static void check_log(struct __test_metadata *_metadata, const char *name_args,
		      const char *msg, int caret)
{
	struct ue_log_entry e;
	size_t base, len;

	ASSERT_EQ(0, ue_last_error(&e)) {
		TH_LOG("no user_events error_log entry for \"%s\"", name_args);
	}
	if (msg) {
		ASSERT_STREQ(msg, e.msg) {
			TH_LOG("command \"%s\"", name_args);
		}
	}

	len = strlen(e.cmd);
	ASSERT_GE(len, strlen(name_args)) {
		TH_LOG("logged \"%s\" for \"%s\"", e.cmd, name_args);
	}
	base = len - strlen(name_args);
	ASSERT_STREQ(name_args, e.cmd + base) {
		TH_LOG("logged \"%s\" for \"%s\"", e.cmd, name_args);
	}
	ASSERT_TRUE(base == 0 || (base == 2 && !strncmp(e.cmd, "u:", 2))) {
		TH_LOG("logged \"%s\" for \"%s\"", e.cmd, name_args);
	}

	if (caret >= 0) {
		ASSERT_EQ(base + caret, e.caret) {
			TH_LOG("caret under \"%s\" in \"%s\", wanted under \"%s\"",
			       e.cmd + (e.caret < (int)len ? e.caret : len),
			       e.cmd, name_args + caret);
		}
	} else {
		ASSERT_LE(e.caret, len);
	}
}

/*
 * Give every command of bad_cases to DIAG_IOCSREG on @fd, or to
 * dynamic_events when @fd is -1: each must be refused as its case says
 */
static void check_rejected(struct __test_metadata *_metadata, int fd)
{
	const char *shown;
	struct user_reg reg;
	char cmd[256];
	size_t i, j;
	int caret, ret;

	for (i = 0; i < ARRAY_SIZE(bad_cases); i++) {
		const struct bad_case *c = &bad_cases[i];

		for (j = 0; j < ARRAY_SIZE(c->cmds) && c->cmds[j]; j++) {
			memcpy(cmd, "u:", 2);
			caret = strip_marker(c->cmds[j], cmd + 2,
					     sizeof(cmd) - 2);
			shown = fd == -1 ? cmd : cmd + 2;
			ASSERT_EQ(0, ue_clear_error_log());
			ret = fd == -1 ? ue_dyn(cmd) : ue_reg(fd, cmd + 2, &reg);
			ASSERT_EQ(c->err, ret) {
				TH_LOG("\"%s\"", shown);
			}
			ASSERT_FALSE(ue_event_exists(PREFIX "bad"));
			if (c->msg)
				check_log(_metadata, cmd + 2, c->msg, caret);
		}
	}
}

TEST_F(dyn, rejected_ioctl)
{
	struct user_reg reg;

	check_rejected(_metadata, self->fd);

	/* None of that used up a write slot */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "after u32 a", &reg));
	ASSERT_EQ(0, reg.write_index);
}

TEST_F(dyn, rejected_dynamic_events)
{
	check_rejected(_metadata, -1);
	ASSERT_FALSE(listed(PREFIX "bad", NULL));
}

/*
 * More than 256 fields: E2BIG with "Too many fields", the caret under the
 * start of the fields or under the 257th.
 */
TEST_F(dyn, too_many_fields)
{
	const int first = strlen(PREFIX "f257 ");
	struct ue_log_entry e;
	struct user_reg reg;
	int i, len, pass, ret, c257 = 0;
	char *cmd;

	cmd = malloc(4096);
	ASSERT_NE(NULL, cmd);
	len = sprintf(cmd, "u:" PREFIX "f257 ");
	for (i = 0; i < 257; i++) {
		if (i == 256)
			c257 = len - 2;
		len += sprintf(cmd + len, "u8 f%d;", i);
	}

	for (pass = 0; pass < 2; pass++) {
		int base = pass ? 2 : 0;

		ASSERT_EQ(0, ue_clear_error_log());
		ret = pass ? ue_dyn(cmd) : ue_reg(self->fd, cmd + 2, &reg);
		ASSERT_EQ(E2BIG, ret);
		ASSERT_FALSE(ue_event_exists(PREFIX "f257"));
		check_log(_metadata, cmd + 2, "Too many fields", -1);
		ASSERT_EQ(0, ue_last_error(&e));
		ASSERT_TRUE(e.caret == base + first || e.caret == base + c257) {
			TH_LOG("caret at %d", e.caret);
		}
	}
	free(cmd);
}

/* A command that fails leaves the error_log entry the brief describes */
TEST_F(dyn, error_log_text)
{
	static const char cmd[] = "u:" PREFIX "log u32 a; bogus b";
	char *text, *p;

	ASSERT_EQ(EINVAL, ue_dyn(cmd));
	text = ue_read_file("error_log");
	ASSERT_NE(NULL, text);

	/* "[ time] user_events: error: Unknown field type" */
	p = strstr(text, "] user_events: error: Unknown field type\n");
	ASSERT_NE(NULL, p) {
		TH_LOG("error_log:\n%s", text);
	}
	p = strchr(p, '\n') + 1;
	ASSERT_EQ(0, strncmp(p, UE_CMD_PREFIX, strlen(UE_CMD_PREFIX))) {
		TH_LOG("error_log:\n%s", text);
	}
	/* Exactly one entry */
	ASSERT_EQ(NULL, strstr(p, "user_events: error:"));
	free(text);

	/* Clearing empties it */
	ASSERT_EQ(0, ue_clear_error_log());
	text = ue_read_file("error_log");
	ASSERT_NE(NULL, text);
	ASSERT_STREQ("", text);
	free(text);
}

TEST_F(dyn, exists_with_other_fields)
{
	struct user_reg reg;

	ASSERT_EQ(0, ue_dyn("u:" PREFIX "ex u32 a"));

	ASSERT_EQ(0, ue_clear_error_log());
	ASSERT_EQ(EADDRINUSE, ue_reg(self->fd, PREFIX "ex u64 a", &reg));
	check_log(_metadata, PREFIX "ex u64 a",
		  "Event exists with different fields", -1);

	ASSERT_EQ(0, ue_clear_error_log());
	ASSERT_EQ(EADDRINUSE, ue_dyn("u:" PREFIX "ex u32 b"));
	check_log(_metadata, PREFIX "ex u32 b",
		  "Event exists with different fields", -1);

	/* Untouched */
	ASSERT_TRUE(listed(PREFIX "ex", "u32 a"));
}

/*
 * Make event @name with @fields through dynamic_events: none of the
 * deletes with the fields of @misses (up to a NULL) may remove it, the
 * delete with the fields @hit must.
 */
static void check_delete(struct __test_metadata *_metadata, const char *name,
			 const char *fields, const char *const *misses,
			 const char *hit)
{
	char cmd[256];
	int i;

	snprintf(cmd, sizeof(cmd), "u:%s %s", name, fields);
	ASSERT_EQ(0, ue_dyn(cmd));
	ASSERT_TRUE(listed(name, fields));

	for (i = 0; misses[i]; i++) {
		snprintf(cmd, sizeof(cmd), "!u:%s %s", name, misses[i]);
		ASSERT_EQ(ENOENT, ue_dyn(cmd)) {
			TH_LOG("\"%s\"", cmd);
		}
	}
	ASSERT_TRUE(ue_event_exists(name));
	ASSERT_TRUE(listed(name, fields));

	snprintf(cmd, sizeof(cmd), "!u:%s %s", name, hit);
	ASSERT_EQ(0, ue_dyn(cmd)) {
		TH_LOG("\"%s\"", cmd);
	}
	ASSERT_FALSE(ue_event_exists(name));
	ASSERT_FALSE(listed(name, NULL));
}

static const char *const no_misses[] = { NULL };

TEST_F(dyn, delete_matching)
{
	/* Fields that differ in any way do not match */
	static const char *const misses[] = {
		"u32 b", "u32 a", "u32 a; char[16] b; u8 c",
		"u32 a; char[17] b", "char[16] b; u32 a", NULL
	};

	/* Blanks and a trailing ';' do not matter */
	check_delete(_metadata, PREFIX "m", "u32 a; char[16] b", misses,
		     "u32 a;char[16] b;");
	check_delete(_metadata, PREFIX "m2", "u32 a; char[16] b", no_misses,
		     "  u32 a ;  char[16] b");

	/* Unknown names */
	ASSERT_EQ(ENOENT, ue_dyn("!u:" PREFIX "nosuch"));
	ASSERT_EQ(ENOENT, ue_dyn("!u:" PREFIX "nosuch u32 a"));
}

TEST_F(dyn, delete_struct)
{
	static const char *const misses[] = {
		"u32 a; struct T s 21", "u32 a; struct U s",
		"u32 a; struct T t", NULL
	};

	/* The size may be left out */
	check_delete(_metadata, PREFIX "s", "u32 a; struct T s 20", misses,
		     "u32 a; struct T s");
	/* Or given */
	check_delete(_metadata, PREFIX "s2", "struct T s 20", no_misses,
		     "struct T s 20");
}

TEST_F(dyn, delete_busy)
{
	struct user_reg reg;

	/* Held by an fd */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "busy u32 a", &reg));
	ASSERT_EQ(EBUSY, ue_dyn("!u:" PREFIX "busy"));
	ASSERT_EQ(EBUSY, ue_dyn("!u:" PREFIX "busy u32 a"));
	ASSERT_TRUE(ue_event_exists(PREFIX "busy"));
	close(self->fd);
	self->fd = -1;

	/* Enabled */
	ASSERT_EQ(0, ue_enable(NULL, PREFIX "busy", true));
	ASSERT_EQ(EBUSY, ue_dyn("!u:" PREFIX "busy"));
	ASSERT_TRUE(ue_event_exists(PREFIX "busy"));
	ASSERT_EQ(0, ue_enable(NULL, PREFIX "busy", false));

	/* Free */
	ASSERT_EQ(0, ue_dyn("!u:" PREFIX "busy"));
	ASSERT_FALSE(ue_event_exists(PREFIX "busy"));
}

/* Events made through dynamic_events and through the ioctl are the same */
TEST_F(dyn, both_interfaces)
{
	int active0, active, busy, max;
	struct user_reg reg;
	char line[128];
	char *text;

	/* dynamic_events events hold no reference: DIAG_IOCSDEL works */
	ASSERT_EQ(0, ue_dyn("u:" PREFIX "both u32 a"));
	ASSERT_TRUE(ue_event_exists(PREFIX "both"));
	ASSERT_EQ(0, ue_del(PREFIX "both"));
	ASSERT_FALSE(ue_event_exists(PREFIX "both"));
	ASSERT_FALSE(listed(PREFIX "both", NULL));

	/* Registering it with the same fields finds it */
	ASSERT_EQ(0, ue_dyn("u:" PREFIX "both u32 a; char[8] b"));
	ASSERT_EQ(0, ue_status_counts(&active0, &busy, &max));
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "both u32 a; char[8] b", &reg));
	ASSERT_EQ(0, reg.write_index);
	ASSERT_EQ(0, ue_status_counts(&active, &busy, &max));
	ASSERT_EQ(active0, active);

	snprintf(line, sizeof(line), "%u:%s", reg.status_index, PREFIX "both");
	text = ue_read_file("user_events_status");
	ASSERT_NE(NULL, text);
	ASSERT_TRUE(ue_has_line(text, line)) {
		TH_LOG("no \"%s\" in:\n%s", line, text);
	}
	free(text);

	/* With other fields it is refused */
	ASSERT_EQ(EADDRINUSE, ue_reg(self->fd, PREFIX "both u32 a", &reg));

	/* And now the fd holds it */
	ASSERT_EQ(EBUSY, ue_dyn("!u:" PREFIX "both"));
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, ue_dyn("!u:" PREFIX "both u32 a; char[8] b"));
	ASSERT_FALSE(ue_event_exists(PREFIX "both"));
}

/*
 * Names are ASCII identifiers: every byte above 0x7f is refused in an
 * event name, a field name and a struct tag, and makes no event (no
 * tracefs directory, no user_events_status line).  That includes 0xa0,
 * which the kernel's isspace() takes for a blank: only ASCII blanks
 * separate words, so "NAME\xa0u32 a" is one name, not a name and a field.
 */
TEST_F(dyn, non_ascii_names)
{
	int active0, active, busy, max, b, i;
	char cmd[3][64], name[32];
	struct user_reg reg;

	ASSERT_EQ(0, ue_status_counts(&active0, &busy, &max));
	for (b = 0x80; b <= 0xff; b++) {
		snprintf(name, sizeof(name), PREFIX "n%cx", b);
		snprintf(cmd[0], sizeof(cmd[0]), "u:%s u32 a", name);
		snprintf(cmd[1], sizeof(cmd[1]), "u:" PREFIX "f u32 a%cb", b);
		snprintf(cmd[2], sizeof(cmd[2]), "u:" PREFIX "t struct t%cg s 4",
			 b);
		for (i = 0; i < 3; i++) {
			ASSERT_EQ(EINVAL, ue_reg(self->fd, cmd[i] + 2, &reg)) {
				TH_LOG("byte 0x%02x: \"%s\"", b, cmd[i] + 2);
			}
			ASSERT_EQ(EINVAL, ue_dyn(cmd[i])) {
				TH_LOG("byte 0x%02x: \"%s\"", b, cmd[i]);
			}
		}
		ASSERT_FALSE(ue_event_exists(name)) {
			TH_LOG("byte 0x%02x", b);
		}
	}
	ASSERT_FALSE(ue_event_exists(PREFIX "f"));
	ASSERT_FALSE(ue_event_exists(PREFIX "t"));

	/* A no-break space does not end a name */
	ASSERT_EQ(EINVAL, ue_reg(self->fd, PREFIX "nb\xa0u32 a", &reg));
	ASSERT_EQ(EINVAL, ue_dyn("u:" PREFIX "nb\xa0u32 a"));
	ASSERT_EQ(EINVAL, ue_reg(self->fd, PREFIX "nb u32\240a", &reg));
	ASSERT_EQ(EINVAL, ue_reg(self->fd, PREFIX "nb\xa0", &reg));
	ASSERT_FALSE(ue_event_exists(PREFIX "nb"));

	ASSERT_EQ(0, ue_status_counts(&active, &busy, &max));
	ASSERT_EQ(active0, active);

	/* None of that used up a write slot */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "after u32 a", &reg));
	ASSERT_EQ(0, reg.write_index);
}

/*
 * A name another kind of event (here an eprobe) has in the user_events
 * system is refused with EADDRINUSE, and nothing is built: no status
 * line, no write slot, the other event untouched and still working.
 */
TEST_F(dyn, name_taken_by_eprobe)
{
	static const char msg[] = "Name is used by another event of the system";
	static const char probe[] = "e:" USER_EVENTS_SYSTEM "/" EP_TAKEN " "
		USER_EVENTS_SYSTEM "/" PREFIX "base v=$v:u32";
	int active0, active, busy, max;
	char *id, *text, *format;
	struct user_reg reg;
	__u32 v = 7;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "base u32 v", &reg));
	ASSERT_EQ(0, reg.write_index);
	ASSERT_EQ(0, ue_dyn(probe));
	ASSERT_TRUE(ue_event_exists(EP_TAKEN));
	id = ue_read_file(ue_event_file(NULL, EP_TAKEN, "id"));
	ASSERT_NE(NULL, id);
	ASSERT_EQ(0, ue_status_counts(&active0, &busy, &max));

	/* With or without fields, through the ioctl or dynamic_events */
	ASSERT_EQ(0, ue_clear_error_log());
	ASSERT_EQ(EADDRINUSE, ue_reg(self->fd, EP_TAKEN " u32 a", &reg));
	check_log(_metadata, EP_TAKEN " u32 a", msg, 0);
	ASSERT_EQ(0, ue_clear_error_log());
	ASSERT_EQ(EADDRINUSE, ue_reg(self->fd, EP_TAKEN, &reg));
	check_log(_metadata, EP_TAKEN, msg, 0);
	ASSERT_EQ(0, ue_clear_error_log());
	ASSERT_EQ(EADDRINUSE, ue_dyn("u:" EP_TAKEN " u32 a"));
	check_log(_metadata, EP_TAKEN " u32 a", msg, 0);
	ASSERT_EQ(0, ue_clear_error_log());
	ASSERT_EQ(EADDRINUSE, ue_dyn("u:" EP_TAKEN " u32 v"));
	check_log(_metadata, EP_TAKEN " u32 v", msg, 0);

	/* It is no user event: DIAG_IOCSDEL does not find it */
	ASSERT_EQ(ENOENT, ue_del(EP_TAKEN));

	/* Nothing was built */
	ASSERT_EQ(0, ue_status_counts(&active, &busy, &max));
	ASSERT_EQ(active0, active);
	text = ue_read_file("user_events_status");
	ASSERT_NE(NULL, text);
	EXPECT_EQ(NULL, strstr(text, ":" EP_TAKEN "\n")) {
		TH_LOG("%s", text);
	}
	free(text);
	ASSERT_FALSE(listed(EP_TAKEN, NULL));
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "next u32 a", &reg));
	ASSERT_EQ(1, reg.write_index);

	/* The eprobe: the same listing, id and format */
	text = ue_read_file("dynamic_events");
	ASSERT_NE(NULL, text);
	EXPECT_TRUE(ue_has_line(text, "e:" USER_EVENTS_SYSTEM "/" EP_TAKEN " "
				USER_EVENTS_SYSTEM "." PREFIX "base v=$v:u32")) {
		TH_LOG("%s", text);
	}
	free(text);
	text = ue_read_file(ue_event_file(NULL, EP_TAKEN, "id"));
	ASSERT_NE(NULL, text);
	EXPECT_STREQ(id, text);
	free(text);
	free(id);
	format = ue_read_file(ue_event_file(NULL, EP_TAKEN, "format"));
	ASSERT_NE(NULL, format);
	EXPECT_NE(NULL, strstr(format, "name: " EP_TAKEN "\n"));
	EXPECT_NE(NULL, strstr(format, "\tfield:u32 v;"));
	free(format);

	/* And it works */
	ASSERT_EQ(0, ue_clear_trace(NULL));
	ASSERT_EQ(0, ue_eprobe_enable(USER_EVENTS_SYSTEM, EP_TAKEN, true));
	ASSERT_EQ(8, ue_emit(self->fd, 0, &v, sizeof(v)));
	UE_ASSERT_TRACE(NULL, EP_TAKEN,
			"(" USER_EVENTS_SYSTEM "." PREFIX "base) v=7\n");

	/* Once it is gone, the name is free */
	ASSERT_EQ(0, ue_eprobe_remove(USER_EVENTS_SYSTEM, EP_TAKEN));
	ASSERT_FALSE(ue_event_exists(EP_TAKEN));
	ASSERT_EQ(0, ue_reg(self->fd, EP_TAKEN " u32 a", &reg));
	ASSERT_EQ(2, reg.write_index);
	ASSERT_EQ(0, ue_clear_trace(NULL));

	/* An eprobe of that name in another system takes nothing */
	ASSERT_EQ(0, ue_dyn("e:" EP_GROUP "/" EP_OTHER " "
			    USER_EVENTS_SYSTEM "/" PREFIX "base"));
	ASSERT_EQ(0, ue_reg(self->fd, EP_OTHER " u32 a", &reg));
	ASSERT_EQ(3, reg.write_index);
	ASSERT_TRUE(ue_event_exists(EP_OTHER));
	ASSERT_EQ(0, ue_eprobe_remove(EP_GROUP, EP_OTHER));
}

TEST_HARNESS_MAIN
