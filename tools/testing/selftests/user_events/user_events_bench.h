/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What user_events_bench.c calls in user_events_bench_bit.c: the enable
 * bit layout of struct user_reg replaces the status page layout in the
 * UAPI header of a program that defines USER_EVENTS_ENABLE_BIT_ABI, so
 * the bench, which uses both, registers enable bits in a file of its own.
 */
#ifndef USER_EVENTS_BENCH_H
#define USER_EVENTS_BENCH_H

#include <linux/types.h>

int ue_bit_register(int fd, const char *cmd, __u32 *addr, int bit);
int ue_bit_unregister(int fd, __u32 *addr, int bit);

#endif /* USER_EVENTS_BENCH_H */
