"""The stall check of run.py's tick limit (gem5-configs/hardening/progress.py):
inside the detailed part, a stretch with no committed instruction on any CPU
stops the run; outside it, or while instructions are committed, nothing does.
The module runs inside gem5, so ``m5`` is replaced by a clock the test moves."""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

CONFIGS = Path(__file__).resolve().parent.parent / "gem5-configs"
CHECK = 10**9
STALL = 5 * CHECK


class Cpu:
    def __init__(self) -> None:
        self.committed = 0

    def totalInsts(self) -> int:  # noqa: N802 - gem5's name
        return self.committed


class Board:
    def __init__(self, cpus: list[Cpu]) -> None:
        self.cpus = cpus

    def get_processor(self) -> Board:
        return self

    def all_cpus(self) -> list[Cpu]:
        return self.cpus


class Guest:
    """The simulated clock and whether the guest is inside its detailed part."""

    def __init__(self) -> None:
        self.tick = 0
        self.detailed = False


@pytest.fixture
def guest(monkeypatch: pytest.MonkeyPatch) -> Iterator[Guest]:
    clock = Guest()
    m5 = types.ModuleType("m5")
    m5.curTick = lambda: clock.tick
    m5.scheduleTickExitAbsolute = lambda tick: None
    monkeypatch.setitem(sys.modules, "m5", m5)
    monkeypatch.syspath_prepend(str(CONFIGS))
    monkeypatch.delitem(sys.modules, "hardening.progress", raising=False)
    yield clock
    # Bound to the stand-in m5: no later test may find it imported.
    sys.modules.pop("hardening.progress", None)


def limit_for(guest: Guest, cpus: list[Cpu]) -> object:
    progress = importlib.import_module("hardening.progress")
    limit = progress.TickLimit(Board(cpus), 10**15, check_ticks=CHECK,
                               in_detail=lambda: guest.detailed, stall_ticks=STALL)
    limit.begin()
    return limit


def run_checks(guest: Guest, limit: object, checks: int, cpus: list[Cpu],
               committing: bool) -> bool:
    """Advance ``checks`` checks; whether the handler asked to stop."""
    handler = limit.on_tick_exit()
    for _ in range(checks):
        guest.tick += CHECK
        if committing:
            cpus[0].committed += 1000
        if next(handler):
            return True
    return False


def test_no_commit_in_the_detailed_part_stops_the_run(guest: Guest) -> None:
    cpus = [Cpu(), Cpu()]
    limit = limit_for(guest, cpus)
    guest.detailed = True
    assert run_checks(guest, limit, 3, cpus, committing=True) is False
    stopped_at = guest.tick
    assert run_checks(guest, limit, STALL // CHECK + 1, cpus, committing=False) is True
    assert limit.stalled and not limit.reached
    assert limit.stalled_since == stopped_at


def test_idle_outside_the_detailed_part_goes_on(guest: Guest) -> None:
    cpus = [Cpu()]
    limit = limit_for(guest, cpus)
    assert run_checks(guest, limit, 4 * STALL // CHECK, cpus, committing=False) is False
    assert not limit.stalled


def test_a_stall_is_counted_from_the_detailed_part_not_before(guest: Guest) -> None:
    cpus = [Cpu()]
    limit = limit_for(guest, cpus)
    assert run_checks(guest, limit, 2 * STALL // CHECK, cpus, committing=False) is False
    guest.detailed = True
    assert run_checks(guest, limit, STALL // CHECK - 1, cpus, committing=False) is False
    assert run_checks(guest, limit, 2, cpus, committing=False) is True


def test_committing_in_the_detailed_part_goes_on(guest: Guest) -> None:
    cpus = [Cpu(), Cpu()]
    limit = limit_for(guest, cpus)
    guest.detailed = True
    assert run_checks(guest, limit, 4 * STALL // CHECK, cpus, committing=True) is False
