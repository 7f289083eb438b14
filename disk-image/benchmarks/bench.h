/* Shared helpers for the guest benchmarks: argument parsing, the m5 ops that
 * bracket the measured region, and the memory set-up of the pointer chases. */
#ifndef BENCH_H
#define BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <gem5/m5ops.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

#define BENCH_LINE 64 /* cache line size of every modelled core */

static inline unsigned long bench_count(const char *text, const char *what)
{
	char *end;
	unsigned long value = strtoul(text, &end, 0);

	if (*text == '\0' || *end != '\0') {
		fprintf(stderr, "bad %s: '%s'\n", what, text);
		exit(2);
	}
	return value;
}

/* Statistics gathered between these two calls are what the run reports. */
static inline void bench_region_begin(void)
{
	m5_reset_stats(0, 0);
}

static inline void bench_region_end(void)
{
	m5_dump_stats(0, 0);
}

/* xorshift64: a few instructions per number, plenty for shuffles and branch
 * outcomes. The state must not be zero. */
static inline uint64_t bench_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

/* A number in [0, bound): the high half of the 64x64-bit product of a random
 * number and bound (one umulh, no division; the bias is below bound / 2^64).
 * In asm because GCC, given a 128-bit product, widens the caller's loop
 * counter to 128 bits. */
static inline uint64_t bench_below(uint64_t *state, uint64_t bound)
{
	uint64_t high;

	asm("umulh	%0, %1, %2" : "=r"(high) : "r"(bench_rand(state)), "r"(bound));
	return high;
}

/*
 * size bytes (a multiple of the page size) of zeroed anonymous memory aligned
 * to align (a power of two, at least a page), with madvise(advice) applied
 * before any page is touched and the pages then populated writable, which
 * costs far fewer instructions than one fault per page. Failures of either
 * madvise are ignored: the pages then simply fault in on first touch.
 */
static inline void *bench_map(size_t size, size_t align, int advice)
{
	size_t span = size + align;
	char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p;

	if (raw == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	p = (char *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
	if (p != raw)
		munmap(raw, p - raw);
	munmap(p + size, raw + span - (p + size));
	madvise(p, size, advice);
	madvise(p, size, MADV_POPULATE_WRITE);
	return p;
}

/* kB of this process's memory mapped by transparent huge pages (the
 * AnonHugePages line of /proc/self/smaps_rollup), or -1 if it cannot tell. */
static inline long bench_anon_huge_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/self/smaps_rollup", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/*
 * 8 * blocks dependent loads: each line holds the address of the next one,
 * and every ldr takes its address from the previous ldr's result. Returns
 * where the chase stopped, so a later chase can go on from there.
 */
static inline void *bench_chase(void *p, unsigned long blocks)
{
	asm volatile("cbz	%1, 2f\n"
		     ".p2align 6\n"
		     "1:\n\t"
		     "ldr	%0, [%0]\n\t"
		     "ldr	%0, [%0]\n\t"
		     "ldr	%0, [%0]\n\t"
		     "ldr	%0, [%0]\n\t"
		     "ldr	%0, [%0]\n\t"
		     "ldr	%0, [%0]\n\t"
		     "ldr	%0, [%0]\n\t"
		     "ldr	%0, [%0]\n\t"
		     "subs	%1, %1, #1\n\t"
		     "b.ne	1b\n"
		     "2:"
		     : "+r"(p), "+r"(blocks)
		     :
		     : "cc", "memory");
	return p;
}

#endif
