/*
 * What a process's exit costs when its anonymous memory is mapped with 64 KiB
 * large folios (mTHP), which arm64 maps with the contiguous bit (claim C5).
 *
 *   exit_bench exit  MIB ROUNDS [CPU...]
 *   exit_bench spawn MIB ROUNDS [CPU...]
 *   exit_bench check MIB
 *
 * "exit": ROUNDS children each map MIB MiB of anonymous memory, touch every
 * page and wait on a pipe; only then does the measured region start. In it
 * the parent releases the children one at a time and reaps each with
 * waitpid(), so the region holds ROUNDS exit_group() teardowns (unmapping,
 * TLB maintenance, freeing the folios) and the wake-ups around them, and
 * none of the page faults that built the mappings. Populating all children
 * before the region keeps every teardown in it the same: the alternative, one
 * child at a time, would put each child's faults in the region too.
 *
 * "spawn": the whole life of ROUNDS children in the region, one after the
 * other: fork, map and touch MIB MiB, exit, reap; with "exit" it gives exit's
 * share of a short-lived process, the shape of a kernel build's many compiler
 * runs.
 *
 * CPU... pins the children, round-robin, to these CPUs (the parent stays on
 * the CPU it runs on), so a run can keep the benchmark on one NUMA node or
 * spread it over two.
 *
 * "check" maps and touches MIB MiB and reports how many 64 KiB folios the
 * kernel allocated for it, how many NUMA nodes and CPUs the guest sees, and
 * fails unless every 64 KiB block came as one folio.
 *
 * Every mode first asks for 64 KiB folios and no other THP size ("always" in
 * /sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled, "never" for
 * the other sizes) and fails if the kernel has no such setting. ops= counts
 * the children measured.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define MTHP_DIR "/sys/kernel/mm/transparent_hugepage/hugepages-64kB"
#define FOLIO (64UL << 10)
#define PAGE 4096UL
#define MAX_CPUS 64

struct child {
	pid_t pid;
	int release; /* write end: one byte lets the child exit */
};

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static int write_setting(const char *path, const char *value)
{
	FILE *f = fopen(path, "w");
	int ok = f && fputs(value, f) >= 0;

	if (f && fclose(f))
		ok = 0;
	return ok;
}

/*
 * 64 KiB folios and no other size: 6.12 aligns anonymous mappings of 2 MiB
 * or more to 2 MiB, so with PMD-sized THP on, most of the memory would come
 * as 2 MiB folios mapped by block entries instead of contiguous PTEs.
 */
static void enable_mthp(void)
{
	char path[300];
	struct dirent *e;
	DIR *d = opendir("/sys/kernel/mm/transparent_hugepage");

	if (!d)
		die("/sys/kernel/mm/transparent_hugepage");
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "hugepages-", 10) || !strcmp(e->d_name, "hugepages-64kB"))
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/mm/transparent_hugepage/%s/enabled",
			 e->d_name);
		/* Sizes anonymous memory cannot use (8 KiB) refuse any write. */
		write_setting(path, "never");
	}
	closedir(d);
	if (!write_setting(MTHP_DIR "/enabled", "always")) {
		fprintf(stderr, "exit_bench: cannot enable 64 KiB folios (%s/enabled): %s\n",
			MTHP_DIR, strerror(errno));
		exit(1);
	}
}

static long read_counter(const char *path)
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

/* Anonymous memory aligned to a folio and touched page by page, so that each
 * aligned 64 KiB block faults in as one folio (a populate call could take
 * another path through the fault code). */
static void map_and_touch(unsigned long mib)
{
	size_t size = mib << 20;
	char *raw = mmap(NULL, size + FOLIO, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p;

	if (raw == MAP_FAILED)
		die("mmap");
	p = (char *)(((uintptr_t)raw + FOLIO - 1) & ~(uintptr_t)(FOLIO - 1));
	for (size_t off = 0; off < size; off += PAGE)
		p[off] = 1;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

/* A child that maps and touches its memory, says so, and exits when told. */
static struct child start_child(unsigned long mib, int cpu)
{
	int ready[2], release[2];
	struct child c;
	char byte;

	if (pipe(ready) || pipe(release))
		die("pipe");
	c.pid = fork();
	if (c.pid < 0)
		die("fork");
	if (c.pid == 0) {
		if (cpu >= 0)
			pin(cpu);
		map_and_touch(mib);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		if (read(release[0], &byte, 1) != 1)
			_exit(1);
		_exit(0);
	}
	close(ready[1]);
	close(release[0]);
	if (read(ready[0], &byte, 1) != 1) {
		fprintf(stderr, "exit_bench: child %d died before its memory was ready\n", c.pid);
		exit(1);
	}
	close(ready[0]);
	c.release = release[1];
	return c;
}

static void reap(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "exit_bench: child %d failed\n", pid);
		exit(1);
	}
}

static void run_exit(unsigned long mib, unsigned long rounds, const int *cpus, int ncpus)
{
	struct child *children = calloc(rounds, sizeof(*children));

	if (!children)
		die("calloc");
	for (unsigned long i = 0; i < rounds; i++)
		children[i] = start_child(mib, ncpus ? cpus[i % ncpus] : -1);
	bench_region_begin();
	for (unsigned long i = 0; i < rounds; i++) {
		if (write(children[i].release, "x", 1) != 1)
			die("write");
		reap(children[i].pid);
	}
	bench_region_end();
	free(children);
}

static void run_spawn(unsigned long mib, unsigned long rounds, const int *cpus, int ncpus)
{
	bench_region_begin();
	for (unsigned long i = 0; i < rounds; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			if (ncpus)
				pin(cpus[i % ncpus]);
			map_and_touch(mib);
			_exit(0);
		}
		reap(pid);
	}
	bench_region_end();
}

static int count_entries(const char *dir, const char *prefix)
{
	struct dirent *e;
	int n = 0;
	DIR *d = opendir(dir);

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, prefix, strlen(prefix)) &&
		    e->d_name[strlen(prefix)] >= '0' && e->d_name[strlen(prefix)] <= '9')
			n++;
	closedir(d);
	return n;
}

static int run_check(unsigned long mib)
{
	long before = read_counter(MTHP_DIR "/stats/anon_fault_alloc");
	long after, folios = (long)((mib << 20) / FOLIO);

	map_and_touch(mib);
	after = read_counter(MTHP_DIR "/stats/anon_fault_alloc");
	printf("exit_bench check: nodes=%d cpus=%d folios_64k=%ld of %ld\n",
	       count_entries("/sys/devices/system/node", "node"),
	       count_entries("/sys/devices/system/cpu", "cpu"),
	       before < 0 ? -1 : after - before, folios);
	if (before < 0 || after - before < folios) {
		fprintf(stderr, "exit_bench: the memory did not come in 64 KiB folios\n");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int cpus[MAX_CPUS], ncpus = 0;
	unsigned long mib, rounds;

	if (argc < 3 || (strcmp(argv[1], "check") && argc < 4)) {
		fprintf(stderr, "usage: exit_bench exit|spawn MIB ROUNDS [CPU...] | check MIB\n");
		return 2;
	}
	enable_mthp();
	mib = bench_count(argv[2], "MiB");
	if (!strcmp(argv[1], "check"))
		return run_check(mib);
	rounds = bench_count(argv[3], "rounds");
	for (int i = 4; i < argc && ncpus < MAX_CPUS; i++)
		cpus[ncpus++] = (int)bench_count(argv[i], "CPU");
	if (!strcmp(argv[1], "exit"))
		run_exit(mib, rounds, cpus, ncpus);
	else if (!strcmp(argv[1], "spawn"))
		run_spawn(mib, rounds, cpus, ncpus);
	else {
		fprintf(stderr, "exit_bench: unknown mode '%s' (exit, spawn, check)\n", argv[1]);
		return 2;
	}
	printf("exit_bench mode=%s mib=%lu ops=%lu\n", argv[1], mib, rounds);
	return 0;
}
