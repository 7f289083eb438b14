/*
 * Cost of MTE tag checking (FEAT_MTE2/MTE3, Linux 6.12 user-space MTE).
 *
 *   mte_bench untagged|none|sync|async|asymm tag|access|memset SIZE_BYTES PASSES
 *
 * SIZE_BYTES of memory is split into 64-byte objects. Every object gets a
 * random tag as an allocator would give it: IRG picks the tag, two ST2G
 * store it for the object's four granules, and the tagged pointer goes into
 * a table of object pointers (plain, untagged memory).
 *
 *   tag     the measured region tags every object PASSES times
 *   access  objects are tagged once; the measured region then does
 *           PASSES * (SIZE_BYTES / 64) accesses to objects picked at random:
 *           load the object's pointer from the table, load its first word,
 *           store to its second (the load and the store are tag-checked)
 *   memset  the measured region fills the whole memory PASSES times with
 *           memset() through an untagged pointer, the memory's tags left 0:
 *           nothing but the checks of streaming stores, as the published
 *           Pixel 8 measurement of bulk stores into PROT_MTE memory does
 *           (a nonzero byte, so that memset stores rather than zeroes blocks
 *           with DC ZVA); ops counts its 64-byte lines
 *
 * The first argument sets the task's tag-check mode with
 * prctl(PR_SET_TAGGED_ADDR_CTRL): none (tagged memory, no checks), sync,
 * async, or asymm (sync loads, async stores; the kernel picks it when the
 * CPU's preferred mode is asymm, which the benchmark sets through sysfs).
 * "untagged" maps the memory without PROT_MTE and does not tag: the same
 * loop on plain memory. An access with the wrong tag ends the benchmark
 * (sync: SIGSEGV; async: SIGSEGV at the next kernel entry).
 */
#include "mte.h"

#define OBJECT 64
#define PAGE 4096

static inline char *tag_object(char *object)
{
	char *tagged;

	asm volatile(".arch armv8.5-a+memtag\n\t"
		     "irg	%0, %1\n\t"
		     "st2g	%0, [%0]\n\t"
		     "st2g	%0, [%0, #32]"
		     : "=&r"(tagged)
		     : "r"(object)
		     : "memory");
	return tagged;
}

static void tag_all(char *memory, char **table, unsigned long objects, int tagged)
{
	for (unsigned long i = 0; i < objects; i++)
		table[i] = tagged ? tag_object(memory + i * OBJECT) : memory + i * OBJECT;
}

static void access_random(char **table, unsigned long objects, unsigned long n)
{
	uint64_t state = 0x9e3779b97f4a7c15ULL;

	for (unsigned long i = 0; i < n; i++) {
		volatile uint64_t *object = (volatile uint64_t *)table[bench_below(&state, objects)];

		object[1] = object[0] + i;
	}
}

int main(int argc, char **argv)
{
	unsigned long size, passes, objects, ops;
	enum mode mode;
	char *memory, **table;
	int measure_tagging;

	if (argc != 5) {
		fprintf(stderr, "usage: %s ", argv[0]);
		print_modes("|");
		fprintf(stderr, " tag|access|memset SIZE_BYTES PASSES\n");
		return 2;
	}
	mode = mte_mode(argv[1]);
	if (strcmp(argv[2], "tag") && strcmp(argv[2], "access") && strcmp(argv[2], "memset")) {
		fprintf(stderr, "unknown phase '%s' (valid: tag, access, memset)\n", argv[2]);
		return 2;
	}
	measure_tagging = !strcmp(argv[2], "tag");
	size = bench_count(argv[3], "SIZE_BYTES");
	passes = bench_count(argv[4], "PASSES");
	if (size < PAGE || size % PAGE) {
		fprintf(stderr, "SIZE_BYTES must be a positive multiple of %d\n", PAGE);
		return 2;
	}
	objects = size / OBJECT;

	memory = bench_map(size, PAGE, MADV_NOHUGEPAGE);
	if (mode != UNTAGGED) {
		set_check_mode(mode);
		if (mprotect(memory, size, PROT_READ | PROT_WRITE | PROT_MTE)) {
			perror("mprotect(PROT_MTE)");
			return 1;
		}
	}
	table = bench_map((objects * sizeof(*table) + PAGE - 1) / PAGE * PAGE, PAGE,
			  MADV_NOHUGEPAGE);

	if (!strcmp(argv[2], "memset")) {
		bench_detail_begin();
		/* One unmeasured pass warms caches, TLBs and predictors. */
		memset(memory, 0x5a, size);
		bench_region_begin();
		for (unsigned long p = 0; p < passes; p++)
			memset(memory, 0x5a, size);
		bench_region_end();
		printf("mte_bench mode=%s phase=memset size=%lu ops=%lu\n", mode_names[mode],
		       size, passes * objects);
		return 0;
	}
	bench_detail_begin();
	/* One unmeasured pass warms caches, TLBs and predictors. */
	tag_all(memory, table, objects, mode != UNTAGGED);
	if (measure_tagging) {
		bench_region_begin();
		for (unsigned long p = 0; p < passes; p++)
			tag_all(memory, table, objects, mode != UNTAGGED);
		bench_region_end();
		ops = passes * objects;
	} else {
		access_random(table, objects, objects);
		bench_region_begin();
		access_random(table, objects, passes * objects);
		bench_region_end();
		ops = passes * objects;
	}
	printf("mte_bench mode=%s phase=%s size=%lu ops=%lu\n", mode_names[mode], argv[2],
	       size, ops);
	return 0;
}
