// SPDX-License-Identifier: GPL-2.0
/*
 * What user space reads back about user events: the format file (field
 * offsets and the generated print fmt), the user_events_status text, the
 * status page bytes and the rules for mapping that page.
 */
#include "user_events_selftests.h"

#define PREFIX "ue_st_"

FIXTURE(st) {
	int fd;
	int status_fd;
	__u8 *status;
};

FIXTURE_SETUP(st)
{
	UE_SKIP_IF_UNAVAILABLE();

	ue_cleanup_events(PREFIX);
	self->fd = ue_open_data();
	ASSERT_NE(-1, self->fd);
	ASSERT_EQ(0, ue_open_status_page(&self->status_fd, &self->status));
}

FIXTURE_TEARDOWN(st)
{
	ue_close_status_page(self->status_fd, self->status);
	if (self->fd != -1)
		close(self->fd);
	ue_cleanup_events(PREFIX);
}

struct fmt_case {
	const char *fields;
	const char *print_fmt;
	/*
	 * Lines of the format file for the user fields, without their
	 * leading tab; the "\tsigned:N;" part may be left out.
	 */
	const char *lines[10];
};

static const struct fmt_case fmt_cases[] = {
	{
		"u32 data",
		"print fmt: \"data=%u\", REC->data",
		{ "field:u32 data;\toffset:8;\tsize:4;\tsigned:0;" },
	},
	{
		"s8 a; u8 b; s16 c; u16 d; s32 e; u32 f; s64 g; u64 h",
		"print fmt: \"a=%d b=%u c=%d d=%u e=%d f=%u g=%lld h=%llu\", REC->a, REC->b, REC->c, REC->d, REC->e, REC->f, REC->g, REC->h",
		{
			"field:s8 a;\toffset:8;\tsize:1;\tsigned:1;",
			"field:u8 b;\toffset:9;\tsize:1;\tsigned:0;",
			"field:s16 c;\toffset:10;\tsize:2;\tsigned:1;",
			"field:u16 d;\toffset:12;\tsize:2;\tsigned:0;",
			"field:s32 e;\toffset:14;\tsize:4;\tsigned:1;",
			"field:u32 f;\toffset:18;\tsize:4;\tsigned:0;",
			"field:s64 g;\toffset:22;\tsize:8;\tsigned:1;",
			"field:u64 h;\toffset:30;\tsize:8;\tsigned:0;",
		},
	},
	{
		"char a; unsigned char b; short c; unsigned short d; int e; "
		"unsigned int f",
		"print fmt: \"a=%d b=%u c=%d d=%u e=%d f=%u\", REC->a, REC->b, REC->c, REC->d, REC->e, REC->f",
		{
			"field:char a;\toffset:8;\tsize:1;\tsigned:1;",
			"field:unsigned char b;\toffset:9;\tsize:1;\tsigned:0;",
			"field:short c;\toffset:10;\tsize:2;\tsigned:1;",
			"field:unsigned short d;\toffset:12;\tsize:2;\tsigned:0;",
			"field:int e;\toffset:14;\tsize:4;\tsigned:1;",
			"field:unsigned int f;\toffset:18;\tsize:4;\tsigned:0;",
		},
	},
	{
		"char[20] msg",
		"print fmt: \"msg=%s\", REC->msg",
		{ "field:char msg[20];\toffset:8;\tsize:20;" },
	},
	{
		"__data_loc char[] msg",
		"print fmt: \"msg=%s\", __get_str(msg)",
		{ "field:__data_loc char[] msg;\toffset:8;\tsize:4;" },
	},
	{
		"__rel_loc char[] msg",
		"print fmt: \"msg=%s\", __get_rel_str(msg)",
		/* The format file of 6.1 shows the brackets after the name */
		{ "field:__rel_loc char msg[];\toffset:8;\tsize:4;"
		  "|field:__rel_loc char[] msg;\toffset:8;\tsize:4;" },
	},
	{
		"unsigned char[4] h",
		"print fmt: \"h=%s\", __print_hex(REC->h, 4)",
		{ "field:unsigned char h[4];\toffset:8;\tsize:4;" },
	},
	{
		"struct foo s 20",
		"print fmt: \"s=%s\", __print_hex(REC->s, 20)",
		{ "field:struct foo s;\toffset:8;\tsize:20;" },
	},
	{
		"__data_loc unsigned char[] d",
		"print fmt: \"d=%s\", __print_hex(__get_dynamic_array(d), __get_dynamic_array_len(d))",
		{ "field:__data_loc unsigned char[] d;\toffset:8;\tsize:4;" },
	},
	{
		"__rel_loc unsigned char[] r",
		"print fmt: \"r=%s\", __print_hex(__get_rel_dynamic_array(r), __get_rel_dynamic_array_len(r))",
		{ "field:__rel_loc unsigned char r[];\toffset:8;\tsize:4;"
		  "|field:__rel_loc unsigned char[] r;\toffset:8;\tsize:4;" },
	},
	{
		"u32 a; __data_loc char[] b",
		"print fmt: \"a=%u b=%s\", REC->a, __get_str(b)",
		{
			"field:u32 a;\toffset:8;\tsize:4;\tsigned:0;",
			"field:__data_loc char[] b;\toffset:12;\tsize:4;",
		},
	},
	{
		/* Packed: no padding in front of b or d */
		"u8 a; u64 b; char[3] c; u16 d; __rel_loc char[] e; struct x f 3; s16 g",
		"print fmt: \"a=%u b=%llu c=%s d=%u e=%s f=%s g=%d\", REC->a, REC->b, REC->c, REC->d, __get_rel_str(e), __print_hex(REC->f, 3), REC->g",
		{
			"field:u8 a;\toffset:8;\tsize:1;\tsigned:0;",
			"field:u64 b;\toffset:9;\tsize:8;\tsigned:0;",
			"field:char c[3];\toffset:17;\tsize:3;",
			"field:u16 d;\toffset:20;\tsize:2;\tsigned:0;",
			"field:__rel_loc char e[];\toffset:22;\tsize:4;"
			"|field:__rel_loc char[] e;\toffset:22;\tsize:4;",
			"field:struct x f;\toffset:26;\tsize:3;",
			"field:s16 g;\toffset:29;\tsize:2;\tsigned:1;",
		},
	},
	{
		"",
		"print fmt: \"\"",
		{ NULL },
	},
};

/*
 * Does a line of the format file @text read @exp, optionally followed by
 * "\tsigned:N;"?  @exp may list alternatives separated by '|'.
 */
static bool has_field_line(const char *text, const char *exp)
{
	char *alts = strdup(exp), *alt, *save = NULL;
	bool found = false;

	for (alt = strtok_r(alts, "|", &save); alt && !found;
	     alt = strtok_r(NULL, "|", &save)) {
		const char *line = text;
		size_t len = strlen(alt);

		while (line && *line && !found) {
			const char *start = line + strspn(line, "\t");
			const char *end = strchr(start, '\n');

			found = !strncmp(start, alt, len) &&
				(start + len == end || !start[len] ||
				 !strncmp(start + len, "\tsigned:", 8));
			line = end ? end + 1 : NULL;
		}
	}
	free(alts);

	return found;
}

TEST_F(st, format)
{
	char name[64], cmd[256], want[128];
	const char *rel;
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(fmt_cases); i++) {
		const struct fmt_case *c = &fmt_cases[i];
		struct user_reg reg;
		char *text, *line;
		int id;

		snprintf(name, sizeof(name), PREFIX "fmt%zu", i);
		snprintf(cmd, sizeof(cmd), "%s %s", name, c->fields);
		ASSERT_EQ(0, ue_reg(self->fd, cmd, &reg)) {
			TH_LOG("cannot register \"%s\"", cmd);
		}

		rel = ue_event_file(NULL, name, "format");
		text = ue_read_file(rel);
		ASSERT_NE(NULL, text);

		snprintf(want, sizeof(want), "name: %s\n", name);
		ASSERT_EQ(0, strncmp(text, want, strlen(want))) {
			TH_LOG("%s:\n%s", rel, text);
		}
		id = ue_event_id(name);
		ASSERT_GT(id, 0);
		snprintf(want, sizeof(want), "ID: %d", id);
		ASSERT_TRUE(ue_has_line(text, want)) {
			TH_LOG("%s:\n%s", rel, text);
		}

		/* The common fields take the first 8 bytes */
		line = ue_line_with_prefix(text, "field:int common_pid;");
		ASSERT_NE(NULL, line);
		ASSERT_STREQ("field:int common_pid;\toffset:4;\tsize:4;\tsigned:1;",
			     line);
		free(line);

		for (j = 0; j < ARRAY_SIZE(c->lines) && c->lines[j]; j++) {
			ASSERT_TRUE(has_field_line(text, c->lines[j])) {
				TH_LOG("no \"%s\" in %s:\n%s", c->lines[j],
				       rel, text);
			}
		}

		line = ue_line_with_prefix(text, "print fmt:");
		ASSERT_NE(NULL, line) {
			TH_LOG("%s:\n%s", rel, text);
		}
		ASSERT_STREQ(c->print_fmt, line) {
			TH_LOG("for \"%s\"", c->fields);
		}
		free(line);
		free(text);
	}
}

TEST_F(st, status_text)
{
	int active0, busy0, max0, active, busy, max;
	struct user_reg ra, rb;
	char *text, *blank, *p;
	char tail[128];

	ASSERT_EQ(0, ue_status_counts(&active0, &busy0, &max0));
	ASSERT_EQ(UE_PAGE_SIZE, max0);

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "txt_a u32 a", &ra));
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "txt_b u64 b", &rb));

	text = ue_read_file("user_events_status");
	ASSERT_NE(NULL, text);
	ASSERT_TRUE(ue_status_has(text, ra.status_index, PREFIX "txt_a", NULL)) {
		TH_LOG("user_events_status:\n%s", text);
	}
	ASSERT_TRUE(ue_status_has(text, rb.status_index, PREFIX "txt_b", NULL)) {
		TH_LOG("user_events_status:\n%s", text);
	}

	/* Event lines, one blank line, then exactly the three counters */
	blank = strstr(text, "\n\n");
	ASSERT_NE(NULL, blank);
	for (p = text; p < blank; p = strchr(p, '\n') + 1) {
		unsigned int idx;
		char rest[200];
		int n;

		n = sscanf(p, "%u:%199[^\n]", &idx, rest);
		ASSERT_EQ(2, n) {
			TH_LOG("odd line in:\n%s", text);
		}
		ASSERT_NE(0, idx);
	}
	ASSERT_EQ(0, ue_status_counts(&active, &busy, &max));
	snprintf(tail, sizeof(tail), "Active: %d\nBusy: %d\nMax: %zu\n",
		 active, busy, UE_PAGE_SIZE);
	ASSERT_STREQ(tail, blank + 2);
	ASSERT_EQ(active0 + 2, active);
	ASSERT_EQ(busy0, busy);
	free(text);

	/* Enabled: the comment, and one more busy event */
	ASSERT_EQ(0, ue_enable(NULL, PREFIX "txt_a", true));
	text = ue_read_file("user_events_status");
	ASSERT_NE(NULL, text);
	ASSERT_TRUE(ue_status_has(text, ra.status_index, PREFIX "txt_a", "ftrace")) {
		TH_LOG("user_events_status:\n%s", text);
	}
	ASSERT_TRUE(ue_status_has(text, rb.status_index, PREFIX "txt_b", NULL)) {
		TH_LOG("user_events_status:\n%s", text);
	}
	free(text);
	ASSERT_EQ(0, ue_status_counts(&active, &busy, &max));
	ASSERT_EQ(active0 + 2, active);
	ASSERT_EQ(busy0 + 1, busy);

	/* Disabled again */
	ASSERT_EQ(0, ue_enable(NULL, PREFIX "txt_a", false));
	text = ue_read_file("user_events_status");
	ASSERT_NE(NULL, text);
	ASSERT_TRUE(ue_status_has(text, ra.status_index, PREFIX "txt_a", NULL)) {
		TH_LOG("user_events_status:\n%s", text);
	}
	free(text);
	ASSERT_EQ(0, ue_status_counts(&active, &busy, &max));
	ASSERT_EQ(busy0, busy);

	/* Closing the fd does not delete; deleting does */
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, ue_status_counts(&active, &busy, &max));
	ASSERT_EQ(active0 + 2, active);
	ASSERT_EQ(0, ue_del(PREFIX "txt_a"));
	ASSERT_EQ(0, ue_del(PREFIX "txt_b"));
	ASSERT_EQ(0, ue_status_counts(&active, &busy, &max));
	ASSERT_EQ(active0, active);
	text = ue_read_file("user_events_status");
	ASSERT_NE(NULL, text);
	ASSERT_EQ(NULL, strstr(text, PREFIX "txt_"));
	free(text);
}

TEST_F(st, status_bytes)
{
	struct user_reg ra, rb;
	__u8 *other;
	int fd2;

	ASSERT_EQ(0, self->status[0]);
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "byte_a u32 a", &ra));
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "byte_b u32 b", &rb));
	ASSERT_EQ(0, self->status[ra.status_index]);
	ASSERT_EQ(0, self->status[rb.status_index]);

	/* A mapping through another open file shows the same page */
	fd2 = ue_open("user_events_status", O_RDONLY);
	ASSERT_NE(-1, fd2);
	other = ue_map_status(fd2);
	ASSERT_NE(MAP_FAILED, other);

	ASSERT_EQ(0, ue_enable(NULL, PREFIX "byte_a", true));
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->status[ra.status_index]);
	ASSERT_EQ(EVENT_STATUS_FTRACE, other[ra.status_index]);
	ASSERT_EQ(0, self->status[rb.status_index]);

	ASSERT_EQ(0, ue_enable(NULL, PREFIX "byte_b", true));
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->status[rb.status_index]);
	ASSERT_EQ(0, ue_enable(NULL, PREFIX "byte_a", false));
	ASSERT_EQ(0, self->status[ra.status_index]);
	ASSERT_EQ(0, other[ra.status_index]);
	ASSERT_EQ(EVENT_STATUS_FTRACE, other[rb.status_index]);

	/* Enabling twice is still one ftrace user */
	ASSERT_EQ(0, ue_enable(NULL, PREFIX "byte_b", true));
	ASSERT_EQ(0, ue_enable(NULL, PREFIX "byte_b", false));
	ASSERT_EQ(0, self->status[rb.status_index]);

	/* The system-wide enable file reaches user events too */
	ASSERT_EQ(0, ue_write_file("events/" USER_EVENTS_SYSTEM "/enable",
				   "1\n", O_TRUNC));
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->status[ra.status_index]);
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->status[rb.status_index]);
	ASSERT_EQ(0, ue_write_file("events/" USER_EVENTS_SYSTEM "/enable",
				   "0\n", O_TRUNC));
	ASSERT_EQ(0, self->status[ra.status_index]);
	ASSERT_EQ(0, self->status[rb.status_index]);
	ASSERT_EQ(0, self->status[0]);

	munmap(other, UE_PAGE_SIZE);
	close(fd2);
}

TEST_F(st, mmap_rules)
{
	__u8 *map;
	int rdonly;

	/* The one good way: one page, read-only, shared, offset 0 */
	map = mmap(NULL, UE_PAGE_SIZE, PROT_READ, MAP_SHARED, self->status_fd, 0);
	ASSERT_NE(MAP_FAILED, map);

	/* Never writable or executable, not even later */
	ASSERT_EQ(-1, mprotect(map, UE_PAGE_SIZE, PROT_READ | PROT_WRITE));
	ASSERT_EQ(EACCES, errno);
	ASSERT_EQ(-1, mprotect(map, UE_PAGE_SIZE, PROT_READ | PROT_EXEC));
	ASSERT_EQ(EACCES, errno);
	munmap(map, UE_PAGE_SIZE);

	ASSERT_EQ(MAP_FAILED, mmap(NULL, UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
				   MAP_SHARED, self->status_fd, 0));
	ASSERT_EQ(EPERM, errno);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, UE_PAGE_SIZE, PROT_WRITE, MAP_SHARED,
				   self->status_fd, 0));
	ASSERT_EQ(EPERM, errno);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, UE_PAGE_SIZE, PROT_READ | PROT_EXEC,
				   MAP_SHARED, self->status_fd, 0));
	ASSERT_EQ(EPERM, errno);

	/* A read-only open file: the VFS refuses a shared writable map */
	rdonly = ue_open("user_events_status", O_RDONLY);
	ASSERT_NE(-1, rdonly);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
				   MAP_SHARED, rdonly, 0));
	ASSERT_EQ(EACCES, errno);
	map = mmap(NULL, UE_PAGE_SIZE, PROT_READ, MAP_SHARED, rdonly, 0);
	ASSERT_NE(MAP_FAILED, map);
	munmap(map, UE_PAGE_SIZE);
	close(rdonly);

	/* Only the first page, and only one page */
	ASSERT_EQ(MAP_FAILED, mmap(NULL, UE_PAGE_SIZE, PROT_READ, MAP_SHARED,
				   self->status_fd, UE_PAGE_SIZE));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, 2 * UE_PAGE_SIZE, PROT_READ, MAP_SHARED,
				   self->status_fd, 0));
	ASSERT_EQ(EINVAL, errno);
}

TEST_HARNESS_MAIN
