// SPDX-License-Identifier: GPL-2.0-only
/*
 * user_events: trace events defined and written by user-space programs.
 *
 * A program registers an event on an open user_events_data file with the
 * DIAG_IOCSREG ioctl.  The event becomes a regular trace event in the
 * "user_events" system and the file gets a write index for it: writing the
 * index followed by the payload to the same file emits the event to every
 * attached consumer.
 *
 * The consumers are ftrace (enable, filter, trigger, hist), perf and eBPF.
 *
 * The program learns whether anything is attached from the event's byte in
 * the status page, which every program maps read-only from
 * user_events_status.
 *
 * The kernel can also keep a bit in a program's own memory set while the
 * event is traced (an "enabler").  Enablers belong to the address space:
 * forks that copy it copy the enablers, and they go away with it.
 *
 * The size of the struct user_reg that a program registers with chooses
 * between the two: 24 bytes (the first ABI) for the status byte, 28 bytes or
 * more (the ABI of Linux 6.4 and later) for an enable bit.  Both kinds of
 * program share events, write indexes and the write path.
 *
 * An event lives until it is explicitly deleted.
 *
 * Events can also be created and deleted through dynamic_events with the
 * "u:" prefix.
 *
 * An event first created by an enable bit registration without
 * USER_EVENT_REG_PERSIST is deleted once nothing uses it.
 *
 * An event belongs to the user who created it: others delete it only with
 * CAP_PERFMON, as everyone must for one that dynamic_events created or named
 * or that USER_EVENT_REG_PERSIST made persistent.
 *
 * Without CAP_PERFMON, the events a user created and the enable bits of its
 * processes count against limits of that user (ucounts, set per user
 * namespace in /proc/sys/user/).
 *
 * Deleting an event never clears a trace buffer: an event that a buffer
 * recorded is kept, out of sight, with its type number and format, until no
 * buffer can hold its records any more (the tracing core's
 * trace_event_keep()).
 *
 * Locking: everything that creates, deletes or references events runs under
 * event_mutex; deleting waits there for a grace period after the last tracer
 * detached.
 *
 * The enablers of an address space are protected by a lock of its own, and
 * those of an event by a lock of the event's, taken inside it and inside
 * event_mutex.  Only the address space's own lock is held across a wait for
 * its mmap_lock, and none across a fault of its pages: a change of an
 * event's state only tries the mmap_lock and takes present pages, and leaves
 * the rest to a worker of the address space.
 *
 * user_event_gc_lock, innermost, guards the list of automatic events to
 * delete.
 *
 * The write path takes no lock: the per-file table of write indexes is
 * published with RCU, the file's references keep its events alive, and the
 * attached consumers are the tracepoint's probes, called with preemption
 * disabled like any tracepoint.
 */

#include <linux/bitops.h>
#include <linux/capability.h>
#include <linux/compat.h>
#include <linux/cred.h>
#include <linux/ctype.h>
#include <linux/hashtable.h>
#include <linux/highmem.h>
#include <linux/init.h>
#include <linux/ioctl.h>
#include <linux/jhash.h>
#include <linux/jump_label.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/pagemap.h>
#include <linux/perf_event.h>
#include <linux/refcount.h>
#include <linux/rhashtable.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysctl.h>
#include <linux/trace_events.h>
#include <linux/tracefs.h>
#include <linux/tracepoint.h>
#include <linux/types.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <linux/user_events.h>
#include <linux/user_namespace.h>
#include <linux/workqueue.h>
#include <asm/unaligned.h>

#include "trace.h"
#include "trace_dynevent.h"
#include "trace_output.h"

/*
 * One status byte per event, in one page: 4095 events with 4 KiB pages,
 * 65535 with 64 KiB pages (byte 0 is never handed out)
 */
#define USER_EVENTS_MAX_STATUS	((int)PAGE_SIZE)
/* Default of the kernel.user_events_max sysctl */
#define USER_EVENTS_MAX_DEFAULT	32768
/*
 * Defaults of the limits of one user, user.max_user_events and
 * user.max_user_event_bits: half the status bytes of a 4 KiB page, so
 * that no user takes all of them or all events, and far more enable bits
 * than a program has events times processes.
 */
#define USER_EVENTS_USER_MAX_DEFAULT	2048
#define USER_EVENT_BITS_USER_MAX_DEFAULT	SZ_1M
/*
 * Deleted events kept with their format for their records: the
 * kernel.user_events_kept_max sysctl, default and maximum
 */
#define USER_EVENTS_KEPT_MAX_DEFAULT	1024
#define USER_EVENTS_KEPT_MAX_LIMIT	2048
#define USER_EVENT_NAME_MAX	64
/* Longest command, including its terminating NUL */
#define USER_EVENT_CMD_MAX	4096
#define USER_EVENT_FIELDS_MAX	256
#define USER_EVENT_ARRAY_MAX	1024
/* Longest array size literal: room for 1024, 0x400 and 0x0400 */
#define USER_EVENT_ARRAY_LITERAL_MAX	6
/*
 * Largest record (common fields and payload) that always fits in one ring
 * buffer event and one perf raw sample: a 4K ring buffer page less its
 * header, the event header with its length word, and a time extend.  The
 * same on every architecture, whatever its page size.
 */
#define USER_EVENT_RECORD_MAX	(SZ_4K - 40)
#define USER_EVENT_PAYLOAD_MAX	(USER_EVENT_RECORD_MAX - sizeof(struct trace_entry))
/*
 * A __data_loc or __rel_loc field holds a u32 location word, DYN_LOC() of
 * the UAPI: the data's size in the upper 16 bits, its offset in the lower.
 */
#define USER_EVENT_LOC_OFFSET(loc)	((loc) & 0xffff)
#define USER_EVENT_LOC_SIZE(loc)	((loc) >> 16)
/* Tries at a user page that must be faulted in */
#define USER_EVENT_FAULT_IN_MAX	3
/*
 * Writes of up to this many bytes, write index included, are copied in
 * with one user access, to the stack: most events are small, and the
 * probes then copy from the kernel.
 */
#define USER_EVENT_SMALL_WRITE	128
/*
 * A batch is copied in this many bytes at a time, to the stack: one user
 * access for many small records
 */
#define USER_EVENT_BATCH_CHUNK	512
/* Write indexes of a file's first table; a full one is doubled */
#define USER_EVENT_REFS_MIN	8
/* Size of the hash table of events by name, in bits */
#define USER_EVENT_NAMES_BITS	9
/* Size of the hash table of address spaces by mm, in bits */
#define USER_EVENT_MMS_BITS	8
/* Enable bits one address space may register at most */
#define USER_EVENT_MM_ENABLERS_MAX	65536
/*
 * Enable bits that a change of an event's state writes itself, under
 * event_mutex; user_event_enablers_work() writes the others, this many
 * between two looks at whether anyone waits for the event's enablers.
 */
#define USER_EVENT_SYNC_ENABLERS	16
/* Items of a long pass between two of its quiescent states */
#define USER_EVENT_PASS_QS	256
/*
 * Workers that the memory of one user's address spaces may hold, waiting
 * for a fault or an mmap_lock: pages that a user never serves hold up its
 * own address spaces and no more than this many workers.
 */
#define USER_EVENT_USER_WORKERS	4
#define USER_EVENT_GATES_BITS	6
/* Delay of user_event_gc() for an event only the tracing core holds */
#define USER_EVENT_GC_RETRY_MS	10

/* struct user_field.flags */
#define UF_SIGNED	BIT(0)	/* signed integer */
#define UF_CHAR		BIT(1)	/* elements are (signed) char: printed as text */
#define UF_ARRAY	BIT(2)	/* fixed-size array, len elements */
#define UF_STRUCT	BIT(3)	/* opaque struct of size bytes */
#define UF_DATA_LOC	BIT(4)	/* __data_loc: offset from record start */
#define UF_REL_LOC	BIT(5)	/* __rel_loc: offset from end of the field */
/*
 * A dynamic char array: the tracing core reads it as a NUL-terminated
 * string of the length its location word gives (filters, histogram keys,
 * eprobe fetches), so every write must end it with a NUL.  Fixed-size
 * char arrays are recorded as written: the core's readers stop at their
 * size.
 */
#define UF_STRING	BIT(6)
#define UF_DYN		(UF_DATA_LOC | UF_REL_LOC)

/**
 * struct user_field - one field of a user event
 * @type: type as shown in the format file ("u32", "char[20]", ...)
 * @name: field name
 * @offset: offset in the record, common fields included
 * @size: size in bytes in the record
 * @len: element count of a fixed array, 0 otherwise
 * @flags: UF_* description used for printing and validation
 */
struct user_field {
	char *type;
	char *name;
	u32 offset;
	u32 size;
	u32 len;
	u32 flags;
};

/**
 * struct user_event - a registered user event
 * @call: the trace event as ftrace and perf know it
 * @class: class of @call, private to this event
 * @tracepoint: the consumers attached to the event are its probes
 * @devent: entry in the dynamic_events list
 * @node: entry in the name hash table
 * @gc_link: entry in user_event_gc_list, under user_event_gc_lock
 * @kept: once deleted, how the tracing core keeps it for its records, see
 *	user_events_keeper
 * @bare: deleted and kept without its fields, see user_kept_strip()
 * @detach_gp: RCU state when the last tracer was detached: a write that
 *	was in a probe then may still be recording
 * @refcnt: one for existing, one per file slot, one per enabler, one per
 *	attached tracer
 * @enablers: the enable bits to maintain, under @enablers_lock
 * @enablers_lock: protects @enablers and @enablers_gen, and is held while
 *	their bits are written; taken inside the lock of an address space's
 *	enablers
 * @enablers_gen: counts the changes of the event's state; an enabler whose
 *	gen differs has not been written since the last one
 * @enablers_work: writes the bits that a change of state left to it, see
 *	user_event_update_enablers()
 * @name: event name: "NAME", or "NAME.ID" for a multi-format event
 * @fields: fields in record order
 * @nr_fields: number of @fields
 * @nr_checked: number of @fields every write is checked against
 * @min_size: payload bytes needed to cover every field
 * @status_index: the event's byte in the status page, 0 if it has none
 * @multi_format: in USER_EVENTS_MULTI_SYSTEM, one of the formats of a name
 * @auto_delete: deleted once nothing references it
 * @owner: effective uid of the task whose registration created it (or
 *	brought it back from being kept)
 * @admin_delete: deleting it through DIAG_IOCSDEL needs CAP_PERFMON:
 *	USER_EVENT_REG_PERSIST made it persistent, or dynamic_events
 *	created or named it
 * @ucounts: the count of events it is charged to: @owner's, or that of
 *	the user whose registration made it stay longer (see
 *	user_event_stays_longer()); NULL if that user was exempt, or once
 *	deleted
 */
struct user_event {
	struct trace_event_call call;
	struct trace_event_class class;
	struct tracepoint tracepoint;
	struct dyn_event devent;
	struct hlist_node node;
	struct list_head gc_link;
	struct trace_kept_event kept;
	bool bare;
	unsigned long detach_gp;
	refcount_t refcnt;
	struct list_head enablers;
	struct mutex enablers_lock;	/* protects enablers, enablers_gen */
	unsigned int enablers_gen;
	struct work_struct enablers_work;
	char *name;
	struct user_field *fields;
	int nr_fields;
	int nr_checked;
	u32 min_size;
	int status_index;
	bool multi_format;
	bool auto_delete;
	kuid_t owner;
	bool admin_delete;
	struct ucounts *ucounts;
};

/**
 * struct user_event_slot - one write index of a file
 * @user: the event, referenced by the slot
 * @lenient: a status page registration handed the index out: a write
 *	while nothing is attached succeeds and records nothing, as on 5.18,
 *	where otherwise it fails with -EBADF, as on mainline
 */
struct user_event_slot {
	struct user_event *user;
	bool lenient;
};

/**
 * struct user_event_refs - write indexes of one open user_events_data file
 * @rcu: frees a table that was replaced by a larger one
 * @count: slots in use, published with release semantics
 * @capacity: slots allocated
 * @slots: slot N is write index N
 */
struct user_event_refs {
	struct rcu_head rcu;
	int count;
	int capacity;
	struct user_event_slot slots[];
};

/**
 * struct user_event_file_info - an open user_events_data file
 * @reg_lock: serializes registrations, so that a write index is handed
 *	out only once its caller has been told about it; held across faults
 *	on the caller's memory, so taken killable
 * @refs: the write indexes, read locklessly by the write path
 */
struct user_event_file_info {
	struct mutex reg_lock;	/* registrations on this file */
	struct user_event_refs __rcu *refs;
};

/**
 * struct user_event_write - outcome of one write across all consumers
 * @faulted: a consumer could not copy the payload without faulting
 * @invalid: the payload's dynamic locations or strings are malformed
 * @recorded: at least one consumer recorded the event
 */
struct user_event_write {
	bool faulted;
	bool invalid;
	bool recorded;
};

/**
 * struct user_event_gate - the workers that one user's enable bits hold
 * @node: entry in user_event_gates, hashed by @uid
 * @uid: the user who registered the enable bits, or forked their copies
 * @users: enablers that count against it, workers in @busy, address
 *	spaces in @waiting
 * @busy: workers that may be waiting for the memory of one of them
 * @waiting: the address spaces whose worker waits for one of the others
 *	to finish, to write the bit of such an enabler: a worker that is
 *	done hands its place in @busy to the first of them
 *
 * Protected by user_event_gates_lock.
 */
struct user_event_gate {
	struct hlist_node node;
	kuid_t uid;
	int users;
	int busy;
	struct list_head waiting;
};

/**
 * struct user_event_mm - the enablers of one address space
 * @node: entry in user_event_mms, hashed by @mm
 * @mm: the address space, mmgrab()ed
 * @refcnt: one while the address space lives, one while @work is queued
 *	or waits at a gate
 * @lock: the enablers of the address space: @enablers, @table,
 *	@nr_enablers, @forks.  Held across waits for this address space's
 *	mmap_lock only, never across a fault, so that it can hold up its
 *	own tasks alone.
 * @enablers: its enablers
 * @table: its enablers by address and bit
 * @nr_enablers: number of @enablers, but for the unregistered ones
 * @pending_lock: protects @pending, innermost
 * @pending: the enablers whose bit @work must write: their page was not
 *	present, or the mmap_lock was not free
 * @work: writes the bits of @pending, faulting their pages in
 * @gate_link: entry in the address spaces waiting at the gate of the
 *	user of the enabler @work is at, under user_event_gates_lock
 * @granted: the gate whose place a worker that was done handed to @work,
 *	under user_event_gates_lock
 * @forks: forks of the address space under way, see
 *	__user_events_fork_begin()
 * @rcu: frees it after lockless lookups
 */
struct user_event_mm {
	struct hlist_node node;
	struct mm_struct *mm;
	refcount_t refcnt;
	struct mutex lock;		/* protects enablers, table, forks */
	struct list_head enablers;
	struct rhashtable table;
	int nr_enablers;
	spinlock_t pending_lock;	/* protects pending */
	struct list_head pending;
	struct work_struct work;
	struct list_head gate_link;
	struct user_event_gate *granted;
	int forks;
	struct rcu_head rcu;
};

/**
 * struct user_event_enabler - an enable bit that the kernel maintains
 * @mm_link: entry in the enablers of @umm, under its lock
 * @event_link: entry in the enablers of @user, under its enablers_lock
 * @pending_link: entry in the pending list of @umm, under its pending_lock
 * @node: entry in the table of @umm, by @key
 * @key: @addr and @bit, see user_enabler_key()
 * @user: the event, referenced until the enabler is removed
 * @umm: the address space of the bit
 * @addr: user address of the value that holds the bit
 * @size: size of that value: 4 or 8
 * @bit: the bit, counted from the value's least significant bit
 * @dead: detached from @user: no change of its state writes the bit any
 *	more, and @user may not be touched but to drop the reference; set
 *	under the locks of both @umm and @user.  Until it is removed from
 *	@umm too, an unregistration is clearing the bit.
 * @unregistered: dead, unregistered (its bit cleared if it could be), its
 *	event reference dropped, and kept in @umm for the forks under way,
 *	see user_event_mm_reap()
 * @gen: the enablers_gen of @user when the bit was last written for a
 *	change of its state, under its enablers_lock
 * @gate: the workers of the user who registered the bit, or forked the
 *	address space it was copied to
 * @ucounts: the count of enable bits of the user who registered or copied
 *	it that it is charged to, until it is unregistered; NULL if not
 *	charged (CAP_PERFMON)
 * @refcnt: one for the lists, one while pending, one while a registration
 *	or the worker writes the bit
 */
struct user_event_enabler {
	struct list_head mm_link;
	struct list_head event_link;
	struct list_head pending_link;
	struct rhash_head node;
	u64 key;
	struct user_event *user;
	struct user_event_mm *umm;
	unsigned long addr;
	u8 size;
	u8 bit;
	bool dead;
	bool unregistered;
	unsigned int gen;
	struct user_event_gate *gate;
	struct ucounts *ucounts;
	refcount_t refcnt;
};

/**
 * struct user_event_payload - the payload of one write, without its index
 * @kbuf: the payload, if the write was small enough to be copied in whole
 * @iter: else the payload in user space, never advanced: each probe
 *	copies from its own copy of it
 * @size: its size in bytes
 */
struct user_event_payload {
	const void *kbuf;
	struct iov_iter *iter;
	size_t size;
};

typedef void (*user_event_probe_t)(void *data, struct user_event *user,
				   const struct user_event_payload *payload,
				   struct user_event_write *result);

/* Events by the name before any ".ID"; protected by event_mutex */
static DEFINE_HASHTABLE(user_event_names, USER_EVENT_NAMES_BITS);
/* Events by status index; protected by event_mutex */
static struct user_event *user_event_by_index[USER_EVENTS_MAX_STATUS];
static u8 *user_event_status_page;
/* The status bytes below it are all taken; protected by event_mutex */
static int user_event_status_hint = 1;
/* Number of events, and its limit, the kernel.user_events_max sysctl */
static int user_event_count;
static int user_events_max = USER_EVENTS_MAX_DEFAULT;
/* Makes the NAME.ID of multi-format events unique */
static u64 user_event_multi_id;

/*
 * Automatic events that lost their last reference but their own, waiting
 * for user_event_gc() to delete them, see user_event_put().
 */
static LIST_HEAD(user_event_gc_list);
static DEFINE_SPINLOCK(user_event_gc_lock);
static void user_event_gc(struct work_struct *work);
static DECLARE_DELAYED_WORK(user_event_gc_work, user_event_gc);

/* The kernel.user_events_kept_max sysctl */
static int user_events_kept_max = USER_EVENTS_KEPT_MAX_DEFAULT;

DEFINE_STATIC_KEY_FALSE(user_events_mm_used);
/*
 * The user_event_mm of each address space with enablers, by mm: looked
 * up under RCU, changed under user_event_mms_lock
 */
static DEFINE_HASHTABLE(user_event_mms, USER_EVENT_MMS_BITS);
static DEFINE_SPINLOCK(user_event_mms_lock);
/*
 * The workers of the address spaces: a fault may keep one waiting as
 * long as its address space's owner wants, so they are not in a queue
 * that the rest of the kernel shares; struct user_event_gate bounds
 * those of each user.
 */
static struct workqueue_struct *user_event_mm_wq;
static DEFINE_HASHTABLE(user_event_gates, USER_EVENT_GATES_BITS);
static DEFINE_SPINLOCK(user_event_gates_lock);

static int user_event_dyn_create(const char *raw_command);
static int user_event_dyn_show(struct seq_file *m, struct dyn_event *ev);
static bool user_event_dyn_is_busy(struct dyn_event *ev);
static int user_event_dyn_free(struct dyn_event *ev);
static bool user_event_dyn_match(const char *system, const char *event,
				 int argc, const char **argv,
				 struct dyn_event *ev);

static struct dyn_event_operations user_event_dops = {
	.create = user_event_dyn_create,
	.show = user_event_dyn_show,
	.is_busy = user_event_dyn_is_busy,
	.free = user_event_dyn_free,
	.match = user_event_dyn_match,
};

/*
 * Parsing.  A command, "name[:flags] [field[;field...]]" from an ioctl or
 * from dynamic_events, becomes a struct user_event_def: the fields with
 * their offsets in the record and what a write must be checked against.
 */

/*
 * Parse errors, reported in tracefs' error_log with the position of the
 * token they are about.
 */
enum user_event_err {
	USER_EVENT_ERR_BAD_NAME,
	USER_EVENT_ERR_NAME_TOO_LONG,
	USER_EVENT_ERR_BAD_TYPE,
	USER_EVENT_ERR_NO_FIXED_SIZE,
	USER_EVENT_ERR_NO_FIELD_NAME,
	USER_EVENT_ERR_BAD_FIELD_NAME,
	USER_EVENT_ERR_DUP_FIELD,
	USER_EVENT_ERR_BAD_ARRAY,
	USER_EVENT_ERR_ARRAY_LITERAL,
	USER_EVENT_ERR_STRING_STRUCT,
	USER_EVENT_ERR_NO_STRUCT_SIZE,
	USER_EVENT_ERR_BAD_STRUCT_SIZE,
	USER_EVENT_ERR_EXTRA_TOKEN,
	USER_EVENT_ERR_EMPTY_FIELD,
	USER_EVENT_ERR_TOO_MANY_FIELDS,
	USER_EVENT_ERR_TOO_LARGE,
	USER_EVENT_ERR_FIELDS_DIFFER,
	USER_EVENT_ERR_NAME_TAKEN,
	USER_EVENT_ERR_NO_STATUS_BYTE,
	USER_EVENT_ERR_TOO_MANY_EVENTS,
	USER_EVENT_ERR_USER_LIMIT,
	USER_EVENT_ERR_COUNT
};

static const char *user_event_err_text[USER_EVENT_ERR_COUNT] = {
	[USER_EVENT_ERR_BAD_NAME] = "Invalid event name",
	[USER_EVENT_ERR_NAME_TOO_LONG] = "Event name is too long",
	[USER_EVENT_ERR_BAD_TYPE] = "Unknown field type",
	[USER_EVENT_ERR_NO_FIXED_SIZE] = "Type has no fixed size, use s64/u64 or s32/u32",
	[USER_EVENT_ERR_NO_FIELD_NAME] = "Missing field name",
	[USER_EVENT_ERR_BAD_FIELD_NAME] = "Invalid field name",
	[USER_EVENT_ERR_DUP_FIELD] = "Duplicate field name",
	[USER_EVENT_ERR_BAD_ARRAY] = "Invalid array size",
	[USER_EVENT_ERR_ARRAY_LITERAL] = "Array size literal is longer than 6 characters",
	[USER_EVENT_ERR_STRING_STRUCT] = "Struct type would be read as a string",
	[USER_EVENT_ERR_NO_STRUCT_SIZE] = "Struct field needs a size",
	[USER_EVENT_ERR_BAD_STRUCT_SIZE] = "Invalid struct size",
	[USER_EVENT_ERR_EXTRA_TOKEN] = "Unexpected token",
	[USER_EVENT_ERR_EMPTY_FIELD] = "Empty field",
	[USER_EVENT_ERR_TOO_MANY_FIELDS] = "Too many fields",
	[USER_EVENT_ERR_TOO_LARGE] = "Fixed fields exceed the maximum payload",
	[USER_EVENT_ERR_FIELDS_DIFFER] = "Event exists with different fields",
	[USER_EVENT_ERR_NAME_TAKEN] = "Name is used by another event of the system",
	[USER_EVENT_ERR_NO_STATUS_BYTE] = "No free status byte for a new event",
	[USER_EVENT_ERR_TOO_MANY_EVENTS] = "Too many events, see kernel.user_events_max",
	[USER_EVENT_ERR_USER_LIMIT] = "User has too many events, see max_user_events",
};

/**
 * struct user_event_def - a parsed command
 * @name: event name
 * @fields: fields with offsets assigned
 * @nr_fields: number of @fields
 * @min_size: payload bytes covered by the fields
 */
struct user_event_def {
	char *name;
	struct user_field *fields;
	int nr_fields;
	u32 min_size;
};

/**
 * struct user_event_parser - state of parsing one command
 * @cmd: the whole command as the user gave it, for error_log
 * @base: offset of the parsed text within @cmd
 * @text: writable copy of the parsed text
 * @match_only: the text describes an event to compare with, as after
 *	"!u:": errors are not logged, and a struct field may omit its size,
 *	which then matches any size
 */
struct user_event_parser {
	const char *cmd;
	int base;
	char *text;
	bool match_only;
};

static void user_event_log(const char *cmd, int err, int pos)
{
	tracing_log_err(NULL, USER_EVENTS_SYSTEM, cmd, user_event_err_text, err,
			pos);
}

/* Log @err at the token @at of the parsed text and return @ret */
static int user_event_parse_error(struct user_event_parser *p, int err,
				  const char *at, int ret)
{
	if (!p->match_only)
		user_event_log(p->cmd, err, p->base + (at - p->text));
	return ret;
}

/* The kernel's isspace() also takes Latin-1's no-break space, 0xa0 */
static bool user_event_is_blank(char c)
{
	return isascii(c) && isspace(c);
}

/*
 * A C identifier made of ASCII letters, digits and '_'.  The kernel's
 * isalpha() and isalnum() also take the Latin-1 letters.
 */
static bool user_event_is_ident(const char *s)
{
	if (!*s || isdigit(*s))
		return false;
	for (; *s; s++) {
		if (!isascii(*s) || (!isalnum(*s) && *s != '_'))
			return false;
	}
	return true;
}

/* Split off the next blank-separated token of *sp, NULL at the end */
static char *user_event_next_token(char **sp)
{
	char *s = *sp, *tok;

	while (user_event_is_blank(*s))
		s++;
	if (!*s) {
		*sp = s;
		return NULL;
	}
	tok = s;
	while (*s && !user_event_is_blank(*s))
		s++;
	if (*s)
		*s++ = '\0';
	*sp = s;
	return tok;
}

static void user_field_free_strings(struct user_field *field)
{
	kfree(field->type);
	kfree(field->name);
}

static void user_event_def_free(struct user_event_def *def)
{
	int i;

	for (i = 0; i < def->nr_fields; i++)
		user_field_free_strings(&def->fields[i]);
	kfree(def->fields);
	kfree(def->name);
	memset(def, 0, sizeof(*def));
}

struct user_scalar_type {
	const char *name;
	u8 size;
	bool is_signed;
};

static const struct user_scalar_type user_scalar_types[] = {
	{ "s8", 1, true },		{ "u8", 1, false },
	{ "s16", 2, true },		{ "u16", 2, false },
	{ "s32", 4, true },		{ "u32", 4, false },
	{ "s64", 8, true },		{ "u64", 8, false },
	{ "char", 1, true },		{ "unsigned char", 1, false },
	{ "short", 2, true },		{ "unsigned short", 2, false },
	{ "int", 4, true },		{ "unsigned int", 4, false },
};

static const struct user_scalar_type *user_scalar_type(const char *name)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(user_scalar_types); i++) {
		if (!strcmp(user_scalar_types[i].name, name))
			return &user_scalar_types[i];
	}
	return NULL;
}

/*
 * Parse a positive size written in decimal or 0x hex, of an array or a
 * struct: at most USER_EVENT_ARRAY_MAX.
 */
static int user_event_parse_size(const char *s, u32 *size)
{
	unsigned int val;
	int ret;

	/* kstrto*() would also take a sign or a second "0x" */
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isxdigit(s[2]))
		ret = kstrtouint(s + 2, 16, &val);
	else if (isdigit(s[0]))
		ret = kstrtouint(s, 10, &val);
	else
		ret = -EINVAL;
	if (ret || !val || val > USER_EVENT_ARRAY_MAX)
		return -EINVAL;
	*size = val;
	return 0;
}

/**
 * user_event_parse_type - parse the type of a field
 * @p: parser state
 * @sp: the rest of the field's text, after @tok
 * @tok: the first token of the field
 * @field: gets its type text, size, len and flags
 *
 * The type is every token before the field's name: "u32", "unsigned int",
 * "char[20]", "__data_loc char[]", "struct foo"...  The type text is
 * normalized ("char[0x14]" becomes "char[20]") as the core classifies
 * fields by it.
 *
 * Return: the token after the type (the field's name, or NULL if there is
 * none), or an ERR_PTR() (logged unless @p->match_only).
 */
static char *user_event_parse_type(struct user_event_parser *p, char **sp,
				   char *tok, struct user_field *field)
{
	const struct user_scalar_type *scalar;
	u32 loc = 0, len = 0;
	bool is_unsigned = false;
	char *bracket, *start = tok;

	if (!strcmp(tok, "__data_loc") || !strcmp(tok, "__rel_loc")) {
		loc = tok[2] == 'd' ? UF_DATA_LOC : UF_REL_LOC;
		tok = user_event_next_token(sp);
		if (!tok)
			return ERR_PTR(user_event_parse_error(p,
					USER_EVENT_ERR_BAD_TYPE, start, -EINVAL));
	}

	if (!strcmp(tok, "struct")) {
		char *tag = user_event_next_token(sp);

		if (loc || !tag || !user_event_is_ident(tag))
			return ERR_PTR(user_event_parse_error(p,
					USER_EVENT_ERR_BAD_TYPE,
					tag ?: start, -EINVAL));
		field->type = kasprintf(GFP_KERNEL_ACCOUNT, "struct %s", tag);
		if (!field->type)
			return ERR_PTR(-ENOMEM);
		/* "struct __data_loc_char" would be a string to the core */
		if (filter_assign_type(field->type) != FILTER_OTHER)
			return ERR_PTR(user_event_parse_error(p,
					USER_EVENT_ERR_STRING_STRUCT, tag, -EINVAL));
		field->flags = UF_STRUCT;
		return user_event_next_token(sp);
	}

	if (!strcmp(tok, "unsigned")) {
		is_unsigned = true;
		tok = user_event_next_token(sp);
		if (!tok)
			return ERR_PTR(user_event_parse_error(p,
					USER_EVENT_ERR_BAD_TYPE, start, -EINVAL));
	}

	bracket = strchr(tok, '[');
	if (bracket)
		*bracket = '\0';

	if (!strcmp(tok, "long"))
		return ERR_PTR(user_event_parse_error(p,
				USER_EVENT_ERR_NO_FIXED_SIZE, start, -EINVAL));

	if (is_unsigned) {
		char *name = kasprintf(GFP_KERNEL_ACCOUNT, "unsigned %s", tok);

		if (!name)
			return ERR_PTR(-ENOMEM);
		/* only char, short and int may be unsigned */
		scalar = strcmp(tok, "char") && strcmp(tok, "short") &&
			 strcmp(tok, "int") ? NULL : user_scalar_type(name);
		kfree(name);
	} else {
		scalar = user_scalar_type(tok);
	}
	if (!scalar)
		return ERR_PTR(user_event_parse_error(p, USER_EVENT_ERR_BAD_TYPE,
						      start, -EINVAL));

	if (!bracket) {
		if (loc)
			return ERR_PTR(user_event_parse_error(p,
					USER_EVENT_ERR_BAD_TYPE, start, -EINVAL));
		field->type = kstrdup(scalar->name, GFP_KERNEL_ACCOUNT);
		field->size = scalar->size;
		field->flags = scalar->is_signed ? UF_SIGNED : 0;
		return field->type ? user_event_next_token(sp) : ERR_PTR(-ENOMEM);
	}

	/* Arrays are made of char or unsigned char only */
	if (strcmp(tok, "char"))
		return ERR_PTR(user_event_parse_error(p, USER_EVENT_ERR_BAD_TYPE,
						      start, -EINVAL));

	bracket++;
	if (bracket[0] && bracket[strlen(bracket) - 1] == ']')
		bracket[strlen(bracket) - 1] = '\0';
	else
		bracket = NULL;

	if (loc) {
		/* dynamic arrays have no size of their own */
		if (!bracket || *bracket)
			return ERR_PTR(user_event_parse_error(p,
					USER_EVENT_ERR_BAD_ARRAY, start, -EINVAL));
		field->type = kasprintf(GFP_KERNEL_ACCOUNT, "%s %s[]",
					loc == UF_DATA_LOC ? "__data_loc" :
					"__rel_loc", scalar->name);
		field->size = sizeof(u32);
	} else {
		/* 5.18 refused long literals such as 0x0000000000001 too */
		if (bracket && strlen(bracket) > USER_EVENT_ARRAY_LITERAL_MAX)
			return ERR_PTR(user_event_parse_error(p,
					USER_EVENT_ERR_ARRAY_LITERAL, start,
					-EINVAL));
		if (!bracket ||
		    user_event_parse_size(bracket, &len))
			return ERR_PTR(user_event_parse_error(p,
					USER_EVENT_ERR_BAD_ARRAY, start, -EINVAL));
		field->type = kasprintf(GFP_KERNEL_ACCOUNT, "%s[%u]",
					scalar->name, len);
		field->size = len;
		field->len = len;
	}
	if (!field->type)
		return ERR_PTR(-ENOMEM);
	field->flags = loc | (loc ? 0 : UF_ARRAY) |
		       (scalar->is_signed ? UF_CHAR : 0);
	/*
	 * A dynamic array of char or unsigned char is a string to the core,
	 * which classifies fields by their type text: see
	 * filter_assign_type().
	 */
	if (loc && filter_assign_type(field->type) != FILTER_OTHER)
		field->flags |= UF_STRING;
	return user_event_next_token(sp);
}

static bool user_event_reserved_name(const char *name)
{
	static const char * const common[] = {
		"common_type", "common_flags", "common_preempt_count",
		"common_pid",
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(common); i++) {
		if (!strcmp(name, common[i]))
			return true;
	}
	return false;
}

/**
 * user_event_parse_field - parse one field and add it to a definition
 * @p: parser state
 * @s: the field's NUL-terminated text, "type name" or "struct T name SIZE"
 * @def: gets the field, at the offset that follows its previous fields
 *
 * Return: 0, or -EINVAL (logged unless @p->match_only), or -ENOMEM.
 */
static int user_event_parse_field(struct user_event_parser *p, char *s,
				  struct user_event_def *def)
{
	struct user_field *field = &def->fields[def->nr_fields];
	char *tok, *name;
	int i;

	tok = user_event_next_token(&s);
	if (!tok)
		return user_event_parse_error(p, USER_EVENT_ERR_EMPTY_FIELD, s,
					      -EINVAL);

	/* Counted from here on, so that its strings are freed with @def */
	def->nr_fields++;

	name = user_event_parse_type(p, &s, tok, field);
	if (IS_ERR(name))
		return PTR_ERR(name);
	if (!name)
		return user_event_parse_error(p, USER_EVENT_ERR_NO_FIELD_NAME, s,
					      -EINVAL);
	if (!user_event_is_ident(name))
		return user_event_parse_error(p, USER_EVENT_ERR_BAD_FIELD_NAME,
					      name, -EINVAL);
	for (i = 0; i < def->nr_fields - 1; i++) {
		if (!strcmp(def->fields[i].name, name))
			break;
	}
	if (i < def->nr_fields - 1 || user_event_reserved_name(name))
		return user_event_parse_error(p, USER_EVENT_ERR_DUP_FIELD, name,
					      -EINVAL);
	field->name = kstrdup(name, GFP_KERNEL_ACCOUNT);
	if (!field->name)
		return -ENOMEM;

	tok = user_event_next_token(&s);
	if (field->flags & UF_STRUCT) {
		if (!tok && !p->match_only)
			return user_event_parse_error(p,
					USER_EVENT_ERR_NO_STRUCT_SIZE, s, -EINVAL);
		if (tok && user_event_parse_size(tok, &field->size))
			return user_event_parse_error(p,
					USER_EVENT_ERR_BAD_STRUCT_SIZE, tok, -EINVAL);
		tok = user_event_next_token(&s);
	}
	if (tok)
		return user_event_parse_error(p, USER_EVENT_ERR_EXTRA_TOKEN, tok,
					      -EINVAL);

	field->offset = sizeof(struct trace_entry) + def->min_size;
	def->min_size += field->size;
	return 0;
}

/**
 * user_event_parse - parse an event command into a definition
 * @p: parser state; @p->text holds "name[:flags] [field[;field...]]"
 * @def: filled with the definition, to be freed with user_event_def_free()
 *
 * Return: 0, or -EINVAL/-E2BIG/-ENOMEM with @def empty.
 */
static int user_event_parse(struct user_event_parser *p,
			    struct user_event_def *def)
{
	char *s = p->text, *name, *end, *field;
	int ret, nr;

	memset(def, 0, sizeof(*def));

	while (user_event_is_blank(*s))
		s++;
	name = s;
	while (*s && *s != ':' && !user_event_is_blank(*s))
		s++;
	end = s;
	/* Flags are for forward compatibility: all of them are ignored */
	if (*s == ':') {
		while (*s && !user_event_is_blank(*s))
			s++;
	}
	if (*s)
		s++;
	*end = '\0';

	if (strlen(name) > USER_EVENT_NAME_MAX)
		return user_event_parse_error(p, USER_EVENT_ERR_NAME_TOO_LONG,
					      name, -EINVAL);
	/* The system directory has files of these names */
	if (!user_event_is_ident(name) || !strcmp(name, "enable") ||
	    !strcmp(name, "filter"))
		return user_event_parse_error(p, USER_EVENT_ERR_BAD_NAME, name,
					      -EINVAL);

	/* A trailing ';' and blanks do not start another field */
	end = s + strlen(s);
	while (end > s && user_event_is_blank(end[-1]))
		*--end = '\0';
	if (end > s && end[-1] == ';')
		*--end = '\0';
	while (*s && user_event_is_blank(*s))
		s++;

	for (field = s, nr = *s ? 1 : 0; *field; field++)
		nr += *field == ';';
	if (nr > USER_EVENT_FIELDS_MAX)
		return user_event_parse_error(p, USER_EVENT_ERR_TOO_MANY_FIELDS,
					      s, -E2BIG);

	def->name = kstrdup(name, GFP_KERNEL_ACCOUNT);
	def->fields = kcalloc(nr ?: 1, sizeof(*def->fields),
			      GFP_KERNEL_ACCOUNT);
	if (!def->name || !def->fields) {
		ret = -ENOMEM;
		goto fail;
	}

	while (nr-- > 0) {
		field = strsep(&s, ";");
		ret = user_event_parse_field(p, field, def);
		if (ret)
			goto fail;
		if (def->min_size > USER_EVENT_PAYLOAD_MAX) {
			ret = user_event_parse_error(p, USER_EVENT_ERR_TOO_LARGE,
						     field, -E2BIG);
			goto fail;
		}
	}
	return 0;
fail:
	user_event_def_free(def);
	return ret;
}

/*
 * Parse the text at @base of the command @cmd the user gave, which is not
 * modified; see struct user_event_parser for @match_only.
 */
static int user_event_parse_text(const char *cmd, int base, bool match_only,
				 struct user_event_def *def)
{
	struct user_event_parser p = {
		.cmd = cmd, .base = base, .match_only = match_only,
	};
	int ret;

	p.text = kstrdup(cmd + base, GFP_KERNEL_ACCOUNT);
	if (!p.text)
		return -ENOMEM;
	ret = user_event_parse(&p, def);
	kfree(p.text);
	return ret;
}

/* Looking events up: by name, and for multi-format events by fields */

/* Does the field @a match @b?  A struct without size in @b matches any. */
static bool user_field_match(const struct user_field *a,
			     const struct user_field *b)
{
	if (strcmp(a->type, b->type) || strcmp(a->name, b->name))
		return false;
	if ((b->flags & UF_STRUCT) && !b->size)
		return true;
	return a->size == b->size;
}

/* Do @user's fields match @def's?  A sizeless struct in @def matches any. */
static bool user_event_fields_match(const struct user_event *user,
				    const struct user_event_def *def)
{
	int i;

	if (user->nr_fields != def->nr_fields)
		return false;
	for (i = 0; i < def->nr_fields; i++) {
		if (!user_field_match(&user->fields[i], &def->fields[i]))
			return false;
	}
	return true;
}

/*
 * Events of one name, plain or multi-format, share a hash bucket: the key
 * is the name before any ".ID".
 */
static u32 user_event_key(const char *name)
{
	return jhash(name, strcspn(name, "."), 0);
}

/**
 * user_event_find - look an event up by its full name
 * @name: "NAME" for an event of USER_EVENTS_SYSTEM, "NAME.ID" for one of
 *	USER_EVENTS_MULTI_SYSTEM
 *
 * Return: the event, or NULL.
 */
static struct user_event *user_event_find(const char *name)
{
	struct user_event *user;
	u32 key = user_event_key(name);

	lockdep_assert_held(&event_mutex);

	hash_for_each_possible(user_event_names, user, node, key) {
		if (!strcmp(user->name, name))
			return user;
	}
	return NULL;
}

/*
 * Does @user go by @name?  The event of a name and the multi-format
 * events of that name, "NAME.ID", all go by "NAME"; one multi-format
 * event also goes by its "NAME.ID".  DIAG_IOCSDEL of @name deletes the
 * events that go by it.
 */
static bool user_event_named(struct user_event *user, const char *name)
{
	size_t len = strlen(name);

	if (!strcmp(user->name, name))
		return true;
	return user->multi_format && !strncmp(user->name, name, len) &&
	       user->name[len] == '.';
}

/* The multi-format event of @def's name with @def's fields, or NULL */
static struct user_event *user_event_find_format(const struct user_event_def *def)
{
	struct user_event *user;

	lockdep_assert_held(&event_mutex);

	hash_for_each_possible(user_event_names, user, node,
			       user_event_key(def->name)) {
		if (user->multi_format && user_event_named(user, def->name) &&
		    user_event_fields_match(user, def))
			return user;
	}
	return NULL;
}

/* Is anything attached to @user?  Its enable bits are set while it is. */
static bool user_event_attached(struct user_event *user)
{
	return rcu_access_pointer(user->tracepoint.funcs);
}

/*
 * The status page.  Events registered with the status page layout or
 * created through dynamic_events have a byte in it, which programs read
 * from their read-only mapping of user_events_status to learn whether
 * anything is attached: everything about those bytes is here.
 */

/**
 * user_event_update_status - recompute an event's status byte
 * @user: the event
 *
 * The byte is made from the probes attached to the event's tracepoint:
 * ftrace's, perf's, or anything else's.  It is called after each change of
 * the probes, so the byte is up to date when the tracer's registration
 * returns.
 */
static void user_event_update_status(struct user_event *user)
{
	struct tracepoint_func *probe;
	u8 status = 0;

	if (!user->status_index)
		return;

	rcu_read_lock_sched();
	probe = rcu_dereference_sched(user->tracepoint.funcs);
	for (; probe && probe->func; probe++) {
		if (probe->func == user->class.probe)
			status |= EVENT_STATUS_FTRACE;
#ifdef CONFIG_PERF_EVENTS
		else if (probe->func == user->class.perf_probe)
			status |= EVENT_STATUS_PERF;
#endif
		else
			status |= EVENT_STATUS_OTHER;
	}
	rcu_read_unlock_sched();

	WRITE_ONCE(user_event_status_page[user->status_index], status);
}

/**
 * user_event_set_status_index - give an event a byte in the status page
 * @user: the event
 *
 * Events registered with the status page layout or created in
 * dynamic_events have one, the others only once a status page program
 * registers them.  Byte 0 is never handed out: programs take index 0 for
 * "no event".
 *
 * Return: 0, or -ENOMEM if all bytes are taken.
 */
static int user_event_set_status_index(struct user_event *user)
{
	int i;

	lockdep_assert_held(&event_mutex);

	if (user->status_index)
		return 0;
	/* From the hint: filling a page of 65535 bytes takes linear time */
	for (i = user_event_status_hint; i < USER_EVENTS_MAX_STATUS; i++) {
		if (!user_event_by_index[i]) {
			user_event_by_index[i] = user;
			user->status_index = i;
			user_event_status_hint = i + 1;
			user_event_update_status(user);
			return 0;
		}
	}
	user_event_status_hint = USER_EVENTS_MAX_STATUS;
	return -ENOMEM;
}

/* Give @user's status byte back, cleared for the next event that gets it */
static void user_event_clear_status_index(struct user_event *user)
{
	lockdep_assert_held(&event_mutex);

	if (!user->status_index)
		return;
	user_event_by_index[user->status_index] = NULL;
	user_event_status_hint = min(user_event_status_hint, user->status_index);
	WRITE_ONCE(user_event_status_page[user->status_index], 0);
	user->status_index = 0;
}

/* The status page can only be mapped whole, read-only, at offset 0 */
static int user_status_mmap(struct file *file, struct vm_area_struct *vma)
{
	unsigned long size = vma->vm_end - vma->vm_start;

	if (vma->vm_pgoff || size > PAGE_SIZE)
		return -EINVAL;
	if (vma->vm_flags & (VM_WRITE | VM_EXEC))
		return -EPERM;

	vma->vm_flags &= ~(VM_MAYWRITE | VM_MAYEXEC);
	return remap_pfn_range(vma, vma->vm_start,
			       virt_to_phys(user_event_status_page) >> PAGE_SHIFT,
			       size, vma->vm_page_prot);
}

/* read() of user_events_status: "INDEX:NAME # Used by ..." and counters */
static int user_status_show(struct seq_file *m, void *unused)
{
	struct user_event *user;
	int i, active = 0, busy = 0;
	u8 status;

	mutex_lock(&event_mutex);
	for (i = 1; i < USER_EVENTS_MAX_STATUS; i++) {
		user = user_event_by_index[i];
		if (!user)
			continue;

		active++;
		seq_printf(m, "%d:%s", i, user->name);
		status = READ_ONCE(user_event_status_page[i]);
		if (status) {
			busy++;
			seq_puts(m, " # Used by");
			if (status & EVENT_STATUS_FTRACE)
				seq_puts(m, " ftrace");
			if (status & EVENT_STATUS_PERF)
				seq_puts(m, " perf");
			if (status & EVENT_STATUS_OTHER)
				seq_puts(m, " other");
		}
		seq_putc(m, '\n');
	}
	mutex_unlock(&event_mutex);

	seq_printf(m, "\nActive: %d\nBusy: %d\nMax: %d\n", active, busy,
		   USER_EVENTS_MAX_STATUS);
	return 0;
}

static int user_status_open(struct inode *inode, struct file *file)
{
	int ret;

	ret = tracing_check_open_get_tr(NULL);
	if (ret)
		return ret;
	return single_open(file, user_status_show, NULL);
}

static const struct file_operations user_status_fops = {
	.open = user_status_open,
	.mmap = user_status_mmap,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

/*
 * Enable bits.  An enabler names a bit of a 4- or 8-byte value in the
 * memory of the address space that registered it.  The bit is written
 * from whatever task changes the event's state, so the memory is reached
 * through the enabler's mm, never through current's.  One address space
 * must not hold up others: a change of state writes the bits whose page is
 * present and whose mmap_lock is free at once, and queues the others for
 * the worker of their address space, which may wait for both.  A user's
 * address spaces hold at most USER_EVENT_USER_WORKERS workers at a time
 * (struct user_event_gate), and a change of state writes at most
 * USER_EVENT_SYNC_ENABLERS bits under event_mutex: a worker of the event
 * writes the others.
 */

/*
 * set_bit() and clear_bit() work on aligned unsigned longs.  Return the
 * address of the one that holds the bit of the @size-byte value at @addr,
 * and in @nr the bit's number in it: a 4-byte value may be either half of
 * an 8-byte long.
 */
static unsigned long user_bit_word(unsigned long addr, int size, int bit,
				   int *nr)
{
	unsigned long offset = addr & (sizeof(long) - 1);

#ifdef __BIG_ENDIAN
	*nr = bit + (sizeof(long) - offset - size) * BITS_PER_BYTE;
#else
	*nr = bit + offset * BITS_PER_BYTE;
#endif
	return addr - offset;
}

/*
 * The page at @uaddr of @mm, whose mmap_lock the caller holds, if present
 * (and writable, with FOLL_WRITE in @flags): it is never faulted in.
 */
static struct page *user_page_present(struct mm_struct *mm,
				      unsigned long uaddr, unsigned int flags)
{
	unsigned int gup_flags = flags | FOLL_NOFAULT;
	struct page *page;

	if (get_user_pages_remote(mm, uaddr, 1, gup_flags, &page, NULL, NULL) != 1)
		return NULL;
	return page;
}

/**
 * struct user_bit_batch - bits written or tested one after the other
 * @mm: the address space of the last bit, whose mmap_lock is read-held
 *	and a user of which is held; NULL for none
 * @wait: wait for locks; without, the caller may hold locks that others
 *	need, and they are only tried
 * @uaddr: the user address of @page, or of the page found absent
 * @page: the page of the last bit, held; locked if @writable
 * @writable: @page was found writable, and may be written
 * @dirty: @page was written
 * @absent: the page at @uaddr was not present
 *
 * The bits of an event or an address space are mostly in a few pages of
 * a few address spaces: a batch keeps the address space and the page
 * from one bit to the next, until user_bit_batch_end().  A batch either
 * writes bits or tests them.
 */
struct user_bit_batch {
	struct mm_struct *mm;
	bool wait;
	unsigned long uaddr;
	struct page *page;
	bool writable;
	bool dirty;
	bool absent;
};

/* Let go of the page of @b */
static void user_bit_batch_put_page(struct user_bit_batch *b)
{
	if (b->page) {
		if (b->dirty)
			set_page_dirty(b->page);
		if (b->writable)
			unlock_page(b->page);
		put_page(b->page);
	}
	b->page = NULL;
	b->dirty = false;
	b->absent = false;
}

/* Let go of the page and the address space of @b */
static void user_bit_batch_end(struct user_bit_batch *b)
{
	user_bit_batch_put_page(b);
	if (b->mm) {
		mmap_read_unlock(b->mm);
		/* Not mmput(): dropping the last user would call back into us */
		mmput_async(b->mm);
		b->mm = NULL;
	}
}

/**
 * user_bit_batch_at - the page of @uaddr in @mm, for a batch
 * @b: the batch
 * @mm: the address space
 * @uaddr: the user address in @mm
 * @write: for a write, else for a test
 *
 * Never faults.  Even a fault that looks as if it waited for nothing may:
 * that of a private mapping of a file reads the file (FUSE, NFS), whatever
 * FOLL_NOWAIT says.  So a page that is not present, or not writable (as
 * one shared copy-on-write after a fork), is not made so.  Without
 * @b->wait, nothing waits for the address space's owner either: neither
 * a locked page (the owner may hold its lock, for a write to a FUSE file)
 * nor a hugetlb page, which get_user_pages() faults in despite
 * FOLL_NOFAULT, is touched.
 *
 * Return: 0 with @b->page the page, writable and locked if @write and
 * possible; -ESRCH if @mm has no user left, -EAGAIN if a lock was held or
 * the page is huge (without @b->wait), -EFAULT if the page is absent,
 * -EINTR on a fatal signal.
 */
static int user_bit_batch_at(struct user_bit_batch *b, struct mm_struct *mm,
			     unsigned long uaddr, bool write)
{
	struct vm_area_struct *vma;
	struct page *page;

	if (b->mm != mm) {
		user_bit_batch_end(b);
		if (!mmget_not_zero(mm))
			return -ESRCH;
		if (b->wait ? mmap_read_lock_killable(mm) :
			      !mmap_read_trylock(mm)) {
			mmput_async(mm);
			return b->wait ? -EINTR : -EAGAIN;
		}
		b->mm = mm;
	}
	if (b->uaddr == (uaddr & PAGE_MASK) && (b->page || b->absent))
		return b->page ? 0 : -EFAULT;

	user_bit_batch_put_page(b);
	b->uaddr = uaddr & PAGE_MASK;
	if (!b->wait) {
		vma = vma_lookup(mm, uaddr);
		if (vma && is_vm_hugetlb_page(vma)) {
			b->uaddr = 0;
			return -EAGAIN;
		}
	}
	page = write ? user_page_present(mm, uaddr, FOLL_WRITE) : NULL;
	if (page) {
		/* A page locked for a read that its owner may never serve */
		if (b->wait ? folio_lock_killable(page_folio(page)) :
			      !trylock_page(page)) {
			put_page(page);
			b->uaddr = 0;
			return b->wait ? -EINTR : -EAGAIN;
		}
		b->writable = true;
	} else {
		/* To see if the bit has its value already */
		page = user_page_present(mm, uaddr, 0);
		b->writable = false;
		b->absent = !page;
		if (!page)
			return -EFAULT;
	}
	b->page = page;
	return 0;
}

/* Has bit @nr of the word at @uaddr, in the batch's page, the value @set? */
static bool user_bit_batch_page_is(struct user_bit_batch *b,
				   unsigned long uaddr, int nr, bool set)
{
	void *kaddr = kmap_local_page(b->page) + offset_in_page(uaddr);
	bool is = test_bit(nr, kaddr) == set;

	kunmap_local(kaddr);
	return is;
}

/**
 * user_bit_batch_write - set or clear one bit of a value in an address space
 * @b: the batch
 * @mm: the address space
 * @addr: user address of the value
 * @size: size of the value, 4 or 8, to which @addr is aligned
 * @bit: the bit of the value
 * @set: set the bit, else clear it
 *
 * Only the one bit changes, atomically, as the program may change the
 * others at any time.  A page that cannot be written (user_bit_batch_at())
 * is left alone if the bit has its value already.
 *
 * Return: 0, -EFAULT if the page needs a fault, or an error of
 * user_bit_batch_at().
 */
static int user_bit_batch_write(struct user_bit_batch *b, struct mm_struct *mm,
				unsigned long addr, int size, int bit, bool set)
{
	unsigned long uaddr;
	void *kaddr;
	int nr, ret;

	uaddr = user_bit_word(addr, size, bit, &nr);
	ret = user_bit_batch_at(b, mm, uaddr, true);
	if (ret)
		return ret;
	if (!b->writable)
		return user_bit_batch_page_is(b, uaddr, nr, set) ? 0 : -EFAULT;
	kaddr = kmap_local_page(b->page) + offset_in_page(uaddr);
	if (set)
		set_bit(nr, kaddr);
	else
		clear_bit(nr, kaddr);
	kunmap_local(kaddr);
	b->dirty = true;
	return 0;
}

/* Is the bit (see user_bit_batch_write()) there and of the value @set? */
static bool user_bit_batch_is(struct user_bit_batch *b, struct mm_struct *mm,
			      unsigned long addr, int size, int bit, bool set)
{
	unsigned long uaddr;
	int nr;

	uaddr = user_bit_word(addr, size, bit, &nr);
	return !user_bit_batch_at(b, mm, uaddr, false) &&
	       user_bit_batch_page_is(b, uaddr, nr, set);
}

/* user_bit_batch_write() of one bit; @wait as for struct user_bit_batch */
static int user_bit_write(struct mm_struct *mm, unsigned long addr, int size,
			  int bit, bool set, bool wait)
{
	struct user_bit_batch b = { .wait = wait };
	int ret;

	ret = user_bit_batch_write(&b, mm, addr, size, bit, set);
	user_bit_batch_end(&b);
	return ret;
}

/**
 * user_bit_fault_in - make the page of an enable bit present and writable
 * @mm: the address space, whose users the caller holds one of
 * @addr: user address of the value
 *
 * Waits as long as the fault takes, which is up to the address space's
 * owner (userfaultfd, FUSE): the caller holds no lock that anyone but
 * this address space needs.  Retriable and killable, so that a fault is
 * served by a userfaultfd handler like one of the program's own.
 *
 * Return: 0, -EFAULT if the page cannot be made writable, -EINTR on a
 * fatal signal.
 */
static int user_bit_fault_in(struct mm_struct *mm, unsigned long addr)
{
	unsigned int flags = FAULT_FLAG_WRITE | FAULT_FLAG_REMOTE;
	bool unlocked = false;
	int ret;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	ret = fixup_user_fault(mm, addr, flags, &unlocked);
	mmap_read_unlock(mm);
	return ret;
}

/*
 * The limits of each user: the events its registrations created and that
 * exist, and its processes' enable bits, counted in the user namespace of
 * the task that creates them and in each one above, like other per-user
 * objects.  Without an audit record of the capability check, which
 * every fork of a process with enable bits makes.
 */
static bool user_limit_exempt(void)
{
	return ns_capable_noaudit(&init_user_ns, CAP_PERFMON) ||
	       ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);
}

/*
 * Count one more @type for the current task's effective uid, unless
 * @exempt (user_limit_exempt()): the counts to uncharge, NULL if exempt,
 * ERR_PTR(-EDQUOT) past the limit, or ERR_PTR(-ENOMEM).
 *
 * inc_ucount() returns NULL past the limit and also when it cannot
 * allocate the uid's entry, which an euid without credentials of its own
 * (a set-user-ID program's) may need.  Only then, the entry is taken and
 * the count tried once more, so that NULL means the limit.
 */
static struct ucounts *user_limit_charge(enum ucount_type type, bool exempt)
{
	struct ucounts *ucounts, *entry;

	if (exempt)
		return NULL;
	ucounts = inc_ucount(current_user_ns(), current_euid(), type);
	if (ucounts)
		return ucounts;
	entry = alloc_ucounts(current_user_ns(), current_euid());
	if (!entry)
		return ERR_PTR(-ENOMEM);
	ucounts = inc_ucount(current_user_ns(), current_euid(), type);
	put_ucounts(entry);
	return ucounts ?: ERR_PTR(-EDQUOT);
}

/* Undo user_limit_charge(), if *@ucounts was charged, once */
static void user_limit_uncharge(struct ucounts **ucounts,
				enum ucount_type type)
{
	if (*ucounts)
		dec_ucount(*ucounts, type);
	*ucounts = NULL;
}

/* The gate of user @uid, created if need be, with one more user */
static struct user_event_gate *user_event_gate_get(kuid_t uid)
{
	struct user_event_gate *gate, *new = NULL;

	for (;;) {
		spin_lock(&user_event_gates_lock);
		hash_for_each_possible(user_event_gates, gate, node,
				       __kuid_val(uid)) {
			if (uid_eq(gate->uid, uid))
				goto found;
		}
		gate = new;
		if (gate) {
			hash_add(user_event_gates, &gate->node,
				 __kuid_val(uid));
			new = NULL;
			goto found;
		}
		spin_unlock(&user_event_gates_lock);

		new = kzalloc(sizeof(*new), GFP_KERNEL_ACCOUNT);
		if (!new)
			return NULL;
		new->uid = uid;
		INIT_LIST_HEAD(&new->waiting);
	}
found:
	gate->users++;
	spin_unlock(&user_event_gates_lock);
	kfree(new);
	return gate;
}

static void user_event_gate_put(struct user_event_gate *gate)
{
	spin_lock(&user_event_gates_lock);
	if (--gate->users) {
		gate = NULL;
	} else {
		WARN_ON_ONCE(gate->busy || !list_empty(&gate->waiting));
		hash_del(&gate->node);
	}
	spin_unlock(&user_event_gates_lock);
	kfree(gate);
}

static void user_enabler_put(struct user_event_enabler *e)
{
	if (!refcount_dec_and_test(&e->refcnt))
		return;
	user_event_gate_put(e->gate);
	kfree(e);
}

/*
 * The key of an enabler in its address space's table.  Its bit is below
 * 64 and its address in user space, aligned to 4 bytes.
 */
static u64 user_enabler_key(unsigned long addr, int bit)
{
	return (u64)addr << 6 | bit;
}

static const struct rhashtable_params user_enabler_params = {
	.key_len = sizeof(u64),
	.key_offset = offsetof(struct user_event_enabler, key),
	.head_offset = offsetof(struct user_event_enabler, node),
	.automatic_shrinking = true,
};

static void user_event_mm_put(struct user_event_mm *umm)
{
	if (!refcount_dec_and_test(&umm->refcnt))
		return;
	rhashtable_destroy(&umm->table);
	mmdrop(umm->mm);
	kfree_rcu(umm, rcu);
}

/**
 * user_event_quiescent - let others run, and RCU know, in a long pass
 *
 * Some passes go through tens of thousands of items, such as the enablers
 * of an address space at a fork or an exit, and take tens of
 * milliseconds.  Between two items they hold no RCU read lock, no
 * spinlock, and may sleep.  Where RCU readers cannot be preempted, RCU
 * learns of such a quiescent state only once it asks for one, a tenth of
 * a second into a grace period; on a nohz_full CPU, not even then.  And a
 * tracer attaching to any event may wait for a grace period
 * (tp_rcu_cond_sync() in tracepoint_add_func()).  So the pass reports one
 * itself, as a zero-length extended quiescent state: switching another
 * event does not take as long as the pass.
 *
 * Context: may sleep; no RCU read lock held (cond_resched() checks both).
 */
static void user_event_quiescent(void)
{
	cond_resched();
	if (!IS_ENABLED(CONFIG_TREE_RCU))
		return;
	local_irq_disable();
	rcu_momentary_eqs();
	local_irq_enable();
}

/*
 * Between two items of a long pass, which @n counts: user_event_quiescent()
 * every USER_EVENT_PASS_QS of them
 */
static void user_event_pass_next(unsigned int *n)
{
	*n += 1;
	if (*n % USER_EVENT_PASS_QS)
		cond_resched();
	else
		user_event_quiescent();
}

/**
 * user_event_gate_enter - take one of the workers of a user
 * @gate: the gate of the user
 * @umm: the address space whose worker is about to wait for its memory,
 *	to write the bit of an enabler of that user
 *
 * A place that @gate handed to @umm while its work was running is taken
 * here, so that none is handed twice.  One handed at another gate is left
 * to the run of the work it queued, which comes next.
 *
 * Return: true if the worker may wait; false if the user's enablers hold
 * USER_EVENT_USER_WORKERS workers already: @umm then waits at @gate,
 * which hands it the place of the first of them to finish, and queues
 * its work again.
 */
static bool user_event_gate_enter(struct user_event_gate *gate,
				  struct user_event_mm *umm)
{
	bool entered = false;

	spin_lock(&user_event_gates_lock);
	if (umm->granted == gate) {
		/* Counted in busy and users when it was handed over */
		umm->granted = NULL;
		entered = true;
	} else if (umm->granted) {
		/* The queued run takes it, then comes here again */
	} else if (gate->busy < USER_EVENT_USER_WORKERS) {
		gate->busy++;
		gate->users++;
		entered = true;
	} else if (list_empty(&umm->gate_link)) {
		refcount_inc(&umm->refcnt);
		gate->users++;
		list_add_tail(&umm->gate_link, &gate->waiting);
	}
	spin_unlock(&user_event_gates_lock);
	return entered;
}

/* A place at a gate that was handed to the work of @umm, or NULL */
static struct user_event_gate *
user_event_gate_granted(struct user_event_mm *umm)
{
	struct user_event_gate *gate;

	spin_lock(&user_event_gates_lock);
	gate = umm->granted;
	umm->granted = NULL;
	spin_unlock(&user_event_gates_lock);
	return gate;
}

/*
 * A worker is done waiting for the memory of @gate's user: its place goes
 * to the first address space waiting there, if there is one
 */
static void user_event_gate_exit(struct user_event_gate *gate)
{
	struct user_event_mm *next;

	spin_lock(&user_event_gates_lock);
	next = list_first_entry_or_null(&gate->waiting, struct user_event_mm,
					gate_link);
	if (next) {
		list_del_init(&next->gate_link);
		next->granted = gate;
	} else {
		gate->busy--;
	}
	spin_unlock(&user_event_gates_lock);
	user_event_gate_put(gate);
	/* Its reference goes with its work, unless that is queued already */
	if (next && !queue_work(user_event_mm_wq, &next->work))
		user_event_mm_put(next);
}

/* Queue @e for the worker of its address space */
static void user_enabler_queue(struct user_event_enabler *e)
{
	struct user_event_mm *umm = e->umm;

	spin_lock(&umm->pending_lock);
	if (list_empty(&e->pending_link)) {
		refcount_inc(&e->refcnt);
		list_add_tail(&e->pending_link, &umm->pending);
		if (queue_work(user_event_mm_wq, &umm->work))
			refcount_inc(&umm->refcnt);
	}
	spin_unlock(&umm->pending_lock);
}

/**
 * user_enabler_write - write an enable bit, waiting if need be
 * @e: the enabler, which the caller holds a reference to
 * @mm: its address space, whose users the caller holds one of
 * @wait: wait for the address space and fault its page in; without, only
 *	try once, waiting for nothing
 *
 * The bit is written under the lock of the address space's enablers, so
 * that it is not written after its enabler is removed, but its page is
 * faulted in without: a fault that waits for the address space's owner
 * must not keep its other tasks from registering, forking or exiting.
 * The event's state may change meanwhile, and its writer may write the
 * bit before this does: the bit is written again until it has the state
 * the event had when it was written.
 *
 * Return: 0, or the error of user_bit_write() or user_bit_fault_in();
 * without @wait, -EAGAIN if the bit may need writing again.
 */
static int user_enabler_write(struct user_event_enabler *e,
			      struct mm_struct *mm, bool wait)
{
	struct user_event_mm *umm = e->umm;
	bool set, again;
	int ret, tries;

	for (tries = 0; ; tries++) {
		if (!wait) {
			if (!mutex_trylock(&umm->lock))
				return -EAGAIN;
		} else {
			mutex_lock(&umm->lock);
		}
		if (e->dead) {
			mutex_unlock(&umm->lock);
			return 0;
		}
		set = user_event_attached(e->user);
		ret = user_bit_write(mm, e->addr, e->size, e->bit, set, wait);
		again = user_event_attached(e->user) != set;
		/* The writer of a change may have lost to this write */
		if (again && tries == USER_EVENT_FAULT_IN_MAX)
			user_enabler_queue(e);
		mutex_unlock(&umm->lock);
		if ((!ret && !again) || tries == USER_EVENT_FAULT_IN_MAX)
			return ret;
		if (!wait)
			return ret ?: -EAGAIN;
		if (ret == -EFAULT)
			ret = user_bit_fault_in(mm, e->addr);
		if (ret)
			return ret;
	}
}

/**
 * user_enabler_sync - bring an enable bit in line with its event's state
 * @e: the enabler, on its event's list, whose lock the caller holds
 * @b: a batch that does not wait (see struct user_bit_batch)
 *
 * Called where waiting for an address space would hold up everyone: the
 * mmap_lock is only tried and the page only taken if present, else the
 * worker of the address space writes the bit.
 */
static void user_enabler_sync(struct user_event_enabler *e,
			      struct user_bit_batch *b)
{
	int ret;

	lockdep_assert_held(&e->user->enablers_lock);

	e->gen = e->user->enablers_gen;
	if (e->dead)
		return;
	ret = user_bit_batch_write(b, e->umm->mm, e->addr, e->size, e->bit,
				   user_event_attached(e->user));
	if (ret && ret != -ESRCH)
		user_enabler_queue(e);
}

/**
 * user_event_update_enablers - the event's state changed: write its bits
 * @user: the event, whose state changed under event_mutex
 *
 * The first USER_EVENT_SYNC_ENABLERS bits are written at once, so that
 * a program with a few of them sees its bits follow the event by the time
 * the change returns; user_event_enablers_work() writes any others, so
 * that an event with many (copied by forks) holds up no other event's
 * change of state.
 */
static void user_event_update_enablers(struct user_event *user)
{
	struct user_bit_batch b = { .wait = false };
	struct user_event_enabler *e;
	int n = 0;

	mutex_lock(&user->enablers_lock);
	user->enablers_gen++;
	list_for_each_entry(e, &user->enablers, event_link) {
		if (n++ == USER_EVENT_SYNC_ENABLERS) {
			queue_work(system_unbound_wq, &user->enablers_work);
			break;
		}
		user_enabler_sync(e, &b);
	}
	user_bit_batch_end(&b);
	mutex_unlock(&user->enablers_lock);
}

/**
 * user_event_enablers_work - write the bits a change of state left
 * @work: the enablers_work of an event
 *
 * Writes each bit not written since the event's last change of state.
 * The event's lock is let go after every USER_EVENT_SYNC_ENABLERS bits
 * that needed a page of their own (or sixteen times as many others), so
 * that a change of the event's state, under event_mutex, waits for no
 * more than that; one that comes meanwhile queues this again.  If the
 * enabler it stopped at is gone when it comes back, it starts over,
 * skipping the bits it wrote.  An event is not deleted before this is
 * done, see user_event_delete().
 */
static void user_event_enablers_work(struct work_struct *work)
{
	struct user_event *user = container_of(work, struct user_event,
					       enablers_work);
	const int budget = 16 * USER_EVENT_SYNC_ENABLERS;
	struct user_bit_batch b = { .wait = false };
	struct user_event_enabler *e;
	struct mm_struct *mm;
	unsigned long page;
	int spent = 0;
	bool gone;

	mutex_lock(&user->enablers_lock);
again:
	list_for_each_entry(e, &user->enablers, event_link) {
		if (e->gen != user->enablers_gen) {
			mm = b.mm;
			page = b.uaddr;
			user_enabler_sync(e, &b);
			/* A new page costs as much as sixteen bits of one */
			spent += mm == b.mm && page == b.uaddr ? 1 : 16;
		} else {
			spent++;
		}
		if (spent < budget)
			continue;
		spent = 0;
		user_bit_batch_end(&b);
		/* Off the list only if it dies meanwhile */
		refcount_inc(&e->refcnt);
		mutex_unlock(&user->enablers_lock);
		user_event_quiescent();
		mutex_lock(&user->enablers_lock);
		gone = e->dead;
		user_enabler_put(e);
		if (gone)
			goto again;
	}
	user_bit_batch_end(&b);
	mutex_unlock(&user->enablers_lock);
}

/* The next enabler whose bit the worker of @umm must write, or NULL */
static struct user_event_enabler *
user_event_mm_pending(struct user_event_mm *umm)
{
	struct user_event_enabler *e;

	spin_lock(&umm->pending_lock);
	e = list_first_entry_or_null(&umm->pending, struct user_event_enabler,
				     pending_link);
	if (e)
		list_del_init(&e->pending_link);
	spin_unlock(&umm->pending_lock);
	return e;
}

/* Put @e, taken off the pending list with its reference, back in front */
static void user_enabler_unpend(struct user_event_enabler *e)
{
	struct user_event_mm *umm = e->umm;
	bool queued;

	spin_lock(&umm->pending_lock);
	queued = !list_empty(&e->pending_link);
	if (!queued)
		list_add(&e->pending_link, &umm->pending);
	spin_unlock(&umm->pending_lock);
	/* Queued again meanwhile, with a reference of its own */
	if (queued)
		user_enabler_put(e);
}

/**
 * user_event_mm_work - write the enable bits that could not be written
 * @work: the work of a user_event_mm
 *
 * Tries each bit once more without waiting.  Where that is not enough, it
 * waits for the mmap_lock and faults the page in, which may take as long
 * as the address space's owner wants (userfaultfd, FUSE), but only as one
 * of the USER_EVENT_USER_WORKERS workers of the user who registered the
 * bit: past them, the address space waits its turn at the user's gate.
 * This holds up the enable bits of that user alone.  A page that cannot
 * be made writable (unmapped, made read-only) keeps its value until the
 * event's state changes again.
 */
static void user_event_mm_work(struct work_struct *work)
{
	struct user_event_mm *umm = container_of(work, struct user_event_mm,
						 work);
	struct user_event_gate *held = user_event_gate_granted(umm);
	struct user_event_enabler *e;
	unsigned int passed = 0;

	while ((e = user_event_mm_pending(umm))) {
		if (!mmget_not_zero(umm->mm)) {
			user_enabler_put(e);
			continue;
		}
		if (user_enabler_write(e, umm->mm, false)) {
			if (held != e->gate) {
				if (held)
					user_event_gate_exit(held);
				held = user_event_gate_enter(e->gate, umm) ?
				       e->gate : NULL;
			}
			if (!held) {
				user_enabler_unpend(e);
				mmput(umm->mm);
				break;
			}
			user_enabler_write(e, umm->mm, true);
		}
		mmput(umm->mm);
		user_enabler_put(e);
		/* A fork's copies may all be pending */
		user_event_pass_next(&passed);
	}
	if (held)
		user_event_gate_exit(held);
	user_event_mm_put(umm);
}

/* The user_event_mm of @mm, under RCU or user_event_mms_lock */
static struct user_event_mm *user_event_mm_find(struct mm_struct *mm)
{
	struct user_event_mm *umm;

	hash_for_each_possible_rcu(user_event_mms, umm, node, (unsigned long)mm,
				   lockdep_is_held(&user_event_mms_lock)) {
		if (umm->mm == mm)
			return umm;
	}
	return NULL;
}

/*
 * The user_event_mm of @mm, a live address space (current's, or one being
 * forked): it lasts until the address space goes
 */
static struct user_event_mm *user_event_mm_lookup(struct mm_struct *mm)
{
	struct user_event_mm *umm;

	rcu_read_lock();
	umm = user_event_mm_find(mm);
	rcu_read_unlock();
	return umm;
}

/**
 * user_event_mm_get - the user_event_mm of an address space
 * @mm: the address space, live
 * @nr_hint: how many enablers it is about to get: a fork makes its table
 *	that large at once, rather than have it grow (and be rehashed) time
 *	after time while the copies go in
 *
 * Return: the user_event_mm of @mm, created if need be; NULL if out of
 * memory.
 */
static struct user_event_mm *user_event_mm_get(struct mm_struct *mm,
					       unsigned int nr_hint)
{
	struct rhashtable_params params = user_enabler_params;
	struct user_event_mm *umm, *found;

	umm = user_event_mm_lookup(mm);
	if (umm)
		return umm;

	umm = kzalloc(sizeof(*umm), GFP_KERNEL_ACCOUNT);
	if (!umm)
		return NULL;
	params.nelem_hint = min_t(unsigned int, nr_hint, U16_MAX);
	if (rhashtable_init(&umm->table, &params)) {
		kfree(umm);
		return NULL;
	}
	INIT_LIST_HEAD(&umm->gate_link);
	mmgrab(mm);
	umm->mm = mm;
	refcount_set(&umm->refcnt, 1);
	mutex_init(&umm->lock);
	INIT_LIST_HEAD(&umm->enablers);
	spin_lock_init(&umm->pending_lock);
	INIT_LIST_HEAD(&umm->pending);
	INIT_WORK(&umm->work, user_event_mm_work);

	/* Two threads of one process may register at once */
	spin_lock(&user_event_mms_lock);
	found = user_event_mm_find(mm);
	if (!found)
		hash_add_rcu(user_event_mms, &umm->node, (unsigned long)mm);
	spin_unlock(&user_event_mms_lock);
	if (found) {
		user_event_mm_put(umm);
		return found;
	}
	return umm;
}

/* The enabler of @umm at @addr and @bit, or NULL */
static struct user_event_enabler *
user_enabler_find(struct user_event_mm *umm, unsigned long addr, int bit)
{
	u64 key = user_enabler_key(addr, bit);
	struct user_event_enabler *e;

	lockdep_assert_held(&umm->lock);

	e = rhashtable_lookup_fast(&umm->table, &key, user_enabler_params);
	/* An address beyond user space may alias a key */
	if (e && (e->addr != addr || e->bit != bit))
		return NULL;
	return e;
}

static void user_event_put(struct user_event *user);

/* Stop maintaining @e's bit: no change of the event's state writes it */
static void user_enabler_detach(struct user_event_enabler *e)
{
	struct user_event_mm *umm = e->umm;

	lockdep_assert_held(&umm->lock);

	if (e->dead)
		return;
	mutex_lock(&e->user->enablers_lock);
	e->dead = true;
	list_del(&e->event_link);
	mutex_unlock(&e->user->enablers_lock);

	spin_lock(&umm->pending_lock);
	if (!list_empty(&e->pending_link)) {
		list_del_init(&e->pending_link);
		user_enabler_put(e);
	}
	spin_unlock(&umm->pending_lock);
}

/*
 * Drop the event reference of @e, detached, and its place in the bound of
 * its address space
 */
static void user_enabler_release(struct user_event_enabler *e)
{
	e->umm->nr_enablers--;
	user_limit_uncharge(&e->ucounts, UCOUNT_USER_EVENT_BITS);
	user_event_put(e->user);
	e->user = NULL;
}

/* Detach @e, take it out of its address space, drop its event reference */
static void user_enabler_remove(struct user_event_enabler *e)
{
	struct user_event_mm *umm = e->umm;

	lockdep_assert_held(&umm->lock);

	user_enabler_detach(e);
	rhashtable_remove_fast(&umm->table, &e->node, user_enabler_params);
	list_del(&e->mm_link);
	if (!e->unregistered)
		user_enabler_release(e);
	user_enabler_put(e);
}

/**
 * user_enabler_add - a new enabler of an event in an address space
 * @user: the event, which the caller holds a reference to
 * @umm: the address space, whose lock the caller holds
 * @addr: user address of the value
 * @size: size of the value
 * @bit: the bit of the value
 * @exempt: the current task is exempt from the limits of its user
 *
 * The enabler takes a reference to the event, and its waits count
 * against the workers of the current task's user, who registers the bit
 * or forks the address space.  Its bit is not written.
 * Unless @exempt, it also counts against the enable bits of that user.
 *
 * Return: the enabler, or ERR_PTR() of -EADDRINUSE if @umm has one at
 * @addr and @bit already (also while it is being unregistered), of
 * -ENOSPC if it has USER_EVENT_MM_ENABLERS_MAX enablers or the user has
 * user.max_user_event_bits, or of -ENOMEM.
 */
static struct user_event_enabler *
user_enabler_add(struct user_event *user, struct user_event_mm *umm,
		 unsigned long addr, int size, int bit, bool exempt)
{
	struct user_event_enabler *e, *old;
	struct ucounts *ucounts;
	int ret = -ENOMEM;

	lockdep_assert_held(&umm->lock);

	/*
	 * One unregistered, kept for the forks under way only, makes room;
	 * replacing it cannot fail, so a fork copies either of the two.
	 */
	old = user_enabler_find(umm, addr, bit);
	if (old && !old->unregistered)
		return ERR_PTR(-EADDRINUSE);
	if (umm->nr_enablers >= USER_EVENT_MM_ENABLERS_MAX)
		return ERR_PTR(-ENOSPC);
	ucounts = user_limit_charge(UCOUNT_USER_EVENT_BITS, exempt);
	if (PTR_ERR_OR_ZERO(ucounts) == -EDQUOT)
		return ERR_PTR(-ENOSPC);
	if (IS_ERR(ucounts))
		return ERR_CAST(ucounts);

	e = kzalloc(sizeof(*e), GFP_KERNEL_ACCOUNT);
	if (!e)
		goto uncharge;
	e->gate = user_event_gate_get(current_uid());
	if (!e->gate) {
		kfree(e);
		goto uncharge;
	}
	e->ucounts = ucounts;
	e->user = user;
	e->umm = umm;
	e->addr = addr;
	e->size = size;
	e->bit = bit;
	e->key = user_enabler_key(addr, bit);
	refcount_set(&e->refcnt, 1);
	INIT_LIST_HEAD(&e->pending_link);

	if (old) {
		ret = rhashtable_replace_fast(&umm->table, &old->node,
					      &e->node, user_enabler_params);
		list_del(&old->mm_link);
		user_enabler_put(old);
	} else {
		ret = rhashtable_lookup_insert_fast(&umm->table, &e->node,
						    user_enabler_params);
	}
	if (ret) {
		user_enabler_put(e);
		ret = ret == -EEXIST ? -EADDRINUSE : -ENOMEM;
		goto uncharge;
	}
	list_add_tail(&e->mm_link, &umm->enablers);
	umm->nr_enablers++;

	refcount_inc(&user->refcnt);
	mutex_lock(&user->enablers_lock);
	list_add_tail(&e->event_link, &user->enablers);
	mutex_unlock(&user->enablers_lock);
	return e;

uncharge:
	user_limit_uncharge(&ucounts, UCOUNT_USER_EVENT_BITS);
	return ERR_PTR(ret);
}

/**
 * __user_events_fork_begin - a fork of an address space begins
 * @oldmm: the address space that dup_mmap() is about to copy
 *
 * The enablers that __user_events_fork_end() copies must be those of the
 * memory dup_mmap() copies.  An unregistration in another thread may
 * clear its bit before or after the copy: until the fork ends, its
 * enabler stays, dead, so that the fork clears the child's copy of the
 * bit.  Counting the forks under way costs the lock twice; holding it
 * across dup_mmap() would order it against the locks dup_mmap() takes.
 *
 * Return: the user_event_mm of @oldmm, for __user_events_fork_end(), or
 * NULL if it has none.
 */
struct user_event_mm *__user_events_fork_begin(struct mm_struct *oldmm)
{
	struct user_event_mm *old = user_event_mm_lookup(oldmm);

	if (old) {
		mutex_lock(&old->lock);
		old->forks++;
		mutex_unlock(&old->lock);
	}
	return old;
}

/* Remove the enablers that were kept for the forks under way */
static void user_event_mm_reap(struct user_event_mm *umm)
{
	struct user_event_enabler *e, *tmp;
	unsigned int passed = 0;

	lockdep_assert_held(&umm->lock);

	list_for_each_entry_safe(e, tmp, &umm->enablers, mm_link) {
		if (e->unregistered)
			user_enabler_remove(e);
		user_event_pass_next(&passed);
	}
}

/* Copy the enablers of @old, whose lock the caller holds, to @mm */
static void user_event_mm_copy(struct user_event_mm *old,
			       struct mm_struct *mm)
{
	struct user_bit_batch b = { .wait = true };
	struct user_event_enabler *e, *copy;
	unsigned int passed = 0;
	struct user_event_mm *umm;
	bool exempt;

	/* A process that had enable bits once does not make its children pay */
	if (list_empty(&old->enablers))
		return;
	/* The copies count against the forking user: asked once per fork */
	exempt = user_limit_exempt();
	/* Sized at once for the copies no limit can refuse */
	umm = user_event_mm_get(mm, exempt ? old->nr_enablers : 0);
	/* No path takes the child's lock before the parent's */
	if (umm)
		mutex_lock_nested(&umm->lock, SINGLE_DEPTH_NESTING);
	list_for_each_entry(e, &old->enablers, mm_link) {
		/* One being unregistered is not copied, and its bit is cleared */
		copy = NULL;
		if (!e->dead)
			copy = umm ? user_enabler_add(e->user, umm, e->addr,
						      e->size, e->bit, exempt) :
				     ERR_PTR(-ENOMEM);
		if (!IS_ERR_OR_NULL(copy)) {
			/*
			 * The copied page mostly has the right bit already:
			 * copy-on-write stays for the child's first write.
			 */
			if (!user_bit_batch_is(&b, mm, e->addr, e->size, e->bit,
					       user_event_attached(e->user)))
				user_enabler_queue(copy);
		} else {
			/* Its own lock of the address space, next */
			user_bit_batch_end(&b);
			if (user_bit_write(mm, e->addr, e->size, e->bit, false,
					   true) == -EFAULT &&
			    !user_bit_fault_in(mm, e->addr)) {
				/* The child's memory: it holds up its parent */
				user_bit_write(mm, e->addr, e->size, e->bit,
					       false, true);
			}
		}
		user_event_pass_next(&passed);
	}
	user_bit_batch_end(&b);
	if (umm)
		mutex_unlock(&umm->lock);
}

/**
 * __user_events_fork_end - copy the enablers of a forked address space
 * @old: what __user_events_fork_begin() returned
 * @oldmm: the address space of the parent
 * @mm: its copy, for the child; NULL if dup_mmap() failed
 *
 * The child gets an enabler of its own for each of the parent's, on its
 * copy of the memory.  The copy made by dup_mmap() may predate a change
 * of an event's state: a bit that differs from its event's state, where
 * the copied page shows it, is written by the worker of the child's
 * address space, after the fork.  A bit whose enabler could not be copied
 * (out of memory), or that was unregistered during the fork, is cleared
 * in the child, which then has fewer enablers.
 *
 * Two windows stay open.  A parent that had no enablers when the fork
 * began may have registered its first ones since: they are copied as
 * well, but one both registered and unregistered meanwhile may leave its
 * bit set in the child; closing that would cost every fork an allocation.
 * And a bit unregistered before dup_mmap() copied its page is cleared in
 * the child all the same, even if the program set it again for a use of
 * its own meanwhile; telling the two apart would take a hook inside
 * dup_mmap().
 */
void __user_events_fork_end(struct user_event_mm *old, struct mm_struct *oldmm,
			    struct mm_struct *mm)
{
	bool counted = old;

	if (!old)
		old = user_event_mm_lookup(oldmm);
	if (!old || (!counted && !mm))
		return;

	mutex_lock(&old->lock);
	if (mm)
		user_event_mm_copy(old, mm);
	if (counted && !--old->forks)
		user_event_mm_reap(old);
	mutex_unlock(&old->lock);
}

/**
 * __user_events_exit_mm - drop the enablers of an address space
 * @mm: the address space, which its last user left: at exit or exec
 */
void __user_events_exit_mm(struct mm_struct *mm)
{
	struct user_event_enabler *e, *tmp;
	unsigned int passed = 0;
	struct user_event_mm *umm;

	umm = user_event_mm_lookup(mm);
	if (!umm)
		return;

	mutex_lock(&umm->lock);
	/*
	 * The table goes with the address space.  Emptied one enabler at a
	 * time, it would be shrunk again and again, each time by a walk of
	 * all its buckets that reports no quiescent state to RCU.
	 */
	WRITE_ONCE(umm->table.p.automatic_shrinking, false);
	list_for_each_entry_safe(e, tmp, &umm->enablers, mm_link) {
		user_enabler_remove(e);
		user_event_pass_next(&passed);
	}
	mutex_unlock(&umm->lock);

	spin_lock(&user_event_mms_lock);
	hash_del_rcu(&umm->node);
	spin_unlock(&user_event_mms_lock);
	user_event_mm_put(umm);
}

/**
 * user_event_reg - the class's .reg callback: attach or detach a tracer
 * @call: the event
 * @type: what to do
 * @data: the trace_event_file of ftrace; unused by perf
 *
 * Each attached tracer holds a reference, so the event cannot be deleted
 * under it, nor until a write that was recording when it detached is
 * done (@detach_gp).  The status byte follows every change.
 * So do its enable bits.
 *
 * Return: 0, or the error of tracepoint_probe_register().
 */
static int user_event_reg(struct trace_event_call *call, enum trace_reg type,
			  void *data)
{
	struct user_event *user = call->data;
	int ret = 0;

	switch (type) {
	case TRACE_REG_REGISTER:
		ret = tracepoint_probe_register(call->tp, call->class->probe,
						data);
		if (ret)
			return ret;
		refcount_inc(&user->refcnt);
		break;
	case TRACE_REG_UNREGISTER:
		tracepoint_probe_unregister(call->tp, call->class->probe, data);
		user->detach_gp = get_state_synchronize_rcu();
		user_event_put(user);
		break;
#ifdef CONFIG_PERF_EVENTS
	case TRACE_REG_PERF_REGISTER:
		ret = tracepoint_probe_register(call->tp,
						call->class->perf_probe, call);
		if (ret)
			return ret;
		refcount_inc(&user->refcnt);
		break;
	case TRACE_REG_PERF_UNREGISTER:
		tracepoint_probe_unregister(call->tp, call->class->perf_probe,
					    call);
		user->detach_gp = get_state_synchronize_rcu();
		user_event_put(user);
		break;
	case TRACE_REG_PERF_OPEN:
	case TRACE_REG_PERF_CLOSE:
	case TRACE_REG_PERF_ADD:
	case TRACE_REG_PERF_DEL:
		return 0;
#endif
	}

	user_event_update_status(user);
	user_event_update_enablers(user);
	return 0;
}

/*
 * Recording.  A write hands its payload to the probes of the event's
 * tracepoint, one per attached tracer (ftrace, perf): each copies it into
 * its own buffer, checks it there and commits it.  A small payload was
 * copied from user space once, before; a larger one is copied by each
 * probe straight from user space.
 */

/**
 * user_field_span - where the value of a field lies in a record
 * @field: the field
 * @rec: the record, common fields included
 * @start: gets the value's offset in @rec
 * @len: gets its length
 *
 * The only decoder of location words: for __data_loc and __rel_loc fields
 * the span is read from the field's word, unchecked (see
 * user_event_payload_valid()); for the others it is the field itself.
 */
static void user_field_span(const struct user_field *field, const u8 *rec,
			    u32 *start, u32 *len)
{
	u32 loc;

	if (!(field->flags & UF_DYN)) {
		*start = field->offset;
		*len = field->size;
		return;
	}

	loc = get_unaligned((const u32 *)(rec + field->offset));
	*start = USER_EVENT_LOC_OFFSET(loc);
	*len = USER_EVENT_LOC_SIZE(loc);
	/* __rel_loc counts from the end of the location word */
	if (field->flags & UF_REL_LOC)
		*start += field->offset + sizeof(u32);
}

/**
 * user_event_payload_valid - check a record against the event's fields
 * @user: the event
 * @rec: the record, common fields included
 * @size: bytes of @rec that were written
 *
 * Every __data_loc/__rel_loc field must point inside the payload, and one
 * that the core reads as a string must be non-empty and end with a NUL.
 *
 * Return: true if the record can be committed.
 */
static bool user_event_payload_valid(const struct user_event *user,
				     const u8 *rec, u32 size)
{
	const struct user_field *field;
	u32 start, len;
	int i;

	for (i = 0; i < user->nr_fields; i++) {
		field = &user->fields[i];
		if (!(field->flags & UF_DYN))
			continue;

		user_field_span(field, rec, &start, &len);
		if (start < sizeof(struct trace_entry) || start + len > size)
			return false;
		if ((field->flags & UF_STRING) && (!len || rec[start + len - 1]))
			return false;
	}
	return true;
}

/*
 * Copy a payload that is in user space to @dst, with page faults
 * disabled: false if a page of it is not present.
 */
static bool user_event_copy_in(void *dst,
			       const struct user_event_payload *payload)
{
	struct iov_iter iter;
	size_t left;

	pagefault_disable();
	if (iter_is_ubuf(payload->iter)) {
		/* write(): one buffer, checked by vfs_write() */
		left = __copy_from_user_inatomic(dst, payload->iter->ubuf +
						 payload->iter->iov_offset,
						 payload->size);
	} else {
		iter = *payload->iter;
		left = payload->size - copy_from_iter(dst, payload->size,
						      &iter);
	}
	pagefault_enable();
	return !left;
}

/**
 * user_event_fill - copy the payload into a record and check it
 * @user: the event
 * @rec: the record a probe reserved; the payload goes behind its common
 *	fields
 * @payload: the payload
 * @result: gets why the record must not be committed
 *
 * Runs with preemption disabled, so it must not fault: a page of a
 * payload in user space that went away since the write path faulted it
 * in makes the copy fail and the write retry.
 *
 * Return: true if the record can be committed.
 */
static __always_inline bool
user_event_fill(struct user_event *user, void *rec,
		const struct user_event_payload *payload,
		struct user_event_write *result)
{
	void *dst = (struct trace_entry *)rec + 1;

	if (likely(payload->kbuf)) {
		memcpy(dst, payload->kbuf, payload->size);
	} else if (unlikely(!user_event_copy_in(dst, payload))) {
		result->faulted = true;
		return false;
	}
	if (user->nr_checked &&
	    !user_event_payload_valid(user, rec,
				      sizeof(struct trace_entry) +
				      payload->size)) {
		result->invalid = true;
		return false;
	}
	return true;
}

/**
 * user_event_ftrace - tracepoint probe of ftrace
 * @data: the trace_event_file of the event in one trace array
 * @user: the event
 * @payload: the payload
 * @result: what became of the record
 *
 * While nothing on the event file or its trace array needs the per-event
 * checks of the generic event path, trace_event_buffer_reserve_fast()
 * reserves the record on the ring buffer directly, the way
 * trace_marker_raw records: the same record, for less.
 */
static __always_inline void
user_event_ftrace(void *data, struct user_event *user,
		  const struct user_event_payload *payload,
		  struct user_event_write *result)
{
	struct trace_event_file *file = data;
	/* Set in whole by the reserve: not zeroed (INIT_STACK_ALL_ZERO) */
	struct trace_event_buffer fbuffer __uninitialized;
	void *rec;

	rec = trace_event_buffer_reserve_fast(&fbuffer, file,
					      sizeof(struct trace_entry) +
					      payload->size);
	if (unlikely(!rec))
		return;

	if (unlikely(!user_event_fill(user, rec, payload, result))) {
		__trace_event_discard_commit(fbuffer.buffer, fbuffer.event);
		return;
	}

	trace_event_buffer_commit_fast(&fbuffer);
	result->recorded = true;
}

#ifdef CONFIG_PERF_EVENTS
/*
 * Tracepoint probe of perf: feeds the perf events of the event on this CPU
 * and the eBPF programs attached to them, with the record as context.
 */
static void user_event_perf(void *data, struct user_event *user,
			    const struct user_event_payload *payload,
			    struct user_event_write *result)
{
	struct trace_event_call *call = data;
	struct hlist_head *head = this_cpu_ptr(call->perf_events);
	struct pt_regs *regs;
	size_t size;
	void *rec;
	int rctx;

	if (!bpf_prog_array_valid(call) && hlist_empty(head))
		return;

	/* perf pads raw samples so that they end u64-aligned */
	size = sizeof(struct trace_entry) + payload->size;
	size = ALIGN(size + sizeof(u32), sizeof(u64)) - sizeof(u32);

	rec = perf_trace_buf_alloc(size, &regs, &rctx);
	if (unlikely(!rec))
		return;

	if (unlikely(!user_event_fill(user, rec, payload, result))) {
		perf_swevent_put_recursion_context(rctx);
		return;
	}

	perf_fetch_caller_regs(regs);
	perf_trace_run_bpf_submit(rec, size, rctx, call, 1, regs, head, NULL);
	result->recorded = true;
}
#endif

/**
 * user_event_emit - hand a payload to every tracer attached to an event
 * @user: the event
 * @payload: the payload
 *
 * Each tracer's probe copies the payload into its own buffer; one in user
 * space is copied with page faults disabled.  If a page of it was not
 * present and nobody recorded the event, the payload is faulted in, where
 * sleeping is allowed, and written again.
 *
 * Return: 0, or -EFAULT for a payload that could not be read or that
 * user_event_payload_valid() refused.
 */
static __always_inline int
user_event_emit(struct user_event *user,
		const struct user_event_payload *payload)
{
	struct user_event_write result;
	struct tracepoint_func *probe;
	int tries;

	for (tries = 0; ; tries++) {
		memset(&result, 0, sizeof(result));
		rcu_read_lock_sched_notrace();
		probe = rcu_dereference_sched(user->tracepoint.funcs);
		for (; probe && probe->func; probe++) {
			/* ftrace's probe, the usual one, called directly */
			if (probe->func == (void *)user_event_ftrace)
				user_event_ftrace(probe->data, user, payload,
						  &result);
			else
				((user_event_probe_t)probe->func)(probe->data,
								  user, payload,
								  &result);
		}
		rcu_read_unlock_sched_notrace();

		if (unlikely(result.invalid))
			return -EFAULT;
		/* A retry after a partial success would record duplicates */
		if (likely(!result.faulted) || result.recorded)
			return 0;
		if (tries == USER_EVENT_FAULT_IN_MAX ||
		    fault_in_iov_iter_readable(payload->iter, payload->size))
			return -EFAULT;
	}
}

/*
 * Output: the trace output of a record, and what the format file shows,
 * the fields and the print fmt.
 */

/* Marks a line cut short to fit in one trace_seq */
#define USER_EVENT_CUT		"..."
/* Before the bytes of a record whose event was kept without its format */
#define USER_EVENT_BARE		"(format dropped) "
/* Widest number printed: a sign and 20 digits */
#define USER_EVENT_NUM_WIDTH	21
/* Printed instead of a value whose location lies outside the record */
#define USER_EVENT_INVALID	"<invalid>"

static u64 user_field_number(const struct user_field *field, const u8 *data)
{
	u64 val;

	switch (field->size) {
	case 1:
		val = *data;
		break;
	case 2:
		val = get_unaligned((const u16 *)data);
		break;
	case 4:
		val = get_unaligned((const u32 *)data);
		break;
	default:
		val = get_unaligned((const u64 *)data);
		break;
	}
	if (field->flags & UF_SIGNED)
		val = sign_extend64(val, field->size * BITS_PER_BYTE - 1);
	return val;
}

/**
 * user_event_print_field - trace output of one field's value
 * @s: the output
 * @field: the field
 * @rec: the record, common fields included
 * @size: bytes of @rec
 * @room: characters the value may take at most
 *
 * Numbers are printed in decimal, char arrays as text, other arrays and
 * structs as hex bytes, cut to @room.
 *
 * Return: the characters printed, or -1 if the value had to be cut.
 */
static int user_event_print_field(struct trace_seq *s,
				  const struct user_field *field,
				  const u8 *rec, u32 size, int room)
{
	u32 start, len, i;
	const u8 *data;
	int n;

	/* Nothing past the end of the record is read */
	if (field->offset + field->size > size) {
		trace_seq_puts(s, USER_EVENT_INVALID);
		return sizeof(USER_EVENT_INVALID) - 1;
	}
	if (!(field->flags & (UF_ARRAY | UF_STRUCT | UF_DYN))) {
		u64 val = user_field_number(field, rec + field->offset);

		if (room < USER_EVENT_NUM_WIDTH)
			return -1;
		if (field->flags & UF_SIGNED)
			trace_seq_printf(s, "%lld", (s64)val);
		else
			trace_seq_printf(s, "%llu", val);
		return USER_EVENT_NUM_WIDTH;
	}

	user_field_span(field, rec, &start, &len);
	if (start + len > size) {
		trace_seq_puts(s, USER_EVENT_INVALID);
		return sizeof(USER_EVENT_INVALID) - 1;
	}
	data = rec + start;

	if (field->flags & UF_CHAR) {
		n = strnlen(data, len);
		trace_seq_printf(s, "%.*s", min(n, room), data);
		return n > room ? -1 : n;
	}

	/* "xx" and " xx" for each further byte */
	n = len ? 3 * len - 1 : 0;
	if (n > room)
		len = (room + 1) / 3;
	for (i = 0; i < len; i++)
		trace_seq_printf(s, i ? " %02x" : "%02x", data[i]);
	return n > room ? -1 : n;
}

/*
 * Characters already on the line being printed: trace_pipe puts several
 * lines in one trace_seq, and starts over with an empty one when a line
 * does not fit.
 */
static int user_event_line_len(struct trace_seq *s)
{
	int used = trace_seq_used(s), start = used;

	while (start > 0 && s->buffer[start - 1] != '\n')
		start--;
	return used - start;
}

/*
 * The payload of a record of a kept event whose format was dropped, see
 * user_kept_strip(): USER_EVENT_BARE then its @size bytes in hex, cut
 * to @room
 */
static void user_event_print_bytes(struct trace_seq *s, const u8 *rec,
				   u32 size, int room)
{
	u32 i, start = sizeof(struct trace_entry);

	trace_seq_puts(s, USER_EVENT_BARE);
	room -= sizeof(USER_EVENT_BARE) - 1;
	for (i = start; i < size; i++) {
		if (room < 3) {
			trace_seq_puts(s, USER_EVENT_CUT);
			break;
		}
		trace_seq_printf(s, i > start ? " %02x" : "%02x", rec[i]);
		room -= 3;
	}
	trace_seq_putc(s, '\n');
}

/**
 * user_event_print - the trace output of a record
 * @iter: the iterator, at the record
 * @flags: unused
 * @event: the event's struct trace_event
 *
 * "NAME: a=1 b=text", cut with USER_EVENT_CUT when it would not fit in
 * the trace_seq.
 *
 * Return: the state of the trace_seq, see trace_handle_return().
 */
static enum print_line_t user_event_print(struct trace_iterator *iter,
					  int flags, struct trace_event *event)
{
	struct user_event *user = container_of(event, struct user_event,
					       call.event);
	struct trace_seq *s = &iter->seq;
	/*
	 * tp_printk prints the record as it is committed, right after
	 * user_event_fill() checked it, without telling its size.
	 */
	u32 size = iter->ent_size ?: USER_EVENT_RECORD_MAX;
	int i, n, room;

	/*
	 * A line longer than a trace_seq is dropped as "[LINE TOO BIG]":
	 * cut long values so that the line ends with USER_EVENT_CUT.
	 */
	room = sizeof(s->buffer) - user_event_line_len(s) -
	       sizeof(USER_EVENT_CUT "\n");

	trace_seq_printf(s, "%s: ", user->name);
	room -= strlen(user->name) + 2;
	if (user->bare) {
		/* Only live events are printed without their size */
		user_event_print_bytes(s, (u8 *)iter->ent, iter->ent_size,
				       room);
		return trace_handle_return(s);
	}
	for (i = 0; i < user->nr_fields; i++) {
		/* "name=", after a blank but for the first field */
		n = strlen(user->fields[i].name) + 1 + !!i;
		if (room < n)
			break;
		trace_seq_printf(s, "%s%s=", i ? " " : "", user->fields[i].name);
		room -= n;
		n = user_event_print_field(s, &user->fields[i], (u8 *)iter->ent,
					   size, room);
		if (n < 0)
			break;
		room -= n;
	}
	if (i < user->nr_fields)
		trace_seq_puts(s, USER_EVENT_CUT);
	trace_seq_putc(s, '\n');

	return trace_handle_return(s);
}

static struct trace_event_functions user_event_funcs = {
	.trace = user_event_print,
};

/* printf conversion of a field in the print fmt */
static const char *user_field_conversion(const struct user_field *field)
{
	if (field->flags & (UF_ARRAY | UF_STRUCT | UF_DYN))
		return "%s";
	if (field->size == 8)
		return field->flags & UF_SIGNED ? "%lld" : "%llu";
	return field->flags & UF_SIGNED ? "%d" : "%u";
}

/* Builds the print fmt in two passes: measuring (no buffer), then writing */
struct user_fmt_buf {
	char *buf;
	int len;
	int pos;
};

static __printf(2, 3) void user_fmt_add(struct user_fmt_buf *f,
					const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	f->pos += vsnprintf(f->buf ? f->buf + f->pos : NULL,
			    f->buf ? f->len - f->pos : 0, fmt, args);
	va_end(args);
}

/* Argument of a field in the print fmt */
static void user_field_argument(struct user_fmt_buf *f,
				const struct user_field *field)
{
	const char *rel = field->flags & UF_REL_LOC ? "rel_" : "";
	const char *name = field->name;

	if ((field->flags & UF_DYN) && (field->flags & UF_CHAR)) {
		user_fmt_add(f, "__get_%sstr(%s)", rel, name);
	} else if (field->flags & UF_DYN) {
		user_fmt_add(f, "__print_hex(__get_%sdynamic_array(%s), ",
			     rel, name);
		user_fmt_add(f, "__get_%sdynamic_array_len(%s))", rel, name);
	} else if ((field->flags & (UF_ARRAY | UF_STRUCT)) &&
		   !(field->flags & UF_CHAR)) {
		user_fmt_add(f, "__print_hex(REC->%s, %u)", name, field->size);
	} else {
		user_fmt_add(f, "REC->%s", name);
	}
}

/* "a=%u b=%s", REC->a, __get_str(b) */
static void user_event_print_fmt(struct user_event *user,
				 struct user_fmt_buf *f)
{
	int i;

	user_fmt_add(f, "\"");
	for (i = 0; i < user->nr_fields; i++)
		user_fmt_add(f, "%s%s=%s", i ? " " : "", user->fields[i].name,
			     user_field_conversion(&user->fields[i]));
	user_fmt_add(f, "\"");
	for (i = 0; i < user->nr_fields; i++) {
		user_fmt_add(f, ", ");
		user_field_argument(f, &user->fields[i]);
	}
}

/* The print fmt of the format file, made once from the fields */
static int user_event_set_print_fmt(struct user_event *user)
{
	struct user_fmt_buf f = {};

	user_event_print_fmt(user, &f);
	f.len = f.pos + 1;
	f.pos = 0;
	f.buf = kmalloc(f.len, GFP_KERNEL_ACCOUNT);
	if (!f.buf)
		return -ENOMEM;
	user_event_print_fmt(user, &f);
	user->call.print_fmt = f.buf;
	return 0;
}

/**
 * user_event_define_fields - describe an event's fields to the tracing core
 * @call: the event
 *
 * The class's .define_fields callback: the core calls it when it creates
 * the event's directory, for the format file, filters, triggers and
 * histograms.  A char array keeps its "char[N]" type, which makes it a
 * string to the core (see filter_assign_type()).
 *
 * Return: 0 or -ENOMEM.
 */
static int user_event_define_fields(struct trace_event_call *call)
{
	struct user_event *user = call->data;
	int i, ret;

	for (i = 0; i < user->nr_fields; i++) {
		const struct user_field *field = &user->fields[i];

		ret = trace_define_field_ext(call, field->type, field->name,
					     field->offset, field->size,
					     !!(field->flags & UF_SIGNED),
					     FILTER_OTHER, field->len);
		if (ret)
			return ret;
	}
	return 0;
}

/* The fields of every user event are defined from its call->data */
static struct trace_event_fields user_event_fields_array[] = {
	{ .type = TRACE_FUNCTION_TYPE,
	  .define_fields = user_event_define_fields },
	{}
};

/*
 * Creating and deleting events, and the references that keep them.
 */

static void user_event_free(struct user_event *user)
{
	int i;

	for (i = 0; i < user->nr_fields; i++)
		user_field_free_strings(&user->fields[i]);
	kfree(user->fields);
	kfree(user->call.print_fmt);
	kfree(user->name);
	trace_event_marks_free(user->kept.marks);
	kfree(user);
}

/**
 * user_event_add_call - add an event to ftrace
 * @call: the event
 *
 * Ftrace creates the event's directory in the events directory of every
 * trace instance.  A program the admin let open user_events_data may lack
 * the right to search those directories, owned by root: they are created
 * with root's file system ids, and only those.
 *
 * Return: 0 or the error of trace_add_event_call().
 */
static int user_event_add_call(struct trace_event_call *call)
{
	const struct cred *old;
	struct cred *cred;
	int ret;

	cred = prepare_creds();
	if (!cred)
		return -ENOMEM;
	cred->fsuid = GLOBAL_ROOT_UID;
	cred->fsgid = GLOBAL_ROOT_GID;

	old = override_creds(cred);
	ret = trace_add_event_call(call);
	revert_creds(old);
	put_cred(cred);
	return ret;
}

/* The name of the event of @def, in tracefs: "NAME" or "NAME.ID" */
static char *user_event_tracefs_name(struct user_event_def *def,
				     bool multi_format)
{
	char *name;

	if (!multi_format) {
		name = def->name;
		def->name = NULL;
		return name;
	}
	return kasprintf(GFP_KERNEL_ACCOUNT, "%s.%llx", def->name,
			 ++user_event_multi_id);
}

/*
 * Add @user, whose type is registered, to tracing (its directory in every
 * trace instance), dynamic_events and the name table, with the one
 * reference of existing.
 */
static int user_event_publish(struct user_event *user)
{
	int ret;

	lockdep_assert_held(&event_mutex);

	refcount_set(&user->refcnt, 1);
	ret = user_event_add_call(&user->call);
	if (ret)
		return ret;

	dyn_event_init(&user->devent, &user_event_dops);
	dyn_event_add(&user->devent, &user->call);
	hash_add(user_event_names, &user->node, user_event_key(user->name));
	user_event_count++;
	return 0;
}

/**
 * user_event_create - create an event from a parsed definition
 * @def: the definition; its contents move to the event
 * @multi_format: create it in USER_EVENTS_MULTI_SYSTEM, as NAME.ID
 * @out: the new event, with the one reference of existing
 *
 * Return: 0, or -ENOMEM/-ENODEV if the event could not be set up.
 */
static int user_event_create(struct user_event_def *def, bool multi_format,
			     struct user_event **out)
{
	struct trace_event_call *call;
	struct user_event *user;
	int i, ret;

	lockdep_assert_held(&event_mutex);

	user = kzalloc(sizeof(*user), GFP_KERNEL_ACCOUNT);
	if (!user)
		return -ENOMEM;

	user->name = user_event_tracefs_name(def, multi_format);
	user->fields = def->fields;
	user->nr_fields = def->nr_fields;
	user->min_size = def->min_size;
	user->multi_format = multi_format;
	INIT_LIST_HEAD(&user->enablers);
	mutex_init(&user->enablers_lock);
	INIT_WORK(&user->enablers_work, user_event_enablers_work);
	def->fields = NULL;
	def->nr_fields = 0;
	if (!user->name) {
		ret = -ENOMEM;
		goto free;
	}

	for (i = 0; i < user->nr_fields; i++) {
		if (user->fields[i].flags & UF_DYN)
			user->nr_checked++;
	}

	ret = user_event_set_print_fmt(user);
	if (ret)
		goto free;

	user->tracepoint.name = user->name;

	INIT_LIST_HEAD(&user->class.fields);
	user->class.system = multi_format ? USER_EVENTS_MULTI_SYSTEM :
					    USER_EVENTS_SYSTEM;
	user->class.fields_array = user_event_fields_array;
	user->class.reg = user_event_reg;
	user->class.probe = user_event_ftrace;
#ifdef CONFIG_PERF_EVENTS
	user->class.perf_probe = user_event_perf;
#endif

	call = &user->call;
	call->class = &user->class;
	call->tp = &user->tracepoint;
	/* Dynamic from the start: perf and triggers take references on it */
	call->flags = TRACE_EVENT_FL_TRACEPOINT | TRACE_EVENT_FL_DYNAMIC;
	call->data = user;
	call->event.funcs = &user_event_funcs;
	/* Its records outlive it: see user_events_keeper */
	call->flags |= TRACE_EVENT_FL_KEEP_TYPE;
	INIT_LIST_HEAD(&user->gc_link);
	user->detach_gp = get_completed_synchronize_rcu();

	if (!register_trace_event(&call->event)) {
		ret = -ENODEV;
		goto free;
	}

	ret = user_event_publish(user);
	if (ret) {
		unregister_trace_event(&call->event);
		goto free;
	}

	*out = user;
	return 0;
free:
	user_event_free(user);
	return ret;
}

/* Is anything but its own reference holding @user? */
static bool user_event_referenced(struct user_event *user)
{
	return refcount_read(&user->refcnt) != 1;
}

/*
 * Does anything hold @user: a reference besides its own (@refcnt), or the
 * tracing core (an open file of the event, another event's trigger or
 * eprobe)?
 */
static bool user_event_busy(struct user_event *user)
{
	return user_event_referenced(user) ||
	       trace_event_dyn_busy(&user->call);
}

/*
 * Records of deleted events.  The tracing core clears the trace buffers
 * that recorded a dynamic event when it removes the event, as the event's
 * type number may be given to another event, whose output would misread
 * the records.  A program that deletes its events when it exits must not
 * wipe the trace its user is about to read: user events are created with
 * TRACE_EVENT_FL_KEEP_TYPE, and a deleted event is handed to the core's
 * trace_event_keep(), which keeps its type number, while the event prints
 * its records, until no buffer can hold one of them.
 *
 * Kept events count against no limit of events: past
 * kernel.user_events_kept_max, the oldest one drops its format and prints
 * its records as bytes, keeping its type number while they may remain.
 * Nothing is ever cleared to make room.
 */

/*
 * Drop the format of the kept event of @kept, the oldest with one: its
 * records print as bytes from now on.
 */
static void user_kept_strip(struct trace_kept_event *kept)
{
	struct user_event *user = container_of(kept, struct user_event, kept);
	struct user_field *fields = user->fields;
	int i, nr_fields = user->nr_fields;

	lockdep_assert_held(&event_mutex);

	/* user_event_print() runs under trace_event_sem, read */
	down_write(&trace_event_sem);
	user->fields = NULL;
	user->nr_fields = 0;
	user->bare = true;
	up_write(&trace_event_sem);

	for (i = 0; i < nr_fields; i++)
		user_field_free_strings(&fields[i]);
	kfree(fields);
	kfree(user->call.print_fmt);
	user->call.print_fmt = NULL;
}

/* Free a kept event: no buffer holds its records any more */
static void user_kept_release(struct trace_kept_event *kept)
{
	user_event_free(container_of(kept, struct user_event, kept));
}

static const struct trace_keeper_ops user_keeper_ops = {
	.strip = user_kept_strip,
	.release = user_kept_release,
};

/*
 * Deleted user events whose records trace buffers may still hold.
 * Registering the same event again (same name and fields) brings a kept
 * one back, with its type number, so that a program that comes and goes
 * keeps no more than one.
 */
static struct trace_keeper user_events_keeper;

/* What user_kept_match() looks for */
struct user_kept_key {
	const struct user_event_def *def;
	bool multi_format;
};

/* Is @kept the event of @data, a struct user_kept_key? */
static bool user_kept_match(struct trace_kept_event *kept, const void *data)
{
	struct user_event *user = container_of(kept, struct user_event, kept);
	const struct user_kept_key *key = data;

	return user->multi_format == key->multi_format &&
	       user_event_named(user, key->def->name) &&
	       user_event_fields_match(user, key->def);
}

/*
 * A kept event of @def's name and fields, in the system @multi_format
 * says, that a buffer may still need; the core frees one whose records
 * are gone.
 */
static struct user_event *
user_event_find_kept(const struct user_event_def *def, bool multi_format)
{
	struct user_kept_key key = { def, multi_format };
	struct trace_kept_event *kept;

	kept = trace_keeper_find(&user_events_keeper, user_kept_match, &key);
	return kept ? container_of(kept, struct user_event, kept) : NULL;
}

/**
 * struct user_event_deletion - what deleting an event needs, prepared
 * @marks: the buffers that may hold its records, see
 *	trace_event_mark_buffers(); NULL if none
 */
struct user_event_deletion {
	struct trace_event_marks *marks;
};

/**
 * user_event_prepare_delete - check that an event can be deleted
 * @user: the event
 * @del: gets what deleting it needs; user_event_delete() uses it, or
 *	trace_event_marks_free(@del->marks) drops it
 *
 * Return: 0, or -EBUSY while anything holds it (user_event_busy()), or
 * -ENOMEM.
 */
static int user_event_prepare_delete(struct user_event *user,
				     struct user_event_deletion *del)
{
	struct trace_event_marks *marks;

	lockdep_assert_held(&event_mutex);

	if (user_event_busy(user))
		return -EBUSY;

	/*
	 * A write that found the last tracer attached may still be in its
	 * probe, recording into a buffer through the event's trace file.
	 */
	cond_synchronize_rcu(user->detach_gp);

	marks = trace_event_mark_buffers(&user->call, user->kept.marks);
	if (IS_ERR(marks))
		return PTR_ERR(marks);
	del->marks = marks;
	return 0;
}

/**
 * user_event_delete - delete an event user_event_prepare_delete() checked
 * @user: the event
 * @del: what it prepared
 *
 * The event leaves tracefs, dynamic_events and the name table; its name
 * is free for other fields.  No trace buffer is cleared: an event that a
 * buffer recorded is kept (user_events_keeper).  Nothing can have taken a
 * reference since it was checked, with event_mutex held.
 * It has no enabler left, but the work that wrote their bits may still run.
 *
 * Return: 0, or the error of trace_remove_event_call(), with @del dropped.
 */
static int user_event_delete(struct user_event *user,
			     struct user_event_deletion *del)
{
	int ret;

	lockdep_assert_held(&event_mutex);

	ret = trace_remove_event_call(&user->call);
	if (ret) {
		trace_event_marks_free(del->marks);
		return ret;
	}

	dyn_event_remove(&user->devent);
	hash_del(&user->node);
	cancel_work_sync(&user->enablers_work);
	user_event_clear_status_index(user);
	user_event_count--;
	user_limit_uncharge(&user->ucounts, UCOUNT_USER_EVENTS);
	spin_lock(&user_event_gc_lock);
	list_del_init(&user->gc_link);
	spin_unlock(&user_event_gc_lock);

	trace_event_keep(&user_events_keeper, &user->kept, &user->call,
			 del->marks);
	return 0;
}

/**
 * user_event_destroy - delete an event nothing references
 * @user: the event
 *
 * Return: 0, or -EBUSY while anything holds it (user_event_busy()), or
 * -ENOMEM; the event is then unchanged.
 */
static int user_event_destroy(struct user_event *user)
{
	struct user_event_deletion del;
	int ret;

	ret = user_event_prepare_delete(user, &del);
	if (!ret)
		ret = user_event_delete(user, &del);
	return ret;
}

/*
 * Drop a reference.  Once an automatic event (see user_event_register())
 * has no reference left but its own, it goes on user_event_gc_list, and
 * user_event_gc() deletes it: the caller may hold locks of the tracing
 * core that deleting takes.  The event is put on the list under the same
 * lock as the decrement, and a delete takes it off the list under that
 * lock, so that the event is not touched after a delete that the
 * decrement made possible.
 */
static void user_event_put(struct user_event *user)
{
	int old;

	spin_lock(&user_event_gc_lock);
	/* Never the last: the event's own reference stays */
	__refcount_dec(&user->refcnt, &old);
	if (old == 2 && READ_ONCE(user->auto_delete) &&
	    list_empty(&user->gc_link)) {
		list_add_tail(&user->gc_link, &user_event_gc_list);
		mod_delayed_work(system_wq, &user_event_gc_work, 0);
	}
	spin_unlock(&user_event_gc_lock);
}

/**
 * user_event_gc - delete the automatic events nothing references any more
 * @work: user_event_gc_work
 *
 * An event that only the tracing core still holds (a trigger or an eprobe
 * of another event, which only an administrator can make) has no callback
 * for its release: it is looked at again every USER_EVENT_GC_RETRY_MS
 * until it is free.
 */
static void user_event_gc(struct work_struct *work)
{
	struct user_event *user;
	bool retry = false;
	LIST_HEAD(todo);

	spin_lock(&user_event_gc_lock);
	list_splice_init(&user_event_gc_list, &todo);
	spin_unlock(&user_event_gc_lock);

	/*
	 * An exit may drop thousands: each is deleted under event_mutex of
	 * its own, so that a change of another event's state waits for one
	 * deletion, not for all.  A delete meanwhile takes its event off
	 * @todo, under user_event_gc_lock.
	 */
	for (;;) {
		mutex_lock(&event_mutex);
		spin_lock(&user_event_gc_lock);
		user = list_first_entry_or_null(&todo, struct user_event,
						gc_link);
		if (user)
			list_del_init(&user->gc_link);
		spin_unlock(&user_event_gc_lock);
		if (!user) {
			mutex_unlock(&event_mutex);
			break;
		}

		if (user->auto_delete && !user_event_referenced(user) &&
		    user_event_destroy(user)) {
			/* Held by the core (-EBUSY), or out of memory */
			spin_lock(&user_event_gc_lock);
			if (list_empty(&user->gc_link))
				list_add_tail(&user->gc_link,
					      &user_event_gc_list);
			spin_unlock(&user_event_gc_lock);
			retry = true;
		}
		mutex_unlock(&event_mutex);
		user_event_quiescent();
	}

	if (retry)
		queue_delayed_work(system_wq, &user_event_gc_work,
				   msecs_to_jiffies(USER_EVENT_GC_RETRY_MS));
}

/**
 * user_event_discard - delete an event its registration did not hand out
 * @user: the event, just created, which nothing else may hold yet
 *
 * An event nobody got must not stay without a way to delete it: if
 * deleting fails for want of memory, the event is made automatic and
 * user_event_gc() tries again.  One that something took meanwhile (a
 * tracer, another registration) is theirs.
 */
static void user_event_discard(struct user_event *user)
{
	lockdep_assert_held(&event_mutex);

	if (user_event_destroy(user) != -ENOMEM)
		return;
	WRITE_ONCE(user->auto_delete, true);
	spin_lock(&user_event_gc_lock);
	if (list_empty(&user->gc_link))
		list_add_tail(&user->gc_link, &user_event_gc_list);
	mod_delayed_work(system_wq, &user_event_gc_work,
			 msecs_to_jiffies(USER_EVENT_GC_RETRY_MS));
	spin_unlock(&user_event_gc_lock);
}

/* Are there kernel.user_events_max events?  Kept ones do not count. */
static bool user_events_full(void)
{
	lockdep_assert_held(&event_mutex);

	return user_event_count >= READ_ONCE(user_events_max);
}

/*
 * Is @name taken in the user_events system by an event that is not a
 * user event, such as a kprobe created as "p:user_events/NAME"?
 */
static bool user_event_name_taken(const char *name)
{
	struct trace_event_call *call;

	lockdep_assert_held(&event_mutex);

	list_for_each_entry(call, &ftrace_events, list) {
		/* Ours were looked up by name: no strcmp() per user event */
		if (call->class->reg == user_event_reg)
			continue;
		if (!strcmp(call->class->system, USER_EVENTS_SYSTEM) &&
		    !strcmp(trace_event_name(call), name))
			return true;
	}
	return false;
}

/*
 * user_event_register() flags besides the USER_EVENT_REG_* of the ABI.
 * USER_REG_STATUS_BYTE: the registration wants the event's status byte.
 * Status page programs and dynamic_events expect their events to stay, so
 * such a registration also makes the event persistent.
 * USER_REG_DYNAMIC_EVENTS: the command came from dynamic_events, an
 * administrator's file: only CAP_PERFMON deletes the event through
 * DIAG_IOCSDEL.
 */
#define USER_REG_STATUS_BYTE	BIT(16)
#define USER_REG_DYNAMIC_EVENTS	BIT(17)

/*
 * Does a registration with @flags make @user, which exists, stay longer:
 * persistent if it was automatic, or the administrator's if it was not?
 * The event then counts against the user of that registration instead of
 * its creator, who would otherwise hold its limit with an event it can no
 * longer delete or that no longer goes by itself.
 */
static bool user_event_stays_longer(struct user_event *user, u32 flags)
{
	bool persist = flags & (USER_EVENT_REG_PERSIST | USER_REG_STATUS_BYTE);
	bool admin = flags & (USER_EVENT_REG_PERSIST | USER_REG_DYNAMIC_EVENTS);

	return (persist && user->auto_delete) ||
	       (admin && !user->admin_delete);
}

/* Does @user count against the current task's user, which is not exempt? */
static bool user_event_charged_to_current(struct user_event *user)
{
	return user->ucounts && user->ucounts->ns == current_user_ns() &&
	       uid_eq(user->ucounts->uid, current_euid()) &&
	       !user_limit_exempt();
}

/**
 * user_event_register - find or create the event a command describes
 * @cmd: the command as the user gave it, for error_log
 * @base: offset of the "name fields" text within @cmd
 * @flags: USER_EVENT_REG_* of an enable bit registration, or
 *	USER_REG_STATUS_BYTE
 * @out: the event
 * @created: set if the event did not exist before
 *
 * An existing event is returned if its fields are the same, and a kept one
 * (see user_events_keeper) is brought back.  An event created by an enable
 * bit registration without USER_EVENT_REG_PERSIST is automatic: deleted
 * once nothing references it, until a registration with
 * USER_EVENT_REG_PERSIST or USER_REG_STATUS_BYTE makes it persistent.
 * A created event belongs to the caller's effective uid.
 * It counts against that user's user.max_user_events until a
 * registration of another user makes it stay longer (see
 * user_event_stays_longer()).
 *
 * Return: 0, -EINVAL/-E2BIG for a bad command, -EADDRINUSE if the name is
 * taken by an event with other fields or by another kind of event,
 * -EMFILE if kernel.user_events_max events exist or the caller's user has
 * user.max_user_events, -ENOMEM.
 */
static int user_event_register(const char *cmd, int base, u32 flags,
			       struct user_event **out, bool *created)
{
	bool multi_format = flags & USER_EVENT_REG_MULTI_FORMAT;
	bool persist = flags & (USER_EVENT_REG_PERSIST | USER_REG_STATUS_BYTE);
	int ret, at = base + strspn(cmd + base, " \t");
	struct user_event *user = NULL;
	struct user_event_def def;
	struct ucounts *ucounts;
	bool recharge;

	lockdep_assert_held(&event_mutex);

	*created = false;
	ret = user_event_parse_text(cmd, base, false, &def);
	if (ret)
		return ret;

	/* A multi-format event is found by its fields, in its own system */
	if (multi_format)
		user = user_event_find_format(&def);
	else
		user = user_event_find(def.name);
	if (user && !user_event_fields_match(user, &def)) {
		/*
		 * But for an automatic event that nothing holds any more, on
		 * its way out (user_event_gc()): it makes room at once for a
		 * program that comes back with other fields.
		 */
		if (!user->auto_delete || user_event_referenced(user) ||
		    user_event_destroy(user)) {
			user_event_log(cmd, USER_EVENT_ERR_FIELDS_DIFFER, at);
			ret = -EADDRINUSE;
			goto out;
		}
		user = NULL;
	}
	if (!user && !multi_format && user_event_name_taken(def.name)) {
		user_event_log(cmd, USER_EVENT_ERR_NAME_TAKEN, at);
		ret = -EADDRINUSE;
		goto out;
	}

	/*
	 * A new event counts against the caller's user, and so does one
	 * that the registration makes stay longer for it
	 */
	recharge = user && user_event_stays_longer(user, flags) &&
		   !user_event_charged_to_current(user);
	if (!user || recharge) {
		ucounts = user_limit_charge(UCOUNT_USER_EVENTS,
					    user_limit_exempt());
		ret = PTR_ERR_OR_ZERO(ucounts);
		if (ret == -EDQUOT) {
			user_event_log(cmd, USER_EVENT_ERR_USER_LIMIT, at);
			ret = -EMFILE;
		}
		if (ret)
			goto out;
	}

	if (!user) {
		if (user_events_full()) {
			user_event_log(cmd, USER_EVENT_ERR_TOO_MANY_EVENTS, at);
			ret = -EMFILE;
		} else {
			/* The same event, deleted, is back: its type number too */
			user = user_event_find_kept(&def, multi_format);
			if (user) {
				ret = user_event_publish(user);
				if (!ret)
					trace_keeper_take(&user_events_keeper,
							  &user->kept);
			} else {
				ret = user_event_create(&def, multi_format,
							&user);
			}
		}
		if (ret) {
			user_limit_uncharge(&ucounts, UCOUNT_USER_EVENTS);
			goto out;
		}
		user->ucounts = ucounts;
		*created = true;
	}

	if ((flags & USER_REG_STATUS_BYTE) &&
	    user_event_set_status_index(user)) {
		user_event_log(cmd, USER_EVENT_ERR_NO_STATUS_BYTE, at);
		if (*created)
			user_event_discard(user);
		if (recharge)
			user_limit_uncharge(&ucounts, UCOUNT_USER_EVENTS);
		*created = false;
		ret = -ENOMEM;
		goto out;
	}
	if (recharge) {
		user_limit_uncharge(&user->ucounts, UCOUNT_USER_EVENTS);
		user->ucounts = ucounts;
	}
	if (*created) {
		user->auto_delete = !persist;
		user->owner = current_euid();
		user->admin_delete = false;
	} else if (persist && user->auto_delete) {
		WRITE_ONCE(user->auto_delete, false);
	}
	if (flags & (USER_EVENT_REG_PERSIST | USER_REG_DYNAMIC_EVENTS))
		user->admin_delete = true;
	*out = user;
out:
	user_event_def_free(&def);
	return ret;
}

/* The dynamic_events operations: "u:" creates, "!u:" deletes */

/* dynamic_events: "u:name fields" creates an event no file references */
static int user_event_dyn_create(const char *raw_command)
{
	struct user_event *user;
	bool created;
	int ret;

	if (!str_has_prefix(raw_command, USER_EVENTS_PREFIX))
		return -ECANCELED;

	mutex_lock(&event_mutex);
	ret = user_event_register(raw_command, strlen(USER_EVENTS_PREFIX),
				  USER_REG_STATUS_BYTE | USER_REG_DYNAMIC_EVENTS,
				  &user, &created);
	mutex_unlock(&event_mutex);
	return ret;
}

static struct user_event *to_user_event(struct dyn_event *ev)
{
	return container_of(ev, struct user_event, devent);
}

/* "u:NAME fields", or "u:user_events_multi/NAME.ID fields" */
static int user_event_dyn_show(struct seq_file *m, struct dyn_event *ev)
{
	struct user_event *user = to_user_event(ev);
	int i;

	seq_puts(m, USER_EVENTS_PREFIX);
	if (user->multi_format)
		seq_printf(m, "%s/", USER_EVENTS_MULTI_SYSTEM);
	seq_puts(m, user->name);
	for (i = 0; i < user->nr_fields; i++) {
		const struct user_field *field = &user->fields[i];

		seq_printf(m, "%s%s %s", i ? "; " : " ", field->type,
			   field->name);
		if (field->flags & UF_STRUCT)
			seq_printf(m, " %u", field->size);
	}
	seq_putc(m, '\n');
	return 0;
}

static bool user_event_dyn_is_busy(struct dyn_event *ev)
{
	return user_event_busy(to_user_event(ev));
}

static int user_event_dyn_free(struct dyn_event *ev)
{
	return user_event_destroy(to_user_event(ev));
}

/* Command name under which user_event_dyn_match() parses fields */
#define USER_EVENT_MATCH_NAME	"x"

/* "!u:name" matches by name; "!u:name fields" also needs equal fields */
static bool user_event_dyn_match(const char *system, const char *event,
				 int argc, const char **argv,
				 struct dyn_event *ev)
{
	struct user_event *user = to_user_event(ev);
	struct user_event_def def;
	char *text;
	bool match;
	int i, len;

	if (strcmp(user->name, event) ||
	    (system && strcmp(system, user->class.system)))
		return false;
	if (!argc)
		return true;

	/*
	 * Parse the split arguments as the fields of a command, behind a
	 * name that stands for the event's ("NAME.ID" is no command name).
	 * Each argument takes a blank before it, the name its NUL.
	 */
	len = sizeof(USER_EVENT_MATCH_NAME);
	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	text = kmalloc(len, GFP_KERNEL_ACCOUNT);
	if (!text)
		return false;
	len = sprintf(text, "%s", USER_EVENT_MATCH_NAME);
	for (i = 0; i < argc; i++)
		len += sprintf(text + len, " %s", argv[i]);

	match = !user_event_parse_text(text, 0, true, &def);
	kfree(text);
	if (!match)
		return false;
	match = user_event_fields_match(user, &def);
	user_event_def_free(&def);
	return match;
}

/*
 * The user_events_data file: each open file has its own write indexes.
 * ioctl() registers and deletes events, write() emits them.
 */

/* Read a command from user space: at most USER_EVENT_CMD_MAX bytes */
static char *user_events_read_cmd(const char __user *ucmd)
{
	long len = strnlen_user(ucmd, USER_EVENT_CMD_MAX + 1);
	char *cmd;

	if (len <= 0)
		return ERR_PTR(-EFAULT);
	if (len > USER_EVENT_CMD_MAX)
		return ERR_PTR(-E2BIG);

	cmd = memdup_user(ucmd, len);
	if (!IS_ERR(cmd))
		cmd[len - 1] = '\0';
	return cmd;
}

static struct user_event_refs *
user_events_refs(struct user_event_file_info *info)
{
	return rcu_dereference_protected(info->refs,
					 lockdep_is_held(&info->reg_lock));
}

/* The write index of @user on the file @info, or -1 if it has none */
static int user_events_ref_find(struct user_event_file_info *info,
				struct user_event *user)
{
	struct user_event_refs *refs = user_events_refs(info);
	int i;

	for (i = 0; refs && i < refs->count; i++) {
		if (refs->slots[i].user == user)
			return i;
	}
	return -1;
}

/**
 * user_events_ref_reserve - make room for one more write index
 * @info: the file
 *
 * A full table is replaced by one twice as large; writers that still use
 * the old one see the same slots.
 *
 * Return: the index the next slot will have, or -ENOMEM.
 */
static int user_events_ref_reserve(struct user_event_file_info *info)
{
	struct user_event_refs *refs = user_events_refs(info), *grown;
	int count = refs ? refs->count : 0;
	int capacity = refs ? refs->capacity : 0;

	if (count < capacity)
		return count;

	capacity = capacity ? capacity * 2 : USER_EVENT_REFS_MIN;
	/* kernel.user_events_max may allow more slots than kmalloc() can */
	grown = kvzalloc(struct_size(grown, slots, capacity),
			 GFP_KERNEL_ACCOUNT);
	if (!grown)
		return -ENOMEM;
	grown->capacity = capacity;
	grown->count = count;
	if (refs)
		memcpy(grown->slots, refs->slots,
		       count * sizeof(refs->slots[0]));
	rcu_assign_pointer(info->refs, grown);
	if (refs)
		kvfree_rcu(refs, rcu);
	return count;
}

/*
 * Hand out the slot user_events_ref_reserve() made room for; it keeps the
 * reference to @user the caller took.  See struct user_event_slot for
 * @lenient.
 */
static void user_events_ref_publish(struct user_event_file_info *info,
				    struct user_event *user, bool lenient)
{
	struct user_event_refs *refs = user_events_refs(info);

	refs->slots[refs->count].user = user;
	refs->slots[refs->count].lenient = lenient;
	/* Pairs with the acquire in the write path: the slot is set */
	smp_store_release(&refs->count, refs->count + 1);
}

/**
 * struct user_reg_state - what a registration took, to hand out or undo
 * @user: the event, referenced by the new slot or an existing one
 * @index: its write index on the file
 * @new_slot: @index is a new slot, reserved, with its own reference
 * @created: the registration created the event
 * @lenient: a status page registration, see struct user_event_slot
 */
struct user_reg_state {
	struct user_event *user;
	int index;
	bool new_slot;
	bool created;
	bool lenient;
};

/**
 * user_reg_begin - first step of a registration on a file
 * @info: the file, whose reg_lock the caller holds
 * @cmd: the command
 * @flags: see user_event_register()
 * @st: gets what was taken
 *
 * Finds or creates the event, and finds its write index on the file or
 * reserves a new one.  Nothing is handed out until user_reg_commit();
 * user_reg_abort() undoes it all.  Two steps, as the caller stores its
 * answers in user memory, which may fault, out of event_mutex.
 *
 * Return: 0, or the error of user_event_register() or -ENOMEM.
 */
static int user_reg_begin(struct user_event_file_info *info, const char *cmd,
			  u32 flags, struct user_reg_state *st)
{
	int ret;

	memset(st, 0, sizeof(*st));
	st->lenient = flags & USER_REG_STATUS_BYTE;
	mutex_lock(&event_mutex);
	ret = user_event_register(cmd, 0, flags, &st->user, &st->created);
	if (!ret) {
		st->index = user_events_ref_find(info, st->user);
		if (st->index < 0) {
			st->index = user_events_ref_reserve(info);
			st->new_slot = st->index >= 0;
		}
		if (st->new_slot) {
			refcount_inc(&st->user->refcnt);
		} else if (st->index < 0) {
			ret = st->index;
			if (st->created)
				user_event_discard(st->user);
		}
	}
	mutex_unlock(&event_mutex);
	return ret;
}

/*
 * Hand out the write index of the registration.  A slot that a status
 * page registration handed out once stays lenient, whatever registered it
 * first or registers it later: the status page program expects its
 * writes to succeed while nothing is attached.
 */
static void user_reg_commit(struct user_event_file_info *info,
			    struct user_reg_state *st)
{
	struct user_event_refs *refs = user_events_refs(info);

	if (st->new_slot)
		user_events_ref_publish(info, st->user, st->lenient);
	else if (st->lenient)
		WRITE_ONCE(refs->slots[st->index].lenient, true);
}

/* Undo the registration: no slot, no reference, no event it created */
static void user_reg_abort(struct user_reg_state *st)
{
	mutex_lock(&event_mutex);
	if (st->new_slot)
		user_event_put(st->user);
	if (st->created)
		user_event_discard(st->user);
	mutex_unlock(&event_mutex);
}

#ifdef CONFIG_COMPAT
/*
 * struct user_reg of the status page layout as a 32-bit x86 program has
 * it: its __u64 is 4-byte aligned, which makes it 20 bytes long.  Where a
 * 32-bit program aligns a __u64 to 8 bytes (arm), compat_u64 does too:
 * the struct is the 64-bit one, which the native path reads.
 */
struct compat_user_reg {
	u32 size;
	compat_u64 name_args;
	u32 status_index;
	u32 write_index;
};
#endif

/**
 * user_events_reg_status - DIAG_IOCSREG with the status page layout
 * @info: the file
 * @uarg: the caller's struct user_reg, of the first ABI
 * @compat: in the layout of a 32-bit program, struct compat_user_reg
 *
 * Registers the event, gives it a status byte, and stores the byte's
 * index and the write index in the caller's struct.
 *
 * Return: 0 or a negative errno; no write index is handed out on failure.
 */
static long user_events_reg_status(struct user_event_file_info *info,
				   void __user *uarg, bool compat)
{
	struct user_reg __user *ureg = uarg;
	u32 __user *status_index = &ureg->status_index;
	u32 __user *write_index = &ureg->write_index;
	struct user_reg_state st;
	struct user_reg reg;
	char *cmd;
	int ret;

#ifdef CONFIG_COMPAT
	if (compat) {
		struct compat_user_reg __user *creg = uarg;
		struct compat_user_reg compat_reg;

		if (copy_from_user(&compat_reg, creg, sizeof(compat_reg)))
			return -EFAULT;
		reg.name_args = compat_reg.name_args;
		status_index = &creg->status_index;
		write_index = &creg->write_index;
	}
#endif
	if (!compat && copy_from_user(&reg, ureg, sizeof(reg)))
		return -EFAULT;

	/* Fail early, before changing anything, on outputs we cannot store */
	if (put_user(0, status_index) || put_user(0, write_index))
		return -EFAULT;

	cmd = user_events_read_cmd(u64_to_user_ptr(reg.name_args));
	if (IS_ERR(cmd))
		return PTR_ERR(cmd);

	/* Another task of the file may hold it across a fault: killable */
	if (mutex_lock_killable(&info->reg_lock)) {
		kfree(cmd);
		return -EINTR;
	}
	ret = user_reg_begin(info, cmd, USER_REG_STATUS_BYTE, &st);
	kfree(cmd);
	if (ret)
		goto out;

	/* Not under event_mutex: storing the answer may fault */
	if (put_user(st.user->status_index, status_index) ||
	    put_user(st.index, write_index)) {
		user_reg_abort(&st);
		ret = -EFAULT;
	} else {
		user_reg_commit(info, &st);
	}
out:
	mutex_unlock(&info->reg_lock);
	return ret;
}

/* Can @addr, a user address given as a __u64, be one on this kernel? */
static bool user_addr_fits(u64 addr)
{
	return addr == (unsigned long)addr;
}

/* The checks of an enable bit registration that give EINVAL */
static int user_reg_check(const struct user_reg_enable_bit *reg)
{
	if (reg->flags & ~(USER_EVENT_REG_MAX - 1))
		return -EINVAL;

	switch (reg->enable_size) {
	case sizeof(u32):
		break;
#if BITS_PER_LONG == 64
	case sizeof(u64):
		/*
		 * Also for a 32-bit program: its 8-byte aligned value is one
		 * long to this kernel, written the same way
		 */
		break;
#endif
	default:
		return -EINVAL;
	}
	if (!IS_ALIGNED(reg->enable_addr, reg->enable_size) ||
	    reg->enable_bit >= reg->enable_size * BITS_PER_BYTE)
		return -EINVAL;
	return 0;
}

/**
 * user_events_reg_enable_bit - DIAG_IOCSREG with the enable bit layout
 * @info: the file
 * @ureg: the caller's struct user_reg_enable_bit
 * @size: its size as the caller knows it, at least 28
 *
 * Registers the event like the status page layout, and an enabler: the
 * bit at enable_addr in the caller's address space, which is set at once
 * if anything is attached to the event.
 *
 * Return: 0 or a negative errno; no write index is handed out on failure.
 */
static long user_events_reg_enable_bit(struct user_event_file_info *info,
				       struct user_reg_enable_bit __user *ureg,
				       u32 size)
{
	struct user_event_enabler *e = NULL;
	struct user_reg_enable_bit reg;
	struct user_event_mm *umm;
	struct user_reg_state st;
	void __user *uaddr;
	char *cmd;
	int ret;

	if (size > PAGE_SIZE)
		return -E2BIG;
	ret = copy_struct_from_user(&reg, sizeof(reg), ureg, size);
	if (ret)
		return ret;
	ret = user_reg_check(&reg);
	if (ret)
		return ret;
	if ((reg.flags & USER_EVENT_REG_PERSIST) && !perfmon_capable())
		return -EPERM;

	/* The value must be writable by the caller: fault it in meanwhile */
	uaddr = u64_to_user_ptr(reg.enable_addr);
	if (!user_addr_fits(reg.enable_addr) ||
	    !access_ok(uaddr, reg.enable_size) ||
	    fault_in_safe_writeable(uaddr, reg.enable_size))
		return -EFAULT;
	if (put_user(0, &ureg->write_index))
		return -EFAULT;

	cmd = user_events_read_cmd(u64_to_user_ptr(reg.name_args));
	if (IS_ERR(cmd))
		return PTR_ERR(cmd);

	/* From now on, fork and exit look for enablers */
	if (!static_key_enabled(&user_events_mm_used))
		static_branch_enable(&user_events_mm_used);

	if (mutex_lock_killable(&info->reg_lock)) {
		kfree(cmd);
		return -EINTR;
	}
	ret = user_reg_begin(info, cmd, reg.flags, &st);
	kfree(cmd);
	if (ret)
		goto out;

	/*
	 * Not under a lock others need: storing the answer may fault.  Before
	 * the enabler exists, whose bit a tracer may set from then on.
	 */
	umm = user_event_mm_get(current->mm, 0);
	if (put_user(st.index, &ureg->write_index)) {
		ret = -EFAULT;
	} else if (!umm) {
		ret = -ENOMEM;
	} else if (mutex_lock_killable(&umm->lock)) {
		ret = -EINTR;
	} else {
		e = user_enabler_add(st.user, umm, reg.enable_addr,
				     reg.enable_size, reg.enable_bit,
				     user_limit_exempt());
		if (IS_ERR(e)) {
			ret = PTR_ERR(e);
			e = NULL;
		} else {
			refcount_inc(&e->refcnt);
		}
		mutex_unlock(&umm->lock);
	}

	/*
	 * The bit, at once, in the caller's own memory: waiting for it holds
	 * up this address space alone.  Another thread may have
	 * unregistered it meanwhile.
	 */
	if (e) {
		if (!ret)
			ret = user_enabler_write(e, current->mm, true);
		if (ret) {
			mutex_lock(&umm->lock);
			if (!e->dead)
				user_enabler_remove(e);
			mutex_unlock(&umm->lock);
		}
		user_enabler_put(e);
	}

	if (ret)
		user_reg_abort(&st);
	else
		user_reg_commit(info, &st);
out:
	mutex_unlock(&info->reg_lock);
	return ret;
}

/* DIAG_IOCSREG: the size of struct user_reg tells the two layouts apart */
static long user_events_ioctl_reg(struct user_event_file_info *info,
				  unsigned long uarg)
{
	u32 size;

	if (get_user(size, (u32 __user *)uarg))
		return -EFAULT;
	if (size == sizeof(struct user_reg))
		return user_events_reg_status(info, (void __user *)uarg, false);
#ifdef CONFIG_COMPAT
	if (size == sizeof(struct compat_user_reg) && in_compat_syscall())
		return user_events_reg_status(info, (void __user *)uarg, true);
#endif
	if (size < sizeof(struct user_reg_enable_bit))
		return -EINVAL;
	return user_events_reg_enable_bit(info, (void __user *)uarg, size);
}

/**
 * user_events_ioctl_unreg - DIAG_IOCSUNREG: remove an enable bit
 * @uarg: the caller's struct user_unreg
 *
 * Removes the caller's enabler at the address and bit given, with its
 * reference to the event, and clears the bit.  While a fork is under way,
 * the enabler stays, without its event, until the fork ends.
 *
 * Return: 0, -ENOENT if there is no such enabler, -EINVAL, -E2BIG,
 * -EFAULT, -EINTR.
 */
static long user_events_ioctl_unreg(unsigned long uarg)
{
	struct user_unreg __user *uunreg = (struct user_unreg __user *)uarg;
	struct user_event_enabler *e;
	struct user_event_mm *umm;
	struct user_unreg unreg;
	int ret, tries;
	u32 usize;

	if (get_user(usize, &uunreg->size))
		return -EFAULT;
	if (usize < sizeof(unreg))
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	ret = copy_struct_from_user(&unreg, sizeof(unreg), uunreg, usize);
	if (ret)
		return ret;
	if (unreg.__reserved || unreg.__reserved2)
		return -EINVAL;

	/* The task's address space, and so its enablers, are alive */
	umm = user_event_mm_lookup(current->mm);
	if (!umm || !user_addr_fits(unreg.disable_addr))
		return -ENOENT;
	if (mutex_lock_killable(&umm->lock))
		return -EINTR;
	e = user_enabler_find(umm, unreg.disable_addr, unreg.disable_bit);
	/* A dead one is unregistered, or being so by another thread */
	if (!e || e->dead) {
		mutex_unlock(&umm->lock);
		return -ENOENT;
	}
	/* No change of the event's state writes the bit from now on */
	user_enabler_detach(e);
	/*
	 * The enabler stays until the bit is clear, so that a fork meanwhile
	 * clears the child's copy (user_event_mm_copy()).  The caller's own
	 * memory is faulted in without the lock, like user_enabler_write()
	 * does.  Memory that is unmapped or read-only keeps its bit.
	 */
	for (tries = 0; ; tries++) {
		ret = user_bit_write(current->mm, e->addr, e->size, e->bit,
				     false, true);
		if (ret != -EFAULT || tries == USER_EVENT_FAULT_IN_MAX)
			break;
		mutex_unlock(&umm->lock);
		ret = user_bit_fault_in(current->mm, e->addr);
		/* Killed: it stays, dead, until the address space goes */
		if (mutex_lock_killable(&umm->lock))
			return -EINTR;
		if (ret)
			break;
	}
	/*
	 * A fork under way may have copied the bit before it was cleared:
	 * the enabler stays for it, without its event
	 */
	if (umm->forks) {
		e->unregistered = true;
		user_enabler_release(e);
	} else {
		user_enabler_remove(e);
	}
	mutex_unlock(&umm->lock);
	return ret == -EINTR ? -EINTR : 0;
}

/*
 * May the caller delete @user through DIAG_IOCSDEL?  Without CAP_PERFMON,
 * not an event of the administrator's (@admin_delete).
 * A user of user_events_data alone deletes its own events, not those of
 * others, which it could otherwise take from them.
 */
static bool user_event_may_delete(struct user_event *user)
{
	if (perfmon_capable())
		return true;
	return !user->admin_delete && uid_eq(user->owner, current_euid());
}

/**
 * user_events_ioctl_del - DIAG_IOCSDEL: delete the events of a name
 * @uarg: the caller's NUL-terminated event name
 *
 * Deletes the event of that name and the multi-format events of that
 * name, all or none, if the caller may delete each of them (see
 * user_event_may_delete()).
 *
 * Return: 0, -ENOENT if there is no such event, -EPERM, -EBUSY while one
 * of them is referenced, -ENOMEM.
 */
static long user_events_ioctl_del(unsigned long uarg)
{
	struct user_event_namesake {
		struct user_event *user;
		struct user_event_deletion del;
	} *v = NULL;
	struct user_event *user;
	int i, n = 0, ret = 0;
	char *name;
	u32 key;

	name = user_events_read_cmd((const char __user *)uarg);
	if (IS_ERR(name))
		return PTR_ERR(name);
	key = user_event_key(name);

	mutex_lock(&event_mutex);
	hash_for_each_possible(user_event_names, user, node, key) {
		if (!user_event_named(user, name))
			continue;
		if (!user_event_may_delete(user)) {
			ret = -EPERM;
			goto out;
		}
		if (user_event_busy(user)) {
			ret = -EBUSY;
			goto out;
		}
		n++;
	}
	if (!n) {
		ret = -ENOENT;
		goto out;
	}

	v = kcalloc(n, sizeof(*v), GFP_KERNEL);
	if (!v) {
		ret = -ENOMEM;
		goto out;
	}
	n = 0;
	hash_for_each_possible(user_event_names, user, node, key) {
		if (user_event_named(user, name))
			v[n++].user = user;
	}
	/* Nothing is deleted until all of them can be */
	for (i = 0; i < n; i++) {
		ret = user_event_prepare_delete(v[i].user, &v[i].del);
		if (ret) {
			while (i--)
				trace_event_marks_free(v[i].del.marks);
			goto out;
		}
	}
	for (i = 0; i < n; i++) {
		if (!ret)
			ret = user_event_delete(v[i].user, &v[i].del);
		else
			trace_event_marks_free(v[i].del.marks);
	}
out:
	mutex_unlock(&event_mutex);
	kfree(v);
	kfree(name);
	return ret;
}

static long user_events_ioctl(struct file *file, unsigned int cmd,
			      unsigned long uarg)
{
	struct user_event_file_info *info = file->private_data;

	switch (cmd) {
	case DIAG_IOCSREG:
	case DIAG_IOCSDEL:
	case DIAG_IOCSUNREG:
		break;
	default:
		return -ENOTTY;
	}
	/* Like write(), changing events needs a writable file */
	if (!(file->f_mode & FMODE_WRITE))
		return -EBADF;

	if (cmd == DIAG_IOCSREG)
		return user_events_ioctl_reg(info, uarg);
	if (cmd == DIAG_IOCSUNREG)
		return user_events_ioctl_unreg(uarg);
	return user_events_ioctl_del(uarg);
}

#ifdef CONFIG_COMPAT
/*
 * The ioctl numbers encode the size of a pointer: a 32-bit program has
 * its own.  Its structs are those of 64-bit programs but for the status
 * page layout of struct user_reg (struct compat_user_reg), and its enable
 * bits are in 4-byte values only.
 */
#define COMPAT_DIAG_IOCSREG	_IOWR(DIAG_IOC_MAGIC, 0, compat_uptr_t)
#define COMPAT_DIAG_IOCSDEL	_IOW(DIAG_IOC_MAGIC, 1, compat_uptr_t)
#define COMPAT_DIAG_IOCSUNREG	_IOW(DIAG_IOC_MAGIC, 2, compat_uptr_t)

static long user_events_compat_ioctl(struct file *file, unsigned int cmd,
				     unsigned long uarg)
{
	switch (cmd) {
	case COMPAT_DIAG_IOCSREG:
		cmd = DIAG_IOCSREG;
		break;
	case COMPAT_DIAG_IOCSDEL:
		cmd = DIAG_IOCSDEL;
		break;
	case COMPAT_DIAG_IOCSUNREG:
		cmd = DIAG_IOCSUNREG;
		break;
	default:
		return -ENOTTY;
	}
	return user_events_ioctl(file, cmd, (unsigned long)compat_ptr(uarg));
}
#endif

/**
 * user_events_write_index - write a payload to the event of a write index
 * @file: the user_events_data file
 * @index: the write index, read from the start of the write
 * @payload: the payload, what follows the index
 * @total: the size of the whole write, index included
 *
 * Return: @total, -EINVAL for an index that is negative as a signed
 * 32-bit number (as on mainline, whose own tests ask for it) or for a
 * payload shorter than the event's fields, -ENOENT for another unknown
 * index, -E2BIG for a payload larger than a record can hold, -EBADF while
 * nothing is attached to the event of an index that no status page
 * registration handed out, or the error of user_event_emit().
 */
static __always_inline ssize_t
user_events_write_index(struct file *file, u32 index,
			const struct user_event_payload *payload, size_t total)
{
	struct user_event_file_info *info = file->private_data;
	struct user_event_refs *refs;
	struct user_event_slot *slot = NULL;
	struct user_event *user = NULL;
	bool lenient = false;
	int ret;

	if (unlikely((s32)index < 0))
		return -EINVAL;

	/*
	 * The table may be replaced by a concurrent registration on this
	 * file, but the event in a slot stays referenced until the file is
	 * released, which cannot happen during a write.
	 */
	rcu_read_lock_sched();
	refs = rcu_dereference_sched(info->refs);
	/* Pairs with the release in user_events_ref_publish(): slot is set */
	if (likely(refs && index < (u32)smp_load_acquire(&refs->count)))
		slot = &refs->slots[index];
	if (likely(slot)) {
		user = slot->user;
		lenient = READ_ONCE(slot->lenient);
	}
	rcu_read_unlock_sched();

	if (unlikely(!user))
		return -ENOENT;

	if (unlikely(payload->size < user->min_size))
		return -EINVAL;
	if (unlikely(payload->size > USER_EVENT_PAYLOAD_MAX))
		return -E2BIG;

	if (likely(user_event_attached(user))) {
		ret = user_event_emit(user, payload);
		if (ret)
			return ret;
	} else if (!lenient) {
		/* Mainline's libraries take EBADF for "not enabled" */
		return -EBADF;
	}
	return total;
}

/**
 * struct user_batch - a batched write, read record by record
 * @iter: the batch in user space, behind the bytes copied in
 * @win: the bytes copied in: @buf, or the caller's copy of a small write
 * @start: offset in @win of the first byte not consumed yet
 * @end: offset in @win of the end of the bytes copied in
 * @buf: where the bytes are copied in, a window at a time
 */
struct user_batch {
	struct iov_iter *iter;
	const u8 *win;
	size_t start;
	size_t end;
	u8 buf[USER_EVENT_BATCH_CHUNK] __aligned(8);
};

/**
 * user_batch_fill - have more bytes of a batch in its window
 * @b: the batch
 * @need: bytes wanted from @b->start on: at most USER_EVENT_BATCH_CHUNK,
 *	and at most what is left of the batch
 *
 * Moves the bytes not consumed yet to the start of @b->buf and copies as
 * many more behind them as fit, with one user access.
 *
 * Return: 0, or -EFAULT if the batch could not be read that far.
 */
static int user_batch_fill(struct user_batch *b, size_t need)
{
	size_t have = b->end - b->start, n;

	memmove(b->buf, b->win + b->start, have);
	b->win = b->buf;
	b->start = 0;
	n = min(sizeof(b->buf) - have, iov_iter_count(b->iter));
	b->end = have + copy_from_iter(b->buf + have, n, b->iter);
	/*
	 * A fault past the bytes needed: a copy that stops at a fault may
	 * leave some of the bytes before it uncopied, so copy those alone.
	 */
	if (unlikely(b->end < need))
		b->end += copy_from_iter(b->buf + b->end, need - b->end,
					 b->iter);
	return b->end >= need ? 0 : -EFAULT;
}

/**
 * user_events_write_batch - write the records of a batch, in order
 * @file: the user_events_data file
 * @iter: the write behind its marker
 * @total: the size of the whole write, marker included
 * @copied: the write behind its marker, with @copied->kbuf set if the
 *	caller copied it in already, as a small write
 *
 * Each record, a struct user_batch_record and its payload, is written as
 * a write of its index and payload would be, by user_events_write_index().
 * The batch is copied in a window at a time, with one user access for
 * many small records, and the probes copy each payload from there, as
 * they copy a small write's; a payload too large for the window is copied
 * by each probe from @iter, as a large write's.  A record whose event has
 * nothing attached is skipped whichever registration handed its index
 * out: the program's view of the event's state may be as old as the
 * batch.  The first record that a write would refuse ends the batch
 * before it.
 *
 * Return: the bytes of the marker and of the records before the one that
 * ended the batch, or, if it is the first, its error: -EINVAL for a
 * header or payload cut short by the end of the write, -EFAULT for one
 * that could not be read, or any error of user_events_write_index() but
 * -EBADF; -E2BIG for a batch larger than USER_EVENT_BATCH_MAX, before
 * any record is written.
 */
static noinline ssize_t
user_events_write_batch(struct file *file, struct iov_iter *iter, size_t total,
			const struct user_event_payload *copied)
{
	/* Written before being read: not zeroed (INIT_STACK_ALL_ZERO) */
	struct user_batch b __uninitialized;
	struct user_event_payload payload = {};
	struct user_batch_record rec;
	size_t done = sizeof(u32), left, len;
	ssize_t ret = 0;

	BUILD_BUG_ON(USER_EVENT_SMALL_WRITE > USER_EVENT_BATCH_CHUNK);
	if (unlikely(total > USER_EVENT_BATCH_MAX))
		return -E2BIG;

	b.iter = iter;
	b.win = copied->kbuf;
	b.start = 0;
	b.end = 0;
	if (b.win) {
		/* A small write, copied in whole: its copy is the window */
		b.end = copied->size;
		iov_iter_advance(iter, copied->size);
	}

	while ((left = b.end - b.start + iov_iter_count(iter))) {
		/* The system call's return does it after the last record */
		if (done > sizeof(u32))
			cond_resched();
		if (unlikely(left < sizeof(rec))) {
			ret = -EINVAL;
			break;
		}
		if (unlikely(b.end - b.start < sizeof(rec))) {
			ret = user_batch_fill(&b, sizeof(rec));
			if (ret)
				break;
		}
		memcpy(&rec, b.win + b.start, sizeof(rec));
		if (unlikely(rec.size > left - sizeof(rec))) {
			ret = -EINVAL;
			break;
		}

		len = sizeof(rec) + rec.size;
		payload.size = rec.size;
		if (likely(len <= USER_EVENT_BATCH_CHUNK)) {
			if (unlikely(b.end - b.start < len)) {
				ret = user_batch_fill(&b, len);
				if (ret)
					break;
			}
			payload.kbuf = b.win + b.start + sizeof(rec);
			payload.iter = NULL;
			b.start += len;
		} else {
			/* Back to the payload's start, which @iter copies */
			iov_iter_revert(iter, b.end - b.start - sizeof(rec));
			b.start = 0;
			b.end = 0;
			payload.kbuf = NULL;
			payload.iter = iter;
		}

		ret = user_events_write_index(file, rec.write_index, &payload,
					      len);
		/* -EBADF: nothing attached to an enable bit's event */
		if (unlikely(ret < 0 && ret != -EBADF))
			break;

		if (payload.iter)
			iov_iter_advance(iter, rec.size);
		done += len;
		ret = 0;
	}

	if (ret && done == sizeof(u32))
		return ret;
	return done;
}

/*
 * A batch written with write(): read from the one user buffer that
 * vfs_write() checked, unless the caller @copied it in whole.
 */
static ssize_t
user_events_write_batch_ubuf(struct file *file, const char __user *ubuf,
			     size_t count,
			     const struct user_event_payload *copied)
{
	struct iov_iter iter;

	iov_iter_ubuf(&iter, ITER_SOURCE, (char __user *)ubuf + sizeof(u32),
		      count - sizeof(u32));
	return user_events_write_batch(file, &iter, count, copied);
}

/*
 * Copy a small vectored write in whole, segment by segment: the index
 * is usually an iovec of its own.  copy_from_iter() would do the same,
 * with the bookkeeping of every kind of iterator.
 */
static __always_inline bool user_event_copy_small(u8 *dst,
						  const struct iov_iter *iter,
						  size_t size)
{
	const struct iovec *iov = iter->iov;
	size_t skip = iter->iov_offset;
	size_t len;

	if (unlikely(!iter_is_iovec(iter))) {
		struct iov_iter whole = *iter;

		return copy_from_iter(dst, size, &whole) == size;
	}
	for (; size; iov++, skip = 0) {
		len = min(iov->iov_len - skip, size);
		if (copy_from_user(dst, iov->iov_base + skip, len))
			return false;
		dst += len;
		size -= len;
	}
	return true;
}

/*
 * writev() and other vectored writes: the index may be split over iovecs.
 * A small write is copied in whole, as by user_events_write().
 */
static ssize_t user_events_write_iter(struct kiocb *kiocb,
				      struct iov_iter *iter)
{
	/* Written before being read: not zeroed (INIT_STACK_ALL_ZERO) */
	u8 small[USER_EVENT_SMALL_WRITE] __uninitialized __aligned(4);
	struct user_event_payload payload = {};
	size_t total = iov_iter_count(iter);
	u32 index;

	if (unlikely(total < sizeof(index)))
		return -EINVAL;

	payload.size = total - sizeof(index);
	if (total <= sizeof(small)) {
		if (likely(user_event_copy_small(small, iter, total))) {
			memcpy(&index, small, sizeof(index));
			payload.kbuf = small + sizeof(index);
			if (unlikely(index == USER_EVENT_BATCH)) {
				iov_iter_advance(iter, sizeof(index));
				return user_events_write_batch(kiocb->ki_filp,
							       iter, total,
							       &payload);
			}
			return user_events_write_index(kiocb->ki_filp, index,
						       &payload, total);
		}
		/* A fault: the index alone tells which error to return */
	}

	if (unlikely(copy_from_iter(&index, sizeof(index), iter) !=
		     sizeof(index)))
		return -EFAULT;
	if (unlikely(index == USER_EVENT_BATCH))
		return user_events_write_batch(kiocb->ki_filp, iter, total,
					       &payload);
	payload.iter = iter;
	return user_events_write_index(kiocb->ki_filp, index, &payload, total);
}

/*
 * write() is the hot path of a program emitting events.  A small write is
 * copied in whole, index and payload, with one user access, as
 * trace_marker_raw copies its own; a larger one has its index read with
 * one get_user() (vfs_write() has checked the whole buffer with
 * access_ok()) and its payload copied by each probe, from one user
 * buffer, without the kiocb and iovec set-up of write_iter.
 */
static ssize_t user_events_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	/* Written before being read: not zeroed (INIT_STACK_ALL_ZERO) */
	u8 small[USER_EVENT_SMALL_WRITE] __uninitialized __aligned(4);
	struct iov_iter iter __uninitialized;
	struct user_event_payload payload = {};
	u32 index;

	if (unlikely(count < sizeof(index)))
		return -EINVAL;

	payload.size = count - sizeof(index);
	if (count <= sizeof(small)) {
		/* Checked by vfs_write(), as the whole buffer */
		if (likely(!__copy_from_user(small, ubuf, count))) {
			memcpy(&index, small, sizeof(index));
			payload.kbuf = small + sizeof(index);
			if (unlikely(index == USER_EVENT_BATCH))
				return user_events_write_batch_ubuf(file, ubuf,
								    count,
								    &payload);
			return user_events_write_index(file, index, &payload,
						       count);
		}
		/* A fault: the index alone tells which error to return */
	}

	if (unlikely(get_user(index, (const u32 __user *)ubuf)))
		return -EFAULT;
	if (unlikely(index == USER_EVENT_BATCH))
		return user_events_write_batch_ubuf(file, ubuf, count,
						    &payload);
	iov_iter_ubuf(&iter, ITER_SOURCE, (char __user *)ubuf + sizeof(index),
		      payload.size);
	payload.iter = &iter;
	return user_events_write_index(file, index, &payload, count);
}

static int user_events_open(struct inode *inode, struct file *file)
{
	struct user_event_file_info *info;
	int ret;

	ret = tracing_check_open_get_tr(NULL);
	if (ret)
		return ret;

	info = kzalloc(sizeof(*info), GFP_KERNEL_ACCOUNT);
	if (!info)
		return -ENOMEM;
	mutex_init(&info->reg_lock);
	file->private_data = info;
	/*
	 * The file has no position.  As a stream, threads writing through
	 * one shared file do not serialize on its f_pos_lock.
	 */
	return stream_open(inode, file);
}

/* Closing the file drops the references of all its write indexes */
static int user_events_release(struct inode *inode, struct file *file)
{
	struct user_event_file_info *info = file->private_data;
	struct user_event_refs *refs;
	int i;

	/* Nothing else can use the file any more */
	refs = rcu_dereference_protected(info->refs, true);
	if (refs) {
		for (i = 0; i < refs->count; i++)
			user_event_put(refs->slots[i].user);
		kvfree(refs);
	}
	kfree(info);
	return 0;
}

static const struct file_operations user_data_fops = {
	.open = user_events_open,
	.write = user_events_write,
	.write_iter = user_events_write_iter,
	.unlocked_ioctl = user_events_ioctl,
#ifdef CONFIG_COMPAT
	.compat_ioctl = user_events_compat_ioctl,
#endif
	.release = user_events_release,
};

#ifdef CONFIG_SYSCTL
static int user_events_kept_max_limit = USER_EVENTS_KEPT_MAX_LIMIT;

static struct ctl_table user_event_sysctls[] = {
	{
		.procname	= "user_events_max",
		.data		= &user_events_max,
		.maxlen		= sizeof(user_events_max),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
	},
	{
		.procname	= "user_events_kept_max",
		.data		= &user_events_kept_max,
		.maxlen		= sizeof(user_events_kept_max),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= &user_events_kept_max_limit,
	},
	{}
};
#endif

static int __init trace_events_user_init(void)
{
	int ret;

	user_event_status_page = (u8 *)get_zeroed_page(GFP_KERNEL);
	if (!user_event_status_page)
		return -ENOMEM;
	/*
	 * A fault that is never served (a userfaultfd handler that does not
	 * answer until its process exits, a FUSE daemon that does not answer
	 * at all) keeps one worker: allow as many as unbound workqueues may
	 * have before the others have to wait.
	 */
	user_event_mm_wq = alloc_workqueue("user_events_mm", WQ_UNBOUND,
					   WQ_UNBOUND_MAX_ACTIVE);
	if (!user_event_mm_wq) {
		ret = -ENOMEM;
		goto free_page;
	}

	trace_keeper_init(&user_events_keeper, &user_keeper_ops,
			  &user_events_kept_max);

	ret = tracing_init_dentry();
	if (ret)
		goto free_page;

	/*
	 * There is no way to unregister: once dynamic_events can create
	 * events, the status page they use stays.
	 */
	ret = dyn_event_register(&user_event_dops);
	if (ret)
		goto free_page;

	if (!trace_create_file("user_events_data", TRACE_MODE_WRITE, NULL,
			       NULL, &user_data_fops) ||
	    !trace_create_file("user_events_status", TRACE_MODE_WRITE, NULL,
			       NULL, &user_status_fops)) {
		pr_warn("user_events could not create tracefs files\n");
		return -ENODEV;
	}
#ifdef CONFIG_SYSCTL
	register_sysctl_init("kernel", user_event_sysctls);
#endif
	init_user_ns.ucount_max[UCOUNT_USER_EVENTS] =
		USER_EVENTS_USER_MAX_DEFAULT;
	init_user_ns.ucount_max[UCOUNT_USER_EVENT_BITS] =
		USER_EVENT_BITS_USER_MAX_DEFAULT;
	return 0;

free_page:
	if (user_event_mm_wq)
		destroy_workqueue(user_event_mm_wq);
	free_page((unsigned long)user_event_status_page);
	user_event_status_page = NULL;
	return ret;
}

fs_initcall(trace_events_user_init);
