/*
 * Kernel entry/exit cost: a counted loop of system calls (claims C1 and C3).
 *
 *   syscall_loop invalid|getppid WARMUP ITERATIONS [ia-off]
 *
 * "invalid" issues syscall number 65536, which the kernel rejects with ENOSYS
 * after the full entry and exit paths and nothing else; "getppid" adds the
 * smallest real system call. WARMUP iterations run first, outside the
 * measured region, so caches and predictors hold the entry path.
 *
 * "ia-off" first disables the task's IA pointer-authentication key with
 * prctl(PR_PAC_SET_ENABLED_KEYS): Linux 6.12 then clears SCTLR_EL1.EnIA on
 * every exit and sets it on every entry, the path claim C1 measures. The
 * benchmark is built without return-address signing, so it runs unchanged.
 */
#include <string.h>
#include <sys/prctl.h>

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

#ifndef PR_PAC_SET_ENABLED_KEYS
#define PR_PAC_SET_ENABLED_KEYS 60 /* Linux 5.13 */
#endif
#ifndef PR_PAC_APIAKEY
#define PR_PAC_APIAKEY (1UL << 0)
#endif

static void disable_ia_key(void)
{
	if (prctl(PR_PAC_SET_ENABLED_KEYS, PR_PAC_APIAKEY, 0, 0, 0)) {
		perror("prctl(PR_PAC_SET_ENABLED_KEYS): this kernel or CPU has no pointer authentication");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	void (*loop)(unsigned long);
	unsigned long warmup, iterations;

	int ia_off = argc == 5 && !strcmp(argv[4], "ia-off");

	if (argc != 4 && !ia_off) {
		fprintf(stderr, "usage: %s invalid|getppid WARMUP ITERATIONS [ia-off]\n", argv[0]);
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
	if (ia_off)
		disable_ia_key();

	bench_detail_begin();
	loop(warmup);
	bench_region_begin();
	loop(iterations);
	bench_region_end();
	printf("syscall_loop kind=%s ia=%s ops=%lu\n", argv[1], ia_off ? "off" : "on", iterations);
	return 0;
}
