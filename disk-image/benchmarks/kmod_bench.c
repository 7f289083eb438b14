/*
 * A kernel module that measures itself, as one run (the system-register
 * microbenchmarks: test_sysreg_cost, lib/ in the sysreg-bench kernel).
 *
 *   kmod_bench MODULE_BASE64 PARAM=VALUE...
 *
 * MODULE_BASE64 is the module of the run's kernel build in base64 (the run's
 * script writes it). The module gets the parameters, brackets its own timed
 * loop with the m5 operations (the detailed core, statistics reset and dump)
 * and then fails to load on purpose (EAGAIN), so one init_module() call is
 * the whole run and nothing of the loading is in the region. What the module
 * logged is printed (its "ops=" line is the run's count); any other outcome,
 * e.g. an unknown operation, prints the module's log and fails the run.
 */
#include <sys/klog.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench.h"

#define SYSLOG_ACTION_READ_ALL 3
#define SYSLOG_ACTION_CLEAR 5
#define LOG_BYTES (1 << 20)

/* The kernel log since it was cleared, each line as "kernel: <line>". */
static void print_log(FILE *out)
{
	char *log = malloc(LOG_BYTES + 1), *line, *next;
	int n = log ? klogctl(SYSLOG_ACTION_READ_ALL, log, LOG_BYTES) : -1;

	if (n < 0)
		bench_die("klogctl");
	log[n] = '\0';
	for (line = log; *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		fprintf(out, "kernel: %s\n", line);
	}
	free(log);
}

int main(int argc, char **argv)
{
	char params[1024] = "";
	unsigned char *image;
	size_t len, used = 0;
	long ret;
	int i, err;

	if (argc < 2) {
		fprintf(stderr, "usage: kmod_bench MODULE_BASE64 PARAM=VALUE...\n");
		return 2;
	}
	for (i = 2; i < argc; i++) {
		if (!strchr(argv[i], '=')) {
			fprintf(stderr, "kmod_bench: '%s' is not PARAM=VALUE\n", argv[i]);
			return 2;
		}
		used += snprintf(params + used, sizeof(params) - used, "%s%s", used ? " " : "",
				 argv[i]);
		if (used >= sizeof(params)) {
			fprintf(stderr, "kmod_bench: parameters longer than %zu bytes\n",
				sizeof(params) - 1);
			return 2;
		}
	}
	image = bench_read_base64(argv[1], &len);
	/* Only this module's lines in the log afterwards. */
	if (klogctl(SYSLOG_ACTION_CLEAR, NULL, 0) < 0)
		bench_die("klogctl clear");
	ret = syscall(SYS_init_module, image, len, params);
	err = errno;
	free(image);
	if (ret == 0 || err != EAGAIN) {
		print_log(stderr);
		fprintf(stderr, "kmod_bench: init_module returned %ld (%s), not EAGAIN: the module "
			"did not measure\n", ret, ret ? strerror(err) : "loaded");
		return 1;
	}
	print_log(stdout);
	return 0;
}
