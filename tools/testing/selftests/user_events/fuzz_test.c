// SPDX-License-Identifier: GPL-2.0
/*
 * Seeded, reproducible fuzzing of the user_events interfaces.
 *
 * - register: commands built from the grammar (valid ones, ones with one
 *   known error, random mutations of either: bytes changed, inserted or
 *   removed, embedded NULs, non-UTF-8 bytes, huge ones) given to
 *   DIAG_IOCSREG, with the status page struct user_reg of random sizes
 *   (any size but 24 is another layout, or none) and tails at random
 *   places (NULL, unmapped, kernel addresses, misaligned, crossing into
 *   an unreadable or read-only page);
 * - register_enable_bit: the enable bit layout the same way, with random
 *   flags, enable_size, enable_bit and enable_addr (misaligned, NULL,
 *   kernel, read-only, inaccessible), and DIAG_IOCSUNREG with random
 *   sizes, tails, reserved fields and bits: a registration clears its bit
 *   and nothing else of the page the bits are in, a failed one changes
 *   nothing, the bits follow their events' state;
 * - dynamic_events: the same commands after "u:", and deletions ("!u:"
 *   with or without fields, DIAG_IOCSDEL) of the events created;
 * - write: random write indexes and payloads for events with fixed and
 *   __data_loc/__rel_loc fields, split into random iovecs, some of them
 *   unreadable (NULL, unmapped, kernel address, running into an unmapped
 *   page) or on pages that must be faulted in, through slots of status
 *   page registrations (nothing attached: success, nothing recorded) and
 *   of enable bit registrations only (nothing attached: EBADF, after the
 *   checks of the index and the size).  Dynamic char arrays, signed or
 *   not, are strings to the tracing core: while enabled, a record is
 *   refused unless each is non-empty and ends with its NUL.  Fixed char
 *   arrays are recorded as written, NUL or not.
 * - batch: batches (USER_EVENT_BATCH) of random records of the write
 *   events, valid and not (bad, negative and unknown indexes, payloads
 *   too short or too large, bad locations, strings without their NUL),
 *   through status page and enable bit slots of one fd, their events
 *   attached or not, often ended by a header or payload cut short, some
 *   of them at the 64 KiB limit or past it; written with write() from
 *   memory that may run into an inaccessible page, or with writev() split
 *   at random places, one iovec sometimes unreadable, from dropped pages
 *   of a shared file mapping or not.  A model of the rules gives the
 *   result (the errno of the first record, or the bytes up to the first
 *   refused one) and the records the trace must hold, in order.
 *
 * Each case checks that the result is one the ABI allows for that input
 * (the exact one when the input is known to be valid or to have a given
 * error), and that a failure changed nothing: the events listed in
 * user_events_status and dynamic_events are the same, and a failed write
 * left no record (a successful one exactly one, with its values).  The
 * events created are deleted by the end (which fails if anything still
 * references them) and Active is back to its start value.
 *
 * UE_FUZZ_SEED sets the seed (printed by each test), UE_FUZZ_ITERS the
 * number of cases of each test.  The debug kernel, where creating and
 * deleting an event takes a tenth of a second under emulation, runs a
 * fifth of the cases (a quarter for the enable bits, a half for the
 * writes and the batches), from the same generators.
 */
#define _GNU_SOURCE
#define USER_EVENTS_ENABLE_BIT_ABI
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/syscall.h>

#include "user_events_selftests.h"

#define PREFIX		"ue_fz_"
#define INSTANCE	"ue_fz_inst"
/*
 * An address past user space, refused even for 0 bytes: the kernel's
 * text; for a 32-bit program the top page, past a 32-bit kernel's user
 * space and past what a 64-bit x86 kernel gives the program
 */
#if __SIZEOF_LONG__ == 8
#define KERNEL_ADDR	0xffffffff81000000UL
#else
#define KERNEL_ADDR	0xfffff000UL
#endif

/*
 * Is KERNEL_ADDR refused at once, even for 0 bytes?  access_ok() refuses
 * it, but on s390, whose user space is an address space of its own: there
 * it is one more address where nothing is mapped.  A write of 0 bytes
 * from it to /dev/null tells.
 */
static bool kernel_addr_refused(void)
{
	static int refused = -1;
	int fd;

	if (refused < 0) {
		fd = open("/dev/null", O_WRONLY);
		refused = fd != -1 && write(fd, (void *)KERNEL_ADDR, 0) == -1 &&
			  errno == EFAULT;
		if (fd != -1)
			close(fd);
	}
	return refused;
}

#define MAX_FIELDS	24
#define MAX_TRACKED	256
#define MAX_ALLOWED	8

/* Random numbers: splitmix64, one stream per test */
static __u64 rng_state;

static __u64 rnd(void)
{
	__u64 z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;

	return z ^ (z >> 31);
}

static unsigned int below(unsigned int n)
{
	return n ? rnd() % n : 0;
}

static bool chance(unsigned int percent)
{
	return below(100) < percent;
}

static __u64 fuzz_seed(const char *test)
{
	const char *text = getenv("UE_FUZZ_SEED");
	__u64 seed, h = 1469598103934665603ULL;

	if (text && *text)
		seed = strtoull(text, NULL, 0);
	else
		seed = (__u64)time(NULL) ^ ((__u64)getpid() << 32);
	/* Each test has its own stream, so that each can be rerun alone */
	while (*test)
		h = (h ^ (__u8)*test++) * 1099511628211ULL;
	rng_state = seed ^ h;

	return seed;
}

/* The results an input may get: success and/or some errnos */
struct allowed {
	bool ok;
	int n;
	int err[MAX_ALLOWED];
};

static void allow(struct allowed *a, int err)
{
	int i;

	if (!err) {
		a->ok = true;
		return;
	}
	for (i = 0; i < a->n; i++) {
		if (a->err[i] == err)
			return;
	}
	if (a->n < MAX_ALLOWED)
		a->err[a->n++] = err;
}

static bool allowed(const struct allowed *a, int err)
{
	int i;

	if (!err)
		return a->ok;
	for (i = 0; i < a->n; i++) {
		if (a->err[i] == err)
			return true;
	}

	return false;
}

static const char *errname(int err)
{
	static __thread char buf[4][24];
	static __thread int slot;
	static const struct { int err; const char *name; } names[] = {
		{ 0, "success" }, { EINVAL, "EINVAL" }, { E2BIG, "E2BIG" },
		{ EFAULT, "EFAULT" }, { ENOMEM, "ENOMEM" }, { ENOENT, "ENOENT" },
		{ EADDRINUSE, "EADDRINUSE" }, { EBUSY, "EBUSY" },
		{ EMFILE, "EMFILE" }, { EPERM, "EPERM" }, { EIO, "EIO" },
		{ ENOTTY, "ENOTTY" }, { EACCES, "EACCES" }, { ENODEV, "ENODEV" },
		{ EBADF, "EBADF" },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		if (names[i].err == err)
			return names[i].name;
	}
	snprintf(buf[slot & 3], sizeof(buf[0]), "errno %d", err);

	return buf[slot++ & 3];
}

static const char *allowed_text(const struct allowed *a)
{
	static char buf[160];
	int i, len = 0;

	buf[0] = '\0';
	if (a->ok)
		len += snprintf(buf + len, sizeof(buf) - len, "success ");
	for (i = 0; i < a->n; i++)
		len += snprintf(buf + len, sizeof(buf) - len, "%s ",
				errname(a->err[i]));

	return buf;
}

/* @len bytes of @buf, printable, in a buffer that lives until next call */
static const char *esc(const void *buf, size_t len)
{
	static char out[4][700];
	static int slot;
	const __u8 *p = buf;
	char *o = out[slot++ & 3];
	size_t i, n = 0;

	for (i = 0; i < len && n < sizeof(out[0]) - 16; i++) {
		if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\')
			o[n++] = p[i];
		else
			n += sprintf(o + n, "\\x%02x", p[i]);
	}
	if (i < len)
		n += sprintf(o + n, "...(%zu bytes)", len);
	o[n] = '\0';

	return o;
}

/* Counts of results, for the report */
#define NR_TALLIED	9

struct tally {
	long ok;
	long err[NR_TALLIED];
	long other;
};

static void tally(struct tally *t, int err)
{
	static const int errs[NR_TALLIED] = {
		EINVAL, E2BIG, EFAULT, ENOENT, EADDRINUSE, EBUSY, ENOMEM, EMFILE,
		EBADF,
	};
	int i;

	if (!err) {
		t->ok++;
		return;
	}
	for (i = 0; i < NR_TALLIED; i++) {
		if (errs[i] == err) {
			t->err[i]++;
			return;
		}
	}
	t->other++;
}

static void report_tally(const char *what, long cases, const struct tally *t)
{
	ue_msg("%s: %ld cases: success %ld, EINVAL %ld, E2BIG %ld, EFAULT %ld, ENOENT %ld\n",
	       what, cases, t->ok, t->err[0], t->err[1], t->err[2], t->err[3]);
	ue_msg("%s: EADDRINUSE %ld, EBUSY %ld, ENOMEM %ld, EMFILE %ld, EBADF %ld, other %ld\n",
	       what, t->err[4], t->err[5], t->err[6], t->err[7], t->err[8],
	       t->other);
}

/*
 * Commands
 */

enum field_kind { K_SCALAR, K_ARRAY, K_DYN, K_STRUCT };

struct fz_field {
	int kind;
	char type[48];		/* as the kernel shows it, e.g. "char[16]" */
	char base[24];		/* scalar or element type, struct tag */
	char loc[12];		/* "__data_loc" or "__rel_loc" */
	char name[24];
	unsigned int size;	/* bytes in the record (array length) */
};

struct fz_event {
	char name[96];
	int nfields;
	struct fz_field fields[MAX_FIELDS];
	__u32 status_index;
};

static const char * const scalar_types[] = {
	"s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64", "char",
	"unsigned char", "short", "unsigned short", "int", "unsigned int",
};

static const unsigned int scalar_sizes[] = {
	1, 1, 2, 2, 4, 4, 8, 8, 1, 1, 2, 2, 4, 4,
};

#define NR_SCALARS ARRAY_SIZE(scalar_sizes)

static const char ident_first[] =
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_";
static const char ident_rest[] =
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789";

/* A random C identifier of @len bytes after @prefix */
static void rand_ident(char *out, size_t size, const char *prefix,
		       unsigned int len)
{
	size_t n = snprintf(out, size, "%s", prefix);

	while (len-- && n + 1 < size) {
		if (n == 0)
			out[n++] = ident_first[below(sizeof(ident_first) - 1)];
		else
			out[n++] = ident_rest[below(sizeof(ident_rest) - 1)];
	}
	out[n] = '\0';
}

/* A size for an array or a struct, mostly small */
static unsigned int rand_size(void)
{
	if (chance(80))
		return 1 + below(32);
	if (chance(50))
		return 1 + below(1024);
	return 1024 - below(4);
}

static void rand_field(struct fz_field *f, int index)
{
	unsigned int t = below(100), s;

	memset(f, 0, sizeof(*f));
	/* Distinct names: the index is part of it */
	snprintf(f->name, sizeof(f->name), "f%d", index);
	if (chance(50))
		rand_ident(f->name + strlen(f->name),
			   sizeof(f->name) - strlen(f->name), "_", below(6));

	if (t < 45) {
		s = below(NR_SCALARS);
		f->kind = K_SCALAR;
		snprintf(f->base, sizeof(f->base), "%s", scalar_types[s]);
		snprintf(f->type, sizeof(f->type), "%s", scalar_types[s]);
		f->size = scalar_sizes[s];
	} else if (t < 65) {
		f->kind = K_ARRAY;
		snprintf(f->base, sizeof(f->base), "%s",
			 chance(50) ? "char" : "unsigned char");
		f->size = rand_size();
		snprintf(f->type, sizeof(f->type), "%s[%u]", f->base, f->size);
	} else if (t < 85) {
		f->kind = K_DYN;
		snprintf(f->loc, sizeof(f->loc), "%s",
			 chance(50) ? "__data_loc" : "__rel_loc");
		snprintf(f->base, sizeof(f->base), "%s",
			 chance(50) ? "char" : "unsigned char");
		snprintf(f->type, sizeof(f->type), "%s %s[]", f->loc, f->base);
		f->size = 4;
	} else {
		f->kind = K_STRUCT;
		rand_ident(f->base, sizeof(f->base), "", 1 + below(8));
		snprintf(f->type, sizeof(f->type), "struct %s", f->base);
		f->size = rand_size();
	}
}

static unsigned int fixed_size(const struct fz_event *e)
{
	unsigned int i, size = 0;

	for (i = 0; i < (unsigned int)e->nfields; i++)
		size += e->fields[i].size;

	return size;
}

static void rand_event(struct fz_event *e)
{
	int i;

	memset(e, 0, sizeof(*e));
	/* Mostly short names, sometimes up to the 64 bytes allowed */
	rand_ident(e->name, sizeof(e->name), PREFIX,
		   chance(90) ? 1 + below(10) : 64 - strlen(PREFIX) - below(3));
	e->nfields = chance(10) ? 0 : 1 + below(chance(80) ? 6 : MAX_FIELDS);
	for (i = 0; i < e->nfields; i++)
		rand_field(&e->fields[i], i);
	/* Keep most of them within the maximum payload */
	while (fixed_size(e) > UE_PAYLOAD_MAX && chance(90))
		e->nfields--;
}

static bool same_fields(const struct fz_event *a, const struct fz_event *b)
{
	int i;

	if (a->nfields != b->nfields)
		return false;
	for (i = 0; i < a->nfields; i++) {
		if (strcmp(a->fields[i].type, b->fields[i].type) ||
		    strcmp(a->fields[i].name, b->fields[i].name) ||
		    a->fields[i].size != b->fields[i].size)
			return false;
	}

	return true;
}

struct text {
	char buf[2 * UE_CMD_MAX + 64];
	size_t len;
};

static void add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->len, sizeof(t->buf) - t->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len += n;
	if (t->len >= sizeof(t->buf))
		t->len = sizeof(t->buf) - 1;
}

/* Blanks where the grammar allows them: at least @min */
static void add_blanks(struct text *t, unsigned int min)
{
	unsigned int n = min + (chance(25) ? below(3) : 0);

	while (n--)
		add(t, "%c", chance(80) ? ' ' : '\t');
}

/*
 * A size: decimal or hex, sometimes with leading zeros.  An array size
 * literal may have 6 characters at most (0x0400, 001024); a struct size
 * any number.
 */
static void add_size(struct text *t, unsigned int size, bool array)
{
	int width = array ? 6 : 4 + below(12);

	if (chance(15))
		add(t, "0x%0*x", width - 2, size);
	else if (chance(15))
		add(t, "%0*u", width, size);
	else if (chance(25))
		add(t, chance(50) ? "0x%x" : "0x%X", size);
	else
		add(t, "%u", size);
}

/* The fields of @e, spelled one of the many ways the grammar allows */
static void spell_fields(struct text *t, const struct fz_event *e,
			 bool struct_sizes)
{
	const struct fz_field *f;
	int i;

	for (i = 0; i < e->nfields; i++) {
		f = &e->fields[i];
		if (i) {
			if (chance(30))
				add_blanks(t, 1);
			add(t, ";");
			add_blanks(t, chance(70) ? 1 : 0);
		}
		switch (f->kind) {
		case K_SCALAR:
			if (!strncmp(f->base, "unsigned ", 9)) {
				add(t, "unsigned");
				add_blanks(t, 1);
				add(t, "%s", f->base + 9);
			} else {
				add(t, "%s", f->base);
			}
			break;
		case K_ARRAY:
			if (!strncmp(f->base, "unsigned ", 9)) {
				add(t, "unsigned");
				add_blanks(t, 1);
			}
			add(t, "char[");
			add_size(t, f->size, true);
			add(t, "]");
			break;
		case K_DYN:
			add(t, "%s", f->loc);
			add_blanks(t, 1);
			if (!strncmp(f->base, "unsigned ", 9)) {
				add(t, "unsigned");
				add_blanks(t, 1);
			}
			add(t, "char[]");
			break;
		case K_STRUCT:
			add(t, "struct");
			add_blanks(t, 1);
			add(t, "%s", f->base);
			break;
		}
		add_blanks(t, 1);
		add(t, "%s", f->name);
		if (f->kind == K_STRUCT && struct_sizes) {
			add_blanks(t, 1);
			add_size(t, f->size, false);
		}
	}
	if (e->nfields && chance(20)) {
		add_blanks(t, 0);
		add(t, ";");
	}
	if (chance(10))
		add_blanks(t, 1);
}

/* "NAME[:FLAGS] FIELDS" */
static void spell(struct text *t, const struct fz_event *e)
{
	static const char * const flags[] = {
		":BPF_ITER", ":FOO", ":BPF_ITER,FOO", ":x,y,z", ":",
	};

	if (chance(5))
		add_blanks(t, 1);
	add(t, "%s", e->name);
	if (chance(15))
		add(t, "%s", flags[below(5)]);
	if (e->nfields || chance(10))
		add_blanks(t, 1);
	spell_fields(t, e, true);
}

/*
 * A byte above 0x7f, which no name may have; 0xa0 included, which the
 * kernel's isspace() would take for a blank.
 */
static char high_byte(void)
{
	return 0x80 + below(0x80);
}

/*
 * A command with one error the grammar forbids; sets *err to the errno
 * it must get (-1: EINVAL or success).
 */
static void spell_invalid(struct text *t, struct fz_event *e, int *err)
{
	static const char * const bad_types[] = {
		"long", "unsigned long", "long long", "x32", "uint32_t", "U32",
		"bool", "s128", "float", "u32[4]", "int[2]", "char[0]",
		"char[1025]", "char[0x401]", "char[-1]", "char[]", "char[x]",
		"char[99999999999]", "char[0x]", "char[1.5]", "unsigned",
		"char[0x0000000000001]", "char[0000020]", "char[1234567]",
		"unsigned char[0x00400]",
		"unsigned u32", "__data_loc char", "__data_loc char[4]",
		"__rel_loc u32[]", "__data_loc", "signed int", "char [4]",
	};
	static const char * const bad_fields[] = {
		"u32", "u32 1x", "u32 x-y", "u32 x.y", "char x[16]",
		"struct foo x", "struct foo x 0", "struct foo x 1025",
		"struct foo x -1", "struct foo x y", "struct foo", "struct 1a x 4",
		"u32 x 4", "char[4] x y", "u32 common_pid", "u8 common_type",
		"__data_loc struct foo x 4", "struct __data_loc_char x 1",
		"struct __rel_loc_char x 4", "struct a__data_loc_charb x 4",
		"u32 x\xe9", "u8 \xc3\xa9", "struct t\xc2g x 4",
	};
	struct text fields = { .len = 0 };
	int what = below(9), i;
	char name[96];

	*err = EINVAL;
	if (!e->nfields) {
		e->nfields = 1;
		rand_field(&e->fields[0], 0);
	}
	/* Only the one error: the other fields fit */
	while (fixed_size(e) > UE_PAYLOAD_MAX)
		e->nfields--;
	switch (what) {
	case 0:	/* name */
		i = below(7);
		if (i == 0)
			add(t, "%d%s", below(10), e->name);
		else if (i == 1)
			add(t, "%.*s%c%s", 8, e->name, "-./@+"[below(5)],
			    e->name + 8);
		else if (i == 2)
			rand_ident(name, sizeof(name), PREFIX,
				   65 - strlen(PREFIX) + below(16));
		else if (i == 3)
			/*
			 * Names of files of the system directory: refused
			 * by this implementation, not by the documentation
			 */
			*err = -1;
		else if (i == 4)
			add(t, ":BPF_ITER");
		else if (i == 5)
			add(t, "%s/x", e->name);
		else
			add(t, "%.*s%c%s", 8, e->name, high_byte(), e->name + 8);
		if (i == 2)
			add(t, "%s", name);
		else if (i == 3)
			add(t, "%s", chance(50) ? "enable" : "filter");
		add(t, " ");
		spell_fields(t, e, true);
		return;
	case 1:	/* a bad type */
	case 2:
		add(t, "%s ", e->name);
		spell_fields(&fields, e, true);
		add(t, "%s;%s x", fields.buf,
		    bad_types[below(ARRAY_SIZE(bad_types))]);
		return;
	case 3:	/* a bad field */
	case 4:
		add(t, "%s ", e->name);
		add(t, "%s", bad_fields[below(ARRAY_SIZE(bad_fields))]);
		spell_fields(&fields, e, true);
		add(t, "; %s", fields.buf);
		return;
	case 5:	/* a duplicate field name */
		add(t, "%s ", e->name);
		spell_fields(t, e, true);
		add(t, "; u8 %s", e->fields[below(e->nfields)].name);
		return;
	case 6:	/* an empty field */
		add(t, "%s ", e->name);
		if (chance(50))
			add(t, ";");
		spell_fields(t, e, true);
		add(t, chance(50) ? ";;u8 zz" : "; ;");
		return;
	case 7:	/* too many fields */
		*err = E2BIG;
		add(t, "%s ", e->name);
		for (i = 0; i < 257 + (int)below(20); i++)
			add(t, "u8 a%d;", i);
		return;
	default: /* fixed fields beyond the maximum payload */
		*err = E2BIG;
		add(t, "%s ", e->name);
		for (i = 0; i < 4; i++)
			add(t, "char[1024] a%d;", i);
		add(t, "u%d z", chance(50) ? 8 : 64);
		return;
	}
}

/* Random damage: the result may or may not be valid */
static void mutate(struct text *t, size_t keep, bool allow_nul_nl)
{
	static const char alphabet[] = " \t;:[]0x,_-/#.*\"'\\$";
	int n = 1 + below(4);
	size_t pos, len;
	__u8 c;

	while (n--) {
		if (t->len <= keep) {
			add(t, "x");
			continue;
		}
		pos = keep + below(t->len - keep);
		switch (below(6)) {
		case 0:	/* change a byte */
		case 1:
			c = below(3) == 0 ? below(256) :
			    alphabet[below(sizeof(alphabet) - 1)];
			t->buf[pos] = c;
			break;
		case 2:	/* insert one */
			if (t->len + 2 >= sizeof(t->buf))
				break;
			memmove(t->buf + pos + 1, t->buf + pos, t->len - pos + 1);
			t->buf[pos] = chance(50) ? below(256) :
				      alphabet[below(sizeof(alphabet) - 1)];
			t->len++;
			break;
		case 3:	/* remove some */
			len = 1 + below(8);
			if (pos + len > t->len)
				len = t->len - pos;
			memmove(t->buf + pos, t->buf + pos + len,
				t->len - pos - len + 1);
			t->len -= len;
			break;
		case 4:	/* cut */
			t->len = pos;
			t->buf[pos] = '\0';
			break;
		default: /* repeat a piece */
			len = 1 + below(16);
			if (pos + len > t->len)
				len = t->len - pos;
			if (t->len + len + 1 >= sizeof(t->buf))
				break;
			memmove(t->buf + pos + len, t->buf + pos, t->len - pos + 1);
			t->len += len;
			break;
		}
	}
	for (pos = keep; pos < t->len && !allow_nul_nl; pos++) {
		if (!t->buf[pos] || t->buf[pos] == '\n')
			t->buf[pos] = ' ';
	}
	t->buf[t->len] = '\0';
}

/*
 * mutate() what follows PREFIX in a command whose name starts at @at after
 * blanks (spell() may put some in front): a mutated name keeps PREFIX, so
 * that an event it happens to create is one the cleanup finds.
 */
static void mutate_after_prefix(struct text *t, size_t at, bool allow_nul_nl)
{
	at += strspn(t->buf + at, " \t");
	mutate(t, at + strlen(PREFIX), allow_nul_nl);
}

/* Blanks in front of the last field's name, making it too long */
static void make_huge(struct text *t, size_t size)
{
	size_t len = strlen(t->buf);

	if (size >= sizeof(t->buf))
		size = sizeof(t->buf) - 1;
	while (len < size)
		t->buf[len++] = chance(90) ? ' ' : 'x';
	t->buf[len] = '\0';
	t->len = len;
}

/*
 * What exists: the events of user_events_status, and the text of
 * dynamic_events, compared before and after every operation.
 */
struct listing {
	char *status;
	char *dyn;
};

static int read_listing(struct listing *l)
{
	l->status = ue_read_file("user_events_status");
	l->dyn = ue_read_file("dynamic_events");

	return l->status && l->dyn ? 0 : -1;
}

static void free_listing(struct listing *l)
{
	free(l->status);
	free(l->dyn);
	l->status = NULL;
	l->dyn = NULL;
}

static bool same_listing(const struct listing *a, const struct listing *b)
{
	return !strcmp(a->status, b->status) && !strcmp(a->dyn, b->dyn);
}

/*
 * The first event line "INDEX:NAME" of @after that @before does not have;
 * 0 and the name in @name when there is one, -1 otherwise.  Lines may end
 * with " # Used by ...".
 */
static int new_event(const char *before, const char *after, char *name,
		     size_t size, __u32 *index)
{
	const char *line, *end;
	char key[256];

	for (line = after; *line; line = *end ? end + 1 : end) {
		const char *colon, *stop;
		size_t len;

		end = strchrnul(line, '\n');
		len = end - line;
		colon = memchr(line, ':', len);
		if (!len || !colon || len >= sizeof(key) - 2 ||
		    line[0] < '0' || line[0] > '9')
			continue;
		snprintf(key, sizeof(key), "\n%.*s\n", (int)len, line);
		if ((!strncmp(before, key + 1, len + 1)) || strstr(before, key))
			continue;
		stop = memmem(colon, end - colon, " # ", 3);
		snprintf(name, size, "%.*s", (int)((stop ?: end) - colon - 1),
			 colon + 1);
		*index = strtoul(line, NULL, 10);
		return 0;
	}

	return -1;
}

/*
 * Does user_events_status list event @name with status byte @index?  An
 * empty @name matches any event with that byte.
 */
static bool listed(const char *status, __u32 index, const char *name)
{
	char key[128];
	const char *p;
	size_t len;

	len = snprintf(key, sizeof(key), "%u:%s", index, name);
	for (p = status; (p = strstr(p, key)); p++) {
		if ((p == status || p[-1] == '\n') &&
		    (!*name || p[len] == '\n' || p[len] == ' ' || !p[len]))
			return true;
	}

	return false;
}

/* Events the fuzzer created and has not deleted yet */
struct tracked {
	int n;
	struct fz_event ev[MAX_TRACKED];
	bool known[MAX_TRACKED];	/* fields as in ev (else unknown) */
};

static struct fz_event *find_tracked(struct tracked *tr, const char *name)
{
	int i;

	for (i = 0; i < tr->n; i++) {
		if (!strcmp(tr->ev[i].name, name))
			return &tr->ev[i];
	}

	return NULL;
}

static void track(struct tracked *tr, const char *name,
		  const struct fz_event *e, __u32 index)
{
	struct fz_event *t;

	if (find_tracked(tr, name) || tr->n == MAX_TRACKED)
		return;
	t = &tr->ev[tr->n];
	tr->known[tr->n] = e && !strcmp(e->name, name);
	if (tr->known[tr->n])
		*t = *e;
	else
		memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->status_index = index;
	tr->n++;
}

static void untrack(struct tracked *tr, const char *name)
{
	int i;

	for (i = 0; i < tr->n; i++) {
		if (strcmp(tr->ev[i].name, name))
			continue;
		tr->n--;
		tr->ev[i] = tr->ev[tr->n];
		tr->known[i] = tr->known[tr->n];
		return;
	}
}

/*
 * What registering valid event @e must give, given the events that exist:
 * 0, EADDRINUSE, or -1 when either may be right (fields not known).
 */
static int existing_outcome(struct tracked *tr, const struct fz_event *e)
{
	struct fz_event *old = find_tracked(tr, e->name);

	if (!old)
		return 0;
	if (!tr->known[old - tr->ev])
		return -1;

	return same_fields(e, old) ? 0 : EADDRINUSE;
}

/*
 * The answer registering valid event @e must get: existing_outcome(), or
 * E2BIG when its fields are larger than a payload (they are parsed before
 * the name is looked up).  Where either 0 or EADDRINUSE may be right, 0
 * is returned, EADDRINUSE put in @a and *@exact cleared.
 */
static int register_outcome(struct tracked *tr, const struct fz_event *e,
			    struct allowed *a, bool *exact)
{
	int expect = existing_outcome(tr, e);

	if (expect < 0) {
		/* Fields not known: either answer */
		allow(a, EADDRINUSE);
		expect = 0;
		*exact = false;
	}
	if (fixed_size(e) > UE_PAYLOAD_MAX) {
		memset(a, 0, sizeof(*a));
		*exact = true;
		expect = E2BIG;
	}

	return expect;
}

/*
 * Memory for pointers of every kind: pages 0 and 3 and 5 readable and
 * writable, page 1 read-only, pages 2, 4 and 6 inaccessible.  Structs go
 * to pages 0-1 or 3, command strings to page 5.
 */
#define ARENA_PAGES	7

struct arena {
	__u8 *base;
};

static __u8 *page_at(const struct arena *a, int page)
{
	return a->base + page * UE_PAGE_SIZE;
}

static int arena_init(struct arena *a)
{
	a->base = mmap(NULL, ARENA_PAGES * UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a->base == MAP_FAILED)
		return -1;
	if (mprotect(page_at(a, 1), UE_PAGE_SIZE, PROT_READ) ||
	    mprotect(page_at(a, 2), UE_PAGE_SIZE, PROT_NONE) ||
	    mprotect(page_at(a, 4), UE_PAGE_SIZE, PROT_NONE) ||
	    mprotect(page_at(a, 6), UE_PAGE_SIZE, PROT_NONE))
		return -1;

	return 0;
}

/* Copy @len bytes to @dst, which may be in the read-only page */
static void arena_put(struct arena *a, void *dst, const void *src, size_t len)
{
	mprotect(page_at(a, 1), UE_PAGE_SIZE, PROT_READ | PROT_WRITE);
	memcpy(dst, src, len);
	mprotect(page_at(a, 1), UE_PAGE_SIZE, PROT_READ);
}

/* Readable bytes from @p on, at most @max (for pointers into the arena) */
static size_t arena_readable(const struct arena *a, const __u8 *p, size_t max)
{
	const __u8 *end;

	if (p >= page_at(a, 0) && p < page_at(a, 2))
		end = page_at(a, 2);
	else if (p >= page_at(a, 3) && p < page_at(a, 4))
		end = page_at(a, 4);
	else if (p >= page_at(a, 5) && p < page_at(a, 6))
		end = page_at(a, 6);
	else if (p >= a->base && p < page_at(a, ARENA_PAGES))
		return 0;
	else
		return max;

	return (size_t)(end - p) < max ? (size_t)(end - p) : max;
}

/* Writable bytes from @p on (the read-only page stops them) */
static size_t arena_writable(const struct arena *a, const __u8 *p, size_t max)
{
	const __u8 *ro = page_at(a, 1);

	if (p >= ro && p < ro + UE_PAGE_SIZE)
		return 0;
	if (p < ro && p + max > ro)
		return ro - p;

	return arena_readable(a, p, max);
}

FIXTURE(fuzz) {
	__u64 seed;
	long iters;
	int active0;
	int fd;
	int helper_fd;
	struct arena arena;
	struct tracked *tr;
	struct listing now;
	struct tally tally;
	int memfd;
	int fd2;
	int fd3;
	int nstrict;		/* strict_bits registered: 0..nstrict-1 */
};

/* The enable bits of the write test's strict slots, on fd3 */
static __u32 strict_bits;

FIXTURE_SETUP(fuzz)
{
	self->fd = -1;
	self->helper_fd = -1;
	self->memfd = -1;
	self->fd2 = -1;
	self->fd3 = -1;
	self->nstrict = 0;
	UE_SKIP_IF_UNAVAILABLE();

	ue_setup_clean(_metadata, INSTANCE, PREFIX, &self->active0);
	self->seed = fuzz_seed(_metadata->name);
	self->iters = ue_env_long("UE_FUZZ_ITERS", 0);
	ue_msg("%s: seed 0x%llx (set UE_FUZZ_SEED=0x%llx to replay)\n",
	       _metadata->name, (unsigned long long)self->seed,
	       (unsigned long long)self->seed);
	ASSERT_EQ(0, arena_init(&self->arena));
	self->tr = calloc(1, sizeof(*self->tr));
	ASSERT_NE(NULL, self->tr);
	self->helper_fd = ue_open_data();
	ASSERT_NE(-1, self->helper_fd);
	self->fd = ue_open_data();
	ASSERT_NE(-1, self->fd);
	ASSERT_EQ(0, read_listing(&self->now));
}

FIXTURE_TEARDOWN(fuzz)
{
	int i;

	if (self->fd != -1)
		close(self->fd);
	if (self->memfd != -1)
		close(self->memfd);
	if (self->fd2 != -1)
		close(self->fd2);
	if (self->fd3 != -1)
		close(self->fd3);
	/* The write test's enable bits hold its events */
	for (i = 0; self->helper_fd != -1 && i < self->nstrict; i++)
		ue_unreg_bit(self->helper_fd, &strict_bits, i);
	ue_instance_remove(INSTANCE);
	for (i = 0; self->tr && i < self->tr->n; i++)
		ioctl(self->helper_fd, DIAG_IOCSDEL, self->tr->ev[i].name);
	if (self->helper_fd != -1)
		close(self->helper_fd);
	ue_cleanup_events(PREFIX);
	free_listing(&self->now);
	free(self->tr);
	ue_expect_active(_metadata, self->active0);
}

/* Describe case @n for a failure report */
#define CASE_LOG(n, fmt, ...)						\
	TH_LOG("case %ld (seed 0x%llx): " fmt, n,			\
	       (unsigned long long)self->seed, ##__VA_ARGS__)

/*
 * Case @n, @what (an operation) of command @cmd (@len bytes), failed with
 * @ret: the events listed @after it must be those of before; frees @after
 */
static void check_failed(struct __test_metadata *_metadata,
			 struct _test_data_fuzz *self, long n, const char *what,
			 const char *cmd, size_t len, int ret,
			 struct listing *after)
{
	ASSERT_TRUE(same_listing(&self->now, after)) {
		CASE_LOG(n, "%s\"%s\" failed (%s), yet:", what, esc(cmd, len),
			 errname(ret));
		TH_LOG("now:\n%s%s\nwas:\n%s%s", after->status, after->dyn,
		       self->now.status, self->now.dyn);
	}
	free_listing(after);
}

/*
 * Delete every tracked event (their fds closed): each must go, nothing
 * may hold it any more.
 */
static int delete_tracked(int helper_fd, struct tracked *tr, char *why,
			  size_t size)
{
	while (tr->n > 0) {
		const char *name = tr->ev[tr->n - 1].name;

		if (ioctl(helper_fd, DIAG_IOCSDEL, name)) {
			snprintf(why, size, "cannot delete %s: %s", esc(name, strlen(name)),
				 strerror(errno));
			return -1;
		}
		tr->n--;
	}

	return 0;
}

/*
 * A struct user_reg and the tail its size announces, as bytes, and where
 * it is put for the ioctl
 */
#define IMG_MAX		(UE_PAGE_MAX + 64)

struct reg_case {
	__u8 img[IMG_MAX];
	__u32 size;
	size_t len;		/* bytes of img that matter */
	size_t nonzero;		/* offset of a non-zero tail byte, or 0 */
	__u8 *where;		/* the ioctl argument */
	size_t readable;	/* bytes the kernel can read there */
	size_t writable;	/* bytes it can write there */
	bool bad_ptr;		/* NULL, unmapped or kernel address */
};

/* Put the image of @rc somewhere, noting how much of it is accessible */
static void place_reg(struct arena *a, struct reg_case *rc, __u8 *heap)
{
	size_t r;

	rc->bad_ptr = false;
	switch (below(24)) {
	case 0:
		rc->where = NULL;
		rc->bad_ptr = true;
		break;
	case 1:
		rc->where = (__u8 *)KERNEL_ADDR;
		rc->bad_ptr = true;
		break;
	case 2:
		rc->where = page_at(a, 2) + below(64);
		rc->bad_ptr = true;
		break;
	case 3:	/* running into the inaccessible page */
		r = rc->len + 8 < UE_PAGE_SIZE ? rc->len + 8 : UE_PAGE_SIZE;
		rc->where = page_at(a, 4) - 1 - below(r);
		break;
	case 4:	/* crossing into the read-only page */
		rc->where = page_at(a, 1) - 1 - below(24);
		break;
	case 5:	/* all read-only */
		rc->where = page_at(a, 1) + below(64);
		break;
	case 6:	/* misaligned */
		rc->where = page_at(a, 3) + 1 + below(7);
		break;
	default:
		rc->where = heap;
		break;
	}
	if (rc->bad_ptr) {
		rc->readable = 0;
		rc->writable = 0;
		return;
	}
	rc->readable = arena_readable(a, rc->where, rc->len);
	rc->writable = arena_writable(a, rc->where, rc->len);
	arena_put(a, rc->where, rc->img, rc->readable);
}

/*
 * @rc: the @known bytes of a struct user_reg (of either layout) at @reg,
 * which says its size is @size, sometimes with a non-zero byte in the
 * tail beyond them; placed somewhere by place_reg()
 */
static void make_reg_case(struct reg_case *rc, const void *reg, size_t known,
			  __u32 size, struct arena *a, __u8 *heap)
{
	memset(rc, 0, sizeof(*rc));
	memcpy(rc->img, reg, known);
	rc->size = size;
	rc->len = size >= known && size <= UE_PAGE_SIZE ? size : 64;
	if (size > known && size <= UE_PAGE_SIZE && chance(30)) {
		rc->nonzero = known + below(size - known);
		rc->img[rc->nonzero] = 1 + below(255);
	}
	place_reg(a, rc, heap);
}

/* Where the command string goes; returns what the kernel will read */
static const char *place_cmd(struct arena *a, const struct text *cmd,
			     size_t len, bool *faults, char *heap)
{
	__u8 *page = page_at(a, 5);

	*faults = false;
	switch (below(30)) {
	case 0:
		*faults = true;
		return NULL;
	case 1:
		*faults = true;
		return (const char *)KERNEL_ADDR;
	case 2:
		*faults = true;
		return (const char *)page_at(a, 6) + 8;
	case 3:	/* ending right at the inaccessible page: NUL or not */
	case 4:
		if (len > UE_PAGE_SIZE - 64)
			break;
		if (below(2)) {
			memcpy(page + UE_PAGE_SIZE - len - 1, cmd->buf, len);
			page[UE_PAGE_SIZE - 1] = '\0';
			return (const char *)page + UE_PAGE_SIZE - len - 1;
		}
		memcpy(page + UE_PAGE_SIZE - len, cmd->buf, len);
		*faults = true;
		return (const char *)page + UE_PAGE_SIZE - len;
	}
	memcpy(heap, cmd->buf, len);
	heap[len] = '\0';

	return heap;
}

/*
 * What the kernel must answer for the struct in @rc, given what the
 * command would get (@cmd): the struct's errors come first.
 */
static void reg_outcome(const struct reg_case *rc, bool cmd_faults,
			struct allowed *a)
{
	const size_t min = sizeof(struct ue_status_reg);
	const size_t bit_min = sizeof(struct user_reg);
	struct allowed b = { .ok = false };

	if (rc->bad_ptr || rc->readable < 4) {
		allow(&b, EFAULT);
	} else if (rc->size != min) {
		/*
		 * Too small for either layout, or the enable bit layout,
		 * read like copy_struct_from_user(): its enable_size, a
		 * padding byte of this one, is 0.
		 */
		if (rc->size < bit_min) {
			allow(&b, EINVAL);
		} else if (rc->size > UE_PAGE_SIZE) {
			allow(&b, E2BIG);
		} else if (rc->readable < rc->size) {
			allow(&b, EFAULT);
			if (rc->nonzero >= bit_min && rc->nonzero < rc->readable)
				allow(&b, E2BIG);
		} else {
			allow(&b, rc->nonzero >= bit_min ? E2BIG : EINVAL);
		}
	} else if (rc->readable < min) {
		allow(&b, EFAULT);
	} else if (rc->writable < min || cmd_faults) {
		/* No answer can be stored, or no command read: no change */
		allow(&b, EFAULT);
	} else {
		return;
	}
	*a = b;
}

/* Length of the command the kernel reads: up to the first NUL */
static size_t cmd_strlen(const struct text *t)
{
	return strnlen(t->buf, t->len);
}

TEST_F_TIMEOUT(fuzz, register, 600)
{
	long cases = self->iters ?: ue_scaled(1500, 5), n;
	static char heap_cmd[sizeof(((struct text *)0)->buf)];
	struct text *t = malloc(sizeof(*t));
	struct reg_case *rc = malloc(sizeof(*rc));
	__u8 *heap_img = malloc(IMG_MAX);
	__u32 slot_of[UE_PAGE_MAX];
	struct fz_event e, *old;
	struct listing after;
	struct ue_status_reg ur;
	struct allowed a;
	const char *cmd_ptr;
	char why[256], name[128];
	int ret, nslots = 0, expect;
	long long t0 = ue_now_ms();
	bool cmd_faults, exact, mutated;
	__u32 index;
	size_t klen;

	ASSERT_NE(NULL, t);
	ASSERT_NE(NULL, rc);
	ASSERT_NE(NULL, heap_img);
	memset(slot_of, 0xff, sizeof(slot_of));

	for (n = 0; n < cases; n++) {
		unsigned int kind = below(100);

		memset(&a, 0, sizeof(a));
		memset(t, 0, sizeof(*t));
		rand_event(&e);
		exact = true;
		mutated = false;
		expect = 0;

		/* The command */
		if (kind < 40) {
			spell(t, &e);
			/* An event of that name may exist already */
			old = self->tr->n && chance(25) ?
			      &self->tr->ev[below(self->tr->n)] : NULL;
			if (old && self->tr->known[old - self->tr->ev]) {
				if (chance(60))
					e = *old;
				else
					snprintf(e.name, sizeof(e.name), "%s", old->name);
				memset(t, 0, sizeof(*t));
				spell(t, &e);
			}
			expect = register_outcome(self->tr, &e, &a, &exact);
		} else if (kind < 60) {
			spell_invalid(t, &e, &expect);
		} else if (kind < 93) {
			if (chance(50))
				spell(t, &e);
			else
				spell_invalid(t, &e, &expect);
			mutate_after_prefix(t, 0, true);
			mutated = true;
		} else {
			spell(t, &e);
			make_huge(t, UE_CMD_MAX + 1 + below(3 * UE_CMD_MAX));
			expect = E2BIG;
		}
		if (expect < 0) {
			exact = false;
			allow(&a, 0);
			expect = EINVAL;
		}
		allow(&a, expect);
		if (mutated) {
			exact = false;
			allow(&a, 0);
			allow(&a, EINVAL);
			allow(&a, E2BIG);
			allow(&a, EADDRINUSE);
			allow(&a, ENOMEM);
		}
		klen = cmd_strlen(t);
		if (klen > UE_CMD_MAX) {
			memset(&a, 0, sizeof(a));
			allow(&a, E2BIG);
		}

		/* The struct, its tail, and where things are */
		cmd_ptr = place_cmd(&self->arena, t, klen, &cmd_faults, heap_cmd);
		memset(&ur, 0, sizeof(ur));
		ur.name_args = (__u64)(uintptr_t)cmd_ptr;
		ur.size = sizeof(ur);
		if (chance(25)) {
			static const __u32 sizes[] = {
				0, 1, 4, 8, 16, 20, 23, 25, 32, 40, 48, 64,
				100, 4095, 4096, 4097, 65536, 0xffffffff,
			};

			ur.size = chance(50) ? below(65) :
				  sizes[below(ARRAY_SIZE(sizes))];
		}
		ur.status_index = rnd();
		ur.write_index = rnd();
		make_reg_case(rc, &ur, sizeof(ur), ur.size, &self->arena,
			      heap_img);
		reg_outcome(rc, cmd_faults, &a);

		ret = ue_ioctl(self->fd, DIAG_IOCSREG, rc->where);
		tally(&self->tally, ret);
		ASSERT_TRUE(allowed(&a, ret)) {
			CASE_LOG(n, "DIAG_IOCSREG \"%s\" at %p: %s, allowed: %s",
				 esc(t->buf, t->len), cmd_ptr, errname(ret),
				 allowed_text(&a));
			TH_LOG("struct size %u at %p: %zu readable, %zu writable, tail %zu",
			       rc->size, rc->where, rc->readable, rc->writable,
			       rc->nonzero);
		}

		ASSERT_EQ(0, read_listing(&after));
		if (ret) {
			/* Nothing changed */
			check_failed(_metadata, self, n, "DIAG_IOCSREG ", t->buf,
				     t->len, ret, &after);
			continue;
		}

		/* Success: the answer is consistent with what exists */
		memcpy(&ur, rc->where, sizeof(ur));
		index = ur.status_index;
		ASSERT_TRUE(index > 0 && index < UE_PAGE_SIZE) {
			CASE_LOG(n, "\"%s\": status index %u", esc(t->buf, t->len),
				 index);
		}
		if (slot_of[index] != 0xffffffff) {
			ASSERT_EQ(slot_of[index], ur.write_index);
		} else {
			ASSERT_EQ(nslots, ur.write_index) {
				CASE_LOG(n, "\"%s\": write index %u, expected %d",
					 esc(t->buf, t->len), ur.write_index, nslots);
			}
			slot_of[index] = nslots++;
		}
		if (!new_event(self->now.status, after.status, name, sizeof(name),
			       &index)) {
			ASSERT_EQ(ur.status_index, index);
			track(self->tr, name, exact ? &e : NULL, index);
		} else {
			ASSERT_TRUE(same_listing(&self->now, &after)) {
				CASE_LOG(n, "\"%s\" changed things but made no event",
					 esc(t->buf, t->len));
			}
			ASSERT_TRUE(listed(after.status, index, "")) {
				CASE_LOG(n, "\"%s\": status index %u of no event",
					 esc(t->buf, t->len), index);
			}
		}
		free_listing(&self->now);
		self->now = after;

		/* Now and then: close the fd, delete what was made */
		if (self->tr->n >= 64 || chance(2)) {
			close(self->fd);
			self->fd = -1;
			ASSERT_EQ(0, delete_tracked(self->helper_fd, self->tr, why,
						    sizeof(why))) {
				CASE_LOG(n, "%s", why);
			}
			self->fd = ue_open_data();
			ASSERT_NE(-1, self->fd);
			nslots = 0;
			memset(slot_of, 0xff, sizeof(slot_of));
			free_listing(&self->now);
			ASSERT_EQ(0, read_listing(&self->now));
		}
	}
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, delete_tracked(self->helper_fd, self->tr, why, sizeof(why))) {
		TH_LOG("%s", why);
	}
	report_tally("DIAG_IOCSREG", cases, &self->tally);
	ue_msg("%ld cases in %lld ms\n", cases, ue_now_ms() - t0);
	free(t);
	free(rc);
	free(heap_img);
}

/*
 * The enable bit layout of DIAG_IOCSREG, and DIAG_IOCSUNREG, with hostile
 * structs: random sizes and tails, flags, enable_size, enable_bit and
 * enable_addr (misaligned, NULL, kernel, read-only, inaccessible), and
 * commands as above.  The bits live in a page whose whole content is
 * known: a registration clears its bit (nothing is enabled) and touches
 * nothing else, a failed one touches nothing, an unregistration clears
 * its bit.  Events of a small pool are enabled now and then: the bits of
 * all their registrations, and only those, are set meanwhile.
 */

#define POOL		4
#define MAX_BITREGS	48
#define MAX_KEYS	512
#define KEY_SIZE	160

/* The fields of variant v of pool event i (variants 0 and 1 differ) */
static void pool_cmd(char *buf, size_t size, int i, int v)
{
	snprintf(buf, size, PREFIX "pool%d %s", i,
		 v ? "u64 b; char[8] c" : "u32 a");
}

struct bitreg {
	__u8 *addr;
	int size;
	int bit;
	int event;		/* pool event, or -1 */
};

struct bitfuzz {
	__u8 *bits;		/* page 0 read-write, page 1 read-only */
	__u8 expect[UE_PAGE_MAX];
	struct bitreg regs[MAX_BITREGS];
	int nregs;
	int pool[POOL];		/* variant of pool event i, -1 if none */
	char keys[MAX_KEYS][KEY_SIZE];	/* the event of each write index */
	int nkeys;
};

static struct bitreg *find_bitreg(struct bitfuzz *bf, const __u8 *addr, int bit)
{
	int i;

	for (i = 0; i < bf->nregs; i++) {
		if (bf->regs[i].addr == addr && bf->regs[i].bit == bit)
			return &bf->regs[i];
	}

	return NULL;
}

/* Where in a @size-byte value the byte with bit @bit is */
static int bit_byte(int size, int bit)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	/* The high byte first: bit 0 is in the last byte of the value */
	return size - 1 - bit / 8;
#else
	return bit / 8;
#endif
}

/* The byte of @bf->expect with bit @bit of the @size-byte value at @addr */
static __u8 *expect_byte(struct bitfuzz *bf, const __u8 *addr, int size,
			 int bit)
{
	return &bf->expect[addr - bf->bits + bit_byte(size, bit)];
}

/* Set the expected value of every bit of pool event @event */
static void expect_event(struct bitfuzz *bf, int event, bool on)
{
	int i;

	for (i = 0; i < bf->nregs; i++) {
		struct bitreg *r = &bf->regs[i];

		if (r->event != event)
			continue;
		if (on)
			*expect_byte(bf, r->addr, r->size, r->bit) |= 1 << (r->bit % 8);
		else
			*expect_byte(bf, r->addr, r->size, r->bit) &= ~(1 << (r->bit % 8));
	}
}

/* Write index of event @key on the fd: known, or the next one */
static __u32 key_slot(struct bitfuzz *bf, const char *key, bool *is_new)
{
	int i;

	for (i = 0; key && i < bf->nkeys; i++) {
		if (!strcmp(bf->keys[i], key)) {
			*is_new = false;
			return i;
		}
	}
	*is_new = true;

	return bf->nkeys;
}

/* FNV-1a of a command, to tell formats apart */
static __u64 text_hash(const struct text *t)
{
	__u64 h = 1469598103934665603ULL;
	size_t i;

	for (i = 0; i < t->len; i++)
		h = (h ^ (__u8)t->buf[i]) * 1099511628211ULL;

	return h;
}

/* Is any of bytes @from..@to-1 of @p not zero? */
static bool nonzero_bytes(const __u8 *p, size_t from, size_t to)
{
	while (from < to) {
		if (p[from++])
			return true;
	}

	return false;
}

/* Offset in the bit page of the first byte that differs, or -1 */
static int bits_differ(const struct bitfuzz *bf)
{
	int i;

	for (i = 0; i < UE_PAGE_SIZE; i++) {
		if (bf->bits[i] != bf->expect[i])
			return i;
	}

	return -1;
}

/*
 * Unregister everything, close @fd and wait until the events are gone
 * (deleting the persistent ones) and the count of events is @count0
 * again; 0 or -1 with @why filled in.
 */
static int bitfuzz_reset(struct bitfuzz *bf, int *fd, int count0, char *why,
			 size_t size)
{
	long long end = ue_now_ms() + UE_WAIT_MS;
	int i, ret, count;

	while (bf->nregs > 0) {
		struct bitreg *r = &bf->regs[bf->nregs - 1];

		ret = ue_unreg_bit(*fd, r->addr, r->bit);
		if (ret) {
			snprintf(why, size, "unregister bit %d at %p: %s",
				 r->bit, r->addr, strerror(ret));
			return -1;
		}
		*expect_byte(bf, r->addr, r->size, r->bit) &= ~(1 << (r->bit % 8));
		bf->nregs--;
	}
	close(*fd);
	*fd = -1;
	do {
		ue_cleanup_events(PREFIX);
		ue_cleanup_system_events(USER_EVENTS_MULTI_SYSTEM, PREFIX);
		count = ue_count_events();
		if (count != count0)
			usleep(1000);
	} while (count != count0 && ue_now_ms() < end);
	if (count != count0) {
		snprintf(why, size, "%d user events left, %d at the start",
			 count, count0);
		return -1;
	}
	for (i = 0; i < POOL; i++)
		bf->pool[i] = -1;
	bf->nkeys = 0;
	*fd = ue_open_data();
	if (*fd == -1) {
		snprintf(why, size, "open: %s", strerror(errno));
		return -1;
	}

	return 0;
}

TEST_F_TIMEOUT(fuzz, register_enable_bit, 600)
{
	long cases = self->iters ?: ue_scaled(1500, 4), n;
	static char heap_cmd[sizeof(((struct text *)0)->buf)];
	struct text *t = malloc(sizeof(*t));
	struct reg_case *rc = malloc(sizeof(*rc));
	struct bitfuzz *bf = calloc(1, sizeof(*bf));
	__u8 *heap_img = malloc(IMG_MAX);
	char why[256], key[KEY_SIZE], cmd[128];
	int ret, i, count0, diff, event;
	long long t0 = ue_now_ms();
	struct tally unregs = { 0 };
	long nunregs = 0;
	/* The top bit of a long of the kernel's, for the last registration */
	int wide = ue_kernel_64bit() ? 8 : 4;
	__u8 *addr;
	struct listing after;
	struct user_reg ur;
	struct fz_event e;
	struct allowed a;
	bool is_new;
	__u32 slot;

	ASSERT_NE(NULL, t);
	ASSERT_NE(NULL, rc);
	ASSERT_NE(NULL, bf);
	ASSERT_NE(NULL, heap_img);
	bf->bits = mmap(NULL, 2 * UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, bf->bits);
	for (i = 0; i < UE_PAGE_SIZE; i++)
		bf->expect[i] = rnd();
	memcpy(bf->bits, bf->expect, UE_PAGE_SIZE);
	ASSERT_EQ(0, mprotect(bf->bits + UE_PAGE_SIZE, UE_PAGE_SIZE, PROT_READ));
	for (i = 0; i < POOL; i++)
		bf->pool[i] = -1;
	count0 = ue_count_events();
	ASSERT_LE(0, count0);

	for (n = 0; n < cases; n++) {
		/* What the struct's fields and the command get, in any order */
		struct allowed errs = { .ok = false }, cmd_errs = { .ok = false };
		bool cmd_faults, multi, mutated = false, unknown = false;
		unsigned int kind = below(100), pick;
		bool field_errs;
		int size, bit, flags, variant = 0;

		memset(&a, 0, sizeof(a));
		memset(t, 0, sizeof(*t));
		event = -1;
		key[0] = '\0';

		/* Now and then an unregistration instead */
		if (chance(25)) {
			struct user_unreg *uu = (struct user_unreg *)heap_img;
			static const __u32 usizes[] = {
				0, 1, 8, 15, 17, 24, 32, 64, 4096, 4097,
			};
			struct bitreg *r = bf->nregs ?
					   &bf->regs[below(bf->nregs)] : NULL;
			void *where = heap_img;

			memset(heap_img, 0, IMG_MAX);
			uu->size = chance(80) ? sizeof(*uu) :
				   usizes[below(ARRAY_SIZE(usizes))];
			uu->disable_addr = (__u64)(uintptr_t)(r ? r->addr :
					    bf->bits + 8 * below(64));
			uu->disable_bit = r ? r->bit : below(64);
			if (chance(10))
				uu->disable_bit ^= 1 << below(8);
			if (chance(10))
				uu->disable_addr += 4 << below(3);
			if (chance(5))
				uu->__reserved = 1 + below(255);
			if (chance(5))
				uu->__reserved2 = 1 + below(0xffff);
			if (uu->size > sizeof(*uu) && uu->size <= 64 && chance(40))
				heap_img[sizeof(*uu) + below(uu->size - sizeof(*uu))] =
					1 + below(255);
			if (chance(4))
				where = chance(50) ? NULL : (void *)KERNEL_ADDR;

			r = find_bitreg(bf, (__u8 *)(uintptr_t)uu->disable_addr,
					uu->disable_bit);
			if (!where)
				allow(&a, EFAULT);
			else if (where == (void *)KERNEL_ADDR)
				allow(&a, EFAULT);
			else if (uu->size < sizeof(*uu))
				allow(&a, EINVAL);
			else if (uu->size > UE_PAGE_SIZE)
				allow(&a, E2BIG);
			else if (uu->size > sizeof(*uu) &&
				 nonzero_bytes(heap_img, sizeof(*uu), uu->size))
				allow(&a, E2BIG);
			else if (uu->__reserved || uu->__reserved2)
				allow(&a, EINVAL);
			else if (!r)
				allow(&a, ENOENT);
			else
				allow(&a, 0);

			/* The program set the bit: unregistering clears it */
			if (r) {
				r->addr[bit_byte(r->size, r->bit)] |=
					1 << (r->bit % 8);
				*expect_byte(bf, r->addr, r->size, r->bit) |= 1 << (r->bit % 8);
			}
			ret = ue_ioctl(self->fd, DIAG_IOCSUNREG, where);
			nunregs++;
			tally(&unregs, ret);
			ASSERT_TRUE(allowed(&a, ret)) {
				CASE_LOG(n, "DIAG_IOCSUNREG %u bytes, bit %u at 0x%llx: %s, ok: %s",
					 uu->size, uu->disable_bit,
					 (unsigned long long)uu->disable_addr,
					 errname(ret), allowed_text(&a));
				TH_LOG("reserved %u %u", uu->__reserved,
				       uu->__reserved2);
			}
			if (!ret) {
				*expect_byte(bf, r->addr, r->size, r->bit) &= ~(1 << (r->bit % 8));
				*r = bf->regs[--bf->nregs];
			}
			diff = bits_differ(bf);
			ASSERT_EQ(-1, diff) {
				CASE_LOG(n, "DIAG_IOCSUNREG (%s): bit byte %d 0x%02x, not 0x%02x",
					 errname(ret), diff, bf->bits[diff],
					 bf->expect[diff]);
			}
			ASSERT_EQ(0, read_listing(&after));
			ASSERT_TRUE(same_listing(&self->now, &after)) {
				CASE_LOG(n, "DIAG_IOCSUNREG changed the events");
			}
			free_listing(&after);
			continue;
		}

		/* The command */
		flags = chance(80) ? 0 : below(4);
		if (chance(5))
			flags = rnd() & 0xffff;
		multi = flags & USER_EVENT_REG_MULTI_FORMAT;
		if (kind < 50) {
			int v = below(2);

			variant = v;
			event = below(POOL);
			pool_cmd(cmd, sizeof(cmd), event, v);
			snprintf(t->buf, sizeof(t->buf), "%s", cmd);
			t->len = strlen(t->buf);
			if (multi) {
				snprintf(key, sizeof(key), "multi %s", cmd);
				event = -1;
			} else {
				snprintf(key, sizeof(key), "%s", cmd);
				if (bf->pool[event] >= 0 && bf->pool[event] != v) {
					allow(&cmd_errs, EADDRINUSE);
					snprintf(key, sizeof(key), "-");
				}
			}
		} else if (kind < 70) {
			int expect = 0;

			rand_event(&e);
			spell_invalid(t, &e, &expect);
			if (expect < 0) {
				unknown = true;
				allow(&cmd_errs, EINVAL);
			} else {
				allow(&cmd_errs, expect);
			}
		} else if (kind < 95) {
			rand_event(&e);
			spell(t, &e);
			if (chance(70)) {
				mutate_after_prefix(t, 0, true);
				mutated = true;
				unknown = true;
				allow(&cmd_errs, EINVAL);
				allow(&cmd_errs, E2BIG);
				allow(&cmd_errs, ENOMEM);
			} else if (fixed_size(&e) > UE_PAYLOAD_MAX) {
				allow(&cmd_errs, E2BIG);
			} else {
				/* An event is its name, or its format in multi */
				snprintf(key, sizeof(key), "%s%s %llx",
					 multi ? "multi " : "", e.name,
					 multi ? (unsigned long long)text_hash(t) : 0ULL);
				/*
				 * A name the fd registered before, with these
				 * fields or others: the model keeps no fields
				 */
				key_slot(bf, key, &is_new);
				if (!is_new) {
					unknown = true;
					allow(&cmd_errs, EADDRINUSE);
				}
			}
		} else {
			rand_event(&e);
			spell(t, &e);
			make_huge(t, UE_CMD_MAX + 1 + below(UE_CMD_MAX));
			allow(&cmd_errs, E2BIG);
		}
		if (cmd_strlen(t) > UE_CMD_MAX) {
			memset(&cmd_errs, 0, sizeof(cmd_errs));
			allow(&cmd_errs, E2BIG);
			unknown = false;
		}
		ur.name_args = (__u64)(uintptr_t)place_cmd(&self->arena, t,
							   cmd_strlen(t),
							   &cmd_faults, heap_cmd);
		if (cmd_faults) {
			memset(&cmd_errs, 0, sizeof(cmd_errs));
			allow(&cmd_errs, EFAULT);
			unknown = false;
		}

		/* The value and its bit */
		size = chance(85) ? (chance(50) ? 4 : 8) : below(17);
		if (size == 4 || size == 8)
			bit = chance(90) ? below(size * 8) :
					    size * 8 + below(256 - size * 8);
		else
			bit = below(256);
		pick = below(100);
		if (pick < 75)
			addr = bf->bits + 8 * below(64) + (size == 4 ? 4 * below(2) : 0);
		else if (pick < 80)
			addr = bf->bits + 8 * below(64) + 1 + below(7);
		else if (pick < 85)
			addr = bf->bits + UE_PAGE_SIZE + 8 * below(64);
		else if (pick < 88)
			addr = NULL;
		else if (pick < 91)
			addr = (__u8 *)KERNEL_ADDR;
		else if (pick < 94)
			addr = page_at(&self->arena, 2) + 8 * below(64);
		else if (pick < 97)
			addr = (__u8 *)((uintptr_t)&fuzz_seed & ~7UL);
		else
			addr = (__u8 *)(uintptr_t)(rnd() & ~7ULL);

		if ((flags & ~(USER_EVENT_REG_MAX - 1)) ||
		    (size != 4 && (size != 8 || !ue_kernel_64bit())) ||
		    (size && (uintptr_t)addr % size) || bit >= size * 8)
			allow(&errs, EINVAL);
		if (!addr || addr < bf->bits || addr >= bf->bits + UE_PAGE_SIZE)
			allow(&errs, EFAULT);
		if (find_bitreg(bf, addr, bit))
			allow(&errs, EADDRINUSE);

		/* The struct */
		memset(&ur, 0, offsetof(struct user_reg, name_args));
		ur.size = sizeof(ur);
		if (chance(20))
			ur.size = chance(60) ? below(65) :
				  (chance(50) ? 4096 + below(2) : rnd());
		if (ur.size == sizeof(struct ue_status_reg))
			ur.size = sizeof(ur);
		ur.enable_bit = bit;
		ur.enable_size = size;
		ur.flags = flags;
		ur.enable_addr = (__u64)(uintptr_t)addr;
		ur.write_index = rnd();
		make_reg_case(rc, &ur, sizeof(ur), ur.size, &self->arena,
			      heap_img);

		if (rc->bad_ptr || rc->readable < 4) {
			allow(&a, EFAULT);
		} else if (rc->size < sizeof(ur)) {
			allow(&a, EINVAL);
		} else if (rc->size > UE_PAGE_SIZE) {
			allow(&a, E2BIG);
		} else if (rc->readable < rc->size) {
			allow(&a, EFAULT);
			if (rc->nonzero && rc->nonzero < rc->readable)
				allow(&a, E2BIG);
		} else if (rc->nonzero) {
			allow(&a, E2BIG);
		} else {
			/* The struct can be read: its fields decide */
			a = errs;
			if (rc->writable < sizeof(ur))
				allow(&a, EFAULT);
			field_errs = a.n;
			for (i = 0; i < cmd_errs.n; i++)
				allow(&a, cmd_errs.err[i]);
			if (!field_errs && (!cmd_errs.n || unknown))
				allow(&a, 0);
			if (!field_errs && mutated)
				allow(&a, EADDRINUSE);
		}

		ret = ue_ioctl(self->fd, DIAG_IOCSREG, rc->where);
		tally(&self->tally, ret);
		ASSERT_TRUE(allowed(&a, ret)) {
			CASE_LOG(n, "DIAG_IOCSREG \"%s\": %s, allowed: %s",
				 esc(t->buf, t->len), errname(ret),
				 allowed_text(&a));
			TH_LOG("size %u at %p (%zu readable, %zu writable, tail %zu)",
			       rc->size, rc->where, rc->readable, rc->writable,
			       rc->nonzero);
			TH_LOG("flags 0x%x, bit %d of %d bytes at %p", flags,
			       bit, size, addr);
		}

		ASSERT_EQ(0, read_listing(&after));
		if (ret) {
			check_failed(_metadata, self, n, "DIAG_IOCSREG ", t->buf,
				     t->len, ret, &after);
		} else {
			/* The write index: the event's, or the next one */
			memcpy(&ur, rc->where, sizeof(ur));
			slot = key_slot(bf, key[0] ? key : NULL, &is_new);
			/* A mutated command may name an event the fd has */
			if (!key[0] && ur.write_index < slot)
				is_new = false;
			else
				ASSERT_EQ(slot, ur.write_index) {
					CASE_LOG(n, "\"%s\": write index %u, expected %u",
						 esc(t->buf, t->len),
						 ur.write_index, slot);
				}
			if (is_new)
				snprintf(bf->keys[bf->nkeys++], sizeof(key),
					 "%s", key[0] ? key : "?");
			if (event >= 0)
				bf->pool[event] = variant;
			bf->regs[bf->nregs].addr = addr;
			bf->regs[bf->nregs].size = size;
			bf->regs[bf->nregs].bit = bit;
			bf->regs[bf->nregs].event = event;
			bf->nregs++;
			/* Nothing is enabled: the kernel cleared the bit */
			*expect_byte(bf, addr, size, bit) &= ~(1 << (bit % 8));
			free_listing(&self->now);
			self->now = after;
		}
		diff = bits_differ(bf);
		ASSERT_EQ(-1, diff) {
			CASE_LOG(n, "DIAG_IOCSREG \"%s\" (%s): bit byte %d 0x%02x, not 0x%02x",
				 esc(t->buf, t->len), errname(ret), diff,
				 bf->bits[diff], bf->expect[diff]);
		}

		/* Enable a pool event: its bits, and only those, are set */
		if (!ret && event >= 0 && chance(20)) {
			int on;

			snprintf(cmd, sizeof(cmd), PREFIX "pool%d", event);
			/* Enabled, then disabled again */
			for (on = 1; on >= 0; on--) {
				ASSERT_EQ(0, ue_enable(NULL, cmd, on));
				expect_event(bf, event, on);
				diff = bits_differ(bf);
				ASSERT_EQ(-1, diff) {
					CASE_LOG(n, "%s %s: bit byte %d 0x%02x, not 0x%02x",
						 cmd, on ? "enabled" : "disabled",
						 diff, bf->bits[diff],
						 bf->expect[diff]);
				}
			}
		}

		/* Start again when full; the events go, nothing is left */
		if (bf->nregs == MAX_BITREGS || bf->nkeys >= MAX_KEYS - 1 ||
		    chance(1)) {
			free_listing(&self->now);
			ASSERT_EQ(0, bitfuzz_reset(bf, &self->fd, count0, why,
						   sizeof(why))) {
				CASE_LOG(n, "%s", why);
			}
			ASSERT_EQ(-1, bits_differ(bf));
			ASSERT_EQ(0, read_listing(&self->now));
		}
	}

	/* The kernel is sane: a good registration works and its bit follows */
	addr = bf->bits + 8 * 63;
	ASSERT_EQ(0, ue_reg_bit(self->fd, PREFIX "after u32 a", addr, wide,
				wide * 8 - 1, 0, NULL));
	ASSERT_FALSE(ue_bit(addr, wide, wide * 8 - 1));
	ASSERT_EQ(0, ue_enable(NULL, PREFIX "after", true));
	ASSERT_TRUE(ue_bit(addr, wide, wide * 8 - 1));
	ASSERT_EQ(0, ue_enable(NULL, PREFIX "after", false));
	ASSERT_FALSE(ue_bit(addr, wide, wide * 8 - 1));
	ASSERT_EQ(0, ue_unreg_bit(self->fd, addr, wide * 8 - 1));
	*expect_byte(bf, addr, wide, wide * 8 - 1) &= ~0x80;

	free_listing(&self->now);
	ASSERT_EQ(0, bitfuzz_reset(bf, &self->fd, count0, why, sizeof(why))) {
		TH_LOG("%s", why);
	}
	ASSERT_EQ(-1, bits_differ(bf));
	ASSERT_EQ(0, read_listing(&self->now));
	report_tally("DIAG_IOCSREG, enable bit", cases, &self->tally);
	report_tally("DIAG_IOCSUNREG", nunregs, &unregs);
	ue_msg("%ld cases in %lld ms\n", cases, ue_now_ms() - t0);
	munmap(bf->bits, 2 * UE_PAGE_SIZE);
	free(t);
	free(rc);
	free(bf);
	free(heap_img);
}

TEST_F_TIMEOUT(fuzz, dynamic_events, 600)
{
	long cases = self->iters ?: ue_scaled(1000, 5), n;
	struct text *t = malloc(sizeof(*t));
	struct fz_event e, *old;
	struct listing after;
	struct allowed a;
	char why[256], name[128];
	long long t0 = ue_now_ms();
	int ret, expect, holder;
	bool deleting, by_ioctl, exact;
	size_t len;
	__u32 index;

	ASSERT_NE(NULL, t);
	for (n = 0; n < cases; n++) {
		unsigned int kind = below(100);

		memset(&a, 0, sizeof(a));
		memset(t, 0, sizeof(*t));
		rand_event(&e);
		deleting = false;
		by_ioctl = false;
		exact = kind < 45;
		expect = 0;
		holder = -1;
		old = self->tr->n ? &self->tr->ev[below(self->tr->n)] : NULL;
		if (old && !self->tr->known[old - self->tr->ev])
			old = NULL;

		if (kind < 30) {
			add(t, "u:");
			spell(t, &e);
			if (old && chance(30)) {
				e = *old;
				memset(t, 0, sizeof(*t));
				add(t, "u:");
				spell(t, &e);
			}
			expect = register_outcome(self->tr, &e, &a, &exact);
			allow(&a, expect);
		} else if (kind < 45) {
			add(t, "u:");
			spell_invalid(t, &e, &expect);
			if (expect < 0) {
				exact = false;
				allow(&a, 0);
				expect = EINVAL;
			}
			allow(&a, expect);
		} else if (kind < 70) {
			add(t, "u:");
			if (chance(50))
				spell(t, &e);
			else
				spell_invalid(t, &e, &expect);
			mutate_after_prefix(t, 2, chance(10));
			allow(&a, 0);
			allow(&a, EINVAL);
			allow(&a, E2BIG);
			allow(&a, EADDRINUSE);
			allow(&a, ENOMEM);
		} else if (kind < 73) {
			add(t, "u:");
			spell(t, &e);
			make_huge(t, 4095 + below(3 * UE_CMD_MAX));
			allow(&a, EINVAL);
			allow(&a, E2BIG);
		} else {
			/* Deletions */
			deleting = true;
			if (!old || chance(15)) {
				rand_ident(name, sizeof(name), PREFIX "nx", 1 + below(8));
				add(t, "!u:%s", name);
				allow(&a, ENOENT);
			} else {
				unsigned int how = below(8);

				e = *old;
				if (how == 0) {
					struct ue_status_reg reg;

					/* Still registered on an fd: busy */
					holder = ue_open_data();
					ASSERT_NE(-1, holder);
					memset(t, 0, sizeof(*t));
					spell(t, &e);
					ASSERT_EQ(0, ue_reg(holder, t->buf, &reg));
					memset(t, 0, sizeof(*t));
					add(t, "!u:%s", e.name);
					allow(&a, EBUSY);
				} else if (how == 1) {
					by_ioctl = true;
					add(t, "%s", e.name);
					allow(&a, 0);
				} else if (how == 2) {
					add(t, "!u:%s%s", chance(50) ? "" : "user_events/",
					    e.name);
					allow(&a, 0);
				} else if (how <= 4) {
					/* With its fields, any spelling */
					add(t, "!u:%s ", e.name);
					spell_fields(t, &e, chance(70));
					allow(&a, 0);
				} else if (how == 5 && e.nfields) {
					/* With other fields: no match */
					e.fields[below(e.nfields)].name[0] ^= 0x20;
					add(t, "!u:%s ", e.name);
					spell_fields(t, &e, true);
					allow(&a, ENOENT);
				} else {
					add(t, "!u:%s ", e.name);
					spell_fields(t, &e, true);
					mutate(t, 3 + strlen(e.name), false);
					allow(&a, 0);
					allow(&a, ENOENT);
					allow(&a, EINVAL);
				}
			}
		}

		len = t->len;
		if (by_ioctl) {
			ret = ue_ioctl(self->helper_fd, DIAG_IOCSDEL, t->buf);
		} else {
			/* Usually a line, sometimes without its newline */
			if (chance(85))
				t->buf[len++] = '\n';
			ret = ue_write_buf("dynamic_events", t->buf, len,
					   O_APPEND);
		}
		tally(&self->tally, ret);
		if (holder != -1)
			close(holder);
		ASSERT_TRUE(allowed(&a, ret)) {
			CASE_LOG(n, "%s \"%s\": %s, allowed: %s",
				 by_ioctl ? "DIAG_IOCSDEL" : "dynamic_events",
				 esc(t->buf, len), errname(ret), allowed_text(&a));
		}

		ASSERT_EQ(0, read_listing(&after));
		/*
		 * A mutation may have cut the command into lines: those
		 * before a bad one take effect, as for any dynamic event
		 */
		if (ret && memchr(t->buf, '\n', len - 1)) {
			if (!new_event(self->now.status, after.status, name,
				       sizeof(name), &index))
				track(self->tr, name, NULL, index);
			free_listing(&self->now);
			self->now = after;
			continue;
		}
		if (ret) {
			check_failed(_metadata, self, n, "", t->buf, len, ret,
				     &after);
			continue;
		}
		if (deleting) {
			/* The one event is gone, nothing else changed */
			ASSERT_FALSE(listed(after.status, old->status_index, old->name)) {
				CASE_LOG(n, "\"%s\" succeeded, %s still there",
					 esc(t->buf, len), old->name);
			}
			ASSERT_EQ(-1, new_event(self->now.status, after.status,
						name, sizeof(name), &index));
			untrack(self->tr, old->name);
		} else if (!new_event(self->now.status, after.status, name,
				      sizeof(name), &index)) {
			track(self->tr, name, exact ? &e : NULL, index);
		} else {
			/* An existing event: nothing changed */
			ASSERT_TRUE(same_listing(&self->now, &after)) {
				CASE_LOG(n, "\"%s\" changed things but made no event",
					 esc(t->buf, len));
			}
		}
		free_listing(&self->now);
		self->now = after;

		if (self->tr->n >= 64) {
			ASSERT_EQ(0, delete_tracked(self->helper_fd, self->tr, why,
						    sizeof(why))) {
				CASE_LOG(n, "%s", why);
			}
			free_listing(&self->now);
			ASSERT_EQ(0, read_listing(&self->now));
		}
	}
	ASSERT_EQ(0, delete_tracked(self->helper_fd, self->tr, why, sizeof(why))) {
		TH_LOG("%s", why);
	}
	report_tally("dynamic_events", cases, &self->tally);
	ue_msg("%ld cases in %lld ms\n", cases, ue_now_ms() - t0);
	free(t);
}

/*
 * Writes
 */

struct wdyn {
	unsigned int offset;	/* in the record */
	bool rel;
	bool chr;		/* signed char: letters, else any bytes */
};

/* A fixed char array: recorded as written, with or without a NUL */
struct wfix {
	unsigned int offset;	/* in the record */
	unsigned int size;
};

struct wevent {
	const char *cmd;
	const char *name;
	unsigned int min;	/* fixed payload size */
	bool marker;		/* first field "u32 m" */
	int ndyn;
	struct wdyn dyn[3];
	int nfix;
	struct wfix fix[2];
};

static const struct wevent wevents[] = {
	{ PREFIX "w0 u32 m", PREFIX "w0", 4, true, 0, { }, 0, { } },
	{ PREFIX "w1 u32 m; __data_loc char[] s; __rel_loc unsigned char[] b; u8 c",
	  PREFIX "w1", 13, true, 2,
	  { { 12, false, true }, { 16, true, false } }, 0, { } },
	{ PREFIX "w2 u32 m; char[8] x; __rel_loc char[] r; __data_loc unsigned char[] d",
	  PREFIX "w2", 20, true, 2,
	  { { 20, true, true }, { 24, false, false } }, 1, { { 12, 8 } } },
	{ PREFIX "w3", PREFIX "w3", 0, false, 0, { }, 0, { } },
	{ PREFIX "w4 u32 m; struct foo s 16; __rel_loc char[] t; __rel_loc char[] u",
	  PREFIX "w4", 28, true, 2,
	  { { 28, true, true }, { 32, true, true } }, 0, { } },
	/* Fixed arrays only, the last one ending the record */
	{ PREFIX "w5 u32 m; unsigned char[5] h; char[3] t",
	  PREFIX "w5", 12, true, 0, { }, 2, { { 12, 5 }, { 17, 3 } } },
};

#define NR_WEVENTS ARRAY_SIZE(wevents)
#define WBUF (3 * UE_PAGE_SIZE)

/* Mostly put a NUL into each fixed array of @ev in @payload (or not) */
static void rand_fixed(const struct wevent *ev, __u8 *payload)
{
	const struct wfix *f;
	int i;

	for (i = 0; i < ev->nfix; i++) {
		f = &ev->fix[i];
		if (chance(85))
			payload[f->offset - UE_COMMON_SIZE + below(f->size)] = 0;
	}
}

/* Dynamic field data for one location word, pointing where @how says */
static __u32 rand_loc(const struct wdyn *d, __u8 *payload, size_t *len,
		      size_t cap)
{
	unsigned int how = below(100), size = below(chance(90) ? 24 : 600);
	unsigned int start = UE_COMMON_SIZE + *len, i;	/* in the record */
	unsigned int off;

	if (*len + size + 1 > cap)
		size = 0;
	for (i = 0; i < size; i++)
		payload[*len + i] = d->chr ? 'a' + below(26) : below(256);
	/* Strings end with their NUL, counted in the size */
	payload[*len + size] = chance(90) ? 0 : 'z';
	size++;
	*len += size;

	/* Mostly right, else off by a little or by a lot */
	if (how < 12)
		start += chance(50) ? 1 : -1;
	else if (how < 20)
		size += chance(50) ? 1 : -1;
	else if (how < 24)
		size = 0;
	else if (how < 28)
		start = below(UE_COMMON_SIZE);
	else if (how < 32)
		return rnd();
	else if (how < 34)
		start += 0x10000 - below(8);

	off = d->rel ? start - (d->offset + 4) : start;

	return DYN_LOC(off & 0xffff, size & 0xffff);
}

/*
 * May the kernel record this payload while enabled?  Each location inside
 * the payload, each dynamic array non-empty and ending with a NUL; fixed
 * arrays need none.
 */
static bool payload_valid(const struct wevent *ev, const __u8 *payload,
			  size_t len)
{
	size_t size = UE_COMMON_SIZE + len;
	int i;

	for (i = 0; i < ev->ndyn; i++) {
		const struct wdyn *d = &ev->dyn[i];
		__u32 loc, start, dlen;

		memcpy(&loc, payload + d->offset - UE_COMMON_SIZE, 4);
		start = loc & 0xffff;
		dlen = loc >> 16;
		if (d->rel)
			start += d->offset + 4;
		if (start < UE_COMMON_SIZE || start + dlen > size)
			return false;
		if (!dlen || payload[start + dlen - 1 - UE_COMMON_SIZE])
			return false;
	}

	return true;
}

struct wseg {
	__u8 *base;
	size_t len;
	size_t readable;	/* leading bytes the kernel can read */
	bool kernel;		/* refused before anything is read */
};

/* Records of the fuzz write events in the instance, cleared after */
static int take_records(char *line, size_t size)
{
	char *text = ue_read_file("instances/" INSTANCE "/trace");
	char *p, *end;
	int count = 0;

	if (!text)
		return -1;
	line[0] = '\0';
	for (p = text; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, '\n');
		if (*p == '#' || !memmem(p, end - p, ": " PREFIX "w", 7))
			continue;
		if (!count++)
			snprintf(line, size, "%.*s", (int)(end - p), p);
	}
	free(text);
	if (count && ue_clear_trace(INSTANCE))
		return -1;

	return count;
}

TEST_F_TIMEOUT(fuzz, write, 600)
{
	long cases = self->iters ?: ue_scaled(2000, 2), n;
	__u8 *area, *mem, *heap, *want;
	struct wseg seg[8];
	struct iovec io[8];
	struct allowed a;
	char line[4096 + 256], key[128];
	long long t0 = ue_now_ms();
	bool enabled = false, kernel, idx_unreadable, pay_unreadable, vectored;
	int nseg, i, ret, records, valid;
	size_t total, plen, pos;
	struct ue_status_reg reg;
	long recorded = 0;
	__u32 idx = ~0U, m;

	/* The events, each with its index 0..5 on self->fd */
	ASSERT_EQ(0, ue_instance_create(INSTANCE));
	for (i = 0; i < (int)NR_WEVENTS; i++) {
		ASSERT_EQ(0, ue_reg(self->fd, wevents[i].cmd, &reg));
		ASSERT_EQ(i, reg.write_index);
	}
	self->fd2 = ue_open_data();
	ASSERT_NE(-1, self->fd2);
	ASSERT_EQ(0, ue_reg(self->fd2, wevents[3].cmd, &reg));
	/* And on fd3 with enable bits only: strict slots, the same indexes */
	self->fd3 = ue_open_data();
	ASSERT_NE(-1, self->fd3);
	for (i = 0; i < (int)NR_WEVENTS; i++) {
		ASSERT_EQ(0, ue_reg_bit(self->fd3, wevents[i].cmd, &strict_bits,
					4, i, 0, &idx));
		self->nstrict = i + 1;
		ASSERT_EQ(i, idx);
	}

	/* Two readable pages, then an unmapped one; a shared file mapping */
	area = mmap(NULL, 3 * UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, area);
	/* Inaccessible rather than unmapped: nothing else may go there */
	ASSERT_EQ(0, mprotect(area + 2 * UE_PAGE_SIZE, UE_PAGE_SIZE, PROT_NONE));
	self->memfd = syscall(__NR_memfd_create, "ue_fz", 0);
	ASSERT_NE(-1, self->memfd);
	ASSERT_EQ(0, ftruncate(self->memfd, 2 * UE_PAGE_SIZE));
	mem = mmap(NULL, 2 * UE_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		   self->memfd, 0);
	ASSERT_NE(MAP_FAILED, mem);
	heap = malloc(WBUF);
	want = malloc(WBUF);
	ASSERT_NE(NULL, heap);
	ASSERT_NE(NULL, want);

	for (n = 0; n < cases; n++) {
		const struct wevent *ev;
		size_t cursor_a = 0, cursor_m = 0, cursor_h = 0;
		bool faults = chance(20), dropped = false, use_fd2 = chance(3);
		bool use_fd3 = !use_fd2 && chance(25), edge = false;
		int wfd = use_fd2 ? self->fd2 : use_fd3 ? self->fd3 : self->fd;
		/* Nothing attached: 5.18's answer, or mainline's */
		int idle = use_fd3 ? EBADF : 0;

		/* Enabled and disabled in turns */
		if (n % 250 == 0) {
			enabled = !enabled;
			for (i = 0; i < (int)NR_WEVENTS; i++)
				ASSERT_EQ(0, ue_enable(INSTANCE, wevents[i].name,
						       enabled));
		}

		/* Index and payload */
		idx = below(NR_WEVENTS);
		if (chance(8))
			idx = chance(50) ? NR_WEVENTS + below(4) : (__u32)rnd();
		ev = &wevents[idx < NR_WEVENTS ? idx : 0];
		memcpy(want, &idx, 4);
		plen = ev->min;
		for (pos = 0; pos < ev->min; pos++)
			want[4 + pos] = below(256);
		rand_fixed(ev, want + 4);
		for (i = 0; i < ev->ndyn; i++) {
			__u32 loc = rand_loc(&ev->dyn[i], want + 4, &plen,
					     WBUF - 8);

			memcpy(want + 4 + ev->dyn[i].offset - UE_COMMON_SIZE, &loc, 4);
		}
		switch (below(20)) {
		case 0:	/* shorter */
		case 1:
			plen = below(plen + 1);
			break;
		case 2:	/* trailing bytes */
			while (plen < WBUF - 8 && chance(95))
				want[4 + plen++] = below(256);
			break;
		case 3:	/* the largest payload, or more */
			pos = plen;
			plen = UE_PAYLOAD_MAX +
			       (chance(50) ? 0 : 1 + below(WBUF - UE_PAYLOAD_MAX - 8));
			if (plen < pos)
				plen = pos;
			memset(want + 4 + pos, 0, plen - pos);
			break;
		}
		total = 4 + plen;
		if (chance(2))
			total = below(4);

		/* Split it and put the pieces in places */
		nseg = 1 + (chance(60) ? below(8) : 0);
		pos = 0;
		for (i = 0; i < nseg; i++) {
			size_t len = i == nseg - 1 ? total - pos :
				     below(total - pos + 1);
			unsigned int where = below(100);

			seg[i].len = len;
			seg[i].readable = len;
			seg[i].kernel = false;
			if (faults && chance(35)) {
				unsigned int bad = below(4);

				if (bad == 0) {
					seg[i].base = NULL;
					seg[i].readable = 0;
				} else if (bad == 1) {
					/* Refused even when empty */
					seg[i].base = (__u8 *)KERNEL_ADDR;
					seg[i].readable = 0;
					seg[i].kernel = kernel_addr_refused();
				} else if (bad == 2) {
					seg[i].base = area + 2 * UE_PAGE_SIZE;
					seg[i].readable = 0;
				} else if (!edge) {
					/* Running into the unmapped page */
					size_t r = below((len < 64 ? len : 64) + 1);

					edge = true;
					seg[i].base = area + 2 * UE_PAGE_SIZE - r;
					memcpy(seg[i].base, want + pos, r);
					seg[i].readable = r;
				} else {
					seg[i].base = NULL;
					seg[i].readable = 0;
				}
			} else if (where < 30 && cursor_a + len + 16 <= 2 * UE_PAGE_SIZE - 64) {
				cursor_a += below(16);
				seg[i].base = area + cursor_a;
				cursor_a += len;
			} else if (where < 50 && cursor_m + len + 16 <= 2 * UE_PAGE_SIZE) {
				cursor_m += below(16);
				seg[i].base = mem + cursor_m;
				cursor_m += len;
				dropped = true;
			} else {
				seg[i].base = heap + cursor_h;
				cursor_h += len;
			}
			if (seg[i].readable == len && len)
				memcpy(seg[i].base, want + pos, len);
			io[i].iov_base = seg[i].base;
			io[i].iov_len = len;
			pos += len;
		}
		/* Pages of the file mapping must be faulted in again */
		if (dropped)
			madvise(mem, 2 * UE_PAGE_SIZE, MADV_DONTNEED);

		/* What may happen */
		memset(&a, 0, sizeof(a));
		kernel = false;
		idx_unreadable = false;
		pay_unreadable = false;
		for (i = 0, pos = 0; i < nseg; pos += seg[i].len, i++) {
			kernel |= seg[i].kernel;
			if (seg[i].readable == seg[i].len)
				continue;
			if (pos + seg[i].readable < 4)
				idx_unreadable = true;
			if (pos + seg[i].len > 4)
				pay_unreadable = true;
		}
		if (kernel) {
			allow(&a, EFAULT);
		} else if (total < 4) {
			allow(&a, EINVAL);
		} else if (idx_unreadable) {
			allow(&a, EFAULT);
		} else if ((__s32)idx < 0) {
			/* Negative as a signed index: EINVAL, as on mainline */
			allow(&a, EINVAL);
			if (pay_unreadable)
				allow(&a, EFAULT);
		} else if (idx >= NR_WEVENTS || (use_fd2 && idx != 0)) {
			allow(&a, ENOENT);
			if (pay_unreadable)
				allow(&a, EFAULT);
		} else {
			ev = &wevents[use_fd2 ? 3 : idx];
			if (plen < ev->min)
				allow(&a, EINVAL);
			if (plen > UE_PAYLOAD_MAX)
				allow(&a, E2BIG);
			if (a.n && pay_unreadable)
				allow(&a, EFAULT);
			if (!a.n && pay_unreadable) {
				allow(&a, EFAULT);
				if (!enabled)
					allow(&a, idle);
			} else if (!a.n && !enabled) {
				allow(&a, idle);
			} else if (!a.n) {
				valid = payload_valid(ev, want + 4, plen);
				allow(&a, valid ? 0 : EFAULT);
			}
		}

		vectored = nseg > 1 || chance(50);
		/* The VFS answers an empty writev() without the driver */
		if (vectored && !total && !kernel)
			allow(&a, 0);
		/* And refuses a kernel address, even for 0 bytes */
		if (kernel) {
			memset(&a, 0, sizeof(a));
			allow(&a, EFAULT);
		}
		if (vectored)
			ret = writev(wfd, io, nseg);
		else
			ret = write(wfd, io[0].iov_base, io[0].iov_len);
		if (ret >= 0 && (size_t)ret != total) {
			CASE_LOG(n, "write of %zu bytes returned %d", total, ret);
			ASSERT_EQ(total, ret);
		}
		ret = ret < 0 ? errno : 0;
		tally(&self->tally, ret);
		ASSERT_TRUE(allowed(&a, ret)) {
			CASE_LOG(n, "write to %s index %u (%s), %zu bytes: %s, allowed: %s",
				 use_fd2 ? "fd2" : use_fd3 ? "fd3" : "fd", idx,
				 enabled ? "enabled" : "disabled", total,
				 errname(ret), allowed_text(&a));
			TH_LOG("bytes: %s", esc(want, total < 96 ? total : 96));
			for (i = 0; i < nseg; i++)
				TH_LOG("  iovec %d: %p, %zu bytes, %zu readable", i,
				       seg[i].base, seg[i].len, seg[i].readable);
		}

		/* A record for a successful write while enabled, else none */
		records = take_records(line, sizeof(line));
		ASSERT_LE(0, records);
		ASSERT_EQ(!ret && enabled && total >= 4, records) {
			CASE_LOG(n, "write to index %u (%s) returned %s, %d records: \"%s\"",
				 idx, enabled ? "enabled" : "disabled", errname(ret),
				 records, esc(line, strlen(line)));
		}
		if (records) {
			recorded++;
			ev = &wevents[use_fd2 ? 3 : idx];
			if (ev->marker) {
				memcpy(&m, want + 4, 4);
				snprintf(key, sizeof(key), ": %s: m=%u", ev->name, m);
			} else {
				snprintf(key, sizeof(key), ": %s:", ev->name);
			}
			ASSERT_NE(NULL, strstr(line, key)) {
				CASE_LOG(n, "record \"%s\", expected \"%s\"",
					 esc(line, strlen(line)), key);
			}
		}
	}

	/* The bits go, and with them what they held */
	for (i = 0; i < (int)NR_WEVENTS; i++)
		ASSERT_EQ(0, ue_unreg_bit(self->fd3, &strict_bits, i));
	self->nstrict = 0;

	free(heap);
	free(want);
	munmap(area, 3 * UE_PAGE_SIZE);
	munmap(mem, 2 * UE_PAGE_SIZE);
	report_tally("write", cases, &self->tally);
	ue_msg("%ld cases in %lld ms, %ld recorded\n", cases,
	       ue_now_ms() - t0, recorded);
}

/*
 * Batches
 */

/* Records and iovecs of one batch; the most bytes it is given */
#define BATCH_RECS	512
#define BATCH_SEGS	16
#define BATCH_IMG	(USER_EVENT_BATCH_MAX + 8192)

/* Which bytes of a batch the kernel can read */
struct bmem {
	bool vectored;
	int nseg;
	size_t cut[BATCH_SEGS + 1];	/* iovec i is [cut[i], cut[i + 1]) */
	bool hole[BATCH_SEGS];		/* unreadable iovecs */
	size_t prefix;			/* write(): readable leading bytes */
};

static bool bmem_readable(const struct bmem *m, size_t pos, size_t len)
{
	int i;

	if (!len)
		return true;
	if (!m->vectored)
		return pos + len <= m->prefix;
	/* An empty iovec has nothing to read, wherever it points */
	for (i = 0; i < m->nseg; i++) {
		if (m->hole[i] && m->cut[i] < m->cut[i + 1] &&
		    pos < m->cut[i + 1] && pos + len > m->cut[i])
			return false;
	}

	return true;
}

/* What a model of the rules makes of a batch */
struct boutcome {
	long ret;		/* the bytes consumed, or -errno */
	int alt;		/* another errno allowed for the first record */
	int nemitted;
	size_t emitted[BATCH_RECS];	/* header offsets of records emitted */
};

/*
 * The model: each record is checked as a write of it alone would be, in
 * order, and emitted if its event is attached (@on); the first one refused
 * ends the batch.  The rules leave two things open, which the caller
 * allows either way: whether a record whose event has nothing attached
 * has its payload read at all (@read_skipped: then a payload that cannot
 * be read ends the batch), and, for a first record with two faults, which
 * errno it gets (a record cut short by the end of the write may have a
 * bad index too, a bad index may come with an unreadable payload).
 */
static void batch_model(const __u8 *img, size_t total, const struct bmem *m,
			const bool *on, bool read_skipped, struct boutcome *o)
{
	struct user_batch_record h;
	const struct wevent *ev;
	size_t pos = sizeof(__u32);
	int err = 0, alt = 0, e;
	bool pay_ok;

	o->nemitted = 0;
	o->alt = 0;
	if (total > USER_EVENT_BATCH_MAX) {
		o->ret = -E2BIG;
		return;
	}
	while (pos < total) {
		if (total - pos < sizeof(h)) {
			err = EINVAL;
			break;
		}
		if (!bmem_readable(m, pos, sizeof(h))) {
			err = EFAULT;
			break;
		}
		memcpy(&h, img + pos, sizeof(h));
		ev = h.write_index < NR_WEVENTS ? &wevents[h.write_index] : NULL;
		if ((__s32)h.write_index < 0)
			e = EINVAL;
		else if (!ev)
			e = ENOENT;
		else if (h.size < ev->min)
			e = EINVAL;
		else if (h.size > UE_PAYLOAD_MAX)
			e = E2BIG;
		else
			e = 0;
		if (h.size > total - pos - sizeof(h)) {
			/* Cut short by the end of the write */
			err = EINVAL;
			alt = e;
			break;
		}
		pay_ok = bmem_readable(m, pos + sizeof(h), h.size);
		if (e) {
			err = e;
			alt = pay_ok ? 0 : EFAULT;
			break;
		}
		if (on[h.write_index]) {
			if (!pay_ok ||
			    !payload_valid(ev, img + pos + sizeof(h), h.size)) {
				err = EFAULT;
				break;
			}
			if (o->nemitted < BATCH_RECS)
				o->emitted[o->nemitted++] = pos;
		} else if (!pay_ok && read_skipped) {
			err = EFAULT;
			break;
		}
		pos += sizeof(h) + h.size;
	}
	if (err && pos == sizeof(__u32)) {
		o->ret = -err;
		o->alt = alt;
	} else {
		o->ret = pos;
	}
}

/* Does the result @ret (bytes or -errno) fit outcome @o? */
static bool batch_fits(const struct boutcome *o, long ret)
{
	return ret == o->ret || (o->ret < 0 && o->alt && ret == -o->alt);
}

/*
 * The records of the write events in the instance, oldest first, cleared
 * after: the event of each in @evs, its field m (if it has one) in @ms;
 * their number, or -1
 */
static int take_batch_records(int *evs, __u32 *ms, int max)
{
	char *text = ue_read_file("instances/" INSTANCE "/trace");
	const char *key = ": " PREFIX "w";
	char *p, *end, *hit;
	int count = 0, e;

	if (!text)
		return -1;
	for (p = text; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, '\n');
		if (*p == '#')
			continue;
		hit = memmem(p, end - p, key, strlen(key));
		if (!hit)
			continue;
		hit += strlen(key);
		e = *hit - '0';
		if (count < max) {
			evs[count] = e;
			ms[count] = 0;
			if (e >= 0 && e < (int)NR_WEVENTS && wevents[e].marker &&
			    !strncmp(hit + 1, ": m=", 4))
				ms[count] = strtoul(hit + 5, NULL, 10);
			else if (hit[1] != ':')
				evs[count] = -1;
		}
		count++;
	}
	free(text);
	if (count && ue_clear_trace(INSTANCE))
		return -1;

	return count;
}

/* A payload for @ev whose field m (if any) is @seq; its size */
static size_t batch_payload(const struct wevent *ev, __u8 *p, size_t cap,
			    __u32 seq)
{
	size_t len = ev->min, i;
	__u32 loc;
	int k;

	for (i = 0; i < ev->min; i++)
		p[i] = below(256);
	rand_fixed(ev, p);
	for (k = 0; k < ev->ndyn; k++) {
		loc = rand_loc(&ev->dyn[k], p, &len, cap);
		memcpy(p + ev->dyn[k].offset - UE_COMMON_SIZE, &loc, 4);
	}
	if (ev->marker)
		memcpy(p, &seq, 4);

	return len;
}

/* Append a record header and @size bytes of @payload to @img at *@len */
static void batch_append(__u8 *img, size_t *len, __u32 idx, __u32 size,
			 const __u8 *payload)
{
	struct user_batch_record h = { .write_index = idx, .size = size };

	memcpy(img + *len, &h, sizeof(h));
	memcpy(img + *len + sizeof(h), payload, size);
	*len += sizeof(h) + size;
}

TEST_F_TIMEOUT(fuzz, batch, 600)
{
	long cases = self->iters ?: ue_scaled(1500, 2), n;
	size_t room = (BATCH_IMG + UE_PAGE_SIZE - 1) / UE_PAGE_SIZE * UE_PAGE_SIZE;
	__u8 *img, *heap, *area, *mem, *pay, *base;
	struct boutcome *out[2];
	struct ue_status_reg reg;
	long long t0 = ue_now_ms();
	int *evs, i, k, nrec, records, nseg;
	size_t len, target, pos;
	__u32 *ms, idx, size, seq = 0, m, marker = USER_EVENT_BATCH;
	bool on[NR_WEVENTS], vectored;
	struct iovec io[BATCH_SEGS];
	const struct wevent *ev;
	long recorded = 0, ret, whole = 0, stopped = 0;
	struct bmem bm;
	cpu_set_t cpus;

	/* One CPU: the trace holds the records in the order written */
	CPU_ZERO(&cpus);
	CPU_SET(sched_getcpu(), &cpus);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpus), &cpus));

	/*
	 * Slots 0-2 of status page registrations, 3-5 of enable bit ones
	 * only: in a batch, records of either are skipped while nothing is
	 * attached
	 */
	ASSERT_EQ(0, ue_instance_create(INSTANCE));
	for (i = 0; i < (int)NR_WEVENTS; i++) {
		if (i < 3) {
			ASSERT_EQ(0, ue_reg(self->fd, wevents[i].cmd, &reg));
			idx = reg.write_index;
		} else {
			ASSERT_EQ(0, ue_reg_bit(self->fd, wevents[i].cmd,
						&strict_bits, 4, i, 0, &idx));
			self->nstrict = i + 1;
		}
		ASSERT_EQ(i, idx);
		on[i] = chance(50);
		ASSERT_EQ(0, ue_enable(INSTANCE, wevents[i].name, on[i]));
	}

	/*
	 * The image of the batch, copies of it on the heap and in a shared
	 * file mapping, readable memory followed by as much inaccessible
	 */
	img = malloc(BATCH_IMG);
	heap = malloc(BATCH_IMG);
	pay = malloc(8192);
	out[0] = malloc(sizeof(*out[0]));
	out[1] = malloc(sizeof(*out[1]));
	evs = calloc(BATCH_RECS, sizeof(*evs));
	ms = calloc(BATCH_RECS, sizeof(*ms));
	ASSERT_TRUE(img && heap && pay && out[0] && out[1] && evs && ms);
	area = mmap(NULL, 2 * room, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(area != MAP_FAILED);
	ASSERT_EQ(0, mprotect(area + room, room, PROT_NONE));
	self->memfd = syscall(__NR_memfd_create, "ue_fz_batch", 0);
	ASSERT_NE(-1, self->memfd);
	ASSERT_EQ(0, ftruncate(self->memfd, room));
	mem = mmap(NULL, room, PROT_READ | PROT_WRITE, MAP_SHARED,
		   self->memfd, 0);
	ASSERT_TRUE(mem != MAP_FAILED);

	for (n = 0; n < cases; n++) {
		bool dropped = false;

		/* Attach and detach events now and then */
		if (chance(10)) {
			k = below(NR_WEVENTS);
			on[k] = !on[k];
			ASSERT_EQ(0, ue_enable(INSTANCE, wevents[k].name, on[k]));
		}

		/* Records up to a size: mostly small, some at the limit */
		if (chance(8))
			target = USER_EVENT_BATCH_MAX - 32 + below(65);
		else if (chance(20))
			target = below(8192);
		else
			target = below(700);
		len = sizeof(__u32);
		memcpy(img, &marker, sizeof(marker));
		for (nrec = 0; len < target && nrec < BATCH_RECS; nrec++) {
			idx = below(NR_WEVENTS);
			ev = &wevents[idx];
			/* Mostly valid records, so that batches get long */
			k = chance(85) ? 4 : 1;
			do {
				size = batch_payload(ev, pay, 4096, ++seq);
			} while (--k && !payload_valid(ev, pay, size));
			switch (below(80)) {
			case 0:
				idx = NR_WEVENTS + below(4);
				break;
			case 1:
				idx = rnd();
				break;
			case 2:
				idx = USER_EVENT_BATCH - below(2) * 0x7fffffff;
				break;
			case 3:
			case 4:
				size = below(size + 1);
				break;
			case 5:
			case 6:
			case 7:
				pos = size;
				size += below(target > 8192 ? 2000 : 48);
				for (; pos < size; pos++)
					pay[pos] = below(256);
				break;
			case 8:
				pos = size;
				size = UE_PAYLOAD_MAX + (chance(50) ? 0 : 1 + below(64));
				if (size < pos)
					size = pos;
				memset(pay + pos, 0, size - pos);
				break;
			}
			if (len + sizeof(struct user_batch_record) + size >
			    BATCH_IMG - 64)
				break;
			batch_append(img, &len, idx, size, pay);
		}
		/* Near the limit: exactly at the size aimed at, mostly */
		while (target > 8192 && len + 8 <= target && chance(95)) {
			size = target - len - 8;
			if (size > UE_PAYLOAD_MAX)
				size = UE_PAYLOAD_MAX;
			memset(pay, 'f', size);
			batch_append(img, &len, 3, size, pay);
		}
		/* Ended by a header, or a payload, cut short */
		if (chance(15)) {
			idx = below(NR_WEVENTS);
			size = chance(50) ? 4 + below(64) : below(8192);
			memcpy(pay, &idx, 4);
			memcpy(pay + 4, &size, 4);
			pos = chance(40) ? 1 + below(7) :
			      8 + (size ? below(size) : 0);
			if (len + pos > BATCH_IMG)
				pos = 1;
			for (i = 8; i < (int)pos; i++)
				pay[i] = below(256);
			memcpy(img + len, pay, pos);
			len += pos;
		}

		/* How it is written, and which bytes cannot be read */
		memset(&bm, 0, sizeof(bm));
		vectored = chance(60);
		bm.vectored = vectored;
		bm.prefix = len;
		memcpy(heap, img, len);
		if (vectored) {
			nseg = 1 + (chance(70) ? below(BATCH_SEGS) : 0);
			bm.nseg = nseg;
			for (i = 1; i < nseg; i++)
				bm.cut[i] = below(len + 1);
			bm.cut[nseg] = len;
			/* Sorted, a handful of them */
			for (i = 1; i < nseg; i++) {
				for (k = i + 1; k < nseg; k++) {
					if (bm.cut[k] < bm.cut[i]) {
						pos = bm.cut[i];
						bm.cut[i] = bm.cut[k];
						bm.cut[k] = pos;
					}
				}
			}
			if (chance(12)) {
				k = below(nseg);
				/* Never the marker */
				bm.hole[k] = bm.cut[k] >= 4;
			}
			for (i = 0; i < nseg; i++) {
				base = heap;
				if (chance(30)) {
					base = mem;
					dropped = true;
				}
				io[i].iov_base = bm.hole[i] ? area + room :
						 base + bm.cut[i];
				io[i].iov_len = bm.cut[i + 1] - bm.cut[i];
			}
			if (dropped) {
				memcpy(mem, img, len);
				madvise(mem, room, MADV_DONTNEED);
			}
			ret = writev(self->fd, io, nseg);
		} else {
			k = below(100);
			base = heap;
			if (k < 15) {
				/* Running into the inaccessible memory */
				bm.prefix = 4 + below(len - 4 + 1);
				base = area + room - bm.prefix;
				memcpy(base, img, bm.prefix);
			} else if (k < 40) {
				base = mem;
				memcpy(mem, img, len);
				madvise(mem, room, MADV_DONTNEED);
			}
			ret = write(self->fd, base, len);
		}
		if (ret == -1)
			ret = -errno;
		tally(&self->tally, ret < 0 ? -ret : 0);

		/* What the rules allow, and which records then */
		batch_model(img, len, &bm, on, false, out[0]);
		batch_model(img, len, &bm, on, true, out[1]);
		k = batch_fits(out[0], ret) ? 0 : 1;
		ASSERT_TRUE(batch_fits(out[k], ret)) {
			CASE_LOG(n, "%s of %zu bytes: %ld, expected %ld or %ld (or -%d, -%d)",
				 vectored ? "writev" : "write", len, ret,
				 out[0]->ret, out[1]->ret, out[0]->alt,
				 out[1]->alt);
			for (i = 0; i < (int)NR_WEVENTS; i++)
				TH_LOG("  %s %s", wevents[i].name,
				       on[i] ? "attached" : "idle");
			for (i = 0; vectored && i < bm.nseg; i++)
				TH_LOG("  iovec %d: %zu bytes%s", i,
				       bm.cut[i + 1] - bm.cut[i],
				       bm.hole[i] ? ", unreadable" : "");
			if (!vectored)
				TH_LOG("  %zu bytes readable", bm.prefix);
			TH_LOG("  bytes: %s", esc(img, len < 160 ? len : 160));
		}

		records = take_batch_records(evs, ms, BATCH_RECS);
		ASSERT_EQ(out[k]->nemitted, records) {
			CASE_LOG(n, "a batch of %zu bytes returned %ld: %d records, expected %d",
				 len, ret, records, out[k]->nemitted);
		}
		for (i = 0; i < records; i++) {
			pos = out[k]->emitted[i];
			memcpy(&idx, img + pos, sizeof(idx));
			memcpy(&m, img + pos + 8, sizeof(m));
			if (!wevents[idx].marker)
				m = 0;
			ASSERT_TRUE(evs[i] == (int)idx && ms[i] == m) {
				CASE_LOG(n, "record %d is %s m=%u, expected %s m=%u",
					 i, evs[i] >= 0 ? wevents[evs[i]].name : "?",
					 ms[i], wevents[idx].name, m);
			}
		}
		recorded += records;
		if (ret == (long)len)
			whole++;
		else if (ret > 0)
			stopped++;
	}

	for (i = 3; i < (int)NR_WEVENTS; i++)
		ASSERT_EQ(0, ue_unreg_bit(self->fd, &strict_bits, i));
	self->nstrict = 0;

	free(img);
	free(heap);
	free(pay);
	free(out[0]);
	free(out[1]);
	free(evs);
	free(ms);
	munmap(area, 2 * room);
	munmap(mem, room);
	report_tally("batch", cases, &self->tally);
	ue_msg("batch: %ld written whole, %ld stopped at a record but the first\n",
	       whole, stopped);
	ue_msg("%ld cases in %lld ms, %ld records\n", cases, ue_now_ms() - t0,
	       recorded);
}

TEST_HARNESS_MAIN
