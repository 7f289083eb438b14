"""Processors of identical cores: atomic for booting, a core model's O3 for
measuring, and the two together for fast-forwarding to the measured regions.

Every kind puts its first CPUs at the same SimObject path
(``board.processor.cores``), so a checkpoint taken with the atomic boot
processor restores into any of them.
"""

from __future__ import annotations

from collections.abc import Callable

import m5
from m5.objects import ArmAtomicSimpleCPU, BaseCPU

from gem5.components.boards.abstract_board import AbstractBoard
from gem5.components.boards.mem_mode import MemMode
from gem5.components.processors.abstract_core import AbstractCore
from gem5.components.processors.abstract_processor import AbstractProcessor
from gem5.components.processors.base_cpu_core import BaseCPUCore
from gem5.isas import ISA
from gem5.utils.override import overrides


def _atomic_cpu(cpu_id: int) -> BaseCPU:
    return ArmAtomicSimpleCPU(cpu_id=cpu_id)


class UniformProcessor(AbstractProcessor):
    def __init__(self, make_cpu: Callable[[int], BaseCPU], num_cores: int,
                 mem_mode: MemMode) -> None:
        super().__init__(cores=[BaseCPUCore(make_cpu(i), ISA.ARM) for i in range(num_cores)])
        self._mem_mode = mem_mode

    @overrides(AbstractProcessor)
    def incorporate_processor(self, board: AbstractBoard) -> None:
        board.set_mem_mode(self._mem_mode)

    def all_cpus(self) -> list[BaseCPU]:
        return [core.get_simobject() for core in self.get_cores()]


def atomic_processor(num_cores: int) -> UniformProcessor:
    return UniformProcessor(_atomic_cpu, num_cores, MemMode.ATOMIC)


def detailed_processor(make_cpu: Callable[[int], BaseCPU], num_cores: int) -> UniformProcessor:
    return UniformProcessor(make_cpu, num_cores, MemMode.TIMING)


class FastForwardProcessor(AbstractProcessor):
    """Atomic CPUs (``cores``, the boot's path) that run set-up and teardown
    through the model's caches, and the model's O3 CPUs (``detailed_cores``),
    switched in for detailed warm-up and measured regions.

    Starts on the atomic CPUs. ``to_detailed``/``to_fast`` hand the
    architectural state over with gem5's ``m5.switchCpus``, which also
    changes the memory mode (atomic/timing; classic caches keep their
    contents across it). What carries over and what does not is listed in
    gem5-configs/README.md ("Fast-forward").
    """

    def __init__(self, make_cpu: Callable[[int], BaseCPU], num_cores: int) -> None:
        fast = [BaseCPUCore(_atomic_cpu(i), ISA.ARM) for i in range(num_cores)]
        super().__init__(cores=fast)
        detailed = [BaseCPUCore(make_cpu(i), ISA.ARM) for i in range(num_cores)]
        for core in detailed:
            core.set_switched_out(True)
        self.detailed_cores = detailed
        self._fast = fast
        self._detailed = detailed
        self._active: list[AbstractCore] = fast
        self._board: AbstractBoard | None = None

    @overrides(AbstractProcessor)
    def incorporate_processor(self, board: AbstractBoard) -> None:
        board.set_mem_mode(MemMode.ATOMIC)
        # m5.switchCpus needs the System.
        self._board = board

    @overrides(AbstractProcessor)
    def get_cores(self) -> list[AbstractCore]:
        # What the board and the caches connect: the CPUs that run now.
        return self._active

    @overrides(AbstractProcessor)
    def get_num_cores(self) -> int:
        return len(self._active)

    def detailed_cpus(self) -> list[BaseCPU]:
        return [core.get_simobject() for core in self._detailed]

    def all_cpus(self) -> list[BaseCPU]:
        """Both kinds, running or switched out (each keeps its own count of
        committed instructions)."""
        return [core.get_simobject() for core in [*self._fast, *self._detailed]]

    def is_detailed(self) -> bool:
        return self._active is not self._fast

    def to_detailed(self) -> None:
        if not self.is_detailed():
            self._switch(self._detailed)

    def to_fast(self) -> None:
        if self.is_detailed():
            self._switch(self._fast)

    def _switch(self, to: list[AbstractCore]) -> None:
        assert self._board is not None, "the processor is not on a board"
        m5.switchCpus(self._board, [(old.get_simobject(), new.get_simobject())
                                    for old, new in zip(self._active, to)])
        self._active = to
