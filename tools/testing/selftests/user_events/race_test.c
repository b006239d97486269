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
 *   while other threads write through it.
 *
 * UE_RACE_SECONDS sets how long each race runs (default 6).
 */
#include <pthread.h>
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

	ue_instance_remove(INSTANCE);
	ue_cleanup_events(PREFIX);
	ue_errors_init(&self->r.errs);
	for (i = 0; i < NR_WRITERS; i++) {
		self->r.ok[i] = calloc(MAX_WRITES, 1);
		ASSERT_NE(NULL, self->r.ok[i]);
	}
	ASSERT_EQ(0, ue_status_counts(&self->active0, &busy, &max));
	ASSERT_EQ(0, ue_open_status_page(&self->status_fd, &self->status));
	ASSERT_EQ(0, ue_instance_create(INSTANCE));
	ASSERT_EQ(0, ue_set_buffer_kb(INSTANCE, 4096));
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
	ue_instance_remove(INSTANCE);
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
	struct user_reg reg;
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

static void *dyn_create_thread(void *data)
{
	struct race *r = data;
	int ret;

	while (running(r)) {
		ret = ue_dyn("u:" SAME " u32 a");
		if (ret && ret != EADDRINUSE)
			ue_fail(&r->errs, "dyn create: %s", strerror(ret));
		r->count[ret ? 3 : 2]++;
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
		if (ret == 0)
			r->count[4]++;
		else if (ret == EBUSY)
			r->count[5]++;
		else if (ret == ENOENT)
			r->count[6]++;
		else
			ue_fail(&r->errs, "deleter: %s", strerror(ret));
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
	ue_msg("deleted %ld, EBUSY %ld, ENOENT %ld\n", r->count[4],
	       r->count[5], r->count[6]);
	ue_errors_report(_metadata, &r->errs);
	ASSERT_EQ(0, r->errs.count);
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
	struct user_reg reg;
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
			ret = ioctl(self->data_fd, DIAG_IOCSDEL, CW2) ? errno : 0;
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
	struct user_reg reg;
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
	struct user_reg reg;
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
	struct user_reg reg;
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

TEST_HARNESS_MAIN
