/*
 * What page-table-heavy memory operations cost (claim C2: page-table pages
 * protected by a kernel protection key, every page-table write bracketed by
 * POR_EL1 switches).
 *
 *   pgtable_bench fork|munmap|spawn 4k|64k|pmd MIB ROUNDS
 *
 * fork and munmap first build the populated anonymous memory they work on,
 * so that the measured region holds no page faults of their set-up.
 *
 * "fork": one mapping of MIB MiB; the region holds ROUNDS fork() calls, each
 * copying the mapping's page tables (write-protecting the parent's entries and
 * writing the child's). Each child blocks on a pipe at once and is released
 * and reaped after the region, so the region holds no teardown.
 *
 * "munmap": ROUNDS mappings of MIB MiB each; the region holds ROUNDS
 * munmap() calls, each clearing the mapping's entries, freeing its pages and
 * its page-table pages.
 *
 * "spawn" is a kernel build's shape in small: the region holds ROUNDS
 * process lives one after the other, each a fork, an exec of this program
 * (from /proc/self/exe) as a helper that populates MIB MiB and exits, and
 * the reap; page tables are built, copied and freed as compiler runs do.
 * One life runs before the region, so the measured ones find the program
 * in the page cache.
 *
 * 4k maps the memory with small folios, one per 4 KiB page (no THP of any
 * size); 64k with 64 KiB folios and no other size (multi-size THP), still
 * mapped by page entries (arm64 folds each folio's 16 into one contiguous
 * block). A 2 MiB THP, mapped by a single block entry, would leave next to
 * no page table to copy or clear; pmd (fork and munmap) therefore allocates
 * 2 MiB folios and maps each by page entries, as micromm's "h:1" measures:
 * changing one page's protection and back splits the block entry while the
 * folio stays whole (the kernel's mm selftests PTE-map THPs so), and the
 * program fails if any memory is still mapped by block entries. The folio
 * setting needs root; the program fails if the kernel lacks it, and prints
 * how many folios of its size the kernel allocated while the memory was
 * populated (folios_64k or folios_pmd, beside the number asked for), so a run
 * shows which it measured. ops= counts the forks, munmaps or lives.
 */
#define _GNU_SOURCE
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define FOLIO_64K (64UL << 10)
#define PMD_SIZE_ (2UL << 20)

/*
 * MIB MiB of populated anonymous memory aligned to 2 MiB (whole page-table
 * pages, the same layout in every run). Populating faults the memory in
 * through the same allocation path as touching it, so 64 KiB folios come as
 * they would on first touch, in far fewer instructions.
 */
static char *map_populated(unsigned long mib)
{
	return bench_map(mib << 20, PMD_SIZE_, MADV_NORMAL);
}

/* The folio size pmd asks for: its memory is mapped by page entries. */
static int pte_mapped_pmd_folios;

/*
 * map_populated(), then with pmd every 2 MiB folio mapped by page entries.
 * A pmd run that got fewer 2 MiB folios than it asked for, or any memory still
 * mapped by block entries, would measure something else: it fails before its
 * region.
 */
static char *map_for_run(unsigned long mib)
{
	const char *counter = BENCH_THP_PMD "/stats/anon_fault_alloc";
	const unsigned long wanted = (mib << 20) / PMD_SIZE_;
	const long page = sysconf(_SC_PAGESIZE);
	long before, got, block_kb;
	char *p;

	if (!pte_mapped_pmd_folios)
		return map_populated(mib);
	before = bench_read_counter(counter);
	p = map_populated(mib);
	got = bench_read_counter(counter) - before;
	if (before < 0 || got < (long)wanted) {
		fprintf(stderr, "pgtable_bench: %ld of %lu 2 MiB folios allocated (%s)\n",
			before < 0 ? -1 : got, wanted, counter);
		exit(1);
	}
	for (unsigned long off = 0; off < (mib << 20); off += PMD_SIZE_) {
		if (mprotect(p + off + page, page, PROT_READ) ||
		    mprotect(p + off + page, page, PROT_READ | PROT_WRITE))
			bench_die("mprotect");
	}
	block_kb = bench_anon_huge_kb();
	if (block_kb != 0) {
		if (block_kb < 0)
			fprintf(stderr, "pgtable_bench: cannot read /proc/self/smaps_rollup\n");
		else
			fprintf(stderr, "pgtable_bench: %ld kB still mapped by block entries\n",
				block_kb);
		exit(1);
	}
	return p;
}

static void run_fork(unsigned long mib, unsigned long rounds)
{
	pid_t *children = calloc(rounds, sizeof(*children));
	int release[2];
	char byte;

	if (!children)
		bench_die("calloc");
	map_for_run(mib);
	if (pipe(release))
		bench_die("pipe");
	/* No warm-up loop: the core model starts at the region (its TLBs and
	 * predictors cold, the caches warmed by the fast CPU). */
	bench_detail_begin();
	bench_region_begin();
	for (unsigned long i = 0; i < rounds; i++) {
		children[i] = fork();
		if (children[i] < 0)
			bench_die("fork");
		if (children[i] == 0) {
			close(release[1]);
			/* Returns 0 once the parent closes its end. */
			if (read(release[0], &byte, 1) < 0)
				_exit(1);
			_exit(0);
		}
	}
	bench_region_end();
	close(release[1]);
	for (unsigned long i = 0; i < rounds; i++)
		bench_reap("pgtable_bench", children[i]);
	free(children);
}

static void run_munmap(unsigned long mib, unsigned long rounds)
{
	char **maps = calloc(rounds, sizeof(*maps));

	if (!maps)
		bench_die("calloc");
	for (unsigned long i = 0; i < rounds; i++)
		maps[i] = map_for_run(mib);
	/* No warm-up loop: the core model starts at the region (its TLBs and
	 * predictors cold, the caches warmed by the fast CPU). */
	bench_detail_begin();
	bench_region_begin();
	for (unsigned long i = 0; i < rounds; i++)
		if (munmap(maps[i], mib << 20))
			bench_die("munmap");
	bench_region_end();
	free(maps);
}

static void spawn_one(const char *mib_text)
{
	pid_t pid = fork();

	if (pid < 0)
		bench_die("fork");
	if (pid == 0) {
		execl("/proc/self/exe", "pgtable_bench", "helper", mib_text, (char *)NULL);
		_exit(127);
	}
	bench_reap("pgtable_bench", pid);
}

static void run_spawn(const char *mib_text, unsigned long rounds)
{
	bench_detail_begin();
	spawn_one(mib_text);
	bench_region_begin();
	for (unsigned long i = 0; i < rounds; i++)
		spawn_one(mib_text);
	bench_region_end();
}

int main(int argc, char **argv)
{
	unsigned long mib, rounds, mappings, folio_size;
	const char *counter;
	long folios_before;

	/* The exec'd life of "spawn": its folio setting is the parent's. */
	if (argc == 3 && !strcmp(argv[1], "helper")) {
		map_populated(bench_count(argv[2], "MiB"));
		return 0;
	}
	if (argc != 5 || (strcmp(argv[2], "4k") && strcmp(argv[2], "64k") &&
			  strcmp(argv[2], "pmd"))) {
		fprintf(stderr, "usage: pgtable_bench fork|munmap|spawn 4k|64k|pmd MIB ROUNDS\n");
		return 2;
	}
	pte_mapped_pmd_folios = !strcmp(argv[2], "pmd");
	if (pte_mapped_pmd_folios && !strcmp(argv[1], "spawn")) {
		fprintf(stderr, "pgtable_bench: pmd is for fork and munmap\n");
		return 2;
	}
	mib = bench_count(argv[3], "MiB");
	rounds = bench_count(argv[4], "rounds");
	if (!mib || !rounds) {
		fprintf(stderr, "pgtable_bench: MIB and ROUNDS must be positive\n");
		return 2;
	}
	if (pte_mapped_pmd_folios && (mib << 20) % PMD_SIZE_) {
		fprintf(stderr, "pgtable_bench: pmd needs whole 2 MiB folios, got %lu MiB\n", mib);
		return 2;
	}
	if (!bench_thp_only("pgtable_bench", !strcmp(argv[2], "64k") ? "64kB" :
			    pte_mapped_pmd_folios ? "2048kB" : NULL))
		return 1;
	/* 4k reports the 64 KiB counter, which must stay at 0. */
	counter = pte_mapped_pmd_folios ? BENCH_THP_PMD "/stats/anon_fault_alloc" :
		BENCH_MTHP_64K "/stats/anon_fault_alloc";
	folio_size = pte_mapped_pmd_folios ? PMD_SIZE_ : FOLIO_64K;
	folios_before = bench_read_counter(counter);
	/* Mappings populated: spawn's warm-up life is one of them. */
	if (!strcmp(argv[1], "fork")) {
		mappings = 1;
		run_fork(mib, rounds);
	} else if (!strcmp(argv[1], "munmap")) {
		mappings = rounds;
		run_munmap(mib, rounds);
	} else if (!strcmp(argv[1], "spawn")) {
		mappings = rounds + 1;
		run_spawn(argv[3], rounds);
	} else {
		fprintf(stderr, "pgtable_bench: unknown mode '%s' (fork, munmap, spawn)\n",
			argv[1]);
		return 2;
	}
	printf("pgtable_bench mode=%s folio=%s mib=%lu folios_%s=%ld of %lu ops=%lu\n",
	       argv[1], argv[2], mib, pte_mapped_pmd_folios ? "pmd" : "64k",
	       folios_before < 0 ? -1 : bench_read_counter(counter) - folios_before,
	       strcmp(argv[2], "4k") ? mappings * ((mib << 20) / folio_size) : 0, rounds);
	return 0;
}
