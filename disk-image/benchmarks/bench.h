/* Shared helpers for the guest benchmarks: argument parsing and the m5 ops
 * that bracket the measured region. */
#ifndef BENCH_H
#define BENCH_H

#include <stdio.h>
#include <stdlib.h>

#include <gem5/m5ops.h>

static inline unsigned long bench_count(const char *text, const char *what)
{
	char *end;
	unsigned long value = strtoul(text, &end, 0);

	if (*text == '\0' || *end != '\0') {
		fprintf(stderr, "bad %s: '%s'\n", what, text);
		exit(2);
	}
	return value;
}

/* Statistics gathered between these two calls are what the run reports. */
static inline void bench_region_begin(void)
{
	m5_reset_stats(0, 0);
}

static inline void bench_region_end(void)
{
	m5_dump_stats(0, 0);
}

#endif
