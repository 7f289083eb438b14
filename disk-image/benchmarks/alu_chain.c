/*
 * Latency of a dependent integer operation: a chain in which every add (or
 * mul) takes the previous one's result.
 *
 *   alu_chain add|mul WARMUP N
 *
 * "add" issues `add x, x, y`, "mul" issues `mul x, x, y`, 16 to a loop
 * iteration; the loop counter runs beside the chain and does not lengthen
 * it. WARMUP operations run first, outside the measured region, then N are
 * measured. Both counts are rounded up to a multiple of 16, and ops= in the
 * output is the real measured count. Metric: region cycles / ops = cycles
 * per operation (1 for add, the multiplier latency for mul).
 *
 * Cost: about 1.1 instructions per operation; e.g. WARMUP 1600 N 160000.
 */
#include <string.h>

#include "bench.h"

static unsigned long add_chain(unsigned long x, unsigned long y, unsigned long blocks)
{
	asm volatile("cbz	%1, 2f\n"
		     ".p2align 6\n"
		     "1:\n\t"
		     ".rept	16\n\t"
		     "add	%0, %0, %2\n\t"
		     ".endr\n\t"
		     "subs	%1, %1, #1\n\t"
		     "b.ne	1b\n"
		     "2:"
		     : "+r"(x), "+r"(blocks)
		     : "r"(y)
		     : "cc");
	return x;
}

static unsigned long mul_chain(unsigned long x, unsigned long y, unsigned long blocks)
{
	asm volatile("cbz	%1, 2f\n"
		     ".p2align 6\n"
		     "1:\n\t"
		     ".rept	16\n\t"
		     "mul	%0, %0, %2\n\t"
		     ".endr\n\t"
		     "subs	%1, %1, #1\n\t"
		     "b.ne	1b\n"
		     "2:"
		     : "+r"(x), "+r"(blocks)
		     : "r"(y)
		     : "cc");
	return x;
}

int main(int argc, char **argv)
{
	unsigned long (*chain)(unsigned long, unsigned long, unsigned long);
	unsigned long warmup, n, blocks, x;

	if (argc != 4) {
		fprintf(stderr, "usage: %s add|mul WARMUP N\n", argv[0]);
		return 2;
	}
	if (!strcmp(argv[1], "add"))
		chain = add_chain;
	else if (!strcmp(argv[1], "mul"))
		chain = mul_chain;
	else {
		fprintf(stderr, "unknown operation '%s' (valid: add, mul)\n", argv[1]);
		return 2;
	}
	warmup = bench_count(argv[2], "WARMUP");
	n = bench_count(argv[3], "N");
	blocks = (n + 15) / 16;

	bench_detail_begin();
	x = chain(1, 3, (warmup + 15) / 16);
	bench_region_begin();
	x = chain(x, 3, blocks);
	bench_region_end();

	printf("alu_chain op=%s result=%#lx ops=%lu\n", argv[1], x, blocks * 16);
	return 0;
}
