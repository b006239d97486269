// SPDX-License-Identifier: GPL-2.0
/*
 * tracepoint-perf-vs-ftrace: what perf costs against ftrace on a kernel
 * tracepoint, the way user_events_bench measures it on a user event.
 *
 * The benchmark's perf row (a perf event on the user event, sample type
 * TIME | RAW, period 1, a read-only ring never full) is compared with its
 * ftrace row.  Here the same two tracers take raw_syscalls:sys_enter, hit
 * by a loop of getppid(): each round times the loop with nothing
 * attached, with ftrace's event enabled and with the perf event, in turn;
 * printed are the medians of each tracer's own cost (its time less the
 * bare loop's, per call) and of their ratio per round.
 *
 * Build and run in the test VM (from the repository):
 *   harness/ue run -- sh -c 'gcc -O2 -o /tmp/tp \
 *	harness/probes/tracepoint-perf-vs-ftrace.c && /tmp/tp 15'
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TRACING		"/sys/kernel/tracing/"
#define EVENT		"events/raw_syscalls/sys_enter/"
#define CALLS		20000L
#define RING_PAGES	16
#define MAX_ROUNDS	64

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void put(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_TRUNC);

	if (fd < 0 || write(fd, value, strlen(value)) != (ssize_t)strlen(value))
		die(path);
	close(fd);
}

static long event_id(void)
{
	char buf[32] = "";
	int fd = open(TRACING EVENT "id", O_RDONLY);

	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) <= 0)
		die(TRACING EVENT "id");
	close(fd);
	return atol(buf);
}

/* ns per getppid() of a loop of CALLS */
static double loop_ns(void)
{
	struct timespec a, b;
	long i;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < CALLS; i++)
		syscall(SYS_getppid);
	clock_gettime(CLOCK_MONOTONIC, &b);
	return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / CALLS;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	int r, rounds = argc > 1 ? atoi(argv[1]) : 15;
	double bare[MAX_ROUNDS], ftrace[MAX_ROUNDS], perf[MAX_ROUNDS];
	double ratio[MAX_ROUNDS], bare_ns;
	struct perf_event_attr attr;
	long page = sysconf(_SC_PAGESIZE);
	void *ring;
	int pfd;

	if (rounds < 1 || rounds > MAX_ROUNDS)
		rounds = 15;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = event_id();
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
	attr.disabled = 1;
	pfd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (pfd < 0)
		die("perf_event_open");
	/* Read-only: the kernel overwrites, so the ring is never full */
	ring = mmap(NULL, (RING_PAGES + 1) * page, PROT_READ, MAP_SHARED, pfd, 0);
	if (ring == MAP_FAILED)
		die("mmap");

	/*
	 * Each switch patches kernel text, which TCG retranslates: a loop
	 * after each switch warms up before the measured one.
	 */
	for (r = 0; r < rounds; r++) {
		loop_ns();
		bare[r] = loop_ns();
		put(TRACING EVENT "enable", "1");
		loop_ns();
		ftrace[r] = loop_ns();
		put(TRACING EVENT "enable", "0");
		if (ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0))
			die("PERF_EVENT_IOC_ENABLE");
		loop_ns();
		perf[r] = loop_ns();
		if (ioctl(pfd, PERF_EVENT_IOC_DISABLE, 0))
			die("PERF_EVENT_IOC_DISABLE");
		ftrace[r] -= bare[r];
		perf[r] -= bare[r];
		ratio[r] = perf[r] / ftrace[r];
	}
	bare_ns = median(bare, rounds);
	printf("raw_syscalls:sys_enter, %d rounds of %ld getppid(): bare %.0f ns,\n",
	       rounds, CALLS, bare_ns);
	printf("  ftrace's own cost %.0f ns, perf's own %.0f ns: perf %.2fx ftrace\n",
	       median(ftrace, rounds), median(perf, rounds),
	       median(ratio, rounds));
	return 0;
}
