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

/* The mode a run's argument names; an unknown name ends the run. */
static inline enum mode mte_mode(const char *name)
{
	for (unsigned int m = 0; m < N_MODES; m++)
		if (!strcmp(name, mode_names[m]))
			return (enum mode)m;
	fprintf(stderr, "unknown mode '%s' (valid: untagged, none, sync, async, asymm)\n", name);
	exit(2);
}

static inline void set_preferred_asymm(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/cpu0/mte_tcf_preferred", "w");

	if (!f || fputs("asymm", f) < 0 || fclose(f)) {
		perror("mte_tcf_preferred=asymm: no asymmetric MTE (FEAT_MTE3) on this CPU");
		exit(1);
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
