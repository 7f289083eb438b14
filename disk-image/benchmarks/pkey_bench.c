/*
 * Cost of memory protection keys on FEAT_S1POE (Linux 6.12 pkeys on arm64).
 *
 *   pkey_bench set|deny-pkey|deny-prot WARMUP ITERATIONS
 *
 * "set" is what pkey_set() does: read POR_EL0, change one key's
 * permission, write POR_EL0, ISB (so later accesses see the new overlay).
 * Each iteration flips the key between read-write and read-only.
 *
 * "deny-pkey" loads from a page whose key's overlay forbids access: the
 * permission fault goes to the kernel, which sees that the pkey denied it
 * (SEGV_PKUERR) and delivers SIGSEGV; the handler steps over the load and
 * returns. "deny-prot" does the same on a PROT_NONE page (SEGV_ACCERR): the
 * same fault and signal path without an overlay, for comparison.
 *
 * The deny modes need a kernel with CONFIG_ARM64_POE on a CPU with POE;
 * without it pkey_alloc() fails and the benchmark says so.
 */
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "bench.h"

#ifndef SEGV_PKUERR
#define SEGV_PKUERR 4
#endif
#define PKEY_DISABLE_ACCESS 0x1
#define POE_BITS_PER_KEY 4
#define POE_RW 0x5UL
#define POE_R 0x1UL
#define PAGE 4096

static inline uint64_t read_por_el0(void)
{
	uint64_t value;

	asm volatile("mrs	%0, s3_3_c10_c2_4" : "=r"(value));
	return value;
}

static inline void write_por_el0(uint64_t value)
{
	asm volatile("msr	s3_3_c10_c2_4, %0\n\tisb" : : "r"(value) : "memory");
}

static int pkey_alloc_or_die(unsigned int access_rights)
{
	long key = syscall(SYS_pkey_alloc, 0, access_rights);

	if (key < 0) {
		perror("pkey_alloc: this kernel or CPU has no protection keys (POE)");
		exit(1);
	}
	return (int)key;
}

static void run_set(int key, unsigned long n)
{
	const unsigned int shift = key * POE_BITS_PER_KEY;
	const uint64_t mask = 0xfUL << shift;

	for (unsigned long i = 0; i < n; i++) {
		uint64_t perm = (i & 1) ? POE_R : POE_RW;

		write_por_el0((read_por_el0() & ~mask) | (perm << shift));
	}
}

static volatile unsigned long faults;
static volatile int expected_code;

static void step_over_load(int sig, siginfo_t *info, void *context)
{
	ucontext_t *uc = context;

	(void)sig;
	if (info->si_code != expected_code) {
		static const char msg[] = "pkey_bench: unexpected si_code\n";

		write(2, msg, sizeof(msg) - 1);
		_exit(1);
	}
	faults++;
	uc->uc_mcontext.pc += 4;
}

static void run_denied(volatile const char *page, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		asm volatile("ldrb	wzr, [%0]" : : "r"(page) : "memory");
}

int main(int argc, char **argv)
{
	unsigned long warmup, iterations;
	char *page = NULL;
	int key = -1;

	if (argc != 4) {
		fprintf(stderr, "usage: %s set|deny-pkey|deny-prot WARMUP ITERATIONS\n", argv[0]);
		return 2;
	}
	warmup = bench_count(argv[2], "WARMUP");
	iterations = bench_count(argv[3], "ITERATIONS");

	if (!strcmp(argv[1], "set")) {
		key = pkey_alloc_or_die(0);
		bench_detail_begin();
		run_set(key, warmup);
		bench_region_begin();
		run_set(key, iterations);
		bench_region_end();
	} else if (!strcmp(argv[1], "deny-pkey") || !strcmp(argv[1], "deny-prot")) {
		struct sigaction action;
		int by_pkey = !strcmp(argv[1], "deny-pkey");

		page = bench_map(PAGE, PAGE, MADV_NORMAL);
		if (by_pkey) {
			key = pkey_alloc_or_die(PKEY_DISABLE_ACCESS);
			if (syscall(SYS_pkey_mprotect, page, PAGE, PROT_READ | PROT_WRITE, key)) {
				perror("pkey_mprotect");
				return 1;
			}
			expected_code = SEGV_PKUERR;
		} else {
			if (mprotect(page, PAGE, PROT_NONE)) {
				perror("mprotect");
				return 1;
			}
			expected_code = SEGV_ACCERR;
		}
		memset(&action, 0, sizeof(action));
		action.sa_sigaction = step_over_load;
		action.sa_flags = SA_SIGINFO;
		sigaction(SIGSEGV, &action, NULL);
		bench_detail_begin();
		run_denied(page, warmup);
		bench_region_begin();
		run_denied(page, iterations);
		bench_region_end();
		if (faults != warmup + iterations) {
			fprintf(stderr, "expected %lu faults, got %lu\n", warmup + iterations, faults);
			return 1;
		}
	} else {
		fprintf(stderr, "unknown mode '%s' (valid: set, deny-pkey, deny-prot)\n", argv[1]);
		return 2;
	}
	printf("pkey_bench mode=%s key=%d ops=%lu\n", argv[1], key, iterations);
	return 0;
}
