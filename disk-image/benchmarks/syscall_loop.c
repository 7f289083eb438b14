/*
 * Kernel entry/exit cost: a counted loop of system calls (claims C1 and C3).
 *
 *   syscall_loop invalid|getppid WARMUP ITERATIONS
 *
 * "invalid" issues syscall number 65536, which the kernel rejects with ENOSYS
 * after the full entry and exit paths and nothing else; "getppid" adds the
 * smallest real system call. WARMUP iterations run first, outside the
 * measured region, so caches and predictors hold the entry path.
 */
#include <string.h>

#include "bench.h"

static inline long invalid_syscall(void)
{
	register long x8 asm("x8") = 65536;
	register long x0 asm("x0");

	asm volatile("svc #0" : "=r"(x0) : "r"(x8) : "memory");
	return x0;
}

static inline long getppid_syscall(void)
{
	register long x8 asm("x8") = 173; /* __NR_getppid on arm64 */
	register long x0 asm("x0");

	asm volatile("svc #0" : "=r"(x0) : "r"(x8) : "memory");
	return x0;
}

static void run_invalid(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		invalid_syscall();
}

static void run_getppid(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		getppid_syscall();
}

int main(int argc, char **argv)
{
	void (*loop)(unsigned long);
	unsigned long warmup, iterations;

	if (argc != 4) {
		fprintf(stderr, "usage: %s invalid|getppid WARMUP ITERATIONS\n", argv[0]);
		return 2;
	}
	if (!strcmp(argv[1], "invalid"))
		loop = run_invalid;
	else if (!strcmp(argv[1], "getppid"))
		loop = run_getppid;
	else {
		fprintf(stderr, "unknown syscall kind '%s' (valid: invalid, getppid)\n", argv[1]);
		return 2;
	}
	warmup = bench_count(argv[2], "WARMUP");
	iterations = bench_count(argv[3], "ITERATIONS");

	loop(warmup);
	bench_region_begin();
	loop(iterations);
	bench_region_end();
	printf("syscall_loop kind=%s ops=%lu\n", argv[1], iterations);
	return 0;
}
