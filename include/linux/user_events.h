/* SPDX-License-Identifier: GPL-2.0 */
/*
 * user_events: what the rest of the kernel calls.
 *
 * A program that registers an event with an enable bit (the enable bit
 * layout of struct user_reg) has the kernel maintain that bit in its
 * address space.  The registrations belong to the address space: a fork
 * that copies it copies them, and they go away with it, at exit or exec.
 */
#ifndef _LINUX_USER_EVENTS_H
#define _LINUX_USER_EVENTS_H

#include <linux/jump_label.h>
#include <uapi/linux/user_events.h>

struct mm_struct;
struct user_event_mm;

#ifdef CONFIG_USER_EVENTS
/* Enabled once a program registered an enable bit: the hooks cost nothing before */
DECLARE_STATIC_KEY_FALSE(user_events_mm_used);

struct user_event_mm *__user_events_fork_begin(struct mm_struct *oldmm);
void __user_events_fork_end(struct user_event_mm *old, struct mm_struct *oldmm,
			    struct mm_struct *mm);
void __user_events_exit_mm(struct mm_struct *mm);

/*
 * dup_mm(), before dup_mmap(): a fork of @oldmm begins; what it returns
 * goes to user_events_fork_end()
 */
static inline struct user_event_mm *
user_events_fork_begin(struct mm_struct *oldmm)
{
	if (static_branch_unlikely(&user_events_mm_used))
		return __user_events_fork_begin(oldmm);
	return NULL;
}

/*
 * dup_mm(), after dup_mmap(): @mm, the copy of @oldmm, gets copies of its
 * registrations; @mm is NULL if dup_mmap() failed
 */
static inline void user_events_fork_end(struct user_event_mm *old,
					struct mm_struct *oldmm,
					struct mm_struct *mm)
{
	if (static_branch_unlikely(&user_events_mm_used))
		__user_events_fork_end(old, oldmm, mm);
}

/* exit_mmap(): the registrations of @mm go with it */
static inline void user_events_exit_mm(struct mm_struct *mm)
{
	if (static_branch_unlikely(&user_events_mm_used))
		__user_events_exit_mm(mm);
}
#else
static inline struct user_event_mm *
user_events_fork_begin(struct mm_struct *oldmm)
{
	return NULL;
}

static inline void user_events_fork_end(struct user_event_mm *old,
					struct mm_struct *oldmm,
					struct mm_struct *mm)
{
}

static inline void user_events_exit_mm(struct mm_struct *mm)
{
}
#endif

#endif /* _LINUX_USER_EVENTS_H */
