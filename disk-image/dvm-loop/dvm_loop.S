/* Bare-metal DVM loop for the TLB-maintenance cross-check (no kernel).
 *
 * Every core of a gem5 bare-metal Arm system starts here at EL3 with its MMU
 * off. Core 0 times ROUNDS rounds of TLBIS broadcast `tlbi vale1is` followed by
 * one `dsb ish`, between an m5 resetstats and an m5 dumpstats, then ends the
 * simulation; the stats dump's simulated ticks are the measurement. The other
 * cores either wait in WFI (IDLE_PEERS) or run the same loop for ever, so that
 * their broadcasts contend with core 0's for the system's DVM path.
 *
 * Each core first turns its EL3 MMU on over an identity map (DRAM Normal
 * write-back, the rest Device): with the MMU off gem5 makes every AArch64
 * access uncacheable, instruction fetches included, and the loop would be
 * timed against memory. The TLBIs invalidate the EL1&0 regime, which nothing
 * here uses, so they never touch the EL3 entries the loop runs on.
 */
#include <gem5/asm/generic/m5ops.h>

#ifndef TLBIS
#error "TLBIS: broadcast TLBIs per DSB"
#endif
#ifndef ROUNDS
#error "ROUNDS: rounds core 0 times"
#endif

#define SCTLR_M		(1 << 0)
#define SCTLR_C		(1 << 2)
#define SCTLR_I		(1 << 12)
/* TCR_EL3: RES1 bits 31 and 23; 4 GiB of VA (T0SZ 32, walks start at level
 * 1), 4 KiB granule, tables inner shareable and write-back cacheable. */
#define TCR_EL3_VALUE	((1 << 31) | (1 << 23) | (3 << 12) | (1 << 10) | (1 << 8) | 32)
/* MAIR_EL3: attribute 0 Normal write-back, attribute 1 Device-nGnRnE. */
#define MAIR_EL3_VALUE	0x00ff
/* Level-1 block descriptors (1 GiB): access flag, then memory attributes. */
#define BLOCK_DEVICE	((1 << 10) | (1 << 2) | 1)
#define BLOCK_NORMAL	((1 << 10) | (3 << 8) | 1)
#define MPIDR_AFF0	0xff

/* gem5's AArch64 pseudo-instruction encoding (util/m5/src/abi/arm64). */
.macro	m5op func
	.long	0xff000110 | (\func << 16)
.endm

.macro	broadcast_round
	.rept	TLBIS
	tlbi	vale1is, xzr
	.endr
	dsb	ish
.endm

	.text
	.globl	_start
_start:
	adr	x0, level1_table
	msr	ttbr0_el3, x0
	ldr	w0, =TCR_EL3_VALUE
	msr	tcr_el3, x0
	mov	x0, #MAIR_EL3_VALUE
	msr	mair_el3, x0
	isb
	/* No TLBI ALLE3 first: the TLBs come out of reset empty. */
	mrs	x0, sctlr_el3
	mov	x1, #(SCTLR_M | SCTLR_C | SCTLR_I)
	orr	x0, x0, x1
	msr	sctlr_el3, x0
	isb
	mrs	x1, mpidr_el1
	and	x1, x1, #MPIDR_AFF0
	cbz	x1, timed

#ifdef IDLE_PEERS
peer:
	wfi
	b	peer
#else
peer:
	broadcast_round
	b	peer
#endif

timed:
	/* One untimed round brings the loop into the instruction cache. */
	broadcast_round
	mov	x0, #0
	mov	x1, #0
	m5op	M5OP_RESET_STATS
	mov	x2, #ROUNDS
1:
	broadcast_round
	subs	x2, x2, #1
	b.ne	1b
	mov	x0, #0
	mov	x1, #0
	m5op	M5OP_DUMP_STATS
	mov	x0, #0
	m5op	M5OP_EXIT
2:
	b	2b

	.ltorg

	.section .rodata
	.balign	4096
level1_table:
	.quad	0x00000000 | BLOCK_DEVICE
	.quad	0x40000000 | BLOCK_DEVICE
	.quad	0x80000000 | BLOCK_NORMAL
	.quad	0xc0000000 | BLOCK_DEVICE
