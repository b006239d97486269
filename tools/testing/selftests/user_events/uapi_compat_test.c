// SPDX-License-Identifier: GPL-2.0
/*
 * A program written the way programs for Linux 5.18 use user_events: it
 * includes <linux/user_events.h> and uses struct iovec and writev(), which
 * 5.18's header brought in through <sys/uio.h>, without including
 * <sys/uio.h> itself.  That this file compiles is the first check; it then
 * registers an event, waits for its status byte, writes it with writev()
 * and reads the record back from the trace buffer.
 *
 * It uses none of user_events_selftests.h, which includes <sys/uio.h>, nor
 * <fcntl.h>, which defines struct iovec with _GNU_SOURCE (set by the
 * kselftest harness): files are opened with fopen().
 */
#pragma GCC diagnostic error "-Wimplicit-function-declaration"

#include <sys/ioctl.h>
#include <linux/user_events.h>

#include "../kselftest_harness.h"

#define EVENT		"ue_uapi_compat"
#define COMMON_SIZE	8	/* common fields in front of the payload */

/* The fixed fields of EVENT, in order and without padding */
struct compat_payload {
	__u32 count;
	__u32 msg_loc;
};

FIXTURE(uapi) {
	char root[64];
	FILE *data;
	FILE *status_file;
	__u8 *status;
};

/* @buf (of @size bytes) receives the path of tracefs file @rel */
static const char *tracefs_file(const char *root, const char *rel,
				char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", root, rel);

	return buf;
}

/* Write @text to tracefs file @rel, truncating it; 0 or -1 */
static int put_file(const char *root, const char *rel, const char *text)
{
	char path[256];
	FILE *f = fopen(tracefs_file(root, rel, path, sizeof(path)), "we");
	int ret;

	if (!f)
		return -1;
	ret = fputs(text, f) < 0 ? -1 : 0;
	if (fclose(f))
		ret = -1;

	return ret;
}

FIXTURE_SETUP(uapi)
{
	static const char * const roots[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	char path[256];
	size_t i;

	self->data = NULL;
	self->status_file = NULL;
	self->status = MAP_FAILED;
	for (i = 0; i < ARRAY_SIZE(roots); i++) {
		snprintf(path, sizeof(path), "%s/user_events_data", roots[i]);
		if (!access(path, F_OK))
			break;
	}
	if (geteuid() != 0 || i == ARRAY_SIZE(roots))
		SKIP(_exit(255), "needs root and user_events");
	snprintf(self->root, sizeof(self->root), "%s", roots[i]);

	self->data = fopen(tracefs_file(self->root, "user_events_data", path,
					sizeof(path)), "r+e");
	ASSERT_NE(NULL, self->data);
	self->status_file = fopen(tracefs_file(self->root, "user_events_status", path,
					       sizeof(path)), "re");
	ASSERT_NE(NULL, self->status_file);
	self->status = mmap(NULL, 4096, PROT_READ, MAP_SHARED,
			    fileno(self->status_file), 0);
	ASSERT_NE(MAP_FAILED, self->status);
	/* Empties the trace buffer */
	ASSERT_EQ(0, put_file(self->root, "trace", ""));
}

FIXTURE_TEARDOWN(uapi)
{
	char path[256];

	if (self->status != MAP_FAILED)
		munmap(self->status, 4096);
	if (self->status_file)
		fclose(self->status_file);
	if (self->data)
		fclose(self->data);
	put_file(self->root, "events/user_events/" EVENT "/enable", "0\n");
	put_file(self->root, "trace", "");

	/* Nothing holds the event any more: delete it */
	self->data = fopen(tracefs_file(self->root, "user_events_data", path,
					sizeof(path)), "r+e");
	if (self->data) {
		ioctl(fileno(self->data), DIAG_IOCSDEL, EVENT);
		fclose(self->data);
	}
}

TEST_F(uapi, writev_without_sys_uio)
{
	static const char msg[] = "written the 5.18 way";
	struct compat_payload payload;
	char line[4096], *text = NULL;
	struct user_reg reg;
	struct iovec io[3];
	int records = 0;
	FILE *trace;

	memset(&reg, 0, sizeof(reg));
	reg.size = sizeof(reg);
	reg.name_args = (__u64)(uintptr_t)(EVENT " u32 count; "
					   "__data_loc char[] msg");
	ASSERT_EQ(0, ioctl(fileno(self->data), DIAG_IOCSREG, &reg));
	ASSERT_NE(0, reg.status_index);
	ASSERT_EQ(0, self->status[reg.status_index]);

	ASSERT_EQ(0, put_file(self->root, "events/user_events/" EVENT "/enable",
			      "1\n"));
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->status[reg.status_index]);

	payload.count = 518;
	payload.msg_loc = DYN_LOC(COMMON_SIZE + sizeof(payload), sizeof(msg));
	io[0].iov_base = &reg.write_index;
	io[0].iov_len = sizeof(reg.write_index);
	io[1].iov_base = &payload;
	io[1].iov_len = sizeof(payload);
	io[2].iov_base = (void *)msg;
	io[2].iov_len = sizeof(msg);
	ASSERT_EQ(4 + sizeof(payload) + sizeof(msg),
		  writev(fileno(self->data), io, 3));

	ASSERT_EQ(0, put_file(self->root, "events/user_events/" EVENT "/enable",
			      "0\n"));
	ASSERT_EQ(0, self->status[reg.status_index]);

	/* "  task-pid  [cpu] flags  time: ue_uapi_compat: count=518 ..." */
	trace = fopen(tracefs_file(self->root, "trace", line, sizeof(line)), "re");
	ASSERT_NE(NULL, trace);
	while (fgets(line, sizeof(line), trace)) {
		char *hit = strstr(line, ": " EVENT ": ");

		if (line[0] == '#' || !hit)
			continue;
		records++;
		free(text);
		text = strdup(hit + strlen(": " EVENT ": "));
	}
	fclose(trace);
	ASSERT_EQ(1, records);
	ASSERT_NE(NULL, text);
	EXPECT_STREQ("count=518 msg=written the 5.18 way\n", text);
	free(text);
}

TEST_HARNESS_MAIN
