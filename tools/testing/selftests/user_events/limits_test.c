// SPDX-License-Identifier: GPL-2.0
/*
 * Limits of user_events that reg_test does not reach:
 *
 * - every status byte in use, then every event deleted: as many events
 *   register again, through dynamic_events this time, and get the same
 *   bytes (no status byte leaked by registration, writes or deletion);
 * - thousands of write indexes on one fd: each index writes its own event
 *   (checked on a sample of enabled events), and a second fd registering
 *   the same events in reverse order numbers them its own way;
 * - closing fds that hold hundreds or thousands of references (close, a
 *   dup()ed fd, process exit, events enabled meanwhile): afterwards every
 *   event can be deleted;
 * - fixed fields that fill the maximum payload (perf_test has dynamic
 *   data up to its last byte); the dynamic_events line length limit.
 *
 * In the debug kernel, registering an event costs a hundred times more
 * (KASAN and kmemleak record the stack of every allocation, and an event
 * makes many): the fill test registers DEBUG_FILL events there instead of
 * every free status byte, which the plain kernel's run covers, and checks
 * the rest the same way.
 */
#include <sys/wait.h>

#include "user_events_selftests.h"

#define PREFIX		"ue_lim_"
#define INSTANCE	"ue_lim_inst"
/* Every SAMPLE-th event (and the last) is enabled to check the writes */
#define SAMPLE		97
#define REFS		300
#define DEBUG_FILL	400

FIXTURE(lim) {
	int fd;
	int fd2;
	int status_fd;
	__u8 *status;
	int active0;
};

FIXTURE_SETUP(lim)
{
	self->fd = -1;
	self->fd2 = -1;
	self->status_fd = -1;
	UE_SKIP_IF_UNAVAILABLE();

	ue_setup_clean(_metadata, INSTANCE, PREFIX, &self->active0);
	ASSERT_EQ(0, ue_open_status_page(&self->status_fd, &self->status));
	self->fd = ue_open_data();
	ASSERT_NE(-1, self->fd);
}

FIXTURE_TEARDOWN(lim)
{
	if (self->fd != -1)
		close(self->fd);
	if (self->fd2 != -1)
		close(self->fd2);
	ue_close_status_page(self->status_fd, self->status);
	ue_instance_remove(INSTANCE);
	ue_cleanup_events(PREFIX);

	ue_expect_active(_metadata, self->active0);
}

static const char *name_of(const char *kind, int i)
{
	static char names[4][64];
	static int slot;
	char *buf = names[slot++ & 3];

	snprintf(buf, sizeof(names[0]), PREFIX "%s%d", kind, i);

	return buf;
}

/* Lines of the instance's trace that are records */
static int instance_records(void)
{
	char *text = ue_read_file("instances/" INSTANCE "/trace");
	char *line;
	int count = 0;

	if (!text)
		return -1;
	for (line = text; line && *line; line = strchr(line, '\n')) {
		if (*line == '\n')
			line++;
		if (*line && *line != '#')
			count++;
	}
	free(text);

	return count;
}

static bool sampled(int i, int n)
{
	return i % SAMPLE == 0 || i == n - 1;
}

TEST_F_TIMEOUT(lim, fill_delete_refill, 900)
{
	static __u32 status_of[UE_PAGE_MAX];
	static __u8 first[UE_PAGE_MAX], before[UE_PAGE_MAX],
		    after[UE_PAGE_MAX];
	int free_bytes, fill, i, n, ret = 0, active, busy, max, records, want;
	struct user_reg reg;
	char cmd[96], want_text[64];
	long long t0, t1;
	char *text;
	__u32 v;

	free_bytes = UE_STATUS_EVENTS - self->active0;
	fill = ue_debug_kernel() ? DEBUG_FILL : free_bytes;
	ASSERT_LE(0, ue_status_indexes(before));
	ue_msg("%d events exist, %d status bytes free, filling %d\n",
	       self->active0, free_bytes, fill);

	/* Round 1: fill every free status byte through one fd */
	t0 = ue_now_ms();
	for (n = 0; n < fill; n++) {
		snprintf(cmd, sizeof(cmd), "%s u32 v", name_of("n", n));
		ret = ue_reg(self->fd, cmd, &reg);
		if (ret)
			break;
		ASSERT_EQ(n, reg.write_index);
		ASSERT_EQ(0, first[reg.status_index]);
		ASSERT_EQ(0, before[reg.status_index]);
		first[reg.status_index] = 1;
		status_of[n] = reg.status_index;
	}
	if (fill == free_bytes) {
		snprintf(cmd, sizeof(cmd), "%s u32 v", name_of("n", n));
		ret = ue_reg(self->fd, cmd, &reg);
	}
	ASSERT_TRUE(ret == ENOMEM || ret == EMFILE || fill < free_bytes) {
		TH_LOG("registration %d failed with %s", n, strerror(ret));
	}
	ASSERT_EQ(fill, n);
	t1 = ue_now_ms();
	ue_msg("round 1: %d events registered on one fd in %lld ms, the next one: %s\n",
	       n, t1 - t0, fill < free_bytes ? "not tried" : strerror(ret));

	/* A second fd numbers the same events its own way */
	self->fd2 = ue_open_data();
	ASSERT_NE(-1, self->fd2);
	for (i = 0; i < n; i++) {
		snprintf(cmd, sizeof(cmd), "%s u32 v", name_of("n", n - 1 - i));
		ASSERT_EQ(0, ue_reg(self->fd2, cmd, &reg));
		ASSERT_EQ(i, reg.write_index);
		ASSERT_EQ(status_of[n - 1 - i], reg.status_index);
	}

	/* Nothing attached: every index of both fds takes a write */
	for (i = 0; i < n; i++) {
		v = i;
		ASSERT_EQ(8, ue_emit(self->fd, i, &v, sizeof(v)));
		ASSERT_EQ(8, ue_emit(self->fd2, i, &v, sizeof(v)));
	}
	ASSERT_EQ(-ENOENT, ue_emit(self->fd, n, &v, sizeof(v)));
	ASSERT_EQ(-ENOENT, ue_emit(self->fd2, n, &v, sizeof(v)));

	/* A sample enabled: each index wrote its own event and no other */
	ASSERT_EQ(0, ue_instance_create(INSTANCE));
	for (i = 0, want = 0; i < n; i++) {
		if (!sampled(i, n))
			continue;
		ASSERT_EQ(0, ue_enable(INSTANCE, name_of("n", i), true));
		ASSERT_EQ(EVENT_STATUS_FTRACE, self->status[status_of[i]]);
		want += 2;
	}
	for (i = 0; i < n; i++) {
		v = i;
		ASSERT_EQ(8, ue_emit(self->fd, i, &v, sizeof(v)));
	}
	for (i = 0; i < n; i++) {
		v = 100000 + i;
		ASSERT_EQ(8, ue_emit(self->fd2, i, &v, sizeof(v)));
	}
	for (i = 0; i < n; i++) {
		if (!sampled(i, n))
			continue;
		text = ue_trace_collect(INSTANCE, name_of("n", i));
		ASSERT_NE(NULL, text);
		snprintf(want_text, sizeof(want_text), "v=%d\nv=%d\n", i,
			 100000 + n - 1 - i);
		ASSERT_STREQ(want_text, text);
		free(text);
	}
	records = instance_records();
	ASSERT_EQ(want, records);
	ue_msg("wrote all %d indexes of both fds: %d records of %d enabled events\n",
	       n, records, want / 2);
	ASSERT_EQ(0, ue_instance_remove(INSTANCE));

	/* Closing one of the fds leaves the events held by the other */
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(EBUSY, ue_del(name_of("n", 0)));
	ASSERT_EQ(EBUSY, ue_del(name_of("n", n - 1)));
	v = 7;
	ASSERT_EQ(8, ue_emit(self->fd2, n - 1, &v, sizeof(v)));

	/* Closing the other lets every event go */
	t0 = ue_now_ms();
	close(self->fd2);
	self->fd2 = -1;
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, ue_del(name_of("n", i))) {
			TH_LOG("event %d of %d still referenced", i, n);
		}
		ASSERT_EQ(0, self->status[status_of[i]]);
	}
	ASSERT_EQ(0, ue_status_counts(&active, &busy, &max));
	ASSERT_EQ(self->active0, active);
	t1 = ue_now_ms();
	ue_msg("closed both fds, deleted all %d events in %lld ms\n",
	       n, t1 - t0);

	/* Round 2: as many again, through dynamic_events, same bytes */
	t0 = ue_now_ms();
	for (i = 0; i < n; i++) {
		snprintf(cmd, sizeof(cmd), "u:%s u32 v", name_of("m", i));
		ASSERT_EQ(0, ue_dyn(cmd)) {
			TH_LOG("dynamic_events creation %d of %d failed", i, n);
		}
	}
	if (fill == free_bytes) {
		snprintf(cmd, sizeof(cmd), "u:%s u32 v", name_of("m", n));
		ret = ue_dyn(cmd);
		ASSERT_TRUE(ret == ENOMEM || ret == EMFILE) {
			TH_LOG("creation past the limit: %s", strerror(ret));
		}
	}
	ASSERT_EQ(self->active0 + n, ue_status_indexes(after));
	for (i = 1; i < UE_PAGE_SIZE; i++) {
		ASSERT_EQ(before[i] || first[i], after[i]) {
			TH_LOG("status byte %d: used before %d, in round 1 %d, in round 2 %d",
			       i, before[i], first[i], after[i]);
		}
	}
	t1 = ue_now_ms();
	ue_msg("round 2: %d events created by dynamic_events in %lld ms, same bytes\n",
	       n, t1 - t0);
	for (i = 0; i < n; i++) {
		snprintf(cmd, sizeof(cmd), "!u:%s", name_of("m", i));
		ASSERT_EQ(0, ue_dyn(cmd));
	}
	ASSERT_EQ(0, ue_status_counts(&active, &busy, &max));
	ASSERT_EQ(self->active0, active);
	ue_msg("deleted them again in %lld ms\n", ue_now_ms() - t1);
}

/* Register REFS events on @fd; 0 or the failing errno */
static int reg_many(int fd, const char *kind, int step)
{
	struct user_reg reg;
	char cmd[96];
	int i, ret;

	for (i = 0; i < REFS; i += step) {
		snprintf(cmd, sizeof(cmd), "%s u32 v", name_of(kind, i));
		ret = ue_reg(fd, cmd, &reg);
		if (ret)
			return ret;
	}

	return 0;
}

TEST_F_TIMEOUT(lim, close_with_many_refs, 600)
{
	int i, dupfd, status, ret;
	__u32 v = 1;
	pid_t pid;

	/* A dup()ed fd is the same file: the references stay with it */
	ASSERT_EQ(0, reg_many(self->fd, "a", 1));
	dupfd = dup(self->fd);
	ASSERT_NE(-1, dupfd);
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(EBUSY, ue_del(name_of("a", 0)));
	ASSERT_EQ(EBUSY, ue_del(name_of("a", REFS - 1)));
	ASSERT_EQ(8, ue_emit(dupfd, REFS - 1, &v, sizeof(v)));
	close(dupfd);
	for (i = 0; i < REFS; i++)
		ASSERT_EQ(0, ue_del(name_of("a", i)));
	ue_msg("%d references of a dup()ed fd: released by the last close\n",
	       REFS);

	/* A process that exits with three fds holding references */
	pid = fork();
	ASSERT_NE(-1, pid);
	if (pid == 0) {
		int fds[3], k;

		for (k = 0; k < 3; k++) {
			fds[k] = ue_open_data();
			if (fds[k] == -1 || reg_many(fds[k], "b", k + 1))
				_exit(1);
		}
		/* Exit without closing */
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	for (i = 0; i < REFS; i++)
		ASSERT_EQ(0, ue_del(name_of("b", i)));
	ue_msg("%d events held by 3 fds of an exited process: all deletable\n",
	       REFS);

	/* Closed while some of its events are enabled: those stay busy */
	self->fd = ue_open_data();
	ASSERT_NE(-1, self->fd);
	ASSERT_EQ(0, reg_many(self->fd, "c", 1));
	for (i = 0; i < REFS; i += 50)
		ASSERT_EQ(0, ue_enable(NULL, name_of("c", i), true));
	close(self->fd);
	self->fd = -1;
	for (i = 0; i < REFS; i++) {
		ret = ue_del(name_of("c", i));
		if (i % 50 == 0) {
			ASSERT_EQ(EBUSY, ret);
			ASSERT_EQ(0, ue_enable(NULL, name_of("c", i), false));
			ASSERT_EQ(0, ue_del(name_of("c", i)));
		} else {
			ASSERT_EQ(0, ret);
		}
	}
	ue_msg("%d events of a closed fd, some enabled: deletable once disabled\n",
	       REFS);
}

/* Fixed fields that take the whole payload */
TEST_F(lim, max_fixed_fields)
{
	static char buf[4 + UE_PAYLOAD_MAX + 1];
	struct user_reg reg;
	char *text;

	ASSERT_EQ(0, ue_instance_create(INSTANCE));
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "full char[1024] a; char[1024] b; "
			    "char[1024] c; char[976] d", &reg));
	ASSERT_EQ(0, ue_enable(INSTANCE, PREFIX "full", true));
	memcpy(buf, &reg.write_index, 4);
	memset(buf + 4, 'a', 1023);
	memset(buf + 4 + 1024, 'b', 1023);
	memset(buf + 4 + 2048, 'c', 1023);
	memset(buf + 4 + 3072, 'd', 975);

	ASSERT_EQ(-1, write(self->fd, buf, 4 + UE_PAYLOAD_MAX - 1));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, write(self->fd, buf, 4 + UE_PAYLOAD_MAX + 1));
	ASSERT_EQ(E2BIG, errno);
	ASSERT_EQ(4 + UE_PAYLOAD_MAX, write(self->fd, buf, 4 + UE_PAYLOAD_MAX));

	text = ue_trace_collect(INSTANCE, PREFIX "full");
	ASSERT_NE(NULL, text);
	ASSERT_EQ(0, strncmp(text, "a=aaa", 5));
	free(text);
	ASSERT_EQ(1, ue_trace_count(INSTANCE, PREFIX "full"));
}

/* A dynamic_events line may be 4094 bytes long, not one more */
TEST_F(lim, dynamic_events_line)
{
	char *line;
	int len;

	line = malloc(4200);
	ASSERT_NE(NULL, line);
	len = sprintf(line, "u:" PREFIX "line u32 a");
	memset(line + len, ' ', 4093 - len);
	memcpy(line + 4093, ";", 2);
	ASSERT_EQ(4094, strlen(line));
	ASSERT_EQ(0, ue_dyn(line));
	ASSERT_TRUE(ue_event_exists(PREFIX "line"));

	memcpy(line, "u:" PREFIX "line2 u32 a", len + 1);
	memset(line + len + 1, ' ', 4094 - len - 1);
	memcpy(line + 4094, ";", 2);
	ASSERT_EQ(4095, strlen(line));
	ASSERT_EQ(EINVAL, ue_dyn(line));
	ASSERT_FALSE(ue_event_exists(PREFIX "line2"));
	free(line);
	ASSERT_EQ(0, ue_dyn("!u:" PREFIX "line"));
}

TEST_HARNESS_MAIN
