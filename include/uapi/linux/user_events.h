/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * user_events: trace events that user-space programs define and emit.
 *
 * A program opens tracefs' user_events_data file, registers an event with
 * DIAG_IOCSREG and gets back two numbers: the event's byte in the status
 * page (mmap of user_events_status) and a write index for that file
 * descriptor.  When the status byte is non-zero something is attached and
 * the program writes the write index followed by the event's payload.
 *
 * See Documentation/trace/user_events.rst for the full description.
 */
#ifndef _UAPI_LINUX_USER_EVENTS_H
#define _UAPI_LINUX_USER_EVENTS_H

#include <linux/types.h>
#include <linux/ioctl.h>

/*
 * Programs written for the first release of this interface use struct
 * iovec for writev() with nothing but this header included.
 */
#ifndef __KERNEL__
#include <sys/uio.h>
#endif

#define USER_EVENTS_SYSTEM "user_events"
#define USER_EVENTS_PREFIX "u:"

/* Bits of an event's status byte, one per kind of attached consumer */
#define EVENT_BIT_FTRACE 0
#define EVENT_BIT_PERF 1
#define EVENT_BIT_OTHER 7

#define EVENT_STATUS_FTRACE (1 << EVENT_BIT_FTRACE)
#define EVENT_STATUS_PERF (1 << EVENT_BIT_PERF)
#define EVENT_STATUS_OTHER (1 << EVENT_BIT_OTHER)

/*
 * Value of a __data_loc or __rel_loc field: the length of the data in the
 * upper 16 bits, its offset in the lower 16 bits.
 */
#define DYN_LOC(offset, size) ((size) << 16 | (offset))

/**
 * struct user_reg - argument of DIAG_IOCSREG
 * @size: input, sizeof(struct user_reg) as the caller knows it
 * @name_args: input, user address of the NUL-terminated event command
 * @status_index: output, the event's byte in the status page
 * @write_index: output, the index to put in front of each write to this fd
 */
struct user_reg {
	__u32 size;
	__u64 name_args;
	__u32 status_index;
	__u32 write_index;
};

#define DIAG_IOC_MAGIC '*'

/* Register an event: takes a struct user_reg */
#define DIAG_IOCSREG _IOWR(DIAG_IOC_MAGIC, 0, struct user_reg *)

/* Delete an event that nothing references: takes the event name */
#define DIAG_IOCSDEL _IOW(DIAG_IOC_MAGIC, 1, char *)

#endif /* _UAPI_LINUX_USER_EVENTS_H */
