// SPDX-License-Identifier: GPL-2.0
/*
 * user_events and eBPF: a BPF_PROG_TYPE_TRACEPOINT program attached through
 * the event's perf event runs on every write and sees the record (common
 * fields and payload, __rel_loc strings included) as its context.
 *
 * The program is a handful of raw instructions loaded with the bpf()
 * system call, so the test needs no BPF toolchain: it copies the first
 * RECORD_COPY bytes of its context into an array map and counts its runs.
 */

#include <stddef.h>

#include "user_events_selftests.h"

#define RECORD_COPY	128
#define VALUE_SIZE	(RECORD_COPY + sizeof(uint64_t))	/* + run count */

/* Loads the program; its verifier log goes to @log on failure */
static int prog_load(int map_fd, char *log, size_t log_size)
{
	struct bpf_insn insns[32], *p = insns;

	/* r6 = ctx */
	*p++ = UE_BPF_INSN(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0);
	/* key = 0 on the stack; r0 = its value, or out */
	*p++ = UE_BPF_INSN(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0);
	p = ue_bpf_map_lookup(p, map_fd, -4);
	*p++ = UE_BPF_INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 8, 0);
	/* bpf_probe_read_kernel(value, RECORD_COPY, ctx) */
	*p++ = UE_BPF_INSN(BPF_ALU64 | BPF_MOV | BPF_X, 7, 0, 0, 0);
	*p++ = UE_BPF_INSN(BPF_ALU64 | BPF_MOV | BPF_X, 1, 7, 0, 0);
	*p++ = UE_BPF_INSN(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, RECORD_COPY);
	*p++ = UE_BPF_INSN(BPF_ALU64 | BPF_MOV | BPF_X, 3, 6, 0, 0);
	*p++ = UE_BPF_INSN(BPF_JMP | BPF_CALL, 0, 0, 0,
			   BPF_FUNC_probe_read_kernel);
	/* value's run count += 1 */
	*p++ = UE_BPF_INSN(BPF_LDX | BPF_MEM | BPF_DW, 1, 7, RECORD_COPY, 0);
	*p++ = UE_BPF_INSN(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, 1);
	*p++ = UE_BPF_INSN(BPF_STX | BPF_MEM | BPF_DW, 7, 1, RECORD_COPY, 0);
	/* out: return 0 */
	*p++ = UE_BPF_INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
	*p++ = UE_BPF_INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);

	return ue_bpf_tp_load(insns, p - insns, log, log_size);
}

/*
 * Loads a program that reads the @size bytes (4 or 8) at @off of its
 * context directly: attaching it to an event is refused (EACCES) unless
 * the event's fields reach past off + size.
 */
static int prog_load_ctx_read(int off, int size)
{
	struct bpf_insn insns[] = {
		UE_BPF_INSN(BPF_LDX | BPF_MEM | (size == 8 ? BPF_DW : BPF_W),
			    0, 1, off, 0),
		UE_BPF_INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0),
		UE_BPF_INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};

	return ue_bpf_tp_load(insns, ARRAY_SIZE(insns), NULL, 0);
}

FIXTURE(bpf) {
	int data_fd;
	int status_fd;
	uint8_t *status;
	int map_fd;
	int prog_fd;
};

FIXTURE_SETUP(bpf)
{
	static char log[65536];

	UE_SKIP_IF_UNAVAILABLE();

	self->data_fd = ue_open_data();
	ASSERT_NE(-1, self->data_fd);
	ASSERT_EQ(0, ue_open_status_page(&self->status_fd, &self->status));

	self->map_fd = ue_bpf_array_create(VALUE_SIZE, 1);
	if (self->map_fd == -1 && errno == EPERM)
		SKIP(_exit(255), "bpf() is not available: %s", strerror(errno));
	ASSERT_NE(-1, self->map_fd);
	self->prog_fd = prog_load(self->map_fd, log, sizeof(log));
	if (self->prog_fd == -1)
		TH_LOG("verifier: %s", log);
	ASSERT_NE(-1, self->prog_fd);
}

FIXTURE_TEARDOWN(bpf)
{
	close(self->prog_fd);
	close(self->map_fd);
	ue_close_status_page(self->status_fd, self->status);
	close(self->data_fd);
	ue_cleanup_events("__bpf_test_");
}

/* Payload of the test events; the member order leaves no padding */
struct bpf_payload {
	int64_t big;
	uint32_t count;
	uint32_t msg_loc;
	char msg[9];
};

TEST_F(bpf, program_sees_every_record)
{
	const char *name = "__bpf_test_rec";
	struct bpf_payload in;
	uint8_t value[VALUE_SIZE];
	struct user_reg reg;
	uint64_t runs;
	int perf_fd, i;

	ASSERT_EQ(0, ue_reg(self->data_fd,
			    "__bpf_test_rec s64 big; u32 count; __rel_loc char[] msg",
			    &reg));
	memset(&in, 0, sizeof(in));
	in.big = -5;
	snprintf(in.msg, sizeof(in.msg), "rel text");
	/* msg follows its own location word directly */
	in.msg_loc = DYN_LOC(0, sizeof(in.msg));

	perf_fd = ue_perf_open_bpf(ue_event_id(name), self->prog_fd);
	ASSERT_NE(-1, perf_fd);
	ASSERT_EQ(EVENT_STATUS_PERF, self->status[reg.status_index]);

	for (i = 1; i <= 5; i++) {
		in.count = i * 100;
		ASSERT_EQ(sizeof(in) + 4, ue_emit(self->data_fd,
						  reg.write_index, &in,
						  sizeof(in)));
	}

	ASSERT_EQ(0, ue_bpf_array_read(self->map_fd, 0, value));
	memcpy(&runs, value + RECORD_COPY, sizeof(runs));
	ASSERT_EQ(5, runs);

	/* The context is the record: payload bytes right after 8 bytes */
	ASSERT_EQ(0, memcmp(value + 8, &in, sizeof(in)));
	ASSERT_EQ(-5, *(int64_t *)(value + 8));
	ASSERT_EQ(500, *(uint32_t *)(value + 16));
	/* __rel_loc: offset counted from the end of the 4-byte word at 20 */
	ASSERT_STREQ("rel text", (char *)value + 24 + (in.msg_loc & 0xffff));

	close(perf_fd);
	ASSERT_EQ(0, self->status[reg.status_index]);

	/* Detached: further writes do not run it */
	ASSERT_EQ(sizeof(in) + 4, ue_emit(self->data_fd, reg.write_index,
					  &in, sizeof(in)));
	ASSERT_EQ(0, ue_bpf_array_read(self->map_fd, 0, value));
	memcpy(&runs, value + RECORD_COPY, sizeof(runs));
	ASSERT_EQ(5, runs);
}

TEST_F(bpf, invalid_payload_does_not_run_program)
{
	uint8_t value[VALUE_SIZE];
	struct bpf_payload in;
	struct user_reg reg;
	uint64_t runs;
	int perf_fd;

	ASSERT_EQ(0, ue_reg(self->data_fd,
			    "__bpf_test_bad s64 big; u32 count; __rel_loc char[] msg",
			    &reg));
	perf_fd = ue_perf_open_bpf(ue_event_id("__bpf_test_bad"),
				   self->prog_fd);
	ASSERT_NE(-1, perf_fd);

	memset(&in, 0, sizeof(in));
	snprintf(in.msg, sizeof(in.msg), "12345678");
	/* Reaches past the end of the payload */
	in.msg_loc = DYN_LOC(0, sizeof(in) - offsetof(struct bpf_payload, msg) + 1);
	ASSERT_EQ(-EFAULT, ue_emit(self->data_fd, reg.write_index, &in,
				   sizeof(in)));
	ASSERT_EQ(0, ue_bpf_array_read(self->map_fd, 0, value));
	memcpy(&runs, value + RECORD_COPY, sizeof(runs));
	ASSERT_EQ(0, runs);

	close(perf_fd);
}

/*
 * A program may read its context up to the end of the event's last field.
 * The first 8 bytes, the common fields, are not the program's to read: an
 * event without fields gives it nothing to read at all.
 */
TEST_F(bpf, context_reads_stop_at_the_last_field)
{
	static const struct {
		const char *name, *fields;
		int off, size;
		bool allowed;
	} cases[] = {
		{ "__bpf_test_ctx_none", "", 8, 4, false },
		{ "__bpf_test_ctx_none", "", 8, 8, false },
		{ "__bpf_test_ctx_u32", "u32 a", 8, 4, true },
		{ "__bpf_test_ctx_u32", "u32 a", 8, 8, false },
		{ "__bpf_test_ctx_u32", "u32 a", 12, 4, false },
		/* Fields are packed: b is at 12, the record ends at 20 */
		{ "__bpf_test_ctx_two", "u32 a; u64 b", 16, 4, true },
		{ "__bpf_test_ctx_two", "u32 a; u64 b", 16, 8, false },
		{ "__bpf_test_ctx_two", "u32 a; u64 b", 20, 4, false },
	};
	struct user_reg reg;
	char cmd[128];
	int i, prog_fd, perf_fd;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		snprintf(cmd, sizeof(cmd), "%s %s", cases[i].name,
			 cases[i].fields);
		ASSERT_EQ(0, ue_reg(self->data_fd, cmd, &reg));
		prog_fd = prog_load_ctx_read(cases[i].off, cases[i].size);
		ASSERT_NE(-1, prog_fd);
		perf_fd = ue_perf_open(ue_event_id(cases[i].name), 0, -1);
		ASSERT_NE(-1, perf_fd);
		if (cases[i].allowed) {
			EXPECT_EQ(0, ioctl(perf_fd, PERF_EVENT_IOC_SET_BPF,
					   prog_fd)) {
				TH_LOG("%s: %d bytes at %d: %s", cmd,
				       cases[i].size, cases[i].off,
				       strerror(errno));
			}
		} else {
			EXPECT_EQ(-1, ioctl(perf_fd, PERF_EVENT_IOC_SET_BPF,
					    prog_fd)) {
				TH_LOG("%s: %d bytes at %d were allowed", cmd,
				       cases[i].size, cases[i].off);
			}
			EXPECT_EQ(EACCES, errno);
		}
		close(perf_fd);
		close(prog_fd);
	}
}

TEST_HARNESS_MAIN
