/*
 * L1 data cache bandwidth: 16-byte pair loads (or stores) to independent
 * addresses, cycling over a 16 KiB buffer that stays in the L1D.
 *
 *   l1_bandwidth load|store WARMUP N
 *
 * "load" issues `ldp x, x, [addr]`, "store" issues `stp xzr, xzr, [addr]`,
 * 16 to a loop iteration (256 consecutive bytes, no access depending on
 * another, 4 loop-control instructions per 16 accesses). WARMUP accesses
 * run first, outside the measured region, then N accesses are measured;
 * both are rounded up to a multiple of 16. ops= is the number of bytes
 * moved (16 per access). Metric: ops / region cycles = bytes per cycle.
 *
 * gem5 splits these instructions: an ldp of x registers is an address add
 * plus one 16-byte load (2 micro-ops), an stp an address add plus two
 * 8-byte stores (3 micro-ops). So where rename is 4 micro-ops wide, as on
 * the A76 model, the load loop is bound by rename (36 micro-ops per 256
 * bytes) before its 2 load pipes, and the store loop by the 32 8-byte
 * stores per 256 bytes on 2 store pipes.
 *
 * Cost: about 1.25 instructions per access; e.g. WARMUP 2048 N 100000.
 */
#include <string.h>

#include "bench.h"

#define BUF_BYTES 16384
#define PAIR_BYTES 16
#define UNROLL 16

/* 32 KiB alignment keeps address bit 14 clear, so one `and` wraps the
 * pointer from the end of the buffer back to its start. */
static unsigned char buf[BUF_BYTES] __attribute__((aligned(2 * BUF_BYTES)));

#define WRAP "and	%0, %0, #0xffffffffffffbfff\n\t"

static void load_loop(unsigned char *p, unsigned long blocks)
{
	asm volatile("cbz	%1, 2f\n"
		     ".p2align 6\n"
		     "1:\n\t"
		     "ldp	x2, x3, [%0, #0]\n\t"
		     "ldp	x4, x5, [%0, #16]\n\t"
		     "ldp	x6, x7, [%0, #32]\n\t"
		     "ldp	x8, x9, [%0, #48]\n\t"
		     "ldp	x2, x3, [%0, #64]\n\t"
		     "ldp	x4, x5, [%0, #80]\n\t"
		     "ldp	x6, x7, [%0, #96]\n\t"
		     "ldp	x8, x9, [%0, #112]\n\t"
		     "ldp	x2, x3, [%0, #128]\n\t"
		     "ldp	x4, x5, [%0, #144]\n\t"
		     "ldp	x6, x7, [%0, #160]\n\t"
		     "ldp	x8, x9, [%0, #176]\n\t"
		     "ldp	x2, x3, [%0, #192]\n\t"
		     "ldp	x4, x5, [%0, #208]\n\t"
		     "ldp	x6, x7, [%0, #224]\n\t"
		     "ldp	x8, x9, [%0, #240]\n\t"
		     "add	%0, %0, #256\n\t"
		     WRAP
		     "subs	%1, %1, #1\n\t"
		     "b.ne	1b\n"
		     "2:"
		     : "+r"(p), "+r"(blocks)
		     :
		     : "cc", "memory", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9");
}

static void store_loop(unsigned char *p, unsigned long blocks)
{
	asm volatile("cbz	%1, 2f\n"
		     ".p2align 6\n"
		     "1:\n\t"
		     "stp	xzr, xzr, [%0, #0]\n\t"
		     "stp	xzr, xzr, [%0, #16]\n\t"
		     "stp	xzr, xzr, [%0, #32]\n\t"
		     "stp	xzr, xzr, [%0, #48]\n\t"
		     "stp	xzr, xzr, [%0, #64]\n\t"
		     "stp	xzr, xzr, [%0, #80]\n\t"
		     "stp	xzr, xzr, [%0, #96]\n\t"
		     "stp	xzr, xzr, [%0, #112]\n\t"
		     "stp	xzr, xzr, [%0, #128]\n\t"
		     "stp	xzr, xzr, [%0, #144]\n\t"
		     "stp	xzr, xzr, [%0, #160]\n\t"
		     "stp	xzr, xzr, [%0, #176]\n\t"
		     "stp	xzr, xzr, [%0, #192]\n\t"
		     "stp	xzr, xzr, [%0, #208]\n\t"
		     "stp	xzr, xzr, [%0, #224]\n\t"
		     "stp	xzr, xzr, [%0, #240]\n\t"
		     "add	%0, %0, #256\n\t"
		     WRAP
		     "subs	%1, %1, #1\n\t"
		     "b.ne	1b\n"
		     "2:"
		     : "+r"(p), "+r"(blocks)
		     :
		     : "cc", "memory");
}

int main(int argc, char **argv)
{
	void (*loop)(unsigned char *, unsigned long);
	unsigned long warmup, n, blocks;

	if (argc != 4) {
		fprintf(stderr, "usage: %s load|store WARMUP N\n", argv[0]);
		return 2;
	}
	if (!strcmp(argv[1], "load"))
		loop = load_loop;
	else if (!strcmp(argv[1], "store"))
		loop = store_loop;
	else {
		fprintf(stderr, "unknown access '%s' (valid: load, store)\n", argv[1]);
		return 2;
	}
	warmup = bench_count(argv[2], "WARMUP");
	n = bench_count(argv[3], "N");
	blocks = (n + UNROLL - 1) / UNROLL;

	memset(buf, 1, sizeof(buf));
	bench_detail_begin();
	loop(buf, (warmup + UNROLL - 1) / UNROLL);
	bench_region_begin();
	loop(buf, blocks);
	bench_region_end();

	printf("l1_bandwidth access=%s buffer=%d accesses=%lu ops=%lu\n",
	       argv[1], BUF_BYTES, blocks * UNROLL, blocks * UNROLL * PAIR_BYTES);
	return 0;
}
