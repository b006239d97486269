// SPDX-License-Identifier: GPL-2.0-only
/*
 * Decode the records of one user event from the raw ftrace buffers, with
 * libtraceevent.
 *
 * The program reads the description of the ring buffer pages
 * (events/header_page) and of the event (events/user_events/NAME/format),
 * then reads per_cpu/cpuN/trace_pipe_raw page by page and prints every
 * record of the event with the names and values of its fields, the
 * records of all CPUs merged in the order of their time stamps.  Reading
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

static double elapsed(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) +
	       (now.tv_nsec - start->tv_nsec) / 1e9;
}

/*
 * The reader of one CPU's buffer: its trace_pipe_raw, the page last read
 * from it and the record of that page that is next in time, if any.
 */
struct cpu_reader {
	int cpu;
	int fd;
	void *page;
	struct kbuffer *kbuf;
	void *data;
	unsigned long long ts;
};

/*
 * Load the next page of @r that holds a record; false if its buffer has
 * none now.  Each read of trace_pipe_raw returns at most one page.
 */
static bool cpu_refill(struct cpu_reader *r, int page_size)
{
	while (!r->data) {
		if (read(r->fd, r->page, page_size) <= 0)
			return false;
		if (kbuffer_load_subbuffer(r->kbuf, r->page) < 0)
			continue;
		if (kbuffer_missed_events(r->kbuf))
			printf("cpu %d: the buffer lost events before this page\n",
			       r->cpu);
		r->data = kbuffer_read_event(r->kbuf, &r->ts);
	}
	return true;
}

/*
 * Print the records that the CPUs' buffers hold now, oldest first across
 * all CPUs, as trace-cmd does: take the record with the smallest time
 * stamp among the next one of each CPU.  Stops when no buffer has more,
 * or at @until seconds after @start.  Returns the records of @event
 * shown; sets *got_data if any page was read.
 */
static int decode_cpus(struct tep_handle *tep, struct tep_event *event,
		       struct cpu_reader *readers, int nr, int page_size,
		       bool print_fmt, const struct timespec *start,
		       double until, bool *got_data)
{
	struct cpu_reader *r, *oldest;
	struct tep_record record;
	int i, shown = 0;

	while (!stopped() && elapsed(start) < until) {
		oldest = NULL;
		for (i = 0; i < nr; i++) {
			r = &readers[i];
			if (!cpu_refill(r, page_size))
				continue;
			*got_data = true;
			if (!oldest || r->ts < oldest->ts)
				oldest = r;
		}
		if (!oldest)
			break;

		memset(&record, 0, sizeof(record));
		record.ts = oldest->ts;
		record.data = oldest->data;
		record.size = kbuffer_event_size(oldest->kbuf);
		record.record_size = kbuffer_curr_size(oldest->kbuf);
		record.cpu = oldest->cpu;
		if (tep_data_type(tep, &record) == event->id) {
			print_record(tep, event, &record, print_fmt);
			shown++;
		}
		oldest->data = kbuffer_next_event(oldest->kbuf, &oldest->ts);
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

static void close_cpus(struct cpu_reader *readers, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		close(readers[i].fd);
		free(readers[i].page);
		if (readers[i].kbuf)
			kbuffer_free(readers[i].kbuf);
	}
}

/*
 * Set up a reader for every CPU that has a per_cpu/cpuN/trace_pipe_raw;
 * returns how many, or -1 on error.
 */
static int open_cpus(const char *tracefs, struct cpu_reader *readers,
		     int max, int page_size)
{
	enum kbuffer_long_size lsize = sizeof(long) == 8 ? KBUFFER_LSIZE_8 :
							    KBUFFER_LSIZE_4;
	char path[PATH_MAX];
	int cpu, fd, n = 0;

	for (cpu = 0; cpu < max; cpu++) {
		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/trace_pipe_raw",
			 tracefs, cpu);
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0) {
			if (errno != ENOENT)
				fprintf(stderr, "%s: %s\n", path, strerror(errno));
			continue;
		}
		readers[n].cpu = cpu;
		readers[n].fd = fd;
		readers[n].page = malloc(page_size);
		readers[n].kbuf = kbuffer_alloc(lsize,
						KBUFFER_ENDIAN_SAME_AS_HOST);
		n++;
		if (!readers[n - 1].page || !readers[n - 1].kbuf) {
			close_cpus(readers, n);
			return -1;
		}
	}
	return n;
}

int main(int argc, char **argv)
{
	const char *tracefs = NULL, *name;
	bool enable = false, print_fmt = false;
	int page_size = getpagesize();
	int opt, ncpus, nr = 0, shown = 0, ret = EXIT_FAILURE;
	struct cpu_reader *readers = NULL;
	char enable_path[PATH_MAX];
	struct tep_handle *tep = NULL;
	struct tep_event *event;
	struct timespec start;
	double duration = 0;
	bool got_data;

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

	ncpus = sysconf(_SC_NPROCESSORS_CONF);
	if (ncpus < 1)
		goto out;
	readers = calloc(ncpus, sizeof(*readers));
	if (!readers)
		goto out;
	nr = open_cpus(tracefs, readers, ncpus, page_size);
	if (!nr)
		fprintf(stderr, "no per_cpu/cpuN/trace_pipe_raw in %s\n",
			tracefs);
	if (nr <= 0) {
		nr = 0;
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
		/* After the duration, drain what is left, for a second at most */
		shown += decode_cpus(tep, event, readers, nr, page_size,
				     print_fmt, &start, duration + 1,
				     &got_data);
		fflush(stdout);
		if (!got_data && elapsed(&start) < duration)
			usleep(100000);
	} while (!stopped() && (elapsed(&start) < duration ||
				(got_data && elapsed(&start) < duration + 1)));

	if (enable && write_file(enable_path, "0") < 0)
		fprintf(stderr, "%s: %s\n", enable_path, strerror(errno));

	printf("%d %s records\n", shown, name);
	ret = EXIT_SUCCESS;
out:
	if (readers)
		close_cpus(readers, nr);
	free(readers);
	if (tep)
		tep_free(tep);
	return ret;
}
