/*
 * Cost of single MTE instructions and of tag-checked loads and stores, in
 * loops of 16 to a block (latency: each takes the previous one's result;
 * throughput: independent), the way published per-instruction tables of
 * hardware are made.
 *
 *   mte_insn untagged|none|sync|async|asymm OP SIZE_BYTES WARMUP N
 *
 * OP:
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
 *   stg-post, st2g-post, stgp-post, stzg-post
 *                      the same stores, each taking its address from the one
 *                      before's post-index writeback: the "latency" loop of
 *                      published per-instruction tables of these stores (the
 *                      tag comes from another register holding the same tag:
 *                      a store whose data register is its written-back base
 *                      is unpredictable for plain stores)
 *   dc-gva, dc-gzva    one DC block (DCZID_EL0, 64 bytes on every model) each
 *   str                8-byte stores, one to each granule (tag checked unless
 *                      the mode is untagged or none)
 * Stores and the throughput loads sweep SIZE_BYTES (a power of two, at least
 * a page) and wrap around, so SIZE_BYTES picks the cache level they hit.
 *
 * The memory is mapped PROT_MTE (except in mode untagged) and tagged with one
 * random nonzero tag, which every pointer the loops use carries, so no check
 * fails; the stores write that same tag back. The mode sets the task's tag
 * checks as mte_bench does; tag instructions are never checked, so the mode
 * matters only to ldr, ldr-tput and str, the only OPs that mode untagged
 * (plain memory) accepts. WARMUP operations run first, outside the measured
 * region, then N are measured; both are rounded up to a multiple of 16 and
 * ops= is the measured count. Metric: region cycles / ops.
 */
#include "mte.h"

#define PAGE 4096
#define GRANULE 16
#define DC_BLOCK 64
#define BLOCK 16 /* operations per loop iteration */

/*
 * One operation, BLOCK times, sweeping memory from p: each one STEP bytes
 * past the one before (through ".set" offsets, so no address arithmetic sits
 * between them), then p moves on by BLOCK * STEP bytes within the buffer at
 * base (offset masked by mask = size - 1): three instructions a block, beside
 * 16. Uses the caller's p, base, offset, mask and blocks.
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
	char *base;   /* tagged pointer to the first byte */
	uint64_t mask; /* size - 1 */
};

typedef void (*operation)(const struct buffer *, unsigned long);

static void op_irg(const struct buffer *b, unsigned long blocks)
{
	char *x = b->base;

	CHAIN(x, blocks, "irg	%[x], %[x]", "r"(0));
}

static void op_addg(const struct buffer *b, unsigned long blocks)
{
	char *x = b->base;

	CHAIN(x, blocks, "addg	%[x], %[x], #0, #1", "r"(0));
}

static void op_gmi(const struct buffer *b, unsigned long blocks)
{
	uint64_t x = 0;

	CHAIN(x, blocks, "gmi	%[x], %[tagged], %[x]", [tagged] "r"(b->base));
}

static void op_ldg(const struct buffer *b, unsigned long blocks)
{
	char *x = b->base;

	CHAIN(x, blocks, "ldg	%[x], [%[x]]", "r"(0));
}

static void op_ldr(const struct buffer *b, unsigned long blocks)
{
	char *x = b->base;

	CHAIN(x, blocks, "ldr	%[x], [%[x]]", "r"(0));
}

/* Eight destinations in turn: two rounds of eight make a block. */
#define EIGHT(insn) insn(t0) "\n\t" insn(t1) "\n\t" insn(t2) "\n\t" insn(t3) "\n\t" \
		    insn(t4) "\n\t" insn(t5) "\n\t" insn(t6) "\n\t" insn(t7)
#define EIGHT_OUTPUTS [t0] "+r"(t[0]), [t1] "+r"(t[1]), [t2] "+r"(t[2]), [t3] "+r"(t[3]), \
		      [t4] "+r"(t[4]), [t5] "+r"(t[5]), [t6] "+r"(t[6]), [t7] "+r"(t[7])

static void op_irg_tput(const struct buffer *b, unsigned long blocks)
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
	static void name(const struct buffer *b, unsigned long blocks)                 \
	{                                                                              \
		uint64_t t[8] = { 0 }, offset = 0, mask = b->mask;                     \
		char *p = b->base, *base = b->base;                                    \
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
	}

#define LDG_AT(d) "ldg	%[" #d "], [%[p], #.Loff]"
#define LDR_AT(d) "ldr	%[" #d "], [%[p], #.Loff]"
LOAD_TPUT(op_ldg_tput, LDG_AT)
LOAD_TPUT(op_ldr_tput, LDR_AT)

/* Stores sweeping memory, STEP bytes apart; the tag is the pointer's own. */
#define STORE(name, step, body)                                                        \
	static void name(const struct buffer *b, unsigned long blocks)                 \
	{                                                                              \
		uint64_t offset = 0, mask = b->mask;                                   \
		char *p = b->base, *base = b->base;                                    \
		SWEEP(step, body);                                                     \
	}

STORE(op_stg, 16, "stg	%[p], [%[p], #.Loff]")
STORE(op_stzg, 16, "stzg	%[p], [%[p], #.Loff]")
STORE(op_stgp, 16, "stgp	xzr, xzr, [%[p], #.Loff]")
STORE(op_st2g, 32, "st2g	%[p], [%[p], #.Loff]")
STORE(op_stz2g, 32, "stz2g	%[p], [%[p], #.Loff]")
STORE(op_str, 16, "str	xzr, [%[p], #.Loff]")

STORE(op_stg_post, 16, "stg	%[base], [%[p]], #16")
STORE(op_st2g_post, 32, "st2g	%[base], [%[p]], #32")
STORE(op_stgp_post, 16, "stgp	xzr, xzr, [%[p]], #16")
STORE(op_stzg_post, 16, "stzg	%[base], [%[p]], #16")

/* DC GVA/GZVA take no offset: each one moves the pointer on by a DC block. */
#define DC(name, insn)                                                                 \
	static void name(const struct buffer *b, unsigned long blocks)                 \
	{                                                                              \
		uint64_t offset = 0, mask = b->mask;                                   \
		char *p = b->base, *base = b->base;                                    \
		SWEEP(64,                                                              \
		      "dc	" insn ", %[p]\n\t"                                    \
		      "add	%[p], %[p], #64");                                     \
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
};
#define N_OPS (sizeof(ops) / sizeof(ops[0]))

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
		fprintf(stderr, "usage: %s untagged|none|sync|async|asymm OP SIZE_BYTES WARMUP N\n",
			argv[0]);
		return 2;
	}
	mode = mte_mode(argv[1]);
	for (m = 0; m < N_OPS; m++)
		if (!strcmp(argv[2], ops[m].name))
			op = &ops[m];
	if (!op) {
		fprintf(stderr, "unknown OP '%s' (valid:", argv[2]);
		for (m = 0; m < N_OPS; m++)
			fprintf(stderr, " %s", ops[m].name);
		fprintf(stderr, ")\n");
		return 2;
	}
	if (mode == UNTAGGED && !op->checked) {
		fprintf(stderr, "%s needs tagged memory: mode untagged times only ldr, ldr-tput "
			"and str\n", op->name);
		return 2;
	}
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
