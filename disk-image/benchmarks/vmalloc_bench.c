/*
 * The kernel's own vmalloc benchmark, test_vmalloc.ko (lib/test_vmalloc.c),
 * as one measured region (claim C2: vmalloc maps and unmaps kernel page-table
 * entries, each write bracketed by kpkeys switches in the kpkeys kernels).
 *
 *   vmalloc_bench MODULE_BASE64 TEST PAGES HUGE LOOPS
 *
 * MODULE_BASE64 is the kernel build's test_vmalloc.ko in base64 (the run's
 * script writes it: the module must match the running kernel, so it cannot
 * live on the disk image). TEST is one of the module's tests by name, e.g.
 * fix_size_alloc_test; PAGES its nr_pages, HUGE its use_huge (0 or 1), LOOPS
 * its test_loop_count. One worker thread, one repeat.
 *
 * The module runs its test from its init function and then fails on purpose
 * (-EAGAIN), so one init_module() call is the whole test; the region holds it,
 * the module's loading and relocation included. The module times its loops
 * itself (ktime) and logs "Summary: <test> passed: P failed: F ... avg: N usec";
 * that N, the published measure, is printed as kernel_us, beside ops=LOOPS.
 */
#include <sys/klog.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench.h"

#define SYSLOG_ACTION_READ_ALL 3
#define SYSLOG_ACTION_CLEAR 5
#define LOG_BYTES (1 << 20)

/* run_test_mask bit i is test i, in lib/test_vmalloc.c's order (Linux 6.12). */
static const char *const tests[] = {
	"fix_size_alloc_test",		 "full_fit_alloc_test",
	"long_busy_list_alloc_test",	 "random_size_alloc_test",
	"fix_align_alloc_test",		 "random_size_align_alloc_test",
	"align_shift_alloc_test",	 "pcpu_alloc_test",
	"kvfree_rcu_1_arg_vmalloc_test", "kvfree_rcu_2_arg_vmalloc_test",
	"vm_map_ram_test",
};

/* The module's summary for test: 1 if found, with its counts and time. */
static int read_summary(const char *test, int *passed, int *failed, unsigned long *usec)
{
	char *log = malloc(LOG_BYTES + 1), *line, *next, name[64];
	int n = klogctl(SYSLOG_ACTION_READ_ALL, log, LOG_BYTES), found = 0;

	if (!log || n < 0)
		bench_die("klogctl");
	log[n] = '\0';
	for (line = log; line; line = next) {
		char *summary = strstr(line, "Summary: ");

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (summary &&
		    sscanf(summary, "Summary: %63s passed: %d failed: %d repeat: %*d loops: %*d avg: %lu usec",
			   name, passed, failed, usec) == 4 &&
		    !strcmp(name, test))
			found = 1;
	}
	free(log);
	return found;
}

int main(int argc, char **argv)
{
	unsigned long pages, huge, loops, usec = 0;
	unsigned char *image;
	char params[256];
	int passed = 0, failed = 0, mask = 0;
	size_t len, i;
	long ret;
	int err;

	if (argc != 6) {
		fprintf(stderr, "usage: vmalloc_bench MODULE_BASE64 TEST PAGES HUGE LOOPS\n");
		return 2;
	}
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (!strcmp(argv[2], tests[i]))
			mask = 1 << i;
	if (!mask) {
		fprintf(stderr, "vmalloc_bench: unknown test '%s'; valid tests:", argv[2]);
		for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
			fprintf(stderr, " %s", tests[i]);
		fputc('\n', stderr);
		return 2;
	}
	pages = bench_count(argv[3], "pages");
	huge = bench_count(argv[4], "huge");
	loops = bench_count(argv[5], "loops");
	if (!pages || huge > 1 || !loops) {
		fprintf(stderr, "vmalloc_bench: PAGES and LOOPS must be positive, HUGE 0 or 1\n");
		return 2;
	}
	image = bench_read_base64(argv[1], &len);
	snprintf(params, sizeof(params),
		 "run_test_mask=%d nr_pages=%lu use_huge=%lu test_loop_count=%lu "
		 "nr_threads=1 test_repeat_count=1 sequential_test_order=1",
		 mask, pages, huge, loops);
	/* Only this run's summary in the log afterwards. */
	if (klogctl(SYSLOG_ACTION_CLEAR, NULL, 0) < 0)
		bench_die("klogctl clear");

	/* No warm-up loop: the core model starts at the region (its TLBs and
	 * predictors cold, the caches warmed by the fast CPU). */
	bench_detail_begin();
	bench_region_begin();
	ret = syscall(SYS_init_module, image, len, params);
	err = errno;
	bench_region_end();

	if (ret == 0 || err != EAGAIN) {
		fprintf(stderr, "vmalloc_bench: init_module returned %ld (%s), not EAGAIN: "
			"the module did not run its test\n", ret, ret ? strerror(err) : "loaded");
		return 1;
	}
	if (!read_summary(argv[2], &passed, &failed, &usec)) {
		fprintf(stderr, "vmalloc_bench: no summary for %s in the kernel log\n", argv[2]);
		return 1;
	}
	if (failed || !passed) {
		fprintf(stderr, "vmalloc_bench: %s passed %d, failed %d\n", argv[2], passed, failed);
		return 1;
	}
	printf("vmalloc_bench test=%s pages=%lu huge=%lu kernel_us=%lu ops=%lu\n",
	       argv[2], pages, huge, usec, loops);
	free(image);
	return 0;
}
