/*
 * /init of the 32-bit Arm initramfs (claim C3 on QEMU): getppid() round trips.
 *
 *   init [gem5] [WARMUP CALLS RUNS]
 *
 * The kernel passes what follows "--" on its command line as these arguments.
 * WARMUP unmeasured calls first, then RUNS runs of CALLS getppid() system
 * calls, each timed with CLOCK_MONOTONIC and reported on the console as
 *
 *   c3-getppid run=<i> calls=<CALLS> ns=<elapsed ns> us_per_call=<µs, 3 decimals>
 *
 * then "c3-getppid done runs=<RUNS>", and the machine powers off. The loop
 * issues the system call itself ("svc #0" with the number in r7, built in ARM
 * state, where r7 is free) so that only the kernel's entry and exit paths and
 * getppid() are timed, as syscall_loop does on arm64.
 *
 * With "gem5" first, the init also marks the measured region for gem5's
 * statistics with gem5's m5 operations (only then: they are UNDEFINED
 * instructions anywhere else, QEMU included):
 *
 *   m5 checkpoint   after the start line, before the warmup: a boot stops here
 *                   and saves the machine; a restore resumes after it
 *   m5 readfile     right after, for "WARMUP CALLS RUNS" from the host, which
 *                   then replace the command line's counts (no file: kept)
 *   m5 resetstats   just before each run's calls
 *   m5 dumpstats    just after them (one statistics dump per run)
 *   m5 exit         at the end, instead of powering off
 *
 * The run lines are printed after the last run rather than between runs, so
 * that the console's interrupts fall outside every measured region.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/reboot.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_WARMUP 10000UL
#define DEFAULT_CALLS 10000000UL
#define DEFAULT_RUNS 3UL
/* More runs than this in gem5 mode are refused: their results are kept until the end. */
#define MAX_GEM5_RUNS 64UL

/*
 * gem5's m5 operations in A32 state (gem5's util/m5/src/abi/arm/m5op.S): a
 * coprocessor-1 MCR whose opc1/CRn field (bits 23:16) holds the function
 * number of include/gem5/asm/generic/m5ops.h. Arguments are 64-bit values in
 * register pairs starting at an even register (r0:r1, r2:r3, r4:r5), the
 * result comes back in r0:r1. All delays and periods here are 0 (at once,
 * not repeated).
 */
#define GEM5_STRINGIFY(x) #x
/* func is expanded first, so a name from the list below becomes its number. */
#define GEM5_OP_NUMBER(func) ".inst 0xee000110 | (" GEM5_STRINGIFY(func) " << 16)"
#define GEM5_OP(func) GEM5_OP_NUMBER(func)
#define M5OP_EXIT 0x21
#define M5OP_RESET_STATS 0x40
#define M5OP_DUMP_STATS 0x41
#define M5OP_CHECKPOINT 0x43
#define M5OP_READ_FILE 0x50

/* An m5 operation whose arguments are all zero (delay, period). */
#define GEM5_OP_ZERO_ARGS(func)                                                   \
	do {                                                                      \
		register uint32_t r0 asm("r0") = 0, r1 asm("r1") = 0;             \
		register uint32_t r2 asm("r2") = 0, r3 asm("r3") = 0;             \
		asm volatile(GEM5_OP(func) : "+r"(r0), "+r"(r1) : "r"(r2), "r"(r3) \
			     : "memory");                                         \
	} while (0)

static void gem5_checkpoint(void) { GEM5_OP_ZERO_ARGS(M5OP_CHECKPOINT); }
static void gem5_reset_stats(void) { GEM5_OP_ZERO_ARGS(M5OP_RESET_STATS); }
static void gem5_dump_stats(void) { GEM5_OP_ZERO_ARGS(M5OP_DUMP_STATS); }
static void gem5_exit(void) { GEM5_OP_ZERO_ARGS(M5OP_EXIT); }

/* readfile(address, length, offset): the host file's bytes from the start; the count read. */
static uint32_t gem5_read_file(char *buf, uint32_t len)
{
	register uint32_t r0 asm("r0") = (uint32_t)buf, r1 asm("r1") = 0;
	register uint32_t r2 asm("r2") = len, r3 asm("r3") = 0;
	register uint32_t r4 asm("r4") = 0, r5 asm("r5") = 0;

	asm volatile(GEM5_OP(M5OP_READ_FILE)
		     : "+r"(r0), "+r"(r1)
		     : "r"(r2), "r"(r3), "r"(r4), "r"(r5)
		     : "memory");
	return r0;
}

static inline long getppid_syscall(void)
{
	register long r7 asm("r7") = __NR_getppid;
	register long r0 asm("r0");

	asm volatile("svc #0" : "=r"(r0) : "r"(r7) : "memory");
	return r0;
}

static void loop(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		getppid_syscall();
}

static unsigned long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (unsigned long long)t.tv_sec * 1000000000ULL + t.tv_nsec;
}

/* A count from the command line, or 0 if it is not a positive number. */
static unsigned long count(const char *text)
{
	char *end;
	unsigned long value = strtoul(text, &end, 10);

	return *text != '\0' && *end == '\0' ? value : 0;
}

/* PID 1 must not exit (the kernel would panic): power off, or wait. */
static void power_off(void)
{
	fflush(stdout);
	reboot(RB_POWER_OFF);
	perror("c3-getppid: reboot(RB_POWER_OFF)");
	for (;;)
		pause();
}

/* Let the console write out the last lines, then end the simulation. */
static void end_gem5(void)
{
	fflush(stdout);
	tcdrain(STDOUT_FILENO);
	gem5_exit();
}

static void report(unsigned long run, unsigned long calls, unsigned long long ns)
{
	unsigned long long per_call_ps = ns * 1000ULL / calls;

	printf("c3-getppid run=%lu calls=%lu ns=%llu us_per_call=%llu.%03llu\n", run, calls, ns,
	       per_call_ps / 1000000ULL, per_call_ps / 1000ULL % 1000ULL);
	fflush(stdout);
}

/*
 * The host's "WARMUP CALLS RUNS" through m5 readfile, if it offers a file:
 * 1 if they were read into the counts, 0 if there is no file, -1 if it is malformed.
 */
static int host_counts(unsigned long *warmup, unsigned long *calls, unsigned long *runs)
{
	/* Touched first, so that gem5 writes into mapped, writable pages. */
	static char text[128];
	char word[3][32];
	uint32_t got;

	memset(text, 0, sizeof(text));
	got = gem5_read_file(text, sizeof(text) - 1);
	if (got == 0)
		return 0;
	text[got < sizeof(text) ? got : sizeof(text) - 1] = '\0';
	if (sscanf(text, "%31s %31s %31s", word[0], word[1], word[2]) != 3)
		return -1;
	*warmup = count(word[0]);
	*calls = count(word[1]);
	*runs = count(word[2]);
	return 1;
}

int main(int argc, char **argv)
{
	unsigned long warmup = DEFAULT_WARMUP, calls = DEFAULT_CALLS, runs = DEFAULT_RUNS;
	static unsigned long long elapsed[MAX_GEM5_RUNS];
	struct utsname uts;
	int gem5 = argc > 1 && strcmp(argv[1], "gem5") == 0;

	if (gem5) {
		argc--;
		argv++;
	}
	if (argc == 4) {
		warmup = count(argv[1]);
		calls = count(argv[2]);
		runs = count(argv[3]);
	}
	if (argc != 1 && (argc != 4 || !calls || !runs)) {
		printf("c3-getppid error: usage: init [gem5] [WARMUP CALLS RUNS] (positive counts)\n");
		power_off();
	}
	uname(&uts);
	printf("c3-getppid start kernel=%s warmup=%lu calls=%lu runs=%lu%s\n", uts.release,
	       warmup, calls, runs, gem5 ? " gem5" : "");
	if (gem5) {
		fflush(stdout);
		gem5_checkpoint();
		switch (host_counts(&warmup, &calls, &runs)) {
		case 1:
			printf("c3-getppid host counts warmup=%lu calls=%lu runs=%lu\n", warmup,
			       calls, runs);
			break;
		case -1:
			calls = 0;
			break;
		}
		if (!calls || !runs || runs > MAX_GEM5_RUNS) {
			printf("c3-getppid error: the counts must be WARMUP CALLS RUNS, positive, "
			       "at most %lu runs\n", MAX_GEM5_RUNS);
			end_gem5();
			power_off();
		}
		fflush(stdout);
	}
	loop(warmup);
	for (unsigned long run = 1; run <= runs; run++) {
		unsigned long long start = now_ns(), ns;

		if (gem5)
			gem5_reset_stats();
		loop(calls);
		if (gem5)
			gem5_dump_stats();
		ns = now_ns() - start;
		if (gem5)
			elapsed[run - 1] = ns;
		else
			report(run, calls, ns);
	}
	for (unsigned long run = 1; gem5 && run <= runs; run++)
		report(run, calls, elapsed[run - 1]);
	printf("c3-getppid done runs=%lu\n", runs);
	if (gem5)
		end_gem5();
	power_off();
	return 0;
}
