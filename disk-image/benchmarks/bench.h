/* Shared helpers for the guest benchmarks: argument parsing, the m5 ops that
 * bracket the measured region, and the memory set-up of the pointer chases. */
#ifndef BENCH_H
#define BENCH_H

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <gem5/m5ops.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

#define BENCH_LINE 64 /* cache line size of every modelled core */
#define BENCH_THP_DIR "/sys/kernel/mm/transparent_hugepage"
#define BENCH_MTHP_64K BENCH_THP_DIR "/hugepages-64kB"
#define BENCH_THP_PMD BENCH_THP_DIR "/hugepages-2048kB"

static inline void bench_die(const char *what)
{
	perror(what);
	exit(1);
}

/* Reap a child that must have exited with status 0; anything else ends the run. */
static inline void bench_reap(const char *who, pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "%s: child %d failed\n", who, pid);
		exit(1);
	}
}

static inline int bench_write_setting(const char *path, const char *value)
{
	FILE *f = fopen(path, "w");
	int ok = f && fputs(value, f) >= 0;

	if (f && fclose(f))
		ok = 0;
	return ok;
}

/* A number a sysfs file holds, or -1 if it cannot be read. */
static inline long bench_read_counter(const char *path)
{
	long value = -1;
	FILE *f = fopen(path, "r");

	if (f) {
		if (fscanf(f, "%ld", &value) != 1)
			value = -1;
		fclose(f);
	}
	return value;
}

/*
 * Anonymous memory in folios of one THP size and no other (size: "64kB",
 * "2048kB"), or in small folios only (size NULL): every other
 * hugepages-<size>/enabled becomes "never" (sizes anonymous memory cannot use
 * refuse any write), and size's "always". Only size's setting must take; root
 * is needed. 6.12 aligns anonymous mappings of 2 MiB or more to 2 MiB, so with
 * PMD-sized THP on, most memory would come as 2 MiB folios mapped by block
 * entries: a run that wants small or 64 KiB folios must turn it off.
 */
static inline int bench_thp_only(const char *who, const char *size)
{
	char path[300], wanted[64] = "";
	struct dirent *e;
	DIR *d = opendir(BENCH_THP_DIR);

	if (!d) {
		fprintf(stderr, "%s: %s: %s\n", who, BENCH_THP_DIR, strerror(errno));
		return 0;
	}
	if (size)
		snprintf(wanted, sizeof(wanted), "hugepages-%s", size);
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "hugepages-", 10) || !strcmp(e->d_name, wanted))
			continue;
		snprintf(path, sizeof(path), BENCH_THP_DIR "/%s/enabled", e->d_name);
		bench_write_setting(path, "never");
	}
	closedir(d);
	if (!size)
		return 1;
	snprintf(path, sizeof(path), BENCH_THP_DIR "/%s/enabled", wanted);
	if (!bench_write_setting(path, "always")) {
		fprintf(stderr, "%s: cannot enable %s folios (%s): %s\n", who, size, path,
			strerror(errno));
		return 0;
	}
	return 1;
}

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

/*
 * From here the run needs the core model: call after set-up, before the
 * detailed warm-up that precedes a region. A fast-forward run (run.py
 * --detail fast-forward) has simulated everything so far on gem5's atomic
 * CPU, through the model's caches, and switches now; a full-detail run is
 * on the core model already and goes on. The request is an m5 work item
 * (workbegin), as is its end in bench_region_end().
 */
static inline void bench_detail_begin(void)
{
	m5_work_begin(0, 0);
}

/* Statistics gathered between these two calls are what the run reports. */
static inline void bench_region_begin(void)
{
	m5_reset_stats(0, 0);
}

/* The region's statistics are dumped; what follows (teardown, checks) may
 * run on the fast CPU again. */
static inline void bench_region_end(void)
{
	m5_dump_stats(0, 0);
	m5_work_end(0, 0);
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

/* A file a run's script wrote in base64 (a kernel module of the run's kernel
 * build, which cannot live on the disk image), decoded. */
static inline int bench_base64_value(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* The decoded bytes of a base64 file (line breaks and padding skipped). */
static inline unsigned char *bench_read_base64(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	struct stat st;
	unsigned char *out;
	unsigned int bits = 0;
	int nbits = 0, c, v;

	if (!f || fstat(fileno(f), &st))
		bench_die(path);
	out = malloc(st.st_size / 4 * 3 + 3);
	if (!out)
		bench_die("malloc");
	*len = 0;
	while ((c = fgetc(f)) != EOF) {
		v = bench_base64_value(c);
		if (v < 0)
			continue;
		bits = (bits << 6) | v;
		nbits += 6;
		if (nbits >= 8) {
			nbits -= 8;
			out[(*len)++] = (bits >> nbits) & 0xff;
		}
	}
	fclose(f);
	return out;
}

#endif
