// SPDX-License-Identifier: GPL-2.0
/*
 * user_events_bench: what a user event costs.
 *
 * Every row is measured in the same boot and given in ns per event and as
 * a ratio to a bare write() of the same size (write index or marker id plus
 * payload) to /dev/null.  The rows: the disabled check (a load of the
 * status byte and a branch); user_events write() and writev() with nothing,
 * ftrace, perf or an eBPF program attached; the same payload written to
 * trace_marker_raw and passed to a function of this program that has a
 * uprobe; writes with 1, 100 and 4095 registered events and the cost of
 * registering them; one and two threads writing the same or two events,
 * beside two threads writing /dev/null and trace_marker_raw;
 * the same write() and disabled check for an event registered with an
 * enable bit (the registration layout of Linux 6.4+); the time ftrace
 * takes to enable and disable an event that 1, 100 or 1000 processes
 * registered, with an enable bit each or with the status page; a
 * process with 32768 enable bits: registering them, its fork()+exit, and
 * enabling an unrelated event meanwhile; and batched writes (phase batch):
 * what a record of a 12-byte event costs in batches of 1, 8, 64 and 512
 * records (one write() each), against a trace_marker_raw write(), a
 * single user_events write() and the same 64 records submitted as 64
 * write SQEs of io_uring with one io_uring_enter() (which Linux 6.1 hands
 * to io-wq's worker threads; the same SQEs to /dev/null, which it issues
 * inline, give an estimate of an inline write), with ftrace and then
 * perf attached.
 *
 * Under TCG, switching a tracer on or off patches kernel text, which QEMU
 * pays for by retranslating.  So each phase switches the tracer state once,
 * warms up, then measures its rows round by round, each round interleaved
 * with the bare write() of the same size (odd rounds in reverse order).  A
 * row's ratio is the median of its per-round ratios, its ns per event the
 * median of its per-round times.
 *
 * The table (markdown) goes to stdout, progress to stderr.  Needs root,
 * tracefs and a kernel with user_events, perf, BPF and uprobe events.
 *
 * On a kernel without the enable bit layout (DIAG_IOCSREG refuses a
 * 28-byte struct user_reg with EINVAL) the rows that need it are skipped.
 * Without batches (a write of the USER_EVENT_BATCH marker alone fails)
 * the batch phase is skipped; without io_uring (io_uring_setup() fails,
 * with ENOSYS where CONFIG_IO_URING is off) only its io_uring rows are.
 *
 * Usage: user_events_bench [-r ROUNDS] [-t MS] [-w MS] [-n EVENTS]
 *                          [-N PROCS] [-p LIST]
 * LIST: idle,ftrace,threads,events,perf,perfrec,bpf,uprobe,enable,bits,batch
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/perf_event.h>
#include <linux/types.h>
/* The status page layout of struct user_reg */
#define USER_EVENTS_STATUS_PAGE_ABI
#include <linux/user_events.h>

#include "user_events_bench.h"

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define BENCH_PAGE		4096
#define MAX_ROUNDS		201
#define MAX_OPS			28
#define NR_SIZES		4
/* What a write carries before the payload: write index or marker id */
#define HDR			sizeof(__u32)
#define MAX_PAYLOAD		4000
/* trace_marker_raw refuses more than 3072 bytes and cuts at 1024 */
#define MARKER_MAX		(1024 - HDR)
#define EVENTS_MAX		4095
#define PERF_RING_PAGES		16
#define UPROBE_GROUP		"ue_bench"
#define UPROBE_EVENT		"target"
#define EVENT_A			"ue_bench_a"
#define EVENT_B			"ue_bench_b"
#define EVENT_FIELDS		" u64 seq"
/* The events of the enable phase: registered by enable bit or status page */
#define EVENT_EN_BIT		"ue_bench_en_bit"
#define EVENT_EN_STATUS		"ue_bench_en_status"
/* The event of the bits phase, with BITS_MAX enable bits in one process */
#define EVENT_BITS		"ue_bench_bits"
#define BITS_MAX		32768
/* Registrations timed around each n of the bits phase, and forks at most */
#define BITS_AT			9
#define BITS_FORKS		50
#define PROCS_DEFAULT		1000
#define PROCS_MAX		4000
/* How long a registering process's bit may take to follow a switch */
#define EN_WAIT_NS		10e9
/*
 * Pause before each switch of the enable phase.  A tracepoint that gets
 * its first probe soon after it lost its last one (of any tracepoint)
 * waits for RCU and SRCU grace periods (tp_rcu_cond_sync() in
 * kernel/tracepoint.c), about 15 ms in the test VM: without a pause every
 * enable would measure that wait.
 */
#define EN_PAUSE_US		50000
/* The event of the batch phase: 12 bytes of payload, three u32 */
#define EVENT_BATCH		"ue_bench_batch"
#define BATCH_FIELDS		" u32 a; u32 b; u32 c"
#define BATCH_PAYLOAD		12
/* One record of a batch: its header and payload */
#define BATCH_REC		(sizeof(struct user_batch_record) + BATCH_PAYLOAD)
#define NR_BATCHES		4
#define BATCH_RECORDS_MAX	512
/* SQEs of the io_uring submission, as many as records of a middle batch */
#define URING_SQES		64

static const int sizes[NR_SIZES] = { 8, 64, 512, MAX_PAYLOAD };
static const int batch_sizes[NR_BATCHES] = { 1, 8, URING_SQES,
					     BATCH_RECORDS_MAX };

/* Settings, from the command line or the environment */
static struct {
	int rounds;		/* measured rounds per phase */
	int ms;			/* target duration of one measurement */
	int warmup_ms;		/* warm-up after a tracer switch */
	int events;		/* largest number of registered events */
	int procs;		/* most registering processes (enable phase) */
	char phases[256];	/* comma-separated phases to run, or "all" */
} cfg = { 31, 20, 1000, EVENTS_MAX, PROCS_DEFAULT, "all" };

static const char *tracefs;

struct ring;

enum op_kind {
	OP_NULL, OP_CHECK, OP_BIT_CHECK, OP_WRITE, OP_WRITEV, OP_MARKER,
	OP_UPROBE, OP_BATCH, OP_URING,
};

/**
 * struct op - one measured row of a phase
 * @kind: what one iteration does
 * @name: label in the table
 * @fd: file written to
 * @size: payload bytes
 * @base: the bare write of the same size in the same phase, or NULL
 * @records: events one iteration writes (a batch, an io_uring
 *	submission), 0 for one
 * @ring: the io_uring of an OP_URING
 * @iters: iterations of one measurement
 * @ns: ns per event, per round
 */
struct op {
	enum op_kind kind;
	const char *name;
	int fd;
	int size;
	struct op *base;
	int records;
	struct ring *ring;
	long iters;
	double ns[MAX_ROUNDS];
};

/* Write index 0 (of every fd) or the marker id, then the payload */
static __u8 ue_buf[HDR + MAX_PAYLOAD];
static __u8 marker_buf[HDR + MAX_PAYLOAD];
static const __u8 *status_page;
static int status_index;
static int null_fd = -1, marker_fd = -1;
/* ue_fd[0] has A, ue_fd[1] has B, ue_fd[2] has A again (all at index 0) */
static int ue_fd[3] = { -1, -1, -1 };
static int perf_fd = -1, bpf_prog_fd = -1;
static void *perf_ring;
static bool enabled_a, enabled_b, enabled_batch, uprobe_made;
static int fillers;		/* filler events registered on ue_fd[0] */
/*
 * Event A registered again, with an enable bit: bit 0 of enable_word, at
 * write index 0 of bit_fd.  bit_abi: the kernel has the enable bit layout.
 */
static int bit_fd = -1;
static __u32 enable_word;
static bool bit_abi, bit_registered;
static double reg_ns[EVENTS_MAX + 2];	/* by event count after it */

/* Results that targets and notes compare across phases */
static struct {
	double null_ns[NR_SIZES];
	double check_x;
	double ftrace_x[NR_SIZES], ftrace_v_x[NR_SIZES];
	double write_vs_marker[NR_SIZES], writev_vs_write[NR_SIZES];
	double writev_extra[NR_SIZES];
	double bit_vs_status[NR_SIZES];
	double perf_x[NR_SIZES];
	double events_x[3];
	int events_n[3];
	double speedup_two_events;
	int reg_lo, reg_hi;
	double reg_lo_ns, reg_hi_ns;
	double bits_busy_x;
	/* batch phase, [0] with ftrace, [1] with perf */
	double batch_vs_marker[2], batch_vs_uring[2], batch_vs_inline[2];
	double batch1_vs_write[2];
} res;

struct row {
	char phase[12];
	char name[64];
	char payload[16];
	double ns;
	double x;
	char note[128];
};

static struct row rows[160];
static int nr_rows;

struct target {
	char what[80];
	char limit[24];
	char value[24];
	int met;		/* 1 yes, 0 no, -1 not measured */
};

static struct target targets[32];
static int nr_targets;

static void die(const char *fmt, ...)
{
	va_list ap;
	int err = errno;

	va_start(ap, fmt);
	fprintf(stderr, "user_events_bench: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (%s)\n", strerror(err));
	va_end(ap);
	exit(1);
}

static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "bench: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* --- tracefs ------------------------------------------------------------ */

static const char *tpath(const char *fmt, ...)
{
	static char path[4][512];
	static int slot;
	char *buf = path[slot++ & 3];
	va_list ap;
	int len;

	len = snprintf(buf, sizeof(path[0]), "%s/", tracefs);
	va_start(ap, fmt);
	vsnprintf(buf + len, sizeof(path[0]) - len, fmt, ap);
	va_end(ap);
	return buf;
}

/* Write @text to a file; 0 or errno */
static int put_file(const char *path, const char *text, int flags)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | flags);
	ssize_t len = strlen(text);
	int ret = 0;

	if (fd < 0)
		return errno;
	if (write(fd, text, len) != len)
		ret = errno ? errno : EIO;
	close(fd);
	return ret;
}

/* First line of a file, without its newline; "" if it cannot be read */
static const char *get_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (f) {
		if (!fgets(buf, size, f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static void find_tracefs(void)
{
	static const char * const roots[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	char path[256];
	int i;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/user_events_data", roots[i]);
		if (!access(path, F_OK)) {
			tracefs = roots[i];
			return;
		}
	}
	errno = ENOENT;
	die("no user_events_data in tracefs");
}

/* --- user_events -------------------------------------------------------- */

/* Register @cmd on @fd; the write index, or -errno */
static int ue_register(int fd, const char *cmd, int *status)
{
	struct user_reg reg = {
		.size = sizeof(reg),
		.name_args = (__u64)(unsigned long)cmd,
	};

	if (ioctl(fd, DIAG_IOCSREG, &reg) < 0)
		return -errno;
	if (status)
		*status = reg.status_index;
	return reg.write_index;
}

static int ue_delete(const char *name)
{
	int fd = open(tpath("user_events_data"), O_RDWR | O_CLOEXEC);
	int ret = 0;

	if (fd < 0)
		return errno;
	if (ioctl(fd, DIAG_IOCSDEL, name) < 0)
		ret = errno;
	close(fd);
	return ret;
}

static int ue_open_reg(const char *name)
{
	char cmd[128];
	int fd = open(tpath("user_events_data"), O_RDWR | O_CLOEXEC);
	int idx;

	if (fd < 0)
		die("open user_events_data");
	snprintf(cmd, sizeof(cmd), "%s%s", name, EVENT_FIELDS);
	idx = ue_register(fd, cmd,
			  strcmp(name, EVENT_A) ? NULL : &status_index);
	if (idx != 0) {
		errno = idx < 0 ? -idx : EPROTO;
		die("register %s (write index %d)", name, idx);
	}
	return fd;
}

static void ftrace_enable(const char *name, bool on)
{
	int err = put_file(tpath("events/user_events/%s/enable", name),
			   on ? "1\n" : "0\n", O_TRUNC);

	if (err) {
		errno = err;
		die("%s ftrace on %s", on ? "enable" : "disable", name);
	}
	if (!strcmp(name, EVENT_A))
		enabled_a = on;
	else if (!strcmp(name, EVENT_B))
		enabled_b = on;
	else
		enabled_batch = on;
}

static int event_id(const char *path)
{
	char buf[32];

	return atoi(get_line(path, buf, sizeof(buf)));
}

static __u8 status_of_a(void)
{
	return __atomic_load_n(&status_page[status_index], __ATOMIC_RELAXED);
}

static bool bit_of_a(void)
{
	return __atomic_load_n(&enable_word, __ATOMIC_RELAXED) & 1;
}

/*
 * Register event A on bit_fd with bit 0 of enable_word, if the kernel has
 * the enable bit layout: it must then be write index 0 of bit_fd.
 */
static void bit_register_a(void)
{
	char cmd[128];
	int idx;

	bit_fd = open(tpath("user_events_data"), O_RDWR | O_CLOEXEC);
	if (bit_fd < 0)
		die("open user_events_data");
	snprintf(cmd, sizeof(cmd), "%s%s", EVENT_A, EVENT_FIELDS);
	idx = ue_bit_register(bit_fd, cmd, &enable_word, 0);
	if (idx == -EINVAL) {
		say("no enable bit layout (28-byte DIAG_IOCSREG: EINVAL): rows skipped");
		close(bit_fd);
		bit_fd = -1;
		return;
	}
	if (idx != 0) {
		errno = idx < 0 ? -idx : EPROTO;
		die("register %s with an enable bit (write index %d)",
		    EVENT_A, idx);
	}
	bit_abi = true;
	bit_registered = true;
}

static void bit_unregister_a(void)
{
	int err;

	if (!bit_registered)
		return;
	err = ue_bit_unregister(bit_fd, &enable_word, 0);
	if (err)
		say("unregistering the enable bit of %s: %s", EVENT_A,
		    strerror(err));
	bit_registered = false;
}

/* --- perf and eBPF ------------------------------------------------------ */

/* perf on event @id in this task, or (@cpu >= 0) in every task on @cpu */
static int perf_open(int id, __u64 sample_type, int cpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.config = id,
		.sample_period = 1,
		.sample_type = sample_type,
		.disabled = 1,
	};
	int fd;

	fd = syscall(__NR_perf_event_open, &attr, cpu < 0 ? 0 : -1, cpu, -1,
		     PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		die("perf_event_open on event id %d, CPU %d", id, cpu);
	return fd;
}

/*
 * @full: the sample type "perf record -e user_events:NAME" asks for;
 * otherwise what ftrace records: a timestamp and the record.
 */
static void perf_attach(bool full)
{
	int id = event_id(tpath("events/user_events/%s/id", EVENT_A));
	__u64 type = PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;

	if (full)
		type |= PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CPU |
			PERF_SAMPLE_PERIOD;
	perf_fd = perf_open(id, type, -1);
	/* Mapped read-only, the ring is in overwrite mode: never full */
	perf_ring = mmap(NULL, (1 + PERF_RING_PAGES) * BENCH_PAGE, PROT_READ,
			 MAP_SHARED, perf_fd, 0);
	if (perf_ring == MAP_FAILED)
		die("mmap perf ring");
	if (ioctl(perf_fd, PERF_EVENT_IOC_ENABLE, 0))
		die("enable perf event");
}

static __u64 perf_head(void)
{
	const struct perf_event_mmap_page *meta = perf_ring;

	return __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
}

static void perf_detach(void)
{
	if (perf_ring && perf_ring != MAP_FAILED)
		munmap(perf_ring, (1 + PERF_RING_PAGES) * BENCH_PAGE);
	perf_ring = NULL;
	if (perf_fd >= 0)
		close(perf_fd);
	perf_fd = -1;
	if (bpf_prog_fd >= 0)
		close(bpf_prog_fd);
	bpf_prog_fd = -1;
}

/* A BPF_PROG_TYPE_TRACEPOINT program that returns 0, on the perf event */
static void bpf_attach(void)
{
	static char log[4096];
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;
	int id = event_id(tpath("events/user_events/%s/id", EVENT_A));

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_TRACEPOINT;
	attr.insns = (__u64)(unsigned long)insns;
	attr.insn_cnt = ARRAY_SIZE(insns);
	attr.license = (__u64)(unsigned long)"GPL";
	attr.log_buf = (__u64)(unsigned long)log;
	attr.log_size = sizeof(log);
	attr.log_level = 1;
	bpf_prog_fd = syscall(__NR_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
	if (bpf_prog_fd < 0) {
		fprintf(stderr, "%s\n", log);
		die("BPF_PROG_LOAD");
	}
	perf_fd = perf_open(id, PERF_SAMPLE_RAW, -1);
	if (ioctl(perf_fd, PERF_EVENT_IOC_SET_BPF, bpf_prog_fd))
		die("PERF_EVENT_IOC_SET_BPF");
	if (ioctl(perf_fd, PERF_EVENT_IOC_ENABLE, 0))
		die("enable perf event");
}

/* --- uprobe ------------------------------------------------------------- */

/*
 * The function the uprobe is on.  It is only ever called through a pointer
 * the compiler cannot see through (uprobe_call()), so it is never inlined
 * or specialised and keeps the plain calling convention the probe reads
 * its argument with.
 */
static void uprobe_target(const void *buf, size_t len)
{
	asm volatile("" : : "r" (buf), "r" (len) : "memory");
}

static void uprobe_call(const void *buf, size_t len)
{
	void (*fn)(const void *buf, size_t len) = uprobe_target;

	asm volatile("" : "+r" (fn));
	fn(buf, len);
}

/* File and offset of uprobe_target() in it, from /proc/self/maps */
static void uprobe_location(char *file, size_t size, unsigned long *offset)
{
	unsigned long addr = (unsigned long)uprobe_target;
	unsigned long start, end, pgoff;
	char line[1024], path[512];
	FILE *maps = fopen("/proc/self/maps", "re");

	if (!maps)
		die("open /proc/self/maps");
	while (fgets(line, sizeof(line), maps)) {
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %511s",
			   &start, &end, &pgoff, path) != 4)
			continue;
		if (addr >= start && addr < end) {
			snprintf(file, size, "%s", path);
			*offset = addr - start + pgoff;
			fclose(maps);
			return;
		}
	}
	fclose(maps);
	errno = ENOENT;
	die("uprobe_target() is in no mapped file");
}

static void uprobe_remove(void)
{
	put_file(tpath("events/%s/%s/enable", UPROBE_GROUP, UPROBE_EVENT),
		 "0\n", O_TRUNC);
	put_file(tpath("uprobe_events"), "-:" UPROBE_GROUP "/" UPROBE_EVENT "\n",
		 O_APPEND);
	uprobe_made = false;
}

/* The probe records the first 8 bytes of the payload, like the events */
static void uprobe_attach(void)
{
	char file[512], cmd[768];
	unsigned long offset;
	int err;

	uprobe_location(file, sizeof(file), &offset);
	snprintf(cmd, sizeof(cmd), "p:%s/%s %s:0x%lx seq=+0(%%di):u64\n",
		 UPROBE_GROUP, UPROBE_EVENT, file, offset);
	err = put_file(tpath("uprobe_events"), cmd, O_APPEND);
	if (err) {
		errno = err;
		die("create uprobe: %s", cmd);
	}
	uprobe_made = true;
	err = put_file(tpath("events/%s/%s/enable", UPROBE_GROUP, UPROBE_EVENT),
		       "1\n", O_TRUNC);
	if (err) {
		errno = err;
		die("enable uprobe");
	}
}

/* Hits of our uprobe, from uprobe_profile ("file event hits") */
static long uprobe_hits(void)
{
	char line[1024], name[256];
	FILE *f = fopen(tpath("uprobe_profile"), "re");
	long hits = -1, n;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %255s %ld", name, &n) == 2 &&
		    !strcmp(name, UPROBE_EVENT))
			hits = n;
	}
	fclose(f);
	return hits;
}

/* --- batches and io_uring ----------------------------------------------- */

/*
 * The event of the batch phase, at write index 0 of batch_fd, which
 * writes it one record at a time, in batches and through io_uring.
 * batch_buf holds a batch of BATCH_RECORDS_MAX records: its first n
 * records make a batch of n.
 */
static int batch_fd = -1, batch_status;
static __u8 batch_buf[HDR + BATCH_RECORDS_MAX * BATCH_REC];

/*
 * The same records written through io_uring: URING_SQES write SQEs, each
 * the [write index][payload] of one write(), submitted and waited for
 * with one io_uring_enter().  Kernel selftests do not link liburing: the
 * rings are set up with the raw system calls and the UAPI header.  The
 * SQEs and the SQ array never change and are filled once, as batch_buf
 * is built once: the rows measure what the kernel does with them.
 *
 * Linux 6.1 issues no such write inline, whatever the fd's flags.
 * user_events_data is a regular file (of tracefs), and io_write()
 * (io_uring/rw.c) hands a buffered write of a regular file to an io-wq
 * worker thread unless the file has FMODE_BUF_WASYNC, which tracefs does
 * not set.  Without CONFIG_BLOCK, as in the test kernel,
 * __io_file_supports_nowait() (io_uring/io_uring.c) even says that no
 * regular file can be written without blocking, and O_NONBLOCK, which
 * lets a character device or a pipe be written inline, then only makes
 * each SQE complete with -EAGAIN instead of going to the worker.  So
 * ue_ring writes through batch_fd, opened without O_NONBLOCK, and its
 * rows measure what 6.1 does: every write made by a worker thread of
 * io-wq, on whichever CPU, while io_uring_enter() waits for them.
 * What io_uring costs when it does write inline is measured with
 * null_ring: the same SQEs to /dev/null opened with O_NONBLOCK (a
 * character device), from which batch_measure() estimates an inline
 * write to user_events_data.
 */
struct ring {
	int fd;			/* the ring, -1 if there is none */
	int data_fd;		/* what the SQEs write to */
	__u8 *sq_ring, *cq_ring;	/* the same mapping, or two */
	size_t sq_size, cq_size;	/* cq_size 0: one mapping */
	struct io_uring_sqe *sqes;
	__u32 *sq_tail, *cq_head, *cq_tail;
	struct io_uring_cqe *cqes;
	__u32 cq_mask;
	__u32 tail;		/* the SQ tail this program wrote last */
};

static struct ring ue_ring = { .fd = -1, .data_fd = -1 };
static struct ring null_ring = { .fd = -1, .data_fd = -1 };
/* The errno of io_uring_setup() if there are no rings */
static int uring_err;

static void *uring_map(const struct ring *r, size_t size, __u64 offset)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, offset);

	if (p == MAP_FAILED)
		die("mmap io_uring at %#llx", (unsigned long long)offset);
	return p;
}

/*
 * A ring of URING_SQES entries whose SQEs write to @data_fd, which is
 * closed with the ring unless it is batch_fd: 0 or the errno of
 * io_uring_setup()
 */
static int uring_setup(struct ring *r, int data_fd)
{
	struct io_uring_params p;
	struct io_uring_sqe *sqe;
	__u32 *array;
	int i;

	r->data_fd = data_fd;
	memset(&p, 0, sizeof(p));
	r->fd = syscall(__NR_io_uring_setup, URING_SQES, &p);
	if (r->fd < 0)
		return errno;
	if (p.sq_entries != URING_SQES) {
		errno = EPROTO;
		die("io_uring_setup(%d) made %u SQ entries", URING_SQES,
		    p.sq_entries);
	}
	r->sq_size = p.sq_off.array + p.sq_entries * sizeof(__u32);
	r->cq_size = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	/* Both rings in one mapping, where the kernel offers it (5.4+) */
	if (p.features & IORING_FEAT_SINGLE_MMAP) {
		if (r->cq_size > r->sq_size)
			r->sq_size = r->cq_size;
		r->cq_size = 0;
	}
	r->sq_ring = uring_map(r, r->sq_size, IORING_OFF_SQ_RING);
	r->cq_ring = r->cq_size ? uring_map(r, r->cq_size, IORING_OFF_CQ_RING) :
				  r->sq_ring;
	r->sqes = uring_map(r, URING_SQES * sizeof(*r->sqes), IORING_OFF_SQES);

	r->sq_tail = (__u32 *)(r->sq_ring + p.sq_off.tail);
	r->tail = *r->sq_tail;
	array = (__u32 *)(r->sq_ring + p.sq_off.array);
	r->cq_head = (__u32 *)(r->cq_ring + p.cq_off.head);
	r->cq_tail = (__u32 *)(r->cq_ring + p.cq_off.tail);
	r->cq_mask = *(__u32 *)(r->cq_ring + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(r->cq_ring + p.cq_off.cqes);

	/* Every submission takes all the entries: slot i is always SQE i */
	for (i = 0; i < URING_SQES; i++) {
		sqe = &r->sqes[i];
		memset(sqe, 0, sizeof(*sqe));
		sqe->opcode = IORING_OP_WRITE;
		sqe->fd = data_fd;
		sqe->addr = (__u64)(unsigned long)ue_buf;
		sqe->len = HDR + BATCH_PAYLOAD;
		/* No file position: both files are streams */
		sqe->off = (__u64)-1;
		sqe->user_data = i;
		array[i] = i;
	}
	return 0;
}

static void uring_teardown(struct ring *r)
{
	if (r->sqes)
		munmap(r->sqes, URING_SQES * sizeof(*r->sqes));
	if (r->cq_size && r->cq_ring)
		munmap(r->cq_ring, r->cq_size);
	if (r->sq_ring)
		munmap(r->sq_ring, r->sq_size);
	r->sqes = NULL;
	r->sq_ring = NULL;
	r->cq_ring = NULL;
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	if (r->data_fd >= 0 && r->data_fd != batch_fd)
		close(r->data_fd);
	r->data_fd = -1;
}

/*
 * Worker threads of io-wq in this process ("iou-wrk-PID"): io_uring
 * starts them for the requests it does not issue inline.
 */
static int uring_workers(void)
{
	char path[320], comm[32];
	struct dirent *de;
	DIR *dir = opendir("/proc/self/task");
	int n = 0;

	if (!dir)
		return -1;
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 de->d_name);
		if (!strncmp(get_line(path, comm, sizeof(comm)), "iou-wrk-", 8))
			n++;
	}
	closedir(dir);
	return n;
}

/*
 * The batch phase's perf: an event on each CPU, for every task, as
 * "perf record -a" opens them, so that the writes io-wq's workers make
 * for ue_ring are sampled too (an event of this task alone, like the
 * perf phase's, would miss them).
 */
#define BATCH_PERF_CPUS		64
static int bperf_fd[BATCH_PERF_CPUS];
static void *bperf_ring[BATCH_PERF_CPUS];
static int bperf_cpus;

static void batch_perf_attach(void)
{
	int id = event_id(tpath("events/user_events/%s/id", EVENT_BATCH));
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int cpu;

	if (ncpu < 1 || ncpu > BATCH_PERF_CPUS) {
		errno = ERANGE;
		die("%ld CPUs for the batch phase's perf events", ncpu);
	}
	for (cpu = 0; cpu < ncpu; cpu++) {
		bperf_fd[cpu] = perf_open(id, PERF_SAMPLE_TIME | PERF_SAMPLE_RAW,
					  cpu);
		bperf_cpus = cpu + 1;
		/* Read-only: an overwriting ring, never full */
		bperf_ring[cpu] = mmap(NULL, (1 + PERF_RING_PAGES) * BENCH_PAGE,
				       PROT_READ, MAP_SHARED, bperf_fd[cpu], 0);
		if (bperf_ring[cpu] == MAP_FAILED) {
			bperf_ring[cpu] = NULL;
			die("mmap perf ring of CPU %d", cpu);
		}
	}
	for (cpu = 0; cpu < bperf_cpus; cpu++) {
		if (ioctl(bperf_fd[cpu], PERF_EVENT_IOC_ENABLE, 0))
			die("enable perf event of CPU %d", cpu);
	}
}

static void batch_perf_detach(void)
{
	int cpu;

	for (cpu = 0; cpu < bperf_cpus; cpu++) {
		if (bperf_ring[cpu])
			munmap(bperf_ring[cpu],
			       (1 + PERF_RING_PAGES) * BENCH_PAGE);
		bperf_ring[cpu] = NULL;
		close(bperf_fd[cpu]);
	}
	bperf_cpus = 0;
}

/* Bytes of samples in the perf rings of the batch phase */
static long batch_perf_count(void)
{
	const struct perf_event_mmap_page *meta;
	long bytes = 0;
	int cpu;

	for (cpu = 0; cpu < bperf_cpus; cpu++) {
		meta = bperf_ring[cpu];
		bytes += __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	}
	return bytes;
}

/*
 * Register EVENT_BATCH on batch_fd, build the batch and the rings; false
 * if the kernel has no batches.
 */
static bool batch_setup(void)
{
	struct user_batch_record rec = { .size = BATCH_PAYLOAD };
	__u32 marker = USER_EVENT_BATCH, v[3];
	__u8 *p = batch_buf;
	char cmd[128];
	ssize_t ret;
	int idx, i, fd;

	ue_delete(EVENT_BATCH);
	snprintf(cmd, sizeof(cmd), "%s%s", EVENT_BATCH, BATCH_FIELDS);
	batch_fd = open(tpath("user_events_data"), O_RDWR | O_CLOEXEC);
	if (batch_fd < 0)
		die("open user_events_data");
	idx = ue_register(batch_fd, cmd, &batch_status);
	if (idx) {
		errno = idx < 0 ? -idx : EPROTO;
		die("register %s (write index %d)", EVENT_BATCH, idx);
	}

	/* The marker alone is an empty batch, 4 bytes consumed */
	ret = write(batch_fd, &marker, sizeof(marker));
	if (ret != sizeof(marker)) {
		say("phase batch: no batches (a write of the marker alone: %s), skipped",
		    ret < 0 ? strerror(errno) : "not 4");
		return false;
	}
	memcpy(p, &marker, sizeof(marker));
	p += sizeof(marker);
	for (i = 0; i < BATCH_RECORDS_MAX; i++) {
		v[0] = i;
		v[1] = BATCH_RECORDS_MAX;
		v[2] = 0x75757575;
		memcpy(p, &rec, sizeof(rec));
		memcpy(p + sizeof(rec), v, BATCH_PAYLOAD);
		p += BATCH_REC;
	}

	/*
	 * ENOSYS: a kernel without CONFIG_IO_URING.  Whatever the error, the
	 * io_uring rows are said not to be measured and the rest goes on.
	 */
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		die("open /dev/null");
	uring_err = uring_setup(&null_ring, fd);
	if (!uring_err)
		uring_err = uring_setup(&ue_ring, batch_fd);
	if (uring_err) {
		uring_teardown(&ue_ring);
		uring_teardown(&null_ring);
		say("phase batch: io_uring_setup(): %s: the io_uring rows cannot be measured",
		    strerror(uring_err));
	}
	return true;
}

static void batch_teardown(void)
{
	bool made = batch_fd >= 0;

	batch_perf_detach();
	uring_teardown(&ue_ring);
	uring_teardown(&null_ring);
	if (enabled_batch)
		put_file(tpath("events/user_events/%s/enable", EVENT_BATCH),
			 "0\n", O_TRUNC);
	enabled_batch = false;
	if (batch_fd >= 0)
		close(batch_fd);
	batch_fd = -1;
	if (made)
		ue_delete(EVENT_BATCH);
}

/* --- measuring ---------------------------------------------------------- */

static void op_failed(const struct op *op, long ret)
{
	if (ret >= 0)
		errno = EIO;
	die("%s, %d B payload: returned %ld", op->name, op->size, ret);
}

/* Submit the URING_SQES writes, wait for them, check and reap the CQEs */
static void uring_submit(const struct op *op)
{
	struct ring *r = op->ring;
	const struct io_uring_cqe *cqe;
	__u32 head, tail;
	long ret;

	r->tail += URING_SQES;
	__atomic_store_n(r->sq_tail, r->tail, __ATOMIC_RELEASE);
	ret = syscall(__NR_io_uring_enter, r->fd, URING_SQES, URING_SQES,
		      IORING_ENTER_GETEVENTS, NULL, 0);
	if (ret != URING_SQES)
		op_failed(op, ret);
	head = *r->cq_head;
	tail = __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE);
	if (tail - head != URING_SQES)
		op_failed(op, tail - head);
	for (; head != tail; head++) {
		cqe = &r->cqes[head & r->cq_mask];
		if (cqe->res != (int)(HDR + BATCH_PAYLOAD)) {
			errno = -cqe->res;
			op_failed(op, cqe->res);
		}
	}
	__atomic_store_n(r->cq_head, head, __ATOMIC_RELEASE);
}

static void op_run(const struct op *op, long n)
{
	size_t len = HDR + op->size;
	struct iovec iov[2] = {
		{ .iov_base = ue_buf, .iov_len = HDR },
		{ .iov_base = ue_buf + HDR, .iov_len = op->size },
	};
	const __u8 *buf = op->kind == OP_MARKER ? marker_buf : ue_buf;
	const __u8 *status = status_page + status_index;
	ssize_t ret;
	long i;

	switch (op->kind) {
	case OP_NULL:
	case OP_WRITE:
	case OP_MARKER:
		for (i = 0; i < n; i++) {
			ret = write(op->fd, buf, len);
			if (ret != (ssize_t)len)
				op_failed(op, ret);
		}
		break;
	case OP_WRITEV:
		for (i = 0; i < n; i++) {
			ret = writev(op->fd, iov, 2);
			if (ret != (ssize_t)len)
				op_failed(op, ret);
		}
		break;
	case OP_CHECK:
		/* What an instrumented program does for a disabled event */
		for (i = 0; i < n; i++) {
			if (__atomic_load_n(status, __ATOMIC_RELAXED) &&
			    write(op->fd, buf, len) < 0)
				op_failed(op, -1);
		}
		break;
	case OP_BIT_CHECK:
		/* The same with an enable bit: a load, a bit test, a branch */
		for (i = 0; i < n; i++) {
			if ((__atomic_load_n(&enable_word, __ATOMIC_RELAXED) & 1) &&
			    write(op->fd, buf, len) < 0)
				op_failed(op, -1);
		}
		break;
	case OP_UPROBE:
		for (i = 0; i < n; i++)
			uprobe_call(buf + HDR, op->size);
		break;
	case OP_BATCH:
		len = HDR + op->records * BATCH_REC;
		for (i = 0; i < n; i++) {
			ret = write(op->fd, batch_buf, len);
			if (ret != (ssize_t)len)
				op_failed(op, ret);
		}
		break;
	case OP_URING:
		for (i = 0; i < n; i++)
			uring_submit(op);
		break;
	}
}

static double op_time(const struct op *op, long n)
{
	double t0 = now_ns();

	op_run(op, n);
	return now_ns() - t0;
}

/* Iterations that take about cfg.ms */
static void calibrate(struct op *op)
{
	double t, target = cfg.ms * 1e6;
	long n = 1;

	for (;;) {
		t = op_time(op, n);
		if (t >= target / 8 || n >= (1L << 34))
			break;
		n *= 2;
	}
	op->iters = n * target / (t > 1 ? t : 1);
	if (op->iters < 1)
		op->iters = 1;
}

/* After a tracer switch: run the phase's rows until the code is translated */
static void warm_up(struct op *ops, int nr)
{
	double end;
	int i;

	for (i = 0; i < nr; i++)
		calibrate(&ops[i]);
	end = now_ns() + cfg.warmup_ms * 1e6;
	while (now_ns() < end) {
		for (i = 0; i < nr; i++)
			op_run(&ops[i], ops[i].iters / 4 + 1);
	}
	for (i = 0; i < nr; i++)
		calibrate(&ops[i]);
}

static void measure(struct op *ops, int nr)
{
	int r, k, i;

	warm_up(ops, nr);
	for (r = 0; r < cfg.rounds; r++) {
		for (k = 0; k < nr; k++) {
			i = r & 1 ? nr - 1 - k : k;
			ops[i].ns[r] = op_time(&ops[i], ops[i].iters) /
				       ops[i].iters /
				       (ops[i].records ? ops[i].records : 1);
		}
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
	double s[MAX_ROUNDS];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n & 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static double op_ns(const struct op *op)
{
	return median(op->ns, cfg.rounds);
}

/* Median over the rounds of a's time over b's */
static double ratio(const struct op *a, const struct op *b)
{
	double q[MAX_ROUNDS];
	int r;

	for (r = 0; r < cfg.rounds; r++)
		q[r] = a->ns[r] / b->ns[r];
	return median(q, cfg.rounds);
}

/* --- the table ---------------------------------------------------------- */

static struct row *add_row(const char *phase, const char *name, int size,
			   double ns, double x)
{
	struct row *row = &rows[nr_rows++];

	if (nr_rows > (int)ARRAY_SIZE(rows))
		abort();
	snprintf(row->phase, sizeof(row->phase), "%s", phase);
	snprintf(row->name, sizeof(row->name), "%s", name);
	if (size >= 0)
		snprintf(row->payload, sizeof(row->payload), "%d B", size);
	else
		snprintf(row->payload, sizeof(row->payload), "-");
	row->ns = ns;
	row->x = x;
	row->note[0] = '\0';
	return row;
}

static struct row *add_op_row(const char *phase, const struct op *op)
{
	bool check = op->kind == OP_CHECK || op->kind == OP_BIT_CHECK;

	return add_row(phase, op->name, check ? -1 : op->size,
		       op_ns(op), op->base ? ratio(op, op->base) : 1.0);
}

static void note(struct row *row, const char *fmt, ...)
{
	size_t len = strlen(row->note);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(row->note + len, sizeof(row->note) - len, fmt, ap);
	va_end(ap);
}

static void fmt_num(char *buf, size_t size, double v)
{
	if (v < 0)
		snprintf(buf, size, "-");
	else if (v < 0.1)
		snprintf(buf, size, "%.4f", v);
	else if (v < 100)
		snprintf(buf, size, "%.2f", v);
	else
		snprintf(buf, size, "%.0f", v);
}

/* The value of a target that was not measured */
#define NOT_MEASURED	(-1e9)

/* A target "@value <= @limit" (or >= when !@le), or NOT_MEASURED */
static void target(const char *what, double value, double limit, bool le,
		   const char *unit)
{
	struct target *t = &targets[nr_targets++];

	snprintf(t->what, sizeof(t->what), "%s", what);
	snprintf(t->limit, sizeof(t->limit), "%s %.2f%s", le ? "<=" : ">=",
		 limit, unit);
	if (value == NOT_MEASURED) {
		snprintf(t->value, sizeof(t->value), "-");
		t->met = -1;
		return;
	}
	snprintf(t->value, sizeof(t->value), "%.*f%s",
		 value >= 0 && value < 0.1 ? 4 : 2, value, unit);
	t->met = le ? value <= limit : value >= limit;
}

static void print_table(void)
{
	static const char * const met[] = { "not measured", "NO", "yes" };
	char ns[24], x[24];
	int i;

	printf("| phase | row | payload | ns/event | x null write | notes |\n");
	printf("|---|---|---:|---:|---:|---|\n");
	for (i = 0; i < nr_rows; i++) {
		fmt_num(ns, sizeof(ns), rows[i].ns);
		fmt_num(x, sizeof(x), rows[i].x);
		printf("| %s | %s | %s | %s | %s | %s |\n", rows[i].phase,
		       rows[i].name, rows[i].payload, ns, x, rows[i].note);
	}
	printf("\n| target | required | measured | met |\n");
	printf("|---|---:|---:|---|\n");
	for (i = 0; i < nr_targets; i++)
		printf("| %s | %s | %s | %s |\n", targets[i].what,
		       targets[i].limit, targets[i].value,
		       met[targets[i].met + 1]);
	fflush(stdout);
}

/* --- phases ------------------------------------------------------------- */

static bool want(const char *phase)
{
	char list[260], *tok, *save;

	if (!strcmp(cfg.phases, "all"))
		return true;
	snprintf(list, sizeof(list), "%s", cfg.phases);
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, phase))
			return true;
	}
	return false;
}

static struct op *add_op(struct op *ops, int *nr, enum op_kind kind,
			 const char *name, int fd, int size, struct op *base)
{
	struct op *op = &ops[(*nr)++];

	if (*nr > MAX_OPS)
		abort();
	memset(op, 0, sizeof(*op));
	op->kind = kind;
	op->name = name;
	op->fd = fd;
	op->size = size;
	op->base = base;
	return op;
}

static void add_null_ops(struct op *ops, int *nr, struct op **null_ops)
{
	int s;

	for (s = 0; s < NR_SIZES; s++)
		null_ops[s] = add_op(ops, nr, OP_NULL, "write() to /dev/null",
				     null_fd, sizes[s], NULL);
}

/* Nothing attached: the disabled check and the bare write */
static void phase_idle(void)
{
	struct op ops[MAX_OPS], *null_ops[NR_SIZES], *check, *w[NR_SIZES];
	struct op *bcheck = NULL;
	struct row *row;
	int nr = 0, s;

	say("phase idle: nothing attached");
	if (status_of_a() || (bit_abi && bit_of_a()))
		fprintf(stderr, "bench: warning: %s is attached to (status %#x, enable bit %d)\n",
			EVENT_A, status_of_a(), bit_abi && bit_of_a());
	add_null_ops(ops, &nr, null_ops);
	check = add_op(ops, &nr, OP_CHECK,
		       "disabled check (status byte load + branch)", ue_fd[0],
		       sizes[0], null_ops[0]);
	if (bit_abi)
		bcheck = add_op(ops, &nr, OP_BIT_CHECK,
				"disabled check (enable bit load + branch)",
				bit_fd, sizes[0], null_ops[0]);
	for (s = 0; s < NR_SIZES; s++)
		w[s] = add_op(ops, &nr, OP_WRITE, "user_events write(), idle",
			      ue_fd[0], sizes[s], null_ops[s]);
	measure(ops, nr);

	for (s = 0; s < NR_SIZES; s++) {
		res.null_ns[s] = op_ns(null_ops[s]);
		add_op_row("idle", null_ops[s]);
	}
	row = add_op_row("idle", check);
	res.check_x = row->x;
	note(row, "x null write of 8 B");
	if (bcheck) {
		row = add_op_row("idle", bcheck);
		note(row, "x null write of 8 B");
	} else {
		row = add_row("idle", "disabled check (enable bit load + branch)",
			      -1, -1, -1);
		note(row, "skipped: no enable bit layout");
	}
	for (s = 0; s < NR_SIZES; s++)
		add_op_row("idle", w[s]);
}

/* ftrace on event A: write, writev and trace_marker_raw */
static void phase_ftrace(void)
{
	struct op ops[MAX_OPS], *null_ops[NR_SIZES], *w[NR_SIZES];
	struct op *v[NR_SIZES], *m[NR_SIZES], *nv[NR_SIZES], *b[NR_SIZES];
	struct row *row, *vrow;
	int nr = 0, s;

	say("phase ftrace: %s enabled, trace_marker_raw", EVENT_A);
	ftrace_enable(EVENT_A, true);
	if (!(status_of_a() & EVENT_STATUS_FTRACE)) {
		errno = EPROTO;
		die("status byte of %s is %#x with ftrace on", EVENT_A,
		    status_of_a());
	}
	if (bit_registered && !bit_of_a()) {
		errno = EPROTO;
		die("enable bit of %s is clear with ftrace on", EVENT_A);
	}
	add_null_ops(ops, &nr, null_ops);
	for (s = 0; s < NR_SIZES; s++) {
		w[s] = add_op(ops, &nr, OP_WRITE, "user_events write(), ftrace",
			      ue_fd[0], sizes[s], null_ops[s]);
		v[s] = add_op(ops, &nr, OP_WRITEV,
			      "user_events writev(), ftrace", ue_fd[0],
			      sizes[s], null_ops[s]);
		/* what writev() itself costs over write() */
		nv[s] = add_op(ops, &nr, OP_WRITEV, "writev() to /dev/null",
			       null_fd, sizes[s], null_ops[s]);
		m[s] = NULL;
		if (sizes[s] <= (int)MARKER_MAX)
			m[s] = add_op(ops, &nr, OP_MARKER,
				      "trace_marker_raw write()", marker_fd,
				      sizes[s], null_ops[s]);
		/* the same event and path, registered with an enable bit */
		b[s] = NULL;
		if (bit_registered)
			b[s] = add_op(ops, &nr, OP_WRITE,
				      "user_events write(), ftrace, enable bit",
				      bit_fd, sizes[s], null_ops[s]);
	}
	measure(ops, nr);

	for (s = 0; s < NR_SIZES; s++) {
		res.write_vs_marker[s] = -1;
		row = add_op_row("ftrace", w[s]);
		res.ftrace_x[s] = row->x;
		if (m[s]) {
			res.write_vs_marker[s] = ratio(w[s], m[s]);
			note(row, "%.2fx trace_marker_raw",
			     res.write_vs_marker[s]);
		} else {
			note(row, "trace_marker_raw takes at most %d B",
			     (int)MARKER_MAX);
		}
		row = add_op_row("ftrace", v[s]);
		res.ftrace_v_x[s] = row->x;
		res.writev_vs_write[s] = ratio(v[s], w[s]);
		vrow = row;
		row = add_op_row("ftrace", nv[s]);
		/* what writev() adds over write() beyond the system call's own */
		res.writev_extra[s] = res.ftrace_v_x[s] - res.ftrace_x[s] -
				      (row->x - 1);
		note(vrow, "%.2fx write(), %+.2f bare writes beyond /dev/null's",
		     res.writev_vs_write[s], res.writev_extra[s]);
		if (m[s])
			add_op_row("ftrace", m[s]);
		res.bit_vs_status[s] = -1;
		if (b[s]) {
			row = add_op_row("ftrace", b[s]);
			res.bit_vs_status[s] = ratio(b[s], w[s]);
			note(row, "%.2fx status page write()",
			     res.bit_vs_status[s]);
		} else if (!s) {
			row = add_row("ftrace",
				      "user_events write(), ftrace, enable bit",
				      -1, -1, -1);
			note(row, "skipped: no enable bit layout");
		}
	}
}

/* --- threads --- */

struct worker {
	pthread_t thread;
	int cpu;
	const struct op *op;	/* NULL: sit this run out */
	long iters;
	double start, end;	/* CLOCK_MONOTONIC of the last run */
};

static struct worker workers[2];
static pthread_barrier_t go_barrier, done_barrier;
static bool workers_quit;

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	pin_to_cpu(w->cpu);
	for (;;) {
		pthread_barrier_wait(&go_barrier);
		if (workers_quit)
			return NULL;
		if (w->op) {
			w->start = now_ns();
			op_run(w->op, w->iters);
			w->end = now_ns();
		}
		pthread_barrier_wait(&done_barrier);
	}
}

/*
 * One run of the workers' current jobs: from the first start to the last
 * end, so that waking the threads is not counted but a thread that starts
 * late is.
 */
static double workers_run(void)
{
	double start = 0, end = 0;
	int i;

	pthread_barrier_wait(&go_barrier);
	pthread_barrier_wait(&done_barrier);
	for (i = 0; i < 2; i++) {
		if (!workers[i].op)
			continue;
		if (!start || workers[i].start < start)
			start = workers[i].start;
		if (workers[i].end > end)
			end = workers[i].end;
	}
	return end - start;
}

/*
 * Thread configurations: one thread, then two, each writing through an fd
 * of its own unless said otherwise.  /dev/null and trace_marker_raw show
 * how far the machine itself lets two threads scale: the user_events rows
 * are compared with them in the same rounds.
 */
struct tconf {
	const char *name;
	struct op *op[2];	/* the second is NULL for one thread */
	int one;		/* the one-thread configuration, or -1 */
};

enum {
	TC_NULL, TC_NULL2, TC_MARKER, TC_MARKER2, TC_UE, TC_UE_SHARED,
	TC_UE_SAME, TC_UE_TWO, NR_TCONF
};

static void tconf_set(const struct tconf *tc, long iters)
{
	int i;

	for (i = 0; i < 2; i++) {
		workers[i].op = tc->op[i];
		workers[i].iters = iters;
	}
}

static void phase_threads(void)
{
	double ns[NR_TCONF][MAX_ROUNDS], q[MAX_ROUNDS], speedup[NR_TCONF];
	struct op null[2], marker[2], a0, a2, b1;
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int null2_fd, marker2_fd, c, i, r;
	struct tconf tc[NR_TCONF] = {
		[TC_NULL] = { "write() to /dev/null, 1 thread",
			      { &null[0] }, -1 },
		[TC_NULL2] = { "write() to /dev/null, 2 threads",
			       { &null[0], &null[1] }, TC_NULL },
		[TC_MARKER] = { "trace_marker_raw write(), 1 thread",
				{ &marker[0] }, -1 },
		[TC_MARKER2] = { "trace_marker_raw write(), 2 threads",
				 { &marker[0], &marker[1] }, TC_MARKER },
		[TC_UE] = { "user_events write(), ftrace, 1 thread",
			    { &a0 }, -1 },
		[TC_UE_SHARED] = { "2 threads, same event, one shared fd",
				   { &a0, &a0 }, TC_UE },
		[TC_UE_SAME] = { "2 threads, same event, one fd each",
				 { &a0, &a2 }, TC_UE },
		[TC_UE_TWO] = { "2 threads, two events, one fd each",
				{ &a0, &b1 }, TC_UE },
	};
	long iters;
	double end;
	struct row *row;

	say("phase threads: %s and %s enabled, %d CPUs", EVENT_A, EVENT_B,
	    ncpu);
	ue_fd[1] = ue_open_reg(EVENT_B);
	ue_fd[2] = ue_open_reg(EVENT_A);
	ftrace_enable(EVENT_B, true);
	null2_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	marker2_fd = open(tpath("trace_marker_raw"), O_WRONLY | O_CLOEXEC);
	if (null2_fd < 0 || marker2_fd < 0)
		die("open /dev/null or trace_marker_raw");

	memset(&null[0], 0, sizeof(null[0]));
	null[0].kind = OP_NULL;
	null[0].fd = null_fd;
	null[0].size = sizes[0];
	null[1] = null[0];
	null[1].fd = null2_fd;
	marker[0] = null[0];
	marker[0].kind = OP_MARKER;
	marker[0].fd = marker_fd;
	marker[1] = marker[0];
	marker[1].fd = marker2_fd;
	a0 = null[0];
	a0.kind = OP_WRITE;
	a0.fd = ue_fd[0];
	a2 = a0;
	a2.fd = ue_fd[2];
	b1 = a0;
	b1.fd = ue_fd[1];
	for (c = 0; c < NR_TCONF; c++)
		for (i = 0; i < 2; i++)
			if (tc[c].op[i])
				tc[c].op[i]->name = tc[c].name;

	pthread_barrier_init(&go_barrier, NULL, 3);
	pthread_barrier_init(&done_barrier, NULL, 3);
	for (i = 0; i < 2; i++) {
		workers[i].cpu = i % (ncpu > 0 ? ncpu : 1);
		if (pthread_create(&workers[i].thread, NULL, worker_main,
				   &workers[i]))
			die("pthread_create");
	}

	calibrate(&a0);
	iters = a0.iters;
	end = now_ns() + cfg.warmup_ms * 1e6;
	while (now_ns() < end) {
		for (c = 0; c < NR_TCONF; c++) {
			tconf_set(&tc[c], iters / 4 + 1);
			workers_run();
		}
	}
	for (r = 0; r < cfg.rounds; r++) {
		for (i = 0; i < NR_TCONF; i++) {
			c = r & 1 ? NR_TCONF - 1 - i : i;
			tconf_set(&tc[c], iters);
			/* wall time per write, all threads together */
			ns[c][r] = workers_run() / (iters * (tc[c].op[1] ? 2 : 1));
		}
	}

	workers_quit = true;
	pthread_barrier_wait(&go_barrier);
	for (i = 0; i < 2; i++)
		pthread_join(workers[i].thread, NULL);
	pthread_barrier_destroy(&go_barrier);
	pthread_barrier_destroy(&done_barrier);

	for (c = 0; c < NR_TCONF; c++) {
		for (r = 0; r < cfg.rounds; r++)
			q[r] = ns[c][r] / ns[TC_NULL][r];
		row = add_row("threads", tc[c].name, sizes[0],
			      median(ns[c], cfg.rounds), median(q, cfg.rounds));
		speedup[c] = 0;
		if (tc[c].one < 0)
			continue;
		for (r = 0; r < cfg.rounds; r++)
			q[r] = ns[tc[c].one][r] / ns[c][r];
		speedup[c] = median(q, cfg.rounds);
		if (c == TC_UE_TWO)
			note(row, "throughput %.2fx one thread (/dev/null %.2fx, marker %.2fx)",
			     speedup[c], speedup[TC_NULL2], speedup[TC_MARKER2]);
		else
			note(row, "throughput %.2fx one thread", speedup[c]);
	}
	res.speedup_two_events = speedup[TC_UE_TWO];

	ftrace_enable(EVENT_B, false);
	close(null2_fd);
	close(marker2_fd);
	close(ue_fd[1]);
	close(ue_fd[2]);
	ue_fd[1] = -1;
	ue_fd[2] = -1;
	ue_delete(EVENT_B);
}

/* --- number of events --- */

/* Register filler events on ue_fd[0] until @total events exist */
static int register_until(int total)
{
	char cmd[96];
	double t0;
	int idx;

	while (1 + fillers < total) {
		snprintf(cmd, sizeof(cmd), "ue_bench_%04d%s", fillers,
			 EVENT_FIELDS);
		t0 = now_ns();
		idx = ue_register(ue_fd[0], cmd, NULL);
		if (idx < 0) {
			say("registering event %d failed: %s", fillers + 2,
			    strerror(-idx));
			break;
		}
		reg_ns[fillers + 2] = now_ns() - t0;
		fillers++;
	}
	return 1 + fillers;
}

/*
 * Median registration time of 20 events around the @k-th: one ioctl
 * takes about 100 us under TCG and a timer tick or an allocation that
 * refills a slab shows in any single one.
 */
static double reg_cost(int k)
{
	double v[20];
	int i, n = 0;

	for (i = k - 9; i <= k + 10; i++) {
		if (i >= 2 && i <= 1 + fillers)
			v[n++] = reg_ns[i];
	}
	return n ? median(v, n) : -1;
}

static void delete_fillers(void)
{
	char name[64];
	double t0 = now_ns();
	int i, n = fillers;

	if (!n)
		return;
	/* The fd holds references: close it, then register A again */
	close(ue_fd[0]);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "ue_bench_%04d", i);
		ue_delete(name);
	}
	fillers = 0;
	ue_fd[0] = ue_open_reg(EVENT_A);
	say("deleted %d events in %.0f ms", n, (now_ns() - t0) / 1e6);
}

static void phase_events(void)
{
	static const int want_n[3] = { 1, 100, EVENTS_MAX };
	struct op ops[2];
	struct row *row;
	char name[64];
	int i, n, nr;

	say("phase events: %s enabled, 1 to %d registered events", EVENT_A,
	    cfg.events);
	for (i = 0; i < 3; i++) {
		n = register_until(want_n[i] < cfg.events ? want_n[i] :
				   cfg.events);
		nr = 0;
		add_op(ops, &nr, OP_NULL, "write() to /dev/null", null_fd,
		       sizes[0], NULL);
		snprintf(name, sizeof(name),
			 "user_events write(), ftrace, %d events", n);
		add_op(ops, &nr, OP_WRITE, name, ue_fd[0], sizes[0], &ops[0]);
		measure(ops, nr);
		row = add_op_row("events", &ops[1]);
		res.events_x[i] = row->x;
		res.events_n[i] = n;
		if (i)
			note(row, "%.2fx the 1-event cost",
			     row->x / res.events_x[0]);
	}

	res.reg_lo = 10;
	res.reg_hi = fillers - 9 > 4000 ? 4000 : fillers - 9;
	res.reg_lo_ns = reg_cost(res.reg_lo);
	res.reg_hi_ns = reg_cost(res.reg_hi);
	if (res.reg_lo_ns > 0) {
		row = add_row("events", "register the 10th event (ioctl)", -1,
			      res.reg_lo_ns, res.reg_lo_ns / res.null_ns[0]);
		note(row, "median of the 2nd to 20th");
	}
	if (res.reg_hi_ns > 0 && res.reg_hi > 100) {
		snprintf(name, sizeof(name), "register the %dth event (ioctl)",
			 res.reg_hi);
		row = add_row("events", name, -1, res.reg_hi_ns,
			      res.reg_hi_ns / res.null_ns[0]);
		note(row, "%.2fx the 10th", res.reg_hi_ns / res.reg_lo_ns);
	}
	delete_fillers();
}

/*
 * perf with a ring (@kind 0: timestamp and record, 1: perf record's sample
 * type) or an eBPF program (@kind 2) on event A, ftrace off
 */
static void phase_perf(int kind)
{
	static const char * const phases[] = { "perf", "perfrec", "bpf" };
	static const char * const wnames[] = {
		"user_events write(), perf", "user_events write(), perf record",
		"user_events write(), eBPF",
	};
	static const char * const vnames[] = {
		"user_events writev(), perf", "user_events writev(), perf record",
		"user_events writev(), eBPF",
	};
	const char *phase = phases[kind];
	bool bpf = kind == 2;
	struct op ops[MAX_OPS], *null_ops[NR_SIZES], *w[NR_SIZES];
	struct op *v[NR_SIZES];
	struct row *row;
	__u64 head = 0;
	int nr = 0, s;

	say("phase %s: %s on %s", phase,
	    bpf ? "a BPF program returning 0" : "perf with a small ring",
	    EVENT_A);
	if (enabled_a)
		ftrace_enable(EVENT_A, false);
	if (bpf)
		bpf_attach();
	else
		perf_attach(kind == 1);
	if (status_of_a() != EVENT_STATUS_PERF) {
		errno = EPROTO;
		die("status byte of %s is %#x with %s on", EVENT_A,
		    status_of_a(), phase);
	}
	add_null_ops(ops, &nr, null_ops);
	for (s = 0; s < NR_SIZES; s++) {
		w[s] = add_op(ops, &nr, OP_WRITE, wnames[kind], ue_fd[0],
			      sizes[s], null_ops[s]);
		v[s] = add_op(ops, &nr, OP_WRITEV, vnames[kind], ue_fd[0],
			      sizes[s], null_ops[s]);
	}
	measure(ops, nr);
	if (!bpf)
		head = perf_head();
	perf_detach();
	if (!bpf && !head) {
		errno = EPROTO;
		die("perf recorded nothing");
	}

	for (s = 0; s < NR_SIZES; s++) {
		row = add_op_row(phase, w[s]);
		if (kind == 0)
			res.perf_x[s] = row->x;
		if (res.ftrace_x[s] > 0)
			note(row, "%.2fx ftrace", row->x / res.ftrace_x[s]);
		row = add_op_row(phase, v[s]);
		note(row, "%.2fx write()", ratio(v[s], w[s]));
	}
}

static void phase_uprobe(void)
{
	struct op ops[MAX_OPS], *null_ops[NR_SIZES], *u[NR_SIZES];
	struct row *row;
	long hits;
	int nr = 0, s;

	say("phase uprobe: uprobe on uprobe_target() of this program");
	if (enabled_a)
		ftrace_enable(EVENT_A, false);
	uprobe_attach();
	add_null_ops(ops, &nr, null_ops);
	for (s = 0; s < NR_SIZES; s++)
		u[s] = add_op(ops, &nr, OP_UPROBE,
			      "uprobe hit (records 8 B of payload)", -1,
			      sizes[s], null_ops[s]);
	measure(ops, nr);
	hits = uprobe_hits();
	uprobe_remove();
	if (hits <= 0) {
		errno = EPROTO;
		die("the uprobe was not hit (%ld)", hits);
	}
	for (s = 0; s < NR_SIZES; s++) {
		row = add_op_row("uprobe", u[s]);
		if (res.ftrace_x[s] > 0)
			note(row, "%.1fx user_events + ftrace",
			     row->x / res.ftrace_x[s]);
	}
}

/* --- enabling an event that many processes registered --- */

/**
 * struct en_set - processes that registered one event, all the same way
 * @event: the event
 * @bit: each with an enable bit, else each with the status page
 * @reg_fd: the parent's status page registration, which created the event
 * @enable_fd: the event's ftrace enable file, kept open
 * @status_index: the event's status byte
 * @n: processes registered
 * @late: flags not switched yet when write() returned, switching off and on
 * @pid: the processes
 */
struct en_set {
	const char *event;
	bool bit;
	int reg_fd;
	int enable_fd;
	int status_index;
	int n;
	long late[2];
	pid_t pid[PROCS_MAX];
};

static struct en_set en_sets[2] = {
	{ .event = EVENT_EN_STATUS, .reg_fd = -1, .enable_fd = -1 },
	{ .event = EVENT_EN_BIT, .bit = true, .reg_fd = -1, .enable_fd = -1 },
};

/*
 * A shared anonymous mapping made before the processes are forked: page i
 * holds the 4-byte value whose bit 0 process i of the enable bit set
 * registered.  The bit is in that process's memory, on a page of its own,
 * and the parent sees what the kernel writes there without asking it.
 */
static __u8 *en_words;
static size_t en_words_size;
/* The processes wait for EOF on en_hold and report on en_ready */
static int en_hold[2] = { -1, -1 }, en_ready[2] = { -1, -1 };

static __u32 *en_word(int i)
{
	return (__u32 *)(en_words + (size_t)i * BENCH_PAGE);
}

/* Process @i of @set: register, report 0 or errno, wait for the end */
static void en_child(const struct en_set *set, int i)
{
	char cmd[128], c;
	__u8 err = 0;
	int fd, idx;

	close(en_hold[1]);
	close(en_ready[0]);
	snprintf(cmd, sizeof(cmd), "%s%s", set->event, EVENT_FIELDS);
	fd = open(tpath("user_events_data"), O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
	} else {
		idx = set->bit ? ue_bit_register(fd, cmd, en_word(i), 0) :
				 ue_register(fd, cmd, NULL);
		if (idx < 0)
			err = -idx;
	}
	if (write(en_ready[1], &err, 1) != 1)
		_exit(1);
	while (read(en_hold[0], &c, 1) > 0)
		;
	_exit(0);
}

/* Fork processes registering @set's event until @n did */
static void en_grow(struct en_set *set, int n)
{
	__u8 err;
	pid_t pid;

	while (set->n < n) {
		pid = fork();
		if (pid < 0)
			die("fork");
		if (!pid)
			en_child(set, set->n);
		set->pid[set->n++] = pid;
		if (read(en_ready[0], &err, 1) != 1) {
			errno = EPIPE;
			die("process %d registering %s exited", set->n,
			    set->event);
		}
		if (err) {
			errno = err;
			die("process %d registering %s", set->n, set->event);
		}
	}
}

/* End the processes, delete the events */
static void en_teardown(void)
{
	struct en_set *set;
	int i, k;

	if (en_hold[1] >= 0)
		close(en_hold[1]);
	en_hold[1] = -1;
	for (k = 0; k < 2; k++) {
		set = &en_sets[k];
		for (i = 0; i < set->n; i++)
			waitpid(set->pid[i], NULL, 0);
		set->n = 0;
		if (set->enable_fd >= 0) {
			if (pwrite(set->enable_fd, "0\n", 2, 0) != 2)
				say("disable ftrace on %s: %s", set->event,
				    strerror(errno));
			close(set->enable_fd);
		}
		set->enable_fd = -1;
		if (set->reg_fd >= 0) {
			close(set->reg_fd);
			ue_delete(set->event);
		}
		set->reg_fd = -1;
	}
	for (i = 0; i < 2; i++) {
		if (en_hold[i] >= 0)
			close(en_hold[i]);
		if (en_ready[i] >= 0)
			close(en_ready[i]);
		en_hold[i] = -1;
		en_ready[i] = -1;
	}
	if (en_words && en_words != MAP_FAILED)
		munmap(en_words, en_words_size);
	en_words = NULL;
}

/*
 * Is ftrace on for process @i of @set, as that process sees it: its
 * enable bit, or the status byte that every process of a status page set
 * reads alike?
 */
static bool en_seen(const struct en_set *set, int i)
{
	if (set->bit)
		return __atomic_load_n(en_word(i), __ATOMIC_RELAXED) & 1;
	return __atomic_load_n(&status_page[set->status_index],
			       __ATOMIC_RELAXED) & EVENT_STATUS_FTRACE;
}

/* The flags to watch: one per process, or the one status byte */
static int en_flags(const struct en_set *set)
{
	return set->bit ? set->n : 1;
}

/*
 * Switch ftrace on @set's event to @on: ns from the write() to the enable
 * file until every flag of the set says so, checked in turn (a flag not
 * switched yet is waited for, and counted as late).
 */
static double en_switch(struct en_set *set, bool on)
{
	int i, n = en_flags(set);
	double t0, deadline;

	usleep(EN_PAUSE_US);
	t0 = now_ns();
	if (pwrite(set->enable_fd, on ? "1\n" : "0\n", 2, 0) != 2)
		die("%s ftrace on %s", on ? "enable" : "disable", set->event);
	for (i = 0; i < n; i++) {
		if (en_seen(set, i) == on)
			continue;
		set->late[on]++;
		deadline = now_ns() + EN_WAIT_NS;
		while (en_seen(set, i) != on) {
			if (now_ns() > deadline) {
				errno = ETIMEDOUT;
				die("process %d of %s: ftrace still %s", i,
				    set->event, on ? "off" : "on");
			}
			sched_yield();
		}
	}
	return now_ns() - t0;
}

/* What checking the flags of @set takes when all agree already */
static double en_scan(const struct en_set *set, bool on)
{
	int i, n = en_flags(set), bad = 0;
	double t0 = now_ns();

	for (i = 0; i < n; i++)
		bad += en_seen(set, i) != on;
	if (bad) {
		errno = EPROTO;
		die("%d flags of %s changed by themselves", bad, set->event);
	}
	return now_ns() - t0;
}

static void en_setup(void)
{
	char cmd[128];
	struct en_set *set;
	int k;

	/* Forks copy enable bit registrations: the phase's must be alone */
	bit_unregister_a();
	en_words_size = (size_t)cfg.procs * BENCH_PAGE;
	en_words = mmap(NULL, en_words_size, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (en_words == MAP_FAILED)
		die("mmap %zu bytes", en_words_size);
	if (pipe2(en_hold, O_CLOEXEC) || pipe2(en_ready, O_CLOEXEC))
		die("pipe");
	for (k = 0; k < 2; k++) {
		set = &en_sets[k];
		if (set->bit && !bit_abi)
			continue;
		ue_delete(set->event);
		set->reg_fd = open(tpath("user_events_data"),
				   O_RDWR | O_CLOEXEC);
		if (set->reg_fd < 0)
			die("open user_events_data");
		snprintf(cmd, sizeof(cmd), "%s%s", set->event, EVENT_FIELDS);
		if (ue_register(set->reg_fd, cmd, &set->status_index) < 0)
			die("register %s", set->event);
		set->enable_fd = open(tpath("events/user_events/%s/enable",
					    set->event), O_WRONLY | O_CLOEXEC);
		if (set->enable_fd < 0)
			die("open the enable file of %s", set->event);
	}
}

/* Rows of one process count: switching on (@on) or off, one per set */
static void en_rows(int n, bool on, double t[2][2][MAX_ROUNDS],
		    double scan[2][2][MAX_ROUNDS], double first[2][2])
{
	const char *what = on ? "enable" : "disable";
	double q[MAX_ROUNDS], ns;
	struct en_set *set;
	struct row *row;
	char name[64];
	int k, r;

	for (k = 0; k < 2; k++) {
		set = &en_sets[k];
		if (set->bit && !bit_abi)
			continue;
		snprintf(name, sizeof(name), "%s ftrace, %d processes, %s", what,
			 n, set->bit ? "enable bit each" : "status page");
		ns = median(t[k][on], cfg.rounds);
		row = add_row("enable", name, -1, ns,
			      res.null_ns[0] > 0 ? ns / res.null_ns[0] : -1);
		if (!first[k][on])
			first[k][on] = ns;
		if (set->bit) {
			for (r = 0; r < cfg.rounds; r++)
				q[r] = t[1][on][r] / t[0][on][r];
			note(row, "%.2fx status page", median(q, cfg.rounds));
		} else if (n > 1) {
			note(row, "%.2fx 1 process", ns / first[k][on]);
		}
		if (n > 1)
			note(row, "%s%+.1f us/process", row->note[0] ? ", " : "",
			     (ns - first[k][on]) / (n - 1) / 1e3);
		if (set->bit)
			note(row, ", scan %.0f us",
			     median(scan[k][on], cfg.rounds) / 1e3);
		if (set->late[on]) {
			note(row, ", %ld late", set->late[on]);
			say("phase enable: %s, %ld of %ld flags late after write()",
			    name, set->late[on],
			    (long)cfg.rounds * en_flags(set));
		}
	}
}

/*
 * ftrace switched on and off on an event that n processes registered,
 * for n = 1, 100, 1000 (up to cfg.procs): with an enable bit each, and,
 * for comparison, with the status page (one byte whatever n is).  Each
 * round switches both events on and off, in turn, so their ratio is one
 * of times measured side by side.
 */
static void phase_enable(void)
{
	static double t[2][2][MAX_ROUNDS], scan[2][2][MAX_ROUNDS];
	double first[2][2] = { { 0 } }, end;
	int steps[4], nsteps = 0, i, j, k, r;
	struct en_set *set;
	struct row *row;

	say("phase enable: ftrace on events that 1 to %d processes registered",
	    cfg.procs);
	if (!bit_abi)
		say("phase enable: no enable bit layout: status page rows only");
	for (i = 0; i < 3; i++) {
		static const int want_n[3] = { 1, 100, 1000 };

		if (want_n[i] < cfg.procs)
			steps[nsteps++] = want_n[i];
	}
	steps[nsteps++] = cfg.procs;
	en_setup();

	for (i = 0; i < nsteps; i++) {
		for (k = 0; k < 2; k++) {
			if (en_sets[k].reg_fd >= 0)
				en_grow(&en_sets[k], steps[i]);
		}
		say("phase enable: %d processes per event", steps[i]);
		end = now_ns() + cfg.warmup_ms * 1e6;
		do {
			for (k = 0; k < 2; k++) {
				if (en_sets[k].reg_fd < 0)
					continue;
				en_switch(&en_sets[k], true);
				en_switch(&en_sets[k], false);
			}
		} while (now_ns() < end);
		for (k = 0; k < 2; k++) {
			en_sets[k].late[0] = 0;
			en_sets[k].late[1] = 0;
		}

		for (r = 0; r < cfg.rounds; r++) {
			for (j = 0; j < 2; j++) {
				k = r & 1 ? 1 - j : j;
				set = &en_sets[k];
				if (set->reg_fd < 0)
					continue;
				t[k][1][r] = en_switch(set, true);
				scan[k][1][r] = en_scan(set, true);
				t[k][0][r] = en_switch(set, false);
				scan[k][0][r] = en_scan(set, false);
			}
		}
		en_rows(steps[i], true, t, scan, first);
		en_rows(steps[i], false, t, scan, first);
	}
	if (!bit_abi) {
		row = add_row("enable", "enable ftrace, N processes, enable bit each",
			      -1, -1, -1);
		note(row, "skipped: no enable bit layout");
	}
	en_teardown();
}

/* --- many enable bits in one address space ------------------------------ */

/* What the process with the bits measured, shared with the parent */
struct bits_shared {
	double reg_ns[BITS_MAX];
	double fork_ns[BITS_FORKS];
	int forks;
	int ready;	/* registered: the parent measures the idle switch */
	int go;		/* measured: fork away */
	int stop;	/* enough: exit */
};

/*
 * The process with the bits, on the other CPU: registers BITS_MAX bits of
 * EVENT_BITS, timing each registration, then forks children that exit at
 * once, timing each fork() and its waitpid(); 0 or errno
 */
static int bits_child(struct bits_shared *sh)
{
	static __u32 words[BITS_MAX / 32];
	char cmd[128];
	double t;
	int fd, i, idx;
	pid_t pid;

	pin_to_cpu(1);
	fd = open(tpath("user_events_data"), O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno;
	snprintf(cmd, sizeof(cmd), "%s%s", EVENT_BITS, EVENT_FIELDS);
	for (i = 0; i < BITS_MAX; i++) {
		t = now_ns();
		idx = ue_bit_register(fd, cmd, &words[i / 32], i % 32);
		sh->reg_ns[i] = now_ns() - t;
		if (idx < 0)
			return -idx;
	}
	__atomic_store_n(&sh->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE))
		usleep(1000);
	while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE) &&
	       sh->forks < BITS_FORKS) {
		t = now_ns();
		pid = fork();
		if (!pid)
			_exit(0);
		if (pid < 0)
			return errno;
		waitpid(pid, NULL, 0);
		sh->fork_ns[sh->forks] = now_ns() - t;
		__atomic_add_fetch(&sh->forks, 1, __ATOMIC_RELEASE);
	}
	return 0;
}

/* Median time of enabling then disabling EVENT_B, @n times, in ns */
static double unrelated_switch_ns(int n)
{
	bool was = enabled_b;
	double v[MAX_ROUNDS], t;
	int i;

	if (was)
		ftrace_enable(EVENT_B, false);
	for (i = 0; i < n; i++) {
		t = now_ns();
		ftrace_enable(EVENT_B, true);
		ftrace_enable(EVENT_B, false);
		v[i] = now_ns() - t;
		usleep(EN_PAUSE_US);
	}
	if (was)
		ftrace_enable(EVENT_B, true);
	return median(v, n);
}

/*
 * A process registers BITS_MAX enable bits of one event: the n-th
 * registration for n = 1, 1000 and BITS_MAX (the median of BITS_AT around
 * it); then it forks children that exit at once, and meanwhile this
 * process times enabling and disabling an unrelated event, against the
 * same before the forks.
 */
static void phase_bits(void)
{
	static const int at[3] = { 1, 1000, BITS_MAX };
	double idle_ns, busy_ns, ns, first_ns = 0;
	struct bits_shared *sh;
	struct row *row;
	int i, from, status, bfd;
	char name[96];
	pid_t pid;

	if (!bit_abi) {
		say("phase bits: no enable bit layout, skipped");
		return;
	}
	say("phase bits: %d enable bits in one process; its fork()+exit, and enabling %s meanwhile",
	    BITS_MAX, EVENT_B);
	/* The unrelated event */
	bfd = ue_open_reg(EVENT_B);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		die("mmap");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid)
		_exit(bits_child(sh));
	while (!__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE)) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			errno = WIFEXITED(status) ? WEXITSTATUS(status) : EINTR;
			die("the process with %d bits", BITS_MAX);
		}
		usleep(10000);
	}

	idle_ns = unrelated_switch_ns(cfg.rounds);
	__atomic_store_n(&sh->go, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&sh->forks, __ATOMIC_ACQUIRE))
		usleep(1000);
	busy_ns = unrelated_switch_ns(cfg.rounds);
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		errno = WIFEXITED(status) ? WEXITSTATUS(status) : EINTR;
		die("the process with %d bits", BITS_MAX);
	}

	for (i = 0; i < 3; i++) {
		from = at[i] - 1 + BITS_AT > BITS_MAX ? BITS_MAX - BITS_AT :
							at[i] - 1;
		ns = median(sh->reg_ns + from, BITS_AT);
		if (!i)
			first_ns = ns;
		snprintf(name, sizeof(name), "register the %dth enable bit (ioctl)",
			 at[i]);
		row = add_row("bits", name, -1, ns, ns / res.null_ns[0]);
		if (i)
			note(row, "%.2fx the 1st", ns / first_ns);
	}
	ns = median(sh->fork_ns, sh->forks);
	snprintf(name, sizeof(name), "fork()+exit of a process with %d bits",
		 BITS_MAX);
	row = add_row("bits", name, -1, ns, ns / res.null_ns[0]);
	note(row, "median of %d", sh->forks);
	row = add_row("bits", "enable+disable an unrelated event, idle", -1,
		      idle_ns, idle_ns / res.null_ns[0]);
	row = add_row("bits", "the same during the fork()+exit loop", -1,
		      busy_ns, busy_ns / res.null_ns[0]);
	note(row, "%.2fx idle", busy_ns / idle_ns);
	res.bits_busy_x = busy_ns / idle_ns;
	munmap(sh, sizeof(*sh));
	close(bfd);
	ue_delete(EVENT_B);
}

/* --- batched writes ----------------------------------------------------- */

/* Events in the ftrace buffers, overwritten ones included */
static long ftrace_count(void)
{
	long entries, overrun, total = 0, v;
	char line[128];
	FILE *f;
	int cpu;

	for (cpu = 0; (f = fopen(tpath("per_cpu/cpu%d/stats", cpu), "re"));
	     cpu++) {
		entries = -1;
		overrun = -1;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "entries: %ld", &v) == 1)
				entries = v;
			else if (sscanf(line, "overrun: %ld", &v) == 1)
				overrun = v;
		}
		fclose(f);
		if (entries < 0 || overrun < 0) {
			errno = EPROTO;
			die("no entries or overrun in per_cpu/cpu%d/stats",
			    cpu);
		}
		total += entries + overrun;
	}
	if (!cpu)
		die("open per_cpu/cpu0/stats");
	return total;
}

/*
 * Does every record of a batch, and every SQE, reach the tracer as the
 * write() of one record does?  A batch of URING_SQES records, and a
 * submission of as many SQEs, must each add URING_SQES times what one
 * write() adds to @count: the events of the ftrace buffers or the bytes
 * of perf's rings.  Nothing else writes there; should something, two
 * more tries are given.
 */
static void batch_check(const char *phase, long (*count)(void),
			const struct op *single, const struct op *batch,
			const struct op *uring_op)
{
	long c, one = 0, many = 0, sqes = 0;
	int tries;

	for (tries = 0; tries < 3; tries++) {
		c = count();
		op_run(single, 1);
		one = count() - c;
		c += one;
		op_run(batch, 1);
		many = count() - c;
		c += many;
		sqes = one * URING_SQES;
		if (uring_op) {
			op_run(uring_op, 1);
			sqes = count() - c;
		}
		if (one > 0 && many == one * URING_SQES &&
		    sqes == one * URING_SQES)
			return;
	}
	errno = EPROTO;
	die("phase %s: one write() added %ld, a batch of %d records %ld, %d SQEs %ld",
	    phase, one, URING_SQES, many, URING_SQES, sqes);
}

/*
 * One tracer on EVENT_BATCH, ftrace or (@perf) perf: the rows of each
 * batch size, per record, of the io_uring submissions, per SQE, of a
 * single write() and of a trace_marker_raw write(), all of 12-byte
 * payloads, in the same interleaved rounds.
 */
static void batch_measure(bool perf)
{
	static char names[NR_BATCHES][64];
	static int null_workers = -1;
	const char *phase = perf ? "batch-perf" : "batch";
	struct op ops[MAX_OPS], *null, *marker, *single, *b[NR_BATCHES];
	struct op *u = NULL, *nu = NULL, *b64 = NULL, est;
	struct row *row;
	__u8 status;
	int nr = 0, k, r, workers = 0;

	if (perf) {
		ftrace_enable(EVENT_BATCH, false);
		batch_perf_attach();
	} else {
		ftrace_enable(EVENT_BATCH, true);
	}
	status = status_page[batch_status];
	if (status != (perf ? EVENT_STATUS_PERF : EVENT_STATUS_FTRACE)) {
		errno = EPROTO;
		die("status byte of %s is %#x with %s on", EVENT_BATCH, status,
		    perf ? "perf" : "ftrace");
	}

	null = add_op(ops, &nr, OP_NULL, "write() to /dev/null", null_fd,
		      BATCH_PAYLOAD, NULL);
	marker = add_op(ops, &nr, OP_MARKER, "trace_marker_raw write()",
			marker_fd, BATCH_PAYLOAD, null);
	single = add_op(ops, &nr, OP_WRITE, perf ?
			"user_events write(), perf on each CPU" :
			"user_events write(), ftrace",
			batch_fd, BATCH_PAYLOAD, null);
	for (k = 0; k < NR_BATCHES; k++) {
		snprintf(names[k], sizeof(names[k]),
			 "write() of a batch of %d, per record", batch_sizes[k]);
		b[k] = add_op(ops, &nr, OP_BATCH, names[k], batch_fd,
			      BATCH_PAYLOAD, null);
		b[k]->records = batch_sizes[k];
		if (batch_sizes[k] == URING_SQES)
			b64 = b[k];
	}
	if (ue_ring.fd >= 0) {
		u = add_op(ops, &nr, OP_URING,
			   "io_uring, 64 write SQEs, one io_uring_enter(), per SQE",
			   -1, BATCH_PAYLOAD, null);
		u->records = URING_SQES;
		u->ring = &ue_ring;
		nu = add_op(ops, &nr, OP_URING,
			    "io_uring to /dev/null, the same, per SQE", -1,
			    BATCH_PAYLOAD, null);
		nu->records = URING_SQES;
		nu->ring = &null_ring;
		/* Before ue_ring's first write starts io-wq's workers */
		if (null_workers < 0) {
			op_run(nu, 1);
			null_workers = uring_workers();
		}
	}
	batch_check(phase, perf ? batch_perf_count : ftrace_count, single,
		    b64, u);
	measure(ops, nr);
	if (u)
		workers = uring_workers();
	if (perf)
		batch_perf_detach();

	add_op_row(phase, null);
	add_op_row(phase, marker);
	row = add_op_row(phase, single);
	note(row, "%.2fx trace_marker_raw", ratio(single, marker));
	/*
	 * io_uring writing inline to user_events_data, as 6.1 never does:
	 * its own cost per SQE, to /dev/null, and what a user_events write()
	 * costs more than one to /dev/null, round by round
	 */
	memset(&est, 0, sizeof(est));
	for (r = 0; u && r < cfg.rounds; r++)
		est.ns[r] = nu->ns[r] + single->ns[r] - null->ns[r];
	for (k = 0; k < NR_BATCHES; k++) {
		row = add_op_row(phase, b[k]);
		note(row, "%.2fx trace_marker_raw, %.2fx write()",
		     ratio(b[k], marker), ratio(b[k], single));
		if (u)
			note(row, ", %.2fx io_uring, %.2fx io_uring inline",
			     ratio(b[k], u), ratio(b[k], &est));
	}
	if (u) {
		row = add_op_row(phase, u);
		note(row, "%.2fx trace_marker_raw, %.2fx write(); ",
		     ratio(u, marker), ratio(u, single));
		if (workers > 0)
			note(row, "%d io-wq workers wrote", workers);
		else
			note(row, "issued inline");
		row = add_op_row(phase, nu);
		if (null_workers > 0)
			note(row, "%d io-wq workers wrote", null_workers);
		else
			note(row, "issued inline");
		row = add_row(phase, "io_uring inline, estimated, per SQE",
			      BATCH_PAYLOAD, median(est.ns, cfg.rounds),
			      ratio(&est, null));
		note(row, "/dev/null SQE + (write() - /dev/null write()): %.2fx write()",
		     ratio(&est, single));
	} else {
		row = add_row(phase,
			      "io_uring, 64 write SQEs, one io_uring_enter(), per SQE",
			      BATCH_PAYLOAD, -1, -1);
		note(row, "not measured: io_uring_setup(): %s",
		     strerror(uring_err));
	}
	if (workers > 0 && !perf)
		say("phase %s: %d io-wq workers wrote for io_uring", phase,
		    workers);

	res.batch_vs_marker[perf] = ratio(b64, marker);
	res.batch_vs_uring[perf] = u ? ratio(b64, u) : -1;
	res.batch_vs_inline[perf] = u ? ratio(b64, &est) : -1;
	res.batch1_vs_write[perf] = ratio(b[0], single);
}

/*
 * Batched writes of EVENT_BATCH, 12-byte payloads: with ftrace, then
 * with perf, each switched on once before its rounds.
 */
static void phase_batch(void)
{
	struct row *row;

	say("phase batch: batches of 1 to %d records of %s, io_uring, ftrace then perf",
	    BATCH_RECORDS_MAX, EVENT_BATCH);
	if (enabled_a)
		ftrace_enable(EVENT_A, false);
	if (batch_setup()) {
		batch_measure(false);
		batch_measure(true);
	} else {
		row = add_row("batch", "write() of a batch, per record",
			      BATCH_PAYLOAD, -1, -1);
		note(row, "skipped: no batches");
	}
	batch_teardown();
}

/* A result stays 0 when its phase did not run (-p) */
static double measured(double value)
{
	return value > 0 ? value : NOT_MEASURED;
}

static void add_targets(void)
{
	char what[80];
	double worst;
	int s;

	target("disabled check, x null write", measured(res.check_x), 0.01,
	       true, "x");
	for (s = 0; s < NR_SIZES; s++) {
		/* -1: too large for trace_marker_raw */
		if (res.write_vs_marker[s] < 0)
			continue;
		snprintf(what, sizeof(what),
			 "write(), ftrace, x trace_marker_raw, %d B", sizes[s]);
		target(what, measured(res.write_vs_marker[s]), 1.0, true, "x");
	}
	for (s = 0; s < NR_SIZES; s++) {
		snprintf(what, sizeof(what),
			 "write(), perf, x ftrace, %d B", sizes[s]);
		target(what, res.perf_x[s] > 0 && res.ftrace_x[s] > 0 ?
		       res.perf_x[s] / res.ftrace_x[s] : NOT_MEASURED, 1.10, true, "x");
	}
	for (s = 0; s < NR_SIZES; s++) {
		snprintf(what, sizeof(what),
			 "writev() - write(), ftrace, beyond /dev/null's, %d B",
			 sizes[s]);
		target(what, res.ftrace_x[s] > 0 ? res.writev_extra[s] : NOT_MEASURED,
		       0.05, true, "");
	}
	worst = NOT_MEASURED;
	if (res.events_x[0] > 0 && res.events_x[2] > 0)
		worst = res.events_x[2] / res.events_x[0];
	snprintf(what, sizeof(what), "write(), %d events, x 1 event",
		 res.events_n[2] ? res.events_n[2] : EVENTS_MAX);
	target(what, worst, 1.10, true, "x");
	target("2 threads on 2 events, throughput x 1 thread",
	       measured(res.speedup_two_events), 1.9, false, "x");
	snprintf(what, sizeof(what), "register the %dth event, x the 10th",
		 res.reg_hi ? res.reg_hi : 4000);
	target(what, res.reg_hi_ns > 0 && res.reg_lo_ns > 0 ?
	       res.reg_hi_ns / res.reg_lo_ns : NOT_MEASURED, 2.0, true, "x");
	target("enabling an event during fork()+exit of 32768 bits, x idle",
	       measured(res.bits_busy_x), 2.0, true, "x");
	/*
	 * Batches, 12-byte records.  trace_marker_raw writes into ftrace's
	 * buffer whatever is attached to the event: the perf table's
	 * batches are compared with it, but not held to its target.  The
	 * io_uring targets are held against what 6.1 does (io-wq) and
	 * against the estimate of an inline write (see struct ring).
	 */
	for (s = 0; s < 2; s++) {
		if (!s) {
			target("batch of 64, ftrace, per record x trace_marker_raw",
			       measured(res.batch_vs_marker[0]), 0.30, true,
			       "x");
		}
		snprintf(what, sizeof(what),
			 "batch of 64, %s, per record x io_uring SQE (io-wq)",
			 s ? "perf" : "ftrace");
		target(what, measured(res.batch_vs_uring[s]), 0.50, true, "x");
		snprintf(what, sizeof(what),
			 "batch of 64, %s, per record x io_uring SQE inline, est.",
			 s ? "perf" : "ftrace");
		target(what, measured(res.batch_vs_inline[s]), 0.50, true, "x");
		snprintf(what, sizeof(what), "batch of 1, %s, x write()",
			 s ? "perf" : "ftrace");
		target(what, measured(res.batch1_vs_write[s]), 1.10, true, "x");
	}
}

/* --- setup and main ----------------------------------------------------- */

static void cleanup(void)
{
	char name[64];
	int i;

	perf_detach();
	en_teardown();
	batch_teardown();
	if (uprobe_made)
		uprobe_remove();
	if (enabled_a)
		put_file(tpath("events/user_events/%s/enable", EVENT_A), "0\n",
			 O_TRUNC);
	if (enabled_b)
		put_file(tpath("events/user_events/%s/enable", EVENT_B), "0\n",
			 O_TRUNC);
	enabled_a = false;
	enabled_b = false;
	for (i = 0; i < 3; i++) {
		if (ue_fd[i] >= 0)
			close(ue_fd[i]);
		ue_fd[i] = -1;
	}
	for (i = 0; i < fillers; i++) {
		snprintf(name, sizeof(name), "ue_bench_%04d", i);
		ue_delete(name);
	}
	fillers = 0;
	bit_unregister_a();
	if (bit_fd >= 0)
		close(bit_fd);
	bit_fd = -1;
	ue_delete(EVENT_A);
	ue_delete(EVENT_B);
}

static int env_int(const char *name, int def)
{
	const char *v = getenv(name);

	return v && *v ? atoi(v) : def;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: user_events_bench [-r ROUNDS] [-t MS] [-w MS] [-n EVENTS] [-N PROCS] [-p PHASES]\n"
		"  -r  measured rounds per phase (UE_BENCH_ROUNDS, default %d)\n"
		"  -t  ms per measurement (UE_BENCH_MS, default %d)\n"
		"  -w  ms of warm-up after a tracer switch (UE_BENCH_WARMUP_MS, default %d)\n"
		"  -n  most events registered (UE_BENCH_EVENTS, default %d)\n"
		"  -N  most processes registering one event, at most %d\n"
		"      (UE_BENCH_PROCS, default %d; phase enable: 1, 100, 1000, N)\n"
		"  -p  phases, comma-separated (UE_BENCH_PHASES, default all):\n"
		"      idle,ftrace,threads,events,perf,perfrec,bpf,uprobe,enable,bits,batch\n"
		"      (batch: batches of 1 to %d records, and io_uring, with ftrace and perf)\n",
		cfg.rounds, cfg.ms, cfg.warmup_ms, cfg.events, PROCS_MAX,
		cfg.procs, BATCH_RECORDS_MAX);
}

static void parse_args(int argc, char **argv)
{
	const char *p = getenv("UE_BENCH_PHASES");
	int c;

	cfg.rounds = env_int("UE_BENCH_ROUNDS", cfg.rounds);
	cfg.ms = env_int("UE_BENCH_MS", cfg.ms);
	cfg.warmup_ms = env_int("UE_BENCH_WARMUP_MS", cfg.warmup_ms);
	cfg.events = env_int("UE_BENCH_EVENTS", cfg.events);
	cfg.procs = env_int("UE_BENCH_PROCS", cfg.procs);
	if (p && *p)
		snprintf(cfg.phases, sizeof(cfg.phases), "%s", p);

	while ((c = getopt(argc, argv, "r:t:w:n:N:p:h")) != -1) {
		switch (c) {
		case 'r':
			cfg.rounds = atoi(optarg);
			break;
		case 't':
			cfg.ms = atoi(optarg);
			break;
		case 'w':
			cfg.warmup_ms = atoi(optarg);
			break;
		case 'n':
			cfg.events = atoi(optarg);
			break;
		case 'N':
			cfg.procs = atoi(optarg);
			break;
		case 'p':
			snprintf(cfg.phases, sizeof(cfg.phases), "%s", optarg);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (cfg.rounds < 1 || cfg.rounds > MAX_ROUNDS || cfg.ms < 1 ||
	    cfg.warmup_ms < 0 || cfg.events < 1 || cfg.events > EVENTS_MAX ||
	    cfg.procs < 1 || cfg.procs > PROCS_MAX) {
		usage(stderr);
		exit(2);
	}
}

static void setup(void)
{
	int status_fd;

	find_tracefs();
	null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	marker_fd = open(tpath("trace_marker_raw"), O_WRONLY | O_CLOEXEC);
	if (null_fd < 0 || marker_fd < 0)
		die("open /dev/null and trace_marker_raw");
	put_file(tpath("tracing_on"), "1\n", O_TRUNC);

	/* Leftovers of an interrupted run */
	uprobe_remove();
	ue_delete(EVENT_A);
	ue_delete(EVENT_B);

	ue_fd[0] = ue_open_reg(EVENT_A);
	bit_register_a();
	status_fd = open(tpath("user_events_status"), O_RDONLY | O_CLOEXEC);
	if (status_fd < 0)
		die("open user_events_status");
	status_page = mmap(NULL, BENCH_PAGE, PROT_READ, MAP_SHARED, status_fd,
			   0);
	if (status_page == MAP_FAILED)
		die("mmap user_events_status");
	close(status_fd);

	/* index 0 for user_events, an arbitrary id for the marker */
	memset(ue_buf, 0, HDR);
	memset(ue_buf + HDR, 'u', MAX_PAYLOAD);
	marker_buf[0] = 0x5a;
	memset(marker_buf + HDR, 'm', MAX_PAYLOAD);
	atexit(cleanup);
}

static void print_header(void)
{
	char cs[64], avail[256];
	struct utsname u;
	size_t len;

	uname(&u);
	get_line("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		 cs, sizeof(cs));
	get_line("/sys/devices/system/clocksource/clocksource0/available_clocksource",
		 avail, sizeof(avail));
	len = strlen(avail);
	while (len && avail[len - 1] == ' ')
		avail[--len] = '\0';
	printf("# user_events_bench: Linux %s %s, %ld CPUs, clocksource %s (available: %s)\n",
	       u.release, u.machine, sysconf(_SC_NPROCESSORS_ONLN), cs, avail);
	printf("# %d rounds of about %d ms per row after %d ms of warm-up per phase;\n",
	       cfg.rounds, cfg.ms, cfg.warmup_ms);
	printf("# medians over the rounds; payload: bytes after the 4-byte index or id\n\n");
	if (strcmp(cs, "tsc"))
		fprintf(stderr, "bench: warning: clocksource is %s, not tsc\n",
			cs);
}

int main(int argc, char **argv)
{
	double t0 = now_ns();

	parse_args(argc, argv);
	if (geteuid()) {
		errno = EPERM;
		die("must run as root");
	}
	pin_to_cpu(0);
	setup();
	print_header();

	if (want("idle"))
		phase_idle();
	if (want("ftrace"))
		phase_ftrace();
	if (want("threads")) {
		if (!enabled_a)
			ftrace_enable(EVENT_A, true);
		phase_threads();
	}
	if (want("events")) {
		if (!enabled_a)
			ftrace_enable(EVENT_A, true);
		phase_events();
	}
	if (want("perf"))
		phase_perf(0);
	if (want("perfrec"))
		phase_perf(1);
	if (want("bpf"))
		phase_perf(2);
	if (want("uprobe"))
		phase_uprobe();
	if (want("enable"))
		phase_enable();
	if (want("bits"))
		phase_bits();
	/* Last: the earlier phases run as they did before it existed */
	if (want("batch"))
		phase_batch();

	add_targets();
	print_table();
	say("done in %.0f s", (now_ns() - t0) / 1e9);
	return 0;
}
