"""Neoverse V2, as in AWS Graviton4.

Source keys are those of docs/parameter-sources.md:
  HC23     Arm Hot Chips 2023 Neoverse V2 talk (via transcription)
  JG-V2    jiegec's notes quoting the V2 TRM/SWOG, with Graviton4 measurements
  LLVM-V2  Arm-authored LLVM scheduling model (from the V2 SWOG)
  SWOG     Arm Software Optimization Guide, V2
  AWS      aws-graviton-getting-started (Graviton4 product figures)
  GEM5-V2  upstream gem5 configs/common/cores/arm/neoverse_v2.py (newer than
           v24.0.0.1; modeller's choices, tagged G). Its IQUnit and decoupled
           front end do not exist in v24.0.0.1, so queues are summed here.
"""

from __future__ import annotations

from m5.objects import (
    ArmO3CPU,
    BOPPrefetcher,
    Cache,
    ReturnAddrStack,
    SimpleBTB,
    StridePrefetcher,
    TAGE_SC_L_64KB,
)

from hardening.cores.base import (
    CoreModel,
    dram,
    fu_pool,
    load_pipes,
    load_store_pipes,
    multi_cycle_int_pipes,
    single_cycle_int_pipes,
    vector_pipes,
)
from hardening.cores.cortex_a76 import A76_SYSREG_TIMING

# FADD 2, FMUL 3, FMA 4, FDIV D 7-15 -> 11, FSQRT D 16 (SWOG, LLVM-V2).
V2_VECTOR_LATENCIES = {"FloatAdd": 2, "FloatCmp": 2, "FloatMult": 3, "FloatMultAcc": 4,
                       "FloatDiv": 11, "FloatSqrt": 16, "SimdFloatAdd": 2,
                       "SimdFloatMult": 3, "SimdFloatMultAcc": 4}


class V2BranchPredictor(TAGE_SC_L_64KB):
    """8-table TAGE with longer history (HC23) -> TAGE-SC-L 64KB, as GEM5-V2 uses."""

    # Main BTB +50% over V1's 8K = 12K (HC23); gem5 needs a power of two (16K).
    btb = SimpleBTB(numEntries=16384, tagBits=18)
    ras = ReturnAddrStack(numEntries=32)  # 32 measured (JG-V2)


class NeoverseV2CPU(ArmO3CPU):
    fetchWidth = 6  # 6-wide decode (HC23); fetch bandwidth beyond it is not used
    fetchBufferSize = 32
    fetchQueueSize = 32  # 32-entry fetch queue (HC23)
    decodeWidth = 6  # HC23, JG-V2
    renameWidth = 8  # up to 8 MOPs/cycle (JG-V2 from the SWOG)
    dispatchWidth = 8
    # 17 issue ports (HC23); gem5 v24's O3 is compiled with at most 12 (MaxWidth).
    issueWidth = 12
    wbWidth = 12
    commitWidth = 8  # 8-wide retire (HC23)
    squashWidth = 8
    numROBEntries = 320  # HC23; 320 measured (JG-V2)
    # SX/MX 22 entries each, VX 28 (HC23); one unified IQ in gem5 v24, so the sum
    # of GEM5-V2's nine queues: 4x22 int + 2x28 vector + 3x16 memory = 192.
    numIQEntries = 192
    LQEntries = 175  # not published by Arm; GEM5-V2 from Chips and Cheese (G)
    SQEntries = 80  # same
    numPhysIntRegs = 213  # same
    numPhysFloatRegs = 188  # same
    numPhysVecRegs = 188
    # Mispredict penalty 10 in LLVM-V2 (a modeller's copy from N2, G); one
    # stage fewer between decode and rename than the 11-cycle cores.
    fetchToDecodeDelay = 2
    decodeToRenameDelay = 1
    renameToIEWDelay = 2
    issueToExecuteDelay = 1
    iewToCommitDelay = 1
    # 2 branch + 4 S; 2 M (MUL 2, DIV 5-20 -> 12); 4x128-bit V;
    # 2 load/store + 1 load-only (HC23, LLVM-V2).
    fuPool = fu_pool(
        single_cycle_int_pipes(6),
        multi_cycle_int_pipes(2, mul_latency=2, div_latency=12),
        vector_pipes(4, V2_VECTOR_LATENCIES),
        load_store_pipes(2),
        load_pipes(1),
    )
    branchPred = V2BranchPredictor()

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.mmu.itb.size = 48  # 48 FA (JG-V2 from the TRM; 48 measured)
        self.mmu.dtb.size = 48
        self.mmu.l2_shared.size = 2048  # 2048 entries, 8-way (JG-V2)


class V2L1I(Cache):
    """64 KB, 4-way, 64 B, PLRU (JG-V2 from the TRM)."""

    size = "64KiB"
    assoc = 4
    tag_latency = 1
    data_latency = 1
    response_latency = 1
    mshrs = 16
    tgts_per_mshr = 16
    writeback_clean = True


class V2L1D(Cache):
    """64 KB, 4-way, 64 B (JG-V2); 4-cycle integer load-to-use (HC23, LLVM-V2)."""

    size = "64KiB"
    assoc = 4
    tag_latency = 3
    data_latency = 3
    response_latency = 1
    mshrs = 24  # not published; GEM5-V2 uses 12 per its L1D; V2 tracks more (assumption)
    tgts_per_mshr = 16
    writeback_clean = False
    prefetcher = StridePrefetcher(degree=4)  # stride is one of V2's prefetchers (HC23)


class V2L2(Cache):
    """2 MB, 8-way, inclusive of the L1s (Graviton4: AWS; HC23); 10-cycle
    load-to-use at 1 and 2 MB (HC23, JG-V2): 10 - 4 -> 6 cycles, of which gem5's
    L1 miss handling and crossbar take about 1, so 5 here (tag/data 3 in
    parallel + response 2). The first validation run had response 3 and
    measured 11."""

    size = "2MiB"
    assoc = 8
    tag_latency = 3
    data_latency = 3
    response_latency = 2
    mshrs = 96  # 96-entry transaction queue (HC23)
    tgts_per_mshr = 16
    clusivity = "mostly_incl"
    writeback_clean = False
    prefetcher = BOPPrefetcher()  # best-offset is one of V2's prefetchers (HC23)


class Graviton4LLC(Cache):
    """36 MB LLC in CMN-700 (AWS); latency not public (same assumption as the
    other mesh caches)."""

    size = "36MiB"
    assoc = 18  # 36 MiB over 64 B lines needs a set count that is a power of two
    tag_latency = 12
    data_latency = 12
    response_latency = 12
    mshrs = 128
    tgts_per_mshr = 16
    clusivity = "mostly_excl"
    writeback_clean = False


MODEL = CoreModel(
    name="neoverse-v2",
    summary="Arm Neoverse V2 (AWS Graviton4)",
    clock="2.8GHz",  # Graviton4 (AWS)
    # PAuth yes (LLVM-V2), with FPAC (LLVM-PROC); BTI yes (mandatory from
    # Armv8.5, so in Armv9.0); MTE is in the core IP but Graviton4 does not
    # advertise it (FC-G4), so it counts as absent; POE no.
    native_features=frozenset({"pan", "pac", "fpac", "bti"}),
    make_cpu=lambda cpu_id: NeoverseV2CPU(cpu_id=cpu_id),
    make_l1i=V2L1I,
    make_l1d=V2L1D,
    make_l2=V2L2,
    make_l3=Graviton4LLC,
    # Graviton4: 12 DDR5 channels per socket (AWS). gem5 interleaves only a
    # power-of-two count, so 16 DDR5-4400 sub-channels (8 channels), 2/3 of
    # the real peak bandwidth; a single core cannot use either.
    make_memory=dram("DDR5-4400", 16),
    # No per-register costs are published for V2: the A76 table, as V1.
    sysreg_timing=A76_SYSREG_TIMING,
    notes={"memory": "Graviton4 12x DDR5 as 8x DDR5-4400 (16 gem5 sub-channels): "
                     "gem5 needs a power-of-two channel count"},
)
