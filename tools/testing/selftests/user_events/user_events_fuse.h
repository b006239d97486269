/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A FUSE file system of one file whose reads the test can stall: pages of
 * a producer's memory that nobody serves, the way a hostile producer's
 * own FUSE daemon would not.  It speaks the /dev/fuse protocol itself
 * (<linux/fuse.h>), from a thread of the test, in the test's own mount
 * namespace; when the test ends, its /dev/fuse file is closed, which
 * aborts every request still waiting, so nothing outlives the test.
 * Include it after user_events_selftests.h, whose helpers it uses.
 */
#ifndef _USER_EVENTS_FUSE_H
#define _USER_EVENTS_FUSE_H

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include <linux/fuse.h>

#define UE_FUSE_FILE		"file"
#define UE_FUSE_FILE_INO	2
#define UE_FUSE_FILE_SIZE	(4 * 4096)
#define UE_FUSE_BUF_SIZE	(FUSE_MIN_READ_BUFFER + 128 * 1024)

/* A READ request held while reads are stalled */
struct ue_fuse_read {
	__u64 unique;
	__u64 offset;
	__u32 size;
	long long since;		/* ue_now_ms() when it came */
};

struct ue_fuse {
	int fd;				/* /dev/fuse */
	char dir[64];			/* the mount point */
	char path[96];			/* the file */
	pthread_t thread;
	bool running;
	/*
	 * A READ held this long is answered even though reads are still
	 * stalled (0: held until the test releases it), see ue_fuse_start()
	 */
	long long unstall_ms;
	pthread_mutex_t lock;		/* everything below */
	bool stopping;
	bool stall;			/* hold READ requests */
	struct ue_fuse_read *held;
	int nr_held;
	int cap_held;
	int reads;			/* READ requests seen */
	int unstalled;			/* READs answered by the deadline */
	__u8 data[UE_FUSE_FILE_SIZE];	/* the file */
};

/* Answer request @unique with @error, or with the @len bytes at @arg */
static inline void ue_fuse_reply(struct ue_fuse *f, __u64 unique, int error,
				 const void *arg, size_t len)
{
	struct fuse_out_header out = {
		.len = sizeof(out) + (error ? 0 : len),
		.error = error,
		.unique = unique,
	};
	struct iovec io[2] = {
		{ .iov_base = &out, .iov_len = sizeof(out) },
		{ .iov_base = (void *)arg, .iov_len = error ? 0 : len },
	};

	/* ENOENT: the request was interrupted or aborted meanwhile */
	if (writev(f->fd, io, 2) < 0 && errno != ENOENT)
		perror("ue_fuse: reply");
}

/* The attributes of the root (ino 1) or of the file */
static inline void ue_fuse_attr(__u64 ino, struct fuse_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->ino = ino;
	attr->nlink = 1;
	attr->blksize = 4096;
	if (ino == FUSE_ROOT_ID) {
		attr->mode = 040755;
	} else {
		attr->mode = 0100666;
		attr->size = UE_FUSE_FILE_SIZE;
		attr->blocks = UE_FUSE_FILE_SIZE / 512;
	}
}

/* Answer READ @rd, under f->lock */
static inline void ue_fuse_answer_read(struct ue_fuse *f,
				       const struct ue_fuse_read *rd)
{
	size_t len = 0;

	if (rd->offset < UE_FUSE_FILE_SIZE) {
		len = UE_FUSE_FILE_SIZE - rd->offset;
		if (len > rd->size)
			len = rd->size;
	}
	ue_fuse_reply(f, rd->unique, 0, f->data + rd->offset, len);
}

static inline void ue_fuse_read(struct ue_fuse *f, __u64 unique,
				const struct fuse_read_in *in)
{
	struct ue_fuse_read rd = {
		.unique = unique, .offset = in->offset, .size = in->size,
		.since = ue_now_ms(),
	};

	pthread_mutex_lock(&f->lock);
	f->reads++;
	if (!f->stall) {
		ue_fuse_answer_read(f, &rd);
	} else {
		if (f->nr_held == f->cap_held) {
			int cap = f->cap_held ? 2 * f->cap_held : 64;
			void *held = realloc(f->held, cap * sizeof(*f->held));

			if (!held) {
				pthread_mutex_unlock(&f->lock);
				ue_fuse_reply(f, unique, -ENOMEM, NULL, 0);
				return;
			}
			f->held = held;
			f->cap_held = cap;
		}
		f->held[f->nr_held++] = rd;
	}
	pthread_mutex_unlock(&f->lock);
}

static inline void ue_fuse_write(struct ue_fuse *f, __u64 unique,
				 const struct fuse_write_in *in)
{
	struct fuse_write_out out = { 0 };
	__u64 end = in->offset + in->size;

	if (in->offset > UE_FUSE_FILE_SIZE || end > UE_FUSE_FILE_SIZE) {
		ue_fuse_reply(f, unique, -EFBIG, NULL, 0);
		return;
	}
	pthread_mutex_lock(&f->lock);
	memcpy(f->data + in->offset, in + 1, in->size);
	pthread_mutex_unlock(&f->lock);
	out.size = in->size;
	ue_fuse_reply(f, unique, 0, &out, sizeof(out));
}

/* Serve one request of @len bytes at @buf */
static inline void ue_fuse_serve(struct ue_fuse *f, const void *buf)
{
	const struct fuse_in_header *in = buf;
	const void *arg = in + 1;
	union {
		struct fuse_init_out init;
		struct fuse_entry_out entry;
		struct fuse_attr_out attr;
		struct fuse_open_out open;
		struct fuse_statfs_out statfs;
	} out;

	memset(&out, 0, sizeof(out));
	switch (in->opcode) {
	case FUSE_INIT:
		out.init.major = FUSE_KERNEL_VERSION;
		out.init.minor = FUSE_KERNEL_MINOR_VERSION;
		/* No readahead: a fault reads its own page, and only it */
		out.init.max_readahead = 0;
		out.init.max_write = 4096;
		out.init.max_background = 16;
		out.init.congestion_threshold = 12;
		out.init.time_gran = 1;
		ue_fuse_reply(f, in->unique, 0, &out.init, sizeof(out.init));
		break;
	case FUSE_LOOKUP:
		if (in->nodeid != FUSE_ROOT_ID || strcmp(arg, UE_FUSE_FILE)) {
			ue_fuse_reply(f, in->unique, -ENOENT, NULL, 0);
			break;
		}
		out.entry.nodeid = UE_FUSE_FILE_INO;
		out.entry.entry_valid = 3600;
		out.entry.attr_valid = 3600;
		ue_fuse_attr(UE_FUSE_FILE_INO, &out.entry.attr);
		ue_fuse_reply(f, in->unique, 0, &out.entry, sizeof(out.entry));
		break;
	case FUSE_GETATTR:
	case FUSE_SETATTR:
		out.attr.attr_valid = 3600;
		ue_fuse_attr(in->nodeid, &out.attr.attr);
		ue_fuse_reply(f, in->unique, 0, &out.attr, sizeof(out.attr));
		break;
	case FUSE_OPEN:
	case FUSE_OPENDIR:
		out.open.fh = 1;
		ue_fuse_reply(f, in->unique, 0, &out.open, sizeof(out.open));
		break;
	case FUSE_READ:
		ue_fuse_read(f, in->unique, arg);
		break;
	case FUSE_WRITE:
		ue_fuse_write(f, in->unique, arg);
		break;
	case FUSE_STATFS:
		out.statfs.st.bsize = 4096;
		out.statfs.st.frsize = 4096;
		out.statfs.st.namelen = 255;
		ue_fuse_reply(f, in->unique, 0, &out.statfs,
			      sizeof(out.statfs));
		break;
	case FUSE_ACCESS:
	case FUSE_FLUSH:
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:
	case FUSE_FSYNC:
		ue_fuse_reply(f, in->unique, 0, NULL, 0);
		break;
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT:
		/* No answer is expected */
		break;
	default:
		/* Nothing else is implemented */
		ue_fuse_reply(f, in->unique, -EOPNOTSUPP, NULL, 0);
		break;
	}
}

/* Answer the READ requests held for f->unstall_ms or more, under f->lock */
static inline void ue_fuse_unstall_late(struct ue_fuse *f)
{
	long long now = ue_now_ms();
	struct ue_fuse_read *rd;
	int i, kept = 0;

	for (i = 0; i < f->nr_held; i++) {
		rd = &f->held[i];
		if (now - rd->since < f->unstall_ms) {
			f->held[kept++] = *rd;
			continue;
		}
		fprintf(stderr,
			"# ue_fuse: deadline: READ answered after %lld ms\n",
			now - rd->since);
		ue_fuse_answer_read(f, rd);
		f->unstalled++;
	}
	f->nr_held = kept;
}

static inline void *ue_fuse_loop(void *arg)
{
	struct ue_fuse *f = arg;
	struct pollfd pfd = { .fd = f->fd, .events = POLLIN };
	void *buf = malloc(UE_FUSE_BUF_SIZE);
	bool stopping = false;
	ssize_t n;

	while (buf && !stopping) {
		/* Looks at f->stopping every 50 ms */
		if (poll(&pfd, 1, 50) == 1) {
			n = read(f->fd, buf, UE_FUSE_BUF_SIZE);
			if (n < 0 && errno == ENODEV)
				break;
			if (n >= (ssize_t)sizeof(struct fuse_in_header))
				ue_fuse_serve(f, buf);
		}
		pthread_mutex_lock(&f->lock);
		if (f->unstall_ms)
			ue_fuse_unstall_late(f);
		stopping = f->stopping;
		pthread_mutex_unlock(&f->lock);
	}
	free(buf);
	return NULL;
}

/*
 * Mount the file system on a new directory, in a mount namespace of the
 * caller's own, and serve it from a thread; 0 or an errno value.  Anyone
 * may use the file (allow_other, mode 0666).
 *
 * A READ held for @unstall_ms is answered anyway, unless it is 0.  The
 * deadline is for a kernel that waits for a stalled page where it must
 * not: when that blocks the test's own thread, under a lock the test
 * needs or in the very write that should return at once, the test never
 * gets to release the stall, and would hang until its timeout.
 */
static inline int ue_fuse_start(struct ue_fuse *f, long long unstall_ms)
{
	char opts[128];
	int ret;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->unstall_ms = unstall_ms;
	pthread_mutex_init(&f->lock, NULL);
	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return errno;
	snprintf(f->dir, sizeof(f->dir), "/tmp/ue-fuse-XXXXXX");
	if (!mkdtemp(f->dir))
		return errno;
	/* Others (the unprivileged producers of the tests) go through it */
	if (chmod(f->dir, 0755))
		return errno;
	snprintf(f->path, sizeof(f->path), "%s/%s", f->dir, UE_FUSE_FILE);
	f->fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (f->fd < 0)
		return errno;
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other", f->fd);
	if (mount("ue-fuse", f->dir, "fuse", MS_NOSUID | MS_NODEV, opts))
		return errno;
	ret = pthread_create(&f->thread, NULL, ue_fuse_loop, f);
	if (ret)
		return ret;
	f->running = true;
	return 0;
}

/* Stall the READ requests from now on, or answer them again (all held) */
static inline void ue_fuse_stall(struct ue_fuse *f, bool stall)
{
	int i;

	pthread_mutex_lock(&f->lock);
	f->stall = stall;
	if (!stall) {
		for (i = 0; i < f->nr_held; i++)
			ue_fuse_answer_read(f, &f->held[i]);
		f->nr_held = 0;
	}
	pthread_mutex_unlock(&f->lock);
}

/* READ requests held now */
static inline int ue_fuse_held(struct ue_fuse *f)
{
	int n;

	pthread_mutex_lock(&f->lock);
	n = f->nr_held;
	pthread_mutex_unlock(&f->lock);
	return n;
}

/* READ requests answered because they were held past the deadline */
static inline int ue_fuse_unstalled(struct ue_fuse *f)
{
	int n;

	pthread_mutex_lock(&f->lock);
	n = f->unstalled;
	pthread_mutex_unlock(&f->lock);
	return n;
}

/*
 * Stop serving: answer what is held, stop the thread, close /dev/fuse
 * (which aborts whatever still waits) and unmount
 */
static inline void ue_fuse_stop(struct ue_fuse *f)
{
	if (f->running) {
		ue_fuse_stall(f, false);
		pthread_mutex_lock(&f->lock);
		f->stopping = true;
		pthread_mutex_unlock(&f->lock);
		pthread_join(f->thread, NULL);
		f->running = false;
	}
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	if (f->dir[0]) {
		umount2(f->dir, MNT_DETACH);
		rmdir(f->dir);
		f->dir[0] = 0;
	}
	free(f->held);
	f->held = NULL;
	f->nr_held = 0;
	f->cap_held = 0;
}

#endif /* _USER_EVENTS_FUSE_H */
