// SPDX-License-Identifier: GPL-2.0-only
/*
 * Decode the records of one user event from the raw ftrace buffers, with
 * libtraceevent.
 *
 * The program reads the description of the ring buffer pages
 * (events/header_page) and of the event (events/user_events/NAME/format),
 * then reads per_cpu/cpuN/trace_pipe_raw page by page and prints every
 * record of the event with the names and values of its fields.  Reading
 * trace_pipe_raw consumes the buffer: records of other events read along
 * the way are lost to other readers.
 *
 * Build it against libtraceevent (it is not built by the kernel samples
 * Makefile):
 *
 *   gcc -O2 -I usr/include decoder.c -ltraceevent -o decoder
 *
 * and try it with the example of this directory:
 *
 *   ./example -n 20 &
 *   ./decoder -e -d 10 example_event
 *
 * See Documentation/trace/user_events.rst.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <traceevent/event-parse.h>
#include <traceevent/kbuffer.h>
#include <traceevent/trace-seq.h>
#include <linux/user_events.h>

#include "sample.h"

static void usage(const char *prog)
{
	fprintf(stderr,
		"Usage: %s [-t TRACEFS] [-d SECONDS] [-e] [-p] EVENT\n"
		"  -t TRACEFS  tracefs mount point or instance directory\n"
		"  -d SECONDS  keep reading for SECONDS (default: read what is\n"
		"              buffered now, then stop)\n"
		"  -e          enable the event while reading, disable it after\n"
		"  -p          also print each record with the event's print fmt\n",
		prog);
}

/* Read a whole file into a NUL-terminated buffer; NULL on error */
static char *read_file(const char *path, size_t *size)
{
	size_t len = 0, alloc = 4096;
	char *buf = malloc(alloc), *grown;
	ssize_t r;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !buf)
		goto fail;

	for (;;) {
		if (alloc - len < 2) {
			alloc *= 2;
			grown = realloc(buf, alloc);
			if (!grown)
				goto fail;
			buf = grown;
		}
		r = read(fd, buf + len, alloc - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto fail;
		if (!r)
			break;
		len += r;
	}
	close(fd);
	buf[len] = '\0';
	*size = len;
	return buf;
fail:
	fprintf(stderr, "%s: %s\n", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -1;
	r = write(fd, text, strlen(text));
	close(fd);
	return r < 0 ? -1 : 0;
}

/* Find the tracefs mount point: the first one that has per_cpu/ */
static const char *find_tracefs(void)
{
	char path[PATH_MAX];
	int i;

	for (i = 0; tracefs_paths[i]; i++) {
		snprintf(path, sizeof(path), "%s/per_cpu", tracefs_paths[i]);
		if (!access(path, R_OK))
			return tracefs_paths[i];
	}
	return NULL;
}

/* Is the field a string: made of (signed) char? */
static bool field_is_string(const struct tep_format_field *field)
{
	return strstr(field->type, "char") && !strstr(field->type, "unsigned");
}

static void print_hex(const unsigned char *data, unsigned int len)
{
	unsigned int i;

	for (i = 0; i < len; i++)
		printf(i ? " %02x" : "%02x", data[i]);
}

static void print_string(const char *data, unsigned int len)
{
	printf("\"%.*s\"", (int)strnlen(data, len), data);
}

/* Print a __data_loc or __rel_loc field */
static void print_dynamic(const struct tep_format_field *field,
			  const unsigned char *rec, unsigned int size)
{
	unsigned int loc, start, len;

	memcpy(&loc, rec + field->offset, sizeof(loc));
	start = loc & 0xffff;
	len = loc >> 16;
	/* __rel_loc counts from the end of the location field */
	if (field->flags & TEP_FIELD_IS_RELATIVE)
		start += field->offset + field->size;

	if (start > size || len > size - start) {
		printf("<location %u+%u outside the record>", start, len);
		return;
	}
	if (field_is_string(field))
		print_string((const char *)rec + start, len);
	else
		print_hex(rec + start, len);
}

static void print_number(const struct tep_format_field *field,
			 const unsigned char *rec)
{
	unsigned long long val = 0;
	int shift;

	if (tep_read_number_field((struct tep_format_field *)field, rec, &val)) {
		printf("<size %d?>", field->size);
		return;
	}
	if (!(field->flags & TEP_FIELD_IS_SIGNED)) {
		printf("%llu", val);
		return;
	}
	/* Sign-extend values shorter than 64 bits */
	shift = 64 - 8 * field->size;
	printf("%lld", (long long)(val << shift) >> shift);
}

static void print_record(struct tep_handle *tep, struct tep_event *event,
			 struct tep_record *record, bool print_fmt)
{
	const unsigned char *rec = record->data;
	struct tep_format_field *field;
	unsigned long long ts = record->ts;

	printf("%6llu.%06llu cpu %d pid %d %s:", ts / 1000000000ULL,
	       (ts % 1000000000ULL) / 1000, record->cpu,
	       tep_data_pid(tep, record), event->name);

	for (field = event->format.fields; field; field = field->next) {
		printf(" %s=", field->name);
		if (field->offset + field->size > record->size) {
			printf("<missing>");
		} else if (field->flags & TEP_FIELD_IS_DYNAMIC) {
			print_dynamic(field, rec, record->size);
		} else if (field->flags & TEP_FIELD_IS_ARRAY) {
			if (field_is_string(field))
				print_string((const char *)rec + field->offset,
					     field->size);
			else
				print_hex(rec + field->offset, field->size);
		} else if (!strncmp(field->type, "struct ", 7)) {
			print_hex(rec + field->offset, field->size);
		} else {
			print_number(field, rec);
		}
	}
	printf("\n");

	if (print_fmt) {
		struct trace_seq s;

		trace_seq_init(&s);
		tep_print_event(tep, &s, record, "%s", TEP_PRINT_INFO);
		trace_seq_terminate(&s);
		printf("    print fmt: %s\n", s.buffer);
		trace_seq_destroy(&s);
	}
}

/* Decode one page read from trace_pipe_raw; returns the records shown */
static int decode_page(struct tep_handle *tep, struct kbuffer *kbuf,
		       struct tep_event *event, void *page, int cpu,
		       bool print_fmt)
{
	struct tep_record record;
	unsigned long long ts;
	int shown = 0;
	void *data;

	if (kbuffer_load_subbuffer(kbuf, page) < 0)
		return 0;
	if (kbuffer_missed_events(kbuf))
		printf("cpu %d: the buffer lost events before this page\n", cpu);

	for (data = kbuffer_read_event(kbuf, &ts); data;
	     data = kbuffer_next_event(kbuf, &ts)) {
		memset(&record, 0, sizeof(record));
		record.ts = ts;
		record.data = data;
		record.size = kbuffer_event_size(kbuf);
		record.record_size = kbuffer_curr_size(kbuf);
		record.cpu = cpu;

		if (tep_data_type(tep, &record) != event->id)
			continue;
		print_record(tep, event, &record, print_fmt);
		shown++;
	}
	return shown;
}

/* Set up libtraceevent with the page header and the event's format */
static struct tep_event *parse_formats(struct tep_handle *tep,
				       const char *tracefs, const char *name)
{
	char path[PATH_MAX];
	struct tep_event *event;
	size_t size;
	char *buf;
	int ret;

	tep_set_long_size(tep, sizeof(long));
	tep_set_page_size(tep, getpagesize());
	tep_set_file_bigendian(tep, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ?
			       TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ?
				TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);

	snprintf(path, sizeof(path), "%s/events/header_page", tracefs);
	buf = read_file(path, &size);
	if (!buf)
		return NULL;
	ret = tep_parse_header_page(tep, buf, size, sizeof(long));
	free(buf);
	if (ret) {
		fprintf(stderr, "%s: cannot parse it\n", path);
		return NULL;
	}

	snprintf(path, sizeof(path), "%s/events/%s/%s/format", tracefs,
		 USER_EVENTS_SYSTEM, name);
	buf = read_file(path, &size);
	if (!buf)
		return NULL;
	ret = tep_parse_event(tep, buf, size, USER_EVENTS_SYSTEM);
	free(buf);
	if (ret) {
		char msg[256];

		tep_strerror(tep, ret, msg, sizeof(msg));
		fprintf(stderr, "%s: %s\n", path, msg);
		return NULL;
	}

	event = tep_find_event_by_name(tep, USER_EVENTS_SYSTEM, name);
	if (!event)
		fprintf(stderr, "%s: no event %s after parsing\n", path, name);
	return event;
}

/* Open per_cpu/cpuN/trace_pipe_raw for every CPU that has one */
static int open_cpus(const char *tracefs, int *fds, int max)
{
	char path[PATH_MAX];
	int cpu, n = 0;

	for (cpu = 0; cpu < max; cpu++) {
		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/trace_pipe_raw",
			 tracefs, cpu);
		fds[cpu] = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fds[cpu] >= 0)
			n++;
		else if (errno != ENOENT)
			fprintf(stderr, "%s: %s\n", path, strerror(errno));
	}
	return n;
}

static double elapsed(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) +
	       (now.tv_nsec - start->tv_nsec) / 1e9;
}

int main(int argc, char **argv)
{
	const char *tracefs = NULL, *name;
	bool enable = false, print_fmt = false;
	int page_size = getpagesize();
	int opt, cpu, ncpus, shown = 0, ret = EXIT_FAILURE;
	char enable_path[PATH_MAX];
	struct tep_handle *tep = NULL;
	struct kbuffer *kbuf = NULL;
	struct tep_event *event;
	struct timespec start;
	double duration = 0;
	bool got_data;
	void *page = NULL;
	int *fds = NULL;
	ssize_t r;

	while ((opt = getopt(argc, argv, "t:d:eph")) != -1) {
		switch (opt) {
		case 't':
			tracefs = optarg;
			break;
		case 'd':
			duration = atof(optarg);
			break;
		case 'e':
			enable = true;
			break;
		case 'p':
			print_fmt = true;
			break;
		default:
			usage(argv[0]);
			return opt == 'h' ? EXIT_SUCCESS : EXIT_FAILURE;
		}
	}
	if (optind != argc - 1) {
		usage(argv[0]);
		return EXIT_FAILURE;
	}
	name = argv[optind];

	if (!tracefs)
		tracefs = find_tracefs();
	if (!tracefs) {
		fprintf(stderr, "tracefs not found: mount it or use -t\n");
		return EXIT_FAILURE;
	}

	catch_stop_signals();

	tep = tep_alloc();
	if (!tep)
		goto out;
	event = parse_formats(tep, tracefs, name);
	if (!event)
		goto out;

	kbuf = kbuffer_alloc(sizeof(long) == 8 ? KBUFFER_LSIZE_8 :
			     KBUFFER_LSIZE_4, KBUFFER_ENDIAN_SAME_AS_HOST);
	page = malloc(page_size);
	ncpus = sysconf(_SC_NPROCESSORS_CONF);
	fds = calloc(ncpus, sizeof(*fds));
	if (!kbuf || !page || !fds || ncpus < 1)
		goto out;
	if (!open_cpus(tracefs, fds, ncpus)) {
		fprintf(stderr, "no per_cpu/cpuN/trace_pipe_raw in %s\n",
			tracefs);
		goto out;
	}

	snprintf(enable_path, sizeof(enable_path), "%s/events/%s/%s/enable",
		 tracefs, USER_EVENTS_SYSTEM, name);
	if (enable && write_file(enable_path, "1") < 0) {
		fprintf(stderr, "%s: %s\n", enable_path, strerror(errno));
		goto out;
	}

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		got_data = false;
		for (cpu = 0; cpu < ncpus && !stopped(); cpu++) {
			if (fds[cpu] < 0)
				continue;
			/* Each read returns at most one page of records */
			r = read(fds[cpu], page, page_size);
			if (r <= 0)
				continue;
			got_data = true;
			shown += decode_page(tep, kbuf, event, page, cpu,
					     print_fmt);
		}
		fflush(stdout);
		if (!got_data && elapsed(&start) < duration)
			usleep(100000);
		/* After the duration, drain what is left, for a second at most */
	} while (!stopped() && (elapsed(&start) < duration ||
				(got_data && elapsed(&start) < duration + 1)));

	if (enable && write_file(enable_path, "0") < 0)
		fprintf(stderr, "%s: %s\n", enable_path, strerror(errno));

	printf("%d %s records\n", shown, name);
	ret = EXIT_SUCCESS;
out:
	if (fds) {
		for (cpu = 0; cpu < ncpus; cpu++) {
			if (fds[cpu] >= 0)
				close(fds[cpu]);
		}
	}
	free(fds);
	free(page);
	if (kbuf)
		kbuffer_free(kbuf);
	if (tep)
		tep_free(tep);
	return ret;
}
