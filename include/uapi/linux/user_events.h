/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * user_events: trace events that user-space programs define and emit.
 *
 * A program opens tracefs' user_events_data file and registers an event
 * with DIAG_IOCSREG, in one of two ways:
 *
 *  - status page: the kernel answers with the event's byte in the status
 *    page (mmap of user_events_status), non-zero while something is
 *    attached, and a write index for that file descriptor;
 *  - enable bit: the program names a bit in its own memory, which the
 *    kernel sets while something is attached, and gets a write index.
 *
 * The two use different layouts of struct user_reg.  A program chooses
 * one by defining USER_EVENTS_STATUS_PAGE_ABI or USER_EVENTS_ENABLE_BIT_ABI
 * before including this header; without either it gets the layout that
 * the programs written for this kernel's release expect (below).
 *
 * Either way, while the event is enabled the program writes the write
 * index followed by the event's payload to the same file.
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

#if !defined(USER_EVENTS_STATUS_PAGE_ABI) && !defined(USER_EVENTS_ENABLE_BIT_ABI)
#define USER_EVENTS_STATUS_PAGE_ABI
#endif

#if !defined(USER_EVENTS_ENABLE_BIT_ABI) || defined(__KERNEL__)
/**
 * struct user_reg - argument of DIAG_IOCSREG, status page layout
 * @size: input, sizeof(struct user_reg): 24
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
#endif

#if defined(USER_EVENTS_ENABLE_BIT_ABI) || defined(__KERNEL__)
/* The event system of events registered with USER_EVENT_REG_MULTI_FORMAT */
#define USER_EVENTS_MULTI_SYSTEM "user_events_multi"

/* Flags of the enable bit layout of struct user_reg */
enum user_reg_flag {
	/* Keep the event once nothing uses it (needs CAP_PERFMON) */
	USER_EVENT_REG_PERSIST = 1U << 0,
	/* Let events of one name have several formats: NAME.ID */
	USER_EVENT_REG_MULTI_FORMAT = 1U << 1,
	USER_EVENT_REG_MAX = 1U << 2,
};

/**
 * struct user_reg - argument of DIAG_IOCSREG, enable bit layout
 * @size: input, sizeof(struct user_reg): 28 or more
 * @enable_bit: input, the bit of the value at @enable_addr to maintain
 * @enable_size: input, size of that value: 4, or 8 on 64-bit kernels
 * @flags: input, USER_EVENT_REG_* flags
 * @enable_addr: input, user address of the value, aligned to its size
 * @name_args: input, user address of the NUL-terminated event command
 * @write_index: output, the index to put in front of each write to this fd
 *
 * The kernel sets bit @enable_bit of the value at @enable_addr while
 * anything is attached to the event and clears it while nothing is; it
 * changes no other bit.
 */
#ifdef __KERNEL__
struct user_reg_enable_bit {
#else
struct user_reg {
#endif
	__u32 size;
	__u8 enable_bit;
	__u8 enable_size;
	__u16 flags;
	__u64 enable_addr;
	__u64 name_args;
	__u32 write_index;
} __attribute__((__packed__));

/**
 * struct user_unreg - argument of DIAG_IOCSUNREG
 * @size: input, sizeof(struct user_unreg): 16
 * @disable_bit: input, the enable bit of the registration to remove
 * @__reserved: must be 0
 * @__reserved2: must be 0
 * @disable_addr: input, the enable address of the registration to remove
 */
struct user_unreg {
	__u32 size;
	__u8 disable_bit;
	__u8 __reserved;
	__u16 __reserved2;
	__u64 disable_addr;
} __attribute__((__packed__));
#endif

/*
 * A write whose first four bytes are USER_EVENT_BATCH is a batch: behind
 * the marker come records, each a struct user_batch_record followed at
 * once by its payload, without padding.  Each record is written as a
 * write of its index and payload would be.  Kernels without batches
 * refuse the marker with EINVAL; the marker alone returns 4.
 */
#define USER_EVENT_BATCH 0xffffffffU

/* At most this many bytes in one batch, its marker included */
#define USER_EVENT_BATCH_MAX (64 * 1024)

/**
 * struct user_batch_record - header of one record of a batch
 * @write_index: the write index of the record's event on this fd
 * @size: bytes of payload that follow the header
 */
struct user_batch_record {
	__u32 write_index;
	__u32 size;
};

#define DIAG_IOC_MAGIC '*'

/* Register an event: takes a struct user_reg, of either layout */
#define DIAG_IOCSREG _IOWR(DIAG_IOC_MAGIC, 0, struct user_reg *)

/* Delete an event that nothing references: takes the event name */
#define DIAG_IOCSDEL _IOW(DIAG_IOC_MAGIC, 1, char *)

#if defined(USER_EVENTS_ENABLE_BIT_ABI) || defined(__KERNEL__)
/* Remove the caller's registrations of an enable bit: struct user_unreg */
#define DIAG_IOCSUNREG _IOW(DIAG_IOC_MAGIC, 2, struct user_unreg *)
#endif

#endif /* _UAPI_LINUX_USER_EVENTS_H */
