// SPDX-License-Identifier: GPL-2.0
/*
 * user_events and perf: perf_event_open() on a user event sets the perf
 * bit of its status byte and holds the event, every write becomes one
 * sample whose raw data is the record laid out as the event's format file
 * says (common fields, then exactly the written payload), and closing the
 * perf event clears the bit.  The largest payload, its dynamic data
 * reaching the last byte, is sampled whole.
 */
#include <stddef.h>

#include "user_events_selftests.h"

#define PREFIX		"__perf_test_"
#define RING_PAGES	8	/* ring buffer data pages, a power of two */
#define INSTANCE	PREFIX "inst"

/* Offset of @field in the format file of event @name, or -1 */
static int format_offset(const char *name, const char *field)
{
	char *format = ue_read_file(ue_event_file(NULL, name, "format"));
	char key[128], *p;
	int offset = -1;

	if (!format)
		return -1;
	snprintf(key, sizeof(key), " %s;\toffset:", field);
	p = strstr(format, key);
	if (p)
		offset = atoi(p + strlen(key));
	free(format);

	return offset;
}

/* Is "INDEX:NAME[ # Used by USERS]" a line of user_events_status? */
static bool status_line(__u32 index, const char *name, const char *users)
{
	char *text = ue_read_file("user_events_status");
	bool found;

	if (!text)
		return false;
	found = ue_status_has(text, index, name, users);
	free(text);

	return found;
}

FIXTURE(perf) {
	int data_fd;
	int status_fd;
	__u8 *status;
};

FIXTURE_SETUP(perf)
{
	UE_SKIP_IF_UNAVAILABLE();

	ue_cleanup_events(PREFIX);
	self->data_fd = ue_open_data();
	ASSERT_NE(-1, self->data_fd);
	ASSERT_EQ(0, ue_open_status_page(&self->status_fd, &self->status));
}

FIXTURE_TEARDOWN(perf)
{
	ue_close_status_page(self->status_fd, self->status);
	close(self->data_fd);
	ue_cleanup_events(PREFIX);
}

/* Payload of __perf_test_sample; the member order leaves no padding */
struct sample_payload {
	__u32 count;
	__s16 delta;
	char tag[6];
	__u32 msg_loc;
	__u32 note_loc;
	char msg[6];
	char note[6];
};

TEST_F(perf, sample_raw_data_matches_format)
{
	const char *name = PREFIX "sample";
	struct sample_payload in, first;
	struct ue_perf_ring ring;
	struct user_reg reg;
	__u8 raw[256];
	int id, size;

	memset(&in, 0, sizeof(in));
	in.count = 0xdeadbeef;
	in.delta = -3;
	snprintf(in.tag, sizeof(in.tag), "abcde");
	snprintf(in.msg, sizeof(in.msg), "hello");
	snprintf(in.note, sizeof(in.note), "rel!");
	/* __data_loc counts from the record start, __rel_loc from its end */
	in.msg_loc = DYN_LOC(UE_COMMON_SIZE + offsetof(struct sample_payload, msg),
			     6);
	in.note_loc = DYN_LOC(offsetof(struct sample_payload, note) -
			      offsetof(struct sample_payload, note_loc) - 4, 5);

	ASSERT_EQ(0, ue_reg(self->data_fd, PREFIX
			    "sample u32 count; s16 delta; char[6] tag; __data_loc char[] msg; __rel_loc char[] note",
			    &reg));
	id = ue_event_id(name);
	ASSERT_LT(0, id);

	ASSERT_EQ(0, self->status[reg.status_index]);
	ASSERT_EQ(0, ue_perf_ring_open(&ring, id, RING_PAGES));
	/* Attached at open: the byte says perf and nothing else */
	ASSERT_EQ(EVENT_STATUS_PERF, self->status[reg.status_index]);
	ASSERT_TRUE(status_line(reg.status_index, name, "perf"));

	ASSERT_EQ(sizeof(in) + 4, ue_emit(self->data_fd, reg.write_index,
					  &in, sizeof(in)));
	first = in;
	in.count = 7;
	ASSERT_EQ(sizeof(in) + 4, ue_emit(self->data_fd, reg.write_index,
					  &in, sizeof(in)));

	/* Each sample is the record, fields at the format's offsets */
	size = ue_perf_raw_sample(&ring, 0, raw, sizeof(raw));
	ASSERT_LE(UE_COMMON_SIZE + (int)sizeof(in), size);
	ASSERT_EQ(id, *(__u16 *)raw);			/* common_type */
	ASSERT_EQ(getpid(), *(__s32 *)(raw + 4));	/* common_pid */
	ASSERT_EQ(UE_COMMON_SIZE, format_offset(name, "count"));
	ASSERT_EQ(UE_COMMON_SIZE + 4, format_offset(name, "delta"));
	ASSERT_EQ(UE_COMMON_SIZE + 6, format_offset(name, "tag[6]"));
	ASSERT_EQ(UE_COMMON_SIZE + 12, format_offset(name, "msg"));
	ASSERT_EQ(0xdeadbeef, *(__u32 *)(raw + UE_COMMON_SIZE));
	ASSERT_EQ(-3, *(__s16 *)(raw + UE_COMMON_SIZE + 4));
	ASSERT_STREQ("abcde", (char *)raw + UE_COMMON_SIZE + 6);
	ASSERT_STREQ("hello", (char *)raw + (first.msg_loc & 0xffff));
	/* Exactly the payload bytes, without the write index */
	ASSERT_EQ(0, memcmp(raw + UE_COMMON_SIZE, &first, sizeof(first)));

	size = ue_perf_raw_sample(&ring, 1, raw, sizeof(raw));
	ASSERT_LE(UE_COMMON_SIZE + (int)sizeof(in), size);
	ASSERT_EQ(7, *(__u32 *)(raw + UE_COMMON_SIZE));
	ASSERT_STREQ("rel!", (char *)raw + UE_COMMON_SIZE +
		     offsetof(struct sample_payload, note));
	ASSERT_EQ(-1, ue_perf_raw_sample(&ring, 2, raw, sizeof(raw)));

	ue_perf_ring_close(&ring);
	/* Detached at close */
	ASSERT_EQ(0, self->status[reg.status_index]);
	ASSERT_TRUE(status_line(reg.status_index, name, NULL));
}

TEST_F(perf, invalid_payload_makes_no_sample)
{
	struct ue_perf_ring ring;
	struct user_reg reg;
	__u8 raw[64];
	struct {
		__u32 loc;
		char s[4];
	} in = { .s = "abc" };

	ASSERT_EQ(0, ue_reg(self->data_fd, PREFIX "bad __data_loc char[] s",
			    &reg));
	ASSERT_EQ(0, ue_perf_ring_open(&ring, ue_event_id(PREFIX "bad"),
				       RING_PAGES));

	/* Points past the end of the payload */
	in.loc = DYN_LOC(UE_COMMON_SIZE + 4, 40);
	ASSERT_EQ(-EFAULT, ue_emit(self->data_fd, reg.write_index,
				   &in, sizeof(in)));
	ASSERT_EQ(-1, ue_perf_raw_sample(&ring, 0, raw, sizeof(raw)));

	in.loc = DYN_LOC(UE_COMMON_SIZE + 4, 4);
	ASSERT_EQ(sizeof(in) + 4, ue_emit(self->data_fd, reg.write_index,
					  &in, sizeof(in)));
	ASSERT_LE(UE_COMMON_SIZE + (int)sizeof(in),
		  ue_perf_raw_sample(&ring, 0, raw, sizeof(raw)));
	ASSERT_STREQ("abc", (char *)raw + UE_COMMON_SIZE + 4);

	ue_perf_ring_close(&ring);
}

TEST_F(perf, ftrace_and_perf_together)
{
	const char *name = PREFIX "both";
	struct ue_perf_ring ring;
	struct user_reg reg;
	__u32 value = 42;
	__u8 raw[64];

	ASSERT_EQ(0, ue_reg(self->data_fd, PREFIX "both u32 value", &reg));
	ASSERT_EQ(0, ue_clear_trace(NULL));
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	ASSERT_EQ(0, ue_perf_ring_open(&ring, ue_event_id(name),
				       RING_PAGES));
	ASSERT_EQ(EVENT_STATUS_FTRACE | EVENT_STATUS_PERF,
		  self->status[reg.status_index]);
	ASSERT_TRUE(status_line(reg.status_index, name, "ftrace perf"));

	ASSERT_EQ(8, ue_emit(self->data_fd, reg.write_index, &value, 4));

	/* Both consumers got the event */
	ASSERT_LE(12, ue_perf_raw_sample(&ring, 0, raw, sizeof(raw)));
	ASSERT_EQ(42, *(__u32 *)(raw + UE_COMMON_SIZE));
	UE_ASSERT_TRACE(NULL, name, "value=42\n");

	ue_perf_ring_close(&ring);
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->status[reg.status_index]);
	ASSERT_EQ(0, ue_enable(NULL, name, false));
	ASSERT_EQ(0, self->status[reg.status_index]);
}

TEST_F(perf, perf_holds_the_event)
{
	struct ue_perf_ring ring;
	struct user_reg reg;

	ASSERT_EQ(0, ue_reg(self->data_fd, PREFIX "busy u32 a", &reg));
	ASSERT_EQ(0, ue_perf_ring_open(&ring, ue_event_id(PREFIX "busy"),
				       RING_PAGES));

	/* Without the fd's reference, perf's still holds the event */
	close(self->data_fd);
	self->data_fd = ue_open_data();
	ASSERT_EQ(EBUSY, ue_del(PREFIX "busy"));
	ue_perf_ring_close(&ring);
	ASSERT_EQ(0, ue_del(PREFIX "busy"));
	ASSERT_FALSE(ue_event_exists(PREFIX "busy"));
}

/* Two events with the largest payload, sampled by perf and recorded */
FIXTURE(payload) {
	int fd;
	struct ue_perf_ring perf[2];
	int active0;
};

FIXTURE_SETUP(payload)
{
	self->fd = -1;
	self->perf[0].fd = -1;
	self->perf[1].fd = -1;
	UE_SKIP_IF_UNAVAILABLE();

	ue_setup_clean(_metadata, INSTANCE, PREFIX, &self->active0);
	self->fd = ue_open_data();
	ASSERT_NE(-1, self->fd);
}

FIXTURE_TEARDOWN(payload)
{
	int k;

	for (k = 0; k < 2; k++)
		ue_perf_ring_close(&self->perf[k]);
	if (self->fd != -1)
		close(self->fd);
	ue_instance_remove(INSTANCE);
	ue_cleanup_events(PREFIX);

	ue_expect_active(_metadata, self->active0);
}

/*
 * The largest payload, its dynamic data reaching the last byte: recorded
 * whole (checked byte for byte in a perf sample, and once in ftrace); one
 * byte further is refused.
 */
TEST_F(payload, max_payload_dynamic_data)
{
	struct {
		__u32 idx;
		__u32 n;
		__u32 loc;
		char data[UE_PAYLOAD_MAX];
	} buf;
	static __u8 raw[UE_COMMON_SIZE + UE_PAYLOAD_MAX + 64];
	const size_t fixed = 8, room = UE_PAYLOAD_MAX - fixed;
	const char *names[2] = { PREFIX "rel", PREFIX "dl" };
	struct user_reg regs[2];
	int k, size, ret;
	char *text;

	ASSERT_EQ(0, ue_instance_create(INSTANCE));
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "rel u32 n; __rel_loc char[] s",
			    &regs[0]));
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "dl u32 n; __data_loc unsigned char[] d",
			    &regs[1]));
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(0, ue_enable(INSTANCE, names[k], true));
		ret = ue_perf_ring_open(&self->perf[k], ue_event_id(names[k]),
					RING_PAGES);
		ASSERT_EQ(0, ret) {
			TH_LOG("perf event of %s: %s", names[k], strerror(ret));
		}
	}

	/* A string filling the payload up to its last byte, NUL included */
	memset(&buf, 0, sizeof(buf));
	buf.idx = regs[0].write_index;
	buf.n = 1;
	memset(buf.data, 'x', room - 1);
	buf.data[room - 1] = '\0';
	buf.loc = DYN_LOC(0, room);
	ASSERT_EQ(4 + UE_PAYLOAD_MAX, write(self->fd, &buf, 4 + UE_PAYLOAD_MAX));

	/* Past the payload by one byte, from either end */
	buf.loc = DYN_LOC(0, room + 1);
	ASSERT_EQ(-1, write(self->fd, &buf, 4 + UE_PAYLOAD_MAX));
	ASSERT_EQ(EFAULT, errno);
	buf.loc = DYN_LOC(1, room);
	ASSERT_EQ(-1, write(self->fd, &buf, 4 + UE_PAYLOAD_MAX));
	ASSERT_EQ(EFAULT, errno);
	/* One byte more payload, which would cover it: too big */
	buf.loc = DYN_LOC(0, room + 1);
	ASSERT_EQ(-1, write(self->fd, &buf, 4 + UE_PAYLOAD_MAX + 1));
	ASSERT_EQ(E2BIG, errno);

	/* The same with __data_loc: offsets count the common fields */
	buf.idx = regs[1].write_index;
	buf.n = 3;
	buf.loc = DYN_LOC(UE_COMMON_SIZE + fixed, room);
	ASSERT_EQ(4 + UE_PAYLOAD_MAX, write(self->fd, &buf, 4 + UE_PAYLOAD_MAX));
	buf.loc = DYN_LOC(UE_COMMON_SIZE + fixed, room + 1);
	ASSERT_EQ(-1, write(self->fd, &buf, 4 + UE_PAYLOAD_MAX));
	ASSERT_EQ(EFAULT, errno);
	buf.loc = DYN_LOC(UE_COMMON_SIZE + fixed + 1, room);
	ASSERT_EQ(-1, write(self->fd, &buf, 4 + UE_PAYLOAD_MAX));
	ASSERT_EQ(EFAULT, errno);
	buf.loc = DYN_LOC(UE_COMMON_SIZE - 1, room);
	ASSERT_EQ(-1, write(self->fd, &buf, 4 + UE_PAYLOAD_MAX));
	ASSERT_EQ(EFAULT, errno);

	for (k = 0; k < 2; k++) {
		/* perf got the record: common fields, then the payload */
		size = ue_perf_raw_sample(&self->perf[k], 0, raw, sizeof(raw));
		ASSERT_LE(UE_COMMON_SIZE + UE_PAYLOAD_MAX, size);
		buf.n = k ? 3 : 1;
		buf.loc = k ? DYN_LOC(UE_COMMON_SIZE + fixed, room) : DYN_LOC(0, room);
		ASSERT_EQ(0, memcmp(raw + UE_COMMON_SIZE, &buf.n, UE_PAYLOAD_MAX)) {
			TH_LOG("%s: the perf sample differs from the payload",
			       names[k]);
		}
		ue_perf_ring_close(&self->perf[k]);

		/*
		 * ftrace too, once; its text is too long for a trace line
		 * ("[LINE TOO BIG]" follows the first field)
		 */
		text = ue_trace_collect(INSTANCE, names[k]);
		ASSERT_NE(NULL, text);
		ASSERT_EQ(0, strncmp(text, k ? "n=3 d=" : "n=1 s=", 6)) {
			TH_LOG("%s: record \"%.60s\"", names[k], text);
		}
		free(text);
		ASSERT_EQ(1, ue_trace_count(INSTANCE, names[k]));
	}
}

TEST_HARNESS_MAIN
