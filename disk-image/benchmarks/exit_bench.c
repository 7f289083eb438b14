/*
 * What a process's exit costs when its anonymous memory is mapped with 64 KiB
 * large folios (mTHP), which arm64 maps with the contiguous bit (claim C5).
 *
 *   exit_bench exit|burst|spawn|mix|mix-exit|build|build-exit MIB ROUNDS [CPU...]
 *              [parent=CPU]
 *   exit_bench check MIB [CPU] [parent=CPU]
 *
 * "exit": ROUNDS children each map MIB MiB of anonymous memory, touch every
 * page and wait on a pipe; only then does the measured region start. In it
 * the parent releases the children one at a time and reaps each with
 * waitpid(), so the region holds ROUNDS exit_group() teardowns (unmapping,
 * TLB maintenance, freeing the folios) and the wake-ups around them, and
 * none of the page faults that built the mappings. Populating all children
 * before the region keeps every teardown in it the same: the alternative, one
 * child at a time, would put each child's faults in the region too. The
 * parent releases each child, rather than the child exiting by itself once it
 * has said it is ready, so that the parent decides when a teardown starts: a
 * child exiting by itself would race the parent's m5 resetstats, and part of
 * its teardown could fall before the region. "exit 0 ROUNDS" measures what
 * remains without the memory (the wake-ups and the rest of the exit).
 *
 * "burst": the same children, released all at once and then reaped, so that
 * with the children on different CPUs their teardowns overlap and their TLB
 * maintenance contends, as exits do in a parallel kernel build. The region
 * holds ROUNDS exits; ns per operation is the burst's time over ROUNDS, not
 * one exit's.
 *
 * "spawn": the whole life of ROUNDS children in the region, one after the
 * other: fork, map and touch MIB MiB, exit, reap; with "exit" it gives exit's
 * share of a short-lived process.
 *
 * "mix" is closer to a kernel build, whose compiler runs are new programs:
 * each child execs this program again (from /proc/self/exe, as a helper that
 * maps and touches MIB MiB), so its memory is a fresh mm's rather than a copy
 * of the parent's. The whole of each life is in the region, and the helper
 * waits to be released as in "exit", so the parent can time, with the guest
 * clock, the span from its release to waitpid()'s return. It prints the sum
 * as exit_ns= and its share of the region (guest clock as well) as
 * exit_share=; the region's own statistics cover the whole lives. One life
 * runs before the region, so that the first measured one does not pay for a
 * first exec. "mix-exit" starts the same helpers before the region and
 * measures only their exits, as "exit" does, so that gem5's counters
 * (instructions, TLBIs) of an exec'd process's exit can be set against
 * "mix": mix-exit ns/op over mix ns/op is exit's share again, from gem5's
 * clock instead of the guest's.
 *
 * "build" is a parallel kernel build's shape: exec'd helpers run as make -jN
 * runs compilers, one per listed CPU at a time, each started as soon as the
 * one before it on that CPU is reaped, ROUNDS lives in all, so exits overlap
 * other helpers' exec, faults and exits. A helper's memory is more than the
 * MIB MiB of 64 KiB folios: also SMALL_MAPS anonymous mappings of 16 KiB, each
 * between guard pages (too small for a 64 KiB folio, so page-size ones, as
 * a compiler's small heaps are) and a private read-only mapping of a SOURCE_MIB MiB file on /tmp
 * (tmpfs: page-cache pages, as the sources and headers a compiler reads),
 * every page touched. ns per operation is the region over ROUNDS lives with
 * up to N running at once. "build-exit" starts the same helpers before the
 * region and releases them all at once, as "burst" does, so the region holds
 * only their exits; its ns per operation over "build"'s is exit's share of
 * the build's core time, both from gem5's clock.
 *
 * CPU... pins the children, round-robin, to these CPUs; parent=CPU pins the
 * parent (and, if no CPU is listed, the children, which inherit it). A run
 * can so keep the benchmark on the cores of one NUMA node or spread it over
 * two. Without either, the scheduler places everything.
 *
 * "check" says whether the set-up is what the other modes need: the 64 KiB
 * setting, the NUMA nodes and CPUs the guest sees, and a child (on the first
 * CPU listed, if any) that maps and touches MIB MiB. It prints the CPU and
 * node the child ran on and how many 64 KiB folios the kernel allocated
 * while it did (the hugepages-64kB anon_fault_alloc counter, which 6.12 has),
 * and exits 1 unless every 64 KiB block came as one folio.
 *
 * Every mode first asks for 64 KiB folios and no other THP size ("always" in
 * /sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled, "never" for
 * the other sizes; root is needed) and fails if the kernel has no such
 * setting. ops= counts the children measured.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define MTHP_DIR BENCH_MTHP_64K
#define FOLIO (64UL << 10)
#define PAGE 4096UL
#define MAX_CPUS 64
/* A build helper's memory beside its large folios (see "build" above). */
#define SMALL_MAPS 64
#define SMALL_MAP (16UL << 10)
#define SOURCE_MIB 2UL
#define SOURCE_PATH "/tmp/exit_bench-source"

struct child {
	pid_t pid;
	int release; /* write end: one byte lets the child exit */
};

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
		bench_die("mmap");
	p = (char *)(((uintptr_t)raw + FOLIO - 1) & ~(uintptr_t)(FOLIO - 1));
	for (size_t off = 0; off < size; off += PAGE)
		p[off] = 1;
}

/* The rest of a build helper's memory: small anonymous mappings in page-size
 * folios, and a file's page-cache pages mapped privately and read. */
static void map_and_touch_build_extras(void)
{
	size_t source = SOURCE_MIB << 20;
	volatile char sum = 0;
	int fd;
	char *p;

	/* Each between two inaccessible guard pages, as thread stacks and
	 * malloc arenas are, so that neighbouring mappings do not merge into
	 * one area in which whole 64 KiB blocks, and so large folios, fit. */
	for (int i = 0; i < SMALL_MAPS; i++) {
		p = mmap(NULL, SMALL_MAP + 2 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			bench_die("mmap");
		p += PAGE;
		if (mprotect(p, SMALL_MAP, PROT_READ | PROT_WRITE))
			bench_die("mprotect");
		for (size_t off = 0; off < SMALL_MAP; off += PAGE)
			p[off] = 1;
	}
	fd = open(SOURCE_PATH, O_RDONLY);
	if (fd < 0)
		bench_die(SOURCE_PATH);
	p = mmap(NULL, source, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		bench_die("mmap " SOURCE_PATH);
	close(fd);
	for (size_t off = 0; off < source; off += PAGE)
		sum += p[off];
}

/* The file build helpers map, written before any of them starts, so its
 * pages are in the page cache and every helper maps the same ones. */
static void write_build_source(void)
{
	static char block[64 << 10];
	int fd = open(SOURCE_PATH, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		bench_die(SOURCE_PATH);
	memset(block, 'x', sizeof(block));
	for (size_t done = 0; done < (SOURCE_MIB << 20); done += sizeof(block))
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
			bench_die("write " SOURCE_PATH);
	close(fd);
}

/* A CPU number that fits a cpu_set_t (CPU_SET() does not check). */
static int cpu_arg(const char *text)
{
	unsigned long cpu = bench_count(text, "CPU");

	if (cpu >= CPU_SETSIZE) {
		fprintf(stderr, "exit_bench: CPU %lu: numbers go up to %d\n", cpu, CPU_SETSIZE - 1);
		exit(2);
	}
	return (int)cpu;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		bench_die("sched_setaffinity");
}

/* A child that maps and touches its memory, says so, and exits when told. */
static struct child start_child(unsigned long mib, int cpu)
{
	int ready[2], release[2];
	struct child c;
	char byte;

	if (pipe(ready) || pipe(release))
		bench_die("pipe");
	c.pid = fork();
	if (c.pid < 0)
		bench_die("fork");
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

/*
 * The same child as a new program: this binary exec'd as "exit_bench child
 * MIB READY_FD RELEASE_FD". The parent's own ends of the pipes are
 * close-on-exec, so that the helper (and its exit) holds only its two.
 */
static struct child start_exec_child_as(unsigned long mib, int cpu, const char *role)
{
	int ready[2], release[2];
	char mib_text[24], ready_text[16], release_text[16];
	struct child c;
	char byte;

	if (pipe2(ready, O_CLOEXEC) || pipe2(release, O_CLOEXEC))
		bench_die("pipe2");
	c.pid = fork();
	if (c.pid < 0)
		bench_die("fork");
	if (c.pid == 0) {
		if (cpu >= 0)
			pin(cpu);
		if (fcntl(ready[1], F_SETFD, 0) || fcntl(release[0], F_SETFD, 0))
			_exit(126);
		snprintf(mib_text, sizeof(mib_text), "%lu", mib);
		snprintf(ready_text, sizeof(ready_text), "%d", ready[1]);
		snprintf(release_text, sizeof(release_text), "%d", release[0]);
		execl("/proc/self/exe", "exit_bench", role, mib_text, ready_text,
		      release_text, (char *)NULL);
		_exit(127);
	}
	close(ready[1]);
	close(release[0]);
	if (read(ready[0], &byte, 1) != 1) {
		fprintf(stderr, "exit_bench: helper %d died before its memory was ready\n", c.pid);
		exit(1);
	}
	close(ready[0]);
	c.release = release[1];
	return c;
}

static struct child start_exec_child(unsigned long mib, int cpu)
{
	return start_exec_child_as(mib, cpu, "child");
}

static struct child start_build_child(unsigned long mib, int cpu)
{
	return start_exec_child_as(mib, cpu, "build-child");
}

/* The exec'd helper: map, touch, say so, and exit when released. A build
 * helper ("build-child") maps a compiler's other memory too. */
static int run_helper(int argc, char **argv, int build)
{
	int ready, release;
	char byte;

	if (argc != 5)
		return 2;
	ready = (int)bench_count(argv[3], "fd");
	release = (int)bench_count(argv[4], "fd");
	map_and_touch(bench_count(argv[2], "MiB"));
	if (build)
		map_and_touch_build_extras();
	if (write(ready, "r", 1) != 1 || read(release, &byte, 1) != 1)
		return 1;
	return 0;
}

static void release_and_reap(struct child *c)
{
	if (write(c->release, "x", 1) != 1)
		bench_die("write");
	bench_reap("exit_bench", c->pid);
	close(c->release);
}

/* ROUNDS children with their memory ready, pinned round-robin to CPUS. */
static struct child *start_children(unsigned long mib, unsigned long rounds, const int *cpus,
				    int ncpus, struct child (*start)(unsigned long, int))
{
	struct child *children = calloc(rounds, sizeof(*children));

	if (!children)
		bench_die("calloc");
	for (unsigned long i = 0; i < rounds; i++)
		children[i] = start(mib, ncpus ? cpus[i % ncpus] : -1);
	return children;
}

static void run_exit(unsigned long mib, unsigned long rounds, const int *cpus, int ncpus,
		     struct child (*start)(unsigned long, int))
{
	struct child *children = start_children(mib, rounds, cpus, ncpus, start);

	/* No warm-up loop: the core model starts at the region (its TLBs and
	 * predictors cold, the caches warmed by the fast CPU). */
	bench_detail_begin();
	bench_region_begin();
	for (unsigned long i = 0; i < rounds; i++) {
		if (write(children[i].release, "x", 1) != 1)
			bench_die("write");
		bench_reap("exit_bench", children[i].pid);
	}
	bench_region_end();
	free(children);
}

static void run_burst(unsigned long mib, unsigned long rounds, const int *cpus, int ncpus,
		      struct child (*start)(unsigned long, int))
{
	struct child *children = start_children(mib, rounds, cpus, ncpus, start);

	bench_detail_begin();
	bench_region_begin();
	for (unsigned long i = 0; i < rounds; i++)
		if (write(children[i].release, "x", 1) != 1)
			bench_die("write");
	for (unsigned long i = 0; i < rounds; i++)
		bench_reap("exit_bench", children[i].pid);
	bench_region_end();
	free(children);
}

static void run_spawn(unsigned long mib, unsigned long rounds, const int *cpus, int ncpus)
{
	/* No warm-up loop: the core model starts at the region (its TLBs and
	 * predictors cold, the caches warmed by the fast CPU). */
	bench_detail_begin();
	bench_region_begin();
	for (unsigned long i = 0; i < rounds; i++) {
		pid_t pid = fork();

		if (pid < 0)
			bench_die("fork");
		if (pid == 0) {
			if (ncpus)
				pin(cpus[i % ncpus]);
			map_and_touch(mib);
			_exit(0);
		}
		bench_reap("exit_bench", pid);
	}
	bench_region_end();
}

/* Guest time: gem5's simulated time there, read through the generic timer. */
static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void run_mix(unsigned long mib, unsigned long rounds, const int *cpus, int ncpus)
{
	uint64_t begin, total, exit_ns = 0;
	struct child warm;

	bench_detail_begin();
	/* Warm-up: the first exec looks up /proc/self/exe afresh. */
	warm = start_exec_child(mib, ncpus ? cpus[0] : -1);
	release_and_reap(&warm);
	bench_region_begin();
	begin = now_ns();
	for (unsigned long i = 0; i < rounds; i++) {
		struct child c = start_exec_child(mib, ncpus ? cpus[i % ncpus] : -1);
		uint64_t released = now_ns();

		release_and_reap(&c);
		exit_ns += now_ns() - released;
	}
	total = now_ns() - begin;
	bench_region_end();
	printf("exit_bench mix: total_ns=%llu exit_ns=%llu exit_share=%.3f\n",
	       (unsigned long long)total, (unsigned long long)exit_ns,
	       total ? (double)exit_ns / (double)total : 0.0);
}

/* A build helper's whole life, not waited for: "exit_bench build-life MIB"
 * maps and touches its memory and exits. */
static pid_t start_build_life(unsigned long mib, int cpu)
{
	char mib_text[24];
	pid_t pid = fork();

	if (pid < 0)
		bench_die("fork");
	if (pid == 0) {
		if (cpu >= 0)
			pin(cpu);
		snprintf(mib_text, sizeof(mib_text), "%lu", mib);
		execl("/proc/self/exe", "exit_bench", "build-life", mib_text, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/*
 * One life per listed CPU at a time (make -jN's shape): the next helper on a
 * CPU starts when the one before it there is reaped, so one helper's exit
 * overlaps others' exec, faults and exits.
 */
static void run_build(unsigned long mib, unsigned long rounds, const int *cpus, int ncpus)
{
	int slots = ncpus ? ncpus : 1;
	pid_t running[MAX_CPUS];
	unsigned long started = 0;

	bench_detail_begin();
	/* Warm-up: the first exec looks up /proc/self/exe afresh. */
	bench_reap("exit_bench", start_build_life(mib, ncpus ? cpus[0] : -1));
	bench_region_begin();
	for (int s = 0; s < slots; s++) {
		running[s] = -1;
		if (started < rounds) {
			running[s] = start_build_life(mib, ncpus ? cpus[s] : -1);
			started++;
		}
	}
	for (unsigned long done = 0; done < rounds; done++) {
		int status, s;
		pid_t pid = wait(&status);

		if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "exit_bench: build helper %d failed\n", pid);
			exit(1);
		}
		for (s = 0; s < slots && running[s] != pid; s++)
			;
		if (s == slots) {
			fprintf(stderr, "exit_bench: reaped %d, not a build helper\n", pid);
			exit(1);
		}
		running[s] = -1;
		if (started < rounds) {
			running[s] = start_build_life(mib, ncpus ? cpus[s] : -1);
			started++;
		}
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

/* The selected word of a sysfs setting ("always [never]" gives "never"). */
static int read_setting(const char *path, char *out, size_t size)
{
	char line[128], *open, *close_;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	open = strchr(line, '[');
	close_ = open ? strchr(open, ']') : NULL;
	if (!close_)
		return 0;
	*close_ = '\0';
	snprintf(out, size, "%s", open + 1);
	return 1;
}

static int run_check(unsigned long mib, int cpu)
{
	long folios = (long)((mib << 20) / FOLIO);
	long alloc, fallback;
	int ready[2], release[2];
	unsigned int where[2] = { ~0u, ~0u }; /* the child's CPU and node */
	char setting[32];
	pid_t pid;

	if (access(MTHP_DIR, F_OK)) {
		printf("exit_bench check: mthp=unavailable: no %s (a kernel without multi-size THP, "
		       "or without a 64 KiB size)\n", MTHP_DIR);
		return 1;
	}
	/* If it cannot be written (not root), the setting may still be right. */
	bench_thp_only("exit_bench", "64kB");
	if (!read_setting(MTHP_DIR "/enabled", setting, sizeof(setting)) ||
	    strcmp(setting, "always")) {
		printf("exit_bench check: mthp=unavailable: %s/enabled is not [always]\n",
		       MTHP_DIR);
		return 1;
	}
	alloc = bench_read_counter(MTHP_DIR "/stats/anon_fault_alloc");
	fallback = bench_read_counter(MTHP_DIR "/stats/anon_fault_fallback");
	if (pipe(ready) || pipe(release))
		bench_die("pipe");
	pid = fork();
	if (pid < 0)
		bench_die("fork");
	if (pid == 0) {
		char byte;

		if (cpu >= 0)
			pin(cpu);
		map_and_touch(mib);
		syscall(SYS_getcpu, &where[0], &where[1], NULL);
		if (write(ready[1], where, sizeof(where)) != sizeof(where) ||
		    read(release[0], &byte, 1) != 1)
			_exit(1);
		_exit(0);
	}
	/* Read the counters while the child still holds its memory. */
	if (read(ready[0], where, sizeof(where)) != sizeof(where)) {
		fprintf(stderr, "exit_bench: check child %d died before its memory was ready\n", pid);
		return 1;
	}
	if (alloc >= 0)
		alloc = bench_read_counter(MTHP_DIR "/stats/anon_fault_alloc") - alloc;
	if (fallback >= 0)
		fallback = bench_read_counter(MTHP_DIR "/stats/anon_fault_fallback") - fallback;
	if (write(release[1], "x", 1) != 1)
		bench_die("write");
	bench_reap("exit_bench", pid);
	printf("exit_bench check: setting=%s nodes=%d cpus=%d parent_cpu=%d child_cpu=%d "
	       "child_node=%d folios_64k=%ld of %ld fallback_64k=%ld\n",
	       setting, count_entries("/sys/devices/system/node", "node"),
	       count_entries("/sys/devices/system/cpu", "cpu"), sched_getcpu(),
	       (int)where[0], (int)where[1], alloc, folios, fallback);
	if (alloc < 0) {
		printf("exit_bench check: mthp=unknown: no %s/stats/anon_fault_alloc "
		       "(a kernel without per-size mTHP counters)\n", MTHP_DIR);
		return 1;
	}
	/* Other processes may fault in 64 KiB folios too, hence at least. */
	if (alloc < folios) {
		printf("exit_bench check: mthp=off: %ld of %ld blocks came as 64 KiB folios\n",
		       alloc, folios);
		return 1;
	}
	printf("exit_bench check: mthp=on\n");
	return 0;
}

int main(int argc, char **argv)
{
	int cpus[MAX_CPUS], ncpus = 0, parent = -1;
	unsigned long mib, rounds;

	if (argc > 1 && !strcmp(argv[1], "child"))
		return run_helper(argc, argv, 0);
	if (argc > 1 && !strcmp(argv[1], "build-child"))
		return run_helper(argc, argv, 1);
	if (argc == 3 && !strcmp(argv[1], "build-life")) {
		map_and_touch(bench_count(argv[2], "MiB"));
		map_and_touch_build_extras();
		return 0;
	}
	if (argc < 3 || (strcmp(argv[1], "check") && argc < 4)) {
		fprintf(stderr, "usage: exit_bench exit|burst|spawn|mix|mix-exit|build|build-exit MIB "
			"ROUNDS [CPU...] [parent=CPU] | check MIB [CPU] [parent=CPU]\n");
		return 2;
	}
	for (int i = strcmp(argv[1], "check") ? 4 : 3; i < argc; i++) {
		if (!strncmp(argv[i], "parent=", 7)) {
			parent = cpu_arg(argv[i] + 7);
			continue;
		}
		if (ncpus == MAX_CPUS) {
			fprintf(stderr, "exit_bench: more than %d CPUs\n", MAX_CPUS);
			return 2;
		}
		cpus[ncpus++] = cpu_arg(argv[i]);
	}
	if (parent >= 0)
		pin(parent);
	mib = bench_count(argv[2], "MiB");
	if (!strcmp(argv[1], "check"))
		return run_check(mib, ncpus ? cpus[0] : -1);
	if (!bench_thp_only("exit_bench", "64kB"))
		return 1;
	rounds = bench_count(argv[3], "rounds");
	if (!strcmp(argv[1], "exit"))
		run_exit(mib, rounds, cpus, ncpus, start_child);
	else if (!strcmp(argv[1], "burst"))
		run_burst(mib, rounds, cpus, ncpus, start_child);
	else if (!strcmp(argv[1], "spawn"))
		run_spawn(mib, rounds, cpus, ncpus);
	else if (!strcmp(argv[1], "mix"))
		run_mix(mib, rounds, cpus, ncpus);
	else if (!strcmp(argv[1], "mix-exit"))
		run_exit(mib, rounds, cpus, ncpus, start_exec_child);
	else if (!strcmp(argv[1], "build") || !strcmp(argv[1], "build-exit")) {
		write_build_source();
		if (!strcmp(argv[1], "build"))
			run_build(mib, rounds, cpus, ncpus);
		else
			run_burst(mib, rounds, cpus, ncpus, start_build_child);
	} else {
		fprintf(stderr, "exit_bench: unknown mode '%s' (exit, burst, spawn, mix, mix-exit, "
			"build, build-exit, check)\n",
			argv[1]);
		return 2;
	}
	printf("exit_bench mode=%s mib=%lu ops=%lu\n", argv[1], mib, rounds);
	return 0;
}
