// SPDX-License-Identifier: GPL-2.0-only
/*
 * A user_events example with an enable bit, the interface of Linux 6.4 and
 * later: the kernel keeps a bit in this program's memory set while a tracer
 * is attached to its event, and the program writes the event only then.
 *
 * It registers "enable_bit_event" on tracefs' user_events_data, naming bit
 * 31 of the variable "enabled", and then, a number of times, tests the bit
 * and writes the event when it is set.  No status page is involved.  The
 * event is automatic: the kernel deletes it once this program is gone and
 * nothing else uses it; what a trace buffer recorded of it stays readable.
 * A write while nothing is attached fails with EBADF, which the program
 * takes for "not enabled": a tracer may detach between the test of the bit
 * and the write.
 *
 * Try it as root:
 *
 *   ./enable_bit -n 20 &
 *   echo 1 > /sys/kernel/tracing/events/user_events/enable_bit_event/enable
 *   cat /sys/kernel/tracing/trace_pipe
 *
 * See Documentation/trace/user_events.rst.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>

/* The enable bit layout of struct user_reg, and DIAG_IOCSUNREG */
#define USER_EVENTS_ENABLE_BIT_ABI
#include <linux/user_events.h>

#define EVENT_NAME "enable_bit_event"
/* Natural alignment for every field: bpftrace reads it as a C struct */
#define EVENT_FIELDS "u32 count; __data_loc char[] message"
#define ENABLE_BIT 31

/* Size of the common fields in front of the payload in the record */
#define COMMON_FIELDS_SIZE 8

struct event_payload {
	__u32 count;
	__u32 message_loc;	/* __data_loc: offset from the record start */
};

/*
 * The kernel sets and clears bit ENABLE_BIT from other tasks, at any time;
 * this program must not write the variable, or it would race with it.
 */
static __u32 enabled;

static int enable_bit_set(void)
{
	return __atomic_load_n(&enabled, __ATOMIC_RELAXED) & (1U << ENABLE_BIT);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (ms % 1000) * 1000000L,
	};

	nanosleep(&ts, NULL);
}

static int register_event(int data_fd, __u32 *write_index)
{
	struct user_reg reg;

	memset(&reg, 0, sizeof(reg));
	reg.size = sizeof(reg);
	reg.enable_bit = ENABLE_BIT;
	reg.enable_size = sizeof(enabled);
	reg.enable_addr = (__u64)(unsigned long)&enabled;
	reg.name_args = (__u64)(unsigned long)(EVENT_NAME " " EVENT_FIELDS);

	if (ioctl(data_fd, DIAG_IOCSREG, &reg) < 0)
		return -1;
	*write_index = reg.write_index;
	return 0;
}

static int unregister_event(int data_fd)
{
	struct user_unreg unreg;

	memset(&unreg, 0, sizeof(unreg));
	unreg.size = sizeof(unreg);
	unreg.disable_bit = ENABLE_BIT;
	unreg.disable_addr = (__u64)(unsigned long)&enabled;

	return ioctl(data_fd, DIAG_IOCSUNREG, &unreg);
}

static ssize_t write_event(int data_fd, __u32 write_index, __u32 count,
			   const char *message)
{
	__u32 len = strlen(message) + 1;
	struct event_payload payload = {
		.count = count,
		/* The string follows the fixed fields */
		.message_loc = DYN_LOC(COMMON_FIELDS_SIZE + sizeof(payload),
				       len),
	};
	struct iovec io[3] = {
		{ .iov_base = &write_index, .iov_len = sizeof(write_index) },
		{ .iov_base = &payload, .iov_len = sizeof(payload) },
		{ .iov_base = (void *)message, .iov_len = len },
	};

	return writev(data_fd, io, 3);
}

int main(int argc, char **argv)
{
	long count = 10, interval = 500, wait = 0, i, written = 0;
	char message[64];
	__u32 write_index;
	int data_fd, opt;

	while ((opt = getopt(argc, argv, "n:i:w:h")) != -1) {
		switch (opt) {
		case 'n':
			count = strtol(optarg, NULL, 0);
			break;
		case 'i':
			interval = strtol(optarg, NULL, 0);
			break;
		case 'w':
			wait = strtol(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr,
				"Usage: %s [-n COUNT] [-i MS] [-w SECONDS]\n"
				"  -n COUNT    test the bit COUNT times (default 10)\n"
				"  -i MS       wait MS milliseconds between tests (default 500)\n"
				"  -w SECONDS  first wait until the event is enabled, at most SECONDS\n",
				argv[0]);
			return opt == 'h' ? EXIT_SUCCESS : EXIT_FAILURE;
		}
	}

	data_fd = open("/sys/kernel/tracing/user_events_data", O_RDWR);
	if (data_fd < 0) {
		perror("open /sys/kernel/tracing/user_events_data");
		return EXIT_FAILURE;
	}
	if (register_event(data_fd, &write_index) < 0) {
		perror("DIAG_IOCSREG " EVENT_NAME);
		return EXIT_FAILURE;
	}
	printf("registered %s: bit %d of %p, write index %u\n", EVENT_NAME,
	       ENABLE_BIT, (void *)&enabled, write_index);
	fflush(stdout);

	for (i = 0; i < wait * 100 && !enable_bit_set(); i++)
		sleep_ms(10);

	for (i = 0; i < count; i++) {
		if (i)
			sleep_ms(interval);

		if (!enable_bit_set()) {
			printf("%ld: disabled, nothing written\n", i);
			fflush(stdout);
			continue;
		}
		snprintf(message, sizeof(message), "iteration %ld of %ld",
			 i + 1, count);
		if (write_event(data_fd, write_index, i, message) < 0) {
			/* The tracer detached since the bit was read */
			if (errno == EBADF) {
				printf("%ld: disabled meanwhile, nothing written\n",
				       i);
				fflush(stdout);
				continue;
			}
			perror("writev");
			return EXIT_FAILURE;
		}
		printf("%ld: enabled, wrote event %ld\n", i, ++written);
		fflush(stdout);
	}
	printf("%ld events written\n", written);

	/* Exit would drop the registration too; this clears the bit now */
	if (unregister_event(data_fd) < 0)
		perror("DIAG_IOCSUNREG");
	close(data_fd);
	return EXIT_SUCCESS;
}
