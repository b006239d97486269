// SPDX-License-Identifier: GPL-2.0
/*
 * user_events under concurrent load.  Two writer threads per event write
 * three events through shared file descriptors while other threads
 * register and delete other events (ioctl and dynamic_events), enable and
 * disable events through their enable files and perf_event_open(), grow
 * the write index table of the writers' fds, close and reopen
 * user_events_data fds (and write through them), and read
 * user_events_status.
 *
 * Afterwards every successful write is accounted for in the trace buffer
 * of an instance where the written events stayed enabled (each write
 * carries its writer and sequence number: none lost, none duplicated, none
 * of a failed write), no write ever failed, every event can be deleted and
 * the Active count of user_events_status is back to its start value.  A
 * second phase toggles the events while they are written: then every
 * record must still be a successful write, recorded once.
 *
 * Two more tests load the enable bit layout: many processes each with a
 * bit for one event (every third one with the status page layout too),
 * and many events with a bit each on one fd (every fourth one on the
 * status page too).  After every attach and detach (ftrace, an instance,
 * perf) every bit and status byte agrees with what is attached, and the
 * rest of the values holding the bits is untouched; once the processes
 * exit or the bits are unregistered, nothing holds the events.  The
 * debug kernel gets fewer processes, events and rounds, and a third of
 * the writes.
 *
 * UE_STRESS_ITERS sets the writes per writer thread of the first phase
 * (default 3000, 1000 in the debug kernel); the other threads'
 * iterations scale with it.
 */
#define USER_EVENTS_ENABLE_BIT_ABI
#include <pthread.h>
#include <sys/wait.h>

#include "user_events_selftests.h"

#define PREFIX		"ue_stress_"
#define INSTANCE	"ue_stress_inst"
#define NR_EVENTS	3
#define NR_WRITERS	(2 * NR_EVENTS)
/* The thread that keeps reopening its fd also writes: writer NR_WRITERS */
#define CYCLER		NR_WRITERS
#define NR_IDS		(NR_WRITERS + 1)
#define CYCLER_WRITES	6	/* per open fd */
#define NR_CHURN	8	/* churn events c0..c7 (ioctl), d0..d7 (dyn) */
#define DEFAULT_ITERS	3000
/* Writers may run this far ahead of the other threads' progress */
#define WRITE_AHEAD	16

enum { T_REGDEL, T_ENABLE, T_PERF, T_GROW, T_CYCLE, T_STATUS, NR_CHURNERS };

static const char * const churner_names[NR_CHURNERS] = {
	"register/delete", "enable/disable", "perf open/close",
	"index table growth", "fd close/reopen", "status reader",
};

/* What a writer puts after the write index; no padding */
struct record {
	__u32 idx;
	__u32 writer;
	__u32 seq;
	__u32 phase;
};

struct stress {
	/* fds[k] is shared by the two writers of event k; index 0 is it */
	int fds[NR_EVENTS];
	__u32 status_index[NR_EVENTS];
	int event_id[NR_EVENTS];
	const __u8 *status;
	int ncpus;
	int phase;
	int stop;
	int active0;

	/* Pacing: writers follow the progress of the other threads */
	long done;
	long total;
	unsigned int writes[NR_IDS];	/* writes to do (cycler: maximum) */
	unsigned int grow;		/* events the grow thread adds */
	unsigned int iters[NR_CHURNERS];

	/* ok[w][seq]: that write returned success */
	__u8 *ok[NR_IDS];
	unsigned int ok_size[NR_IDS];
	unsigned int nok[NR_IDS];
	unsigned int cycler_seq;

	/* Per-thread counters for the report */
	long count[NR_CHURNERS][4];

	struct ue_threads threads;

	struct ue_errors errs;
};

struct writer_arg {
	struct stress *s;
	int id;
};

static int stopped(struct stress *s)
{
	return __atomic_load_n(&s->stop, __ATOMIC_ACQUIRE);
}

static void progress(struct stress *s)
{
	__atomic_add_fetch(&s->done, 1, __ATOMIC_RELEASE);
}

static const char * const event_names[NR_EVENTS] = {
	PREFIX "e0", PREFIX "e1", PREFIX "e2",
};

static const char *event_name(int k)
{
	return event_names[k];
}

/* Write record @seq of writer @id for event @k on @fd at index @idx */
static void write_record(struct stress *s, int fd, __u32 idx, int id,
			 unsigned int seq)
{
	struct record rec = {
		.idx = idx, .writer = id, .seq = seq, .phase = s->phase,
	};
	struct iovec io[2] = {
		{ .iov_base = &rec, .iov_len = sizeof(__u32) },
		{ .iov_base = &rec.writer, .iov_len = sizeof(rec) - sizeof(__u32) },
	};
	ssize_t ret;

	/* Alternate write() and writev() with the index in its own iovec */
	if (seq & 1)
		ret = writev(fd, io, 2);
	else
		ret = write(fd, &rec, sizeof(rec));
	if (ret == sizeof(rec)) {
		s->ok[id][seq] = 1;
		s->nok[id]++;
	} else {
		ue_fail(&s->errs, "writer %d seq %u (phase %d): write returned %zd (%s)",
			id, seq, s->phase, ret,
			ret == -1 ? strerror(errno) : "short");
	}
}

static void *writer_thread(void *data)
{
	struct writer_arg *arg = data;
	struct stress *s = arg->s;
	int k = arg->id / 2;
	unsigned int seq;

	for (seq = 0; seq < s->writes[arg->id]; seq++) {
		/* Do not run ahead of the others: the writes must overlap */
		for (;;) {
			long done = __atomic_load_n(&s->done, __ATOMIC_ACQUIRE);

			if (stopped(s) ||
			    seq < (unsigned long long)s->writes[arg->id] * done /
				   s->total + WRITE_AHEAD)
				break;
			usleep(500);
		}
		if (stopped(s))
			break;
		write_record(s, s->fds[k], 0, arg->id, seq);
	}

	return NULL;
}

/*
 * Register c<i>, write it, close the fd and try to delete it; create d<i>
 * through dynamic_events and delete another one of them.
 */
static void *regdel_thread(void *data)
{
	struct stress *s = data;
	char cmd[128], name[64];
	struct ue_status_reg reg;
	unsigned int i;
	__u32 val;
	int fd, ret;

	for (i = 0; i < s->iters[T_REGDEL] && !stopped(s); i++) {
		snprintf(cmd, sizeof(cmd), PREFIX "c%u u32 a", i % NR_CHURN);
		snprintf(name, sizeof(name), PREFIX "c%u", i % NR_CHURN);
		fd = ue_open_data();
		if (fd == -1) {
			ue_fail(&s->errs, "regdel: open: %s", strerror(errno));
			break;
		}
		ret = ue_reg(fd, cmd, &reg);
		if (ret || reg.write_index != 0 || !reg.status_index ||
		    reg.status_index >= UE_PAGE_SIZE)
			ue_fail(&s->errs, "regdel: register %s: %s, indexes %u %u",
				name, strerror(ret), reg.status_index,
				reg.write_index);
		val = i;
		if (!ret && ue_emit(fd, 0, &val, sizeof(val)) != 8)
			ue_fail(&s->errs, "regdel: write %s: %s", name,
				strerror(errno));
		close(fd);

		ret = ue_del(name);
		if (ret && ret != EBUSY)
			ue_fail(&s->errs, "regdel: delete %s: %s", name,
				strerror(ret));
		s->count[T_REGDEL][ret ? 1 : 0]++;

		snprintf(cmd, sizeof(cmd), "u:" PREFIX "d%u u32 a", i % NR_CHURN);
		ret = ue_dyn(cmd);
		if (ret)
			ue_fail(&s->errs, "regdel: %s: %s", cmd, strerror(ret));
		snprintf(cmd, sizeof(cmd), "!u:" PREFIX "d%u", (i + 3) % NR_CHURN);
		ret = ue_dyn(cmd);
		if (ret && ret != EBUSY && ret != ENOENT)
			ue_fail(&s->errs, "regdel: %s: %s", cmd, strerror(ret));
		s->count[T_REGDEL][ret ? 3 : 2]++;
		progress(s);
	}

	return NULL;
}

/*
 * Enable and disable events at the top level: the writers' events through
 * their enable files (which must always work), all user events at once
 * through the system's enable file, and churn events through their own
 * enable files, while the other threads delete them: those get ENOENT or
 * ENODEV once the event is gone (see open_vs_delete in race_test.c).
 */
static void *enable_thread(void *data)
{
	struct stress *s = data;
	const char *sys_enable = "events/" USER_EVENTS_SYSTEM "/enable";
	char name[64];
	unsigned int i;
	int ret;

	for (i = 0; i < s->iters[T_ENABLE] && !stopped(s); i++) {
		if (i % 4 == 0) {
			snprintf(name, sizeof(name), "%s", event_name(i / 4 % NR_EVENTS));
			ret = ue_enable(NULL, name, true);
			if (!ret)
				ret = ue_enable(NULL, name, false);
			if (ret)
				ue_fail(&s->errs, "enable: toggle %s: %s",
					name, strerror(ret));
			s->count[T_ENABLE][0]++;
			progress(s);
			continue;
		}
		if (i % 4 != 3) {
			/* All user events at once, churn ones included */
			ret = ue_write_file(sys_enable, "1\n", O_TRUNC);
			if (!ret)
				ret = ue_write_file(sys_enable, "0\n", O_TRUNC);
			if (ret)
				ue_fail(&s->errs, "enable: %s: %s", sys_enable,
					strerror(ret));
			s->count[T_ENABLE][2]++;
			progress(s);
			continue;
		}
		/* i % 4 == 3: churn events c0, d0, c1, d1... in turn */
		snprintf(name, sizeof(name), PREFIX "%c%u",
			 (i / 4) & 1 ? 'd' : 'c', (i / 8) % NR_CHURN);
		ret = ue_enable(NULL, name, true);
		if (!ret) {
			/* Enabled: it cannot have been deleted since */
			ret = ue_enable(NULL, name, false);
			if (ret)
				ue_fail(&s->errs, "enable: disable %s after enabling it: %s",
					name, strerror(ret));
			s->count[T_ENABLE][0]++;
		} else if (ret == ENOENT || ret == ENODEV) {
			s->count[T_ENABLE][1]++;
		} else {
			ue_fail(&s->errs, "enable: enable %s: %s", name,
				strerror(ret));
		}
		progress(s);
	}

	return NULL;
}

/* perf_event_open() and close() on the writers' events and churn events */
static void *perf_thread(void *data)
{
	struct stress *s = data;
	unsigned int i;
	char name[64];
	int id, fd, k;

	for (i = 0; i < s->iters[T_PERF] && !stopped(s); i++) {
		int cpu = i % s->ncpus;

		if (i & 1) {
			k = (i / 2) % NR_EVENTS;
			fd = ue_perf_open(s->event_id[k], -1, cpu);
			if (fd == -1) {
				ue_fail(&s->errs, "perf: open %s on cpu %d: %s",
					event_name(k), cpu, strerror(errno));
				continue;
			}
			/* Attached when perf_event_open() returns */
			if (!(s->status[s->status_index[k]] & EVENT_STATUS_PERF))
				ue_fail(&s->errs, "perf: %s open, status byte 0x%x",
					event_name(k),
					s->status[s->status_index[k]]);
			s->count[T_PERF][0]++;
		} else {
			snprintf(name, sizeof(name), PREFIX "%c%u",
				 i & 2 ? 'c' : 'd', (i / 4) % NR_CHURN);
			id = ue_event_id(name);
			if (id < 0) {
				s->count[T_PERF][2]++;
				progress(s);
				continue;
			}
			fd = ue_perf_open(id, -1, cpu);
			if (fd == -1) {
				/* Deleted since its id was read */
				if (errno != EINVAL && errno != ENOENT &&
				    errno != ENODEV)
					ue_fail(&s->errs, "perf: open %s (id %d): %s",
						name, id, strerror(errno));
				s->count[T_PERF][2]++;
				progress(s);
				continue;
			}
			s->count[T_PERF][1]++;
		}
		if (i % 3 == 0)
			usleep(200);
		close(fd);
		progress(s);
	}

	return NULL;
}

/*
 * Register more events on the writers' shared fds: their tables of write
 * indexes grow (and get replaced) while the writers use them.
 */
static void *grow_thread(void *data)
{
	struct stress *s = data;
	struct ue_status_reg reg;
	unsigned int i;
	char cmd[64];
	__u32 val;
	int k, ret;

	for (i = 0; i < s->grow && !stopped(s); i++) {
		k = i % NR_EVENTS;
		snprintf(cmd, sizeof(cmd), PREFIX "g%u u32 a", i);
		ret = ue_reg(s->fds[k], cmd, &reg);
		if (ret || reg.write_index != 1 + i / NR_EVENTS) {
			ue_fail(&s->errs,
				"grow: register %s on fd %d: %s, write index %u (want %u)",
				cmd, k, strerror(ret), reg.write_index,
				1 + i / NR_EVENTS);
			break;
		}
		/* The new index works right away */
		val = i;
		if (ue_emit(s->fds[k], reg.write_index, &val, sizeof(val)) != 8)
			ue_fail(&s->errs, "grow: write %s: %s", cmd,
				strerror(errno));
		s->count[T_GROW][0]++;
		progress(s);
	}

	return NULL;
}

/*
 * Open a user_events_data fd, register the writers' events on it (same
 * status bytes, write indexes 0..2), write a few records through it,
 * close it.  These writes are accounted for like the writers'.
 */
static void *cycle_thread(void *data)
{
	struct stress *s = data;
	struct ue_status_reg reg;
	unsigned int i, j;
	char cmd[128];
	int fd, k, ret;

	for (i = 0; i < s->iters[T_CYCLE] && !stopped(s); i++) {
		fd = ue_open_data();
		if (fd == -1) {
			ue_fail(&s->errs, "cycle: open: %s", strerror(errno));
			break;
		}
		for (k = 0; k < NR_EVENTS; k++) {
			snprintf(cmd, sizeof(cmd), "%s u32 writer; u32 seq; u32 phase",
				 event_name(k));
			ret = ue_reg(fd, cmd, &reg);
			if (ret || reg.write_index != (__u32)k ||
			    reg.status_index != s->status_index[k])
				ue_fail(&s->errs, "cycle: register %s: %s, indexes %u %u",
					event_name(k), strerror(ret),
					reg.status_index, reg.write_index);
		}
		for (j = 0; j < CYCLER_WRITES; j++) {
			unsigned int seq = s->cycler_seq++;

			if (seq >= s->writes[CYCLER])
				break;
			write_record(s, fd, seq % NR_EVENTS, CYCLER, seq);
		}
		close(fd);
		s->count[T_CYCLE][0]++;
		progress(s);
	}

	return NULL;
}

/* user_events_status and the status page stay consistent */
static void *status_thread(void *data)
{
	struct stress *s = data;
	int active, busy, max, k;
	unsigned int i;
	char line[128];
	char *text;

	for (i = 0; i < s->iters[T_STATUS] && !stopped(s); i++) {
		text = ue_read_file("user_events_status");
		if (!text) {
			ue_fail(&s->errs, "status: read: %s", strerror(errno));
			break;
		}
		if (!ue_parse_status_counts(text, &active, &busy, &max)) {
			ue_fail(&s->errs, "status: no counters in \"%.100s\"",
				text);
		} else if (max != UE_PAGE_SIZE || busy < 0 || busy > active ||
			   active > UE_STATUS_EVENTS ||
			   active < s->active0 + NR_EVENTS) {
			ue_fail(&s->errs, "status: Active %d Busy %d Max %d (Active at start %d)",
				active, busy, max, s->active0);
		}
		for (k = 0; k < NR_EVENTS; k++) {
			/* Enabled in the instance throughout phase 1 */
			snprintf(line, sizeof(line), "\n%u:%s # Used by ftrace",
				 s->status_index[k], event_name(k));
			if (strncmp(text, line + 1, strlen(line + 1)) &&
			    !strstr(text, line))
				ue_fail(&s->errs, "status: no line \"%s\"",
					line + 1);
			if (!(s->status[s->status_index[k]] & EVENT_STATUS_FTRACE))
				ue_fail(&s->errs, "status: byte of %s is 0x%x",
					event_name(k),
					s->status[s->status_index[k]]);
		}
		if (s->status[0])
			ue_fail(&s->errs, "status: byte 0 is 0x%x",
				s->status[0]);
		free(text);
		s->count[T_STATUS][0]++;
		progress(s);
		usleep(1000);
	}

	return NULL;
}

FIXTURE(stress) {
	struct stress s;
	int status_fd;
	__u8 *status;
	struct writer_arg args[NR_WRITERS];
};

/* Wait for the threads; with @stop, make them end early */
static void join_all(struct stress *s, bool stop)
{
	if (stop)
		__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	ue_threads_join(&s->threads);
	__atomic_store_n(&s->stop, 0, __ATOMIC_RELEASE);
}

FIXTURE_SETUP(stress)
{
	struct stress *s = &self->s;
	int k;

	for (k = 0; k < NR_EVENTS; k++)
		s->fds[k] = -1;
	self->status_fd = -1;
	UE_SKIP_IF_UNAVAILABLE();

	ue_instance_remove(INSTANCE);
	ue_cleanup_events(PREFIX);
	ue_errors_init(&s->errs);
	s->ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (s->ncpus < 1)
		s->ncpus = 1;

	ASSERT_EQ(0, ue_open_status_page(&self->status_fd, &self->status));
	s->status = self->status;
}

FIXTURE_TEARDOWN(stress)
{
	struct stress *s = &self->s;
	int k;

	join_all(s, true);
	for (k = 0; k < NR_EVENTS; k++) {
		if (s->fds[k] != -1)
			close(s->fds[k]);
	}
	for (k = 0; k < NR_IDS; k++)
		free(s->ok[k]);
	ue_close_status_page(self->status_fd, self->status);
	ue_instance_remove(INSTANCE);
	ue_cleanup_events(PREFIX);
}

/* Sum of the overrun counters of the instance's per-CPU buffers */
static long instance_overruns(int ncpus)
{
	long total = 0, n;
	char rel[128], *text, *p;
	int cpu;

	for (cpu = 0; cpu < ncpus; cpu++) {
		snprintf(rel, sizeof(rel), "instances/%s/per_cpu/cpu%d/stats",
			 INSTANCE, cpu);
		text = ue_read_file(rel);
		if (!text)
			return -1;
		p = strstr(text, "overrun: ");
		if (p && sscanf(p, "overrun: %ld", &n) == 1)
			total += n;
		free(text);
	}

	return total;
}

/*
 * Check the records of the instance against the successful writes:
 * each record is a successful write of this phase, recorded once; with
 * @exact, each successful write has its record.  Returns the number of
 * records; errors go to s->errs.
 */
static long account(struct stress *s, bool exact)
{
	__u8 *seen[NR_IDS];
	long records = 0;
	unsigned int w, seq, phase;
	int k, id;

	for (id = 0; id < NR_IDS; id++)
		seen[id] = calloc(s->writes[id] + 1, 1);

	for (k = 0; k < NR_EVENTS; k++) {
		char *text = ue_trace_collect(INSTANCE, event_name(k));
		char *line, *next;

		if (!text) {
			ue_fail(&s->errs, "cannot read the trace of %s",
				INSTANCE);
			continue;
		}
		for (line = text; *line; line = next) {
			next = strchr(line, '\n');
			*next++ = '\0';
			records++;
			if (sscanf(line, "writer=%u seq=%u phase=%u", &w, &seq,
				   &phase) != 3 || w >= NR_IDS ||
			    seq >= s->writes[w] || phase != (unsigned int)s->phase ||
			    (w != CYCLER && w / 2 != (unsigned int)k) ||
			    (w == CYCLER && seq % NR_EVENTS != (unsigned int)k)) {
				ue_fail(&s->errs, "%s: unexpected record \"%s\"",
					event_name(k), line);
				continue;
			}
			if (!seen[w])
				continue;
			if (seen[w][seq]++)
				ue_fail(&s->errs, "%s: writer %u seq %u recorded twice",
					event_name(k), w, seq);
			if (!s->ok[w][seq])
				ue_fail(&s->errs,
					"%s: writer %u seq %u recorded but the write failed",
					event_name(k), w, seq);
		}
		free(text);
	}

	for (id = 0; exact && id < NR_IDS; id++) {
		unsigned int lost = 0, first = 0;

		for (seq = 0; seen[id] && seq < s->writes[id]; seq++) {
			if (s->ok[id][seq] && !seen[id][seq] && !lost++)
				first = seq;
		}
		if (lost)
			ue_fail(&s->errs,
				"writer %d: %u successful writes not recorded (first: seq %u)",
				id, lost, first);
	}
	for (id = 0; id < NR_IDS; id++)
		free(seen[id]);

	return records;
}

TEST_F_TIMEOUT(stress, concurrent, 600)
{
	struct stress *s = &self->s;
	long iters = ue_env_long("UE_STRESS_ITERS",
				 ue_scaled(DEFAULT_ITERS, 3));
	int active, busy, max, k, t, ret;
	long long t0, t1, t2;
	long records, overruns;
	unsigned int g;
	struct ue_status_reg reg;
	char cmd[128];
	__u8 used[UE_PAGE_MAX];

	ASSERT_GT(iters, 0);
	ASSERT_EQ(0, ue_status_counts(&s->active0, &busy, &max));
	ue_msg("%ld writes per writer, %d writers, %d events, %d CPUs, Active %d\n",
	       iters, NR_WRITERS, NR_EVENTS, s->ncpus, s->active0);

	/* Iterations of each thread, scaled from the writers' */
	s->iters[T_REGDEL] = (iters + 24) / 25;
	s->iters[T_ENABLE] = (iters + 11) / 12;
	s->iters[T_PERF] = (iters + 11) / 12;
	s->grow = (iters + 11) / 12;
	s->iters[T_GROW] = s->grow;
	s->iters[T_CYCLE] = (iters + 29) / 30;
	s->iters[T_STATUS] = (iters + 24) / 25;
	for (t = 0; t < NR_CHURNERS; t++)
		s->total += s->iters[t];
	for (k = 0; k < NR_WRITERS; k++)
		s->writes[k] = iters;
	s->writes[CYCLER] = s->iters[T_CYCLE] * CYCLER_WRITES;
	for (k = 0; k < NR_IDS; k++) {
		s->ok_size[k] = s->writes[k] + 1;
		s->ok[k] = calloc(s->ok_size[k], 1);
		ASSERT_NE(NULL, s->ok[k]);
	}

	/* An instance where the written events stay enabled */
	ASSERT_EQ(0, ue_instance_create(INSTANCE));
	ASSERT_EQ(0, ue_set_buffer_kb(INSTANCE, 1024 + iters * NR_IDS * 40 / 1024));

	for (k = 0; k < NR_EVENTS; k++) {
		s->fds[k] = ue_open_data();
		ASSERT_NE(-1, s->fds[k]);
		snprintf(cmd, sizeof(cmd), "%s u32 writer; u32 seq; u32 phase",
			 event_name(k));
		ASSERT_EQ(0, ue_reg(s->fds[k], cmd, &reg));
		ASSERT_EQ(0, reg.write_index);
		s->status_index[k] = reg.status_index;
		s->event_id[k] = ue_event_id(event_name(k));
		ASSERT_LE(0, s->event_id[k]);
		ASSERT_EQ(0, ue_enable(INSTANCE, event_name(k), true));
		ASSERT_EQ(EVENT_STATUS_FTRACE, self->status[reg.status_index]);
	}

	/* Phase 1: everything at once, the written events always enabled */
	s->phase = 1;
	t0 = ue_now_ms();
	ASSERT_EQ(0, ue_thread_start(&s->threads, regdel_thread, s));
	ASSERT_EQ(0, ue_thread_start(&s->threads, enable_thread, s));
	ASSERT_EQ(0, ue_thread_start(&s->threads, perf_thread, s));
	ASSERT_EQ(0, ue_thread_start(&s->threads, grow_thread, s));
	ASSERT_EQ(0, ue_thread_start(&s->threads, cycle_thread, s));
	ASSERT_EQ(0, ue_thread_start(&s->threads, status_thread, s));
	for (k = 0; k < NR_WRITERS; k++) {
		self->args[k].s = s;
		self->args[k].id = k;
		ASSERT_EQ(0, ue_thread_start(&s->threads, writer_thread,
					     &self->args[k]));
	}
	/* All threads end by themselves after their iterations */
	join_all(s, false);
	t1 = ue_now_ms();

	for (k = 0; k < NR_EVENTS; k++) {
		ASSERT_EQ(0, ue_enable(INSTANCE, event_name(k), false));
		ASSERT_EQ(0, self->status[s->status_index[k]]);
	}
	overruns = instance_overruns(s->ncpus);
	records = account(s, true);
	t2 = ue_now_ms();

	ue_msg("phase 1 (always enabled): %lld ms, records checked in %lld ms\n",
	       t1 - t0, t2 - t1);
	for (k = 0; k < NR_IDS; k++)
		ue_msg("  writer %d%s: %u of %u writes succeeded\n", k,
		       k == CYCLER ? " (fd close/reopen thread)" : "",
		       s->nok[k], k == CYCLER ? s->cycler_seq : s->writes[k]);
	for (t = 0; t < NR_CHURNERS; t++)
		ue_msg("  %s: %u iterations (%ld/%ld/%ld/%ld)\n",
		       churner_names[t], s->iters[t], s->count[t][0],
		       s->count[t][1], s->count[t][2], s->count[t][3]);
	ue_msg("  %ld records in the trace, %ld overruns\n", records,
	       overruns);
	ASSERT_EQ(0, overruns) {
		TH_LOG("the trace buffer was too small: raise buffer_size_kb");
	}
	ue_errors_report(_metadata, &s->errs);
	ASSERT_EQ(0, s->errs.count);

	/*
	 * Phase 2: the writers' events are enabled and disabled in the
	 * instance while they are written: no write fails, each record is
	 * a successful write, once.
	 */
	ASSERT_EQ(0, ue_clear_trace(INSTANCE));
	s->phase = 2;
	s->done = 0;
	s->total = (iters + 9) / 10;
	for (k = 0; k < NR_IDS; k++) {
		s->writes[k] = k == CYCLER ? 0 : iters / 2;
		s->nok[k] = 0;
		memset(s->ok[k], 0, s->ok_size[k]);
	}
	t0 = ue_now_ms();
	for (k = 0; k < NR_WRITERS; k++)
		ASSERT_EQ(0, ue_thread_start(&s->threads, writer_thread,
					     &self->args[k]));
	for (t = 0; t < s->total; t++) {
		bool on = !(t & 1);

		k = t % NR_EVENTS;
		ret = ue_enable(INSTANCE, event_name(k), on);
		if (ret)
			ue_fail(&s->errs, "phase 2: enable %s %d: %s",
				event_name(k), on, strerror(ret));
		/* The byte follows: nothing else is attached now */
		if (self->status[s->status_index[k]] != (on ? EVENT_STATUS_FTRACE : 0))
			ue_fail(&s->errs, "phase 2: %s %s, status byte 0x%x",
				event_name(k), on ? "enabled" : "disabled",
				self->status[s->status_index[k]]);
		progress(s);
		usleep(1000);
	}
	join_all(s, false);
	for (k = 0; k < NR_EVENTS; k++)
		ASSERT_EQ(0, ue_enable(INSTANCE, event_name(k), false));
	t1 = ue_now_ms();
	records = account(s, false);
	ue_msg("phase 2 (toggled %ld times): %lld ms, %ld records of %u writes\n",
	       s->total, t1 - t0, records,
	       s->nok[0] + s->nok[1] + s->nok[2] + s->nok[3] +
	       s->nok[4] + s->nok[5]);
	ue_errors_report(_metadata, &s->errs);
	ASSERT_EQ(0, s->errs.count);

	/* No reference left: with the fds closed, every event goes */
	for (k = 0; k < NR_EVENTS; k++) {
		close(s->fds[k]);
		s->fds[k] = -1;
	}
	ASSERT_EQ(0, ue_instance_remove(INSTANCE));
	for (k = 0; k < NR_EVENTS; k++) {
		ASSERT_EQ(0, ue_del(event_name(k))) {
			TH_LOG("%s still referenced", event_name(k));
		}
	}
	for (g = 0; g < s->grow; g++) {
		snprintf(cmd, sizeof(cmd), PREFIX "g%u", g);
		ASSERT_EQ(0, ue_del(cmd)) {
			TH_LOG("%s still referenced", cmd);
		}
	}
	for (g = 0; g < 2 * NR_CHURN; g++) {
		snprintf(cmd, sizeof(cmd), PREFIX "%c%u", g & 1 ? 'd' : 'c',
			 g / 2);
		ret = ue_del(cmd);
		ASSERT_TRUE(ret == 0 || ret == ENOENT) {
			TH_LOG("%s: %s", cmd, strerror(ret));
		}
	}
	ASSERT_EQ(0, ue_status_counts(&active, &busy, &max));
	ASSERT_EQ(s->active0, active);
	ASSERT_LE(0, ue_status_indexes(used));
	for (k = 0; k < UE_PAGE_SIZE; k++) {
		if (!used[k])
			ASSERT_EQ(0, self->status[k]);
	}
	ue_msg("all events deleted, Active back to %d\n", active);
}

/*
 * Many registrations with enable bits: the bits of many processes for one
 * event, and the bits of many events on one fd, each registered with the
 * status page too now and then.  After every change of what is attached,
 * every bit and status byte agrees with it.
 */

#define PB		PREFIX "pb"
#define PB_PATTERN	0xa5a5a5a5a5a5a5a5ULL

/* A bit of each child: words in a shared page, so the parent sees them */
/* 4- and 8-byte values, in turn; 4 only on a 32-bit kernel */
static int pb_size(int i)
{
	return i & 1 && ue_kernel_64bit() ? 8 : 4;
}

static int pb_bit(int i)
{
	return i * 7 % (pb_size(i) * 8);
}

static void *pb_word(__u8 *page, int i)
{
	return page + 8 * i;
}

/* Child @i: register, say so, wait until told to exit */
static void pb_child(__u8 *page, int i, int ready, int done)
{
	char cmd[64], c = 'r';
	struct ue_status_reg reg;
	int fd = ue_open_data();

	snprintf(cmd, sizeof(cmd), PB " u32 a");
	if (fd == -1 ||
	    ue_reg_bit(fd, cmd, pb_word(page, i), pb_size(i), pb_bit(i), 0,
		       NULL))
		c = 'f';
	/* Every third child has the status page layout on the fd too */
	if (c == 'r' && i % 3 == 0 && ue_reg(fd, cmd, &reg))
		c = 's';
	if (write(ready, &c, 1) != 1)
		_exit(2);
	while (read(done, &c, 1) > 0)
		;
	_exit(0);
}

/*
 * Does every child's value hold its bit as @on, the pattern elsewhere?
 * Waits a little for bits written late (their page not present); *@late
 * counts those.
 */
static int pb_check(struct __test_metadata *_metadata, __u8 *page, int n,
		    bool on, long *late)
{
	int i, bad = 0;

	for (i = 0; i < n; i++) {
		__u64 mask = pb_size(i) == 4 ? 0xffffffffULL : ~0ULL;
		__u64 want = PB_PATTERN & mask & ~(1ULL << pb_bit(i));
		void *w = pb_word(page, i);

		if (on)
			want |= 1ULL << pb_bit(i);
		if (ue_load(w, pb_size(i)) == want)
			continue;
		ue_wait_bit(w, pb_size(i), pb_bit(i), on);
		if (ue_load(w, pb_size(i)) == want) {
			(*late)++;
			continue;
		}
		TH_LOG("child %d: value 0x%llx, expected 0x%llx", i,
		       (unsigned long long)ue_load(w, pb_size(i)),
		       (unsigned long long)want);
		bad++;
	}

	return bad;
}

TEST_F_TIMEOUT(stress, processes_enable_bit, 600)
{
	int nproc = ue_scaled(64, 4), rounds = ue_scaled(24, 4);
	int ready[2], done[2], i, round, status, ret, id, fd;
	struct ue_status_reg reg;
	struct ue_perf_ring ring = { .fd = -1 };
	long long t0 = ue_now_ms(), end;
	long late = 0;
	pid_t pid;
	__u8 *page;
	char c;

	page = mmap(NULL, UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	/* The bits start set: registering writes the state, off */
	for (i = 0; i < nproc; i++)
		ue_store(pb_word(page, i), pb_size(i),
			 PB_PATTERN | 1ULL << pb_bit(i));
	fd = ue_open_data();
	ASSERT_NE(-1, fd);
	ASSERT_EQ(0, ue_reg(fd, PB " u32 a", &reg));
	id = ue_event_id(PB);
	ASSERT_LE(0, id);
	ASSERT_EQ(0, ue_instance_create(INSTANCE));

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(done));
	for (i = 0; i < nproc; i++) {
		pid = fork();
		ASSERT_NE(-1, pid);
		if (!pid) {
			close(ready[0]);
			close(done[1]);
			pb_child(page, i, ready[1], done[0]);
		}
	}
	close(ready[1]);
	close(done[0]);
	for (i = 0; i < nproc; i++) {
		ASSERT_EQ(1, read(ready[0], &c, 1));
		ASSERT_EQ('r', c) {
			TH_LOG("a child could not register (%c)", c);
		}
	}
	ASSERT_EQ(0, pb_check(_metadata, page, nproc, false, &late));

	/* Attach and detach ftrace (top level, instance) and perf in turn */
	for (round = 0; round < rounds; round++) {
		__u8 want = 0;

		switch (round % 4) {
		case 0:
			ASSERT_EQ(0, ue_enable(NULL, PB, true));
			want = EVENT_STATUS_FTRACE;
			break;
		case 1:
			ASSERT_EQ(0, ue_enable(INSTANCE, PB, true));
			want = EVENT_STATUS_FTRACE;
			break;
		case 2:
			ASSERT_EQ(0, ue_perf_ring_open(&ring, id, 1));
			want = EVENT_STATUS_PERF;
			break;
		default:
			ASSERT_EQ(0, ue_perf_ring_open(&ring, id, 1));
			ASSERT_EQ(0, ue_enable(INSTANCE, PB, true));
			want = EVENT_STATUS_FTRACE | EVENT_STATUS_PERF;
			break;
		}
		ASSERT_EQ(want, self->status[reg.status_index]);
		ASSERT_EQ(0, pb_check(_metadata, page, nproc, true, &late)) {
			TH_LOG("round %d, attached", round);
		}

		ASSERT_EQ(0, ue_enable(NULL, PB, false));
		ASSERT_EQ(0, ue_enable(INSTANCE, PB, false));
		ue_perf_ring_close(&ring);
		ASSERT_EQ(0, self->status[reg.status_index]);
		ASSERT_EQ(0, pb_check(_metadata, page, nproc, false, &late)) {
			TH_LOG("round %d, detached", round);
		}
	}

	/* The children exit: their registrations go with them */
	close(done[1]);
	for (i = 0; i < nproc; i++) {
		pid = wait(&status);
		ASSERT_LT(0, pid);
		ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	}
	close(ready[0]);
	ASSERT_EQ(0, ue_enable(NULL, PB, true));
	ASSERT_EQ(0, pb_check(_metadata, page, nproc, false, &late));
	ASSERT_EQ(0, ue_enable(NULL, PB, false));
	close(fd);
	end = ue_now_ms() + UE_WAIT_MS;
	while ((ret = ue_del(PB)) == EBUSY && ue_now_ms() < end)
		usleep(1000);
	ASSERT_EQ(0, ret);
	ue_msg("%d processes, %d attach/detach rounds in %lld ms, %ld bits written late\n",
	       nproc, rounds, ue_now_ms() - t0, late);
	munmap(page, UE_PAGE_SIZE);
}

/* Many events on one fd, each with an enable bit */

#define MANY		PREFIX "m"

/* Do the bits of @words match @on (one per event), all others 0? */
static int many_check(struct __test_metadata *_metadata, const __u32 *words,
		      const bool *on, int n)
{
	int i, bad = 0;

	for (i = 0; i < n; i++) {
		if (ue_bit(&words[i / 32], 4, i % 32) == on[i])
			continue;
		if (bad++ < 8)
			TH_LOG("event %d: bit %d, expected %d", i, !on[i], on[i]);
	}
	for (i = n; i < (n + 31) / 32 * 32; i++) {
		if (ue_bit(&words[i / 32], 4, i % 32) && bad++ < 8)
			TH_LOG("bit %d of no event is set", i);
	}

	return bad;
}

TEST_F_TIMEOUT(stress, events_on_one_fd, 600)
{
	int n = ue_scaled(512, 4), rounds = ue_scaled(12, 3);
	const char *sys_enable = "events/" USER_EVENTS_SYSTEM "/enable";
	__u32 *status_index = calloc(n, sizeof(*status_index));
	__u32 *words = calloc((n + 31) / 32, sizeof(*words));
	bool *on = calloc(n, sizeof(*on));
	struct ue_status_reg reg;
	long long t0 = ue_now_ms(), end;
	int i, round, fd, count0, count;
	__u32 index;
	char cmd[64];

	ASSERT_NE(NULL, status_index);
	ASSERT_NE(NULL, words);
	ASSERT_NE(NULL, on);
	count0 = ue_count_events();
	ASSERT_LE(0, count0);
	fd = ue_open_data();
	ASSERT_NE(-1, fd);

	/* Each a new write index; every fourth one on the status page too */
	for (i = 0; i < n; i++) {
		snprintf(cmd, sizeof(cmd), MANY "%d u32 a", i);
		words[i / 32] |= 1U << (i % 32);
		ASSERT_EQ(0, ue_reg_bit(fd, cmd, &words[i / 32], 4, i % 32, 0,
					&index));
		ASSERT_EQ(i, index);
		ASSERT_FALSE(ue_bit(&words[i / 32], 4, i % 32));
		if (i % 4)
			continue;
		ASSERT_EQ(0, ue_reg(fd, cmd, &reg));
		ASSERT_EQ(i, reg.write_index);
		status_index[i] = reg.status_index;
	}
	t0 = ue_now_ms() - t0;

	/* All at once, through the system's enable file */
	ASSERT_EQ(0, ue_write_file(sys_enable, "1\n", O_TRUNC));
	for (i = 0; i < n; i++)
		on[i] = true;
	ASSERT_EQ(0, many_check(_metadata, words, on, n));
	for (i = 0; i < n; i += 4)
		ASSERT_EQ(EVENT_STATUS_FTRACE, self->status[status_index[i]]);
	ASSERT_EQ(0, ue_write_file(sys_enable, "0\n", O_TRUNC));
	memset(on, 0, n * sizeof(*on));
	ASSERT_EQ(0, many_check(_metadata, words, on, n));

	/* Random handfuls, one by one */
	for (round = 0; round < rounds; round++) {
		for (i = 0; i < n; i++) {
			on[i] = rand() % 8 == 0;
			if (!on[i])
				continue;
			snprintf(cmd, sizeof(cmd), MANY "%d", i);
			ASSERT_EQ(0, ue_enable(NULL, cmd, true));
		}
		ASSERT_EQ(0, many_check(_metadata, words, on, n)) {
			TH_LOG("round %d, enabled", round);
		}
		for (i = 0; i < n; i += 4)
			ASSERT_EQ(on[i] ? EVENT_STATUS_FTRACE : 0,
				  self->status[status_index[i]]);
		for (i = 0; i < n; i++) {
			if (!on[i])
				continue;
			snprintf(cmd, sizeof(cmd), MANY "%d", i);
			ASSERT_EQ(0, ue_enable(NULL, cmd, false));
			on[i] = false;
		}
		ASSERT_EQ(0, many_check(_metadata, words, on, n)) {
			TH_LOG("round %d, disabled", round);
		}
	}

	/* Unregistered, enabled: the bits stay clear */
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, ue_unreg_bit(fd, &words[i / 32], i % 32));
	ASSERT_EQ(0, ue_write_file(sys_enable, "1\n", O_TRUNC));
	ASSERT_EQ(0, many_check(_metadata, words, on, n));
	ASSERT_EQ(0, ue_write_file(sys_enable, "0\n", O_TRUNC));

	/* Nothing is left once the fd is closed and the events deleted */
	close(fd);
	end = ue_now_ms() + UE_WAIT_MS;
	do {
		ue_cleanup_events(MANY);
		count = ue_count_events();
		if (count != count0)
			usleep(1000);
	} while (count != count0 && ue_now_ms() < end);
	ASSERT_EQ(count0, count);
	ue_msg("%d events on one fd registered in %lld ms, %d rounds\n", n,
	       t0, rounds);
	free(status_index);
	free(words);
	free(on);
}

TEST_HARNESS_MAIN
