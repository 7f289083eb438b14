"""A tick limit counted from the start of the run, and progress lines.

gem5's stdlib ``Simulator`` applies ``max_ticks`` to each ``m5.simulate()``
call, so any exit event that resumes the simulation restarts the count. Here
the limit is an absolute tick fixed when the run starts (after a restore, from
the checkpoint's tick), reached through scheduled tick exits that also let
the run report how far it is: ``progress: tick=… start=… limit=… insts=…``
on stdout, at most every ``print_seconds`` of host time. Leaving and resuming
the event loop at a tick changes no simulated state.

``until``, if given, is asked at every check whether the run is over (a guest
with no m5 operations to end it, say, that prints its last line and halts).

``in_detail``, if given, says whether the guest is inside the part it asked
detail for (a benchmark's warm-up and regions, which never sleep). There, a
``stall_ticks`` stretch in which no CPU commits an instruction stops the run
as ``stalled``: the model has deadlocked, and waiting for the tick limit would
cost hours of host time for nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import m5

# Simulated time between checks: 1 ms (a fraction of a host second on the
# atomic CPU, tens of seconds on O3).
CHECK_TICKS = 10**9
PRINT_SECONDS = 20.0
# 20 ms without a committed instruction on any CPU: a measured region's
# longest idle stretch (a parent waiting while a child runs) is bounded by the
# busy CPU's, so no live region comes near it.
STALL_TICKS = 20 * 10**9


class TickLimit:
    """The run's checks: ``on_tick_exit()`` is its SCHEDULED_TICK handler,
    ``begin()`` (once the board is instantiated) starts the count,
    ``reached`` says whether the limit stopped the run, ``done`` whether
    ``until`` did and ``stalled`` whether the stall check did (from tick
    ``stalled_since``)."""

    def __init__(self, board: object, max_ticks: int, print_seconds: float = PRINT_SECONDS,
                 check_ticks: int = CHECK_TICKS,
                 until: Callable[[], bool] | None = None,
                 in_detail: Callable[[], bool] | None = None,
                 stall_ticks: int = STALL_TICKS) -> None:
        self.board = board
        self.until = until
        self.done = False
        self.in_detail = in_detail
        self.stall_ticks = stall_ticks
        self.stalled = False
        self.stalled_since = 0
        self._last_insts = -1
        self.limit = max_ticks
        self.start = 0
        self.deadline: int | None = None
        self.print_seconds = print_seconds
        self.check_ticks = check_ticks
        self.reached = False
        self._printed = time.monotonic()

    def begin(self) -> None:
        self.start = m5.curTick()
        self.deadline = self.start + self.limit if self.limit else None
        self._printed = time.monotonic()
        self._schedule()

    def _schedule(self) -> None:
        target = m5.curTick() + self.check_ticks
        if self.deadline is not None:
            target = min(target, self.deadline)
        # The default cause: the stdlib names only "Tick exit reached" SCHEDULED_TICK.
        m5.scheduleTickExitAbsolute(target)

    def instructions(self) -> int:
        # Every CPU, switched out or not: a fast-forward run's count goes on
        # across the switches instead of restarting at each.
        return sum(int(cpu.totalInsts()) for cpu in self.board.get_processor().all_cpus())

    def _stalled(self, now: int) -> bool:
        """Whether no CPU has committed for ``stall_ticks`` inside the detailed
        part (outside it, the count restarts at every check)."""
        if self.in_detail is None:
            return False
        insts = self.instructions()
        if insts != self._last_insts or not self.in_detail():
            self._last_insts, self.stalled_since = insts, now
            return False
        return now - self.stalled_since >= self.stall_ticks

    def report(self) -> None:
        print(f"progress: tick={m5.curTick()} start={self.start} limit={self.limit} "
              f"insts={self.instructions()}", flush=True)

    def on_tick_exit(self) -> Iterator[bool]:
        """The SCHEDULED_TICK handler: stop at the limit, else go on."""
        while True:
            now = m5.curTick()
            if self.deadline is not None and now >= self.deadline:
                self.reached = True
                yield True
                continue
            if self.until is not None and self.until():
                self.done = True
                yield True
                continue
            if self._stalled(now):
                self.stalled = True
                yield True
                continue
            if time.monotonic() - self._printed >= self.print_seconds:
                self._printed = time.monotonic()
                self.report()
            self._schedule()
            yield False
