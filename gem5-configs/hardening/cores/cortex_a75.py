"""Cortex-A75, as in the DragonBoard 845c's Snapdragon 845 (claim C1, secondary).

Arm published far less for A75 than for A76 (see the Gaps section of
docs/parameter-sources.md): ROB, LSQ, TLBs, latencies and the
branch predictor are not public. Those values are A76's, scaled down where the
known widths are narrower, and each says so. Source keys:
  AT-A75   AnandTech's transcription of Arm's A75 disclosure
  AT-845   AnandTech, Snapdragon 845 (product figures)
  A75-TRM  Arm Cortex-A75 TRM, as quoted in pytorch/cpuinfo (CPUINFO)
"""

from __future__ import annotations

from m5.objects import Cache, StridePrefetcher

from hardening.cores.base import (
    CoreModel,
    dram,
    fu_pool,
    load_store_pipes,
    multi_cycle_int_pipes,
    single_cycle_int_pipes,
    vector_pipes,
)
from hardening.cores.cortex_a76 import (
    A76_SYSREG_TIMING,
    A76_VECTOR_LATENCIES,
    A76L1I,
    A76L3,
    CortexA76CPU,
)


class CortexA75CPU(CortexA76CPU):
    fetchWidth = 3  # the front end feeds a 3-wide decoder (AT-A75)
    decodeWidth = 3  # AT-A75
    renameWidth = 3
    dispatchWidth = 6  # up to 6 µops/cycle (AT-A75)
    issueWidth = 8  # peak 8 µops/cycle, one per pipe (AT-A75)
    numROBEntries = 96  # not published; A76's 128 scaled by decode width 3/4 (assumption)
    numIQEntries = 90  # not published; same scaling (assumption)
    LQEntries = 52  # not published; same scaling of A76's 68/72 (assumption)
    SQEntries = 54
    # 2 ALU + 2 AGU among 8 pipes (AT-A75): the rest as A76 (1 branch, 1 M, 2 V).
    fuPool = fu_pool(
        single_cycle_int_pipes(3),
        multi_cycle_int_pipes(1, mul_latency=4, div_latency=12),
        vector_pipes(2, A76_VECTOR_LATENCIES),
        load_store_pipes(2),
    )


class A75L1D(Cache):
    """64 KB, 16-way PIPT, 64 B (A75-TRM); load-to-use not published, A76's 4."""

    size = "64KiB"
    assoc = 16
    tag_latency = 3
    data_latency = 3
    response_latency = 1
    mshrs = 16
    tgts_per_mshr = 16
    writeback_clean = False
    prefetcher = StridePrefetcher(degree=4)


class A75L2(Cache):
    """256 KB, 8-way private L2 (AT-845, CPUINFO); latency as A76's L2 (assumption)."""

    size = "256KiB"
    assoc = 8
    tag_latency = 2
    data_latency = 2
    response_latency = 1
    mshrs = 32
    tgts_per_mshr = 16
    clusivity = "mostly_incl"
    writeback_clean = False
    prefetcher = StridePrefetcher(degree=8)


MODEL = CoreModel(
    name="cortex-a75",
    summary="Arm Cortex-A75 (Snapdragon 845, DragonBoard 845c)",
    clock="2.8GHz",  # SD845 big cores (AT-845)
    native_features=frozenset({"pan"}),  # PAN yes; no PAC ("unlike Cortex-A75", LNX-PAC)
    make_cpu=lambda cpu_id: CortexA75CPU(cpu_id=cpu_id),
    make_l1i=A76L1I,  # 64 KB 4-way VIPT (A75-TRM), as A76's
    make_l1d=A75L1D,
    make_l2=A75L2,
    make_l3=A76L3,  # 2 MB DSU L3 on both SD845 and SD855 (AT-845, AT-855)
    # SD845: LPDDR4X, 4x16-bit @ 1866 MHz, 29.9 GB/s (AT-845). gem5 has no
    # LPDDR4X; two DDR4-2400 channels (38.4 GB/s) are the nearest peak bandwidth.
    make_memory=dram("DDR4-2400", 2),
    # No per-register costs are published for the A75 either: the A76 table
    # (gem5's timing, with the sctlr and por classes named for overrides).
    sysreg_timing=A76_SYSREG_TIMING,
    notes={"memory": "SD845 LPDDR4X (29.9 GB/s) as 2x DDR4-2400 (38.4 GB/s): "
                     "gem5 has no LPDDR4X"},
)
