/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the user_events samples share: where tracefs may be mounted, and
 * the end of their loop on SIGINT or SIGTERM.
 */
#ifndef _USER_EVENTS_SAMPLE_H
#define _USER_EVENTS_SAMPLE_H

#include <signal.h>
#include <stdbool.h>
#include <string.h>

/* Where tracefs is mounted, in the order to try them */
static const char *const tracefs_paths[] = {
	"/sys/kernel/tracing",
	"/sys/kernel/debug/tracing",
	NULL
};

/* Set by SIGINT and SIGTERM: stop the loop and clean up */
static int stop;

static void on_signal(int sig)
{
	__atomic_store_n(&stop, sig, __ATOMIC_RELAXED);
}

static bool stopped(void)
{
	return __atomic_load_n(&stop, __ATOMIC_RELAXED);
}

/*
 * Have SIGINT and SIGTERM set the flag that stopped() reads.  Without
 * SA_RESTART they also end a sleep or a read early.
 */
static void catch_stop_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

#endif /* _USER_EVENTS_SAMPLE_H */
