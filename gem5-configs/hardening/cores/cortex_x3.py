"""Cortex-X3, as in the Google Pixel 8 (Tensor G3): an MTE core whose MTE
instructions and checks were measured in public (FINK-MSC; the Pixel 8 memset
figures on the MTE page).

Source keys are those of docs/parameter-sources.md:
  JG-ACD     jiegec's transcriptions of AnandTech's and WikiChip's articles on
             Arm's cores (X3 against X2 and X4)
  WIKI-X3    Wikipedia's Cortex-X3 article
  WC-X3      WikiChip's Cortex-X3 page
  LLVM-PROC  cortex-x3 is scheduled with LLVM's Neoverse V2 model and has
             Armv9.0-A with MTE, PAuth and FPAC
  LLVM-V2    that model (from the V2 SWOG), so its latencies stand for the X3's
  ZUMA-CPU   the Tensor G3 device tree (clocks)
  AND-MTE    Android's MTE guide (Pixel 8 supports MTE)
Arm publishes no queue or register-file sizes for the X3; where the V2 model
takes a modeller's figure (GEM5-V2, G), this one takes the same and says so.
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
from hardening.cores.neoverse_v2 import V2_VECTOR_LATENCIES


class X3BranchPredictor(TAGE_SC_L_64KB):
    """Only relative BTB sizes are public (L1+L2 BTB 50% larger than X2's,
    JG-ACD): the V2 model's 16K-entry BTB, an assumption."""

    btb = SimpleBTB(numEntries=16384, tagBits=18)
    ras = ReturnAddrStack(numEntries=32)  # 32 entries, twice X2's (JG-ACD)


class CortexX3CPU(ArmO3CPU):
    fetchWidth = 6  # 6-wide decode (WIKI-X3, JG-ACD); no published fetch width
    fetchBufferSize = 32  # as the V2 model (assumption)
    fetchQueueSize = 32  # as the V2 model (assumption)
    decodeWidth = 6  # WIKI-X3
    renameWidth = 8  # rename/dispatch 8 (WIKI-X3)
    dispatchWidth = 8
    # 15 execution ports (WIKI-X3); gem5 v24's O3 allows at most 12.
    issueWidth = 12
    wbWidth = 12
    commitWidth = 8  # not published: the V2's 8 (assumption)
    squashWidth = 8
    numROBEntries = 320  # 320, from X2's 288 (WIKI-X3, JG-ACD)
    numIQEntries = 192  # not published: the V2 model's sum (GEM5-V2, G)
    LQEntries = 175  # not published: the V2 model's (GEM5-V2, G)
    SQEntries = 80  # same
    numPhysIntRegs = 213  # same
    numPhysFloatRegs = 188  # same
    numPhysVecRegs = 188
    # Mispredict penalty 11 cycles from the I-cache, 9 from the macro-op cache
    # (JG-ACD); gem5 has no macro-op cache, so the I-cache path's 11, with the
    # A76 model's stage delays, which give its 11.
    fetchToDecodeDelay = 2
    decodeToRenameDelay = 2
    renameToIEWDelay = 2
    issueToExecuteDelay = 1
    iewToCommitDelay = 1
    # 2 branch + 4 single-cycle, 2 single/multi-cycle integer (JG-ACD; MUL 2,
    # DIV 12 as LLVM-V2); 4 vector pipes and the V2 latencies (LLVM-PROC
    # schedules the X3 with LLVM-V2); 2 load/store + 1 load pipes (JG-ACD).
    fuPool = fu_pool(
        single_cycle_int_pipes(6),
        multi_cycle_int_pipes(2, mul_latency=2, div_latency=12),
        vector_pipes(4, V2_VECTOR_LATENCIES),
        load_store_pipes(2),
        load_pipes(1),
    )
    branchPred = X3BranchPredictor()

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.mmu.dtb.size = 48  # 48-entry L1 data TLB (JG-ACD)
        self.mmu.itb.size = 48  # not published: as the data TLB (assumption)
        self.mmu.l2_shared.size = 2048  # not published: the V2's (assumption)


class X3L1I(Cache):
    """64 KB, 4-way (WC-X3)."""

    size = "64KiB"
    assoc = 4
    tag_latency = 1
    data_latency = 1
    response_latency = 1
    mshrs = 16
    tgts_per_mshr = 16
    writeback_clean = True


class X3L1D(Cache):
    """64 KB, 4-way (WC-X3); 4-cycle load-to-use (LLVM-V2, the X3's model)."""

    size = "64KiB"
    assoc = 4
    tag_latency = 3
    data_latency = 3
    response_latency = 1
    mshrs = 24  # not published: as the V2 model (assumption)
    tgts_per_mshr = 16
    writeback_clean = False
    prefetcher = StridePrefetcher(degree=4)  # X3 adds spatial and pointer engines (JG-ACD)


class X3L2(Cache):
    """Up to 1 MB private L2 (WC-X3; Tensor G3's size is not published: the
    largest, an assumption); latency not published: the V2 model's 10 cycles
    load-to-use (an assumption)."""

    size = "1MiB"
    assoc = 8  # not published (assumption)
    tag_latency = 3
    data_latency = 3
    response_latency = 2
    mshrs = 64  # not published (assumption)
    tgts_per_mshr = 16
    clusivity = "mostly_incl"
    writeback_clean = False
    prefetcher = BOPPrefetcher()


class TensorG3L3(Cache):
    """The DSU's L3: Tensor G3's size is not published; Arm's reference
    configuration for the X3 has 8 MB (WIKI-X3), taken here, with the A76
    model's DSU latency (both assumptions). The system-level cache is not
    modelled (its size is not published)."""

    size = "8MiB"
    assoc = 16
    tag_latency = 13
    data_latency = 13
    response_latency = 12
    mshrs = 94
    tgts_per_mshr = 16
    clusivity = "mostly_excl"
    writeback_clean = False


MODEL = CoreModel(
    name="cortex-x3",
    summary="Arm Cortex-X3 (Google Tensor G3, Pixel 8)",
    clock="2.914GHz",  # the X3's highest operating point in Tensor G3 (ZUMA-CPU)
    # Armv9.0-A with MTE, PAuth and FPAC (LLVM-PROC), BTI (Armv8.5 and later);
    # the Pixel 8 runs MTE (AND-MTE). Whether it has MTE3 (asymm) is not
    # published; the model's "mte" switch gives MTE, MTE2 and MTE3. POE no.
    native_features=frozenset({"pan", "pac", "fpac", "bti", "mte"}),
    make_cpu=lambda cpu_id: CortexX3CPU(cpu_id=cpu_id),
    make_l1i=X3L1I,
    make_l1d=X3L1D,
    make_l2=X3L2,
    make_l3=TensorG3L3,
    # LPDDR5X (the data rate and channel count are not published): gem5's
    # LPDDR5-6400, four 16-bit channels, a phone's usual 64 bits (assumption).
    make_memory=dram("LPDDR5-6400", 4),
    # No per-register costs are published for the X3: the A76 table, as V1/V2.
    sysreg_timing=A76_SYSREG_TIMING,
    notes={"memory": "Tensor G3 LPDDR5X as 4x gem5 LPDDR5-6400 x16 (assumption: rate "
                     "and channels not published)"},
)
