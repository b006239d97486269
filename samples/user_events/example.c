// SPDX-License-Identifier: GPL-2.0-only
/*
 * A user_events example: a program that defines its own trace event and
 * emits it only while a tracer is attached to it.
 *
 * It registers "example_event" on tracefs' user_events_data, maps the
 * status page from user_events_status and then, a number of times, checks
 * the event's status byte and writes the event when the byte is set.
 *
 * Try it as root:
 *
 *   ./example -n 20 &
 *   echo 1 > /sys/kernel/tracing/events/user_events/example_event/enable
 *   cat /sys/kernel/tracing/trace_pipe
 *
 * With -b N it writes a burst of N events at each check, in one batched
 * write where the kernel has batches, else one write per event.
 *
 * See Documentation/trace/user_events.rst.
 */

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
/* The status page layout of struct user_reg */
#define USER_EVENTS_STATUS_PAGE_ABI
#include <linux/user_events.h>

#include "sample.h"

#define EVENT_NAME "example_event"

/*
 * The fields of the event.  The kernel lays them out one after the other,
 * without padding, so the payload must have the same layout: either a
 * packed structure or, as here, one whose members are ordered so that the
 * compiler adds no padding.  The strings of the two dynamic fields follow
 * the structure.
 */
#define EVENT_FIELDS				\
	"u64 time_ns; "				\
	"u32 count; "				\
	"u32 pid; "				\
	"char[16] program; "			\
	"struct example_point point 8; "	\
	"__rel_loc char[] message; "		\
	"__data_loc char[] note"

struct example_point {
	__s32 x;
	__s32 y;
};

struct example_payload {
	__u64 time_ns;
	__u32 count;
	__u32 pid;
	char program[16];
	struct example_point point;
	__u32 message_loc;	/* __rel_loc: offset from the end of this field */
	__u32 note_loc;		/* __data_loc: offset from the record start */
};

static_assert(sizeof(struct example_payload) == 48,
	      "struct example_payload must not have padding");

/*
 * Size of the common fields the kernel puts in front of the payload in
 * the record: __data_loc offsets count them.  It is the offset of the
 * first field in events/user_events/example_event/format.
 */
#define COMMON_FIELDS_SIZE 8

/*
 * The kernel sets and clears the status byte at any time: read it anew at
 * every check, and only once per check.
 */
static __u8 event_status(const __u8 *status_page, __u32 status_index)
{
	return __atomic_load_n(&status_page[status_index], __ATOMIC_RELAXED);
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"Usage: %s [-n COUNT] [-b BURST] [-i MS] [-w SECONDS] [-d] [-t TRACEFS]\n"
		"  -n COUNT    check the event COUNT times (default 10)\n"
		"  -b BURST    write BURST events at each check, batched (default 1)\n"
		"  -i MS       wait MS milliseconds between checks (default 500)\n"
		"  -w SECONDS  first wait until the event is enabled, at most SECONDS\n"
		"  -d          delete the event at exit, if nothing else uses it\n"
		"  -t TRACEFS  tracefs mount point (default: look for it)\n",
		prog);
}

static long parse_number(const char *arg, const char *what, long max)
{
	char *end;
	long val;

	errno = 0;
	val = strtol(arg, &end, 0);
	if (errno || *end || end == arg || val < 0 || val > max) {
		fprintf(stderr, "invalid %s: %s\n", what, arg);
		exit(EXIT_FAILURE);
	}
	return val;
}

/* Open a file of tracefs, looking for the mount point unless given */
static int open_tracefs(const char *tracefs, const char *file, int flags)
{
	char path[PATH_MAX];
	size_t i;
	int fd;

	if (tracefs) {
		snprintf(path, sizeof(path), "%s/%s", tracefs, file);
		return open(path, flags | O_CLOEXEC);
	}

	for (i = 0; tracefs_paths[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", tracefs_paths[i], file);
		fd = open(path, flags | O_CLOEXEC);
		if (fd >= 0 || errno != ENOENT)
			return fd;
	}
	return -1;
}

/* Register the event on @data_fd; returns -1 with errno on failure */
static int register_event(int data_fd, __u32 *status_index,
			  __u32 *write_index)
{
	struct user_reg reg;

	memset(&reg, 0, sizeof(reg));
	reg.size = sizeof(reg);
	reg.name_args = (__u64)(unsigned long)(EVENT_NAME " " EVENT_FIELDS);

	if (ioctl(data_fd, DIAG_IOCSREG, &reg) < 0)
		return -1;

	*status_index = reg.status_index;
	*write_index = reg.write_index;
	return 0;
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (ms % 1000) * 1000000L,
	};

	/* A signal ends the sleep early, which is what we want */
	nanosleep(&ts, NULL);
}

/*
 * Fill the fixed fields of one event whose message and note strings, of
 * @message_len and @note_len bytes with their NULs, follow them.
 */
static void fill_payload(struct example_payload *payload, __u32 count,
			 __u32 message_len, __u32 note_len)
{
	__u32 message_start, note_start;

	memset(payload, 0, sizeof(*payload));
	payload->time_ns = now_ns();
	payload->count = count;
	payload->pid = getpid();
	snprintf(payload->program, sizeof(payload->program), "example");
	payload->point.x = count;
	payload->point.y = -(__s32)count;

	/* Offsets in the payload: the strings follow the fixed fields */
	message_start = sizeof(*payload);
	note_start = message_start + message_len;

	/* __rel_loc: counted from the end of the location field itself */
	payload->message_loc =
		DYN_LOC(message_start - (offsetof(struct example_payload,
						  message_loc) + sizeof(__u32)),
			message_len);

	/* __data_loc: counted from the start of the record */
	payload->note_loc = DYN_LOC(COMMON_FIELDS_SIZE + note_start, note_len);
}

/* Build one event and write it: returns the result of writev() */
static ssize_t write_event(int data_fd, __u32 write_index, __u32 count,
			   const char *message, const char *note)
{
	struct example_payload payload;
	__u32 message_len = strlen(message) + 1;
	__u32 note_len = strlen(note) + 1;
	struct iovec io[4];

	fill_payload(&payload, count, message_len, note_len);

	/* The write index comes first, in an iovec of its own */
	io[0].iov_base = &write_index;
	io[0].iov_len = sizeof(write_index);
	io[1].iov_base = &payload;
	io[1].iov_len = sizeof(payload);
	io[2].iov_base = (void *)message;
	io[2].iov_len = message_len;
	io[3].iov_base = (void *)note;
	io[3].iov_len = note_len;

	return writev(data_fd, io, 4);
}

/*
 * Ask whether the kernel takes batched writes: the marker alone is an
 * empty batch, which such a kernel accepts; others refuse it with EINVAL
 * as a negative write index.
 */
static bool kernel_has_batches(int data_fd)
{
	__u32 marker = USER_EVENT_BATCH;

	return write(data_fd, &marker, sizeof(marker)) == sizeof(marker);
}

/*
 * A batch being built: the marker, then records, each a struct
 * user_batch_record and its payload, one after the other.
 */
struct batch {
	char buf[USER_EVENT_BATCH_MAX];
	size_t len;
	long records;
};

static void batch_start(struct batch *b)
{
	__u32 marker = USER_EVENT_BATCH;

	memcpy(b->buf, &marker, sizeof(marker));
	b->len = sizeof(marker);
	b->records = 0;
}

/* Append one event; false if the batch has no room left for it */
static bool batch_add(struct batch *b, __u32 write_index, __u32 count,
		      const char *message, const char *note)
{
	struct user_batch_record rec;
	struct example_payload payload;
	__u32 message_len = strlen(message) + 1;
	__u32 note_len = strlen(note) + 1;
	char *p = b->buf + b->len;

	rec.write_index = write_index;
	rec.size = sizeof(payload) + message_len + note_len;
	if (sizeof(rec) + rec.size > sizeof(b->buf) - b->len)
		return false;

	fill_payload(&payload, count, message_len, note_len);
	/* The buffer packs records without padding: copy, do not cast */
	memcpy(p, &rec, sizeof(rec));
	p += sizeof(rec);
	memcpy(p, &payload, sizeof(payload));
	p += sizeof(payload);
	memcpy(p, message, message_len);
	p += message_len;
	memcpy(p, note, note_len);

	b->len += sizeof(rec) + rec.size;
	b->records++;
	return true;
}

/*
 * Write the batch: 0 if every record was taken, else -1.  A kernel that
 * refuses a record returns the bytes before it: tell which one it was.
 */
static int batch_write(int data_fd, struct batch *b)
{
	ssize_t ret;

	if (!b->records)
		return 0;
	ret = write(data_fd, b->buf, b->len);
	if (ret < 0) {
		perror("write of a batch");
		return -1;
	}
	if ((size_t)ret < b->len) {
		fprintf(stderr, "the batch stopped at byte %zd of %zu\n",
			ret, b->len);
		return -1;
	}
	batch_start(b);
	return 0;
}

/*
 * Write @burst events, numbered from @first: in as few batches as they
 * fit in if @b is given, else one writev() each.  Returns how many were
 * written, or -1.
 */
static long write_burst(int data_fd, __u32 write_index, struct batch *b,
			long first, long burst, const char *message)
{
	long i;

	for (i = first; i < first + burst; i++) {
		if (!b) {
			if (write_event(data_fd, write_index, (__u32)i, message,
					"from example.c") < 0) {
				perror("writev");
				return -1;
			}
			continue;
		}
		if (batch_add(b, write_index, (__u32)i, message,
			      "from example.c"))
			continue;
		/* Full: write it and start the next one with this event */
		if (batch_write(data_fd, b) < 0)
			return -1;
		batch_add(b, write_index, (__u32)i, message, "from example.c");
	}
	if (b && batch_write(data_fd, b) < 0)
		return -1;
	return burst;
}

/* Wait until the status byte is set, for at most @seconds */
static int wait_enabled(const __u8 *status_page, __u32 status_index,
			long seconds)
{
	long waited;

	for (waited = 0; waited < seconds * 100 && !stopped(); waited++) {
		if (event_status(status_page, status_index))
			return 0;
		sleep_ms(10);
	}
	return event_status(status_page, status_index) ? 0 : -1;
}

/* Delete the event, with a new descriptor: ours holds a reference */
static void delete_event(const char *tracefs)
{
	int fd = open_tracefs(tracefs, "user_events_data", O_RDWR);

	if (fd < 0) {
		perror("open user_events_data");
		return;
	}

	if (ioctl(fd, DIAG_IOCSDEL, EVENT_NAME) == 0)
		printf("deleted %s\n", EVENT_NAME);
	else if (errno == EBUSY)
		printf("%s is still in use, not deleted\n", EVENT_NAME);
	else if (errno != ENOENT)
		perror("DIAG_IOCSDEL");

	close(fd);
}

int main(int argc, char **argv)
{
	const char *tracefs = NULL;
	long count = 10, burst = 1, interval = 500, wait = -1;
	struct batch *batch = NULL;
	__u32 status_index, write_index;
	const __u8 *status_page;
	long page_size = sysconf(_SC_PAGESIZE);
	int data_fd, status_fd, opt, ret = EXIT_SUCCESS;
	bool delete = false;
	long i, written = 0;
	char message[64];
	__u8 status;

	while ((opt = getopt(argc, argv, "n:b:i:w:dt:h")) != -1) {
		switch (opt) {
		case 'n':
			count = parse_number(optarg, "count", LONG_MAX);
			break;
		case 'b':
			burst = parse_number(optarg, "burst", 1000000);
			break;
		case 'i':
			interval = parse_number(optarg, "interval", 3600000);
			break;
		case 'w':
			wait = parse_number(optarg, "timeout", 86400);
			break;
		case 'd':
			delete = true;
			break;
		case 't':
			tracefs = optarg;
			break;
		default:
			usage(argv[0]);
			return opt == 'h' ? EXIT_SUCCESS : EXIT_FAILURE;
		}
	}
	if (optind < argc) {
		usage(argv[0]);
		return EXIT_FAILURE;
	}

	catch_stop_signals();

	data_fd = open_tracefs(tracefs, "user_events_data", O_RDWR);
	if (data_fd < 0) {
		perror("open user_events_data");
		fprintf(stderr, "(needs CONFIG_USER_EVENTS, tracefs and root)\n");
		return EXIT_FAILURE;
	}

	status_fd = open_tracefs(tracefs, "user_events_status", O_RDONLY);
	if (status_fd < 0) {
		perror("open user_events_status");
		return EXIT_FAILURE;
	}

	/* One page, read-only, at offset 0: the same page for everybody */
	status_page = mmap(NULL, page_size, PROT_READ, MAP_SHARED, status_fd, 0);
	if (status_page == MAP_FAILED) {
		perror("mmap user_events_status");
		return EXIT_FAILURE;
	}
	/* The mapping stays valid without the descriptor */
	close(status_fd);

	if (register_event(data_fd, &status_index, &write_index) < 0) {
		perror("DIAG_IOCSREG " EVENT_NAME);
		return EXIT_FAILURE;
	}
	printf("registered %s: status index %u, write index %u\n",
	       EVENT_NAME, status_index, write_index);

	if (burst > 1) {
		if (kernel_has_batches(data_fd)) {
			batch = malloc(sizeof(*batch));
			if (!batch) {
				perror("malloc");
				return EXIT_FAILURE;
			}
			batch_start(batch);
			printf("bursts of %ld events, in batched writes\n",
			       burst);
		} else {
			printf("bursts of %ld events, one write each (no batches: %s)\n",
			       burst, strerror(errno));
		}
	}
	printf("enable it with: echo 1 > %s/events/user_events/%s/enable\n",
	       tracefs ? tracefs : "/sys/kernel/tracing", EVENT_NAME);
	fflush(stdout);

	if (wait >= 0) {
		printf("waiting up to %ld s for the event to be enabled\n", wait);
		fflush(stdout);
		if (wait_enabled(status_page, status_index, wait) < 0) {
			printf("%s was not enabled in time\n", EVENT_NAME);
			ret = 2;
			count = 0;
		}
	}

	for (i = 0; i < count && !stopped(); i++) {
		if (i)
			sleep_ms(interval);

		/* Read the byte at every check: tracers come and go */
		status = event_status(status_page, status_index);
		if (!status) {
			printf("%ld: disabled, nothing written\n", i);
			fflush(stdout);
			continue;
		}

		snprintf(message, sizeof(message), "iteration %ld of %ld",
			 i + 1, count);
		if (write_burst(data_fd, write_index, batch, i * burst, burst,
				message) < 0) {
			ret = EXIT_FAILURE;
			break;
		}
		written += burst;
		printf("%ld: status 0x%02x (used by%s%s%s), wrote event %ld\n", i,
		       status,
		       status & EVENT_STATUS_FTRACE ? " ftrace" : "",
		       status & EVENT_STATUS_PERF ? " perf" : "",
		       status & EVENT_STATUS_OTHER ? " other" : "",
		       written);
		fflush(stdout);
	}

	printf("%ld events written\n", written);

	/* Closing the descriptor drops its reference on the event */
	close(data_fd);
	free(batch);
	munmap((void *)status_page, page_size);

	if (delete)
		delete_event(tracefs);

	return ret;
}
