"""What a core model is: an O3 CPU, its private caches, clock, memory and ISA.

A core model module defines SimObject subclasses with the parameters of its
namesake (each value's source next to it) and exports ``MODEL``, a
``CoreModel`` that ties them together. The helpers below build the functional
unit pools the way these Arm cores are organised: issue pipes that each accept
several op classes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from m5.objects import (
    FP_ALU,
    FP_MultDiv,
    BaseCPU,
    Cache,
    FUDesc,
    FUPool,
    IprPort,
    OpDesc,
    PredALU,
    SIMD_Unit,
)

from gem5.components.memory.abstract_memory_system import AbstractMemorySystem
from gem5.components.memory.dram_interfaces.ddr3 import DDR3_1600_8x8
from gem5.components.memory.dram_interfaces.ddr4 import DDR4_2400_8x8
from gem5.components.memory.dram_interfaces.ddr5 import DDR5_4400_4x8
from gem5.components.memory.dram_interfaces.lpddr5 import LPDDR5_6400_1x16_BG_BL32
from gem5.components.memory.memory import ChanneledMemory
from gem5.components.memory.single_channel import SingleChannelDDR4_2400

from hardening import catalog
from hardening.sysreg import GEM5_TIMING, SysRegTiming


def single_cycle_int_pipes(count: int) -> FUDesc:
    """S pipes (and branch pipes: branches are IntAlu ops in gem5)."""
    return FUDesc(opList=[OpDesc(opClass="IntAlu", opLat=1)], count=count)


def multi_cycle_int_pipes(count: int, mul_latency: int, div_latency: int) -> FUDesc:
    """M pipes: ALU, multiply (pipelined) and divide (not pipelined).

    gem5 cannot make a divide's latency depend on its operands; callers pass a
    representative value and say which.
    """
    return FUDesc(opList=[
        OpDesc(opClass="IntAlu", opLat=1),
        OpDesc(opClass="IntMult", opLat=mul_latency),
        OpDesc(opClass="IntDiv", opLat=div_latency, pipelined=False),
    ], count=count)


UNPIPELINED_VECTOR_OPS = frozenset({"FloatDiv", "FloatSqrt", "SimdFloatDiv", "SimdFloatSqrt"})


def vector_pipes(count: int, latencies: Mapping[str, int]) -> FUDesc:
    """FP/ASIMD pipes. The op lists are gem5's own (so every vector op class has
    a unit); ``latencies`` overrides the ones a public source gives."""
    ops: dict[str, OpDesc] = {}
    for unit in (FP_ALU(), FP_MultDiv(), SIMD_Unit()):
        for op in unit.opList:
            name = str(op.opClass)
            ops.setdefault(name, OpDesc(opClass=name, opLat=latencies.get(name, op.opLat),
                                        pipelined=name not in UNPIPELINED_VECTOR_OPS))
    return FUDesc(opList=list(ops.values()), count=count)


def load_store_pipes(count: int) -> FUDesc:
    """AGU pipes that take loads and stores; load-to-use latency is in the L1D."""
    return FUDesc(opList=[OpDesc(opClass=c) for c in
                          ("MemRead", "MemWrite", "FloatMemRead", "FloatMemWrite")],
                  count=count)


def load_pipes(count: int) -> FUDesc:
    return FUDesc(opList=[OpDesc(opClass=c) for c in ("MemRead", "FloatMemRead")],
                  count=count)


def fu_pool(*units: FUDesc) -> FUPool:
    """The given pipes, plus SVE-predicate and gem5's ``IprPort`` units.

    In gem5 v24.0.0.1 no ARM instruction uses the IprAccess op class: MRS, MSR
    and ISB are IntAlu ops whose cost is their pipeline serialization, not a
    unit latency. ``IprPort`` stays so that every op class has a unit.
    """
    return FUPool(FUList=[*units, PredALU(), IprPort()])


def ddr4_single_channel(size: str) -> AbstractMemorySystem:
    """The memory the atomic boot runs with (its timing does not matter there)."""
    return SingleChannelDDR4_2400(size=size)


DRAM_INTERFACES = {"DDR3-1600": DDR3_1600_8x8, "DDR4-2400": DDR4_2400_8x8,
                   "DDR5-4400": DDR5_4400_4x8, "LPDDR5-6400": LPDDR5_6400_1x16_BG_BL32}


def dram(interface: str, channels: int) -> Callable[[str], AbstractMemorySystem]:
    """``channels`` gem5 DRAM channels of one of the interfaces gem5 ships,
    interleaved every 64-byte line (gem5 needs a power-of-two count). A DDR5
    channel in gem5 is one 32-bit sub-channel: a DIMM channel is two."""
    if channels & (channels - 1):
        raise ValueError(f"gem5 interleaves a power-of-two number of channels, not {channels}")

    def make(size: str) -> AbstractMemorySystem:
        return ChanneledMemory(DRAM_INTERFACES[interface], channels, 64, size=size)
    return make


@dataclass(frozen=True)
class CoreModel:
    """A named core: how to build its CPU, caches and memory, and what it implements.

    ``native_features`` records which of the studied hardening features the
    real core has; runs may switch on others, and results record both.
    ``make_l3`` is None for a core whose cluster ends at a shared L2 (the
    32-bit board's Cortex-A15, ``caches.ClusterL1SharedL2``); every arm64
    model has one.
    """

    name: str
    summary: str
    clock: str
    native_features: frozenset[str]
    make_cpu: Callable[[int], BaseCPU]
    make_l1i: Callable[[], Cache]
    make_l1d: Callable[[], Cache]
    make_l2: Callable[[], Cache]
    make_l3: Callable[[], Cache] | None = None
    make_memory: Callable[[str], AbstractMemorySystem] = ddr4_single_channel
    sysreg_timing: SysRegTiming = GEM5_TIMING
    notes: dict[str, str] = field(default_factory=dict)

    @property
    def architecture(self) -> str:
        """Recorded in the catalog, so host tools can key checkpoints on it."""
        return catalog.architecture_of(self.name)
