/*
 * Branch misprediction penalty: one data-dependent conditional branch per
 * byte of an array, either unpredictable or trivially predictable.
 *
 *   branch_mispredict random|predictable WARMUP N
 *
 * The branch is a `tbnz` on bit 0 of each loaded byte, written in inline asm
 * so the compiler cannot turn it into a conditional select. "random" fills
 * the bytes from a PRNG (about half taken, in no learnable order);
 * "predictable" repeats 32 not-taken then 32 taken bytes (exactly half
 * taken; even a bimodal counter mispredicts only at the two switches).
 * A period-2 pattern (0, 1, 0, 1) was tried first: gem5's TAGE-SC-L, as
 * configured in these models, mispredicted it as often as random data.
 * The taken and not-taken paths execute the same number of instructions, and
 * both modes take the branch equally often, so the modes differ only in
 * mispredictions. WARMUP bytes are run first, outside the region, from
 * their own part of the array (so the measured random sequence is not one
 * the predictor has just seen), then N bytes are measured.
 *
 * Metric (host side): penalty = (cycles_random - cycles_predictable) /
 * (mispredicts_random - mispredicts_predictable), from the region stats of
 * two runs with equal N, so it holds whatever the predictor gets right.
 * ops= is N and taken= the measured taken branches (counted by the loop).
 *
 * Cost: about 6 instructions per byte, plus under 1 to fill the array;
 * e.g. WARMUP 20000 N 200000.
 */
#include <string.h>

#include "bench.h"

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s random|predictable WARMUP N\n", prog);
	exit(2);
}

/* Runs the branch over n bytes from p; returns how many were taken. */
static unsigned long branch_loop(const unsigned char *p, unsigned long n)
{
	unsigned long taken = 0, not_taken = 0, byte;

	asm volatile("cbz	%[n], 9f\n"
		     ".p2align 6\n"
		     "1:\n\t"
		     "ldrb	%w[b], [%[p]], #1\n\t"
		     "tbnz	%w[b], #0, 2f\n\t"
		     "add	%[nt], %[nt], #1\n\t"
		     "b	3f\n"
		     "2:\n\t"
		     "add	%[t], %[t], #1\n\t"
		     "nop\n"
		     "3:\n\t"
		     "subs	%[n], %[n], #1\n\t"
		     "b.ne	1b\n"
		     "9:"
		     : [p] "+r"(p), [n] "+r"(n), [t] "+r"(taken),
		       [nt] "+r"(not_taken), [b] "=&r"(byte)
		     :
		     : "cc", "memory");
	return taken;
}

int main(int argc, char **argv)
{
	unsigned long warmup, n, total, taken;
	uint64_t *words, seed = 0x2545f4914f6cdd1dULL;
	unsigned char *bytes;
	int random;

	if (argc != 4)
		usage(argv[0]);
	if (!strcmp(argv[1], "random"))
		random = 1;
	else if (!strcmp(argv[1], "predictable"))
		random = 0;
	else {
		fprintf(stderr, "unknown mode '%s' (valid: random, predictable)\n", argv[1]);
		usage(argv[0]);
	}
	warmup = bench_count(argv[2], "WARMUP");
	n = bench_count(argv[3], "N");
	if (n == 0) {
		fprintf(stderr, "bad N: must be positive\n");
		usage(argv[0]);
	}
	/* Warm-up and measured bytes, filled 8 at a time; the measured part
	 * starts on a 64-byte boundary, so it begins a not-taken block. */
	warmup = (warmup + 63) & ~63UL;
	total = (warmup + n + 7) / 8;
	words = malloc(total * sizeof(*words));
	if (!words) {
		perror("malloc");
		return 1;
	}
	for (unsigned long i = 0; i < total; i++)
		words[i] = random ? bench_rand(&seed) :
			   (i & 4) ? 0x0101010101010101ULL : 0;
	bytes = (unsigned char *)words;

	bench_detail_begin();
	branch_loop(bytes, warmup);
	bench_region_begin();
	taken = branch_loop(bytes + warmup, n);
	bench_region_end();

	printf("branch_mispredict mode=%s taken=%lu ops=%lu\n", argv[1], taken, n);
	free(words);
	return 0;
}
