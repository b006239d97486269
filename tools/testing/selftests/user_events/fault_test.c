// SPDX-License-Identifier: GPL-2.0
/*
 * user_events writes whose payload pages are not present.  Before each
 * write, madvise(MADV_DONTNEED) removes the payload's pages from the page
 * tables (checked in /proc/self/pagemap); the kernel, which copies the
 * payload with page faults disabled, has to fault them in and retry, and
 * the write must succeed and be recorded once:
 *
 * - on a MAP_SHARED memfd mapping the data stays in the page cache, so the
 *   record holds the values written;
 * - on private anonymous memory the pages come back zeroed, so the record
 *   holds zeros.
 *
 * Both writev() with the payload split over iovecs in different pages and
 * write() of one buffer whose payload crosses into a dropped page, with
 * ftrace, perf or both attached.
 *
 * Needs madvise() (CONFIG_ADVISE_SYSCALLS, see config): without it the
 * tests fail, as the kernel cannot run the programs they stand for.
 */
/* memfd_create() */
#define _GNU_SOURCE
#include "user_events_selftests.h"

#define PREFIX		"ue_fault_"
#define EVENT		PREFIX "ev"
#define NR_PAGES	4	/* of the test's mapping */
#define ROUNDS		3	/* writes per test */
#define PAYLOAD		28	/* bytes of the event's fields */
#define RING_PAGES	8	/* perf ring buffer data pages */
/* Room in the top-level trace buffer for the records read back */
#define MIN_BUFFER_KB	64

FIXTURE(fault) {
	int fd;
	int status_fd;
	__u8 *status;
	int memfd;
	__u8 *mem;
	struct ue_perf_ring ring;
	__u32 status_index;
};

/* Memory the payload is written from, and who is attached to the event */
struct fault_mode {
	bool shared;
	bool ftrace;
	bool perf;
};

FIXTURE_VARIANT(fault) {
	struct fault_mode mode;
};

FIXTURE_VARIANT_ADD(fault, shared_ftrace) {
	.mode = { .shared = true, .ftrace = true },
};

FIXTURE_VARIANT_ADD(fault, shared_perf) {
	.mode = { .shared = true, .perf = true },
};

FIXTURE_VARIANT_ADD(fault, shared_ftrace_perf) {
	.mode = { .shared = true, .ftrace = true, .perf = true },
};

FIXTURE_VARIANT_ADD(fault, private_ftrace) {
	.mode = { .ftrace = true },
};

FIXTURE_VARIANT_ADD(fault, private_perf) {
	.mode = { .perf = true },
};

FIXTURE_VARIANT_ADD(fault, private_ftrace_perf) {
	.mode = { .ftrace = true, .perf = true },
};

FIXTURE_SETUP(fault)
{
	size_t size = NR_PAGES * UE_PAGE_SIZE;
	struct user_reg reg;
	int id;

	self->fd = -1;
	self->status_fd = -1;
	self->memfd = -1;
	self->mem = MAP_FAILED;
	self->ring.fd = -1;
	UE_SKIP_IF_UNAVAILABLE();
	ue_cleanup_events(PREFIX);

	self->fd = ue_open_data();
	ASSERT_NE(-1, self->fd);
	ASSERT_EQ(0, ue_open_status_page(&self->status_fd, &self->status));

	/*
	 * The first event of the fd gets write index 0: write() reads the
	 * index from a dropped private page as 0 too.
	 */
	ASSERT_EQ(0, ue_reg(self->fd, EVENT " u32 seq; u64 val; char[12] tag; "
			    "u32 tail", &reg));
	ASSERT_EQ(0, reg.write_index);
	self->status_index = reg.status_index;

	if (variant->mode.shared) {
		self->memfd = memfd_create("ue_fault_test", MFD_CLOEXEC);
		ASSERT_NE(-1, self->memfd);
		ASSERT_EQ(0, ftruncate(self->memfd, size));
		self->mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
				 self->memfd, 0);
	} else {
		self->mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	ASSERT_NE(MAP_FAILED, self->mem);

	if (variant->mode.ftrace) {
		ASSERT_EQ(0, ue_ensure_top_buffer_kb(MIN_BUFFER_KB));
		ASSERT_EQ(0, ue_clear_trace(NULL));
		ASSERT_EQ(0, ue_enable(NULL, EVENT, true));
	}
	if (variant->mode.perf) {
		id = ue_event_id(EVENT);
		ASSERT_LT(0, id);
		ASSERT_EQ(0, ue_perf_ring_open(&self->ring, id, RING_PAGES));
	}
	ASSERT_EQ((variant->mode.ftrace ? EVENT_STATUS_FTRACE : 0) |
		  (variant->mode.perf ? EVENT_STATUS_PERF : 0),
		  self->status[self->status_index]);
}

FIXTURE_TEARDOWN(fault)
{
	ue_perf_ring_close(&self->ring);
	if (self->mem != MAP_FAILED)
		munmap(self->mem, NR_PAGES * UE_PAGE_SIZE);
	if (self->memfd != -1)
		close(self->memfd);
	if (self->fd != -1)
		close(self->fd);
	ue_close_status_page(self->status_fd, self->status);
	/* Disables the event first */
	ue_cleanup_events(PREFIX);
	ue_clear_trace(NULL);
}

/*
 * How many of the @n pages from @addr are present in this process' page
 * tables (bit 63 of their /proc/self/pagemap entries); -1 if unknown.
 */
static int pages_present(const void *addr, int n)
{
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	off_t pos = (uintptr_t)addr / UE_PAGE_SIZE * sizeof(__u64);
	int i, present = 0;
	__u64 entry;

	if (fd == -1)
		return -1;
	for (i = 0; i < n; i++) {
		if (pread(fd, &entry, sizeof(entry), pos + i * sizeof(entry)) !=
		    sizeof(entry)) {
			present = -1;
			break;
		}
		present += entry >> 63;
	}
	close(fd);

	return present;
}

/*
 * Drop every page of the test's mapping from the page tables, and check
 * that none is present afterwards.
 */
static void drop_pages(struct __test_metadata *_metadata, __u8 *mem)
{
	int present;

	ASSERT_EQ(0, madvise(mem, NR_PAGES * UE_PAGE_SIZE, MADV_DONTNEED)) {
		TH_LOG("madvise(MADV_DONTNEED): %s (CONFIG_ADVISE_SYSCALLS?)",
		       strerror(errno));
	}
	present = pages_present(mem, NR_PAGES);
	if (present != -1)
		ASSERT_EQ(0, present);
}

/* The payload of write @round: fields back to back, no padding */
static void make_payload(__u8 *buf, int round)
{
	struct ue_payload p = { 0 };
	char tag[12] = { 0 };

	snprintf(tag, sizeof(tag), "round %d", round);
	UE_PUT(&p, __u32, round + 1);
	UE_PUT(&p, __u64, 0x1122334455667700ull + round);
	ue_put(&p, tag, sizeof(tag));
	UE_PUT(&p, __u32, 0xa5a5a500u + round);
	memcpy(buf, p.data, PAYLOAD);
}

/*
 * Check what the attached tracers recorded: one record per round, with
 * the payload written (or zeros, for the private mapping's fresh pages).
 */
static void check_records(struct __test_metadata *_metadata,
			  const struct ue_perf_ring *ring,
			  const struct fault_mode *mode)
{
	__u8 want[PAYLOAD], raw[128];
	char lines[ROUNDS * 96] = "";
	size_t len = 0;
	int round, size;

	for (round = 0; round < ROUNDS; round++) {
		if (mode->shared)
			len += snprintf(lines + len, sizeof(lines) - len,
					"seq=%d val=%llu tag=round %d tail=%u\n",
					round + 1, 0x1122334455667700ull + round,
					round, 0xa5a5a500u + round);
		else
			len += snprintf(lines + len, sizeof(lines) - len,
					"seq=0 val=0 tag= tail=0\n");
	}

	if (mode->ftrace)
		UE_ASSERT_TRACE(NULL, EVENT, lines);

	if (!mode->perf)
		return;
	for (round = 0; round < ROUNDS; round++) {
		memset(want, 0, sizeof(want));
		if (mode->shared)
			make_payload(want, round);
		size = ue_perf_raw_sample(ring, round, raw, sizeof(raw));
		ASSERT_LE(UE_COMMON_SIZE + PAYLOAD, size) {
			TH_LOG("perf sample %d: size %d", round, size);
		}
		EXPECT_EQ(0, memcmp(raw + UE_COMMON_SIZE, want, PAYLOAD)) {
			TH_LOG("perf sample %d holds other data", round);
		}
	}
	/* Each write once: a retry after the fault records nothing twice */
	ASSERT_EQ(-1, ue_perf_raw_sample(ring, ROUNDS, raw, sizeof(raw)));
}

/*
 * writev(): the index in its own iovec on the stack, then the payload in
 * two iovecs, the first crossing from page 1 into page 2, the second in
 * page 3.
 */
TEST_F(fault, writev_split)
{
	__u8 *cross = self->mem + 2 * UE_PAGE_SIZE - 6;
	__u8 *far = self->mem + 3 * UE_PAGE_SIZE + 100;
	__u8 payload[PAYLOAD];
	struct iovec io[3];
	__u32 idx = 0;
	int round;

	io[0].iov_base = &idx;
	io[0].iov_len = sizeof(idx);
	io[1].iov_base = cross;
	io[1].iov_len = 12;
	io[2].iov_base = far;
	io[2].iov_len = PAYLOAD - 12;

	for (round = 0; round < ROUNDS; round++) {
		make_payload(payload, round);
		memcpy(cross, payload, 12);
		memcpy(far, payload + 12, PAYLOAD - 12);
		drop_pages(_metadata, self->mem);
		ASSERT_EQ(4 + PAYLOAD, writev(self->fd, io, 3)) {
			TH_LOG("round %d: %s", round, strerror(errno));
		}
	}
	check_records(_metadata, &self->ring, &variant->mode);
}

/*
 * write(): the index at the end of page 1, which reading it faults back
 * in, and the payload running from there into page 2, which stays out.
 */
TEST_F(fault, write_crossing)
{
	__u8 *buf = self->mem + 2 * UE_PAGE_SIZE - 4 - 10;
	__u32 idx = 0;
	int round;

	for (round = 0; round < ROUNDS; round++) {
		memcpy(buf, &idx, sizeof(idx));
		make_payload(buf + 4, round);
		drop_pages(_metadata, self->mem);
		ASSERT_EQ(4 + PAYLOAD, write(self->fd, buf, 4 + PAYLOAD)) {
			TH_LOG("round %d: %s", round, strerror(errno));
		}
	}
	check_records(_metadata, &self->ring, &variant->mode);
}

TEST_HARNESS_MAIN
