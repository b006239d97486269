// SPDX-License-Identifier: GPL-2.0
/*
 * Lifetime races of user_events, each run for a few seconds:
 *
 * - deleting an event (ioctl and dynamic_events) while other threads
 *   register the same name (with the same or other fields, ioctl and
 *   dynamic_events): every answer is one the state allows and what a
 *   successful registration returned is the event the fd then writes;
 * - closing a user_events_data fd while other threads write through it:
 *   writes succeed or fail with EBADF, every successful write of the
 *   enabled event is recorded once, and an event held only by the closed
 *   fd can be deleted once the last write is over;
 * - disabling (ftrace, top level and instance) while writing;
 * - closing perf events while writing;
 * - opening, reading and writing the files of an event (format, enable,
 *   filter, trigger, hist, id) while it is created and deleted;
 * - registering new events on an fd (its table of write indexes grows)
 *   while other threads write through it;
 * - enable bits (the registration ABI of Linux 6.4+): threads register
 *   and unregister bits of one word while the event is enabled and
 *   disabled and the program flips another bit of it; the page of a bit
 *   unmapped, mapped again, made read-only or inaccessible and dropped
 *   meanwhile; children forked and exiting meanwhile; registrations
 *   dropped (deleting the event they created once nothing uses it) while
 *   other threads delete and create the event, and write through their
 *   slots (EBADF: nothing is attached to it).  Once quiet, each bit
 *   matches its event's state and the word's other bits are the
 *   program's.
 *
 * UE_RACE_SECONDS sets how long each race runs (default 6).
 */
#define USER_EVENTS_ENABLE_BIT_ABI
#include <pthread.h>
#include <sys/wait.h>
#include <linux/perf_event.h>

#include "user_events_selftests.h"

#define PREFIX		"ue_race_"
#define INSTANCE	"ue_race_inst"
#define NR_WRITERS	2
#define MAX_WRITES	60000	/* per writer and race */
#define PERF_PAGES	2	/* data pages of a perf ring buffer */
#define NR_GENS		64

struct race {
	int stop;
	long long deadline;
	struct ue_threads threads;

	/*
	 * Shared with the writers: generation gen (0: none yet) writes to
	 * fd_of[gen % NR_GENS], indexes 0..nidx_of[gen % NR_GENS]-1.
	 */
	int fd;			/* the current fd, closed by the teardown */
	int gen;
	int fd_of[NR_GENS];
	__u32 nidx_of[NR_GENS];
	int acked[NR_WRITERS];	/* last gen whose fd a writer saw closed */
	int using[NR_WRITERS];	/* gen a writer is about to use */
	int closing;		/* the closer races: EBADF is fine */
	__u32 payload_min;	/* index 0's event: fixed size */
	unsigned int pace;	/* usleep(100) after that many writes */

	/* ok[w][seq]: write seq of writer w (to index 0) succeeded */
	__u8 *ok[NR_WRITERS];
	unsigned int seq[NR_WRITERS];
	unsigned int nok[NR_WRITERS];
	long ebadf[NR_WRITERS];

	long count[8];

	struct ue_errors errs;
};

struct writer_arg {
	struct race *r;
	int id;
};

static bool running(struct race *r)
{
	return !__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE) &&
	       ue_now_ms() < r->deadline;
}

static void join_all(struct race *r)
{
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	ue_threads_join(&r->threads);
	__atomic_store_n(&r->stop, 0, __ATOMIC_RELEASE);
}

static long long race_ms(void)
{
	return ue_env_long("UE_RACE_SECONDS", 6) * 1000;
}

/*
 * A writer: writes "writer seq" records to index 0 (and, when there are
 * more indexes, to the others now and then) of the published fd.
 */
static void *writer_thread(void *data)
{
	struct writer_arg *arg = data;
	struct race *r = arg->r;
	struct {
		__u32 idx;
		__u32 writer;
		__u32 seq;
		__u32 pad;
	} rec;
	unsigned int n = 0;
	ssize_t ret;
	int gen, fd;
	__u32 nidx;

	while (running(r) && r->seq[arg->id] < MAX_WRITES) {
		gen = __atomic_load_n(&r->gen, __ATOMIC_SEQ_CST);
		__atomic_store_n(&r->using[arg->id], gen, __ATOMIC_SEQ_CST);
		fd = __atomic_load_n(&r->fd_of[gen % NR_GENS], __ATOMIC_ACQUIRE);
		nidx = __atomic_load_n(&r->nidx_of[gen % NR_GENS], __ATOMIC_ACQUIRE);
		if (!gen ||
		    __atomic_load_n(&r->acked[arg->id], __ATOMIC_ACQUIRE) == gen) {
			usleep(50);
			continue;
		}
		rec.idx = 0;
		if (nidx > 1 && n % 4 == 3)
			rec.idx = 1 + n / 4 % (nidx - 1);
		rec.writer = arg->id;
		rec.seq = r->seq[arg->id];
		rec.pad = 0;
		/* Events at other indexes take a u32 */
		ret = write(fd, &rec, rec.idx ? 8 : 4 + r->payload_min);
		if (ret == (rec.idx ? 8 : 4 + r->payload_min)) {
			if (!rec.idx) {
				r->ok[arg->id][rec.seq] = 1;
				r->nok[arg->id]++;
				r->seq[arg->id]++;
			}
		} else if (ret == -1 && errno == EBADF &&
			   __atomic_load_n(&r->closing, __ATOMIC_ACQUIRE)) {
			r->ebadf[arg->id]++;
			__atomic_store_n(&r->acked[arg->id], gen, __ATOMIC_RELEASE);
		} else {
			ue_fail(&r->errs, "writer %d: write to index %u returned %zd (%s)",
				arg->id, rec.idx, ret,
				ret == -1 ? strerror(errno) : "short");
			if (!rec.idx)
				r->seq[arg->id]++;
		}
		if (r->pace && ++n % r->pace == 0)
			usleep(100);
	}

	return NULL;
}

/*
 * Check the records of @name in @instance against the successful writes:
 * each is a successful write, once; with @exact every successful write is
 * there.  Returns the number of records.
 */
static long account(struct race *r, const char *instance, const char *name,
		    bool exact)
{
	char *text = ue_trace_collect(instance, name);
	__u8 *seen[NR_WRITERS];
	unsigned int w, seq;
	char *line, *next;
	long records = 0;
	int i;

	if (!text) {
		ue_fail(&r->errs, "cannot read the trace of %s",
			instance ?: "top level");
		return 0;
	}
	for (i = 0; i < NR_WRITERS; i++)
		seen[i] = calloc(MAX_WRITES, 1);
	for (line = text; *line; line = next) {
		next = strchr(line, '\n');
		*next++ = '\0';
		records++;
		if (sscanf(line, "writer=%u seq=%u", &w, &seq) != 2 ||
		    w >= NR_WRITERS || seq >= MAX_WRITES) {
			ue_fail(&r->errs, "%s: unexpected record \"%s\"", name,
				line);
			continue;
		}
		if (seen[w][seq]++)
			ue_fail(&r->errs, "%s: writer %u seq %u recorded twice",
				name, w, seq);
		if (!r->ok[w][seq])
			ue_fail(&r->errs, "%s: writer %u seq %u recorded, but the write failed",
				name, w, seq);
	}
	free(text);

	for (w = 0; exact && w < NR_WRITERS; w++) {
		unsigned int lost = 0, first = 0;

		for (seq = 0; seq < r->seq[w]; seq++) {
			if (r->ok[w][seq] && !seen[w][seq] && !lost++)
				first = seq;
		}
		if (lost)
			ue_fail(&r->errs,
				"%s: writer %u: %u successful writes not recorded (first: %u)",
				name, w, lost, first);
	}
	for (i = 0; i < NR_WRITERS; i++)
		free(seen[i]);

	return records;
}

static int start_writers(struct race *r, struct writer_arg *args)
{
	int i, ret;

	for (i = 0; i < NR_WRITERS; i++) {
		args[i].r = r;
		args[i].id = i;
		ret = ue_thread_start(&r->threads, writer_thread, &args[i]);
		if (ret)
			return ret;
	}

	return 0;
}

/* Make the writers use @fd, with write indexes 0..@nidx-1, from now on */
static void publish(struct race *r, int fd, __u32 nidx)
{
	int gen = r->gen + 1;

	r->fd = fd;
	__atomic_store_n(&r->fd_of[gen % NR_GENS], fd, __ATOMIC_RELEASE);
	__atomic_store_n(&r->nidx_of[gen % NR_GENS], nidx, __ATOMIC_RELEASE);
	__atomic_store_n(&r->gen, gen, __ATOMIC_RELEASE);
}

/*
 * The cases share one trace instance: making and removing one (a
 * directory for every event of the kernel) and sizing its buffer take
 * about fifteen seconds in the debug kernel under emulation.  Each case
 * gets it empty, with none of its user events enabled; the program
 * removes it when it ends.
 */
#define INSTANCE_USER_ENABLE	"instances/" INSTANCE "/events/" \
				USER_EVENTS_SYSTEM "/enable"

static pid_t race_main_pid;

static void __attribute__((constructor)) race_note_main(void)
{
	race_main_pid = getpid();
}

static void __attribute__((destructor)) race_remove_instance(void)
{
	/* Not in the children of the test harness, which exit() too */
	if (getpid() == race_main_pid)
		ue_instance_remove(INSTANCE);
}

/* Disable every user event in the instance; 0 or errno */
static int race_instance_disable(void)
{
	int ret = ue_write_file(INSTANCE_USER_ENABLE, "0\n", O_TRUNC);

	/* No user event exists: nothing is enabled */
	return ret == ENOENT ? 0 : ret;
}

/* The instance of the cases, empty; 0 or errno */
static int race_instance_get(void)
{
	int ret;

	if (access(ue_path("instances/" INSTANCE), F_OK)) {
		ret = ue_instance_create(INSTANCE);
		if (ret)
			return ret;
	}
	ret = race_instance_disable();
	if (!ret)
		ret = ue_set_buffer_kb(INSTANCE, 4096);
	if (!ret)
		ret = ue_clear_trace(INSTANCE);

	return ret;
}

FIXTURE(race) {
	struct race r;
	struct writer_arg args[NR_WRITERS];
	int data_fd;
	int status_fd;
	__u8 *status;
	int active0;
};

FIXTURE_SETUP(race)
{
	int busy, max, i;

	self->data_fd = -1;
	self->status_fd = -1;
	self->r.fd = -1;
	UE_SKIP_IF_UNAVAILABLE();

	race_instance_disable();
	ue_cleanup_events(PREFIX);
	ue_errors_init(&self->r.errs);
	for (i = 0; i < NR_WRITERS; i++) {
		self->r.ok[i] = calloc(MAX_WRITES, 1);
		ASSERT_NE(NULL, self->r.ok[i]);
	}
	ASSERT_EQ(0, ue_status_counts(&self->active0, &busy, &max));
	ASSERT_EQ(0, ue_open_status_page(&self->status_fd, &self->status));
	ASSERT_EQ(0, race_instance_get());
	ASSERT_EQ(0, ue_clear_trace(NULL));
	self->r.deadline = ue_now_ms() + race_ms();
}

FIXTURE_TEARDOWN(race)
{
	int i;

	join_all(&self->r);
	if (self->r.fd >= 0)
		close(self->r.fd);
	if (self->data_fd != -1)
		close(self->data_fd);
	for (i = 0; i < NR_WRITERS; i++)
		free(self->r.ok[i]);
	ue_close_status_page(self->status_fd, self->status);
	race_instance_disable();
	ue_cleanup_events(PREFIX);
	ue_clear_trace(NULL);

	/* Nothing of ours is left: Active is back where it started */
	ue_expect_active(_metadata, self->active0);
}

/* Register, delete and register again the same name from many threads */

#define SAME		PREFIX "same"

static void *registrar_thread(void *data)
{
	struct race *r = data;
	struct ue_status_reg reg;
	unsigned int n = 0;
	char *text;
	__u64 val = 0;
	int fd, ret;

	while (running(r)) {
		/* Odd rounds ask for other fields than the rest */
		bool wide = n++ & 1;

		fd = ue_open_data();
		if (fd == -1) {
			ue_fail(&r->errs, "registrar: open: %s",
				strerror(errno));
			break;
		}
		ret = ue_reg(fd, wide ? SAME " u64 b" : SAME " u32 a", &reg);
		if (ret == EADDRINUSE) {
			r->count[1]++;
			close(fd);
			continue;
		}
		if (ret || !reg.status_index || reg.status_index >= UE_PAGE_SIZE ||
		    reg.write_index) {
			ue_fail(&r->errs, "registrar: register: %s, indexes %u %u",
				strerror(ret), reg.status_index,
				reg.write_index);
			close(fd);
			continue;
		}
		r->count[0]++;

		/* The fd holds the event it got: the right fields, listed */
		if (wide && ue_emit(fd, 0, &val, 4) != -EINVAL)
			ue_fail(&r->errs, "registrar: u64 event took a 4-byte payload");
		if (ue_emit(fd, 0, &val, wide ? 8 : 4) != (wide ? 12 : 8))
			ue_fail(&r->errs, "registrar: write: %s",
				strerror(errno));
		if (n % 8 == 0) {
			text = ue_read_file("user_events_status");
			if (!text ||
			    !ue_status_has(text, reg.status_index, SAME, NULL))
				ue_fail(&r->errs, "registrar: \"%u:%s\" not in user_events_status",
					reg.status_index, SAME);
			free(text);
		}
		close(fd);
	}

	return NULL;
}

/*
 * Count the outcome @ret of an event created in dynamic_events by @who:
 * count[2] created, count[3] not (EADDRINUSE is fine)
 */
static void count_create(struct race *r, int ret, const char *who)
{
	r->count[ret ? 3 : 2]++;
	if (ret && ret != EADDRINUSE)
		ue_fail(&r->errs, "%s: %s", who, strerror(ret));
}

/*
 * Count the outcome @ret of a delete by @who: count[4] deleted, count[5]
 * EBUSY, count[6] ENOENT; any other error is one
 */
static void count_delete(struct race *r, int ret, const char *who)
{
	if (ret == 0)
		r->count[4]++;
	else if (ret == EBUSY)
		r->count[5]++;
	else if (ret == ENOENT)
		r->count[6]++;
	else
		ue_fail(&r->errs, "%s: %s", who, strerror(ret));
}

/* Log the counts of count_delete(), and fail on any error of the threads */
static void report_deletes(struct __test_metadata *_metadata, struct race *r)
{
	ue_msg("deleted %ld, EBUSY %ld, ENOENT %ld\n", r->count[4],
	       r->count[5], r->count[6]);
	ue_errors_report(_metadata, &r->errs);
	ASSERT_EQ(0, r->errs.count);
}

static void *dyn_create_thread(void *data)
{
	struct race *r = data;

	while (running(r)) {
		count_create(r, ue_dyn("u:" SAME " u32 a"), "dyn create");
		usleep(200);
	}

	return NULL;
}

static void *deleter_thread(void *data)
{
	struct race *r = data;
	unsigned int n = 0;
	int ret;

	while (running(r)) {
		ret = n++ & 1 ? ue_dyn("!u:" SAME) : ue_del(SAME);
		count_delete(r, ret, "deleter");
	}

	return NULL;
}

TEST_F_TIMEOUT(race, delete_vs_register, 120)
{
	struct race *r = &self->r;
	int ret;

	ASSERT_EQ(0, ue_thread_start(&r->threads, registrar_thread, r));
	ASSERT_EQ(0, ue_thread_start(&r->threads, registrar_thread, r));
	ASSERT_EQ(0, ue_thread_start(&r->threads, dyn_create_thread, r));
	ASSERT_EQ(0, ue_thread_start(&r->threads, deleter_thread, r));
	while (running(r))
		usleep(100000);
	join_all(r);

	ue_msg("registered %ld (EADDRINUSE %ld), dyn created %ld (EADDRINUSE %ld)\n",
	       r->count[0], r->count[1], r->count[2], r->count[3]);
	report_deletes(_metadata, r);
	ASSERT_NE(0, r->count[0]);
	ASSERT_NE(0, r->count[4]);

	/* Whatever state it ended in, nothing holds it any more */
	ret = ue_del(SAME);
	ASSERT_TRUE(ret == 0 || ret == ENOENT) {
		TH_LOG("final delete: %s", strerror(ret));
	}
	ASSERT_FALSE(ue_event_exists(SAME));
}

/* Close the fd that other threads write to */

#define CW		PREFIX "cw"
#define CW2		PREFIX "cw2"

TEST_F_TIMEOUT(race, close_vs_write, 120)
{
	struct race *r = &self->r;
	long rounds = 0, deleted = 0, busy = 0, records;
	struct ue_status_reg reg;
	int fd, i, ret;
	bool acked;

	/* Deletes go through this fd: no new fd may take a closed one's number */
	self->data_fd = ue_open_data();
	ASSERT_NE(-1, self->data_fd);

	r->payload_min = 8;
	r->closing = 1;
	r->pace = 8;
	ASSERT_EQ(0, start_writers(r, self->args));
	while (running(r)) {
		fd = ue_open_data();
		ASSERT_NE(-1, fd);
		ASSERT_EQ(0, ue_reg(fd, CW " u32 writer; u32 seq", &reg));
		ASSERT_EQ(0, reg.write_index);
		if (!rounds)
			ASSERT_EQ(0, ue_enable(INSTANCE, CW, true));
		ASSERT_EQ(0, ue_reg(fd, CW2 " u32 v", &reg));
		ASSERT_EQ(1, reg.write_index);

		publish(r, fd, 2);
		usleep(rounds % 5 * 300);
		close(fd);
		r->fd = -1;

		/* Held by nothing but the file, which a write may still use */
		if (rounds & 1) {
			ret = ue_ioctl(self->data_fd, DIAG_IOCSDEL, CW2);
			if (ret == 0)
				deleted++;
			else if (ret == EBUSY)
				busy++;
			else
				ASSERT_EQ(0, ret);
		}
		/* The writers have all seen the fd closed: its number may go */
		do {
			acked = true;
			for (i = 0; i < NR_WRITERS; i++) {
				if (__atomic_load_n(&r->acked[i], __ATOMIC_ACQUIRE) !=
				    r->gen)
					acked = false;
			}
			if (!acked)
				usleep(100);
		} while (!acked && running(r));
		rounds++;
	}
	join_all(r);

	ASSERT_EQ(0, ue_enable(INSTANCE, CW, false));
	records = account(r, INSTANCE, CW, true);
	ue_msg("%ld fds closed under the writers\n", rounds);
	ue_msg("%s deleted right after the close %ld times (EBUSY %ld)\n",
	       CW2, deleted, busy);
	ue_msg("writes: %u and %u succeeded, %ld and %ld EBADF; %ld records\n",
	       r->nok[0], r->nok[1], r->ebadf[0], r->ebadf[1], records);
	ue_errors_report(_metadata, &r->errs);
	ASSERT_EQ(0, r->errs.count);
	ASSERT_LT(0, records);

	/* The closed fds left no reference behind */
	ret = ue_del(CW2);
	ASSERT_TRUE(ret == 0 || ret == ENOENT);
	ASSERT_EQ(0, ue_del(CW));
}

/* Detach ftrace while writing */

#define DW		PREFIX "dw"

TEST_F_TIMEOUT(race, disable_vs_write, 120)
{
	struct race *r = &self->r;
	long toggles = 0, top, inst;
	struct ue_status_reg reg;
	__u8 byte;

	r->fd = ue_open_data();
	ASSERT_NE(-1, r->fd);
	ASSERT_EQ(0, ue_reg(r->fd, DW " u32 writer; u32 seq", &reg));
	r->payload_min = 8;
	r->pace = 8;
	publish(r, r->fd, 1);
	ASSERT_EQ(0, start_writers(r, self->args));

	while (running(r)) {
		const char *where = toggles & 2 ? NULL : INSTANCE;

		ASSERT_EQ(0, ue_enable(where, DW, true));
		byte = self->status[reg.status_index];
		ASSERT_EQ(EVENT_STATUS_FTRACE, byte);
		usleep(toggles % 7 * 200);
		ASSERT_EQ(0, ue_enable(where, DW, false));
		byte = self->status[reg.status_index];
		ASSERT_EQ(0, byte);
		toggles++;
	}
	join_all(r);

	inst = account(r, INSTANCE, DW, false);
	top = account(r, NULL, DW, false);
	ue_msg("%ld enable/disable rounds; writes: %u and %u succeeded\n",
	       toggles, r->nok[0], r->nok[1]);
	ue_msg("records: %ld in the instance, %ld at the top level\n",
	       inst, top);
	ue_errors_report(_metadata, &r->errs);
	ASSERT_EQ(0, r->errs.count);
	ASSERT_LT(0, inst + top);

	close(r->fd);
	r->fd = -1;
	ASSERT_EQ(0, ue_del(DW));
}

/* Close perf events while writing */

#define PW		PREFIX "pw"

TEST_F_TIMEOUT(race, perf_close_vs_write, 120)
{
	size_t map_len = (1 + PERF_PAGES) * UE_PAGE_SIZE;
	int ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct race *r = &self->r;
	long rounds = 0, samples = 0;
	struct ue_status_reg reg;
	int fds[64], cpu, id;
	void *maps[64];
	__u8 byte;

	if (ncpus < 1)
		ncpus = 1;
	if (ncpus > 64)
		ncpus = 64;
	r->fd = ue_open_data();
	ASSERT_NE(-1, r->fd);
	ASSERT_EQ(0, ue_reg(r->fd, PW " u32 writer; u32 seq", &reg));
	id = ue_event_id(PW);
	ASSERT_LE(0, id);
	r->payload_min = 8;
	r->pace = 8;
	publish(r, r->fd, 1);
	ASSERT_EQ(0, start_writers(r, self->args));

	while (running(r)) {
		/* Every other round with ring buffers the samples go to */
		bool rings = rounds & 1;

		for (cpu = 0; cpu < ncpus; cpu++) {
			fds[cpu] = ue_perf_open(id, -1, cpu);
			ASSERT_NE(-1, fds[cpu]) {
				TH_LOG("perf_event_open on cpu %d: %s", cpu,
				       strerror(errno));
			}
			maps[cpu] = MAP_FAILED;
			if (rings) {
				maps[cpu] = mmap(NULL, map_len,
						 PROT_READ | PROT_WRITE,
						 MAP_SHARED, fds[cpu], 0);
				ASSERT_NE(MAP_FAILED, maps[cpu]);
			}
		}
		byte = self->status[reg.status_index];
		ASSERT_EQ(EVENT_STATUS_PERF, byte);
		usleep(rounds % 7 * 200);
		for (cpu = 0; cpu < ncpus; cpu++) {
			if (maps[cpu] != MAP_FAILED) {
				struct perf_event_mmap_page *page = maps[cpu];

				if (page->data_head)
					samples++;
				munmap(maps[cpu], map_len);
			}
			close(fds[cpu]);
		}
		/* Detached when the last one is closed */
		byte = self->status[reg.status_index];
		ASSERT_EQ(0, byte);
		rounds++;
	}
	join_all(r);

	ue_msg("%ld perf open/close rounds on %d CPUs, %ld with samples\n",
	       rounds, ncpus, samples);
	ue_msg("writes: %u and %u succeeded\n", r->nok[0], r->nok[1]);
	ue_errors_report(_metadata, &r->errs);
	ASSERT_EQ(0, r->errs.count);

	close(r->fd);
	r->fd = -1;
	ASSERT_EQ(0, ue_del(PW));
}

/*
 * Open, read and write the files of an event while it is created and
 * deleted again.  The event's directory may vanish at any point:
 *
 * - open() succeeds, or fails with ENOENT (the path is gone) or ENODEV
 *   (the file was looked up before the event was removed);
 * - read() and write() of an open file succeed, or fail with ENODEV once
 *   the event is gone; a bad trigger command gets EINVAL while it exists;
 * - the open files never keep the event: every delete succeeds, as the
 *   writes (disable, clear the filter) attach nothing to it.
 *
 * Linux 6.1.192 (Debian's linux-source-6.1 6.1.192-2, which this series
 * applies to) had use-after-frees there, for every kind of dynamic event:
 * tracing_open_file_tr() dereferenced the trace_event_file of the inode
 * without a reference while the event was removed, and format and
 * trigger used the freed event through a file opened before; the first
 * patch of the series fixes them.
 */

#define OV		PREFIX "ov"

struct ov_file {
	const char *name;
	int flags;
	const char *write;	/* written after a read, if not NULL */
	int write_err;		/* what the write gets while the event exists */
};

static const struct ov_file ov_files[] = {
	{ "format", O_RDONLY, NULL, 0 },
	{ "enable", O_RDWR, "0\n", 0 },
	{ "filter", O_RDWR, "0\n", 0 },
	{ "trigger", O_RDWR, "no_such_trigger\n", EINVAL },
	{ "hist", O_RDONLY, NULL, 0 },
	{ "id", O_RDONLY, NULL, 0 },
};

/* r->count: opened, open refused, read, read ENODEV, written, write ENODEV */
static void *open_thread(void *data)
{
	struct race *r = data;
	const struct ov_file *f;
	unsigned int n = 0;
	char buf[4096];
	int fd, err;
	ssize_t len;

	while (running(r)) {
		f = &ov_files[n++ % ARRAY_SIZE(ov_files)];
		fd = ue_open(ue_event_file(NULL, OV, f->name), f->flags);
		if (fd == -1) {
			if (errno != ENOENT && errno != ENODEV)
				ue_fail(&r->errs, "open %s: %s", f->name,
					strerror(errno));
			__atomic_add_fetch(&r->count[1], 1, __ATOMIC_RELAXED);
			continue;
		}
		__atomic_add_fetch(&r->count[0], 1, __ATOMIC_RELAXED);

		len = read(fd, buf, sizeof(buf));
		if (len == -1 && errno != ENODEV)
			ue_fail(&r->errs, "read %s: %s", f->name,
				strerror(errno));
		__atomic_add_fetch(&r->count[len == -1 ? 3 : 2], 1,
				   __ATOMIC_RELAXED);

		if (f->write) {
			len = write(fd, f->write, strlen(f->write));
			err = len == -1 ? errno : 0;
			if (err != ENODEV && err != f->write_err)
				ue_fail(&r->errs, "write %s: %s", f->name,
					strerror(err));
			else if (!err && len != (ssize_t)strlen(f->write))
				ue_fail(&r->errs, "write %s: %zd bytes",
					f->name, len);
			__atomic_add_fetch(&r->count[err == ENODEV ? 5 : 4], 1,
					   __ATOMIC_RELAXED);
		}
		close(fd);
	}

	return NULL;
}

TEST_F_TIMEOUT(race, open_vs_delete, 120)
{
	struct race *r = &self->r;
	long cycles = 0;
	int ret;

	ASSERT_EQ(0, ue_thread_start(&r->threads, open_thread, r));
	ASSERT_EQ(0, ue_thread_start(&r->threads, open_thread, r));
	while (running(r)) {
		ASSERT_EQ(0, ue_dyn("u:" OV " u32 a"));
		ret = cycles & 1 ? ue_dyn("!u:" OV) : ue_del(OV);
		ASSERT_EQ(0, ret) {
			TH_LOG("delete: %s", strerror(ret));
		}
		cycles++;
	}
	join_all(r);

	ue_msg("%ld create/delete cycles; %ld opens of its files, %ld refused\n",
	       cycles, r->count[0], r->count[1]);
	ue_msg("reads: %ld, %ld ENODEV; writes: %ld, %ld ENODEV\n",
	       r->count[2], r->count[3], r->count[4], r->count[5]);
	ue_errors_report(_metadata, &r->errs);
	ASSERT_EQ(0, r->errs.count);
	ASSERT_LT(0, r->count[0]);
	ret = ue_del(OV);
	ASSERT_TRUE(ret == 0 || ret == ENOENT);
}

/*
 * Grow the table of write indexes of the fd others write through: each
 * round takes a new fd and registers GROW more events on it, which
 * replaces its table four times (8, 16, 32, 64 and 128 slots).  The fds
 * of earlier rounds are closed once no writer can use them any more.
 */

#define GW		PREFIX "gw"
#define GROW		64

/* Oldest generation a writer may still use */
static int oldest_used(struct race *r)
{
	int i, gen, oldest = r->gen;

	for (i = 0; i < NR_WRITERS; i++) {
		gen = __atomic_load_n(&r->using[i], __ATOMIC_SEQ_CST);
		if (gen < oldest)
			oldest = gen;
	}

	return oldest;
}

TEST_F_TIMEOUT(race, register_vs_write, 120)
{
	struct race *r = &self->r;
	long long t0 = ue_now_ms();
	int first_open = 1, i, fd;
	struct ue_status_reg reg;
	char cmd[64];
	long records;
	__u32 val;

	r->payload_min = 8;
	r->pace = 4;
	ASSERT_EQ(0, start_writers(r, self->args));

	while (running(r)) {
		/* Close what no writer uses; wait if the ring is full */
		while (first_open < oldest_used(r) ||
		       (r->gen - first_open >= NR_GENS - 2 && running(r))) {
			if (first_open < oldest_used(r))
				close(r->fd_of[first_open++ % NR_GENS]);
			else
				usleep(1000);
		}
		fd = ue_open_data();
		ASSERT_NE(-1, fd);
		ASSERT_EQ(0, ue_reg(fd, GW " u32 writer; u32 seq", &reg));
		ASSERT_EQ(0, reg.write_index);
		if (!r->gen)
			ASSERT_EQ(0, ue_enable(INSTANCE, GW, true));
		publish(r, fd, 1);
		for (i = 1; i <= GROW; i++) {
			snprintf(cmd, sizeof(cmd), GW "%d u32 v", i);
			ASSERT_EQ(0, ue_reg(fd, cmd, &reg));
			ASSERT_EQ(i, reg.write_index);
			/* Usable at once, by us and by the writers */
			val = i;
			ASSERT_EQ(8, ue_emit(fd, i, &val, sizeof(val)));
			__atomic_store_n(&r->nidx_of[r->gen % NR_GENS], i + 1,
					 __ATOMIC_RELEASE);
		}
	}
	join_all(r);
	r->fd = -1;
	while (first_open <= r->gen)
		close(r->fd_of[first_open++ % NR_GENS]);

	ASSERT_EQ(0, ue_enable(INSTANCE, GW, false));
	records = account(r, INSTANCE, GW, true);
	ue_msg("%d fds got %d events each under the writers in %lld ms\n",
	       r->gen, GROW + 1, ue_now_ms() - t0);
	ue_msg("writes: %u and %u succeeded, %ld records\n", r->nok[0],
	       r->nok[1], records);
	ue_errors_report(_metadata, &r->errs);
	ASSERT_EQ(0, r->errs.count);

	/* All those fds closed, nothing holds the events */
	ASSERT_EQ(0, ue_del(GW));
	for (i = 1; i <= GROW; i++) {
		snprintf(cmd, sizeof(cmd), GW "%d", i);
		ASSERT_EQ(0, ue_del(cmd));
	}
}

/*
 * The enable bit (see enable_test.c) under races.  Once things are quiet
 * again, each registered bit matches the state of its event, and the bits
 * of the value that no registration names are what the program left.
 */

#define BW		PREFIX "bw"
#define NR_BIT_THREADS	3
#define BITS_EACH	4	/* bits t, t + 3, t + 6 and t + 9 of thread t */
#define SENTINEL_BITS	0x7fff0000U	/* bits 16..30: the program's */
#define SENTINEL	0x5a3c0000U
#define FLIP_BIT	31	/* flipped by the program all along */

struct bw_thread {
	struct race *r;
	__u32 *word;
	int id;
	bool registered[BITS_EACH];
	long regs;
	long unregs;
};

static int bw_bit(int id, int i)
{
	return id + NR_BIT_THREADS * i;
}

/* Register and unregister the bits of one thread, on an fd of its own */
static void *bw_register_thread(void *data)
{
	struct bw_thread *t = data;
	struct race *r = t->r;
	unsigned int n = 0;
	int fd, i, bit, ret;

	fd = ue_open_data();
	if (fd == -1) {
		ue_fail(&r->errs, "bits %d: open: %s", t->id, strerror(errno));
		return NULL;
	}
	while (running(r)) {
		i = n++ % BITS_EACH;
		bit = bw_bit(t->id, i);
		if (t->registered[i]) {
			ret = ue_unreg_bit(fd, t->word, bit);
			t->unregs++;
		} else {
			ret = ue_reg_bit(fd, BW " u32 a", t->word, 4, bit, 0,
					 NULL);
			t->regs++;
		}
		if (ret)
			ue_fail(&r->errs, "bits %d: %sregister bit %d: %s",
				t->id, t->registered[i] ? "un" : "", bit,
				strerror(ret));
		else
			t->registered[i] = !t->registered[i];
		if ((__atomic_load_n(t->word, __ATOMIC_SEQ_CST) & SENTINEL_BITS) !=
		    SENTINEL)
			ue_fail(&r->errs, "bits %d: the word is 0x%08x",
				t->id, __atomic_load_n(t->word, __ATOMIC_SEQ_CST));
		if (n % 16 == 0)
			usleep(100);
	}
	close(fd);

	return NULL;
}

/* Flip a bit of the word that is the program's, counting the flips */
static void *bw_flip_thread(void *data)
{
	struct bw_thread *t = data;

	while (running(t->r)) {
		__atomic_xor_fetch(t->word, 1U << FLIP_BIT, __ATOMIC_SEQ_CST);
		t->regs++;
		if (t->regs % 64 == 0)
			usleep(50);
	}

	return NULL;
}

/*
 * Check every bit of @word: registered bits are @on, unregistered ones 0,
 * the sentinel and the flipped bit are the program's.
 */
static void bw_check(struct race *r, const __u32 *word, struct bw_thread *t,
		     long flips, bool on, const char *when)
{
	__u32 want = SENTINEL | (flips & 1 ? 1U << FLIP_BIT : 0);
	__u32 got = __atomic_load_n(word, __ATOMIC_SEQ_CST);
	int id, i;

	for (id = 0; on && id < NR_BIT_THREADS; id++) {
		for (i = 0; i < BITS_EACH; i++) {
			if (t[id].registered[i])
				want |= 1U << bw_bit(id, i);
		}
	}
	if (got != want)
		ue_fail(&r->errs, "%s: the word is 0x%08x, expected 0x%08x",
			when, got, want);
}

TEST_F_TIMEOUT(race, bits_vs_enable, 120)
{
	struct race *r = &self->r;
	struct bw_thread t[NR_BIT_THREADS + 1];
	struct ue_status_reg reg;
	long toggles = 0, regs = 0, unregs = 0;
	__u32 *word = calloc(1, sizeof(*word));
	int id, i;

	ASSERT_NE(NULL, word);
	*word = SENTINEL;
	self->data_fd = ue_open_data();
	ASSERT_NE(-1, self->data_fd);
	ASSERT_EQ(0, ue_reg(self->data_fd, BW " u32 a", &reg));

	memset(t, 0, sizeof(t));
	for (id = 0; id <= NR_BIT_THREADS; id++) {
		t[id].r = r;
		t[id].word = word;
		t[id].id = id;
		ASSERT_EQ(0, ue_thread_start(&r->threads, id < NR_BIT_THREADS ?
					     bw_register_thread : bw_flip_thread,
					     &t[id]));
	}
	while (running(r)) {
		const char *where = toggles & 2 ? NULL : INSTANCE;

		ASSERT_EQ(0, ue_enable(where, BW, toggles & 1 ? false : true));
		if ((__atomic_load_n(word, __ATOMIC_SEQ_CST) & SENTINEL_BITS) !=
		    SENTINEL)
			ue_fail(&r->errs, "toggle %ld: the word is 0x%08x",
				toggles, *word);
		toggles++;
		usleep(toggles % 5 * 100);
	}
	join_all(r);
	/* Whatever the last toggle was, end disabled */
	ASSERT_EQ(0, ue_enable(NULL, BW, false));
	ASSERT_EQ(0, ue_enable(INSTANCE, BW, false));

	/* Quiet: the registered bits follow the event, the rest stays */
	bw_check(r, word, t, t[NR_BIT_THREADS].regs, false, "disabled");
	ASSERT_EQ(0, ue_enable(INSTANCE, BW, true));
	bw_check(r, word, t, t[NR_BIT_THREADS].regs, true, "enabled");
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->status[reg.status_index]);
	ASSERT_EQ(0, ue_enable(INSTANCE, BW, false));
	bw_check(r, word, t, t[NR_BIT_THREADS].regs, false, "disabled again");

	for (id = 0; id < NR_BIT_THREADS; id++) {
		regs += t[id].regs;
		unregs += t[id].unregs;
	}
	ue_msg("%ld enable/disable rounds; %ld registrations, %ld unregistrations, %ld flips\n",
	       toggles, regs, unregs, t[NR_BIT_THREADS].regs);
	ue_errors_report(_metadata, &r->errs);
	ASSERT_EQ(0, r->errs.count);
	ASSERT_LT(0, regs);

	/* Unregistering the rest clears no bit it should not */
	ASSERT_EQ(0, ue_enable(INSTANCE, BW, true));
	for (id = 0; id < NR_BIT_THREADS; id++) {
		for (i = 0; i < BITS_EACH; i++) {
			if (!t[id].registered[i])
				continue;
			ASSERT_EQ(0, ue_unreg_bit(self->data_fd, word,
						  bw_bit(id, i)));
			t[id].registered[i] = false;
		}
	}
	bw_check(r, word, t, t[NR_BIT_THREADS].regs, false, "all unregistered");
	ASSERT_EQ(0, ue_enable(INSTANCE, BW, false));
	ASSERT_EQ(0, r->errs.count);
	close(self->data_fd);
	self->data_fd = -1;
	ASSERT_EQ(0, ue_del(BW));
	free(word);
}

/*
 * Unmap, map again, make read-only and writable again, and drop the page
 * that holds a bit while its event is enabled and disabled.  The page of
 * another bit of the event stays: it follows the event all along, written
 * by the worker of the address space when the change of state finds its
 * memory map being changed.
 */

#define UM		PREFIX "um"

struct um_toggle {
	struct race *r;
	const __u32 *steady;
	long toggles;
};

static void *um_toggle_thread(void *data)
{
	struct um_toggle *u = data;
	int ret;

	while (running(u->r)) {
		bool on = !(u->toggles & 1);

		ret = ue_enable(NULL, UM, on);
		if (ret)
			ue_fail(&u->r->errs, "toggle: %s", strerror(ret));
		else if (!ue_wait_bit(u->steady, 4, 7, on))
			ue_fail(&u->r->errs, "%s, the steady bit is %d",
				on ? "enabled" : "disabled", !on);
		u->toggles++;
	}
	/* End disabled */
	if (ue_enable(NULL, UM, false))
		ue_fail(&u->r->errs, "disable: %s", strerror(errno));

	return NULL;
}

TEST_F_TIMEOUT(race, unmap_vs_enable, 120)
{
	struct race *r = &self->r;
	struct um_toggle u = { .r = r };
	long rounds = 0;
	__u32 *steady, *word, *again;

	steady = mmap(NULL, UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	word = mmap(NULL, UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, steady);
	ASSERT_NE(MAP_FAILED, word);
	*steady = 0x100;
	*word = 0x100;

	self->data_fd = ue_open_data();
	ASSERT_NE(-1, self->data_fd);
	ASSERT_EQ(0, ue_dyn("u:" UM " u32 a"));
	ASSERT_EQ(0, ue_reg_bit(self->data_fd, UM " u32 a", steady, 4, 7, 0, NULL));
	ASSERT_EQ(0, ue_reg_bit(self->data_fd, UM " u32 a", word, 4, 3, 0, NULL));
	u.steady = steady;
	ASSERT_EQ(0, ue_thread_start(&r->threads, um_toggle_thread, &u));

	while (running(r)) {
		switch (rounds++ % 4) {
		case 0:
			ASSERT_EQ(0, munmap(word, UE_PAGE_SIZE));
			usleep(rounds % 7 * 100);
			again = mmap(word, UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS |
				     MAP_FIXED_NOREPLACE, -1, 0);
			ASSERT_EQ(word, again);
			break;
		case 1:
			ASSERT_EQ(0, mprotect(word, UE_PAGE_SIZE, PROT_READ));
			usleep(rounds % 7 * 100);
			ASSERT_EQ(0, mprotect(word, UE_PAGE_SIZE,
					      PROT_READ | PROT_WRITE));
			break;
		case 2:
			ASSERT_EQ(0, madvise(word, UE_PAGE_SIZE, MADV_DONTNEED));
			usleep(rounds % 7 * 100);
			break;
		default:
			ASSERT_EQ(0, mprotect(word, UE_PAGE_SIZE, PROT_NONE));
			usleep(rounds % 7 * 100);
			ASSERT_EQ(0, mprotect(word, UE_PAGE_SIZE,
					      PROT_READ | PROT_WRITE));
			break;
		}
		/* The program's bits of the value: whatever it wrote */
		__atomic_or_fetch(word, 0x100, __ATOMIC_SEQ_CST);
	}
	join_all(r);

	/* Quiet and disabled; the next changes write both bits again */
	ASSERT_EQ(0x100, *steady);
	ASSERT_EQ(0, ue_enable(NULL, UM, true));
	ASSERT_EQ(0x180, *steady);
	ASSERT_TRUE(ue_wait_bit(word, 4, 3, true));
	ASSERT_EQ(0x108, *word);
	ASSERT_EQ(0, ue_enable(NULL, UM, false));
	ASSERT_EQ(0x100, *steady);
	ASSERT_TRUE(ue_wait_bit(word, 4, 3, false));
	ASSERT_EQ(0x100, *word);

	ue_msg("%ld page changes under %ld enable/disable rounds\n", rounds,
	       u.toggles);
	ue_errors_report(_metadata, &r->errs);
	ASSERT_EQ(0, r->errs.count);

	ASSERT_EQ(0, ue_unreg_bit(self->data_fd, word, 3));
	ASSERT_EQ(0, ue_unreg_bit(self->data_fd, steady, 7));
	munmap(word, UE_PAGE_SIZE);
	munmap(steady, UE_PAGE_SIZE);
	close(self->data_fd);
	self->data_fd = -1;
	ASSERT_EQ(0, ue_del(UM));
}

/*
 * Fork children, which get copies of the registrations, and let them exit
 * while the event is enabled and disabled.  Children kept alive at the
 * end see their copy follow the event, and once they are gone nothing of
 * theirs holds the event.
 */

#define FK		PREFIX "fk"
#define FK_ALIVE	4
#define FK_SENTINEL	0xa500U

struct fk_toggle {
	struct race *r;
	long toggles;
};

static void *fk_toggle_thread(void *data)
{
	struct fk_toggle *f = data;
	int ret;

	while (running(f->r)) {
		ret = ue_enable(NULL, FK, !(f->toggles & 1));
		if (ret)
			ue_fail(&f->r->errs, "toggle: %s", strerror(ret));
		f->toggles++;
		usleep(f->toggles % 3 * 200);
	}

	return NULL;
}

/*
 * A child kept alive: for each '0' or '1' read from @in, wait for bit 0
 * of @word to be that, answer 'y' or 'n' on @out; exit at end of file.
 */
static void fk_checker(const __u32 *word, int in, int out)
{
	char c, ok;

	while (read(in, &c, 1) == 1) {
		ok = ue_wait_bit(word, 4, 0, c == '1') &&
		     (*word & ~1U) == FK_SENTINEL ? 'y' : 'n';
		if (write(out, &ok, 1) != 1)
			_exit(2);
	}
	_exit(0);
}

/* Tell the checkers to expect @on; how many answered yes? */
static int fk_ask(int *to, int *from, int n, bool on)
{
	char c = on ? '1' : '0';
	int i, yes = 0;

	for (i = 0; i < n; i++) {
		if (write(to[i], &c, 1) != 1)
			return -1;
	}
	for (i = 0; i < n; i++) {
		if (read(from[i], &c, 1) == 1 && c == 'y')
			yes++;
	}

	return yes;
}

TEST_F_TIMEOUT(race, fork_vs_enable, 120)
{
	struct race *r = &self->r;
	struct fk_toggle f = { .r = r };
	int to[FK_ALIVE], from[FK_ALIVE], p1[2], p2[2], i, status, ret;
	pid_t pids[FK_ALIVE], pid;
	long forks = 0, bad = 0;
	struct ue_status_reg reg;
	__u32 *word;
	int fd;

	word = mmap(NULL, UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, word);
	*word = FK_SENTINEL;
	fd = ue_open_data();
	ASSERT_NE(-1, fd);
	ASSERT_EQ(0, ue_reg(fd, FK " u32 a", &reg));
	ASSERT_EQ(0, ue_reg_bit(fd, FK " u32 a", word, 4, 0, 0, NULL));
	ASSERT_EQ(0, ue_thread_start(&r->threads, fk_toggle_thread, &f));

	while (running(r)) {
		pid = fork();
		ASSERT_NE(-1, pid);
		if (!pid) {
			/* The sentinel is intact; exit now or a bit later */
			if ((*word & ~1U) != FK_SENTINEL)
				_exit(1);
			if (forks & 1)
				usleep(forks % 5 * 200);
			_exit(0);
		}
		forks++;
		/* Keep a few alive at once */
		if (forks % 3 == 0) {
			while ((pid = waitpid(-1, &status, 0)) > 0) {
				if (!WIFEXITED(status) || WEXITSTATUS(status))
					bad++;
			}
		}
	}
	join_all(r);
	while ((pid = waitpid(-1, &status, 0)) > 0) {
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	ASSERT_EQ(0, bad);
	ASSERT_EQ(0, ue_enable(NULL, FK, false));
	ASSERT_TRUE(ue_wait_bit(word, 4, 0, false));
	ASSERT_EQ(FK_SENTINEL, *word);

	/* Children alive now get copies that follow the event */
	for (i = 0; i < FK_ALIVE; i++) {
		ASSERT_EQ(0, pipe(p1));
		ASSERT_EQ(0, pipe(p2));
		pids[i] = fork();
		ASSERT_NE(-1, pids[i]);
		if (!pids[i]) {
			/* Only the parent may hold the others' pipes */
			while (i--) {
				close(to[i]);
				close(from[i]);
			}
			close(p1[1]);
			close(p2[0]);
			fk_checker(word, p1[0], p2[1]);
		}
		close(p1[0]);
		close(p2[1]);
		to[i] = p1[1];
		from[i] = p2[0];
	}
	ASSERT_EQ(FK_ALIVE, fk_ask(to, from, FK_ALIVE, false));
	/*
	 * The forks left our page shared copy-on-write: the kernel may have
	 * to fault it in to write our bit, later.
	 */
	ASSERT_EQ(0, ue_enable(NULL, FK, true));
	ASSERT_TRUE(ue_wait_bit(word, 4, 0, true));
	ASSERT_EQ(FK_SENTINEL | 1, *word);
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->status[reg.status_index]);
	ASSERT_EQ(FK_ALIVE, fk_ask(to, from, FK_ALIVE, true));
	ASSERT_EQ(0, ue_enable(NULL, FK, false));
	ASSERT_TRUE(ue_wait_bit(word, 4, 0, false));
	ASSERT_EQ(FK_SENTINEL, *word);
	ASSERT_EQ(FK_ALIVE, fk_ask(to, from, FK_ALIVE, false));
	for (i = 0; i < FK_ALIVE; i++) {
		close(to[i]);
		close(from[i]);
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	}

	ue_msg("%ld children forked under %ld enable/disable rounds\n",
	       forks, f.toggles);
	ue_errors_report(_metadata, &r->errs);
	ASSERT_EQ(0, r->errs.count);

	/* Ours go; then nothing holds the event (exits drop theirs late) */
	ASSERT_EQ(0, ue_unreg_bit(fd, word, 0));
	close(fd);
	{
		long long end = ue_now_ms() + UE_WAIT_MS;

		while ((ret = ue_del(FK)) == EBUSY && ue_now_ms() < end)
			usleep(1000);
		ASSERT_EQ(0, ret);
	}
	munmap(word, UE_PAGE_SIZE);
}

/*
 * Register an event with enable bits, and drop it again (which deletes
 * an event a registration created once nothing uses it), while other
 * threads delete it and create it through dynamic_events.
 */

#define AD		PREFIX "ad"

struct ad_thread {
	struct race *r;
	__u32 word;
	long regs;
};

static void *ad_register_thread(void *data)
{
	struct ad_thread *t = data;
	struct race *r = t->r;
	__u32 idx = 0, val = 0;
	ssize_t written;
	int fd, ret;

	while (running(r)) {
		fd = ue_open_data();
		if (fd == -1) {
			ue_fail(&r->errs, "open: %s", strerror(errno));
			break;
		}
		/* Set by the program: registering writes the state, off */
		__atomic_store_n(&t->word, 0xf1, __ATOMIC_SEQ_CST);
		ret = ue_reg_bit(fd, AD " u32 a", &t->word, 4, 0, 0, &idx);
		if (ret || idx)
			ue_fail(&r->errs, "register: %s, write index %u",
				strerror(ret), idx);
		else if (__atomic_load_n(&t->word, __ATOMIC_SEQ_CST) != 0xf0)
			ue_fail(&r->errs, "registered, the word is 0x%x",
				t->word);
		/* A slot of enable bits only, nothing attached: EBADF */
		if (!ret) {
			written = ue_emit(fd, 0, &val, sizeof(val));
			if (written != -EBADF)
				ue_fail(&r->errs, "write: %zd, not -EBADF",
					written);
		}
		if (!ret && t->regs & 1) {
			ret = ue_unreg_bit(fd, &t->word, 0);
			if (ret)
				ue_fail(&r->errs, "unregister: %s",
					strerror(ret));
		}
		/* Else the fd goes first, the registration after it */
		close(fd);
		if (!(t->regs & 1)) {
			ret = ue_unreg_bit(r->fd, &t->word, 0);
			if (ret)
				ue_fail(&r->errs, "unregister after close: %s",
					strerror(ret));
		}
		t->regs++;
	}

	return NULL;
}

static void *ad_delete_thread(void *data)
{
	struct race *r = data;
	unsigned int n = 0;
	int ret;

	while (running(r)) {
		switch (n++ % 3) {
		case 0:
			ret = ue_del(AD);
			break;
		case 1:
			ret = ue_dyn("!u:" AD);
			break;
		default:
			count_create(r, ue_dyn("u:" AD " u32 a"), "create");
			usleep(300);
			continue;
		}
		count_delete(r, ret, "delete");
	}

	return NULL;
}

TEST_F_TIMEOUT(race, delete_vs_autodelete, 120)
{
	struct race *r = &self->r;
	struct ad_thread t[2];
	long long end;
	int i, ret;

	/* The fd the threads unregister through after closing theirs */
	r->fd = ue_open_data();
	ASSERT_NE(-1, r->fd);
	memset(t, 0, sizeof(t));
	for (i = 0; i < 2; i++) {
		t[i].r = r;
		ASSERT_EQ(0, ue_thread_start(&r->threads, ad_register_thread,
					     &t[i]));
	}
	ASSERT_EQ(0, ue_thread_start(&r->threads, ad_delete_thread, r));
	while (running(r))
		usleep(100000);
	join_all(r);

	ue_msg("registered %ld times; created %ld (EADDRINUSE %ld)\n",
	       t[0].regs + t[1].regs, r->count[2], r->count[3]);
	report_deletes(_metadata, r);
	ASSERT_LT(0, t[0].regs + t[1].regs);
	ASSERT_LT(0, r->count[4]);

	/* Nothing holds it: deleted automatically, or by us */
	end = ue_now_ms() + UE_WAIT_MS;
	do {
		ret = ue_del(AD);
		if (ret == EBUSY)
			usleep(1000);
	} while (ret == EBUSY && ue_now_ms() < end);
	ASSERT_TRUE(ret == 0 || ret == ENOENT) {
		TH_LOG("final delete: %s", strerror(ret));
	}
	ASSERT_FALSE(ue_event_exists(AD));
}

TEST_HARNESS_MAIN
