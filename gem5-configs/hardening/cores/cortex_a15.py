"""Cortex-A15, as in the Samsung Exynos 5250 (claim C3 on gem5's 32-bit board).

An AArch32-only core: it runs on ``hardening/board32.py``'s board (ArmRelease
with LPAE only, ``highest_el_is_64=False``), never on the arm64 machine, so it
is listed in ``catalog.ARM32_CORE_MODULES`` and not among the arm64 cores. The
ISA object is gem5's default ``ArmISA``: its MIDR (0, which gem5 reads as
Cortex-A15 r0p0) is the one the atomic boot ran with, and a restored kernel
keeps the errata choices it made for it at boot.

Source keys (docs/parameter-sources.md):
  A15-TRM   Arm Cortex-A15 MPCore Processor TRM (DDI 0438): caches, TLBs,
            L2 policies, the branch predictor's parts (no sizes)
  CPUINFO   pytorch/cpuinfo, quoting A15-TRM sections 5.2, 6.1, 7.1
  AT-T4     AnandTech, NVIDIA Tegra 4 architecture deep dive (2013), its
            Cortex-A15 section: 15-stage integer pipeline, 3-wide front end,
            128-entry ROB, issue queues that all dispatch in parallel
  WP-A15    Wikipedia, ARM Cortex-A15: 15-stage integer / 17-25-stage FP
            pipeline, 3-way superscalar out-of-order
  A15-OV    Arm's Cortex-A15 technical overview as summarised in a public
            forum post (128-bit fetch; one load and one store per cycle)
  GCC-A15   gcc/config/arm/cortex-a15.md and cortex-a15-neon.md, the pipeline
            description written at Arm (an Arm-authored scheduling model, as
            LLVM-N1 is for the A76): pipes, issue slots, latencies
  7CPU-A15  7-cpu.com measurements on the Exynos 5250 (1.7 GHz): L1D 4
            cycles, L2 21 cycles, RAM 21 cycles + 110 ns, TLB miss costs
Where no public figure exists, the comment says "assumption" and why; gem5's
own default is kept for values that cannot matter to a getppid() loop.
"""

from __future__ import annotations

from m5.objects import (
    ArmO3CPU,
    BiModeBP,
    Cache,
    FUDesc,
    OpDesc,
    RandomRP,
    ReturnAddrStack,
    SimpleBTB,
    StridePrefetcher,
)

from hardening.cores.base import (
    CoreModel,
    dram,
    fu_pool,
    load_pipes,
    single_cycle_int_pipes,
    vector_pipes,
)
from hardening.sysreg import SysRegClass, SysRegTiming

# GCC-A15 (cortex-a15-neon.md): single-precision VFP add 6, multiply 7. The
# others keep gem5's values: the kernel's entry path and getppid() run no FP.
A15_VECTOR_LATENCIES = {"FloatAdd": 6, "FloatMult": 7}


def a15_fu_pool():
    """The integer cluster of GCC-A15: two simple pipes (SX1, SX2) and the branch
    pipe (BX; gem5 runs branches as IntAlu ops), one multiply/divide pipe (MX),
    the NEON/FP cluster's two pipes, and one load and one store pipe (A15-OV;
    GCC-A15's LS1/LS2 feed one load and one store stage)."""
    multiply_divide = FUDesc(opList=[
        OpDesc(opClass="IntMult", opLat=3),  # 32-bit MUL 3 (GCC-A15; 64-bit result 4)
        # SDIV 10, UDIV 9 (GCC-A15): the signed one, as gem5 has one divide class.
        OpDesc(opClass="IntDiv", opLat=10, pipelined=False),
    ], count=1)
    store = FUDesc(opList=[OpDesc(opClass=c) for c in ("MemWrite", "FloatMemWrite")],
                   count=1)
    return fu_pool(
        single_cycle_int_pipes(3),
        multiply_divide,
        vector_pipes(2, A15_VECTOR_LATENCIES),
        load_pipes(1),
        store,
    )


class A15BranchPredictor(BiModeBP):
    """A15-TRM lists a BTB, a 2-level global-history direction predictor, an
    indirect predictor, a return stack and a static predictor, with no sizes.
    gem5's BiMode predictor is a global-history (2-level) one; its table sizes,
    and the BTB's, stay gem5's defaults (assumption: nothing public)."""

    btb = SimpleBTB(numEntries=4096)  # gem5 default; A15 BTB size not published
    ras = ReturnAddrStack(numEntries=16)  # gem5 default; not published (assumption)


class CortexA15CPU(ArmO3CPU):
    # Front end: 128 bits (16 B) fetched per cycle (A15-OV) = 4 A32 instructions;
    # 3-wide decode (AT-T4, WP-A15).
    fetchWidth = 4
    fetchBufferSize = 16
    decodeWidth = 3
    renameWidth = 3
    # Three instructions enter the issue queues per cycle (GCC-A15: "we can
    # issue into three pipelines per-cycle"; AT-T4: each queue accepts up to
    # three), and all queues dispatch in parallel (AT-T4): one per pipe, 8.
    dispatchWidth = 3
    issueWidth = 8
    wbWidth = 8
    # Retire width is not published; a 3-wide machine (assumption: equal to
    # decode, the rate it can sustain).
    commitWidth = 3
    numROBEntries = 128  # "Cortex A15 can hold 128" decoded instructions (AT-T4)
    # Issue-queue, load/store-queue and register-file sizes are not published
    # (assumption): gem5's defaults (64, 32/32, 256/256), which a 128-entry
    # ROB running a syscall loop does not fill.
    # 15-stage integer pipeline (AT-T4, WP-A15). gem5's mispredict penalty is
    # about fetchToDecode + decodeToRename + renameToIEW + issueToExecute + 1
    # (execute) + 1 (redirect) + ~2 (refetch) = 4 + 3 + 3 + 1 + 4 = 15 (D; the
    # split between stages is an assumption, and no mispredict run has checked it).
    fetchToDecodeDelay = 4
    decodeToRenameDelay = 3
    renameToIEWDelay = 3
    issueToExecuteDelay = 1
    iewToCommitDelay = 1
    trapLatency = 13  # gem5 default; the A15's exception-entry cost is not published
    fuPool = a15_fu_pool()
    branchPred = A15BranchPredictor()

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        # L1 instruction TLB 32 entries, fully associative; two 32-entry fully
        # associative data TLBs, one for loads and one for stores (gem5 has one
        # data TLB: 32, what either kind of access sees); unified L2 TLB of 512
        # entries, 4-way (A15-TRM 5.2 via CPUINFO; 7CPU-A15 measured the same).
        self.mmu.itb.size = 32
        self.mmu.dtb.size = 32
        self.mmu.l2_shared.size = 512


class A15L1I(Cache):
    """32 KB, 2-way, 64 B lines (A15-TRM 6.1 via CPUINFO). Latencies as the other
    models' L1I: gem5 has no fetch-stage overlap, so 1-cycle tag/data keeps
    taken-branch bubbles small (modeller's choice)."""

    size = "32KiB"
    assoc = 2
    tag_latency = 1
    data_latency = 1
    response_latency = 1
    mshrs = 8  # not published (assumption)
    tgts_per_mshr = 16
    writeback_clean = True


class A15L1D(Cache):
    """32 KB, 2-way, 64 B lines (A15-TRM 6.1 via CPUINFO), LRU (7CPU-A15);
    4-cycle load-to-use (7CPU-A15 measured, GCC-A15 load latency 4): 1 cycle of
    address generation in the pipe + 3 here, as in the A76 model. A15-TRM lists
    a hardware prefetcher for the L2 only, so none here."""

    size = "32KiB"
    assoc = 2
    tag_latency = 3
    data_latency = 3
    response_latency = 1
    mshrs = 8  # not published (assumption)
    tgts_per_mshr = 16
    writeback_clean = False


class A15L2(Cache):
    """The cluster's shared L2: 1 MB, 16-way, 64 B lines on the Exynos 5250
    (7CPU-A15, CPUINFO; A15-TRM allows 512 KB-4 MB), strictly inclusive of the
    L1 data caches, random replacement, optional hardware prefetcher (A15-TRM
    7.1). 21-cycle load-to-use (7CPU-A15): 21 - 4 paid in the L1 -> 17, of which
    gem5's L1 miss handling and crossbar take about 2 (the A76 model's
    validation), so 15 here: tag/data 12 in parallel + response 3 (D; not yet
    checked with a latency run on this model)."""

    size = "1MiB"
    assoc = 16
    tag_latency = 12
    data_latency = 12
    response_latency = 3
    mshrs = 16  # not published (assumption)
    tgts_per_mshr = 16
    clusivity = "mostly_incl"
    writeback_clean = False
    replacement_policy = RandomRP()
    # Degree not published (assumption): the A76 model's L2 value.
    prefetcher = StridePrefetcher(degree=8)


# System-register timing (gem5 patches 0004 and 0019, which time the A32 MCR,
# MRC and ISB). Software PAN's cost is the DACR write (an MCR) and the ISB
# after it, on every kernel entry and exit and around every user access. No
# public source gives the A15's cost of either, so DACR has a class of its own
# at gem5's timing (the MCR executes at the head of the ROB and younger
# instructions wait for it to commit, no extra latency; the ISB squashes and
# refetches, no extra latency): the default is stated, not fitted. Sweep it
# with --param sysreg.dacr.write_latency=N, sysreg.isb_latency=N, or relax it
# with sysreg.dacr.write_serialize=false (+ write_nonspeculative=false).
A15_SYSREG_TIMING = SysRegTiming(
    classes={"dacr": SysRegClass(regs=("dacr",))},
    source="DACR in its own class at gem5 v24 timing (MCR drains, ISB squashes, "
           "no extra latency): no public A15 cost of either",
)


MODEL = CoreModel(
    name="cortex-a15",
    summary="Arm Cortex-A15 (Samsung Exynos 5250), AArch32 only",
    clock="1.7GHz",  # Exynos 5250 (7CPU-A15)
    native_features=frozenset(),  # Armv7-A: no PAN (software PAN is the kernel's)
    make_cpu=lambda cpu_id: CortexA15CPU(cpu_id=cpu_id),
    make_l1i=A15L1I,
    make_l1d=A15L1D,
    make_l2=A15L2,  # shared by the cluster's cores (caches.ClusterL1SharedL2)
    # Exynos 5250: 32-bit DDR3L-1600 on two ports, 12.8 GB/s (7CPU-A15); one
    # 64-bit DDR3-1600 channel of gem5's has the same peak bandwidth.
    make_memory=dram("DDR3-1600", 1),
    sysreg_timing=A15_SYSREG_TIMING,
    notes={"memory": "Exynos 5250 2x32-bit DDR3L-1600 (12.8 GB/s) as 1x64-bit DDR3-1600"},
)
