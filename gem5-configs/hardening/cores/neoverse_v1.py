"""Neoverse V1, as in AWS Graviton3 (claim C2's hardware).

Source keys are those of docs/parameter-sources.md:
  V1DECK   Arm Neoverse V1 deck, Teratec 2021 (via transcription)
  HC23     Arm Hot Chips 2023 Neoverse V2 talk (gives V1 figures it improves on)
  LLVM-V1  Arm-authored LLVM scheduling model (from the V1 SWOG)
  SWOG     Arm Software Optimization Guide, V1
  AWS      aws-graviton-getting-started (Graviton3 product figures)
  OCX      ocxtal/insn_bench_aarch64 (Graviton3 measurements)
  GEM5-V2  upstream gem5 Neoverse V2 model (a modeller's choice, tagged G)
"""

from __future__ import annotations

from m5.objects import (
    ArmO3CPU,
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

# FADD 2, FMUL 3, FMA 4, FDIV D 7-15 -> 11 (SWOG, LLVM-V1; OCX measured 2/3/4).
V1_VECTOR_LATENCIES = {"FloatAdd": 2, "FloatCmp": 2, "FloatMult": 3, "FloatMultAcc": 4,
                       "FloatDiv": 11, "FloatSqrt": 16, "SimdFloatAdd": 2,
                       "SimdFloatMult": 3, "SimdFloatMultAcc": 4}


class V1BranchPredictor(TAGE_SC_L_64KB):
    """Direction predictor not published; TAGE-SC-L 64KB as for the other models (G)."""

    btb = SimpleBTB(numEntries=8192, tagBits=18)  # 8K main BTB (V1DECK)
    ras = ReturnAddrStack(numEntries=32)  # not published for V1; V2 measured 32 (JG-V2)


class NeoverseV1CPU(ArmO3CPU):
    fetchWidth = 8  # 8-wide fetch, 2x32 B (V1DECK)
    fetchBufferSize = 32
    fetchQueueSize = 32  # not published for V1; V2's 32-entry fetch queue (HC23)
    decodeWidth = 5  # 5-wide decode from the I-cache (V1DECK); MOP cache not modelled
    renameWidth = 8  # V1DECK
    dispatchWidth = 8
    # 15-wide issue (V1DECK); gem5 v24's O3 is compiled with at most 12 (MaxWidth).
    issueWidth = 12
    wbWidth = 12
    commitWidth = 8
    squashWidth = 8
    numROBEntries = 256  # V1DECK, LLVM-V1
    # Issue queues ~20 entries each (D from HC23: V2 "increased from 20 to 22/28"):
    # 2 S + 2 M + 2 B + 4 V + 3 L queues at ~20 -> 260 is an upper bound; gem5
    # v24 has one unified IQ, so use the sum of the int/vector queues only (G).
    numIQEntries = 160
    LQEntries = 128  # not published; between N1 (68) and V2 (175, GEM5-V2) (assumption)
    SQEntries = 72  # not published; N1's 72, V2 models use 80 (assumption)
    numPhysIntRegs = 192  # not published; between N1 (120) and V2 (213) (assumption)
    numPhysFloatRegs = 160
    numPhysVecRegs = 160
    # "11+ stage accordion", 11-cycle mispredict penalty (V1DECK, LLVM-V1).
    fetchToDecodeDelay = 2
    decodeToRenameDelay = 2
    renameToIEWDelay = 2
    issueToExecuteDelay = 1
    iewToCommitDelay = 1
    # 2 branch + 2 S; 2 M (MUL 2, DIV 5-20 -> 12; M0 also PAC); 4x128-bit V;
    # 2 load/store + 1 load-only AGU (V1DECK, LLVM-V1, SWOG).
    fuPool = fu_pool(
        single_cycle_int_pipes(4),
        multi_cycle_int_pipes(2, mul_latency=2, div_latency=12),
        vector_pipes(4, V1_VECTOR_LATENCIES),
        load_store_pipes(2),
        load_pipes(1),
    )
    branchPred = V1BranchPredictor()

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.mmu.itb.size = 48  # L1 ITLB not published; 48 as in N1/V2 (assumption)
        self.mmu.dtb.size = 40  # 40 entries (HC23: V2 "increased from 40 to 48")
        self.mmu.l2_shared.size = 2048  # 2K-entry MMU (V1DECK)


class V1L1I(Cache):
    """64 KB, 4-way, 64 B (CPUINFO, AWS)."""

    size = "64KiB"
    assoc = 4
    tag_latency = 1
    data_latency = 1
    response_latency = 1
    mshrs = 16
    tgts_per_mshr = 16
    writeback_clean = True


class V1L1D(Cache):
    """64 KB, 4-way, 64 B (CPUINFO, AWS); 4-cycle integer load-to-use (LLVM-V1, OCX)."""

    size = "64KiB"
    assoc = 4
    tag_latency = 3
    data_latency = 3
    response_latency = 1
    mshrs = 24  # not published for L1; V1 doubled outstanding misses over N1 (V1DECK)
    tgts_per_mshr = 16
    writeback_clean = False
    prefetcher = StridePrefetcher(degree=4)  # V1 prefetchers not published (assumption)


class V1L2(Cache):
    """1 MB, 8-way (Graviton3, AWS, CPUINFO); 10-cycle load-to-use, one less than
    N1 (V1DECK): 10 - 4 -> 6 cycles, of which gem5's L1 miss handling and
    crossbar take about 1, so 5 here (tag/data 3 in parallel + response 2). The
    first validation run had response 3 and measured 11."""

    size = "1MiB"
    assoc = 8
    tag_latency = 3
    data_latency = 3
    response_latency = 2
    mshrs = 96  # 96 external memory transactions (V1DECK)
    tgts_per_mshr = 16
    clusivity = "mostly_incl"
    writeback_clean = False
    prefetcher = StridePrefetcher(degree=8)


class Graviton3LLC(Cache):
    """32 MB LLC in CMN-650 (AWS); latency not public, same assumption as Altra's SLC."""

    size = "32MiB"
    assoc = 16
    tag_latency = 12
    data_latency = 12
    response_latency = 12
    mshrs = 128
    tgts_per_mshr = 16
    clusivity = "mostly_excl"
    writeback_clean = False


MODEL = CoreModel(
    name="neoverse-v1",
    summary="Arm Neoverse V1 (AWS Graviton3)",
    clock="2.6GHz",  # Graviton3 (AWS; measured 2.597 GHz, OCX)
    # PAuth yes, without FPAC; BTI, MTE, POE no (LLVM-V1, ID-G3)
    native_features=frozenset({"pan", "pac"}),
    make_cpu=lambda cpu_id: NeoverseV1CPU(cpu_id=cpu_id),
    make_l1i=V1L1I,
    make_l1d=V1L1D,
    make_l2=V1L2,
    make_l3=Graviton3LLC,
    # Graviton3: 8 DDR5 channels (AWS; speed grade not confirmed, see
    # docs/parameter-sources.md). gem5's DDR5-4400: 16 sub-channels = 8 channels.
    make_memory=dram("DDR5-4400", 16),
    # No per-register costs are published for V1: the A76 table (gem5's
    # timing, sctlr and por classes named). Claim C2's mock on V1 wrote
    # CONTEXTIDR_EL1 but gives no numbers; it keeps gem5's timing too, so
    # mock and real POE writes cost the same drain.
    sysreg_timing=A76_SYSREG_TIMING,
    notes={"memory": "Graviton3 8x DDR5 (speed not published) as 8x DDR5-4400 "
                     "(16 gem5 sub-channels)"},
)
