/*
 * /init of the 32-bit Arm initramfs (claim C3 on QEMU): getppid() round trips.
 *
 *   init [WARMUP CALLS RUNS]
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
 * getppid() are timed, as syscall_loop does on arm64; it has no m5 region
 * markers, because QEMU has no gem5 statistics to bracket.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/reboot.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_WARMUP 10000UL
#define DEFAULT_CALLS 10000000UL
#define DEFAULT_RUNS 3UL

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

int main(int argc, char **argv)
{
	unsigned long warmup = DEFAULT_WARMUP, calls = DEFAULT_CALLS, runs = DEFAULT_RUNS;
	struct utsname uts;

	if (argc == 4) {
		warmup = count(argv[1]);
		calls = count(argv[2]);
		runs = count(argv[3]);
	}
	if (argc != 1 && (argc != 4 || !calls || !runs)) {
		printf("c3-getppid error: usage: init [WARMUP CALLS RUNS] (positive counts)\n");
		power_off();
	}
	uname(&uts);
	printf("c3-getppid start kernel=%s warmup=%lu calls=%lu runs=%lu\n", uts.release,
	       warmup, calls, runs);
	loop(warmup);
	for (unsigned long run = 1; run <= runs; run++) {
		unsigned long long start = now_ns(), ns;
		unsigned long long per_call_ps;

		loop(calls);
		ns = now_ns() - start;
		per_call_ps = ns * 1000ULL / calls;
		printf("c3-getppid run=%lu calls=%lu ns=%llu us_per_call=%llu.%03llu\n", run, calls,
		       ns, per_call_ps / 1000000ULL, per_call_ps / 1000ULL % 1000ULL);
		fflush(stdout);
	}
	printf("c3-getppid done runs=%lu\n", runs);
	power_off();
	return 0;
}
