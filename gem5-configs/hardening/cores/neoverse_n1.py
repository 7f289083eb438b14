"""Neoverse N1, as in Ampere Altra (claim C5) and AWS Graviton2.

N1 is derived from Cortex-A76 (Arm's LLVM N1 model is "copied from Cortex-A76"),
so the pipeline, functional units and private L1s are the A76 model's; what
differs is below. Source keys are those of docs/parameter-sources.md:
  N1WP     Arm Neoverse N1 platform white paper (via transcription)
  WC-N1    WikiChip, Neoverse N1
  AT-ALTRA AnandTech, Ampere Altra review
  OCX      ocxtal/insn_bench_aarch64 measurements (Altra, Graviton2)
  NOVO     darchr/novoverse gem5 model (a modeller's choice, tagged G)
"""

from __future__ import annotations

from m5.objects import Cache, StridePrefetcher

from hardening.cores.base import CoreModel, dram
from hardening.cores.cortex_a76 import A76_SYSREG_TIMING, A76L1D, A76L1I, CortexA76CPU


class NeoverseN1CPU(CortexA76CPU):
    # 11-stage "accordion" pipeline (WC-N1) against A76's 13 with the same
    # 11-cycle minimum mispredict penalty (N1WP): the A76 stage delays stand.
    numIQEntries = 120  # ">100 µops, distributed" (N1WP) -> 120 (NOVO, G)


class N1L2(Cache):
    """1 MB, 8-way private L2 (Altra/Graviton2, AT-ALTRA); 11-cycle load-to-use
    at 1 MB (N1WP, WC-N1): 11 - 4 paid in L1 -> 7 cycles, of which gem5's L1
    miss handling and crossbar take about 1, so 6 here (tag/data 4 in parallel +
    response 2). The first validation run had response 3 and measured 12."""

    size = "1MiB"
    assoc = 8
    tag_latency = 4
    data_latency = 4
    response_latency = 2
    mshrs = 46  # L2 46 MSHRs (NOVO, from WikiChip; G)
    tgts_per_mshr = 16
    clusivity = "mostly_incl"
    writeback_clean = False
    prefetcher = StridePrefetcher(degree=8)  # L2 data prefetcher (A76-derived, A76-TRM-PF)


class AltraSLC(Cache):
    """32 MB system-level cache in the CMN-600 mesh (AT-ALTRA). Its latency is not
    public; 28-33 cycles is Arm's reference L3 (N1WP, WC-N1) and a mesh SLC is
    slower, so ~35 cycles load-to-use: 35 - 11 -> 24 here (assumption)."""

    size = "32MiB"
    assoc = 16
    tag_latency = 12
    data_latency = 12
    response_latency = 12
    mshrs = 128  # 48 external transactions per core (V1DECK) x cores sharing it
    tgts_per_mshr = 16
    clusivity = "mostly_excl"
    writeback_clean = False


MODEL = CoreModel(
    name="neoverse-n1",
    summary="Arm Neoverse N1 (Ampere Altra Q80-30)",
    clock="3GHz",  # Altra Q80-30 (AT-ALTRA; GCP Altra measured 2.98 GHz, OCX)
    native_features=frozenset({"pan"}),  # PAN yes; PAC, MTE, POE no (LLVM-N1)
    make_cpu=lambda cpu_id: NeoverseN1CPU(cpu_id=cpu_id),
    make_l1i=A76L1I,  # 64 KB 4-way (N1WP, WC-N1) = the A76 L1s
    make_l1d=A76L1D,
    make_l2=N1L2,
    make_l3=AltraSLC,
    # Altra: 8x DDR4-3200 (AT-ALTRA); gem5's fastest DDR4 model is 2400.
    make_memory=dram("DDR4-2400", 8),
    # N1 is the A76 core with server uncore (N1WP): the A76 table.
    sysreg_timing=A76_SYSREG_TIMING,
    notes={"memory": "Altra 8x DDR4-3200 as 8x DDR4-2400: gem5 has no DDR4-3200"},
)
