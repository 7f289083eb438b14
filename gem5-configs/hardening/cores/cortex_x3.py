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

from m5.objects import Cache

from hardening.cores.base import CoreModel, dram
from hardening.cores.cortex_a76 import A76_SYSREG_TIMING
from hardening.cores.neoverse_v2 import NeoverseV2CPU, V2L1D, V2L1I, V2L2


class CortexX3CPU(NeoverseV2CPU):
    """The V2 model's core (LLVM-PROC schedules the X3 with LLVM-V2), where the
    X3's published figures agree with it: 6-wide decode (WIKI-X3), rename and
    dispatch 8 (WIKI-X3), ROB 320 (WIKI-X3, JG-ACD), 2 branch + 4 single-cycle
    + 2 single/multi-cycle integer pipes and LS LS LD load/store pipes
    (JG-ACD), a 32-entry return stack (JG-ACD), a 48-entry L1 data TLB
    (JG-ACD). Not published for the X3 and taken from the V2 model
    (assumptions): fetch buffer and queue, retire width, issue queue, load and
    store queues, register files (GEM5-V2, G), the BTB (only relative sizes
    are public: L1+L2 BTB 50% larger than X2's, JG-ACD), the L1 instruction
    and L2 TLBs. 15 execution ports (WIKI-X3); gem5 v24's O3 allows 12."""

    # Mispredict penalty 11 cycles from the I-cache, 9 from the macro-op cache
    # (JG-ACD); gem5 has no macro-op cache, so the I-cache path's 11, with the
    # A76 model's stage delays, which give its 11 (the V2 model's give 10).
    decodeToRenameDelay = 2


class X3L2(V2L2):
    """Up to 1 MB private L2 (WC-X3; Tensor G3's size is not published: the
    largest, an assumption); associativity, latency (10 cycles load-to-use)
    and prefetcher as the V2 model's (assumptions)."""

    size = "1MiB"
    mshrs = 64  # not published (assumption)


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
    make_l1i=V2L1I,  # 64 KB 4-way L1s (WC-X3) with a 4-cycle load-to-use (LLVM-V2), as V2's
    make_l1d=V2L1D,
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
