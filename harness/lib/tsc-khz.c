// SPDX-License-Identifier: GPL-2.0
/*
 * Prints the host's TSC frequency in kHz, measured against
 * CLOCK_MONOTONIC_RAW over a quarter of a second.  Under QEMU's TCG a
 * guest's TSC is the host's: harness/lib/vm.sh gives the guest this
 * value (tsc_early_khz=) instead of letting it calibrate, which on a
 * busy or slow host can be off several times over (RESULTS.md, "The
 * test command on a slower machine").
 */
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

/*
 * The time and the TSC at one moment: of several tries, the one whose
 * two TSC reads around the clock read are closest (not preempted)
 */
static void sample(double *t, double *tsc)
{
	unsigned long long a, b, best = ~0ULL;
	struct timespec ts;
	int i;

	for (i = 0; i < 50; i++) {
		a = __rdtsc();
		clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
		b = __rdtsc();
		if (b - a < best) {
			best = b - a;
			*t = ts.tv_sec + ts.tv_nsec / 1e9;
			*tsc = a / 2.0 + b / 2.0;
		}
	}
}

int main(void)
{
	struct timespec wait = { 0, 250000000 };
	double t0, t1, c0, c1;

	sample(&t0, &c0);
	nanosleep(&wait, NULL);
	sample(&t1, &c1);
	printf("%.0f\n", (c1 - c0) / (t1 - t0) / 1000);
	return 0;
}
