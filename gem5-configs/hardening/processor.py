"""A processor of identical cores: atomic for booting, a core model's O3 for measuring.

Both kinds put their CPUs at the same SimObject path, so a checkpoint taken
with the atomic boot processor restores into any detailed core model.
"""

from __future__ import annotations

from collections.abc import Callable

from m5.objects import ArmAtomicSimpleCPU, BaseCPU

from gem5.components.boards.abstract_board import AbstractBoard
from gem5.components.boards.mem_mode import MemMode
from gem5.components.processors.abstract_processor import AbstractProcessor
from gem5.components.processors.base_cpu_core import BaseCPUCore
from gem5.isas import ISA
from gem5.utils.override import overrides


class UniformProcessor(AbstractProcessor):
    def __init__(self, make_cpu: Callable[[int], BaseCPU], num_cores: int,
                 mem_mode: MemMode) -> None:
        super().__init__(cores=[BaseCPUCore(make_cpu(i), ISA.ARM) for i in range(num_cores)])
        self._mem_mode = mem_mode

    @overrides(AbstractProcessor)
    def incorporate_processor(self, board: AbstractBoard) -> None:
        board.set_mem_mode(self._mem_mode)


def atomic_processor(num_cores: int) -> UniformProcessor:
    return UniformProcessor(lambda i: ArmAtomicSimpleCPU(cpu_id=i), num_cores, MemMode.ATOMIC)


def detailed_processor(make_cpu: Callable[[int], BaseCPU], num_cores: int) -> UniformProcessor:
    return UniformProcessor(make_cpu, num_cores, MemMode.TIMING)
