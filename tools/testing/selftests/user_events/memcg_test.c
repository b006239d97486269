// SPDX-License-Identifier: GPL-2.0
/*
 * The memory of an event is charged to the memory cgroup of the program
 * that registered it.
 *
 * A child process in a memory cgroup of its own registers K events with
 * one field ("thin") and K events with FIELDS fields ("fat"), with field
 * names of the same length, then deletes them, reading memory.current
 * after each step.  Both kinds cost the same tracefs directories and
 * files, and the same struct user_event; the fat ones also need, for
 * each further field, its name, its type text, its slot in the field
 * array, the tracing core's description of it (format file, filters),
 * and their part of the print fmt.  The test checks that the cgroup paid at least those
 * bytes for each fat event more than for a thin one, and that deleting
 * the fat events gave at least as much back.
 *
 * Before user_events charged these allocations (GFP_KERNEL_ACCOUNT), a
 * fat event cost its cgroup what a thin one did; before the tracing core
 * charged its field descriptions (SLAB_ACCOUNT), about half of what it
 * should.
 *
 * memory.current moves in batches (the per-CPU stock of pre-charged
 * pages, 64 pages): the child runs on one CPU, and K is large enough for
 * the expected difference to be several times that.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include "user_events_selftests.h"

#define PREFIX		"ue_memcg_"
#define CGROUP		"ue_memcg_test"
#define NR_EVENTS	64
#define FIELDS		200
/* Length of a field name: "f%03d_" and padding */
#define NAME_LEN	15
/* Stock of pre-charged pages of one CPU, memcg's MEMCG_CHARGE_BATCH */
#define CHARGE_BATCH	(64 * 4096L)

FIXTURE(memcg) {
	char root[256];		/* the cgroup2 mount */
	bool mounted;		/* by the test, in a temporary directory */
	bool enabled;		/* memory controller turned on by the test */
	bool created;		/* the test's cgroup */
	int active0;
};

/* Write @text to file @name of directory @dir; 0 or errno */
static int cg_write(const char *dir, const char *name, const char *text)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);

	return ue_write_path(path, text, strlen(text), 0);
}

/* Read file @name of directory @dir into @buf; 0 or errno */
static int cg_read(const char *dir, const char *name, char *buf, size_t size)
{
	char path[512];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return errno;
	n = read(fd, buf, size - 1);
	if (n == -1) {
		n = errno;
		close(fd);
		return n;
	}
	buf[n] = '\0';
	close(fd);

	return 0;
}

/* Is @word one of the blank-separated words of @text? */
static bool has_word(const char *text, const char *word)
{
	size_t len = strlen(word);
	const char *p = text;

	while ((p = strstr(p, word))) {
		if ((p == text || p[-1] == ' ') &&
		    (!p[len] || p[len] == ' ' || p[len] == '\n'))
			return true;
		p++;
	}

	return false;
}

FIXTURE_SETUP(memcg)
{
	char text[256], dir[512];

	UE_SKIP_IF_UNAVAILABLE();
	ue_setup_clean(_metadata, NULL, PREFIX, &self->active0);

	/* The cgroup2 hierarchy: where guests and systemd mount it, or here */
	snprintf(self->root, sizeof(self->root), "/sys/fs/cgroup");
	if (cg_read(self->root, "cgroup.controllers", text, sizeof(text))) {
		snprintf(self->root, sizeof(self->root), "/tmp/ue_memcg_XXXXXX");
		ASSERT_NE(NULL, mkdtemp(self->root));
		if (mount("cgroup2", self->root, "cgroup2", 0, NULL)) {
			rmdir(self->root);
			SKIP(_exit(255), "no cgroup2: %s", strerror(errno));
		}
		self->mounted = true;
		ASSERT_EQ(0, cg_read(self->root, "cgroup.controllers", text,
				     sizeof(text)));
	}
	if (!has_word(text, "memory"))
		SKIP(_exit(255), "no memory controller in %s", self->root);

	ASSERT_EQ(0, cg_read(self->root, "cgroup.subtree_control", text,
			     sizeof(text)));
	if (!has_word(text, "memory")) {
		ASSERT_EQ(0, cg_write(self->root, "cgroup.subtree_control",
				      "+memory"));
		self->enabled = true;
	}
	snprintf(dir, sizeof(dir), "%s/%s", self->root, CGROUP);
	if (rmdir(dir) && errno != ENOENT)
		ASSERT_EQ(0, errno);
	ASSERT_EQ(0, mkdir(dir, 0755));
	self->created = true;
}

FIXTURE_TEARDOWN(memcg)
{
	char dir[512];
	int i;

	ue_cleanup_events(PREFIX);
	snprintf(dir, sizeof(dir), "%s/%s", self->root, CGROUP);
	/* The child is reaped; its cgroup may take a moment to empty */
	for (i = 0; self->created && i < 50 && rmdir(dir); i++)
		usleep(100000);
	if (self->enabled)
		cg_write(self->root, "cgroup.subtree_control", "-memory");
	if (self->mounted) {
		umount(self->root);
		rmdir(self->root);
	}
	ue_expect_active(_metadata, self->active0);
}

/* What the child measured, in bytes of memory.current */
struct measures {
	int step;		/* last step done; 0 on success */
	int err;
	long start;		/* before registering */
	long thin;		/* K thin events registered */
	long fat;		/* and K fat events */
	long fat_gone;		/* the fat events deleted */
	long thin_gone;		/* and the thin ones */
	long fmt_extra;		/* print fmt of a fat event less a thin one's */
	long long ms_fat;	/* time to register the fat events */
};

static long cg_current(const char *dir)
{
	char text[64];

	if (cg_read(dir, "memory.current", text, sizeof(text)))
		return -1;

	return atol(text);
}

/* Command of thin (one field) or fat (FIELDS fields) event @i */
static void event_cmd(char *cmd, size_t size, bool fat, int i)
{
	int n, f;

	n = snprintf(cmd, size, PREFIX "%s%d", fat ? "fat" : "thin", i);
	for (f = 0; f < (fat ? FIELDS : 1); f++)
		n += snprintf(cmd + n, size - n, "%su8 f%03d_%.*s", f ? ";" : " ",
			      f, NAME_LEN - 5, "abcdefghijklmnop");
}

static const char *event_name(bool fat, int i)
{
	static char name[64];

	snprintf(name, sizeof(name), PREFIX "%s%d", fat ? "fat" : "thin", i);

	return name;
}

/* Length of the print fmt of event @name, from its format file */
static long print_fmt_len(const char *name)
{
	char *text = ue_read_file(ue_event_file(NULL, name, "format"));
	char *fmt;
	long len;

	if (!text)
		return -1;
	fmt = strstr(text, "\nprint fmt: ");
	len = fmt ? (long)strlen(fmt + 12) : -1;
	free(text);

	return len;
}

/*
 * The child: into the cgroup @dir, on one CPU, then register and delete;
 * returns the step that failed, 0 when all went well
 */
static int child_measure(const char *dir, struct measures *m)
{
	static char cmds[2][NR_EVENTS][4096];
	struct user_reg reg;
	char pid[32];
	cpu_set_t cpus;
	long long t0;
	int fd[2], k, i;

	for (k = 0; k < 2; k++) {
		for (i = 0; i < NR_EVENTS; i++)
			event_cmd(cmds[k][i], sizeof(cmds[k][i]), k, i);
	}
	CPU_ZERO(&cpus);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &cpus);
	m->step = 1;
	if (sched_setaffinity(0, sizeof(cpus), &cpus)) {
		m->err = errno;
		return m->step;
	}
	snprintf(pid, sizeof(pid), "%d\n", getpid());
	m->step = 2;
	m->err = cg_write(dir, "cgroup.procs", pid);
	if (m->err)
		return m->step;
	m->step = 3;
	fd[0] = ue_open_data();
	fd[1] = ue_open_data();
	if (fd[0] == -1 || fd[1] == -1) {
		m->err = errno;
		return m->step;
	}

	m->start = cg_current(dir);
	for (k = 0; k < 2; k++) {
		m->step = 4 + k;
		t0 = ue_now_ms();
		for (i = 0; i < NR_EVENTS; i++) {
			m->err = ue_reg(fd[k], cmds[k][i], &reg);
			if (m->err)
				return m->step;
		}
		if (k) {
			m->fat = cg_current(dir);
			m->ms_fat = ue_now_ms() - t0;
		} else {
			m->thin = cg_current(dir);
		}
	}
	close(fd[0]);
	close(fd[1]);
	m->step = 6;
	m->fmt_extra = print_fmt_len(event_name(true, 0)) -
		       print_fmt_len(event_name(false, 0));

	for (k = 1; k >= 0; k--) {
		m->step = 8 - k;
		for (i = 0; i < NR_EVENTS; i++) {
			m->err = ue_del(event_name(k, i));
			if (m->err)
				return m->step;
		}
		if (k)
			m->fat_gone = cg_current(dir);
		else
			m->thin_gone = cg_current(dir);
	}
	m->step = 0;

	return 0;
}

TEST_F_TIMEOUT(memcg, events_charged, 600)
{
	long per_field, bound, thin, fat, freed;
	struct measures *m;
	char dir[512];
	int status;
	pid_t pid;

	/*
	 * The least the kernel keeps for each field of a fat event beyond
	 * the one of a thin event: the name and its NUL, the type text
	 * "u8" and its NUL, the field's entry in user_events' array (two
	 * pointers, four u32), and the tracing core's description of the
	 * field (struct ftrace_event_field: a list link, two pointers, five
	 * ints).  The print fmt text comes on top.
	 */
	per_field = (NAME_LEN + 1) + 3 + 2 * sizeof(void *) + 4 * 4 +
		    4 * sizeof(void *) + 5 * sizeof(int);

	m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, m);
	memset(m, 0, sizeof(*m));
	snprintf(dir, sizeof(dir), "%s/%s", self->root, CGROUP);

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_NE(-1, pid);
	if (pid == 0)
		_exit(child_measure(dir, m));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("child failed at step %d: %s", m->step,
		       strerror(m->err));
	}
	ASSERT_LT(0, m->start);

	ASSERT_LT(0, m->fmt_extra);
	bound = (FIELDS - 1) * per_field + m->fmt_extra;

	thin = m->thin - m->start;
	fat = m->fat - m->thin;
	freed = m->fat - m->fat_gone;
	ue_msg("memory.current: %ld at start, +%ld for %d thin events\n",
	       m->start, thin, NR_EVENTS);
	ue_msg("+%ld for %d fat events (%d fields each, registered in %lld ms)\n",
	       fat, NR_EVENTS, FIELDS, m->ms_fat);
	ue_msg("deleting the fat events gave back %ld, the thin ones %ld\n",
	       freed, m->fat_gone - m->thin_gone);
	ue_msg("per event: thin %ld, fat %ld; fat events must cost at least %ld more\n",
	       thin / NR_EVENTS, fat / NR_EVENTS, bound);

	/*
	 * The stock of pages charged in advance on the child's CPU may be
	 * in any measure: up to CHARGE_BATCH too much in each
	 */
	ASSERT_GE(fat - thin + 2 * CHARGE_BATCH, NR_EVENTS * bound) {
		TH_LOG("fat events cost %ld more than thin ones, expected %ld or more",
		       fat - thin, NR_EVENTS * bound);
	}
	ASSERT_GE(freed + CHARGE_BATCH, NR_EVENTS * bound) {
		TH_LOG("deleting the fat events gave back %ld, expected %ld or more",
		       freed, NR_EVENTS * bound);
	}
	munmap(m, sizeof(*m));
}

TEST_HARNESS_MAIN
