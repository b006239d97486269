// SPDX-License-Identifier: GPL-2.0
/*
 * clock-scaling: does reading the TSC scale over two CPUs of this machine?
 *
 * Every ring buffer record reads the trace clock, on x86 the TSC
 * (trace_clock_local(), sched_clock()).  Under QEMU's TCG, an emulated
 * rdtsc may be serialized between vCPUs; if it is, two threads recording
 * into two CPUs' ring buffers cannot reach twice one thread's throughput,
 * whatever the tracer.  This prints, per round, the throughput of two
 * threads pinned to CPUs 0 and 1 against one thread, for a loop of rdtsc
 * and for the same loop without it.
 *
 * Build and run in the test VM (from the repository):
 *   harness/ue run -- sh -c 'gcc -O2 -o /tmp/cs harness/probes/clock-scaling.c \
 *	-lpthread && /tmp/cs 5'
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

#define ITERS	20000000L

static int use_tsc;
/* One cache line per thread: the threads share nothing they write */
static volatile unsigned long sink[2][8] __attribute__((aligned(64)));

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *loop(void *arg)
{
	long cpu = (long)arg, i;
	unsigned long acc = 0;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("sched_setaffinity");
	for (i = 0; i < ITERS; i++)
		acc += use_tsc ? __rdtsc() : (unsigned long)i * 7;
	sink[cpu][0] = acc;
	return NULL;
}

/* Seconds for @threads threads to run ITERS iterations each */
static double timed(long threads)
{
	pthread_t t[2];
	double t0 = now();
	long i;

	for (i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, loop, (void *)i)) {
			perror("pthread_create");
			exit(1);
		}
	for (i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	return now() - t0;
}

int main(int argc, char **argv)
{
	int r, rounds = argc > 1 ? atoi(argv[1]) : 5;
	double one, two;

	for (use_tsc = 0; use_tsc < 2; use_tsc++) {
		for (r = 0; r < rounds; r++) {
			one = timed(1);
			two = timed(2);
			printf("%s: 1 thread %.3f s, 2 threads %.3f s: throughput %.2fx one thread\n",
			       use_tsc ? "rdtsc" : "loop ", one, two,
			       2 * one / two);
		}
	}
	return 0;
}
