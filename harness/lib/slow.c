// SPDX-License-Identifier: GPL-2.0
/*
 * slow BUSY_US PERIOD_US: take BUSY_US of every PERIOD_US of each CPU
 * until killed, so that everything else runs as on slower processors
 * (harness/slow).
 *
 * One thread per CPU, pinned to it at a real-time priority (SCHED_FIFO
 * preempts every normal thread at once), spins for BUSY_US and sleeps to
 * the next period.  The periods are aligned on CLOCK_MONOTONIC, so every
 * CPU pauses at the same moments: a guest's vCPU is never stopped while
 * its other vCPU runs and spins on a lock the stopped one holds, which
 * no uniformly slower processor would do.  A short period (a millisecond)
 * keeps each pause shorter than the guest's own time slices.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long busy_ns, period_ns;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *hog(void *arg)
{
	long cpu = (long)arg;
	struct sched_param sp = { .sched_priority = 50 };
	struct timespec ts;
	cpu_set_t set;
	long long start;
	int err;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (!err)
		err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (err) {
		fprintf(stderr, "slow: CPU %ld: %s\n", cpu, strerror(err));
		exit(1);
	}
	for (;;) {
		/* the start of the current period on the common grid */
		start = now_ns() / period_ns * period_ns;
		while (now_ns() < start + busy_ns)
			;
		start += period_ns;
		ts.tv_sec = start / 1000000000LL;
		ts.tv_nsec = start % 1000000000LL;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long cpu, ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t t;

	if (argc != 3 || atoll(argv[1]) < 0 || atoll(argv[2]) <= atoll(argv[1])) {
		fprintf(stderr, "usage: slow BUSY_US PERIOD_US (BUSY_US < PERIOD_US)\n");
		return 2;
	}
	busy_ns = atoll(argv[1]) * 1000;
	period_ns = atoll(argv[2]) * 1000;
	for (cpu = 0; cpu < ncpu; cpu++) {
		if (pthread_create(&t, NULL, hog, (void *)cpu)) {
			fprintf(stderr, "slow: cannot start a thread\n");
			return 1;
		}
	}
	pause();
	return 0;
}
