/*
 * Load-to-use latency over a working set: a chase of dependent loads through
 * every cache line of the set in one random cyclic order.
 *
 *   pointer_chase SIZE_BYTES LOADS
 *
 * SIZE_BYTES (a multiple of 64; sweep it, e.g. 16 KiB to 64 MiB) is the
 * working set; LOADS dependent loads are measured, rounded up to a multiple
 * of 8 (the unroll). Metric: region cycles / ops = cycles per load. Each
 * line is loaded before the region once LOADS >= SIZE_BYTES / 64; for sets
 * far beyond the last-level cache every load misses anyway, and a smaller
 * LOADS (e.g. 20000) does.
 *
 * The set is mapped 2 MiB-aligned with MADV_HUGEPAGE so that, once the
 * kernel grants huge pages, TLB misses stay out of the latency; thp_kb= in
 * the output says how much of the process is so mapped (-1: unknown; it
 * should be SIZE_BYTES / 1024 rounded up to 2048, or more). The order is a
 * random cycle (Sattolo), so prefetchers find no stride. Before the region,
 * one unmeasured pass of min(lines, LOADS) loads leaves caches and TLBs as
 * the chase keeps them; the measured chase goes on from where it stopped.
 *
 * Cost outside the region: about 12 instructions per line to build the
 * cycle and about 4 per line for the kernel to zero the set, so ~17 M
 * instructions for 64 MiB (the largest set to use) and ~4 M for 16 MiB,
 * plus about 1.25 instructions per load of the warm-up pass.
 */
#include "bench.h"

#define HUGE_PAGE (2UL << 20)

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s SIZE_BYTES LOADS\n"
		"  SIZE_BYTES: working set, a positive multiple of %d\n"
		"  LOADS: measured dependent loads (rounded up to a multiple of 8)\n",
		prog, BENCH_LINE);
	exit(2);
}

/*
 * Makes the first word of each line point to the next line of one random
 * cycle through all of them, and returns line 0. This is Sattolo's shuffle
 * in its inside-out form, done on the pointers themselves rather than on an
 * index array: line i goes into the cycle right after a uniformly chosen
 * line j < i, so there is never more than one cycle, and each of the
 * (lines - 1)! cycles comes from exactly one sequence of choices.
 */
static void *build_chain(char *set, unsigned long lines)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL;

	*(void **)set = set;
	for (unsigned long i = 1; i < lines; i++) {
		char *line = set + i * BENCH_LINE;
		char *after = set + bench_below(&seed, i) * BENCH_LINE;

		*(void **)line = *(void **)after;
		*(void **)after = line;
	}
	return set;
}

int main(int argc, char **argv)
{
	unsigned long size, lines, loads, blocks, warm;
	char *set;
	void *p;

	if (argc != 3)
		usage(argv[0]);
	size = bench_count(argv[1], "SIZE_BYTES");
	loads = bench_count(argv[2], "LOADS");
	if (size == 0 || size % BENCH_LINE) {
		fprintf(stderr, "bad SIZE_BYTES: %lu\n", size);
		usage(argv[0]);
	}
	if (loads == 0) {
		fprintf(stderr, "bad LOADS: must be positive\n");
		usage(argv[0]);
	}
	lines = size / BENCH_LINE;
	blocks = (loads + 7) / 8;
	warm = lines < loads ? lines : loads;

	set = bench_map((size + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1), HUGE_PAGE, MADV_HUGEPAGE);
	p = build_chain(set, lines);

	bench_detail_begin();
	p = bench_chase(p, (warm + 7) / 8);
	bench_region_begin();
	p = bench_chase(p, blocks);
	bench_region_end();

	printf("pointer_chase size=%lu lines=%lu thp_kb=%ld ops=%lu\n",
	       size, lines, bench_anon_huge_kb(), blocks * 8);
	return 0;
}
