// SPDX-License-Identifier: GPL-2.0
/*
 * user_events writes seen by ftrace: the values read back from the trace
 * buffer for every field type (fixed char arrays recorded as written, NUL
 * or not; dynamic ones must end with their NUL), the errors of
 * write()/writev(), filters and trace instances, lines too long for a
 * page, tp_printk's copy in the kernel log, and an eprobe reading a
 * 3-byte field at the end of a record.  The per-event checks (pid filter,
 * soft disable, triggers, filters, stack trace options), each switched on
 * between two writes, hold from the next write on, and a record made
 * without them has the common fields of one made with them.  fault_test has the payload pages
 * that must be faulted in.
 *
 * Records of deleted events: deleting an event (DIAG_IOCSDEL, "!u:NAME")
 * clears no buffer; its records, at the top level or in an instance,
 * print with its format.  Made again with the same fields it is the same
 * event type (id), with other fields another one.  Kept events count
 * against no limit of events; past kernel.user_events_kept_max the oldest
 * print as bytes, and past 8 times as many more the oldest goes with the
 * buffers that held it.  Whether records remain is counted per CPU
 * buffer (two CPUs), across a snapshot swap.
 */
#define _GNU_SOURCE	/* sched_getcpu(), CPU_SET() */
#include <sched.h>

#include "user_events_selftests.h"

#include <limits.h>
#include <sys/stat.h>

#define PREFIX "ue_ft_"
#define INSTANCE "ue_ft_inst"
/* The eprobe of eprobe_field_size */
#define EP_GROUP "ue_ft_ep"
#define EP_NAME "ue_ft_ep3"

/*
 * The tests read back a few records and one of the largest size: make sure
 * the top-level buffer holds them.  It may have been left at its boot-time
 * minimum: once any instance was resized (as race_test and stress_test do),
 * enabling an event no longer expands the top-level buffer.
 */
#define MIN_BUFFER_KB 64

/* Deleted events kept with their format for their records */
#define UE_KEPT_MAX_PATH	"/proc/sys/kernel/user_events_kept_max"
#define KEPT_MAX_DEFAULT	1024

FIXTURE(ft) {
	int fd;
	int status_fd;
	__u8 *status;
	long max0;
	long kept_max0;
};

FIXTURE_SETUP(ft)
{
	UE_SKIP_IF_UNAVAILABLE();

	ue_instance_remove(INSTANCE);
	ue_cleanup_events(PREFIX);

	self->max0 = ue_get_max();
	self->kept_max0 = ue_get_sysctl(UE_KEPT_MAX_PATH);
	self->fd = ue_open_data();
	ASSERT_NE(-1, self->fd);
	ASSERT_EQ(0, ue_open_status_page(&self->status_fd, &self->status));
	ASSERT_EQ(0, ue_ensure_top_buffer_kb(MIN_BUFFER_KB));
	ASSERT_EQ(0, ue_clear_trace(NULL));
}

FIXTURE_TEARDOWN(ft)
{
	ue_close_status_page(self->status_fd, self->status);
	if (self->fd != -1)
		close(self->fd);
	if (self->max0 > 0 && ue_get_max() != self->max0)
		ue_set_max(self->max0);
	if (self->kept_max0 >= 0)
		ue_set_sysctl(UE_KEPT_MAX_PATH, self->kept_max0);
	/* What the tests of the per-event checks may have left on */
	ue_write_file("set_event_pid", "\n", O_TRUNC);
	ue_write_file("options/stacktrace", "0\n", O_TRUNC);
	ue_write_file("options/userstacktrace", "0\n", O_TRUNC);
	ue_write_file("tracing_on", "1\n", O_TRUNC);
	ue_eprobe_remove(EP_GROUP, EP_NAME);
	ue_instance_remove(INSTANCE);
	ue_cleanup_events(PREFIX);
	ue_clear_trace(NULL);
}

/*
 * Register @cmd on @fd and enable event @name for ftrace, checking its byte
 * in @status goes from 0 to EVENT_STATUS_FTRACE; returns the write index.
 */
static __u32 reg_enabled(struct __test_metadata *_metadata, int fd,
			 const __u8 *status, const char *cmd, const char *name)
{
	struct user_reg reg;

	ASSERT_EQ(0, ue_reg(fd, cmd, &reg)) {
		TH_LOG("cannot register \"%s\"", cmd);
	}
	ASSERT_EQ(0, status[reg.status_index]);
	ASSERT_EQ(0, ue_enable(NULL, name, true));
	ASSERT_EQ(EVENT_STATUS_FTRACE, status[reg.status_index]);

	return reg.write_index;
}

/* Write @v to the one-u32 event of write index @idx on @fd */
static ssize_t emit_u32(int fd, __u32 idx, __u32 v)
{
	return ue_emit(fd, idx, &v, sizeof(v));
}

/* Values for the fields of the "ints" event, in their declared types */
struct ints {
	__s8 a;
	__u8 b;
	__s16 c;
	__u16 d;
	__s32 e;
	__u32 f;
	__s64 g;
	__u64 h;
	char i;
	unsigned char j;
	short k;
	unsigned short l;
	int m;
	unsigned int n;
};

/* The payload of @v: its fields back to back, 44 bytes */
static void put_ints(struct ue_payload *p, const struct ints *v)
{
	ue_put(p, &v->a, sizeof(v->a));
	ue_put(p, &v->b, sizeof(v->b));
	ue_put(p, &v->c, sizeof(v->c));
	ue_put(p, &v->d, sizeof(v->d));
	ue_put(p, &v->e, sizeof(v->e));
	ue_put(p, &v->f, sizeof(v->f));
	ue_put(p, &v->g, sizeof(v->g));
	ue_put(p, &v->h, sizeof(v->h));
	ue_put(p, &v->i, sizeof(v->i));
	ue_put(p, &v->j, sizeof(v->j));
	ue_put(p, &v->k, sizeof(v->k));
	ue_put(p, &v->l, sizeof(v->l));
	ue_put(p, &v->m, sizeof(v->m));
	ue_put(p, &v->n, sizeof(v->n));
}

TEST_F(ft, integer_types)
{
	const struct ints lo = {
		INT8_MIN, 0, INT16_MIN, 0, INT32_MIN, 0, INT64_MIN, 0,
		'A', 0, SHRT_MIN, 0, INT_MIN, 0,
	};
	const struct ints hi = {
		INT8_MAX, UINT8_MAX, INT16_MAX, UINT16_MAX, INT32_MAX,
		UINT32_MAX, INT64_MAX, UINT64_MAX,
		127, UCHAR_MAX, SHRT_MAX, USHRT_MAX, INT_MAX, UINT_MAX,
	};
	const struct ints mid = {
		-1, 1, -2, 2, -3, 3, -4, 4, '0', 200, -300, 60000, -100000,
		3000000000u,
	};
	struct ue_payload p = { 0 };
	__u32 idx;

	idx = reg_enabled(_metadata, self->fd, self->status,
			  PREFIX "ints s8 a; u8 b; s16 c; u16 d; s32 e; u32 f; "
			  "s64 g; u64 h; char i; unsigned char j; short k; "
			  "unsigned short l; int m; unsigned int n",
			  PREFIX "ints");

	/* Plain write() of index and payload in one buffer */
	ue_put(&p, &idx, sizeof(idx));
	put_ints(&p, &lo);
	ASSERT_EQ(4 + 44, p.len);
	ASSERT_EQ(p.len, write(self->fd, p.data, p.len));

	/* writev() with the index in its own iovec */
	p.len = 0;
	put_ints(&p, &hi);
	ASSERT_EQ(4 + p.len, ue_emit(self->fd, idx, p.data, p.len));
	p.len = 0;
	put_ints(&p, &mid);
	ASSERT_EQ(4 + p.len, ue_emit(self->fd, idx, p.data, p.len));

	UE_ASSERT_TRACE(NULL, PREFIX "ints",
			"a=-128 b=0 c=-32768 d=0 e=-2147483648 f=0 g=-9223372036854775808 h=0 i=65 j=0 k=-32768 l=0 m=-2147483648 n=0\n"
			"a=127 b=255 c=32767 d=65535 e=2147483647 f=4294967295 g=9223372036854775807 h=18446744073709551615 i=127 j=255 k=32767 l=65535 m=2147483647 n=4294967295\n"
			"a=-1 b=1 c=-2 d=2 e=-3 f=3 g=-4 h=4 i=48 j=200 k=-300 l=60000 m=-100000 n=3000000000\n");
}

TEST_F(ft, char_array)
{
	/* No padding: n follows msg directly */
	struct {
		char msg[20];
		__u32 n;
	} v;
	__u32 idx;

	ASSERT_EQ(24, sizeof(v));

	idx = reg_enabled(_metadata, self->fd, self->status,
			  PREFIX "carr char[20] msg; u32 n",
			  PREFIX "carr");

	memset(&v, 0, sizeof(v));
	snprintf(v.msg, sizeof(v.msg), "hello");
	v.n = 7;
	ASSERT_EQ(4 + sizeof(v), ue_emit(self->fd, idx, &v, sizeof(v)));

	/* 19 characters and the NUL fill it */
	memset(v.msg, 'x', 19);
	v.msg[19] = '\0';
	v.n = 8;
	ASSERT_EQ(4 + sizeof(v), ue_emit(self->fd, idx, &v, sizeof(v)));

	/*
	 * 20 characters and no NUL: recorded as written, and printed up to
	 * the end of the array, not into n (whose first byte is a tab)
	 */
	memset(v.msg, 'y', 20);
	v.n = 9;
	ASSERT_EQ(4 + sizeof(v), ue_emit(self->fd, idx, &v, sizeof(v)));

	/* A NUL anywhere in the array ends the text */
	v.msg[10] = '\0';
	v.n = 10;
	ASSERT_EQ(4 + sizeof(v), ue_emit(self->fd, idx, &v, sizeof(v)));

	UE_ASSERT_TRACE(NULL, PREFIX "carr",
			"msg=hello n=7\nmsg=xxxxxxxxxxxxxxxxxxx n=8\n"
			"msg=yyyyyyyyyyyyyyyyyyyy n=9\n"
			"msg=yyyyyyyyyy n=10\n");
}

/*
 * Payload of "u32 a; <loc> msg; u32 b" followed by string bytes: a at
 * payload offset 0, the location word at 4, b at 8, @data from 12 + @pad.
 */
static size_t loc_payload(__u8 *buf, __u32 a, __u32 loc, __u32 b,
			  const void *data, size_t len, size_t pad)
{
	memset(buf, 0, 12 + pad + len);
	memcpy(buf, &a, 4);
	memcpy(buf + 4, &loc, 4);
	memcpy(buf + 8, &b, 4);
	memcpy(buf + 12 + pad, data, len);

	return 12 + pad + len;
}

TEST_F(ft, data_loc_string)
{
	/* Record offset of the first byte after the fixed fields */
	const __u16 data = UE_COMMON_SIZE + 12;
	__u8 buf[256];
	size_t len;
	__u32 idx;

	idx = reg_enabled(_metadata, self->fd, self->status,
			  PREFIX "dl u32 a; __data_loc char[] msg; u32 b",
			  PREFIX "dl");

	len = loc_payload(buf, 1, DYN_LOC(data, 12), 2, "hello world", 12, 0);
	ASSERT_EQ(4 + len, ue_emit(self->fd, idx, buf, len));

	/* The empty string */
	len = loc_payload(buf, 3, DYN_LOC(data, 1), 4, "", 1, 0);
	ASSERT_EQ(4 + len, ue_emit(self->fd, idx, buf, len));

	/* Not right after the fixed fields */
	len = loc_payload(buf, 5, DYN_LOC(data + 4, 4), 6, "pad", 4, 4);
	ASSERT_EQ(4 + len, ue_emit(self->fd, idx, buf, len));

	/* One byte past the end of the payload */
	len = loc_payload(buf, 7, DYN_LOC(data, 13), 8, "hello world", 12, 0);
	ASSERT_EQ(-EFAULT, ue_emit(self->fd, idx, buf, len));
	/* Far past it */
	len = loc_payload(buf, 7, DYN_LOC(200, 4), 8, "abc", 4, 0);
	ASSERT_EQ(-EFAULT, ue_emit(self->fd, idx, buf, len));
	len = loc_payload(buf, 7, DYN_LOC(0xffffU, 0xffffU), 8, "abc", 4, 0);
	ASSERT_EQ(-EFAULT, ue_emit(self->fd, idx, buf, len));
	/* Into the common header */
	len = loc_payload(buf, 7, DYN_LOC(4, 4), 8, "abc", 4, 0);
	ASSERT_EQ(-EFAULT, ue_emit(self->fd, idx, buf, len));
	len = loc_payload(buf, 7, DYN_LOC(0, 1), 8, "abc", 4, 0);
	ASSERT_EQ(-EFAULT, ue_emit(self->fd, idx, buf, len));
	/* Starting in the header, ending in the payload */
	len = loc_payload(buf, 7, DYN_LOC(UE_COMMON_SIZE - 2, 8), 8, "abc", 4, 0);
	ASSERT_EQ(-EFAULT, ue_emit(self->fd, idx, buf, len));
	/* Size 0 */
	len = loc_payload(buf, 7, DYN_LOC(data, 0), 8, "abc", 4, 0);
	ASSERT_EQ(-EFAULT, ue_emit(self->fd, idx, buf, len));
	/* No NUL within the size */
	len = loc_payload(buf, 7, DYN_LOC(data, 3), 8, "abc", 3, 0);
	ASSERT_EQ(-EFAULT, ue_emit(self->fd, idx, buf, len));
	len = loc_payload(buf, 7, DYN_LOC(data, 3), 8, "abc", 4, 0);
	ASSERT_EQ(-EFAULT, ue_emit(self->fd, idx, buf, len));

	UE_ASSERT_TRACE(NULL, PREFIX "dl",
			"a=1 msg=hello world b=2\n"
			"a=3 msg= b=4\n"
			"a=5 msg=pad b=6\n");
}

TEST_F(ft, rel_loc_string)
{
	__u8 buf[256];
	size_t len;
	__u32 idx, idx2, loc;

	idx = reg_enabled(_metadata, self->fd, self->status,
			  PREFIX "rl u32 a; __rel_loc char[] msg; u32 b",
			  PREFIX "rl");

	/*
	 * The location word ends at payload offset 8 and the string starts
	 * at 12: 4 bytes after the end of the field.
	 */
	len = loc_payload(buf, 1, DYN_LOC(4, 4), 2, "rel", 4, 0);
	ASSERT_EQ(4 + len, ue_emit(self->fd, idx, buf, len));
	len = loc_payload(buf, 3, DYN_LOC(12, 6), 4, "later", 6, 8);
	ASSERT_EQ(4 + len, ue_emit(self->fd, idx, buf, len));

	/* Past the end, size 0, no NUL */
	len = loc_payload(buf, 5, DYN_LOC(4, 5), 6, "rel", 4, 0);
	ASSERT_EQ(-EFAULT, ue_emit(self->fd, idx, buf, len));
	len = loc_payload(buf, 5, DYN_LOC(100, 4), 6, "rel", 4, 0);
	ASSERT_EQ(-EFAULT, ue_emit(self->fd, idx, buf, len));
	len = loc_payload(buf, 5, DYN_LOC(4, 0), 6, "rel", 4, 0);
	ASSERT_EQ(-EFAULT, ue_emit(self->fd, idx, buf, len));
	len = loc_payload(buf, 5, DYN_LOC(4, 3), 6, "rel", 3, 0);
	ASSERT_EQ(-EFAULT, ue_emit(self->fd, idx, buf, len));

	UE_ASSERT_TRACE(NULL, PREFIX "rl",
			"a=1 msg=rel b=2\na=3 msg=later b=4\n");

	/* As the only field: offset 0 is right after it */
	idx2 = reg_enabled(_metadata, self->fd, self->status,
			   PREFIX "rl2 __rel_loc char[] m", PREFIX "rl2");
	loc = DYN_LOC(0, 3);
	memcpy(buf, &loc, 4);
	memcpy(buf + 4, "xy", 3);
	ASSERT_EQ(4 + 7, ue_emit(self->fd, idx2, buf, 7));
	UE_ASSERT_TRACE(NULL, PREFIX "rl2", "m=xy\n");
}

TEST_F(ft, hex_arrays)
{
	/*
	 * Payload offsets: h 0..2, d's location 3, r's location 7 (ends at
	 * 11), s 11..14, d's bytes at 15, r's bytes at 17.  Arrays of
	 * unsigned char are strings to the tracing core too: d and r must
	 * end with a NUL; h, fixed, is recorded as written, NUL or not.
	 * The struct is bytes only.
	 */
	const __u8 h[3] = { 0x01, 0x00, 0x0a };
	const __u8 d[2] = { 0xff, 0x00 };
	const __u8 r[3] = { 0xde, 0xad, 0x00 };
	const __u8 s[4] = { 0x11, 0x22, 0x33, 0x44 };
	__u32 dloc = DYN_LOC(UE_COMMON_SIZE + 15, 2);
	__u32 rloc = DYN_LOC(17 - 11, 3);
	__u8 buf[20], bad[20];
	__u32 idx, loc;

	idx = reg_enabled(_metadata, self->fd, self->status,
			  PREFIX "hex unsigned char[3] h; "
			  "__data_loc unsigned char[] d; "
			  "__rel_loc unsigned char[] r; struct foo s 4",
			  PREFIX "hex");

	memcpy(buf, h, 3);
	memcpy(buf + 3, &dloc, 4);
	memcpy(buf + 7, &rloc, 4);
	memcpy(buf + 11, s, 4);
	memcpy(buf + 15, d, 2);
	memcpy(buf + 17, r, 3);
	ASSERT_EQ(4 + sizeof(buf), ue_emit(self->fd, idx, buf, sizeof(buf)));

	/* No NUL in h: recorded all the same */
	memcpy(bad, buf, sizeof(bad));
	bad[1] = 0x02;
	ASSERT_EQ(4 + sizeof(bad), ue_emit(self->fd, idx, bad, sizeof(bad)));
	/* d or r not ending with their NUL, or empty */
	memcpy(bad, buf, sizeof(bad));
	bad[16] = 0x01;
	ASSERT_EQ(-EFAULT, ue_emit(self->fd, idx, bad, sizeof(bad)));
	memcpy(bad, buf, sizeof(bad));
	loc = DYN_LOC(UE_COMMON_SIZE + 15, 1);
	memcpy(bad + 3, &loc, 4);
	ASSERT_EQ(-EFAULT, ue_emit(self->fd, idx, bad, sizeof(bad)));
	memcpy(bad, buf, sizeof(bad));
	bad[19] = 0xbe;
	ASSERT_EQ(-EFAULT, ue_emit(self->fd, idx, bad, sizeof(bad)));
	memcpy(bad, buf, sizeof(bad));
	loc = DYN_LOC(6, 0);
	memcpy(bad + 7, &loc, 4);
	ASSERT_EQ(-EFAULT, ue_emit(self->fd, idx, bad, sizeof(bad)));

	/* Inside the payload */
	memcpy(bad, buf, sizeof(bad));
	loc = DYN_LOC(UE_COMMON_SIZE + 15, 6);
	memcpy(bad + 3, &loc, 4);
	ASSERT_EQ(-EFAULT, ue_emit(self->fd, idx, bad, sizeof(bad)));
	memcpy(bad, buf, sizeof(bad));
	loc = DYN_LOC(6, 4);
	memcpy(bad + 7, &loc, 4);
	ASSERT_EQ(-EFAULT, ue_emit(self->fd, idx, bad, sizeof(bad)));

	UE_ASSERT_TRACE(NULL, PREFIX "hex",
			"h=01 00 0a d=ff 00 r=de ad 00 s=11 22 33 44\n"
			"h=01 02 0a d=ff 00 r=de ad 00 s=11 22 33 44\n");
}

TEST_F(ft, struct_field)
{
	const __u8 pair[8] = { 1, 2, 3, 4, 5, 6, 7, 0xf8 };
	struct ue_payload p = { 0 };
	__u32 idx;

	idx = reg_enabled(_metadata, self->fd, self->status,
			  PREFIX "st u32 a; struct pair p 8; u8 z",
			  PREFIX "st");
	UE_PUT(&p, __u32, 1);
	ue_put(&p, pair, sizeof(pair));
	UE_PUT(&p, __u8, 9);
	ASSERT_EQ(4 + 13, ue_emit(self->fd, idx, p.data, p.len));
	UE_ASSERT_TRACE(NULL, PREFIX "st",
			"a=1 p=01 02 03 04 05 06 07 f8 z=9\n");
}

TEST_F(ft, no_fields)
{
	__u64 extra = 0x1122334455667788ull;
	__u32 idx;

	idx = reg_enabled(_metadata, self->fd, self->status,
			  PREFIX "none", PREFIX "none");
	ASSERT_EQ(4, write(self->fd, &idx, sizeof(idx)));
	ASSERT_EQ(12, ue_emit(self->fd, idx, &extra, sizeof(extra)));
	UE_ASSERT_TRACE(NULL, PREFIX "none", "\n\n");
}

TEST_F(ft, write_errors)
{
	/* Index, then the fields: no padding anywhere */
	struct {
		__u32 idx;
		__u32 a;
		__u64 b;
		__u8 more[UE_PAYLOAD_MAX];
	} buf;
	const size_t fixed = 12;
	struct user_reg reg;
	struct iovec io[16];
	__u32 bad_idx;
	char *readable, *noaccess, *edge;
	int pass, i;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "err u32 a; u64 b", &reg));
	memset(&buf, 0, sizeof(buf));
	buf.idx = reg.write_index;

	/* A readable page followed by one that cannot be read */
	readable = mmap(NULL, 2 * UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, readable);
	noaccess = readable + UE_PAGE_SIZE;
	ASSERT_EQ(0, mprotect(noaccess, UE_PAGE_SIZE, PROT_NONE));

	/* The same rules whether anything is attached or not */
	for (pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			ASSERT_EQ(0, ue_enable(NULL, PREFIX "err", true));
			ASSERT_EQ(EVENT_STATUS_FTRACE,
				  self->status[reg.status_index]);
		}
		buf.a = 1 + pass * 10;
		buf.b = 2 + pass * 10;

		/* Less than an index */
		ASSERT_EQ(-1, write(self->fd, &buf, 3));
		ASSERT_EQ(EINVAL, errno);
		ASSERT_EQ(-1, write(self->fd, &buf, 0));
		ASSERT_EQ(EINVAL, errno);

		/* Less than the fixed fields */
		ASSERT_EQ(-1, write(self->fd, &buf, 4));
		ASSERT_EQ(EINVAL, errno);
		ASSERT_EQ(-1, write(self->fd, &buf, 4 + fixed - 1));
		ASSERT_EQ(EINVAL, errno);

		/* Indexes this fd never handed out */
		bad_idx = reg.write_index + 1;
		ASSERT_EQ(-ENOENT, ue_emit(self->fd, bad_idx, &buf.a, fixed));
		ASSERT_EQ(-ENOENT, ue_emit(self->fd, INT32_MAX, &buf.a, fixed));
		/*
		 * Negative as a signed index: EINVAL, as on mainline (but
		 * 0xffffffff, USER_EVENT_BATCH, which starts a batch)
		 */
		ASSERT_EQ(-EINVAL, ue_emit(self->fd, 0xfffffffeu, &buf.a, fixed));
		ASSERT_EQ(-EINVAL, ue_emit(self->fd, 0x80000000u, &buf.a, fixed));
		buf.idx = bad_idx;
		ASSERT_EQ(-1, write(self->fd, &buf, 4 + fixed));
		ASSERT_EQ(ENOENT, errno);
		buf.idx = reg.write_index;

		/* Too big for one record */
		ASSERT_EQ(-E2BIG, ue_emit(self->fd, buf.idx, &buf.a,
					  UE_PAYLOAD_MAX + 1));
		ASSERT_EQ(-1, write(self->fd, &buf, 4 + UE_PAYLOAD_MAX + 1));
		ASSERT_EQ(E2BIG, errno);

		/* Exactly the fields, then the largest payload */
		ASSERT_EQ(4 + fixed, write(self->fd, &buf, 4 + fixed));
		buf.a += 100;
		ASSERT_EQ(4 + UE_PAYLOAD_MAX, write(self->fd, &buf, 4 + UE_PAYLOAD_MAX));
		buf.a -= 100;

		/* The index split across iovecs, the payload in bytes */
		io[0].iov_base = &buf;
		io[0].iov_len = 1;
		io[1].iov_base = (char *)&buf + 1;
		io[1].iov_len = 3;
		for (i = 0; i < 12; i++) {
			io[2 + i].iov_base = (char *)&buf + 4 + i;
			io[2 + i].iov_len = 1;
		}
		buf.a += 200;
		ASSERT_EQ(4 + fixed, writev(self->fd, io, 14));
		buf.a -= 200;
	}

	/* Unreadable buffers: the index, or the payload after a good index */
	ASSERT_EQ(-1, write(self->fd, noaccess, 4 + fixed));
	ASSERT_EQ(EFAULT, errno);
	edge = readable + UE_PAGE_SIZE - 8;
	memcpy(edge, &buf, 8);
	ASSERT_EQ(-1, write(self->fd, edge, 4 + fixed));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-EFAULT, ue_emit(self->fd, buf.idx, noaccess, fixed));
	ASSERT_EQ(-EFAULT, ue_emit(self->fd, buf.idx, NULL, fixed));
	io[0].iov_base = &buf;
	io[0].iov_len = 8;
	io[1].iov_base = noaccess;
	io[1].iov_len = 8;
	ASSERT_EQ(-1, writev(self->fd, io, 2));
	ASSERT_EQ(EFAULT, errno);

	/* Only what was written while enabled, each write once */
	UE_ASSERT_TRACE(NULL, PREFIX "err",
			"a=11 b=12\na=111 b=12\na=211 b=12\n");
	munmap(readable, 2 * UE_PAGE_SIZE);
}

/* The data file is a stream: no position to seek to or write at */
TEST_F(ft, no_position)
{
	struct user_reg reg;
	struct {
		__u32 idx;
		__u32 v;
	} buf;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "pos u32 v", &reg));
	ASSERT_EQ(0, ue_enable(NULL, PREFIX "pos", true));
	buf.idx = reg.write_index;
	buf.v = 7;

	ASSERT_EQ(-1, lseek(self->fd, 0, SEEK_SET));
	ASSERT_EQ(ESPIPE, errno);
	ASSERT_EQ(-1, pwrite(self->fd, &buf, sizeof(buf), 0));
	ASSERT_EQ(ESPIPE, errno);
	ASSERT_EQ(sizeof(buf), write(self->fd, &buf, sizeof(buf)));
	UE_ASSERT_TRACE(NULL, PREFIX "pos", "v=7\n");
}

TEST_F(ft, filter)
{
	__u32 idx, count;

	idx = reg_enabled(_metadata, self->fd, self->status,
			  PREFIX "filt u32 count",
			  PREFIX "filt");
	ASSERT_EQ(0, ue_write_file(ue_event_file(NULL, PREFIX "filt", "filter"),
				   "count > 5\n", O_TRUNC));

	for (count = 1; count <= 10; count++)
		if (ue_emit(self->fd, idx, &count, sizeof(count)) != 8)
			break;
	ASSERT_EQ(11, count);

	UE_ASSERT_TRACE(NULL, PREFIX "filt",
			"count=6\ncount=7\ncount=8\ncount=9\ncount=10\n");

	/* Dropping the filter lets everything through again */
	ASSERT_EQ(0, ue_write_file(ue_event_file(NULL, PREFIX "filt", "filter"),
				   "0\n", O_TRUNC));
	ASSERT_EQ(0, ue_clear_trace(NULL));
	for (count = 1; count <= 3; count++)
		if (ue_emit(self->fd, idx, &count, sizeof(count)) != 8)
			break;
	ASSERT_EQ(4, count);
	UE_ASSERT_TRACE(NULL, PREFIX "filt", "count=1\ncount=2\ncount=3\n");
}

TEST_F(ft, string_filter)
{
	const char *filter = ue_event_file(NULL, PREFIX "sfilt", "filter");
	static const char * const tags[] = { "yes", "no", "yes", "yes" };
	static const char * const msgs[] = { "keep", "keep", "drop", "keep" };
	struct ue_payload p;
	char tag[8];
	__u32 idx;
	int i;

	idx = reg_enabled(_metadata, self->fd, self->status,
			  PREFIX "sfilt char[8] tag; __data_loc char[] msg",
			  PREFIX "sfilt");
	ASSERT_EQ(0, ue_write_file(filter, "msg == \"keep\" && tag == \"yes\"\n",
				   O_TRUNC));

	for (i = 0; i < 4; i++) {
		p.len = 0;
		memset(tag, 0, sizeof(tag));
		snprintf(tag, sizeof(tag), "%s", tags[i]);
		ue_put(&p, tag, sizeof(tag));
		UE_PUT(&p, __u32, DYN_LOC(UE_COMMON_SIZE + 12, strlen(msgs[i]) + 1));
		ue_put(&p, msgs[i], strlen(msgs[i]) + 1);
		ASSERT_EQ(4 + p.len, ue_emit(self->fd, idx, p.data, p.len));
	}

	UE_ASSERT_TRACE(NULL, PREFIX "sfilt",
			"tag=yes msg=keep\ntag=yes msg=keep\n");
}

/* A long of the kernel's holding the 3 bytes at @p first, the others 0 */
static unsigned long long field_in_long(const __u8 *p)
{
	__u64 v64 = 0;
	__u32 v32 = 0;

	if (!ue_kernel_64bit()) {
		memcpy(&v32, p, 3);
		return v32;
	}
	memcpy(&v64, p, 3);
	return v64;
}

/*
 * An eprobe reads a field of any size without the bytes after it: a
 * 3-byte struct at the end of a record, with more records behind it in
 * the buffer, is fetched as its 3 bytes.
 */
TEST_F(ft, eprobe_field_size)
{
	static const __u8 one_two_three[3] = { 1, 2, 3 }, ab[3] = {
		0xab, 0xab, 0xab };
	const char *name = PREFIX "ep3";
	__u8 rec[4] = { 0xff, 1, 2, 3 };
	char cmd[256], want[256];
	struct user_reg reg;

	ue_eprobe_remove(EP_GROUP, EP_NAME);
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "ep3 u8 a; struct t x 3", &reg));
	snprintf(cmd, sizeof(cmd), "e:%s/%s %s/%s x=$x:x64", EP_GROUP,
		 EP_NAME, USER_EVENTS_SYSTEM, name);
	ASSERT_EQ(0, ue_dyn(cmd));
	ASSERT_EQ(0, ue_eprobe_enable(EP_GROUP, EP_NAME, true));

	ASSERT_EQ(8, ue_emit(self->fd, reg.write_index, rec, sizeof(rec)));
	memset(rec, 0xab, sizeof(rec));
	ASSERT_EQ(8, ue_emit(self->fd, reg.write_index, rec, sizeof(rec)));
	EXPECT_EQ(0, ue_eprobe_enable(EP_GROUP, EP_NAME, false));
	/* The 3 bytes first in a long of the kernel's, the others 0 */
	snprintf(want, sizeof(want),
		 "(%s.%s) x=0x%llx\n(%s.%s) x=0x%llx\n",
		 USER_EVENTS_SYSTEM, name, field_in_long(one_two_three),
		 USER_EVENTS_SYSTEM, name, field_in_long(ab));
	UE_ASSERT_TRACE(NULL, EP_NAME, want);
	ASSERT_EQ(0, ue_eprobe_remove(EP_GROUP, EP_NAME));
}

/* A histogram attaches to the event without it being enabled */
TEST_F(ft, hist_trigger)
{
	const char *trigger = ue_event_file(NULL, PREFIX "hist", "trigger");
	static const __u32 vals[] = { 1, 2, 1, 1, 7 };
	unsigned long long key, hits, count[8] = { 0 };
	struct user_reg reg;
	char *text, *line;
	size_t i;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "hist u32 v", &reg));
	ASSERT_EQ(0, ue_write_file(trigger, "hist:keys=v\n", O_APPEND));
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->status[reg.status_index]);

	for (i = 0; i < ARRAY_SIZE(vals); i++)
		if (ue_emit(self->fd, reg.write_index, &vals[i], 4) != 8)
			break;
	ASSERT_EQ(ARRAY_SIZE(vals), i);

	text = ue_read_file(ue_event_file(NULL, PREFIX "hist", "hist"));
	ASSERT_NE(NULL, text);
	for (line = strstr(text, "{ v:"); line; line = strstr(line + 1, "{ v:")) {
		int n = sscanf(line, "{ v: %llu } hitcount: %llu", &key, &hits);

		ASSERT_EQ(2, n) {
			TH_LOG("hist:\n%s", text);
		}
		ASSERT_LT(key, ARRAY_SIZE(count));
		count[key] = hits;
	}
	free(text);
	ASSERT_EQ(3, count[1]);
	ASSERT_EQ(1, count[2]);
	ASSERT_EQ(1, count[7]);

	/* The trace buffer got nothing: the event was never enabled */
	UE_ASSERT_TRACE(NULL, PREFIX "hist", "");

	ASSERT_EQ(0, ue_write_file(trigger, "!hist:keys=v\n", O_APPEND));
	ASSERT_EQ(0, self->status[reg.status_index]);
}

/*
 * The per-event checks of the generic event path: while none is on, an
 * event is recorded straight through the ring buffer (the way
 * trace_marker_raw is), and each of them, switched on between two
 * writes, must be honoured from the next write on.
 */

/* The pid filter of the top level, set_event_pid: only listed tasks */
TEST_F(ft, pid_filter)
{
	__u32 idx;
	char pids[32];

	idx = reg_enabled(_metadata, self->fd, self->status,
			  PREFIX "pid u32 v", PREFIX "pid");

	/* Only init: our writes are not recorded */
	ASSERT_EQ(0, ue_write_file("set_event_pid", "1\n", O_TRUNC));
	EXPECT_EQ(8, emit_u32(self->fd, idx, 1));

	snprintf(pids, sizeof(pids), "%d\n", getpid());
	EXPECT_EQ(0, ue_write_file("set_event_pid", pids, O_TRUNC));
	EXPECT_EQ(8, emit_u32(self->fd, idx, 2));

	/* No filter again */
	ASSERT_EQ(0, ue_write_file("set_event_pid", "\n", O_TRUNC));
	EXPECT_EQ(8, emit_u32(self->fd, idx, 3));

	UE_ASSERT_TRACE(NULL, PREFIX "pid", "v=2\nv=3\n");
}

/*
 * Soft disable and triggers: an enable_event trigger on "sdon" attaches
 * "sd" soft-disabled (its byte is set, its writes are not recorded) until
 * a write of "sdon" runs the trigger.
 */
TEST_F(ft, soft_disable_trigger)
{
	const char *trigger = ue_event_file(NULL, PREFIX "sdon", "trigger");
	struct user_reg sd, sdon;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "sd u32 v", &sd));
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "sdon u32 v", &sdon));
	ASSERT_EQ(0, ue_write_file(trigger, "enable_event:" USER_EVENTS_SYSTEM
				   ":" PREFIX "sd\n", O_APPEND));
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->status[sd.status_index]);
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->status[sdon.status_index]);

	EXPECT_EQ(8, emit_u32(self->fd, sd.write_index, 1));
	/* Runs the trigger; "sdon" itself is soft-disabled too */
	EXPECT_EQ(8, emit_u32(self->fd, sdon.write_index, 2));
	EXPECT_EQ(8, emit_u32(self->fd, sd.write_index, 3));

	UE_ASSERT_TRACE(NULL, PREFIX "sd", "v=3\n");
	UE_ASSERT_TRACE(NULL, PREFIX "sdon", "");

	/* The trigger enabled "sd": it stays so without the trigger */
	ASSERT_EQ(0, ue_write_file(trigger, "!enable_event:" USER_EVENTS_SYSTEM
				   ":" PREFIX "sd\n", O_APPEND));
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->status[sd.status_index]);
	ASSERT_EQ(0, ue_enable(NULL, PREFIX "sd", false));
	ASSERT_EQ(0, self->status[sd.status_index]);
}

/*
 * A traceoff trigger runs after the record it fires on is committed:
 * that one is in the buffer, the next ones are not
 */
TEST_F(ft, traceoff_trigger)
{
	const char *trigger = ue_event_file(NULL, PREFIX "off", "trigger");
	char *on;
	__u32 idx;

	idx = reg_enabled(_metadata, self->fd, self->status,
			  PREFIX "off u32 v", PREFIX "off");
	EXPECT_EQ(8, emit_u32(self->fd, idx, 1));
	ASSERT_EQ(0, ue_write_file(trigger, "traceoff\n", O_APPEND));
	EXPECT_EQ(8, emit_u32(self->fd, idx, 2));
	EXPECT_EQ(8, emit_u32(self->fd, idx, 3));

	on = ue_read_file("tracing_on");
	ASSERT_EQ(0, ue_write_file(trigger, "!traceoff\n", O_APPEND));
	ASSERT_EQ(0, ue_write_file("tracing_on", "1\n", O_TRUNC));
	ASSERT_NE(NULL, on);
	EXPECT_STREQ("0\n", on);
	free(on);

	EXPECT_EQ(8, emit_u32(self->fd, idx, 4));
	UE_ASSERT_TRACE(NULL, PREFIX "off", "v=1\nv=2\nv=4\n");
}

/*
 * The line of the record of event @name with text @text in the top-level
 * @trace, or NULL
 */
static char *record_line(char *trace, const char *name, const char *text)
{
	char key[128], *hit;

	snprintf(key, sizeof(key), ": %s: %s\n", name, text);
	hit = strstr(trace, key);
	if (!hit)
		return NULL;
	while (hit > trace && hit[-1] != '\n')
		hit--;
	return hit;
}

/* The line after the record of @name with text @text, or NULL */
static char *line_after(const char *name, const char *text)
{
	char *trace = ue_read_file("trace"), *rec, *next, *line = NULL;

	if (!trace)
		return NULL;
	rec = record_line(trace, name, text);
	next = rec ? strchr(rec, '\n') : NULL;
	if (next) {
		next++;
		line = strndup(next, strcspn(next, "\n"));
	}
	free(trace);

	return line;
}

/*
 * Does a kernel event get a user stack with options/userstacktrace?  Not
 * on every architecture (arm64 records none in this kernel): the fork of
 * a child, in sched_process_fork, tells.
 */
static bool kernel_event_user_stack(void)
{
	const char *fork_enable = "events/sched/sched_process_fork/enable";
	char *trace;
	bool found;
	pid_t pid;

	if (ue_clear_trace(NULL) ||
	    ue_write_file("options/userstacktrace", "1\n", O_TRUNC) ||
	    ue_write_file(fork_enable, "1\n", O_TRUNC))
		return false;
	pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	ue_write_file(fork_enable, "0\n", O_TRUNC);
	ue_write_file("options/userstacktrace", "0\n", O_TRUNC);
	trace = ue_read_file("trace");
	found = trace && strstr(trace, "<user stack trace>");
	free(trace);
	return found;
}

/* The stack trace options add the stacks to each record, as they do */
TEST_F(ft, stack_options)
{
	static const char * const option[] = {
		"options/stacktrace", "options/userstacktrace",
	};
	static const char * const mark[] = {
		"<stack trace>", "<user stack trace>",
	};
	bool user_stacks = kernel_event_user_stack();
	char *line;
	__u32 idx;
	int i;

	idx = reg_enabled(_metadata, self->fd, self->status,
			  PREFIX "stk u32 v", PREFIX "stk");

	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, ue_clear_trace(NULL));
		ASSERT_EQ(0, ue_write_file(option[i], "1\n", O_TRUNC));
		EXPECT_EQ(8, emit_u32(self->fd, idx, 1));
		ASSERT_EQ(0, ue_write_file(option[i], "0\n", O_TRUNC));
		EXPECT_EQ(8, emit_u32(self->fd, idx, 2));

		line = line_after(PREFIX "stk", "v=1");
		ASSERT_NE(NULL, line);
		/* A user stack where a kernel event gets one */
		EXPECT_EQ(i == 0 || user_stacks, !!strstr(line, mark[i])) {
			TH_LOG("%s: after v=1: %s", option[i], line);
		}
		free(line);
		line = line_after(PREFIX "stk", "v=2");
		EXPECT_TRUE(!line || !strstr(line, mark[i])) {
			TH_LOG("%s off: after v=2: %s", option[i], line);
		}
		free(line);
	}
}

/* "comm-pid [cpu] flags" of the record of @name with text @text, or NULL */
static char *record_head(const char *name, const char *text)
{
	char *trace = ue_read_file("trace"), *rec, *end, *head = NULL;

	if (!trace)
		return NULL;
	rec = record_line(trace, name, text);
	/* Up to the time stamp, which follows the flags */
	end = rec ? strstr(rec, "] ") : NULL;
	if (end) {
		end += 2;
		end += strcspn(end, " ");
		rec += strspn(rec, " ");
		head = strndup(rec, end - rec);
	}
	free(trace);

	return head;
}

/*
 * The common fields of a record made straight through the ring buffer are
 * those of the generic path: a filter that lets everything through sends
 * the second write through the generic path, on the same CPU.
 */
TEST_F(ft, common_fields)
{
	const char *filter = ue_event_file(NULL, PREFIX "cf", "filter");
	char *plain, *checked, pid[32];
	cpu_set_t cpus, saved;
	__u32 idx;

	ASSERT_EQ(0, sched_getaffinity(0, sizeof(saved), &saved));
	CPU_ZERO(&cpus);
	CPU_SET(sched_getcpu(), &cpus);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpus), &cpus));

	idx = reg_enabled(_metadata, self->fd, self->status,
			  PREFIX "cf u32 v", PREFIX "cf");
	EXPECT_EQ(8, emit_u32(self->fd, idx, 1));
	ASSERT_EQ(0, ue_write_file(filter, "v < 100\n", O_TRUNC));
	EXPECT_EQ(8, emit_u32(self->fd, idx, 2));
	ASSERT_EQ(0, ue_write_file(filter, "0\n", O_TRUNC));
	sched_setaffinity(0, sizeof(saved), &saved);

	plain = record_head(PREFIX "cf", "v=1");
	checked = record_head(PREFIX "cf", "v=2");
	ASSERT_NE(NULL, plain);
	ASSERT_NE(NULL, checked);
	EXPECT_STREQ(checked, plain);
	snprintf(pid, sizeof(pid), "-%d ", getpid());
	EXPECT_NE(NULL, strstr(plain, pid)) {
		TH_LOG("not our pid: %s", plain);
	}
	free(plain);
	free(checked);
}

TEST_F(ft, instance)
{
	struct user_reg reg;
	char rel[128];
	__u32 v;

	snprintf(rel, sizeof(rel), "instances/%s", INSTANCE);
	ASSERT_EQ(0, mkdir(ue_path(rel), 0755));
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "inst u32 v", &reg));
	ASSERT_EQ(0, ue_clear_trace(INSTANCE));

	/* Enabled only in the instance */
	ASSERT_EQ(0, ue_enable(INSTANCE, PREFIX "inst", true));
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->status[reg.status_index]);
	v = 42;
	ASSERT_EQ(8, ue_emit(self->fd, reg.write_index, &v, 4));

	/* Both */
	ASSERT_EQ(0, ue_enable(NULL, PREFIX "inst", true));
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->status[reg.status_index]);
	v = 43;
	ASSERT_EQ(8, ue_emit(self->fd, reg.write_index, &v, 4));

	/* Only the top level; the byte stays set */
	ASSERT_EQ(0, ue_enable(INSTANCE, PREFIX "inst", false));
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->status[reg.status_index]);
	v = 44;
	ASSERT_EQ(8, ue_emit(self->fd, reg.write_index, &v, 4));

	/* Neither */
	ASSERT_EQ(0, ue_enable(NULL, PREFIX "inst", false));
	ASSERT_EQ(0, self->status[reg.status_index]);
	v = 45;
	ASSERT_EQ(8, ue_emit(self->fd, reg.write_index, &v, 4));

	UE_ASSERT_TRACE(INSTANCE, PREFIX "inst", "v=42\nv=43\n");
	UE_ASSERT_TRACE(NULL, PREFIX "inst", "v=43\nv=44\n");

	/* Enabled in an instance counts as in use */
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, ue_enable(INSTANCE, PREFIX "inst", true));
	ASSERT_EQ(EBUSY, ue_del(PREFIX "inst"));

	/* Removing the instance detaches it */
	ASSERT_EQ(0, rmdir(ue_path(rel)));
	ASSERT_EQ(0, self->status[reg.status_index]);
	ASSERT_EQ(0, ue_del(PREFIX "inst"));
}

/* Indexes belong to the fd they were handed out on */
TEST_F(ft, indexes_per_fd)
{
	struct user_reg ra, rb, rb2;
	__u32 v;
	int fd2;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "pa u32 v", &ra));
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "pb u32 v", &rb));
	ASSERT_EQ(0, ue_enable(NULL, PREFIX "pa", true));
	ASSERT_EQ(0, ue_enable(NULL, PREFIX "pb", true));

	fd2 = ue_open_data();
	ASSERT_NE(-1, fd2);
	ASSERT_EQ(0, ue_reg(fd2, PREFIX "pb u32 v", &rb2));
	ASSERT_EQ(0, rb2.write_index);
	ASSERT_EQ(1, rb.write_index);

	v = 1;
	ASSERT_EQ(8, ue_emit(self->fd, ra.write_index, &v, 4));
	v = 2;
	ASSERT_EQ(8, ue_emit(self->fd, rb.write_index, &v, 4));
	v = 3;
	ASSERT_EQ(8, ue_emit(fd2, rb2.write_index, &v, 4));
	v = 4;
	ASSERT_EQ(-ENOENT, ue_emit(fd2, 1, &v, 4));
	close(fd2);

	UE_ASSERT_TRACE(NULL, PREFIX "pa", "v=1\n");
	UE_ASSERT_TRACE(NULL, PREFIX "pb", "v=2\nv=3\n");
}

/*
 * Deleted events kept for their records count against no limit of
 * events: with kernel.user_events_max reached by live events, not by
 * kept ones, a new event is registered; a kept event brought back is
 * live again, and counts.
 */
#define KEPT_EVENTS	3

TEST_F_TIMEOUT(ft, kept_events_count_against_no_max, 600)
{
	const char *sys_enable = "instances/" INSTANCE "/events/"
				 USER_EVENTS_SYSTEM "/enable";
	struct user_reg reg;
	int i, fd, live, id;
	char name[64];
	__u32 v;

	ASSERT_LT(0, self->max0);
	ASSERT_EQ(0, ue_instance_create(INSTANCE));
	live = ue_count_events();
	ASSERT_LE(0, live);

	fd = ue_open_data();
	ASSERT_NE(-1, fd);
	for (i = 0; i < KEPT_EVENTS; i++) {
		snprintf(name, sizeof(name), PREFIX "k%d u32 v", i);
		ASSERT_EQ(0, ue_reg(fd, name, &reg));
		ASSERT_EQ(i, reg.write_index);
	}
	id = ue_event_id(PREFIX "k1");
	ASSERT_LT(0, id);

	/* Each recorded once in the instance, then deleted: kept */
	ASSERT_EQ(0, ue_write_file(sys_enable, "1\n", O_TRUNC));
	for (v = 0; v < KEPT_EVENTS; v++)
		ASSERT_EQ(8, ue_emit(fd, v, &v, sizeof(v)));
	ASSERT_EQ(0, ue_write_file(sys_enable, "0\n", O_TRUNC));
	close(fd);
	for (i = 0; i < KEPT_EVENTS; i++) {
		snprintf(name, sizeof(name), PREFIX "k%d", i);
		ASSERT_EQ(0, ue_del(name));
	}

	/* Room for one live event: the kept ones take none of it */
	ASSERT_EQ(0, ue_set_max(live + 1));
	fd = ue_open_data();
	ASSERT_NE(-1, fd);
	EXPECT_EQ(0, ue_reg(fd, PREFIX "new u32 v", &reg));
	EXPECT_EQ(EMFILE, ue_dyn("u:" PREFIX "new2 u32 v"));
	UE_ASSERT_TRACE(INSTANCE, PREFIX "k0", "v=0\n");
	UE_ASSERT_TRACE(INSTANCE, PREFIX "k2", "v=2\n");

	/* A kept event brought back is live: it needs room too */
	EXPECT_EQ(EMFILE, ue_reg(fd, PREFIX "k1 u32 v", &reg));
	close(fd);
	ASSERT_EQ(0, ue_del(PREFIX "new"));
	EXPECT_EQ(0, ue_dyn("u:" PREFIX "k1 u32 v"));
	EXPECT_EQ(id, ue_event_id(PREFIX "k1"));
	UE_ASSERT_TRACE(INSTANCE, PREFIX "k1", "v=1\n");
}

/*
 * Enable event @name (@fields) in @instance, write @len bytes of @data
 * through a new fd, disable it again; 0 or errno (EIO: the write failed)
 */
static int kept_record(const char *instance, const char *name,
		       const char *fields, const void *data, size_t len)
{
	struct user_reg reg;
	char cmd[256];
	int fd, ret;

	snprintf(cmd, sizeof(cmd), "%s %s", name, fields);
	fd = ue_open_data();
	if (fd == -1)
		return errno;
	ret = ue_reg(fd, cmd, &reg);
	if (!ret)
		ret = ue_enable(instance, name, true);
	if (!ret && ue_emit(fd, reg.write_index, data, len) !=
	    (ssize_t)(4 + len))
		ret = EIO;
	if (!ret)
		ret = ue_enable(instance, name, false);
	close(fd);

	return ret;
}

/*
 * Make event @name ("u32 v"), write @v to it in INSTANCE and delete it:
 * kept for its record; 0 or errno
 */
static int kept_one(const char *name, __u32 v)
{
	int ret = kept_record(INSTANCE, name, "u32 v", &v, sizeof(v));

	return ret ?: ue_del(name);
}

/* A kept event's record of @v, printed as bytes, in memory order */
static const char *dropped_u32(char *buf, size_t size, __u32 v)
{
	const __u8 *b = (const __u8 *)&v;

	snprintf(buf, size, "(format dropped) %02x %02x %02x %02x\n", b[0],
		 b[1], b[2], b[3]);
	return buf;
}

/*
 * The bound of kept events, kernel.user_events_kept_max: past it the
 * oldest prints its records as bytes, and keeps its type number while
 * they may remain.  Nothing is cleared to make room, and registration
 * goes on all along.
 */
TEST_F_TIMEOUT(ft, kept_events_bound, 600)
{
	char name[64], want[32];
	int i, ret = 0;

	ASSERT_EQ(KEPT_MAX_DEFAULT, self->kept_max0);
	ASSERT_EQ(0, ue_instance_create(INSTANCE));

	/* At 0, a deleted event is kept as bytes at once, as all others */
	ASSERT_EQ(0, ue_set_sysctl(UE_KEPT_MAX_PATH, 0));
	ASSERT_EQ(0, kept_one(PREFIX "b", 1));
	UE_ASSERT_TRACE(INSTANCE, PREFIX "b",
			dropped_u32(want, sizeof(want), 0x01));

	/* At 2, the oldest of three, past the bound, without its format */
	ASSERT_EQ(0, ue_set_sysctl(UE_KEPT_MAX_PATH, 2));
	for (i = 0; !ret && i < 3; i++) {
		snprintf(name, sizeof(name), PREFIX "b%d", i);
		ret = kept_one(name, 0x2a + i);
	}
	ASSERT_EQ(0, ret);
	UE_ASSERT_TRACE(INSTANCE, PREFIX "b0",
			dropped_u32(want, sizeof(want), 0x2a));
	UE_ASSERT_TRACE(INSTANCE, PREFIX "b1", "v=43\n");
	UE_ASSERT_TRACE(INSTANCE, PREFIX "b2", "v=44\n");

	/* Many more: every record stays, the 2 newest with their format */
	for (i = 3; !ret && i < 40; i++) {
		snprintf(name, sizeof(name), PREFIX "b%d", i);
		ret = kept_one(name, i);
	}
	ASSERT_EQ(0, ret);
	UE_ASSERT_TRACE(INSTANCE, PREFIX "b",
			dropped_u32(want, sizeof(want), 0x01));
	UE_ASSERT_TRACE(INSTANCE, PREFIX "b0",
			dropped_u32(want, sizeof(want), 0x2a));
	UE_ASSERT_TRACE(INSTANCE, PREFIX "b37",
			dropped_u32(want, sizeof(want), 0x25));
	for (i = 38; i < 40; i++) {
		snprintf(name, sizeof(name), PREFIX "b%d", i);
		snprintf(want, sizeof(want), "v=%d\n", i);
		UE_ASSERT_TRACE(INSTANCE, name, want);
	}
	EXPECT_EQ(0, ue_dyn("u:" PREFIX "after u32 v"));
}

/*
 * Read every record of @cpu, or of all CPUs if @cpu is -1, from a
 * trace_pipe of INSTANCE; 0 or errno
 */
static int consume_cpu(int cpu)
{
	char rel[128];
	char *text;

	if (cpu < 0)
		snprintf(rel, sizeof(rel), "instances/%s/trace_pipe", INSTANCE);
	else
		snprintf(rel, sizeof(rel),
			 "instances/%s/per_cpu/cpu%d/trace_pipe", INSTANCE, cpu);
	text = ue_read_file_flags(rel, O_RDONLY | O_NONBLOCK);
	if (!text)
		return errno;
	free(text);

	return 0;
}

/* Record @v of event @name ("u32 v") in INSTANCE from @cpu; 0 or errno */
static int record_on(int cpu, const char *name, __u32 v)
{
	cpu_set_t old, one;
	int ret;

	if (sched_getaffinity(0, sizeof(old), &old))
		return errno;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		return errno;
	ret = kept_record(INSTANCE, name, "u32 v", &v, sizeof(v));
	sched_setaffinity(0, sizeof(old), &old);

	return ret;
}

/*
 * Is type number @id, of deleted event @name ("u32 v"), still held by the
 * kept event?  Registering @name again brings a kept event back with @id,
 * and makes a new one otherwise.  6.1 numbers new events in order, so a
 * new one does not get @id again soon; 6.12 gives it the lowest free
 * number, which may be @id: then new events of other names are made until
 * one gets @id (free) or a higher number (held).  1 or 0; -1 on errors.
 */
static int still_kept(const char *name, int id)
{
	char cmd[128];
	int now, i, n, ret = -1;

	snprintf(cmd, sizeof(cmd), "u:%s u32 v", name);
	if (ue_dyn(cmd))
		return -1;
	now = ue_event_id(name);
	snprintf(cmd, sizeof(cmd), "!u:%s", name);
	if (ue_dyn(cmd) || now < 0)
		return -1;
	if (now != id)
		return 0;

	for (n = 0; n < 64; ) {
		snprintf(cmd, sizeof(cmd), "u:%sfresh%d u32 v", name, n);
		if (ue_dyn(cmd))
			break;
		snprintf(cmd, sizeof(cmd), "%sfresh%d", name, n++);
		now = ue_event_id(cmd);
		if (now < 0)
			break;
		if (now >= id) {
			ret = now > id;
			break;
		}
	}
	for (i = 0; i < n; i++) {
		snprintf(cmd, sizeof(cmd), "!u:%sfresh%d", name, i);
		if (ue_dyn(cmd))
			ret = -1;
	}

	return ret;
}

/* The first two CPUs the test may run on, in @cpu; false if fewer */
static bool two_cpus(int cpu[2])
{
	cpu_set_t set;
	int i, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return false;
	for (i = 0; i < CPU_SETSIZE && n < 2; i++) {
		if (CPU_ISSET(i, &set))
			cpu[n++] = i;
	}
	return n == 2;
}

/*
 * The records of a deleted event are counted per CPU: its event stays
 * while another CPU's buffer is written and read, more events than were
 * ever written to the event's CPU, and goes once its own CPU's is read.
 */
TEST_F(ft, kept_per_cpu)
{
	int id, cpu[2];

	if (!two_cpus(cpu))
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, ue_instance_create(INSTANCE));

	ASSERT_EQ(0, ue_dyn("u:" PREFIX "c u32 v"));
	id = ue_event_id(PREFIX "c");
	ASSERT_LT(0, id);
	ASSERT_EQ(0, ue_dyn("u:" PREFIX "o u32 v"));
	ASSERT_EQ(0, record_on(cpu[1], PREFIX "c", 7));
	ASSERT_EQ(0, record_on(cpu[0], PREFIX "o", 8));
	ASSERT_EQ(0, ue_dyn("!u:" PREFIX "c"));
	UE_ASSERT_TRACE(INSTANCE, PREFIX "c", "v=7\n");

	/* The other CPU: written and read past the event's count */
	ASSERT_EQ(0, record_on(cpu[0], PREFIX "o", 9));
	ASSERT_EQ(0, record_on(cpu[0], PREFIX "o", 10));
	ASSERT_EQ(0, consume_cpu(cpu[0]));
	UE_ASSERT_TRACE(INSTANCE, PREFIX "o", "");
	ASSERT_EQ(1, still_kept(PREFIX "c", id));
	UE_ASSERT_TRACE(INSTANCE, PREFIX "c", "v=7\n");

	ASSERT_EQ(0, consume_cpu(cpu[1]));
	ASSERT_EQ(0, still_kept(PREFIX "c", id));
}

/*
 * A snapshot takes the records of a deleted event along: the event stays
 * while the snapshot holds them, and goes once the snapshot is cleared.
 */
TEST_F(ft, kept_in_snapshot)
{
	const char *snapshot = "instances/" INSTANCE "/snapshot";
	char *text;
	int id;

	if (access(ue_path("snapshot"), F_OK))
		SKIP(return, "no CONFIG_TRACER_SNAPSHOT");
	ASSERT_EQ(0, ue_instance_create(INSTANCE));

	ASSERT_EQ(0, ue_dyn("u:" PREFIX "s u32 v"));
	id = ue_event_id(PREFIX "s");
	ASSERT_LT(0, id);
	ASSERT_EQ(0, record_on(sched_getcpu(), PREFIX "s", 5));
	ASSERT_EQ(0, ue_dyn("!u:" PREFIX "s"));

	/* Swapped into the snapshot; the live buffer read empty */
	ASSERT_EQ(0, ue_write_file(snapshot, "1\n", O_TRUNC));
	ASSERT_EQ(0, consume_cpu(-1));
	ASSERT_EQ(1, still_kept(PREFIX "s", id));
	text = ue_read_file(snapshot);
	ASSERT_TRUE(!!text);
	EXPECT_TRUE(!!strstr(text, ": " PREFIX "s: v=5\n"));
	free(text);

	ASSERT_EQ(0, ue_write_file(snapshot, "2\n", O_TRUNC));
	ASSERT_EQ(0, still_kept(PREFIX "s", id));
}

/*
 * Records of deleted events: an event made and deleted through the
 * ioctls or through dynamic_events (one variant each), recorded at the
 * top level or in an instance.
 */
FIXTURE(kept) {
	int active0;
};

FIXTURE_VARIANT(kept) {
	bool dyn;		/* made and deleted through dynamic_events */
	bool instance;		/* recorded in INSTANCE */
};

FIXTURE_VARIANT_ADD(kept, ioctl_top_level) {
	.dyn = false, .instance = false,
};

FIXTURE_VARIANT_ADD(kept, ioctl_instance) {
	.dyn = false, .instance = true,
};

FIXTURE_VARIANT_ADD(kept, dynamic_events_top_level) {
	.dyn = true, .instance = false,
};

FIXTURE_VARIANT_ADD(kept, dynamic_events_instance) {
	.dyn = true, .instance = true,
};

FIXTURE_SETUP(kept)
{
	UE_SKIP_IF_UNAVAILABLE();

	ue_setup_clean(_metadata, INSTANCE, PREFIX, &self->active0);
	ASSERT_EQ(0, ue_ensure_top_buffer_kb(MIN_BUFFER_KB));
	ASSERT_EQ(0, ue_clear_trace(NULL));
	if (variant->instance)
		ASSERT_EQ(0, ue_instance_create(INSTANCE));
}

FIXTURE_TEARDOWN(kept)
{
	ue_instance_remove(INSTANCE);
	ue_cleanup_events(PREFIX);
	ue_clear_trace(NULL);
	ue_expect_active(_metadata, self->active0);
}

/*
 * Make event @name with @fields: in dynamic_events if @dyn, else by a
 * status page registration on an fd closed at once; 0 or errno
 */
static int kept_make(bool dyn, const char *name, const char *fields)
{
	struct user_reg reg;
	char cmd[256];
	int fd, ret;

	if (dyn) {
		snprintf(cmd, sizeof(cmd), "u:%s %s", name, fields);
		return ue_dyn(cmd);
	}
	snprintf(cmd, sizeof(cmd), "%s %s", name, fields);
	fd = ue_open_data();
	if (fd == -1)
		return errno;
	ret = ue_reg(fd, cmd, &reg);
	close(fd);

	return ret;
}

/* Delete event @name: "!u:NAME" if @dyn, else DIAG_IOCSDEL; 0 or errno */
static int kept_delete(bool dyn, const char *name)
{
	char cmd[128];

	if (!dyn)
		return ue_del(name);
	snprintf(cmd, sizeof(cmd), "!u:%s", name);

	return ue_dyn(cmd);
}

/* Deleting an event clears no buffer: its records and others' stay */
TEST_F(kept, records_stay)
{
	const char *inst = variant->instance ? INSTANCE : NULL;
	const char *name = PREFIX "gone", *other = PREFIX "stays";
	__u32 v;

	ASSERT_EQ(0, kept_make(variant->dyn, name, "u32 v"));
	ASSERT_EQ(0, kept_make(variant->dyn, other, "u32 v"));
	v = 42;
	ASSERT_EQ(0, kept_record(inst, name, "u32 v", &v, sizeof(v)));
	v = 7;
	ASSERT_EQ(0, kept_record(inst, other, "u32 v", &v, sizeof(v)));
	v = 43;
	ASSERT_EQ(0, kept_record(inst, name, "u32 v", &v, sizeof(v)));

	ASSERT_EQ(0, kept_delete(variant->dyn, name));
	ASSERT_FALSE(ue_event_exists(name));
	UE_ASSERT_TRACE(inst, name, "v=42\nv=43\n");
	UE_ASSERT_TRACE(inst, other, "v=7\n");

	/* The other one too: still nothing cleared */
	ASSERT_EQ(0, kept_delete(variant->dyn, other));
	ASSERT_FALSE(ue_event_exists(other));
	UE_ASSERT_TRACE(inst, name, "v=42\nv=43\n");
	UE_ASSERT_TRACE(inst, other, "v=7\n");
}

/* Made again with the same fields: the same type, old and new records */
TEST_F(kept, same_fields_same_type)
{
	const char *inst = variant->instance ? INSTANCE : NULL;
	const char *name = PREFIX "back", *fields = "u32 v; char[4] s";
	struct {
		__u32 v;
		char s[4];
	} rec = { 1, "abc" };
	int id;

	ASSERT_EQ(0, kept_make(variant->dyn, name, fields));
	id = ue_event_id(name);
	ASSERT_LT(0, id);
	ASSERT_EQ(0, kept_record(inst, name, fields, &rec, sizeof(rec)));
	ASSERT_EQ(0, kept_delete(variant->dyn, name));
	ASSERT_FALSE(ue_event_exists(name));

	ASSERT_EQ(0, kept_make(variant->dyn, name, fields));
	ASSERT_EQ(id, ue_event_id(name));
	rec.v = 2;
	memcpy(rec.s, "wxyz", 4);
	ASSERT_EQ(0, kept_record(inst, name, fields, &rec, sizeof(rec)));
	UE_ASSERT_TRACE(inst, name, "v=1 s=abc\nv=2 s=wxyz\n");

	ASSERT_EQ(0, kept_delete(variant->dyn, name));
	UE_ASSERT_TRACE(inst, name, "v=1 s=abc\nv=2 s=wxyz\n");
}

/*
 * Made again with other fields: another type; the old records print with
 * the old format, the new ones with the new
 */
TEST_F(kept, other_fields_other_type)
{
	const char *inst = variant->instance ? INSTANCE : NULL;
	const char *name = PREFIX "other";
	/* "u64 w; u16 x": 10 bytes, without the struct's tail padding */
	struct {
		__u64 w;
		__u16 x;
	} rec = { 2, 3 };
	__u32 v = 1;
	int id, id2;

	ASSERT_EQ(0, kept_make(variant->dyn, name, "u32 v"));
	id = ue_event_id(name);
	ASSERT_LT(0, id);
	ASSERT_EQ(0, kept_record(inst, name, "u32 v", &v, sizeof(v)));
	ASSERT_EQ(0, kept_delete(variant->dyn, name));

	ASSERT_EQ(0, kept_make(variant->dyn, name, "u64 w; u16 x"));
	id2 = ue_event_id(name);
	ASSERT_LT(0, id2);
	ASSERT_NE(id, id2);
	ASSERT_EQ(0, kept_record(inst, name, "u64 w; u16 x", &rec, 10));
	UE_ASSERT_TRACE(inst, name, "v=1\nw=2 x=3\n");

	/* Both deleted, both kept: the first fields bring the first back */
	ASSERT_EQ(0, kept_delete(variant->dyn, name));
	UE_ASSERT_TRACE(inst, name, "v=1\nw=2 x=3\n");
	ASSERT_EQ(0, kept_make(variant->dyn, name, "u32 v"));
	ASSERT_EQ(id, ue_event_id(name));
	v = 4;
	ASSERT_EQ(0, kept_record(inst, name, "u32 v", &v, sizeof(v)));
	UE_ASSERT_TRACE(inst, name, "v=1\nw=2 x=3\nv=4\n");
}

/*
 * Lines longer than a trace_seq (a page) are cut, visibly: never dropped
 * as "[LINE TOO BIG]".
 */

/*
 * Longest line the trace and trace_pipe files print, newline included:
 * what a trace_seq holds, a page on 6.1, 8 KiB on 6.12; a line that does
 * not fit is cut at least at MIN_LINE
 */
#define MAX_LINE	8191
#define MIN_LINE	4095

/* "xx xx xx" for the @len bytes at @data, appended at @out; its end */
static char *put_hex(char *out, const __u8 *data, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		out += sprintf(out, i ? " %02x" : "%02x", data[i]);

	return out;
}

/*
 * Check the line of event @name in @text (a trace or trace_pipe output):
 * there is exactly one, with no "[LINE TOO BIG]" anywhere, it is at most
 * MAX_LINE long and ends with "..." after the start of a value that was
 * cut at a byte boundary, past the first @min_len characters of @full,
 * the values it would print if they fitted.
 */
static void check_cut_line(struct __test_metadata *_metadata,
			   const char *text, const char *name,
			   const char *full, size_t min_len)
{
	char key[128];
	const char *hit, *line, *end;
	size_t keylen, len, linelen;

	EXPECT_EQ(NULL, strstr(text, "[LINE TOO BIG]"));
	snprintf(key, sizeof(key), ": %s: ", name);
	keylen = strlen(key);
	hit = strstr(text, key);
	ASSERT_NE(NULL, hit) {
		TH_LOG("no line of %s in:\n%.300s", name, text);
	}
	ASSERT_EQ(NULL, strstr(hit + 1, key));

	for (line = hit; line > text && line[-1] != '\n'; line--)
		;
	end = strchr(hit, '\n');
	ASSERT_NE(NULL, end);
	linelen = end + 1 - line;
	EXPECT_GE(MAX_LINE, linelen);
	/*
	 * Cut because the page was full, not earlier: the kernel keeps room
	 * for the widest number (21 characters) of each number field, and
	 * a cut hex array leaves at most two characters unused.
	 */
	EXPECT_LT(MIN_LINE - 64, linelen);

	hit += keylen;
	len = end - hit;
	ASSERT_LT(3, len);
	ASSERT_EQ(0, strncmp(end - 3, "...", 3)) {
		TH_LOG("line does not end with \"...\": %.*s", (int)len, hit);
	}
	len -= 3;
	ASSERT_LE(min_len, len);
	ASSERT_GT(strlen(full), len);
	ASSERT_EQ(0, strncmp(full, hit, len)) {
		TH_LOG("line differs from the values written");
	}
	/* Whole bytes only: "... 4f..." */
	ASSERT_EQ(' ', full[len]);
}

/* All of trace_pipe that can be read without waiting, consumed */
static char *read_trace_pipe(void)
{
	return ue_read_file_flags("trace_pipe", O_RDONLY | O_NONBLOCK);
}

/* Check the line of @name in the trace file, then in trace_pipe */
static void check_cut_outputs(struct __test_metadata *_metadata,
			      const char *name, const char *full,
			      size_t min_len)
{
	char *text = ue_read_file("trace");

	ASSERT_NE(NULL, text);
	check_cut_line(_metadata, text, name, full, min_len);
	free(text);

	text = read_trace_pipe();
	ASSERT_NE(NULL, text);
	check_cut_line(_metadata, text, name, full, min_len);
	free(text);
}

/* A binary __data_loc array of 3000 bytes: 9000 characters of hex */
TEST_F(ft, long_binary_line)
{
	const size_t n = 3000;
	struct ue_payload p = { 0 };
	char *full, *end;
	__u8 data[3000];
	__u32 idx;
	size_t i;

	idx = reg_enabled(_metadata, self->fd, self->status,
			  PREFIX "long u32 a; __data_loc unsigned char[] d; "
			  "u32 z", PREFIX "long");

	/* A dynamic char array ends with a NUL, even an unsigned one */
	for (i = 0; i < n; i++)
		data[i] = i < n - 1 ? i * 7 + 1 : 0;
	UE_PUT(&p, __u32, 5);
	UE_PUT(&p, __u32, DYN_LOC(UE_COMMON_SIZE + 12, n));
	UE_PUT(&p, __u32, 6);
	ue_put(&p, data, n);
	ASSERT_EQ(4 + p.len, ue_emit(self->fd, idx, p.data, p.len));

	full = malloc(3 * n + 64);
	ASSERT_NE(NULL, full);
	end = full + sprintf(full, "a=5 d=");
	end = put_hex(end, data, n);
	sprintf(end, " z=6");
	/* At least "a=5 d=" and one byte */
	check_cut_outputs(_metadata, PREFIX "long", full, 8);
	free(full);
}

/*
 * Three 1 KB structs: the first fits in a line, and the line is cut in the
 * second (a trace_seq of a page) or the third (8 KiB)
 */
TEST_F(ft, long_struct_line)
{
	const size_t n = 1024;
	struct ue_payload p = { 0 };
	__u8 blob[3][1024];
	char *full, *end;
	size_t i, b, min = 0;
	__u32 idx;

	idx = reg_enabled(_metadata, self->fd, self->status,
			  PREFIX "blobs struct blob x 1024; struct blob y 1024; "
			  "struct blob w 1024", PREFIX "blobs");

	/* Opaque bytes: no NUL needed */
	for (b = 0; b < 3; b++) {
		for (i = 0; i < n; i++)
			blob[b][i] = i * (b + 3) + 1;
		ue_put(&p, blob[b], n);
	}
	ASSERT_EQ(4 + p.len, ue_emit(self->fd, idx, p.data, p.len));

	full = malloc(3 * 3 * n + 64);
	ASSERT_NE(NULL, full);
	end = full;
	for (b = 0; b < 3; b++) {
		end += sprintf(end, "%s%c=", b ? " " : "", "xyw"[b]);
		/* All of x, and at least one byte of y */
		if (b == 1)
			min = end - full + 2;
		end = put_hex(end, blob[b], n);
	}
	check_cut_outputs(_metadata, PREFIX "blobs", full, min);
	free(full);
}

/*
 * tp_printk: with kernel.tracepoint_printk set (the kernel was booted with
 * tp_printk), every event recorded is also printed to the kernel log, by
 * the event's own output function, at commit time.
 */
#define TP_PRINTK	"/proc/sys/kernel/tracepoint_printk"

FIXTURE(printk) {
	int fd;
	int kmsg;
	int saved;	/* kernel.tracepoint_printk before the test, or -1 */
};

/* The value of sysctl file @path, or -1 */
static int read_sysctl(const char *path)
{
	char text[32] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd == -1)
		return -1;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);

	return n > 0 ? atoi(text) : -1;
}

/* Set sysctl file @path to @val; 0 or an errno */
static int write_sysctl(const char *path, int val)
{
	char text[32];

	snprintf(text, sizeof(text), "%d\n", val);

	return ue_write_path(path, text, strlen(text), 0);
}

FIXTURE_SETUP(printk)
{
	self->saved = -1;
	self->kmsg = -1;
	UE_SKIP_IF_UNAVAILABLE();
	ue_cleanup_events(PREFIX);

	self->fd = ue_open_data();
	ASSERT_NE(-1, self->fd);
	ASSERT_EQ(0, ue_clear_trace(NULL));
	/* From the end: only what the test makes the kernel print */
	self->kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_NE(-1, self->kmsg);
	ASSERT_LE(0, lseek(self->kmsg, 0, SEEK_END));
}

FIXTURE_TEARDOWN(printk)
{
	/* Off again first: nothing else is to be printed */
	if (self->saved != -1)
		write_sysctl(TP_PRINTK, self->saved);
	if (self->kmsg != -1)
		close(self->kmsg);
	if (self->fd != -1)
		close(self->fd);
	ue_cleanup_events(PREFIX);
	ue_clear_trace(NULL);
}

/*
 * The text of the next kernel log message that starts with @start,
 * read from @kmsg without waiting; NULL when there is none.
 */
static char *next_kmsg(int kmsg, const char *start)
{
	char rec[8192], *text, *eol;
	ssize_t n;

	for (;;) {
		n = read(kmsg, rec, sizeof(rec) - 1);
		if (n == -1 && errno == EPIPE)
			continue;	/* overwritten: go on with the next */
		if (n <= 0)
			return NULL;
		rec[n] = '\0';
		/* "level,seq,time,flags;text\n", then " KEY=value" lines */
		text = strchr(rec, ';');
		if (!text || strncmp(++text, start, strlen(start)))
			continue;
		eol = strchr(text, '\n');
		if (eol)
			*eol = '\0';
		return strdup(text);
	}
}

TEST_F(printk, dynamic_fields)
{
	/*
	 * Payload: a at 0, the locations of s, r, d and b at 4, 8, 12
	 * and 16, c at 20; then the bytes of s at 26, r at 32, d at 38
	 * and b at 41.  __rel_loc offsets count from the field's end.
	 */
#define TPP_VALUES "a=7 s=hello r=world d=ca fe 00 b=01 02 00 c=fixed"
	const __u8 d[3] = { 0xca, 0xfe, 0x00 }, b[3] = { 0x01, 0x02, 0x00 };
	struct ue_payload p = { 0 };
	char c[6] = "fixed", *line;
	struct user_reg reg;

	self->saved = read_sysctl(TP_PRINTK);
	if (self->saved == -1 || write_sysctl(TP_PRINTK, 1) ||
	    read_sysctl(TP_PRINTK) != 1)
		SKIP(return, "cannot set %s (kernel booted without tp_printk?)",
		     TP_PRINTK);

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "tpp u32 a; __data_loc char[] s; "
			    "__rel_loc char[] r; "
			    "__data_loc unsigned char[] d; "
			    "__rel_loc unsigned char[] b; char[6] c", &reg));
	UE_PUT(&p, __u32, 7);
	UE_PUT(&p, __u32, DYN_LOC(UE_COMMON_SIZE + 26, 6));
	UE_PUT(&p, __u32, DYN_LOC(32 - 12, 6));
	UE_PUT(&p, __u32, DYN_LOC(UE_COMMON_SIZE + 38, 3));
	UE_PUT(&p, __u32, DYN_LOC(41 - 20, 3));
	ue_put(&p, c, sizeof(c));
	ue_put(&p, "hello", 6);
	ue_put(&p, "world", 6);
	ue_put(&p, d, sizeof(d));
	ue_put(&p, b, sizeof(b));
	ASSERT_EQ(44, p.len);

	ASSERT_EQ(0, ue_enable(NULL, PREFIX "tpp", true));
	ASSERT_EQ(4 + p.len, ue_emit(self->fd, reg.write_index, p.data,
				     p.len));
	ASSERT_EQ(0, ue_enable(NULL, PREFIX "tpp", false));
	ASSERT_EQ(0, write_sysctl(TP_PRINTK, self->saved));
	self->saved = -1;

	/* The same values in the kernel log as in the trace buffer */
	line = next_kmsg(self->kmsg, PREFIX "tpp: ");
	ASSERT_NE(NULL, line) {
		TH_LOG("no \"%stpp: \" line in /dev/kmsg", PREFIX);
	}
	EXPECT_STREQ(PREFIX "tpp: " TPP_VALUES, line);
	free(line);
	line = next_kmsg(self->kmsg, PREFIX "tpp: ");
	EXPECT_EQ(NULL, line) {
		TH_LOG("printed twice: %s", line);
	}
	free(line);

	UE_ASSERT_TRACE(NULL, PREFIX "tpp", TPP_VALUES "\n");
#undef TPP_VALUES
}

TEST_HARNESS_MAIN
