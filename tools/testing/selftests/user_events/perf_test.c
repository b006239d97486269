// SPDX-License-Identifier: GPL-2.0
/*
 * user_events and perf: perf_event_open() on a user event sets the perf
 * bit of its status byte and holds the event, every write becomes one
 * sample whose raw data is the record laid out as the event's format file
 * says (common fields, then exactly the written payload), and closing the
 * perf event clears the bit.
 */
#include <stddef.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>

#include "user_events_selftests.h"

#define PREFIX		"__perf_test_"
#define RING_PAGES	8	/* ring buffer data pages, a power of two */
#define COMMON_SIZE	8	/* common fields in front of the payload */

struct perf_ring {
	int fd;
	void *map;
};

/* A sampling perf event on tracepoint @id for this task, with its ring */
static int perf_open(int id, struct perf_ring *ring)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.size = sizeof(attr);
	attr.config = id;
	attr.sample_type = PERF_SAMPLE_RAW;
	attr.sample_period = 1;
	attr.wakeup_events = 1;

	ring->fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1,
			   PERF_FLAG_FD_CLOEXEC);
	if (ring->fd == -1)
		return errno;

	ring->map = mmap(NULL, (RING_PAGES + 1) * UE_PAGE_SIZE,
			 PROT_READ | PROT_WRITE, MAP_SHARED, ring->fd, 0);
	if (ring->map == MAP_FAILED) {
		int err = errno;

		close(ring->fd);
		return err;
	}

	return 0;
}

static void perf_close(struct perf_ring *ring)
{
	munmap(ring->map, (RING_PAGES + 1) * UE_PAGE_SIZE);
	close(ring->fd);
}

/*
 * Copy the raw data of sample @nth (0-based) into @raw; returns its size,
 * or -1 when there are not that many samples.  Records may wrap around
 * the end of the data area, so bytes are copied one by one.
 */
static int perf_raw_sample(struct perf_ring *ring, int nth, void *raw,
			   size_t max)
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

		for (i = 0; i < sizeof(raw_size); i++)
			((__u8 *)&raw_size)[i] =
				data[(pos + sizeof(hdr) + i) % size];
		for (i = 0; i < raw_size && i < max; i++)
			((__u8 *)raw)[i] =
				data[(pos + sizeof(hdr) + 4 + i) % size];
		return raw_size;
	}

	return -1;
}

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
	char line[256];
	bool found;

	if (!text)
		return false;
	snprintf(line, sizeof(line), "%u:%s%s%s", index, name,
		 users ? " # Used by " : "", users ? users : "");
	found = ue_has_line(text, line);
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
	self->status_fd = ue_open_status();
	ASSERT_NE(-1, self->status_fd);
	self->status = ue_map_status(self->status_fd);
	ASSERT_NE(MAP_FAILED, self->status);
}

FIXTURE_TEARDOWN(perf)
{
	munmap(self->status, UE_PAGE_SIZE);
	close(self->status_fd);
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
	struct perf_ring ring;
	struct user_reg reg;
	__u8 raw[256];
	int id, size;

	memset(&in, 0, sizeof(in));
	in.count = 0xdeadbeef;
	in.delta = -3;
	strcpy(in.tag, "abcde");
	strcpy(in.msg, "hello");
	strcpy(in.note, "rel!");
	/* __data_loc counts from the record start, __rel_loc from its end */
	in.msg_loc = DYN_LOC(COMMON_SIZE + offsetof(struct sample_payload, msg),
			     6);
	in.note_loc = DYN_LOC(offsetof(struct sample_payload, note) -
			      offsetof(struct sample_payload, note_loc) - 4, 5);

	ASSERT_EQ(0, ue_reg(self->data_fd, PREFIX
			    "sample u32 count; s16 delta; char[6] tag; __data_loc char[] msg; __rel_loc char[] note",
			    &reg));
	id = ue_event_id(name);
	ASSERT_LT(0, id);

	ASSERT_EQ(0, self->status[reg.status_index]);
	ASSERT_EQ(0, perf_open(id, &ring));
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
	size = perf_raw_sample(&ring, 0, raw, sizeof(raw));
	ASSERT_LE(COMMON_SIZE + (int)sizeof(in), size);
	ASSERT_EQ(id, *(__u16 *)raw);			/* common_type */
	ASSERT_EQ(getpid(), *(__s32 *)(raw + 4));	/* common_pid */
	ASSERT_EQ(COMMON_SIZE, format_offset(name, "count"));
	ASSERT_EQ(COMMON_SIZE + 4, format_offset(name, "delta"));
	ASSERT_EQ(COMMON_SIZE + 6, format_offset(name, "tag[6]"));
	ASSERT_EQ(COMMON_SIZE + 12, format_offset(name, "msg"));
	ASSERT_EQ(0xdeadbeef, *(__u32 *)(raw + COMMON_SIZE));
	ASSERT_EQ(-3, *(__s16 *)(raw + COMMON_SIZE + 4));
	ASSERT_STREQ("abcde", (char *)raw + COMMON_SIZE + 6);
	ASSERT_STREQ("hello", (char *)raw + (first.msg_loc & 0xffff));
	/* Exactly the payload bytes, without the write index */
	ASSERT_EQ(0, memcmp(raw + COMMON_SIZE, &first, sizeof(first)));

	size = perf_raw_sample(&ring, 1, raw, sizeof(raw));
	ASSERT_LE(COMMON_SIZE + (int)sizeof(in), size);
	ASSERT_EQ(7, *(__u32 *)(raw + COMMON_SIZE));
	ASSERT_STREQ("rel!", (char *)raw + COMMON_SIZE +
		     offsetof(struct sample_payload, note));
	ASSERT_EQ(-1, perf_raw_sample(&ring, 2, raw, sizeof(raw)));

	perf_close(&ring);
	/* Detached at close */
	ASSERT_EQ(0, self->status[reg.status_index]);
	ASSERT_TRUE(status_line(reg.status_index, name, NULL));
}

TEST_F(perf, invalid_payload_makes_no_sample)
{
	struct perf_ring ring;
	struct user_reg reg;
	__u8 raw[64];
	struct {
		__u32 loc;
		char s[4];
	} in = { .s = "abc" };

	ASSERT_EQ(0, ue_reg(self->data_fd, PREFIX "bad __data_loc char[] s",
			    &reg));
	ASSERT_EQ(0, perf_open(ue_event_id(PREFIX "bad"), &ring));

	/* Points past the end of the payload */
	in.loc = DYN_LOC(COMMON_SIZE + 4, 40);
	ASSERT_EQ(-EFAULT, ue_emit(self->data_fd, reg.write_index,
				   &in, sizeof(in)));
	ASSERT_EQ(-1, perf_raw_sample(&ring, 0, raw, sizeof(raw)));

	in.loc = DYN_LOC(COMMON_SIZE + 4, 4);
	ASSERT_EQ(sizeof(in) + 4, ue_emit(self->data_fd, reg.write_index,
					  &in, sizeof(in)));
	ASSERT_LE(COMMON_SIZE + (int)sizeof(in),
		  perf_raw_sample(&ring, 0, raw, sizeof(raw)));
	ASSERT_STREQ("abc", (char *)raw + COMMON_SIZE + 4);

	perf_close(&ring);
}

TEST_F(perf, ftrace_and_perf_together)
{
	const char *name = PREFIX "both";
	struct perf_ring ring;
	struct user_reg reg;
	__u32 value = 42;
	__u8 raw[64];
	char *trace;

	ASSERT_EQ(0, ue_reg(self->data_fd, PREFIX "both u32 value", &reg));
	ASSERT_EQ(0, ue_clear_trace(NULL));
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	ASSERT_EQ(0, perf_open(ue_event_id(name), &ring));
	ASSERT_EQ(EVENT_STATUS_FTRACE | EVENT_STATUS_PERF,
		  self->status[reg.status_index]);
	ASSERT_TRUE(status_line(reg.status_index, name, "ftrace perf"));

	ASSERT_EQ(8, ue_emit(self->data_fd, reg.write_index, &value, 4));

	/* Both consumers got the event */
	ASSERT_LE(12, perf_raw_sample(&ring, 0, raw, sizeof(raw)));
	ASSERT_EQ(42, *(__u32 *)(raw + COMMON_SIZE));
	trace = ue_trace_collect(NULL, name);
	ASSERT_NE(NULL, trace);
	ASSERT_STREQ("value=42\n", trace);
	free(trace);

	perf_close(&ring);
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->status[reg.status_index]);
	ASSERT_EQ(0, ue_enable(NULL, name, false));
	ASSERT_EQ(0, self->status[reg.status_index]);
}

TEST_F(perf, perf_holds_the_event)
{
	struct perf_ring ring;
	struct user_reg reg;

	ASSERT_EQ(0, ue_reg(self->data_fd, PREFIX "busy u32 a", &reg));
	ASSERT_EQ(0, perf_open(ue_event_id(PREFIX "busy"), &ring));

	/* Without the fd's reference, perf's still holds the event */
	close(self->data_fd);
	self->data_fd = ue_open_data();
	ASSERT_EQ(EBUSY, ue_del(PREFIX "busy"));
	perf_close(&ring);
	ASSERT_EQ(0, ue_del(PREFIX "busy"));
	ASSERT_FALSE(ue_event_exists(PREFIX "busy"));
}

TEST_HARNESS_MAIN
