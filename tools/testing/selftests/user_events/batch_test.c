// SPDX-License-Identifier: GPL-2.0
/*
 * Batched writes: a write() or writev() whose first four bytes are
 * USER_EVENT_BATCH carries records, each a struct user_batch_record and
 * its payload, back to back.  What a program relies on, read back from
 * the tracers:
 *
 * - each record is its own ftrace record (one line each, in batch
 *   order, the written values, time stamps never going back and, with
 *   the counter clock, one per record), at the top level and in an
 *   instance; its own perf sample (the raw data is the payload, in
 *   order, time stamps never going back); its own run of an eBPF
 *   program, which sees each record's values in order;
 * - the marker alone is an empty batch and returns 4;
 * - records straddle iovecs anyhow: the marker, headers and payloads
 *   split at every place, down to one byte per iovec;
 * - the first record a single write would refuse ends the batch: the
 *   call returns its errno when it is the first record, else the bytes
 *   of the marker and of the records before it, and exactly those
 *   records are recorded; for every refusal (unknown and negative
 *   indexes, payloads shorter than the fields, bad __data_loc and
 *   __rel_loc, strings without their NUL, too large a payload, a header
 *   or payload cut short by the end of the write, memory that cannot be
 *   read) at the first, a middle and the last record, through write()
 *   and writev();
 * - 65536 bytes, marker included, is the largest batch: one more byte
 *   is E2BIG, with nothing recorded;
 * - records of status page and enable bit registrations mix in one
 *   batch; a record of an event with nothing attached is skipped,
 *   without EBADF for either ABI, and counted in the bytes returned;
 * - payloads on pages that are not present (MADV_DONTNEED) are faulted
 *   in and recorded once.
 *
 * fuzz_test has random batches checked against a model of these rules.
 */
#define _GNU_SOURCE		/* sched_getcpu(), CPU_SET(), memfd_create() */
#define USER_EVENTS_ENABLE_BIT_ABI
#include <ctype.h>
#include <sched.h>
#include <stddef.h>

#include "user_events_selftests.h"

#define PREFIX		"ue_bt_"
#define INSTANCE	PREFIX "inst"
/* Room in the top-level buffer for the records of the largest batch */
#define MIN_BUFFER_KB	256
#define RING_PAGES	16	/* perf ring buffer data pages */
/* Records of one batch the tests keep track of */
#define MAX_RECS	64
/* iovecs of one writev(): IOV_MAX */
#define MAX_SEGS	1024
/* The largest batch the tests write: twice the limit, and some */
#define BUF_SIZE	(2 * USER_EVENT_BATCH_MAX + 64)
#define HDR_SIZE	sizeof(struct user_batch_record)

/* The events of the tests, registered on one fd in this order */
enum {
	EV_A,	/* status page, u32 */
	EV_S,	/* status page, u32 and a __data_loc string */
	EV_R,	/* status page, u32 and a __rel_loc string */
	EV_D,	/* status page, u32, never enabled */
	EV_B,	/* enable bit, u32 */
	EV_E,	/* enable bit, u32, never enabled */
	NR_EVENTS
};

static const struct {
	const char *name;
	const char *cmd;
	bool bit;
} events[NR_EVENTS] = {
	[EV_A] = { PREFIX "a", PREFIX "a u32 v", false },
	[EV_S] = { PREFIX "s", PREFIX "s u32 n; __data_loc char[] msg", false },
	[EV_R] = { PREFIX "r", PREFIX "r u32 n; __rel_loc char[] msg", false },
	[EV_D] = { PREFIX "d", PREFIX "d u32 v", false },
	[EV_B] = { PREFIX "b", PREFIX "b u32 v", true },
	[EV_E] = { PREFIX "e", PREFIX "e u32 v", true },
};

/* The enable bits of EV_B and EV_E: bit EV_x of this word */
static __u32 enable_word;

/* What every fixture has: the events, their write indexes and tracers */
struct events {
	int fd;
	int status_fd;
	__u8 *status;
	__u32 idx[NR_EVENTS];
	__u32 status_index[NR_EVENTS];	/* of the status page events */
	int nbits;			/* enable bits registered */
	struct ue_perf_ring ring[NR_EVENTS];
	int active0;
};

static void events_setup(struct __test_metadata *_metadata, struct events *ev)
{
	struct ue_status_reg reg;
	int i;

	ev->fd = -1;
	ev->status_fd = -1;
	ev->status = MAP_FAILED;
	ev->nbits = 0;
	for (i = 0; i < NR_EVENTS; i++)
		ev->ring[i].fd = -1;
	UE_SKIP_IF_UNAVAILABLE();

	ue_setup_clean(_metadata, INSTANCE, PREFIX, &ev->active0);
	ASSERT_EQ(0, ue_ensure_top_buffer_kb(MIN_BUFFER_KB));
	ASSERT_EQ(0, ue_clear_trace(NULL));
	ev->fd = ue_open_data();
	ASSERT_NE(-1, ev->fd);
	ASSERT_EQ(0, ue_open_status_page(&ev->status_fd, &ev->status));

	enable_word = 0;
	for (i = 0; i < NR_EVENTS; i++) {
		if (events[i].bit) {
			ASSERT_EQ(0, ue_reg_bit(ev->fd, events[i].cmd,
						&enable_word, 4, i, 0,
						&ev->idx[i]));
			ev->nbits = i + 1;
		} else {
			ASSERT_EQ(0, ue_reg(ev->fd, events[i].cmd, &reg));
			ev->idx[i] = reg.write_index;
			ev->status_index[i] = reg.status_index;
		}
		/* The slots of one fd, in registration order */
		ASSERT_EQ(i, ev->idx[i]);
	}
	ASSERT_EQ(0, enable_word);
}

static void events_teardown(struct __test_metadata *_metadata,
			    struct events *ev)
{
	int i;

	for (i = 0; i < NR_EVENTS; i++)
		ue_perf_ring_close(&ev->ring[i]);
	/* The enable bits belong to the address space, not to the fd */
	for (i = 0; ev->fd != -1 && i < ev->nbits; i++) {
		if (events[i].bit)
			ue_unreg_bit(ev->fd, &enable_word, i);
	}
	if (ev->fd != -1)
		close(ev->fd);
	ue_close_status_page(ev->status_fd, ev->status);
	ue_instance_remove(INSTANCE);
	ue_cleanup_events(PREFIX);
	ue_clear_trace(NULL);
	ue_expect_active(_metadata, ev->active0);
}

/* Enable event @e for ftrace (top level when !instance) */
static int enable(const char *instance, int e, bool on)
{
	return ue_enable(instance, events[e].name, on);
}

/* Keep the test on the CPU it runs on: one clock for all its records */
static int pin_cpu(void)
{
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET(sched_getcpu(), &cpus);

	return sched_setaffinity(0, sizeof(cpus), &cpus);
}

/*
 * A batch being put together, and what each of its records should leave
 * in a trace: the line, without its time stamp, that the record makes
 * if the kernel emits it.
 */
struct batch {
	__u8 *buf;
	size_t len;
	int nrec;
	struct {
		size_t end;		/* bytes of the batch up to its end */
		size_t payload;		/* where its payload starts */
		__u32 size;		/* of the payload */
		int ev;			/* EV_x, or -1 */
		size_t want_end;	/* in want, after its line if any */
	} rec[MAX_RECS];
	char want[MAX_RECS * 96];
	size_t want_len;
	/* iovec i starts at cut[i] (cut[0] is 0); hole[i]: unreadable */
	size_t cut[MAX_SEGS];
	bool hole[MAX_SEGS];
	int nseg;
};

static struct batch *batch_new(void)
{
	struct batch *b = calloc(1, sizeof(*b));

	if (b)
		b->buf = malloc(BUF_SIZE);
	if (b && !b->buf) {
		free(b);
		b = NULL;
	}

	return b;
}

static void batch_free(struct batch *b)
{
	if (b)
		free(b->buf);
	free(b);
}

/* Start batch @b: the marker, in the first iovec */
static void batch_start(struct batch *b)
{
	__u32 marker = USER_EVENT_BATCH;

	memcpy(b->buf, &marker, sizeof(marker));
	b->len = sizeof(marker);
	b->nrec = 0;
	b->want_len = 0;
	b->want[0] = '\0';
	b->nseg = 1;
	b->cut[0] = 0;
	b->hole[0] = false;
}

/* Put @len bytes of @data at the end of @b; NULL @data: zeros */
static void batch_put(struct batch *b, const void *data, size_t len)
{
	if (b->len + len > BUF_SIZE)
		len = BUF_SIZE - b->len;
	if (data)
		memcpy(b->buf + b->len, data, len);
	else
		memset(b->buf + b->len, 0, len);
	b->len += len;
}

/* The next bytes of @b go in an iovec of their own; unreadable if @hole */
static void batch_cut(struct batch *b, bool hole)
{
	if (b->cut[b->nseg - 1] == b->len) {
		b->hole[b->nseg - 1] = hole;
		return;
	}
	if (b->nseg == MAX_SEGS)
		return;
	b->cut[b->nseg] = b->len;
	b->hole[b->nseg] = hole;
	b->nseg++;
}

/* A record header, the record's payload to follow; the record's number */
static int batch_header(struct batch *b, __u32 idx, __u32 size, int ev)
{
	struct user_batch_record hdr = { .write_index = idx, .size = size };
	int n = b->nrec;

	batch_put(b, &hdr, sizeof(hdr));
	if (n < MAX_RECS) {
		b->rec[n].payload = b->len;
		b->rec[n].size = size;
		b->rec[n].ev = ev;
		b->rec[n].end = b->len + size;
		b->rec[n].want_end = b->want_len;
		b->nrec++;
	}

	return n;
}

/* A whole record of event @ev (-1: none) through index @idx */
static int batch_rec(struct batch *b, __u32 idx, int ev, const void *payload,
		     __u32 size)
{
	int n = batch_header(b, idx, size, ev);

	batch_put(b, payload, size);

	return n;
}

/* The last record of @b leaves this line (printf() format) in a trace */
static void batch_expect(struct batch *b, const char *fmt, ...)
{
	size_t room = sizeof(b->want) - b->want_len;
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(b->want + b->want_len, room, fmt, ap);
	va_end(ap);
	if (len > 0 && (size_t)len < room)
		b->want_len += len;
	if (b->nrec)
		b->rec[b->nrec - 1].want_end = b->want_len;
}

/*
 * A record of u32 event @e of @ev, value @v, through its index; recorded
 * unless @skipped (its event has nothing attached)
 */
static int batch_u32(struct batch *b, const struct events *ev, int e,
		     __u32 v, bool skipped)
{
	int n = batch_rec(b, ev->idx[e], e, &v, sizeof(v));

	if (!skipped)
		batch_expect(b, "%s: v=%u\n", events[e].name, v);

	return n;
}

/*
 * A record of EV_S or EV_R: @num, then the location word of @msg, then
 * @msg with its NUL
 */
static int batch_str(struct batch *b, const struct events *ev, int e,
		     __u32 num, const char *msg)
{
	struct ue_payload p = { 0 };
	__u32 len = strlen(msg) + 1;
	int n;

	UE_PUT(&p, __u32, num);
	/* __data_loc from the start of the record, __rel_loc from its end */
	if (e == EV_S)
		UE_PUT(&p, __u32, DYN_LOC(UE_COMMON_SIZE + 8, len));
	else
		UE_PUT(&p, __u32, DYN_LOC(0, len));
	ue_put(&p, msg, len);
	n = batch_rec(b, ev->idx[e], e, p.data, p.len);
	batch_expect(b, "%s: n=%u msg=%s\n", events[e].name, num, msg);

	return n;
}

/* The bytes of @b up to the end of its record @n (the marker if n < 0) */
static size_t batch_end(const struct batch *b, int n)
{
	return n < 0 ? sizeof(__u32) : b->rec[n].end;
}

/* The lines the first @n records of @b leave, in a static buffer */
static const char *batch_want(const struct batch *b, int n)
{
	static char text[sizeof(b->want)];
	size_t len = n > 0 ? b->rec[n - 1].want_end : 0;

	memcpy(text, b->want, len);
	text[len] = '\0';

	return text;
}

/* write() of the whole batch: its result, or -errno */
static ssize_t batch_write(int fd, const struct batch *b)
{
	ssize_t ret = write(fd, b->buf, b->len);

	return ret == -1 ? -errno : ret;
}

/*
 * writev() of the batch in its iovecs, from a copy of it at @base (NULL:
 * b->buf), those that are holes pointing to @unreadable: its result, or
 * -errno
 */
static ssize_t batch_writev_from(int fd, const struct batch *b, __u8 *base,
				 void *unreadable)
{
	static struct iovec io[MAX_SEGS];
	size_t end;
	ssize_t ret;
	int i;

	if (!base)
		base = b->buf;
	for (i = 0; i < b->nseg; i++) {
		end = i + 1 < b->nseg ? b->cut[i + 1] : b->len;
		io[i].iov_base = b->hole[i] ? unreadable : base + b->cut[i];
		io[i].iov_len = end - b->cut[i];
	}
	ret = writev(fd, io, b->nseg);

	return ret == -1 ? -errno : ret;
}

/* writev() of the batch in its iovecs, none of them a hole */
static ssize_t batch_writev(int fd, const struct batch *b)
{
	return batch_writev_from(fd, b, NULL, NULL);
}

/* The records of this test left in a trace, in order */
struct seen {
	char *text;		/* "NAME: fields\n" for each */
	int n;
	__u64 ts[MAX_RECS];	/* their time stamps, in ns or clock counts */
};

/* The time stamp in front of ": NAME:" at @hit of a trace line */
static __u64 line_ts(const char *line, const char *hit)
{
	const char *p = hit;
	__u64 whole, frac = 0;
	int digits = 0;
	char *end;

	while (p > line && p[-1] != ' ')
		p--;
	whole = strtoull(p, &end, 10);
	if (*end != '.')
		return whole;
	/* seconds.microseconds for clocks in ns */
	for (p = end + 1; isdigit(*p); p++) {
		if (digits < 9) {
			frac = frac * 10 + (*p - '0');
			digits++;
		}
	}
	for (; digits < 9; digits++)
		frac *= 10;

	return whole * 1000000000ULL + frac;
}

/*
 * Collect into @s the records of events PREFIX* in the trace of
 * @instance (or the top level); 0 or errno
 */
static int collect(const char *instance, struct seen *s)
{
	char rel[256], *trace, *line, *next, *hit;
	size_t len = 0;

	if (instance)
		snprintf(rel, sizeof(rel), "instances/%s/trace", instance);
	else
		snprintf(rel, sizeof(rel), "trace");
	trace = ue_read_file(rel);
	if (!trace)
		return errno;
	s->n = 0;
	s->text = calloc(1, strlen(trace) + 1);
	if (!s->text) {
		free(trace);
		errno = ENOMEM;
		return errno;
	}
	for (line = trace; *line; line = next) {
		next = strchrnul(line, '\n');
		if (*next)
			*next++ = '\0';
		if (line[0] == '#')
			continue;
		hit = strstr(line, ": " PREFIX);
		if (!hit)
			continue;
		if (s->n < MAX_RECS)
			s->ts[s->n] = line_ts(line, hit);
		s->n++;
		len += sprintf(s->text + len, "%s\n", hit + 2);
	}
	free(trace);

	return 0;
}

/* The trace of @instance has exactly the lines @want, in that order */
#define ASSERT_RECORDS(instance, want) do {				\
	struct seen __s;						\
									\
	ASSERT_EQ(0, collect(instance, &__s));				\
	ASSERT_STREQ(want, __s.text);					\
	free(__s.text);							\
} while (0)

/*
 * The trace of @instance has the @n records of @b, in order, with time
 * stamps that never go back (or, if @strictly, always go forward); the
 * trace is cleared afterwards
 */
static void check_batch(struct __test_metadata *_metadata, const char *instance,
			const struct batch *b, int n, bool strictly)
{
	struct seen s;
	int i;

	ASSERT_EQ(0, collect(instance, &s));
	ASSERT_STREQ(batch_want(b, n), s.text);
	free(s.text);
	for (i = 1; i < s.n && i < MAX_RECS; i++) {
		/* The counter clock counts each record */
		ASSERT_LE(s.ts[i - 1] + strictly, s.ts[i]) {
			TH_LOG("records %d and %d: %llu, %llu", i - 1, i,
			       (unsigned long long)s.ts[i - 1],
			       (unsigned long long)s.ts[i]);
		}
	}
	ASSERT_EQ(0, ue_clear_trace(instance));
}

FIXTURE(batch) {
	struct events ev;
	struct batch *b;
};

FIXTURE_SETUP(batch)
{
	self->b = NULL;
	events_setup(_metadata, &self->ev);
	self->b = batch_new();
	ASSERT_TRUE(!!self->b);
}

FIXTURE_TEARDOWN(batch)
{
	batch_free(self->b);
	events_teardown(_metadata, &self->ev);
}

/*
 * The marker alone is an empty batch: 4, however it is written, and
 * nothing recorded (the marker is not an index)
 */
TEST_F(batch, empty_batch_returns_4)
{
	__u32 marker = USER_EVENT_BATCH;
	__u8 bytes[4];
	struct iovec io[4];

	ASSERT_EQ(0, enable(NULL, EV_A, true));
	ASSERT_EQ(4, write(self->ev.fd, &marker, sizeof(marker)));

	io[0].iov_base = &marker;
	io[0].iov_len = sizeof(marker);
	ASSERT_EQ(4, writev(self->ev.fd, io, 1));

	/* Split 1 + 3 and 2 + 0 + 2 */
	memcpy(bytes, &marker, sizeof(marker));
	io[0].iov_base = bytes;
	io[0].iov_len = 1;
	io[1].iov_base = bytes + 1;
	io[1].iov_len = 3;
	ASSERT_EQ(4, writev(self->ev.fd, io, 2));
	io[0].iov_len = 2;
	io[1].iov_base = bytes + 2;
	io[1].iov_len = 0;
	io[2].iov_base = bytes + 2;
	io[2].iov_len = 2;
	ASSERT_EQ(4, writev(self->ev.fd, io, 3));

	/* Three bytes of it are no batch, and no write */
	ASSERT_EQ(-1, write(self->ev.fd, &marker, 3));
	ASSERT_EQ(EINVAL, errno);

	ASSERT_RECORDS(NULL, "");
}

/*
 * Records of three events, each recorded in batch order with its values,
 * one line per record, the time stamps never going back; through write()
 * and writev(), for batches small enough to be copied at once and larger
 */
TEST_F(batch, records_in_order)
{
	struct batch *b = self->b;
	static const char * const words[] = {
		"one", "two", "three", "four", "five", "six", "seven",
	};
	int round, i, count;
	ssize_t ret;

	ASSERT_EQ(0, pin_cpu());
	for (i = EV_A; i <= EV_R; i++)
		ASSERT_EQ(0, enable(NULL, i, true));

	for (round = 0; round < 4; round++) {
		/* Rounds 0 and 1: at most 128 bytes; 2 and 3: more */
		count = round < 2 ? 2 : 7;
		batch_start(b);
		for (i = 0; i < count; i++) {
			batch_u32(b, &self->ev, EV_A, round * 100 + i, false);
			batch_str(b, &self->ev, i & 1 ? EV_R : EV_S,
				  round * 100 + 50 + i, words[i]);
			/* Straddling iovecs as it goes */
			batch_cut(b, false);
		}
		batch_u32(b, &self->ev, EV_A, 0xffffffff, false);
		/* The kernel copies writes of up to 128 bytes at once */
		ASSERT_EQ(round < 2, b->len <= 128);
		if (round & 1)
			ret = batch_writev(self->ev.fd, b);
		else
			ret = batch_write(self->ev.fd, b);
		ASSERT_EQ(b->len, ret);
		check_batch(_metadata, NULL, b, b->nrec, false);
	}
}

/*
 * A trace instance gets the records too, only it: with the counter clock
 * each record has a time stamp of its own.  Enabled in both, each buffer
 * gets every record.
 */
TEST_F(batch, trace_instance)
{
	const char *clock = "instances/" INSTANCE "/trace_clock";
	struct batch *b = self->b;
	int i;

	ASSERT_EQ(0, ue_instance_create(INSTANCE));
	ASSERT_EQ(0, ue_write_file(clock, "counter\n", O_TRUNC));
	for (i = EV_A; i <= EV_R; i++)
		ASSERT_EQ(0, enable(INSTANCE, i, true));

	batch_start(b);
	for (i = 0; i < 6; i++) {
		batch_str(b, &self->ev, EV_R, i, "in");
		batch_u32(b, &self->ev, EV_A, 1000 + i, false);
		batch_str(b, &self->ev, EV_S, 2000 + i, "stance");
	}
	ASSERT_EQ(b->len, batch_write(self->ev.fd, b));
	check_batch(_metadata, INSTANCE, b, b->nrec, true);
	ASSERT_RECORDS(NULL, "");

	/* And the top level as well */
	ASSERT_EQ(0, pin_cpu());
	for (i = EV_A; i <= EV_R; i++)
		ASSERT_EQ(0, enable(NULL, i, true));
	ASSERT_EQ(b->len, batch_writev(self->ev.fd, b));
	check_batch(_metadata, INSTANCE, b, b->nrec, true);
	check_batch(_metadata, NULL, b, b->nrec, false);
}

/*
 * perf: a sample per record, its raw data the record (the event's type,
 * the writer's pid, then exactly the payload), in batch order across two
 * events, the time stamps never going back; a refused record makes no
 * sample, nor do those after it
 */
TEST_F(batch, perf_samples)
{
	static __u8 raw[UE_COMMON_SIZE + 256];
	const int evs[2] = { EV_A, EV_S };
	struct batch *b = self->b;
	int id[2], next[2] = { 0, 0 };
	__u64 time, last = 0;
	int i, k, size, bad;
	__u32 v;
	__u16 type;
	__s32 pid;

	ASSERT_EQ(0, pin_cpu());
	for (k = 0; k < 2; k++) {
		id[k] = ue_event_id(events[evs[k]].name);
		ASSERT_LT(0, id[k]);
		ASSERT_EQ(0, ue_perf_ring_open_sampling(&self->ev.ring[k],
							id[k], RING_PAGES,
							true));
		ASSERT_EQ(EVENT_STATUS_PERF,
			  self->ev.status[self->ev.status_index[evs[k]]]);
	}

	batch_start(b);
	for (i = 0; i < 10; i++) {
		if (i % 3)
			batch_u32(b, &self->ev, EV_A, 0xabc00000 + i, false);
		else
			batch_str(b, &self->ev, EV_S, i, "perf sample");
	}
	ASSERT_EQ(b->len, batch_write(self->ev.fd, b));

	for (i = 0; i < b->nrec; i++) {
		k = b->rec[i].ev == EV_A ? 0 : 1;
		size = ue_perf_sample(&self->ev.ring[k], next[k]++, &time,
				      raw, sizeof(raw));
		ASSERT_LE(UE_COMMON_SIZE + (int)b->rec[i].size, size) {
			TH_LOG("record %d: sample of %d bytes", i, size);
		}
		memcpy(&type, raw, sizeof(type));
		memcpy(&pid, raw + 4, sizeof(pid));
		EXPECT_EQ(id[k], type);
		EXPECT_EQ(getpid(), pid);
		EXPECT_EQ(0, memcmp(raw + UE_COMMON_SIZE,
				    b->buf + b->rec[i].payload,
				    b->rec[i].size)) {
			TH_LOG("record %d: the sample is not its payload", i);
		}
		EXPECT_LE(last, time) {
			TH_LOG("record %d: sampled before record %d", i, i - 1);
		}
		last = time;
	}
	/* Nothing more */
	for (k = 0; k < 2; k++)
		ASSERT_EQ(-1, ue_perf_sample(&self->ev.ring[k], next[k],
					     &time, raw, sizeof(raw)));

	/* A, S, then an unknown index: A and S sampled, nothing after */
	batch_start(b);
	batch_u32(b, &self->ev, EV_A, 77, false);
	batch_str(b, &self->ev, EV_S, 78, "before");
	v = 79;
	bad = batch_rec(b, 999, -1, &v, sizeof(v));
	batch_u32(b, &self->ev, EV_A, 80, true);
	ASSERT_EQ(batch_end(b, bad - 1), batch_write(self->ev.fd, b));
	ASSERT_LE(UE_COMMON_SIZE + 4,
		  ue_perf_sample(&self->ev.ring[0], next[0]++, &time, raw,
				 sizeof(raw)));
	memcpy(&v, raw + UE_COMMON_SIZE, sizeof(v));
	ASSERT_EQ(77, v);
	ASSERT_LE(UE_COMMON_SIZE + 8,
		  ue_perf_sample(&self->ev.ring[1], next[1]++, &time, raw,
				 sizeof(raw)));
	memcpy(&v, raw + UE_COMMON_SIZE, sizeof(v));
	ASSERT_EQ(78, v);
	for (k = 0; k < 2; k++)
		ASSERT_EQ(-1, ue_perf_sample(&self->ev.ring[k], next[k],
					     &time, raw, sizeof(raw)));
}

/*
 * eBPF: a tracepoint program, attached through the perf event of EV_A,
 * that keeps the field of each record it runs on: slot 0 of its array map
 * counts its runs, slot 1 + n holds the value of run n.
 */
#define BPF_SLOTS	17

static int bpf_prog_keep_values(int map_fd, char *log, size_t log_size)
{
	struct bpf_insn insns[32], *p = insns;

	/* r6 = the u32 field, right after the common fields */
	*p++ = UE_BPF_INSN(BPF_LDX | BPF_MEM | BPF_W, 6, 1, UE_COMMON_SIZE, 0);
	/* r0 = &slot[0], or out */
	*p++ = UE_BPF_INSN(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0);
	p = ue_bpf_map_lookup(p, map_fd, -4);
	*p++ = UE_BPF_INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 13, 0);
	/* r7 = slot[0]++ */
	*p++ = UE_BPF_INSN(BPF_LDX | BPF_MEM | BPF_DW, 7, 0, 0, 0);
	*p++ = UE_BPF_INSN(BPF_ALU64 | BPF_MOV | BPF_X, 1, 7, 0, 0);
	*p++ = UE_BPF_INSN(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, 1);
	*p++ = UE_BPF_INSN(BPF_STX | BPF_MEM | BPF_DW, 0, 1, 0, 0);
	/* r0 = &slot[1 + r7], or out */
	*p++ = UE_BPF_INSN(BPF_ALU64 | BPF_ADD | BPF_K, 7, 0, 0, 1);
	*p++ = UE_BPF_INSN(BPF_STX | BPF_MEM | BPF_W, 10, 7, -8, 0);
	p = ue_bpf_map_lookup(p, map_fd, -8);
	*p++ = UE_BPF_INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1, 0);
	/* *r0 = r6 */
	*p++ = UE_BPF_INSN(BPF_STX | BPF_MEM | BPF_DW, 0, 6, 0, 0);
	/* out: return 0 */
	*p++ = UE_BPF_INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
	*p++ = UE_BPF_INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);

	return ue_bpf_tp_load(insns, p - insns, log, log_size);
}

/* Slot @key of the map, ~0 if it cannot be read */
static __u64 bpf_slot(int map_fd, __u32 key)
{
	__u64 value = ~0ULL;

	ue_bpf_array_read(map_fd, key, &value);

	return value;
}

/*
 * eBPF runs once per record, on each record's own values, in order;
 * not on a skipped record, a refused one or those after it
 */
TEST_F(batch, bpf_runs_per_record)
{
	static char log[65536];
	struct batch *b = self->b;
	int map_fd, prog_fd, perf_fd, bad;
	__u32 values[8], i, n = 0;

	map_fd = ue_bpf_array_create(sizeof(__u64), BPF_SLOTS);
	if (map_fd == -1 && errno == EPERM)
		SKIP(return, "bpf() is not available: %s", strerror(errno));
	ASSERT_NE(-1, map_fd);
	prog_fd = bpf_prog_keep_values(map_fd, log, sizeof(log));
	ASSERT_NE(-1, prog_fd) {
		TH_LOG("verifier: %s", log);
	}
	perf_fd = ue_perf_open_bpf(ue_event_id(events[EV_A].name), prog_fd);
	ASSERT_NE(-1, perf_fd);

	batch_start(b);
	for (i = 0; i < 5; i++) {
		values[n++] = 0x5eed0000 + i;
		batch_u32(b, &self->ev, EV_A, values[n - 1], false);
		/* Skipped: nothing attached */
		batch_u32(b, &self->ev, EV_D, i, true);
	}
	ASSERT_EQ(b->len, batch_write(self->ev.fd, b));

	/* Two more, then a payload too short for the fields: refused */
	batch_start(b);
	values[n++] = 0x600d;
	batch_u32(b, &self->ev, EV_A, values[n - 1], false);
	values[n++] = 0x600e;
	batch_u32(b, &self->ev, EV_A, values[n - 1], false);
	bad = batch_rec(b, self->ev.idx[EV_A], EV_A, "ab", 2);
	batch_u32(b, &self->ev, EV_A, 0xbad, true);
	ASSERT_EQ(batch_end(b, bad - 1), batch_writev(self->ev.fd, b));

	ASSERT_EQ(n, bpf_slot(map_fd, 0));
	for (i = 0; i < n; i++)
		EXPECT_EQ(values[i], bpf_slot(map_fd, 1 + i)) {
			TH_LOG("run %u", i);
		}
	close(perf_fd);
	close(prog_fd);
	close(map_fd);
}

/*
 * Records straddle iovecs: the marker split, each header split at every
 * place, payloads split, and one byte per iovec; small and larger batches
 */
TEST_F(batch, straddling_iovecs)
{
	struct batch *b = self->b;
	int split, i, count;
	size_t at, end;

	ASSERT_EQ(0, pin_cpu());
	ASSERT_EQ(0, enable(NULL, EV_A, true));
	ASSERT_EQ(0, enable(NULL, EV_S, true));

	/* Headers split after 1 to 7 bytes, payloads inside */
	for (split = 1; split < (int)HDR_SIZE; split++) {
		batch_start(b);
		/* The marker in an iovec of its own */
		batch_cut(b, false);
		at = b->len;
		batch_u32(b, &self->ev, EV_A, split, false);
		batch_str(b, &self->ev, EV_S, split, "split");
		end = b->len;
		/* A's header after @split bytes, its payload after 1 to 3 */
		b->len = at + split;
		batch_cut(b, false);
		b->len = at + HDR_SIZE + 1 + split % 3;
		batch_cut(b, false);
		/* S's header after 8 - @split, its string before its end */
		b->len = at + HDR_SIZE + 4 + HDR_SIZE - split;
		batch_cut(b, false);
		b->len = end - 3;
		batch_cut(b, false);
		b->len = end;
		ASSERT_EQ(b->len, batch_writev(self->ev.fd, b)) {
			TH_LOG("header split after %d bytes", split);
		}
		check_batch(_metadata, NULL, b, b->nrec, false);
	}

	/* Every byte in an iovec of its own, the marker's too */
	for (count = 2; count <= 20; count += 18) {
		batch_start(b);
		for (i = 0; i < count; i++) {
			if (i & 1)
				batch_str(b, &self->ev, EV_S, i, "byte by byte");
			else
				batch_u32(b, &self->ev, EV_A, i, false);
		}
		ASSERT_GE(MAX_SEGS, b->len);
		b->nseg = 0;
		for (at = 0; at < b->len; at++) {
			b->cut[b->nseg] = at;
			b->hole[b->nseg++] = false;
		}
		ASSERT_EQ(b->len, batch_writev(self->ev.fd, b)) {
			TH_LOG("%d records, %zu iovecs", count, b->len);
		}
		check_batch(_metadata, NULL, b, b->nrec, false);
	}
}

/*
 * Fill @b up to exactly @size bytes with records of EV_A, as large as
 * they may be (their value their number); the number of records
 */
static int fill_batch(struct batch *b, const struct events *ev, size_t size)
{
	static __u8 payload[UE_PAYLOAD_MAX];
	__u32 len, v = 0;

	batch_start(b);
	while (b->len < size) {
		len = size - b->len - HDR_SIZE;
		if (len > UE_PAYLOAD_MAX)
			len = UE_PAYLOAD_MAX;
		/* No record smaller than the event's field: shorten one */
		if (size - b->len - HDR_SIZE - len < HDR_SIZE + 4 &&
		    size - b->len - HDR_SIZE != len)
			len -= HDR_SIZE + 4;
		memcpy(payload, &v, sizeof(v));
		memset(payload + 4, 0x5a, len - 4);
		batch_rec(b, ev->idx[EV_A], EV_A, payload, len);
		batch_expect(b, "%s: v=%u\n", events[EV_A].name, v);
		v++;
	}

	return b->nrec;
}

/*
 * The largest batch, 65536 bytes with its marker, is written whole, with
 * write() and writev(); one byte more is E2BIG and records nothing, even
 * when its first record would be refused; so is twice the limit
 */
TEST_F(batch, size_limit)
{
	struct batch *b = self->b;
	__u32 bad = 1000;
	int count;

	ASSERT_EQ(0, pin_cpu());
	ASSERT_EQ(0, enable(NULL, EV_A, true));

	count = fill_batch(b, &self->ev, USER_EVENT_BATCH_MAX);
	ASSERT_EQ(USER_EVENT_BATCH_MAX, b->len);
	ASSERT_EQ(17, count);
	ASSERT_EQ(USER_EVENT_BATCH_MAX, batch_write(self->ev.fd, b));
	check_batch(_metadata, NULL, b, count, false);
	/* In three iovecs, split inside records */
	b->cut[1] = 1000;
	b->cut[2] = 40000;
	b->hole[1] = false;
	b->hole[2] = false;
	b->nseg = 3;
	ASSERT_EQ(USER_EVENT_BATCH_MAX, batch_writev(self->ev.fd, b));
	check_batch(_metadata, NULL, b, count, false);

	/* One byte more in the last payload */
	fill_batch(b, &self->ev, USER_EVENT_BATCH_MAX + 1);
	ASSERT_EQ(USER_EVENT_BATCH_MAX + 1, b->len);
	ASSERT_EQ(-E2BIG, batch_write(self->ev.fd, b));
	ASSERT_EQ(-E2BIG, batch_writev(self->ev.fd, b));
	/* Its first record of an unknown index */
	memcpy(b->buf + 4, &bad, sizeof(bad));
	ASSERT_EQ(-E2BIG, batch_write(self->ev.fd, b));
	/* Twice the limit */
	fill_batch(b, &self->ev, 2 * USER_EVENT_BATCH_MAX);
	ASSERT_EQ(-E2BIG, batch_write(self->ev.fd, b));
	ASSERT_EQ(-E2BIG, batch_writev(self->ev.fd, b));
	ASSERT_RECORDS(NULL, "");
}

/*
 * Records of a status page registration and of an enable bit registration
 * of the same fd in one batch: all recorded, in order
 */
TEST_F(batch, both_abis_in_one_batch)
{
	struct batch *b = self->b;
	int i;

	ASSERT_EQ(0, pin_cpu());
	ASSERT_EQ(0, enable(NULL, EV_A, true));
	ASSERT_EQ(0, enable(NULL, EV_B, true));
	ASSERT_EQ(EVENT_STATUS_FTRACE,
		  self->ev.status[self->ev.status_index[EV_A]]);
	ASSERT_EQ(1 << EV_B, enable_word);

	batch_start(b);
	for (i = 0; i < 8; i++)
		batch_u32(b, &self->ev, i % 3 ? EV_B : EV_A, 300 + i, false);
	ASSERT_EQ(b->len, batch_write(self->ev.fd, b));
	check_batch(_metadata, NULL, b, b->nrec, false);
	ASSERT_EQ(b->len, batch_writev(self->ev.fd, b));
	check_batch(_metadata, NULL, b, b->nrec, false);
}

/*
 * A record of an event with nothing attached is skipped without an error
 * and counted, whichever ABI handed its index out (a single write through
 * an enable bit's index gets EBADF); it still gets the checks of its
 * size.  Enabled later, the same records are recorded.
 */
TEST_F(batch, disabled_records_skipped)
{
	struct batch *b = self->b;
	__u32 v = 5, buf[2];
	int bad, i;

	ASSERT_EQ(0, pin_cpu());
	ASSERT_EQ(0, enable(NULL, EV_A, true));
	ASSERT_EQ(0, self->ev.status[self->ev.status_index[EV_D]]);
	ASSERT_EQ(0, enable_word);

	/* A single write: the status page's index succeeds, the bit's not */
	ASSERT_EQ(8, ue_emit(self->ev.fd, self->ev.idx[EV_D], &v, sizeof(v)));
	ASSERT_EQ(-EBADF, ue_emit(self->ev.fd, self->ev.idx[EV_E], &v,
				  sizeof(v)));

	/* In a batch, both are skipped */
	batch_start(b);
	batch_u32(b, &self->ev, EV_E, 1, true);
	batch_u32(b, &self->ev, EV_A, 2, false);
	batch_u32(b, &self->ev, EV_D, 3, true);
	batch_u32(b, &self->ev, EV_E, 4, true);
	batch_u32(b, &self->ev, EV_A, 5, false);
	batch_u32(b, &self->ev, EV_D, 6, true);
	ASSERT_EQ(b->len, batch_write(self->ev.fd, b));
	check_batch(_metadata, NULL, b, b->nrec, false);
	ASSERT_EQ(b->len, batch_writev(self->ev.fd, b));
	check_batch(_metadata, NULL, b, b->nrec, false);

	/* Records of disabled events only, each ABI */
	for (i = 0; i < 2; i++) {
		batch_start(b);
		batch_u32(b, &self->ev, i ? EV_E : EV_D, 7, true);
		batch_u32(b, &self->ev, i ? EV_E : EV_D, 8, true);
		ASSERT_EQ(b->len, batch_write(self->ev.fd, b));
	}
	ASSERT_RECORDS(NULL, "");

	/* A skipped record too short for its fields stops the batch */
	for (i = 0; i < 2; i++) {
		batch_start(b);
		batch_rec(b, self->ev.idx[i ? EV_E : EV_D], -1, "xyz", 3);
		ASSERT_EQ(-EINVAL, batch_write(self->ev.fd, b));
		batch_start(b);
		batch_u32(b, &self->ev, EV_A, 9, false);
		batch_u32(b, &self->ev, i ? EV_D : EV_E, 10, true);
		bad = batch_rec(b, self->ev.idx[i ? EV_E : EV_D], -1, "xyz", 3);
		batch_u32(b, &self->ev, EV_A, 11, true);
		ASSERT_EQ(batch_end(b, bad - 1), batch_write(self->ev.fd, b));
		check_batch(_metadata, NULL, b, bad, false);
	}

	/* EV_E enabled and EV_A disabled: the other way round */
	ASSERT_EQ(0, enable(NULL, EV_E, true));
	ASSERT_EQ(1 << EV_E, enable_word);
	ASSERT_EQ(0, enable(NULL, EV_A, false));
	batch_start(b);
	batch_u32(b, &self->ev, EV_E, 12, false);
	batch_u32(b, &self->ev, EV_A, 13, true);
	batch_u32(b, &self->ev, EV_E, 14, false);
	batch_u32(b, &self->ev, EV_D, 15, true);
	ASSERT_EQ(b->len, batch_write(self->ev.fd, b));
	check_batch(_metadata, NULL, b, b->nrec, false);
	buf[0] = self->ev.idx[EV_E];
	buf[1] = 16;
	ASSERT_EQ(sizeof(buf), write(self->ev.fd, buf, sizeof(buf)));
	ASSERT_RECORDS(NULL, PREFIX "e: v=16\n");
}

/*
 * Payloads on pages that are not present, dropped with MADV_DONTNEED from
 * a shared file mapping (which keeps their data): faulted in and recorded
 * once each, by ftrace and perf, through write() of a batch that runs
 * across pages and writev() of iovecs in them
 */
TEST_F(batch, payload_faulted_in)
{
	const size_t pages = 4, size = pages * UE_PAGE_SIZE;
	static __u8 payload[UE_PAYLOAD_MAX], raw[UE_COMMON_SIZE + 64];
	struct batch *b = self->b;
	struct ue_perf_ring *ring = &self->ev.ring[0];
	size_t start = UE_PAGE_SIZE - 30;
	int memfd, round, i, nsamples = 0;
	__u8 *mem;
	__u32 v;

	ASSERT_EQ(0, pin_cpu());
	ASSERT_EQ(0, enable(NULL, EV_A, true));
	ASSERT_EQ(0, enable(NULL, EV_S, true));
	ASSERT_EQ(0, ue_perf_ring_open(ring, ue_event_id(events[EV_A].name),
				       RING_PAGES));
	memfd = memfd_create("ue_batch_test", MFD_CLOEXEC);
	ASSERT_NE(-1, memfd);
	ASSERT_EQ(0, ftruncate(memfd, size));
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	ASSERT_TRUE(mem != MAP_FAILED);

	/* Records across the pages: small ones, and a third of a 4 KiB page */
	batch_start(b);
	for (i = 0; b->len < 2 * UE_PAGE_SIZE + 100 && i < 40; i++) {
		if (i % 4 == 3) {
			batch_str(b, &self->ev, EV_S, i, "paged out");
			continue;
		}
		v = 0xfa000000 + i;
		memcpy(payload, &v, sizeof(v));
		memset(payload + 4, i, sizeof(payload) - 4);
		batch_rec(b, self->ev.idx[EV_A], EV_A, payload,
			  i % 4 == 1 ? UE_PAYLOAD_MAX / 3 : 4 + i);
		batch_expect(b, "%s: v=%u\n", events[EV_A].name, v);
	}
	ASSERT_GE(size - start, b->len);
	memcpy(mem + start, b->buf, b->len);

	for (round = 0; round < 2; round++) {
		ASSERT_EQ(0, madvise(mem, size, MADV_DONTNEED)) {
			TH_LOG("madvise(MADV_DONTNEED): %s", strerror(errno));
		}
		if (round) {
			/* The iovecs point into the dropped pages */
			for (i = 1; i < b->nrec && b->nseg < MAX_SEGS; i++) {
				b->len = b->rec[i].payload + (i & 3);
				batch_cut(b, false);
			}
			b->len = b->rec[b->nrec - 1].end;
			ASSERT_EQ(b->len, batch_writev_from(self->ev.fd, b,
							    mem + start, NULL));
		} else {
			ASSERT_EQ(b->len, write(self->ev.fd, mem + start, b->len));
		}
		check_batch(_metadata, NULL, b, b->nrec, false);
		/* Once each: no record twice after the faults */
		for (i = 0; i < b->nrec; i++) {
			if (b->rec[i].ev != EV_A)
				continue;
			ASSERT_LE(UE_COMMON_SIZE + 4,
				  ue_perf_raw_sample(ring, nsamples++, raw,
						     sizeof(raw)));
			EXPECT_EQ(0, memcmp(raw + UE_COMMON_SIZE,
					    b->buf + b->rec[i].payload, 4));
		}
		ASSERT_EQ(-1, ue_perf_raw_sample(ring, nsamples, raw,
						 sizeof(raw)));
	}
	munmap(mem, size);
	close(memfd);
}

/*
 * The refusals: the batch stops before the first record that a single
 * write would refuse.  Each variant is one kind of bad record, put first,
 * in the middle (after a skipped record and a recorded one, before
 * another) and last (after two recorded and a skipped one); the kinds cut
 * short by the end of the write can only be last.
 */
enum bad_kind {
	BAD_UNKNOWN_INDEX,
	BAD_NEGATIVE_INDEX,
	BAD_MARKER_INDEX,
	BAD_EMPTY_PAYLOAD,
	BAD_SHORT_PAYLOAD,
	BAD_SHORT_DYN,
	BAD_DATA_LOC,
	BAD_REL_LOC,
	BAD_UNTERMINATED,
	BAD_EMPTY_STRING,
	BAD_TOO_BIG,
	BAD_CUT_HEADER,
	BAD_CUT_PAYLOAD,
	BAD_FAULT_HEADER,
	BAD_FAULT_PAYLOAD,
	BAD_FAULT_WRITE,
};

FIXTURE(refuse) {
	struct events ev;
	struct batch *b;
	__u8 *pages;		/* a readable page, then an inaccessible one */
};

FIXTURE_VARIANT(refuse) {
	enum bad_kind kind;
	int err;		/* of a single write of the bad record */
	bool last_only;		/* cut short by the end of the write */
};

FIXTURE_VARIANT_ADD(refuse, unknown_index) {
	.kind = BAD_UNKNOWN_INDEX, .err = ENOENT,
};

FIXTURE_VARIANT_ADD(refuse, negative_index) {
	.kind = BAD_NEGATIVE_INDEX, .err = EINVAL,
};

FIXTURE_VARIANT_ADD(refuse, marker_as_index) {
	.kind = BAD_MARKER_INDEX, .err = EINVAL,
};

FIXTURE_VARIANT_ADD(refuse, empty_payload) {
	.kind = BAD_EMPTY_PAYLOAD, .err = EINVAL,
};

FIXTURE_VARIANT_ADD(refuse, short_payload) {
	.kind = BAD_SHORT_PAYLOAD, .err = EINVAL,
};

FIXTURE_VARIANT_ADD(refuse, short_of_location) {
	.kind = BAD_SHORT_DYN, .err = EINVAL,
};

FIXTURE_VARIANT_ADD(refuse, data_loc_outside) {
	.kind = BAD_DATA_LOC, .err = EFAULT,
};

FIXTURE_VARIANT_ADD(refuse, rel_loc_outside) {
	.kind = BAD_REL_LOC, .err = EFAULT,
};

FIXTURE_VARIANT_ADD(refuse, string_without_nul) {
	.kind = BAD_UNTERMINATED, .err = EFAULT,
};

FIXTURE_VARIANT_ADD(refuse, empty_string) {
	.kind = BAD_EMPTY_STRING, .err = EFAULT,
};

FIXTURE_VARIANT_ADD(refuse, payload_too_big) {
	.kind = BAD_TOO_BIG, .err = E2BIG,
};

FIXTURE_VARIANT_ADD(refuse, header_cut_short) {
	.kind = BAD_CUT_HEADER, .err = EINVAL, .last_only = true,
};

FIXTURE_VARIANT_ADD(refuse, payload_cut_short) {
	.kind = BAD_CUT_PAYLOAD, .err = EINVAL, .last_only = true,
};

FIXTURE_VARIANT_ADD(refuse, header_unreadable) {
	.kind = BAD_FAULT_HEADER, .err = EFAULT,
};

FIXTURE_VARIANT_ADD(refuse, payload_unreadable) {
	.kind = BAD_FAULT_PAYLOAD, .err = EFAULT,
};

FIXTURE_VARIANT_ADD(refuse, write_runs_into_unreadable) {
	.kind = BAD_FAULT_WRITE, .err = EFAULT, .last_only = true,
};

FIXTURE_SETUP(refuse)
{
	int i;

	self->b = NULL;
	self->pages = MAP_FAILED;
	events_setup(_metadata, &self->ev);
	self->b = batch_new();
	ASSERT_TRUE(!!self->b);
	self->pages = mmap(NULL, 2 * UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(self->pages != MAP_FAILED);
	ASSERT_EQ(0, mprotect(self->pages + UE_PAGE_SIZE, UE_PAGE_SIZE,
			      PROT_NONE));

	/* Everything but EV_D and EV_E attached: ftrace and perf */
	ASSERT_EQ(0, pin_cpu());
	for (i = 0; i < NR_EVENTS; i++) {
		if (i == EV_D || i == EV_E)
			continue;
		ASSERT_EQ(0, enable(NULL, i, true));
		ASSERT_EQ(0, ue_perf_ring_open(&self->ev.ring[i],
					       ue_event_id(events[i].name),
					       RING_PAGES));
	}
}

FIXTURE_TEARDOWN(refuse)
{
	if (self->pages != MAP_FAILED)
		munmap(self->pages, 2 * UE_PAGE_SIZE);
	batch_free(self->b);
	events_teardown(_metadata, &self->ev);
}

/* Append the bad record of @kind to @b; its number */
static int add_bad(struct batch *b, const struct events *ev,
		   enum bad_kind kind)
{
	static __u8 big[UE_PAYLOAD_MAX + 1];
	struct ue_payload p = { 0 };
	__u32 v = 0xbad;
	int n;

	switch (kind) {
	case BAD_UNKNOWN_INDEX:
		return batch_rec(b, NR_EVENTS + 100, -1, &v, sizeof(v));
	case BAD_NEGATIVE_INDEX:
		return batch_rec(b, 0x80000000, -1, &v, sizeof(v));
	case BAD_MARKER_INDEX:
		return batch_rec(b, USER_EVENT_BATCH, -1, &v, sizeof(v));
	case BAD_EMPTY_PAYLOAD:
		return batch_rec(b, ev->idx[EV_A], -1, NULL, 0);
	case BAD_SHORT_PAYLOAD:
		return batch_rec(b, ev->idx[EV_A], -1, &v, 3);
	case BAD_SHORT_DYN:
		/* The number and half of the location word */
		return batch_rec(b, ev->idx[EV_S], -1, "\x01\0\0\0\x10\0", 6);
	case BAD_DATA_LOC:
		/* One byte past the payload's end */
		UE_PUT(&p, __u32, 1);
		UE_PUT(&p, __u32, DYN_LOC(UE_COMMON_SIZE + 8, 4));
		ue_put(&p, "ab", 3);
		return batch_rec(b, ev->idx[EV_S], -1, p.data, p.len);
	case BAD_REL_LOC:
		UE_PUT(&p, __u32, 1);
		UE_PUT(&p, __u32, DYN_LOC(1, 3));
		ue_put(&p, "ab", 3);
		return batch_rec(b, ev->idx[EV_R], -1, p.data, p.len);
	case BAD_UNTERMINATED:
		UE_PUT(&p, __u32, 1);
		UE_PUT(&p, __u32, DYN_LOC(UE_COMMON_SIZE + 8, 3));
		ue_put(&p, "abc", 3);
		return batch_rec(b, ev->idx[EV_S], -1, p.data, p.len);
	case BAD_EMPTY_STRING:
		UE_PUT(&p, __u32, 1);
		UE_PUT(&p, __u32, DYN_LOC(UE_COMMON_SIZE + 8, 0));
		ue_put(&p, "", 1);
		return batch_rec(b, ev->idx[EV_R], -1, p.data, p.len);
	case BAD_TOO_BIG:
		memcpy(big, &v, sizeof(v));
		return batch_rec(b, ev->idx[EV_A], -1, big, sizeof(big));
	case BAD_CUT_HEADER:
		/* 5 bytes of a header, and the write ends */
		n = batch_header(b, ev->idx[EV_A], 4, -1);
		b->len -= 3;
		return n;
	case BAD_CUT_PAYLOAD:
		/* 8 bytes announced, 3 given */
		n = batch_header(b, ev->idx[EV_A], 8, -1);
		batch_put(b, &v, 3);
		return n;
	case BAD_FAULT_HEADER:
		batch_cut(b, true);
		n = batch_header(b, ev->idx[EV_A], sizeof(v), -1);
		batch_cut(b, false);
		batch_put(b, &v, sizeof(v));
		return n;
	case BAD_FAULT_PAYLOAD:
	case BAD_FAULT_WRITE:
		n = batch_header(b, ev->idx[EV_A], sizeof(v), -1);
		batch_cut(b, true);
		batch_put(b, &v, sizeof(v));
		batch_cut(b, false);
		return n;
	}

	return -1;
}

/*
 * write() of @b from a buffer that runs from the readable page of @pages
 * into the inaccessible one where the first hole of @b starts
 */
static ssize_t batch_write_edge(int fd, const struct batch *b, __u8 *pages)
{
	size_t readable = b->len;
	__u8 *start;
	ssize_t ret;
	int i;

	for (i = 0; i < b->nseg; i++) {
		if (b->hole[i]) {
			readable = b->cut[i];
			break;
		}
	}
	start = pages + UE_PAGE_SIZE - readable;
	memcpy(start, b->buf, readable);
	ret = write(fd, start, b->len);

	return ret == -1 ? -errno : ret;
}

/* Samples in the perf rings of all events */
static int perf_samples(const struct events *ev)
{
	__u8 raw[UE_COMMON_SIZE + 16];
	int i, n, total = 0;

	for (i = 0; i < NR_EVENTS; i++) {
		if (ev->ring[i].fd == -1)
			continue;
		for (n = 0; ue_perf_raw_sample(&ev->ring[i], n, raw,
					       sizeof(raw)) >= 0; n++)
			;
		total += n;
	}

	return total;
}

TEST_F(refuse, first_middle_last)
{
	static const char * const where[] = { "first", "middle", "last" };
	struct batch *b = self->b;
	__u8 *unreadable = self->pages + UE_PAGE_SIZE;
	int pos, how, bad, samples = 0;
	bool holes = variant->kind == BAD_FAULT_HEADER ||
		     variant->kind == BAD_FAULT_PAYLOAD ||
		     variant->kind == BAD_FAULT_WRITE;
	struct iovec io[2];
	ssize_t want, ret;

	for (pos = 0; pos < 3; pos++) {
		if (pos == 1 && variant->last_only)
			continue;
		batch_start(b);
		if (pos == 1) {
			batch_u32(b, &self->ev, EV_E, 1, true);
			batch_u32(b, &self->ev, EV_A, 2, false);
		} else if (pos == 2) {
			batch_u32(b, &self->ev, EV_A, 3, false);
			batch_str(b, &self->ev, EV_S, 4, "before");
			batch_u32(b, &self->ev, EV_D, 5, true);
		}
		bad = add_bad(b, &self->ev, variant->kind);
		/* Never reached */
		if (!variant->last_only) {
			batch_u32(b, &self->ev, EV_A, 6, false);
			batch_str(b, &self->ev, EV_R, 7, "after");
		}
		want = bad ? (ssize_t)batch_end(b, bad - 1) : -variant->err;

		/*
		 * write(), then writev() in the batch's iovecs; unreadable
		 * memory is given in an iovec of its own, or at the end of
		 * write()'s buffer
		 */
		for (how = 0; how < 2; how++) {
			if (variant->kind == BAD_FAULT_WRITE && !how)
				ret = batch_write_edge(self->ev.fd, b,
						       self->pages);
			else if (holes || how)
				ret = batch_writev_from(self->ev.fd, b, NULL,
							unreadable);
			else
				ret = batch_write(self->ev.fd, b);
			ASSERT_EQ(want, ret) {
				TH_LOG("bad record %s, %s: %zd (%s)", where[pos],
				       how || holes ? "writev" : "write", ret,
				       ret < 0 ? strerror(-ret) : "bytes");
			}
			/* The records before it, nothing of it or after */
			check_batch(_metadata, NULL, b, bad, false);
			samples += bad ? 1 + (pos == 2) : 0;
			ASSERT_EQ(samples, perf_samples(&self->ev));
		}
	}

	/*
	 * The record alone, written as a single write of its index and
	 * payload, gets the same errno (but the kinds that only exist in a
	 * batch, and the marker, which makes a single write a batch)
	 */
	if (variant->last_only || variant->kind == BAD_FAULT_HEADER ||
	    variant->kind == BAD_MARKER_INDEX)
		return;
	batch_start(b);
	bad = add_bad(b, &self->ev, variant->kind);
	io[0].iov_base = b->buf + b->rec[bad].payload - HDR_SIZE;
	io[0].iov_len = sizeof(__u32);
	io[1].iov_base = holes ? unreadable : b->buf + b->rec[bad].payload;
	io[1].iov_len = b->rec[bad].size;
	ASSERT_EQ(-1, writev(self->ev.fd, io, 2));
	ASSERT_EQ(variant->err, errno);
	ASSERT_RECORDS(NULL, "");
	ASSERT_EQ(samples, perf_samples(&self->ev));
}

TEST_HARNESS_MAIN
