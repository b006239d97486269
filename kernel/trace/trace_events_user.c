// SPDX-License-Identifier: GPL-2.0-only
/*
 * user_events: trace events defined and written by user-space programs.
 *
 * A program registers an event on an open user_events_data file with the
 * DIAG_IOCSREG ioctl.  The event becomes a regular trace event in the
 * "user_events" system (enable, filter, trigger, hist, perf, eBPF), gets a
 * byte in a shared status page that tells the program whether anything is
 * attached, and a per-file write index.  Writing the index followed by the
 * payload to the same file emits the event to every attached consumer.
 *
 * Events can also be created and deleted through dynamic_events with the
 * "u:" prefix.  An event lives until it is explicitly deleted; deletion is
 * refused while an open file or a tracer still references it.
 *
 * Locking: everything that creates, deletes or references events runs under
 * event_mutex.  The write path takes no lock: the per-file table of write
 * indexes is published with RCU, the file's references keep its events
 * alive, and the attached consumers are the tracepoint's probes, called
 * with preemption disabled like any tracepoint.
 */

#include <linux/bitops.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/ctype.h>
#include <linux/hashtable.h>
#include <linux/init.h>
#include <linux/ioctl.h>
#include <linux/jhash.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/refcount.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/trace_events.h>
#include <linux/tracefs.h>
#include <linux/tracepoint.h>
#include <linux/types.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <asm/unaligned.h>
#include <uapi/linux/user_events.h>

#include "trace.h"
#include "trace_dynevent.h"

/* One status byte per event; byte 0 is never handed out */
#define USER_EVENTS_MAX_STATUS	4096
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

/* struct user_field.flags */
#define UF_SIGNED	BIT(0)	/* signed integer */
#define UF_CHAR		BIT(1)	/* elements are (signed) char: printed as text */
#define UF_ARRAY	BIT(2)	/* fixed-size array, len elements */
#define UF_STRUCT	BIT(3)	/* opaque struct of size bytes */
#define UF_DATA_LOC	BIT(4)	/* __data_loc: offset from record start */
#define UF_REL_LOC	BIT(5)	/* __rel_loc: offset from end of the field */
/*
 * The tracing core reads the field as a NUL-terminated string (filters,
 * histogram keys, eprobe fetches): every write must hold a NUL in it.
 */
#define UF_STRING	BIT(6)
#define UF_DYN		(UF_DATA_LOC | UF_REL_LOC)
/* A write must be checked against the field before it is recorded */
#define UF_CHECKED	(UF_DYN | UF_STRING)

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
 * @refcnt: one for existing, one per file slot, one per attached tracer
 * @name: event name
 * @fields: fields in record order
 * @ftrace_fields: @fields described for the event's format file
 * @nr_fields: number of @fields
 * @nr_checked: number of @fields every write is checked against
 * @min_size: payload bytes needed to cover every field
 * @status_index: the event's byte in the status page
 */
struct user_event {
	struct trace_event_call call;
	struct trace_event_class class;
	struct tracepoint tracepoint;
	struct dyn_event devent;
	struct hlist_node node;
	refcount_t refcnt;
	char *name;
	struct user_field *fields;
	struct trace_event_fields *ftrace_fields;
	int nr_fields;
	int nr_checked;
	u32 min_size;
	int status_index;
};

/**
 * struct user_event_refs - write indexes of one open user_events_data file
 * @rcu: frees a table that was replaced by a larger one
 * @count: slots in use, published with release semantics
 * @capacity: slots allocated
 * @events: slot N holds the event of write index N and a reference to it
 */
struct user_event_refs {
	struct rcu_head rcu;
	int count;
	int capacity;
	struct user_event *events[];
};

/**
 * struct user_event_file_info - an open user_events_data file
 * @reg_lock: serializes registrations, so that a write index is handed
 *	out only once its caller has been told about it
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

typedef void (*user_event_probe_t)(void *data, struct user_event *user,
				   struct iov_iter *iter,
				   struct user_event_write *result);

static DEFINE_HASHTABLE(user_event_names, 9);
/* Events by status index; protected by event_mutex */
static struct user_event *user_event_by_index[USER_EVENTS_MAX_STATUS];
static u8 *user_event_status_page;

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
	USER_EVENT_ERR_TOO_MANY_EVENTS,
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
	[USER_EVENT_ERR_TOO_MANY_EVENTS] = "No free status byte for a new event",
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
 * @log: report errors in error_log (not when only matching a definition)
 * @relaxed: a struct field may omit its size (matches any size)
 */
struct user_event_parser {
	const char *cmd;
	int base;
	char *text;
	bool log;
	bool relaxed;
};

static void user_event_log(const char *cmd, int err, int pos)
{
	tracing_log_err(NULL, "user_events", cmd, user_event_err_text, err, pos);
}

/* Log @err at the token @at of the parsed text and return @ret */
static int user_event_parse_error(struct user_event_parser *p, int err,
				  const char *at, int ret)
{
	if (p->log)
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

/* Parse a positive size written in decimal or 0x hex, at most @max */
static int user_event_parse_size(const char *s, u32 max, u32 *size)
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
	if (ret || !val || val > max)
		return -EINVAL;
	*size = val;
	return 0;
}

/*
 * Parse the type of a field: the tokens before the name.  Fills @field's
 * type, size, len and flags.  Returns the token after the type or an
 * ERR_PTR after logging.
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
		    user_event_parse_size(bracket, USER_EVENT_ARRAY_MAX, &len))
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
	 * Any array of char or unsigned char is a string to the core, which
	 * classifies fields by their type text: see filter_assign_type().
	 */
	if (filter_assign_type(field->type) != FILTER_OTHER)
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

/* Parse one field of @def from the NUL-terminated text at @s */
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
		if (!tok && !p->relaxed)
			return user_event_parse_error(p,
					USER_EVENT_ERR_NO_STRUCT_SIZE, s, -EINVAL);
		if (tok && user_event_parse_size(tok, USER_EVENT_ARRAY_MAX,
						 &field->size))
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
 * Parse @text, which sits at @base in the command @cmd the user gave.
 * @text itself is not modified.
 */
static int user_event_parse_text(const char *cmd, int base, const char *text,
				 bool log, bool relaxed,
				 struct user_event_def *def)
{
	struct user_event_parser p = {
		.cmd = cmd, .base = base, .log = log, .relaxed = relaxed,
	};
	int ret;

	p.text = kstrdup(text, GFP_KERNEL_ACCOUNT);
	if (!p.text)
		return -ENOMEM;
	ret = user_event_parse(&p, def);
	kfree(p.text);
	return ret;
}

static bool user_field_match(const struct user_field *a,
			     const struct user_field *b, bool any_struct_size)
{
	if (strcmp(a->type, b->type) || strcmp(a->name, b->name))
		return false;
	if (any_struct_size && (b->flags & UF_STRUCT) && !b->size)
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
		if (!user_field_match(&user->fields[i], &def->fields[i], true))
			return false;
	}
	return true;
}

static struct user_event *user_event_find(const char *name)
{
	struct user_event *user;
	u32 key = jhash(name, strlen(name), 0);

	lockdep_assert_held(&event_mutex);

	hash_for_each_possible(user_event_names, user, node, key) {
		if (!strcmp(user->name, name))
			return user;
	}
	return NULL;
}

/* Compute the status byte from the probes attached to the tracepoint */
static void user_event_update_status(struct user_event *user)
{
	struct tracepoint_func *probe;
	u8 status = 0;

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

/*
 * Attach or detach ftrace and perf.  Each attached tracer holds a
 * reference, so the event cannot be deleted under it.
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
		refcount_dec(&user->refcnt);
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
		refcount_dec(&user->refcnt);
		break;
	case TRACE_REG_PERF_OPEN:
	case TRACE_REG_PERF_CLOSE:
	case TRACE_REG_PERF_ADD:
	case TRACE_REG_PERF_DEL:
		return 0;
#endif
	}

	user_event_update_status(user);
	return 0;
}

/*
 * Where the value of @field lies in the record @rec: for __data_loc and
 * __rel_loc fields, decoded from the field's location word (length in the
 * upper 16 bits, offset in the lower 16), for the others the field itself.
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
	*start = loc & 0xffff;
	*len = loc >> 16;
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
 * Every __data_loc/__rel_loc field must point inside the payload.  Every
 * field the core reads as a string must hold a NUL: a dynamic one must be
 * non-empty and end with it, a fixed array must contain one.
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
		if (!(field->flags & UF_CHECKED))
			continue;

		user_field_span(field, rec, &start, &len);
		if (start < sizeof(struct trace_entry) || start + len > size)
			return false;
		if (!(field->flags & UF_STRING))
			continue;
		if (field->flags & UF_DYN) {
			if (!len || rec[start + len - 1])
				return false;
		} else if (!memchr(rec + start, '\0', len)) {
			return false;
		}
	}
	return true;
}

/*
 * Copy the payload from user space behind the common fields of @rec and
 * validate it.  Runs with preemption disabled, so it must not fault: a
 * page that went away since the write path faulted it in makes the copy
 * fail and the write retry.
 */
static bool user_event_fill(struct user_event *user, void *rec,
			    struct iov_iter *iter,
			    struct user_event_write *result)
{
	size_t size = iov_iter_count(iter);
	size_t copied;

	pagefault_disable();
	copied = copy_from_iter((struct trace_entry *)rec + 1, size, iter);
	pagefault_enable();

	if (unlikely(copied != size)) {
		result->faulted = true;
		return false;
	}
	if (user->nr_checked &&
	    !user_event_payload_valid(user, rec,
				      sizeof(struct trace_entry) + size)) {
		result->invalid = true;
		return false;
	}
	return true;
}

/* Tracepoint probe of ftrace: @data is the trace_event_file */
static void user_event_ftrace(void *data, struct user_event *user,
			      struct iov_iter *iter,
			      struct user_event_write *result)
{
	struct trace_event_file *file = data;
	struct trace_event_buffer fbuffer;
	void *rec;

	if (trace_trigger_soft_disabled(file))
		return;

	rec = trace_event_buffer_reserve(&fbuffer, file,
					 sizeof(struct trace_entry) +
					 iov_iter_count(iter));
	if (unlikely(!rec))
		return;

	if (unlikely(!user_event_fill(user, rec, iter, result))) {
		__trace_event_discard_commit(fbuffer.buffer, fbuffer.event);
		return;
	}

	trace_event_buffer_commit(&fbuffer);
	result->recorded = true;
}

#ifdef CONFIG_PERF_EVENTS
/*
 * Tracepoint probe of perf: feeds the perf events of the event on this CPU
 * and the eBPF programs attached to them, with the record as context.
 */
static void user_event_perf(void *data, struct user_event *user,
			    struct iov_iter *iter,
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
	size = sizeof(struct trace_entry) + iov_iter_count(iter);
	size = ALIGN(size + sizeof(u32), sizeof(u64)) - sizeof(u32);

	rec = perf_trace_buf_alloc(size, &regs, &rctx);
	if (unlikely(!rec))
		return;

	if (unlikely(!user_event_fill(user, rec, iter, result))) {
		perf_swevent_put_recursion_context(rctx);
		return;
	}

	perf_fetch_caller_regs(regs);
	perf_trace_run_bpf_submit(rec, size, rctx, call, 1, regs, head, NULL);
	result->recorded = true;
}
#endif

/*
 * Hand the payload in @iter to every consumer attached to @user.  Each
 * copies it straight from user space into its own buffer, with page faults
 * disabled.  If a page of the payload was not present and nobody recorded
 * the event, fault the payload in, where sleeping is allowed, and retry.
 */
static int user_event_emit(struct user_event *user, struct iov_iter *iter)
{
	struct user_event_write result;
	struct tracepoint_func *probe;
	struct iov_iter copy;
	int tries;

	for (tries = 0; ; tries++) {
		memset(&result, 0, sizeof(result));
		rcu_read_lock_sched_notrace();
		probe = rcu_dereference_sched(user->tracepoint.funcs);
		for (; probe && probe->func; probe++) {
			copy = *iter;
			((user_event_probe_t)probe->func)(probe->data, user,
							  &copy, &result);
		}
		rcu_read_unlock_sched_notrace();

		if (unlikely(result.invalid))
			return -EFAULT;
		/* A retry after a partial success would record duplicates */
		if (likely(!result.faulted) || result.recorded)
			return 0;
		if (tries == 3 ||
		    fault_in_iov_iter_readable(iter, iov_iter_count(iter)))
			return -EFAULT;
	}
}

/*
 * Write the payload in @iter to the event behind write @index of @file.
 * @total, index included, is what a successful write returns.
 */
static ssize_t user_events_write_index(struct file *file, u32 index,
				       struct iov_iter *iter, size_t total)
{
	struct user_event_file_info *info = file->private_data;
	struct user_event_refs *refs;
	struct user_event *user = NULL;
	size_t payload;
	int ret;

	/*
	 * The table may be replaced by a concurrent registration on this
	 * file, but the event in a slot stays referenced until the file is
	 * released, which cannot happen during a write.
	 */
	rcu_read_lock_sched();
	refs = rcu_dereference_sched(info->refs);
	/* Pairs with the release in user_events_ref_add(): slot is set */
	if (likely(refs && index < (u32)smp_load_acquire(&refs->count)))
		user = refs->events[index];
	rcu_read_unlock_sched();

	if (unlikely(!user))
		return -ENOENT;

	payload = iov_iter_count(iter);
	if (unlikely(payload < user->min_size))
		return -EINVAL;
	if (unlikely(payload > USER_EVENT_PAYLOAD_MAX))
		return -E2BIG;

	if (likely(rcu_access_pointer(user->tracepoint.funcs))) {
		ret = user_event_emit(user, iter);
		if (ret)
			return ret;
	}
	return total;
}

/* writev() and other vectored writes: the index may be split over iovecs */
static ssize_t user_events_write_iter(struct kiocb *kiocb,
				      struct iov_iter *iter)
{
	size_t total = iov_iter_count(iter);
	u32 index;

	if (unlikely(total < sizeof(index)))
		return -EINVAL;
	if (unlikely(copy_from_iter(&index, sizeof(index), iter) !=
		     sizeof(index)))
		return -EFAULT;

	return user_events_write_index(kiocb->ki_filp, index, iter, total);
}

/*
 * write() is the hot path of a program emitting events: read the index
 * with a single get_user() (vfs_write() has checked the whole buffer with
 * access_ok()) and iterate over the rest of the one buffer, without the
 * kiocb and iovec set-up that going through write_iter costs.
 */
static ssize_t user_events_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	struct iov_iter iter;
	u32 index;

	if (unlikely(count < sizeof(index)))
		return -EINVAL;
	if (unlikely(get_user(index, (const u32 __user *)ubuf)))
		return -EFAULT;

	iov_iter_ubuf(&iter, ITER_SOURCE, (char __user *)ubuf + sizeof(index),
		      count - sizeof(index));
	return user_events_write_index(file, index, &iter, count);
}

/* Marks a line cut short to fit in one trace_seq */
#define USER_EVENT_CUT		"..."
/* Widest number printed: a sign and 20 digits */
#define USER_EVENT_NUM_WIDTH	21

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
	if (field->flags & UF_SIGNED) {
		int shift = 64 - 8 * field->size;

		val = (s64)(val << shift) >> shift;
	}
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
		trace_seq_puts(s, "<invalid>");
		return sizeof("<invalid>") - 1;
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

/* Describe the fields for the format file and the filter machinery */
static int user_event_set_ftrace_fields(struct user_event *user)
{
	int i;

	user->ftrace_fields = kcalloc(user->nr_fields + 1,
				      sizeof(*user->ftrace_fields),
				      GFP_KERNEL_ACCOUNT);
	if (!user->ftrace_fields)
		return -ENOMEM;

	for (i = 0; i < user->nr_fields; i++) {
		const struct user_field *field = &user->fields[i];
		const struct trace_event_fields desc = {
			.type = field->type,
			.name = field->name,
			.size = field->size,
			.align = 1,
			.is_signed = !!(field->flags & UF_SIGNED),
			.filter_type = FILTER_OTHER,
			.len = field->len,
		};

		/* the members are const: the array is filled by copy */
		memcpy(&user->ftrace_fields[i], &desc, sizeof(desc));
		if (field->flags & UF_CHECKED)
			user->nr_checked++;
	}
	return 0;
}

static void user_event_free(struct user_event *user)
{
	int i;

	for (i = 0; i < user->nr_fields; i++)
		user_field_free_strings(&user->fields[i]);
	kfree(user->fields);
	kfree(user->ftrace_fields);
	kfree(user->call.print_fmt);
	kfree(user->name);
	kfree(user);
}

/*
 * Add the event's call to ftrace, which creates its directory in the
 * events directory of every trace instance.  A program the admin let open
 * user_events_data may lack the right to search those directories, owned
 * by root: create them with root's file system ids, and only those.
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

static int user_event_alloc_index(void)
{
	int i;

	for (i = 1; i < USER_EVENTS_MAX_STATUS; i++) {
		if (!user_event_by_index[i])
			return i;
	}
	return -ENOMEM;
}

/**
 * user_event_create - create an event from a parsed definition
 * @def: the definition; its contents move to the event
 * @index: a free status index for the event
 * @out: the new event, with the one reference of existing
 *
 * Return: 0, or -ENOMEM/-ENODEV if the event could not be set up.
 */
static int user_event_create(struct user_event_def *def, int index,
			     struct user_event **out)
{
	struct trace_event_call *call;
	struct user_event *user;
	int ret;

	lockdep_assert_held(&event_mutex);

	user = kzalloc(sizeof(*user), GFP_KERNEL_ACCOUNT);
	if (!user)
		return -ENOMEM;

	user->name = def->name;
	user->fields = def->fields;
	user->nr_fields = def->nr_fields;
	user->min_size = def->min_size;
	user->status_index = index;
	memset(def, 0, sizeof(*def));

	ret = user_event_set_ftrace_fields(user);
	if (!ret)
		ret = user_event_set_print_fmt(user);
	if (ret)
		goto free;

	user->tracepoint.name = user->name;

	INIT_LIST_HEAD(&user->class.fields);
	user->class.system = USER_EVENTS_SYSTEM;
	user->class.fields_array = user->ftrace_fields;
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
	refcount_set(&user->refcnt, 1);

	if (!register_trace_event(&call->event)) {
		ret = -ENODEV;
		goto free;
	}

	ret = user_event_add_call(call);
	if (ret) {
		unregister_trace_event(&call->event);
		goto free;
	}

	dyn_event_init(&user->devent, &user_event_dops);
	dyn_event_add(&user->devent, call);
	hash_add(user_event_names, &user->node,
		 jhash(user->name, strlen(user->name), 0));
	user_event_by_index[index] = user;
	WRITE_ONCE(user_event_status_page[index], 0);

	*out = user;
	return 0;
free:
	user_event_free(user);
	return ret;
}

static bool user_event_busy(struct user_event *user)
{
	return refcount_read(&user->refcnt) != 1 ||
	       trace_event_dyn_busy(&user->call);
}

/**
 * user_event_destroy - delete an event nothing references
 * @user: the event
 *
 * Return: 0, or -EBUSY if a file, a tracer or a trigger of another event
 * still holds it; the event is then unchanged.
 */
static int user_event_destroy(struct user_event *user)
{
	int ret;

	lockdep_assert_held(&event_mutex);

	if (user_event_busy(user))
		return -EBUSY;

	ret = trace_remove_event_call(&user->call);
	if (ret)
		return ret;
	/*
	 * Clear the buffers that recorded the event (see
	 * user_event_recorded()): its type number may be given to another
	 * event, whose output functions would misread its records.
	 */
	tracing_reset_all_online_cpus();

	dyn_event_remove(&user->devent);
	hash_del(&user->node);
	user_event_by_index[user->status_index] = NULL;
	WRITE_ONCE(user_event_status_page[user->status_index], 0);
	user_event_free(user);
	return 0;
}

/*
 * Did a trace buffer ever record @user?  Removing the event then clears
 * that buffer, with every other event's records in it.
 */
static bool user_event_recorded(struct user_event *user)
{
	struct trace_event_file *file;
	struct trace_array *tr;

	lockdep_assert_held(&event_mutex);

	list_for_each_entry(tr, &ftrace_trace_arrays, list) {
		list_for_each_entry(file, &tr->events, list) {
			if (file->event_call == &user->call &&
			    (file->flags & EVENT_FILE_FL_WAS_ENABLED))
				return true;
		}
	}
	return false;
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
		if (!strcmp(call->class->system, USER_EVENTS_SYSTEM) &&
		    !strcmp(trace_event_name(call), name))
			return true;
	}
	return false;
}

/**
 * user_event_register - find or create the event a command describes
 * @cmd: the command as the user gave it, for error_log
 * @base: offset of the "name fields" text within @cmd
 * @out: the event
 * @created: set if the event did not exist before
 *
 * An existing event is returned if its fields are the same.
 *
 * Return: 0, -EINVAL/-E2BIG for a bad command, -EADDRINUSE if the name is
 * taken by an event with other fields or by another kind of event,
 * -ENOMEM.
 */
static int user_event_register(const char *cmd, int base,
			       struct user_event **out, bool *created)
{
	struct user_event_def def;
	struct user_event *user;
	int ret, index;

	lockdep_assert_held(&event_mutex);

	*created = false;
	ret = user_event_parse_text(cmd, base, cmd + base, true, false, &def);
	if (ret)
		return ret;

	user = user_event_find(def.name);
	if (user) {
		if (user_event_fields_match(user, &def)) {
			*out = user;
		} else {
			user_event_log(cmd, USER_EVENT_ERR_FIELDS_DIFFER,
				       base + strspn(cmd + base, " \t"));
			ret = -EADDRINUSE;
		}
		goto out;
	}

	if (user_event_name_taken(def.name)) {
		user_event_log(cmd, USER_EVENT_ERR_NAME_TAKEN,
			       base + strspn(cmd + base, " \t"));
		ret = -EADDRINUSE;
		goto out;
	}

	index = user_event_alloc_index();
	if (index < 0) {
		user_event_log(cmd, USER_EVENT_ERR_TOO_MANY_EVENTS, base);
		ret = index;
		goto out;
	}

	ret = user_event_create(&def, index, out);
	*created = !ret;
out:
	user_event_def_free(&def);
	return ret;
}

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
				  &user, &created);
	mutex_unlock(&event_mutex);
	return ret;
}

static struct user_event *to_user_event(struct dyn_event *ev)
{
	return container_of(ev, struct user_event, devent);
}

static int user_event_dyn_show(struct seq_file *m, struct dyn_event *ev)
{
	struct user_event *user = to_user_event(ev);
	int i;

	seq_printf(m, "%s%s", USER_EVENTS_PREFIX, user->name);
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
	    (system && strcmp(system, USER_EVENTS_SYSTEM)))
		return false;
	if (!argc)
		return true;

	/* Rebuild "name fields" from the split arguments and parse it */
	len = strlen(event) + 1;
	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	text = kmalloc(len, GFP_KERNEL_ACCOUNT);
	if (!text)
		return false;
	len = sprintf(text, "%s", event);
	for (i = 0; i < argc; i++)
		len += sprintf(text + len, " %s", argv[i]);

	match = !user_event_parse_text(text, 0, text, false, true, &def);
	kfree(text);
	if (!match)
		return false;
	match = user_event_fields_match(user, &def);
	user_event_def_free(&def);
	return match;
}

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
		if (refs->events[i] == user)
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

	capacity = capacity ? capacity * 2 : 8;
	grown = kzalloc(struct_size(grown, events, capacity),
			GFP_KERNEL_ACCOUNT);
	if (!grown)
		return -ENOMEM;
	grown->capacity = capacity;
	grown->count = count;
	if (refs)
		memcpy(grown->events, refs->events,
		       count * sizeof(refs->events[0]));
	rcu_assign_pointer(info->refs, grown);
	if (refs)
		kfree_rcu(refs, rcu);
	return count;
}

/*
 * Hand out the slot user_events_ref_reserve() made room for; it keeps the
 * reference to @user the caller took.
 */
static void user_events_ref_publish(struct user_event_file_info *info,
				    struct user_event *user)
{
	struct user_event_refs *refs = user_events_refs(info);

	refs->events[refs->count] = user;
	/* Pairs with the acquire in the write path: the slot is set */
	smp_store_release(&refs->count, refs->count + 1);
}

/**
 * user_events_ioctl_reg - DIAG_IOCSREG: register an event on a file
 * @info: the file
 * @uarg: the caller's struct user_reg
 *
 * Finds or creates the event, then tells the caller its status index and
 * write index.  The write index is handed out only once that succeeded: a
 * registration that fails at any step leaves nothing behind (no slot, no
 * reference, no event it created).
 *
 * Return: 0 or a negative errno.
 */
static long user_events_ioctl_reg(struct user_event_file_info *info,
				  unsigned long uarg)
{
	struct user_reg __user *ureg = (struct user_reg __user *)uarg;
	struct user_event *user;
	struct user_reg reg;
	bool created, new_slot = false;
	int ret, index = 0;
	u32 size;
	char *cmd;

	if (get_user(size, &ureg->size))
		return -EFAULT;
	if (size < sizeof(reg))
		return -EINVAL;
	if (size > PAGE_SIZE)
		return -E2BIG;
	ret = copy_struct_from_user(&reg, sizeof(reg), ureg, size);
	if (ret)
		return ret;

	/* Fail early, before changing anything, on outputs we cannot store */
	if (put_user(0, &ureg->status_index) || put_user(0, &ureg->write_index))
		return -EFAULT;

	cmd = user_events_read_cmd(u64_to_user_ptr(reg.name_args));
	if (IS_ERR(cmd))
		return PTR_ERR(cmd);

	mutex_lock(&info->reg_lock);
	mutex_lock(&event_mutex);
	ret = user_event_register(cmd, 0, &user, &created);
	if (!ret) {
		index = user_events_ref_find(info, user);
		if (index < 0) {
			index = user_events_ref_reserve(info);
			new_slot = index >= 0;
		}
		if (new_slot) {
			refcount_inc(&user->refcnt);
		} else if (index < 0) {
			ret = index;
			if (created)
				user_event_destroy(user);
		}
	}
	mutex_unlock(&event_mutex);
	kfree(cmd);
	if (ret)
		goto out;

	/* Not under event_mutex: storing the answer may fault */
	if (put_user(user->status_index, &ureg->status_index) ||
	    put_user(index, &ureg->write_index)) {
		ret = -EFAULT;
		if (new_slot) {
			mutex_lock(&event_mutex);
			refcount_dec(&user->refcnt);
			if (created && !user_event_recorded(user))
				user_event_destroy(user);
			mutex_unlock(&event_mutex);
		}
	} else if (new_slot) {
		user_events_ref_publish(info, user);
	}
out:
	mutex_unlock(&info->reg_lock);
	return ret;
}

/**
 * user_events_ioctl_del - DIAG_IOCSDEL: delete an event by name
 * @uarg: the caller's NUL-terminated event name
 *
 * Deleting an event that a trace buffer recorded clears that buffer,
 * which only a caller allowed to administer tracing may do.
 *
 * Return: 0, -ENOENT, -EBUSY while the event is referenced, -EPERM.
 */
static long user_events_ioctl_del(unsigned long uarg)
{
	struct user_event *user;
	char *name;
	int ret;

	name = user_events_read_cmd((const char __user *)uarg);
	if (IS_ERR(name))
		return PTR_ERR(name);

	mutex_lock(&event_mutex);
	user = user_event_find(name);
	if (!user)
		ret = -ENOENT;
	else if (user_event_busy(user))
		ret = -EBUSY;
	else if (user_event_recorded(user) && !capable(CAP_SYS_ADMIN))
		ret = -EPERM;
	else
		ret = user_event_destroy(user);
	mutex_unlock(&event_mutex);

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
		/* Like write(), changing events needs a writable file */
		if (!(file->f_mode & FMODE_WRITE))
			return -EBADF;
		if (cmd == DIAG_IOCSREG)
			return user_events_ioctl_reg(info, uarg);
		return user_events_ioctl_del(uarg);
	}
	return -ENOTTY;
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
			refcount_dec(&refs->events[i]->refcnt);
		kfree(refs);
	}
	kfree(info);
	return 0;
}

static const struct file_operations user_data_fops = {
	.open = user_events_open,
	.write = user_events_write,
	.write_iter = user_events_write_iter,
	.unlocked_ioctl = user_events_ioctl,
	.release = user_events_release,
	.llseek = no_llseek,
};

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

static int __init trace_events_user_init(void)
{
	int ret;

	user_event_status_page = (u8 *)get_zeroed_page(GFP_KERNEL);
	if (!user_event_status_page)
		return -ENOMEM;

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
	return 0;

free_page:
	free_page((unsigned long)user_event_status_page);
	user_event_status_page = NULL;
	return ret;
}

fs_initcall(trace_events_user_init);
