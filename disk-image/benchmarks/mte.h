/* Shared by the MTE benchmarks: the task's tag-check modes and how a run
 * picks one. */
#ifndef MTE_H
#define MTE_H

#include <string.h>
#include <sys/prctl.h>

#include "bench.h"

#ifndef PROT_MTE
#define PROT_MTE 0x20
#endif
#ifndef PR_SET_TAGGED_ADDR_CTRL
#define PR_SET_TAGGED_ADDR_CTRL 55
#endif
#ifndef PR_TAGGED_ADDR_ENABLE
#define PR_TAGGED_ADDR_ENABLE (1UL << 0)
#endif
#ifndef PR_MTE_TCF_SYNC
#define PR_MTE_TCF_SYNC (1UL << 1)
#define PR_MTE_TCF_ASYNC (1UL << 2)
#define PR_MTE_TAG_SHIFT 3
#endif
/* Every tag but 0 (0 is what untagged pointers carry). */
#define NONZERO_TAGS 0xfffeUL

/* untagged: plain memory, no PROT_MTE; none: tagged memory, checks off. */
enum mode { UNTAGGED, NONE, SYNC, ASYNC, ASYMM };
static const char *const mode_names[] = { "untagged", "none", "sync", "async", "asymm" };
#define N_MODES (sizeof(mode_names) / sizeof(mode_names[0]))

/* The modes' names on standard error, separated by separator. */
static inline void print_modes(const char *separator)
{
	for (unsigned int m = 0; m < N_MODES; m++)
		fprintf(stderr, "%s%s", m ? separator : "", mode_names[m]);
}

/* The mode a run's argument names; an unknown name ends the run. */
static inline enum mode mte_mode(const char *name)
{
	for (unsigned int m = 0; m < N_MODES; m++)
		if (!strcmp(name, mode_names[m]))
			return (enum mode)m;
	fprintf(stderr, "unknown mode '%s' (valid: ", name);
	print_modes(", ");
	fprintf(stderr, ")\n");
	exit(2);
}

/* Every CPU's preferred mode asymm: the kernel picks a task's mode on the CPU
 * it runs on, so one CPU left at its default would time another mode. */
static inline void set_preferred_asymm(void)
{
	char path[80];
	int cpu;

	for (cpu = 0;; cpu++) {
		FILE *f;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/mte_tcf_preferred",
			 cpu);
		f = fopen(path, "w");
		if (!f && cpu > 0 && errno == ENOENT)
			return;
		if (!f || fputs("asymm", f) < 0 || fclose(f)) {
			fprintf(stderr, "cpu%d: ", cpu);
			perror("mte_tcf_preferred=asymm: no asymmetric MTE (FEAT_MTE3) on this CPU");
			exit(1);
		}
	}
}

/*
 * The task's tag checks (prctl(PR_SET_TAGGED_ADDR_CTRL)), IRG allowed every
 * nonzero tag. asymm (sync loads, async stores) is what the kernel picks from
 * sync|async when the CPU's preferred mode is asymm, set here through sysfs.
 */
static inline void set_check_mode(enum mode mode)
{
	unsigned long ctrl = PR_TAGGED_ADDR_ENABLE | (NONZERO_TAGS << PR_MTE_TAG_SHIFT);

	if (mode == SYNC)
		ctrl |= PR_MTE_TCF_SYNC;
	else if (mode == ASYNC)
		ctrl |= PR_MTE_TCF_ASYNC;
	else if (mode == ASYMM) {
		set_preferred_asymm();
		ctrl |= PR_MTE_TCF_SYNC | PR_MTE_TCF_ASYNC;
	}
	if (prctl(PR_SET_TAGGED_ADDR_CTRL, ctrl, 0, 0, 0)) {
		perror("prctl(PR_SET_TAGGED_ADDR_CTRL): this kernel or CPU has no MTE");
		exit(1);
	}
}

#endif
