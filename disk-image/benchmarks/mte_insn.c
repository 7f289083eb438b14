/*
 * Cost of single MTE instructions and of tag-checked loads and stores, in
 * loops of 16 to a block: latency chains (each takes the previous one's
 * result) and independent operations for throughput, as published
 * per-instruction tables of hardware time them.
 *
 *   mte_insn untagged|none|sync|async|asymm OP SIZE_BYTES WARMUP N
 *
 * OP:
 *   loop               the loop alone (no operation): its own cycles, which
 *                      a published table subtracts and this one shows beside
 *   irg, addg, gmi     latency chains: the result is the next one's source
 *   ldg                latency chain: LDG of one granule into its own address
 *                      register (LDG merges the tag into it)
 *   ldr                load-to-use latency: a chase over SIZE_BYTES, one
 *                      64-byte line a step in a random cycle, every pointer
 *                      carrying the memory's tag (tag checked unless the
 *                      mode is untagged or none)
 *   irg-tput           independent IRGs (eight destinations in turn)
 *   ldg-tput, ldr-tput independent loads of the next granules (eight
 *                      destinations in turn: LDG also reads its destination)
 *   stg, stzg, stgp    one granule each, the next granule each time
 *   st2g, stz2g        two granules each
 *   stg-one, st2g-one, stgp-one, stzg-one, ldg-one
 *                      the same instruction on one granule over and over,
 *                      the published throughput loops' shape (ldg-one into
 *                      one register, so each LDG also waits for the last)
 *   stg-post, st2g-post, stgp-post, stzg-post
 *                      the stores, each taking its address from the one
 *                      before's post-index writeback: the "latency" loop of
 *                      published per-instruction tables of these stores (the
 *                      tag comes from another register holding the same tag:
 *                      a store whose data register is its written-back base
 *                      is unpredictable for plain stores)
 *   dc-gva, dc-gzva    one DC block each (DCZID_EL0's, which must be 64
 *                      bytes), each followed by the add that moves the
 *                      address on (DC takes no offset)
 *   str                8-byte stores, one to each granule (tag checked unless
 *                      the mode is untagged or none)
 * Stores and the throughput loads sweep SIZE_BYTES (a power of two, at least
 * a page) and wrap around; the region goes on from where the warm-up
 * stopped, so SIZE_BYTES picks the cache level they hit.
 *
 * The memory is mapped PROT_MTE (except in mode untagged) and tagged with one
 * random nonzero tag, which every pointer the loops use carries, so no check
 * fails; the stores write that same tag back. The mode sets the task's tag
 * checks as mte_bench does; tag instructions are never checked, so the mode
 * matters only to the OPs that access memory through a tag check, the only
 * ones mode untagged (plain memory) accepts. WARMUP operations run first,
 * outside the measured region, then N are measured; both are rounded up to a
 * multiple of 16 and ops= is the measured count. Metric: region cycles / ops.
 */
#include "mte.h"

#define PAGE 4096
#define GRANULE 16
#define DC_BLOCK 64 /* the DC loops' step, written out in their asm */
#define BLOCK 16 /* operations per loop iteration */

/*
 * One operation, BLOCK times, sweeping memory from p: each one STEP bytes
 * past the one before (through ".set" offsets, so no address arithmetic sits
 * between them), then p moves on by BLOCK * STEP bytes within the buffer at
 * base (offset masked by mask = size - 1): five instructions a block with the
 * loop's own, beside 16. Uses the caller's p, base, offset, mask and blocks
 * (BEGIN_SWEEP declares them from the buffer, END_SWEEP keeps the position).
 */
#define SWEEP(step, body, ...)                                                        \
	asm volatile(".arch armv8.5-a+memtag\n\t"                                      \
		     "cbz	%[n], 2f\n"                                            \
		     ".p2align 6\n"                                                \
		     "1:\n\t"                                                      \
		     ".set	.Loff, 0\n\t"                                          \
		     ".rept	16\n\t"                                                \
		     body "\n\t"                                                   \
		     ".set	.Loff, .Loff + " #step "\n\t"                          \
		     ".endr\n\t"                                                   \
		     "add	%[off], %[off], #16 * " #step "\n\t"                   \
		     "and	%[off], %[off], %[mask]\n\t"                           \
		     "add	%[p], %[base], %[off]\n\t"                             \
		     "subs	%[n], %[n], #1\n\t"                                    \
		     "b.ne	1b\n"                                                  \
		     "2:"                                                          \
		     : [p] "+&r"(p), [off] "+&r"(offset), [n] "+&r"(blocks), ##__VA_ARGS__ \
		     : [base] "r"(base), [mask] "r"(mask)                           \
		     : "cc", "memory")

/* One operation whose result is the next one's source, BLOCK times a loop. */
#define CHAIN(x, blocks, body, ...)                                                    \
	asm volatile(".arch armv8.5-a+memtag\n\t"                                      \
		     "cbz	%[n], 2f\n"                                            \
		     ".p2align 6\n"                                                \
		     "1:\n\t"                                                      \
		     ".rept	16\n\t"                                                \
		     body "\n\t"                                                   \
		     ".endr\n\t"                                                   \
		     "subs	%[n], %[n], #1\n\t"                                    \
		     "b.ne	1b\n"                                                  \
		     "2:"                                                          \
		     : [x] "+r"(x), [n] "+r"(blocks)                                \
		     : __VA_ARGS__                                                  \
		     : "cc", "memory")

struct buffer {
	char *base;      /* tagged pointer to the first byte */
	uint64_t mask;   /* size - 1 */
	uint64_t offset; /* where the next sweep starts */
	char *chase;     /* where the next ldr chain starts */
};

#define BEGIN_SWEEP(b)                                                                 \
	uint64_t offset = (b)->offset, mask = (b)->mask;                               \
	char *base = (b)->base, *p = base + offset
#define END_SWEEP(b) ((b)->offset = offset)

typedef void (*operation)(struct buffer *, unsigned long);

static void op_irg(struct buffer *b, unsigned long blocks)
{
	char *x = b->base;

	CHAIN(x, blocks, "irg	%[x], %[x]", "r"(0));
}

static void op_addg(struct buffer *b, unsigned long blocks)
{
	char *x = b->base;

	CHAIN(x, blocks, "addg	%[x], %[x], #0, #1", "r"(0));
}

static void op_gmi(struct buffer *b, unsigned long blocks)
{
	uint64_t x = 0;

	CHAIN(x, blocks, "gmi	%[x], %[tagged], %[x]", [tagged] "r"(b->base));
}

static void op_ldg(struct buffer *b, unsigned long blocks)
{
	char *x = b->base;

	CHAIN(x, blocks, "ldg	%[x], [%[x]]", "r"(0));
}

static void op_ldr(struct buffer *b, unsigned long blocks)
{
	char *x = b->chase;

	CHAIN(x, blocks, "ldr	%[x], [%[x]]", "r"(0));
	b->chase = x;
}

/* Eight destinations in turn: two rounds of eight make a block. */
#define EIGHT(insn) insn(t0) "\n\t" insn(t1) "\n\t" insn(t2) "\n\t" insn(t3) "\n\t" \
		    insn(t4) "\n\t" insn(t5) "\n\t" insn(t6) "\n\t" insn(t7)
#define EIGHT_OUTPUTS [t0] "+r"(t[0]), [t1] "+r"(t[1]), [t2] "+r"(t[2]), [t3] "+r"(t[3]), \
		      [t4] "+r"(t[4]), [t5] "+r"(t[5]), [t6] "+r"(t[6]), [t7] "+r"(t[7])

static void op_irg_tput(struct buffer *b, unsigned long blocks)
{
	uint64_t t[8] = { 0 };

#define IRG(d) "irg	%[" #d "], %[base]"
	asm volatile(".arch armv8.5-a+memtag\n\t"
		     "cbz	%[n], 2f\n"
		     ".p2align 6\n"
		     "1:\n\t"
		     EIGHT(IRG) "\n\t"
		     EIGHT(IRG) "\n\t"
		     "subs	%[n], %[n], #1\n\t"
		     "b.ne	1b\n"
		     "2:"
		     : [n] "+r"(blocks), EIGHT_OUTPUTS
		     : [base] "r"(b->base)
		     : "cc");
#undef IRG
}

/* Independent loads of eight granules, then the next eight: GRANULE apart. */
#define LOAD_TPUT(name, insn)                                                          \
	static void name(struct buffer *b, unsigned long blocks)                 \
	{                                                                              \
		uint64_t t[8] = { 0 };                                                 \
		BEGIN_SWEEP(b);                                                        \
		SWEEP(16,                                                              \
		      ".if ((.Loff / 16) & 7) == 0\n\t" insn(t0) "\n\t"                  \
		      ".elseif ((.Loff / 16) & 7) == 1\n\t" insn(t1) "\n\t"              \
		      ".elseif ((.Loff / 16) & 7) == 2\n\t" insn(t2) "\n\t"              \
		      ".elseif ((.Loff / 16) & 7) == 3\n\t" insn(t3) "\n\t"              \
		      ".elseif ((.Loff / 16) & 7) == 4\n\t" insn(t4) "\n\t"              \
		      ".elseif ((.Loff / 16) & 7) == 5\n\t" insn(t5) "\n\t"              \
		      ".elseif ((.Loff / 16) & 7) == 6\n\t" insn(t6) "\n\t"              \
		      ".else\n\t" insn(t7) "\n\t"                                      \
		      ".endif",                                                        \
		      EIGHT_OUTPUTS);                                                  \
		END_SWEEP(b);                                                          \
	}

#define LDG_AT(d) "ldg	%[" #d "], [%[p], #.Loff]"
#define LDR_AT(d) "ldr	%[" #d "], [%[p], #.Loff]"
LOAD_TPUT(op_ldg_tput, LDG_AT)
LOAD_TPUT(op_ldr_tput, LDR_AT)

/* Stores sweeping memory, STEP bytes apart; the tag is the pointer's own. */
#define STORE(name, step, body)                                                        \
	static void name(struct buffer *b, unsigned long blocks)                 \
	{                                                                              \
		BEGIN_SWEEP(b);                                                        \
		SWEEP(step, body);                                                     \
		END_SWEEP(b);                                                          \
	}

STORE(op_stg, 16, "stg	%[p], [%[p], #.Loff]")
STORE(op_stzg, 16, "stzg	%[p], [%[p], #.Loff]")
STORE(op_stgp, 16, "stgp	xzr, xzr, [%[p], #.Loff]")
STORE(op_st2g, 32, "st2g	%[p], [%[p], #.Loff]")
STORE(op_stz2g, 32, "stz2g	%[p], [%[p], #.Loff]")
STORE(op_str, 16, "str	xzr, [%[p], #.Loff]")

STORE(op_loop, 16, "")
STORE(op_stg_one, 0, "stg	%[p], [%[p]]")
STORE(op_st2g_one, 0, "st2g	%[p], [%[p]]")
STORE(op_stgp_one, 0, "stgp	xzr, xzr, [%[p]]")
STORE(op_stzg_one, 0, "stzg	%[p], [%[p]]")

/* One register, one granule: each LDG merges into the register the last one
 * wrote, as the published loop's does. */
static void op_ldg_one(struct buffer *b, unsigned long blocks)
{
	uint64_t t0 = 0;
	BEGIN_SWEEP(b);

	SWEEP(0, "ldg	%[t0], [%[p]]", [t0] "+r"(t0));
	END_SWEEP(b);
}

STORE(op_stg_post, 16, "stg	%[base], [%[p]], #16")
STORE(op_st2g_post, 32, "st2g	%[base], [%[p]], #32")
STORE(op_stgp_post, 16, "stgp	xzr, xzr, [%[p]], #16")
STORE(op_stzg_post, 16, "stzg	%[base], [%[p]], #16")

/* DC GVA/GZVA take no offset: each one moves the pointer on by a DC block. */
#define DC(name, insn)                                                                 \
	static void name(struct buffer *b, unsigned long blocks)                 \
	{                                                                              \
		BEGIN_SWEEP(b);                                                        \
		SWEEP(64, /* DC_BLOCK */                                               \
		      "dc	" insn ", %[p]\n\t"                                    \
		      "add	%[p], %[p], #64");                                     \
		END_SWEEP(b);                                                          \
	}

DC(op_dc_gva, "gva")
DC(op_dc_gzva, "gzva")

struct op {
	const char *name;
	operation run;
	int checked; /* a tag-checked access, which mode untagged may time */
};

static const struct op ops[] = {
	{ "irg", op_irg, 0 },           { "addg", op_addg, 0 },
	{ "gmi", op_gmi, 0 },           { "ldg", op_ldg, 0 },
	{ "ldr", op_ldr, 1 },           { "irg-tput", op_irg_tput, 0 },
	{ "ldg-tput", op_ldg_tput, 0 }, { "ldr-tput", op_ldr_tput, 1 },
	{ "stg", op_stg, 0 },           { "stzg", op_stzg, 0 },
	{ "stgp", op_stgp, 0 },         { "st2g", op_st2g, 0 },
	{ "stz2g", op_stz2g, 0 },       { "dc-gva", op_dc_gva, 0 },
	{ "dc-gzva", op_dc_gzva, 0 },   { "str", op_str, 1 },
	{ "stg-post", op_stg_post, 0 }, { "st2g-post", op_st2g_post, 0 },
	{ "stgp-post", op_stgp_post, 0 }, { "stzg-post", op_stzg_post, 0 },
	{ "stg-one", op_stg_one, 0 },   { "st2g-one", op_st2g_one, 0 },
	{ "stgp-one", op_stgp_one, 0 }, { "stzg-one", op_stzg_one, 0 },
	{ "ldg-one", op_ldg_one, 0 },   { "loop", op_loop, 0 },
};
#define N_OPS (sizeof(ops) / sizeof(ops[0]))

/* The OPs (those that mode untagged accepts, if checked_only) on standard
 * error, space-separated, closing an error line. */
static void print_ops(int checked_only)
{
	for (unsigned int m = 0; m < N_OPS; m++)
		if (!checked_only || ops[m].checked)
			fprintf(stderr, " %s", ops[m].name);
	fprintf(stderr, checked_only ? "\n" : ")\n");
}

/* DC GVA/GZVA tag one DCZID_EL0 block, which the loops take to be DC_BLOCK. */
static void check_dc_block(const struct op *op)
{
	uint64_t dczid;

	if (op->run != op_dc_gva && op->run != op_dc_gzva)
		return;
	asm("mrs	%0, dczid_el0" : "=r"(dczid));
	if ((dczid & 0x10) || (4UL << (dczid & 0xf)) != DC_BLOCK) {
		fprintf(stderr, "%s: DCZID_EL0 is %#lx (DZP or a block other than %d bytes)\n",
			op->name, (unsigned long)dczid, DC_BLOCK);
		exit(1);
	}
}

/* A random nonzero tag on base, stored for every granule of the buffer. */
static char *tag_buffer(char *base, size_t size)
{
	char *tagged;

	asm volatile(".arch armv8.5-a+memtag\n\t"
		     "irg	%0, %1"
		     : "=r"(tagged)
		     : "r"(base));
	for (size_t at = 0; at < size; at += 2 * GRANULE)
		asm volatile(".arch armv8.5-a+memtag\n\t"
			     "st2g	%0, [%0]"
			     :
			     : "r"(tagged + at)
			     : "memory");
	return tagged;
}

/* Each 64-byte line holds a pointer (tagged as base is) to the next line of a
 * random cycle through all of them, for the ldr chain. */
static void link_lines(char *base, size_t size)
{
	size_t lines = size / BENCH_LINE;
	size_t *order = malloc(lines * sizeof(*order));
	uint64_t state = 0x9e3779b97f4a7c15ULL;

	if (!order)
		bench_die("malloc");
	for (size_t i = 0; i < lines; i++)
		order[i] = i;
	for (size_t i = lines - 1; i > 0; i--) {
		size_t j = bench_below(&state, i + 1), swap = order[i];

		order[i] = order[j];
		order[j] = swap;
	}
	for (size_t i = 0; i < lines; i++)
		*(char **)(base + order[i] * BENCH_LINE) =
			base + order[(i + 1) % lines] * BENCH_LINE;
	free(order);
}

int main(int argc, char **argv)
{
	unsigned long size, warmup, n, blocks;
	const struct op *op = NULL;
	struct buffer buffer;
	enum mode mode;
	unsigned int m;
	char *memory;

	if (argc != 6) {
		fprintf(stderr, "usage: %s ", argv[0]);
		print_modes("|");
		fprintf(stderr, " OP SIZE_BYTES WARMUP N\n");
		return 2;
	}
	mode = mte_mode(argv[1]);
	for (m = 0; m < N_OPS; m++)
		if (!strcmp(argv[2], ops[m].name))
			op = &ops[m];
	if (!op) {
		fprintf(stderr, "unknown OP '%s' (valid:", argv[2]);
		print_ops(0);
		return 2;
	}
	if (mode == UNTAGGED && !op->checked) {
		fprintf(stderr, "%s needs tagged memory: mode untagged times only", op->name);
		print_ops(1);
		return 2;
	}
	check_dc_block(op);
	size = bench_count(argv[3], "SIZE_BYTES");
	warmup = bench_count(argv[4], "WARMUP");
	n = bench_count(argv[5], "N");
	if (size < PAGE || (size & (size - 1))) {
		fprintf(stderr, "SIZE_BYTES must be a power of two of at least %d\n", PAGE);
		return 2;
	}

	memory = bench_map(size, size, MADV_NOHUGEPAGE);
	buffer.base = memory;
	if (mode != UNTAGGED) {
		set_check_mode(mode);
		if (mprotect(memory, size, PROT_READ | PROT_WRITE | PROT_MTE)) {
			perror("mprotect(PROT_MTE)");
			return 1;
		}
		buffer.base = tag_buffer(memory, size);
	}
	buffer.mask = size - 1;
	buffer.offset = 0;
	buffer.chase = buffer.base;
	link_lines(buffer.base, size);
	blocks = (n + BLOCK - 1) / BLOCK;

	bench_detail_begin();
	op->run(&buffer, (warmup + BLOCK - 1) / BLOCK);
	bench_region_begin();
	op->run(&buffer, blocks);
	bench_region_end();
	printf("mte_insn mode=%s op=%s size=%lu ops=%lu\n", mode_names[mode], op->name, size,
	       blocks * BLOCK);
	return 0;
}
