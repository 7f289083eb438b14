"""The per-call figures of a marked 32-bit run come from one statistics dump
per run, and the 32-bit core list stays apart from the arm64 one."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "gem5-configs"))

from hardening import catalog  # noqa: E402
from hardening.runstats import parse_run_stats  # noqa: E402


def _dump(ticks: int, cycles: int, insts: int) -> str:
    return f"""
---------- Begin Simulation Statistics ----------
simSeconds                                   0.000000                       # Number of seconds simulated (Second)
simTicks                                     {ticks}                       # Number of ticks simulated (Tick)
board.processor.cores.core.numCycles         {cycles}                       # Number of cpu cycles simulated (Cycle)
board.processor.cores.core.commitStats0.numInsts {insts}                   # Number of instructions committed (thread level) (Count)
board.processor.cores.core.commitStats0.ipc  nan                            # IPC: instructions per cycle (thread level) ((Count/Cycle))
---------- End Simulation Statistics   ----------
"""


def test_each_dump_is_one_run() -> None:
    runs = parse_run_stats(_dump(357_700_000, 608_220, 254_000)
                           + _dump(360_000_000, 612_000, 254_000), calls=2000)
    assert len(runs) == 2
    assert runs[0].cycles_per_call == pytest.approx(304.11)
    assert runs[0].ns_per_call == pytest.approx(178.85)
    assert runs[1].instructions_per_call == 127


def test_a_dump_without_the_core_statistics_is_an_error() -> None:
    text = _dump(1, 1, 1).replace("board.processor.cores.core.numCycles", "other")
    with pytest.raises(ValueError, match="numCycles"):
        parse_run_stats(text, calls=1)


def test_arm32_cores_are_not_arm64_cores() -> None:
    assert "cortex-a15" in catalog.ARM32_CORE_MODULES
    assert "cortex-a15" not in catalog.CORE_MODULES
    with pytest.raises(catalog.UnknownName):
        catalog.check_core("cortex-a15")
    assert catalog.architecture_of("cortex-a15") == "armv7-a"
    assert catalog.architecture_of("cortex-a76") == "armv8.2"


def test_a_fast_forward_region_on_the_atomic_cpu_is_seen_in_its_dump() -> None:
    from hardening.runstats import regions_on_the_fast_cpu

    def dump(atomic: int) -> str:
        return ("---------- Begin Simulation Statistics ----------\n"
                "simTicks 1000\n"
                f"board.processor.cores.core.commitStats0.numInsts {atomic}\n"
                "board.processor.detailed_cores.core.commitStats0.numInsts 900\n"
                "---------- End Simulation Statistics   ----------\n")

    assert regions_on_the_fast_cpu(dump(0) + dump(0)) == [0, 0]
    assert regions_on_the_fast_cpu(dump(0) + dump(37)) == [0, 37]
    # A full-detail run's cores are the core model's: nothing to see.
    assert regions_on_the_fast_cpu(dump(0).replace("cores.core.commitStats0.numInsts 0\n",
                                                   "")) == [0]
