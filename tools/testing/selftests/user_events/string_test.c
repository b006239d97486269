// SPDX-License-Identifier: GPL-2.0
/*
 * user_events fields the tracing core reads as strings.
 *
 * The core takes any field whose type text has "char" with "__data_loc",
 * "__rel_loc" or "[" for a string: char[N], unsigned char[N] and the four
 * dynamic char arrays.  Filters (s ~ "*x*", s == "..."), histogram keys
 * and eprobe fetches run strcmp(), glob_match(), strncpy() on them.  For
 * each of these six field kinds, with the field in the middle (followed
 * by a field whose first byte is an "x") and at the very end of the
 * record: dynamic ones empty, unterminated or with their NUL not last,
 * or with a location outside the payload, must fail with EFAULT while
 * anything is attached, and reach no consumer: no ftrace record, no
 * filter match, no hist entry, no eprobe record, no perf sample.  Fixed
 * arrays are recorded as written, NUL or not, and every consumer reads
 * at most their N bytes.  Valid records must show their value through
 * each of them.  With nothing attached, writes are not checked.
 *
 * Fixed arrays filled to the last byte, followed by "AAAA" that a reader
 * running past them would show: the trace line, the perf sample, every
 * kind of filter (==, front, end, middle and glob matches), histogram
 * keys that differ in their last byte only, and an eprobe fetching the
 * array as a string; unsigned char arrays print as hex bytes.
 *
 * A struct tag that is not a string to the core ("struct charger") stays
 * opaque bytes: no NUL needed, no string filter.  (Struct tags the core
 * would take for a string are refused at registration: see dyn_test.)
 */
#include "user_events_selftests.h"

#define PREFIX		"ue_str_"
/* Events of the tests: the string field last, or followed by "u32 z" */
#define EV_END		PREFIX "end"
#define EV_MID		PREFIX "mid"
#define EP_GROUP	"eprobes"
#define EP_NAME		PREFIX "ep"
/*
 * Of the field after the string: "x", which a reader running past a fixed
 * array would find (and match, or put in a key or a fetched string)
 */
#define Z_VALUE		0x78
#define RING_PAGES	8	/* perf ring buffer data pages */
#define MIN_BUFFER_KB	64

/* Where the location word of a dynamic field points */
enum {
	LOC_EXACT,	/* at the string bytes, with their length */
	LOC_PAST,	/* the same, one byte longer than the payload */
	LOC_HEADER,	/* into the common fields (__rel_loc: far past the end) */
	LOC_FAR,	/* offset 0xfff0 */
};

/* One record: the bytes of the string field and whether it is valid */
struct rec_case {
	const char bytes[16];	/* fixed arrays use the first 8 */
	unsigned int len;	/* dynamic: bytes written after the fields */
	int loc;		/* dynamic: LOC_* */
	bool ok;		/* recorded (else EFAULT) while attached */
};

#define FIXED_LEN	8

/*
 * char[8] and unsigned char[8], all recorded.  The value the core sees is
 * the text up to the first NUL, or all 8 bytes: "ab\0xxxxx" does not
 * match "*[x]*", "abcdefgh" is not "abcdefghx".
 */
static const struct rec_case fixed_cases[] = {
	{ "x", 0, 0, true },
	{ "abc", 0, 0, true },
	{ "abcdefx", 0, 0, true },	/* 7 characters and the NUL */
	{ "ab\0xxxxx", 0, 0, true },
	{ "x\0yyyyyy", 0, 0, true },	/* a second "x" for the hist */
	{ "", 0, 0, true },
	{ "xxxxxxxx", 0, 0, true },	/* no NUL in the 8 bytes */
	{ "abcdefgh", 0, 0, true },
	{ "\x01\x02\x03\x04\x05\x06\x07\x08", 0, 0, true },
};

/* The dynamic arrays: non-empty, last byte NUL, inside the payload */
static const struct rec_case dyn_cases[] = {
	{ "x", 2, LOC_EXACT, true },
	{ "abc", 4, LOC_EXACT, true },
	{ "", 1, LOC_EXACT, true },
	{ "ab\0x", 5, LOC_EXACT, true },	/* a NUL inside is fine */
	{ "x\0", 3, LOC_EXACT, true },
	{ "", 0, LOC_EXACT, false },		/* empty */
	{ "abx", 3, LOC_EXACT, false },		/* no NUL */
	{ "x\0yz", 4, LOC_EXACT, false },	/* NUL not last */
	{ "ab\0x\0z", 6, LOC_EXACT, false },
	{ "x", 2, LOC_PAST, false },
	{ "x", 2, LOC_HEADER, false },
	{ "x", 2, LOC_FAR, false },
};

FIXTURE(str) {
	int fd;
	__u32 idx[2];		/* write indexes of EV_END and EV_MID */
	struct ue_perf_ring ring;
};

/* A field kind of the tests */
struct str_kind {
	const char *type;	/* as registered */
	bool fixed;		/* char[8] or unsigned char[8] */
	bool rel;		/* __rel_loc */
	bool text;		/* signed char: ftrace prints it as text */
};

FIXTURE_VARIANT(str) {
	struct str_kind kind;
};

FIXTURE_VARIANT_ADD(str, char_array) {
	.kind = { .type = "char[8]", .fixed = true, .text = true },
};

FIXTURE_VARIANT_ADD(str, unsigned_char_array) {
	.kind = { .type = "unsigned char[8]", .fixed = true },
};

FIXTURE_VARIANT_ADD(str, data_loc_char) {
	.kind = { .type = "__data_loc char[]", .text = true },
};

FIXTURE_VARIANT_ADD(str, data_loc_unsigned_char) {
	.kind = { .type = "__data_loc unsigned char[]" },
};

FIXTURE_VARIANT_ADD(str, rel_loc_char) {
	.kind = { .type = "__rel_loc char[]", .rel = true, .text = true },
};

FIXTURE_VARIANT_ADD(str, rel_loc_unsigned_char) {
	.kind = { .type = "__rel_loc unsigned char[]", .rel = true },
};

static const char * const ev_names[2] = { EV_END, EV_MID };

/* Remove what a test attaches to the events, then the events */
static void str_cleanup(void)
{
	int i;

	ue_eprobe_remove(EP_GROUP, EP_NAME);
	for (i = 0; i < 2; i++) {
		ue_enable(NULL, ev_names[i], false);
		ue_write_file(ue_event_file(NULL, ev_names[i], "filter"),
			      "0\n", O_TRUNC);
		ue_clear_triggers(ev_names[i]);
	}
	ue_cleanup_events(PREFIX);
}

FIXTURE_SETUP(str)
{
	char cmd[128];
	struct user_reg reg;
	int i;

	self->fd = -1;
	self->ring.fd = -1;
	UE_SKIP_IF_UNAVAILABLE();

	str_cleanup();
	self->fd = ue_open_data();
	ASSERT_NE(-1, self->fd);
	for (i = 0; i < 2; i++) {
		snprintf(cmd, sizeof(cmd), "%s u32 n; %s s%s", ev_names[i],
			 variant->kind.type, i ? "; u32 z" : "");
		ASSERT_EQ(0, ue_reg(self->fd, cmd, &reg)) {
			TH_LOG("cannot register \"%s\"", cmd);
		}
		self->idx[i] = reg.write_index;
	}
	ASSERT_EQ(0, ue_ensure_top_buffer_kb(MIN_BUFFER_KB));
	ASSERT_EQ(0, ue_clear_trace(NULL));
}

FIXTURE_TEARDOWN(str)
{
	ue_perf_ring_close(&self->ring);
	if (self->fd != -1)
		close(self->fd);
	str_cleanup();
	ue_clear_trace(NULL);
}

static const struct rec_case *get_cases(const struct str_kind *v,
					size_t *count)
{
	*count = v->fixed ? ARRAY_SIZE(fixed_cases) : ARRAY_SIZE(dyn_cases);

	return v->fixed ? fixed_cases : dyn_cases;
}

/* Bytes of the string field a valid record holds (its value: up to NUL) */
static unsigned int case_size(const struct str_kind *v,
			      const struct rec_case *c)
{
	return v->fixed ? FIXED_LEN : c->len;
}

/*
 * The payload of record @n of case @c: "u32 n; TYPE s" (@mid: followed by
 * "u32 z"), the bytes of a dynamic field after all fixed fields
 */
static void build(const struct str_kind *v, bool mid,
		  const struct rec_case *c, __u32 n, struct ue_payload *p)
{
	/* Record offsets: n at 8, s (or its location word) at 12 */
	__u32 start = UE_COMMON_SIZE + 8 + (mid ? 4 : 0), len = c->len, off;

	p->len = 0;
	UE_PUT(p, __u32, n);
	if (v->fixed) {
		ue_put(p, c->bytes, FIXED_LEN);
	} else {
		if (c->loc == LOC_PAST)
			len++;
		else if (c->loc == LOC_HEADER)
			start = 2;
		/* __rel_loc counts from the end of the location word */
		off = v->rel ? start - (UE_COMMON_SIZE + 8) : start;
		if (c->loc == LOC_FAR)
			off = 0xfff0;
		UE_PUT(p, __u32, DYN_LOC(off & 0xffff, len));
	}
	if (mid)
		UE_PUT(p, __u32, Z_VALUE);
	if (!v->fixed)
		ue_put(p, c->bytes, c->len);
}

/*
 * Write every case to event @mid (EV_MID, else EV_END) @times times over.
 * While anything is attached (@attached) the invalid ones must fail with
 * EFAULT, else every write succeeds.
 */
static void emit_cases(struct __test_metadata *_metadata, int fd,
		       const __u32 *idx, const struct str_kind *v, bool mid,
		       bool attached, int times)
{
	const struct rec_case *cases;
	struct ue_payload p;
	size_t count, i;
	ssize_t want;
	int t;

	cases = get_cases(v, &count);
	for (t = 0; t < times; t++) {
		for (i = 0; i < count; i++) {
			build(v, mid, &cases[i], i + 1, &p);
			want = 4 + p.len;
			if (attached && !cases[i].ok)
				want = -EFAULT;
			ASSERT_EQ(want, ue_emit(fd, idx[mid], p.data, p.len)) {
				TH_LOG("%s, case %zu, %s", v->type, i,
				       mid ? "middle" : "end");
			}
		}
	}
}

/*
 * The filters: s ~ "*x*" is a substring search, "*[x]*" a glob and ==
 * compares the text; each reads the string up to its NUL, or to the end
 * of the field when it has none.
 */
enum { MATCH_ALL, MATCH_MIDDLE_X, MATCH_GLOB_X, MATCH_EQ_ABC };

static bool case_matches(const struct str_kind *v,
			 const struct rec_case *c, int match)
{
	if (match == MATCH_MIDDLE_X || match == MATCH_GLOB_X)
		return memchr(c->bytes, 'x', strnlen(c->bytes,
						     case_size(v, c)));
	if (match == MATCH_EQ_ABC)
		return !strcmp(c->bytes, "abc");

	return true;
}

/* The value of field s of case @c as the event's output prints it */
static void print_value(const struct str_kind *v,
			const struct rec_case *c, char *out)
{
	unsigned int size = case_size(v, c), i;

	if (v->text) {
		sprintf(out, "%.*s", (int)strnlen(c->bytes, size), c->bytes);
		return;
	}
	for (i = 0; i < size; i++)
		out += sprintf(out, i ? " %02x" : "%02x", (__u8)c->bytes[i]);
}

/* The trace lines of the valid cases that @match lets through */
static char *expected_trace(const struct str_kind *v, bool mid,
			    int match)
{
	const struct rec_case *cases = NULL;
	char *out = calloc(1, 4096), value[64];
	size_t count, i, len = 0;

	if (!out)
		return NULL;
	cases = get_cases(v, &count);
	for (i = 0; i < count; i++) {
		if (!cases[i].ok || !case_matches(v, &cases[i], match))
			continue;
		print_value(v, &cases[i], value);
		len += sprintf(out + len, "n=%zu s=%s", i + 1, value);
		if (mid)
			len += sprintf(out + len, " z=%u", Z_VALUE);
		len += sprintf(out + len, "\n");
	}

	return out;
}

/* The trace of event @name holds exactly @want; frees @want */
#define ASSERT_TRACE_IS(name, want) do {				\
	char *__want = (want);						\
									\
	ASSERT_NE(NULL, __want);					\
	UE_ASSERT_TRACE(NULL, name, __want);				\
	free(__want);							\
} while (0)

/* Records reach the trace buffer only when valid */
TEST_F(str, ftrace)
{
	const struct str_kind *k = &variant->kind;
	int mid;

	for (mid = 0; mid < 2; mid++) {
		ASSERT_EQ(0, ue_enable(NULL, ev_names[mid], true));
		emit_cases(_metadata, self->fd, self->idx, k, mid, true, 1);
		ASSERT_TRACE_IS(ev_names[mid],
				expected_trace(k, mid, MATCH_ALL));
	}
}

/* A filter on the string: substring, glob and equality */
TEST_F(str, filter)
{
	static const char * const filters[] = {
		[MATCH_MIDDLE_X] = "s ~ \"*x*\"\n",
		[MATCH_GLOB_X] = "s ~ \"*[x]*\"\n",
		[MATCH_EQ_ABC] = "s == \"abc\"\n",
	};
	const struct str_kind *k = &variant->kind;
	const char *file;
	int mid, match;

	for (mid = 0; mid < 2; mid++) {
		file = ue_event_file(NULL, ev_names[mid], "filter");
		ASSERT_EQ(0, ue_enable(NULL, ev_names[mid], true));
		for (match = MATCH_MIDDLE_X; match <= MATCH_EQ_ABC; match++) {
			ASSERT_EQ(0, ue_write_file(file, filters[match],
						   O_TRUNC));
			ASSERT_EQ(0, ue_clear_trace(NULL));
			emit_cases(_metadata, self->fd, self->idx, k, mid, true, 1);
			ASSERT_TRACE_IS(ev_names[mid],
					expected_trace(k, mid, match));
		}
	}
}

/*
 * Hit count of key @value in the histogram @text: 0 when it is not
 * there, -1 when a key line cannot be read.  Key lines are
 * "{ s: VALUE<blanks> } hitcount: N".
 */
static long hist_hits(const char *text, const char *value)
{
	const char *line, *key, *end;
	long hits;
	size_t len;

	for (line = strstr(text, "{ s: "); line;
	     line = strstr(line + 1, "{ s: ")) {
		key = line + 5;
		end = strchr(key, '}');
		if (!end)
			return -1;
		len = end - key;
		while (len && key[len - 1] == ' ')
			len--;
		if (len != strlen(value) || strncmp(key, value, len))
			continue;
		if (sscanf(end, "} hitcount: %ld", &hits) != 1)
			return -1;
		return hits;
	}

	return 0;
}

/* A histogram keyed on the string counts the valid records only */
TEST_F(str, hist)
{
	const struct str_kind *k = &variant->kind;
	const struct rec_case *cases;
	long entries, hits, want;
	size_t count, i, j;
	char *text, *p;
	int mid;

	cases = get_cases(k, &count);
	for (mid = 0; mid < 2; mid++) {
		ASSERT_EQ(0, ue_write_file(ue_event_file(NULL, ev_names[mid],
							 "trigger"),
					   "hist:keys=s\n", O_APPEND));
		emit_cases(_metadata, self->fd, self->idx, k, mid, true, 2);

		text = ue_read_file(ue_event_file(NULL, ev_names[mid], "hist"));
		ASSERT_NE(NULL, text);
		entries = 0;
		for (i = 0; i < count; i++) {
			if (!cases[i].ok)
				continue;
			/* Each value counted once, for all its cases */
			for (j = 0; j < i; j++) {
				if (cases[j].ok &&
				    !strcmp(cases[j].bytes, cases[i].bytes))
					break;
			}
			if (j < i)
				continue;
			entries++;
			for (want = 0, j = 0; j < count; j++)
				want += cases[j].ok &&
					!strcmp(cases[j].bytes, cases[i].bytes);
			EXPECT_EQ(2 * want, hist_hits(text, cases[i].bytes)) {
				TH_LOG("key \"%s\" in:\n%s", cases[i].bytes,
				       text);
			}
		}
		p = strstr(text, "Entries: ");
		ASSERT_NE(NULL, p);
		EXPECT_EQ(entries, atol(p + 9)) {
			TH_LOG("%s", text);
		}
		p = strstr(text, "Hits: ");
		ASSERT_NE(NULL, p);
		for (hits = 0, i = 0; i < count; i++)
			hits += 2 * cases[i].ok;
		EXPECT_EQ(hits, atol(p + 6)) {
			TH_LOG("%s", text);
		}
		free(text);

		/* Not enabled: nothing in the trace buffer */
		ASSERT_TRACE_IS(ev_names[mid], strdup(""));
		ASSERT_EQ(0, ue_clear_triggers(ev_names[mid]));
	}
}

/* Drop " s=..." from every line of @text, in place */
static void drop_values(char *text)
{
	char *line, *cut, *end, *out = text;

	for (line = text; *line; line = end) {
		end = strchr(line, '\n');
		end = end ? end + 1 : line + strlen(line);
		cut = strstr(line, " s=");
		if (!cut || cut > end)
			cut = end;
		memmove(out, line, cut - line);
		out += cut - line;
		if (cut != end)
			*out++ = '\n';
	}
	*out = '\0';
}

/*
 * An eprobe fetching the string: the valid records only, with their
 * values.  The 6.1 eprobe fetches a __rel_loc string from its location
 * word plus the offset, 4 bytes short of where it is (get_event_field(),
 * FILTER_RDYN_STRING): still inside the record, as checked, but the
 * wrong bytes; for those only the records are compared, not s.
 */
TEST_F(str, eprobe)
{
	const struct str_kind *k = &variant->kind;
	const struct rec_case *cases;
	char cmd[256], *want, *got;
	size_t count, i, len;
	int mid;

	cases = get_cases(k, &count);
	for (mid = 0; mid < 2; mid++) {
		snprintf(cmd, sizeof(cmd),
			 "e:%s/%s %s/%s n=$n:u32 s=$s:string", EP_GROUP,
			 EP_NAME, USER_EVENTS_SYSTEM, ev_names[mid]);
		ASSERT_EQ(0, ue_dyn(cmd));
		ASSERT_EQ(0, ue_eprobe_enable(EP_GROUP, EP_NAME, true));
		emit_cases(_metadata, self->fd, self->idx, k, mid, true, 1);

		want = calloc(1, 4096);
		ASSERT_NE(NULL, want);
		for (len = 0, i = 0; i < count; i++) {
			if (cases[i].ok)
				len += sprintf(want + len,
					       "(%s.%s) n=%zu s=\"%s\"\n",
					       USER_EVENTS_SYSTEM, ev_names[mid],
					       i + 1, cases[i].bytes);
		}
		got = ue_trace_collect(NULL, EP_NAME);
		ASSERT_NE(NULL, got);
		if (k->rel) {
			drop_values(want);
			drop_values(got);
		}
		EXPECT_STREQ(want, got);
		free(want);
		free(got);
		/* The user event itself is not enabled */
		ASSERT_TRACE_IS(ev_names[mid], strdup(""));

		ASSERT_EQ(0, ue_eprobe_remove(EP_GROUP, EP_NAME));
		ASSERT_EQ(0, ue_clear_trace(NULL));
	}
}

/* perf gets a sample for each valid record, none for the others */
TEST_F(str, perf)
{
	const struct str_kind *k = &variant->kind;
	const struct rec_case *cases;
	__u8 raw[256];
	size_t count, i;
	int mid, nth, id;
	__u32 n;

	cases = get_cases(k, &count);
	for (mid = 0; mid < 2; mid++) {
		id = ue_event_id(ev_names[mid]);
		ASSERT_LT(0, id);
		ASSERT_EQ(0, ue_perf_ring_open(&self->ring, id, RING_PAGES));
		emit_cases(_metadata, self->fd, self->idx, k, mid, true, 1);

		/* The samples, in order: their n fields */
		for (nth = 0, i = 0; i < count; i++) {
			if (!cases[i].ok)
				continue;
			ASSERT_LT(UE_COMMON_SIZE + 4,
				  ue_perf_raw_sample(&self->ring, nth++, raw,
						     sizeof(raw)));
			memcpy(&n, raw + UE_COMMON_SIZE, sizeof(n));
			EXPECT_EQ(i + 1, n);
		}
		EXPECT_EQ(-1, ue_perf_raw_sample(&self->ring, nth, raw,
						 sizeof(raw)));
		ue_perf_ring_close(&self->ring);
	}
}

/* Nothing attached: no check beyond the index and the fixed size */
TEST_F(str, unattached)
{
	const struct str_kind *k = &variant->kind;
	int mid;

	for (mid = 0; mid < 2; mid++)
		emit_cases(_metadata, self->fd, self->idx, k, mid, false, 1);
	ASSERT_TRACE_IS(EV_END, strdup(""));
	ASSERT_TRACE_IS(EV_MID, strdup(""));
}

/*
 * A struct whose tag has "char" in it but is no string to the core: its
 * bytes need no NUL and no string filter applies to it.
 */
FIXTURE(tag) {
	int fd;
};

FIXTURE_SETUP(tag)
{
	self->fd = -1;
	UE_SKIP_IF_UNAVAILABLE();

	ue_cleanup_events(PREFIX);
	self->fd = ue_open_data();
	ASSERT_NE(-1, self->fd);
	ASSERT_EQ(0, ue_clear_trace(NULL));
}

FIXTURE_TEARDOWN(tag)
{
	if (self->fd != -1)
		close(self->fd);
	ue_cleanup_events(PREFIX);
	ue_clear_trace(NULL);
}

TEST_F(tag, opaque_struct)
{
	const char *name = PREFIX "tag";
	const char *filter = ue_event_file(NULL, name, "filter");
	struct user_reg reg;
	__u32 idx;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "tag struct charger c 4; "
			    "struct __data_loc_Char d 4", &reg));
	idx = reg.write_index;
	ASSERT_EQ(0, ue_enable(NULL, name, true));

	ASSERT_EQ(EINVAL, ue_write_file(filter, "c ~ \"*a*\"\n", O_TRUNC));
	ASSERT_EQ(EINVAL, ue_write_file(filter, "d == \"abcd\"\n", O_TRUNC));

	ASSERT_EQ(12, ue_emit(self->fd, idx, "abcdefgh", 8));
	ASSERT_TRACE_IS(name, strdup("c=61 62 63 64 d=65 66 67 68\n"));
}

/*
 * Fixed arrays filled to their last byte: "u32 a; char[5] s; u32 after"
 * written with s "abcde" and after 0x41414141, "AAAA": a reader running
 * past s would see "abcdeAAAA".
 */
#define EV_FIX		PREFIX "fix"	/* char[5] */
#define EV_FIX8		PREFIX "fix8"	/* char[8] */
#define EV_HEX		PREFIX "fixhex"	/* unsigned char[4] */
#define EV_DYN		PREFIX "fixdyn"	/* __data_loc char[] */
#define AFTER		0x41414141
#define AFTER_TEXT	"after=1094795585"
#define FIX_EP_GROUP	"ue_ep"
#define FIX_EP		PREFIX "fix_ep"

static const char * const fix_events[] = { EV_FIX, EV_FIX8, EV_HEX, EV_DYN };

FIXTURE(fixed) {
	int fd;
	__u32 idx[ARRAY_SIZE(fix_events)];
	struct ue_perf_ring ring;
};

static void fixed_cleanup(void)
{
	size_t i;

	ue_eprobe_remove(FIX_EP_GROUP, FIX_EP);
	for (i = 0; i < ARRAY_SIZE(fix_events); i++) {
		ue_enable(NULL, fix_events[i], false);
		ue_write_file(ue_event_file(NULL, fix_events[i], "filter"),
			      "0\n", O_TRUNC);
		ue_clear_triggers(fix_events[i]);
	}
	ue_cleanup_events(PREFIX);
}

FIXTURE_SETUP(fixed)
{
	static const char * const fields[] = {
		"u32 a; char[5] s; u32 after",
		"u32 a; char[8] s; u32 after",
		"u32 a; unsigned char[4] h; u32 after",
		"u32 a; __data_loc char[] d; u32 after",
	};
	struct user_reg reg;
	char cmd[128];
	size_t i;

	self->fd = -1;
	self->ring.fd = -1;
	UE_SKIP_IF_UNAVAILABLE();

	fixed_cleanup();
	self->fd = ue_open_data();
	ASSERT_NE(-1, self->fd);
	for (i = 0; i < ARRAY_SIZE(fix_events); i++) {
		snprintf(cmd, sizeof(cmd), "%s %s", fix_events[i], fields[i]);
		ASSERT_EQ(0, ue_reg(self->fd, cmd, &reg));
		self->idx[i] = reg.write_index;
	}
	ASSERT_EQ(0, ue_ensure_top_buffer_kb(MIN_BUFFER_KB));
	ASSERT_EQ(0, ue_clear_trace(NULL));
}

FIXTURE_TEARDOWN(fixed)
{
	ue_perf_ring_close(&self->ring);
	if (self->fd != -1)
		close(self->fd);
	fixed_cleanup();
	ue_clear_trace(NULL);
}

/* The payload "u32 a; char[@len] s; u32 after": a=@a, s=@s, after=AFTER */
static void fix_payload(struct ue_payload *p, __u32 a, const char *s,
			size_t len)
{
	p->len = 0;
	UE_PUT(p, __u32, a);
	ue_put(p, s, len);
	UE_PUT(p, __u32, AFTER);
}

/* Write a=@a, s=the 5 bytes at @s, after=AFTER to EV_FIX */
static ssize_t emit_fix5(struct _test_data_fixed *self, __u32 a,
			 const char *s)
{
	struct ue_payload p;

	fix_payload(&p, a, s, 5);
	return ue_emit(self->fd, self->idx[0], p.data, p.len);
}

/* Write a=@a, s=the 8 bytes at @s, after=AFTER to EV_FIX8 */
static ssize_t emit_fix8(struct _test_data_fixed *self, __u32 a,
			 const char *s)
{
	struct ue_payload p;

	fix_payload(&p, a, s, 8);
	return ue_emit(self->fd, self->idx[1], p.data, p.len);
}

TEST_F(fixed, trace)
{
	ASSERT_EQ(0, ue_enable(NULL, EV_FIX, true));
	ASSERT_EQ(4 + 13, emit_fix5(self, 1, "abcde"));
	/* A NUL inside ends the text */
	ASSERT_EQ(4 + 13, emit_fix5(self, 2, "ab\0de"));
	ASSERT_EQ(4 + 13, emit_fix5(self, 3, "\0bcde"));
	UE_ASSERT_TRACE(NULL, EV_FIX,
			"a=1 s=abcde " AFTER_TEXT "\n"
			"a=2 s=ab " AFTER_TEXT "\n"
			"a=3 s= " AFTER_TEXT "\n");

	ASSERT_EQ(0, ue_enable(NULL, EV_FIX8, true));
	ASSERT_EQ(4 + 16, emit_fix8(self, 4, "abcdefgh"));
	UE_ASSERT_TRACE(NULL, EV_FIX8, "a=4 s=abcdefgh " AFTER_TEXT "\n");
}

TEST_F(fixed, perf)
{
	struct ue_payload rec;
	__u8 raw[64];
	__u32 after;
	int id, size;

	fix_payload(&rec, 7, "abcde", 5);
	id = ue_event_id(EV_FIX);
	ASSERT_LT(0, id);
	ASSERT_EQ(0, ue_perf_ring_open(&self->ring, id, RING_PAGES));
	ASSERT_EQ(4 + 13, emit_fix5(self, 7, "abcde"));

	/* The payload exactly: the 5 bytes of s, then after */
	size = ue_perf_raw_sample(&self->ring, 0, raw, sizeof(raw));
	ASSERT_LE(UE_COMMON_SIZE + (int)rec.len, size);
	ASSERT_EQ(id, *(__u16 *)raw);
	ASSERT_EQ(0, memcmp(raw + UE_COMMON_SIZE, rec.data, rec.len));
	ASSERT_EQ(0, memcmp(raw + UE_COMMON_SIZE + 4, "abcde", 5));
	memcpy(&after, raw + UE_COMMON_SIZE + 9, sizeof(after));
	ASSERT_EQ(AFTER, after);
	ASSERT_EQ(-1, ue_perf_raw_sample(&self->ring, 1, raw, sizeof(raw)));
}

/* A filter on s, and whether the record written matches it */
struct fix_filter {
	const char *filter;
	bool match;
};

/*
 * Set each filter of @cases on event @name, write one record through
 * @emit (s=@s), and count what passed
 */
static void check_filters(struct __test_metadata *_metadata,
			  struct _test_data_fixed *self, const char *name,
			  ssize_t (*emit)(struct _test_data_fixed *, __u32,
					  const char *),
			  const char *s, ssize_t len,
			  const struct fix_filter *cases, size_t count)
{
	char file[256], text[128];
	size_t i;

	snprintf(file, sizeof(file), "%s", ue_event_file(NULL, name, "filter"));
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	for (i = 0; i < count; i++) {
		snprintf(text, sizeof(text), "%s\n", cases[i].filter);
		ASSERT_EQ(0, ue_write_file(file, text, O_TRUNC)) {
			TH_LOG("filter %s", cases[i].filter);
		}
		ASSERT_EQ(0, ue_clear_trace(NULL));
		ASSERT_EQ(len, emit(self, i, s));
		EXPECT_EQ(cases[i].match, ue_trace_count(NULL, name)) {
			TH_LOG("%s: %s", name, cases[i].filter);
		}
	}
	ASSERT_EQ(0, ue_write_file(file, "0\n", O_TRUNC));
}

TEST_F(fixed, filter)
{
	/* s is "abcde", followed by "AAAA" */
	static const struct fix_filter five[] = {
		{ "s == \"abcde\"", true },
		{ "s == \"abcd\"", false },
		{ "s == \"abcdeA\"", false },
		{ "s != \"abcde\"", false },
		{ "s ~ \"abc*\"", true },
		{ "s ~ \"abcde*\"", true },
		{ "s ~ \"abcdeA*\"", false },
		{ "s ~ \"*cde\"", true },
		{ "s ~ \"*abcde\"", true },
		{ "s ~ \"*A\"", false },
		{ "s ~ \"*bcd*\"", true },
		{ "s ~ \"*deA*\"", false },
		{ "s ~ \"a?c[d]e\"", true },
		{ "s ~ \"a?c[d]eA*\"", false },
		{ "s ~ \"*[e]\"", true },
	};
	/* s is "ab", a NUL, then "xxxxx", followed by "AAAA" */
	static const struct fix_filter embedded[] = {
		{ "s == \"ab\"", true },
		{ "s == \"abx\"", false },
		{ "s ~ \"*b\"", true },
		{ "s ~ \"*x\"", false },
		{ "s ~ \"*x*\"", false },
		{ "s ~ \"*b*\"", true },
		{ "s ~ \"*A\"", false },
		{ "s ~ \"a?\"", true },
		{ "s ~ \"a?*x\"", false },
	};

	check_filters(_metadata, self, EV_FIX, emit_fix5, "abcde", 4 + 13,
		      five, ARRAY_SIZE(five));
	check_filters(_metadata, self, EV_FIX8, emit_fix8, "ab\0xxxxx", 4 + 16,
		      embedded, ARRAY_SIZE(embedded));
}

/* Keys that differ in their last byte only are two keys, printed whole */
TEST_F(fixed, hist)
{
	char *text, *p;

	ASSERT_EQ(0, ue_write_file(ue_event_file(NULL, EV_FIX8, "trigger"),
				   "hist:keys=s\n", O_APPEND));
	ASSERT_EQ(4 + 16, emit_fix8(self, 1, "abcdefgh"));
	ASSERT_EQ(4 + 16, emit_fix8(self, 2, "abcdefgX"));
	ASSERT_EQ(4 + 16, emit_fix8(self, 3, "abcdefgh"));

	text = ue_read_file(ue_event_file(NULL, EV_FIX8, "hist"));
	ASSERT_NE(NULL, text);
	EXPECT_EQ(2, hist_hits(text, "abcdefgh")) {
		TH_LOG("%s", text);
	}
	EXPECT_EQ(1, hist_hits(text, "abcdefgX")) {
		TH_LOG("%s", text);
	}
	p = strstr(text, "Entries: ");
	ASSERT_NE(NULL, p);
	EXPECT_EQ(2, atol(p + 9));
	p = strstr(text, "Hits: ");
	ASSERT_NE(NULL, p);
	EXPECT_EQ(3, atol(p + 6));
	free(text);
	ASSERT_EQ(0, ue_clear_triggers(EV_FIX8));
}

TEST_F(fixed, eprobe)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "e:%s/%s %s/%s s=$s:string", FIX_EP_GROUP,
		 FIX_EP, USER_EVENTS_SYSTEM, EV_FIX);
	ASSERT_EQ(0, ue_dyn(cmd));
	ASSERT_EQ(0, ue_eprobe_enable(FIX_EP_GROUP, FIX_EP, true));
	ASSERT_EQ(4 + 13, emit_fix5(self, 1, "abcde"));
	ASSERT_EQ(4 + 13, emit_fix5(self, 2, "ab\0de"));
	UE_ASSERT_TRACE(NULL, FIX_EP,
			"(" USER_EVENTS_SYSTEM "." EV_FIX ") s=\"abcde\"\n"
			"(" USER_EVENTS_SYSTEM "." EV_FIX ") s=\"ab\"\n");
	ASSERT_EQ(0, ue_eprobe_remove(FIX_EP_GROUP, FIX_EP));
	ASSERT_EQ(-1, access(ue_path(ue_eprobe_file(FIX_EP_GROUP, FIX_EP,
						    "enable")), F_OK));
}

/* unsigned char[4] with no NUL: recorded, printed as hex bytes */
TEST_F(fixed, unsigned_hex)
{
	struct {
		__u32 a;
		__u8 h[4];
		__u32 after;
	} rec = {
		.a = 1, .h = { 0xde, 0xad, 0xbe, 0xef }, .after = AFTER,
	};

	ASSERT_EQ(0, ue_enable(NULL, EV_HEX, true));
	ASSERT_EQ(4 + 12, ue_emit(self->fd, self->idx[2], &rec, sizeof(rec)));
	UE_ASSERT_TRACE(NULL, EV_HEX, "a=1 h=de ad be ef " AFTER_TEXT "\n");
}

/* Dynamic char arrays still need to be non-empty and end with a NUL */
TEST_F(fixed, dynamic_needs_nul)
{
	struct {
		__u32 a;
		__u32 loc;
		__u32 after;
		char d[8];
	} rec = { .a = 1, .after = AFTER, .d = "abc" };
	const __u16 start = UE_COMMON_SIZE + 12;

	ASSERT_EQ(0, ue_enable(NULL, EV_DYN, true));

	/* Empty, or no NUL at its end: EFAULT, nothing recorded */
	rec.loc = DYN_LOC(start, 0);
	ASSERT_EQ(-EFAULT, ue_emit(self->fd, self->idx[3], &rec, 12));
	rec.loc = DYN_LOC(start, 3);
	ASSERT_EQ(-EFAULT, ue_emit(self->fd, self->idx[3], &rec, 15));
	ASSERT_EQ(-EFAULT, ue_emit(self->fd, self->idx[3], &rec, 16));
	UE_ASSERT_TRACE(NULL, EV_DYN, "");

	rec.loc = DYN_LOC(start, 4);
	ASSERT_EQ(4 + 16, ue_emit(self->fd, self->idx[3], &rec, 16));
	UE_ASSERT_TRACE(NULL, EV_DYN, "a=1 d=abc " AFTER_TEXT "\n");
}

TEST_HARNESS_MAIN
