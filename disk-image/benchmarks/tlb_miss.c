/*
 * Cost of TLB misses: a chase of dependent loads that visits PAGES 4 KiB
 * pages in one random cyclic order, one cache line per page.
 *
 *   tlb_miss PAGES LOADS
 *
 * The pages are mapped with MADV_NOHUGEPAGE (thp_kb= in the output should be
 * 0), so each needs a TLB entry of its own. The line used in page i sits at
 * line slot ((i >> 1) ^ (i >> 7)) mod 64: every slot is used equally and,
 * for contiguous frames, consecutive pages spread over all sets of caches
 * with up to 8192 sets. LOADS dependent loads are measured, rounded up to a
 * multiple of 8; before the region one unmeasured pass of min(PAGES, LOADS)
 * loads warms TLBs and caches, and the measured chase goes on from there.
 * Metric: region cycles / ops = cycles per load.
 *
 * Once PAGES exceeds the L1 DTLB (48 entries on the A76 model) and then the
 * L2 TLB (1280), loads add an L2 TLB lookup and then a table walk. The data
 * touched is PAGES * 64 bytes, so to isolate the translation cost subtract
 * the latency of `pointer_chase <PAGES * 64> LOADS` (as many lines, on huge
 * pages) or compare PAGES values whose data stays in one cache level.
 *
 * Cost outside the region: one page population per page (several hundred
 * kernel instructions each: keep PAGES <= 8192 or so), about 20
 * instructions per page to build the cycle, and about 1.25 instructions per
 * load of the warm-up pass; e.g. PAGES 4096 LOADS 20000.
 */
#include <unistd.h>

#include "bench.h"

#define PAGE 4096UL

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s PAGES LOADS\n"
		"  PAGES: 4 KiB pages visited, one line each (at most 2^18)\n"
		"  LOADS: measured dependent loads (rounded up to a multiple of 8)\n",
		prog);
	exit(2);
}

static char *line_of(char *pages, unsigned long i)
{
	return pages + i * PAGE + (((i >> 1) ^ (i >> 7)) % (PAGE / BENCH_LINE)) * BENCH_LINE;
}

/* One random cycle through the pages' lines, built as in pointer_chase.c
 * (inside-out Sattolo on the pointers themselves). */
static void build_chain(char *pages, unsigned long npages)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL;

	*(void **)line_of(pages, 0) = line_of(pages, 0);
	for (unsigned long i = 1; i < npages; i++) {
		char *line = line_of(pages, i);
		char *after = line_of(pages, bench_below(&seed, i));

		*(void **)line = *(void **)after;
		*(void **)after = line;
	}
}

int main(int argc, char **argv)
{
	unsigned long npages, loads, blocks, warm;
	char *pages;
	void *p;

	if (argc != 3)
		usage(argv[0]);
	npages = bench_count(argv[1], "PAGES");
	loads = bench_count(argv[2], "LOADS");
	if (npages == 0 || npages > (1UL << 18)) {
		fprintf(stderr, "bad PAGES: %lu\n", npages);
		usage(argv[0]);
	}
	if (loads == 0) {
		fprintf(stderr, "bad LOADS: must be positive\n");
		usage(argv[0]);
	}
	if (sysconf(_SC_PAGESIZE) != (long)PAGE) {
		fprintf(stderr, "tlb_miss needs 4 KiB pages, the kernel has %ld\n",
			sysconf(_SC_PAGESIZE));
		return 1;
	}
	blocks = (loads + 7) / 8;
	warm = npages < loads ? npages : loads;

	pages = bench_map(npages * PAGE, PAGE, MADV_NOHUGEPAGE);
	build_chain(pages, npages);

	bench_detail_begin();
	p = bench_chase(line_of(pages, 0), (warm + 7) / 8);
	bench_region_begin();
	p = bench_chase(p, blocks);
	bench_region_end();

	printf("tlb_miss pages=%lu thp_kb=%ld ops=%lu\n",
	       npages, bench_anon_huge_kb(), blocks * 8);
	return 0;
}
