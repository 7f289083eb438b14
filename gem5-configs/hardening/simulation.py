"""Running a board to the exit event that ends it, and the exit status that event means.

Both boards' runs (``arm64_runs``, ``arm32_runs``) simulate through here, so a
run stops for the same events, counts its tick limit the same way and turns a
stop it was not run for into the same status and one-line error
(``exit_codes``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator

from gem5.simulate.exit_event import ExitEvent
from gem5.simulate.simulator import Simulator

from hardening import catalog
from hardening.exit_codes import (EXIT_GUEST_FAILED, EXIT_HUNG, EXIT_KERNEL_PANIC, EXIT_STALLED,
                                  EXIT_UNEXPECTED)
from hardening.fast_forward import DetailSwitcher
from hardening.progress import TickLimit

BOOT_CLOCK = "2GHz"  # the atomic boot's clock only sets how fast guest time passes
STOP_EVENTS = (ExitEvent.EXIT, ExitEvent.FAIL, ExitEvent.CHECKPOINT, ExitEvent.KERNEL_PANIC,
               ExitEvent.KERNEL_OOPS, ExitEvent.MAX_TICK, ExitEvent.USER_INTERRUPT)


def stop_on(events: tuple[ExitEvent, ...]) -> dict[ExitEvent, Iterator[bool]]:
    """Hand every listed exit event back to the caller, which decides what it means."""
    def stop() -> Iterator[bool]:
        while True:
            yield True
    return {event: stop() for event in events}


def is_guest_panic(cause: str) -> bool:
    return "panic" in cause.lower() or "oops" in cause.lower()


def simulate(board: object, max_ticks: int, check_ticks: int,
             until: Callable[[], bool] | None = None,
             switcher: DetailSwitcher | None = None) -> tuple[Simulator, TickLimit, str]:
    """Instantiate the board and simulate until an exit event the caller decides
    on, the tick limit, or ``until`` holds; the exit event's cause. The guest's
    work items go to ``switcher`` (by default one that ignores them: gem5's
    own handlers would reset and dump the statistics)."""
    switcher = switcher or DetailSwitcher(catalog.DETAIL_FULL, None)
    limit = TickLimit(board, max_ticks, check_ticks=check_ticks, until=until,
                      in_detail=switcher.in_detail)
    simulator = Simulator(board=board, on_exit_event={
        **stop_on(STOP_EVENTS), ExitEvent.SCHEDULED_TICK: limit.on_tick_exit(),
        ExitEvent.WORKBEGIN: switcher.on_work_begin(),
        ExitEvent.WORKEND: switcher.on_work_end()})
    # The limit counts from the run's first tick, which a restore sets.
    simulator._instantiate()
    limit.begin()
    try:
        simulator.run()
    except NotImplementedError:
        # gem5 v24's stdlib cannot name the exit event that its own guest
        # panic/oops detection raises ("Kernel panic in simulated kernel").
        if not is_guest_panic(simulator.get_last_exit_event_cause()):
            raise
    return simulator, limit, simulator.get_last_exit_event_cause()


def stop_event(cause: str, limit: TickLimit) -> ExitEvent | None:
    """What stopped the run: a guest panic, the tick limit, or the exit event
    the cause names (None for a cause the stdlib cannot name)."""
    if is_guest_panic(cause):
        return ExitEvent.KERNEL_PANIC
    if limit.reached:
        return ExitEvent.MAX_TICK
    try:
        return ExitEvent.translate_exit_status(cause)
    except NotImplementedError:
        return None


def stopped_early(cause: str, limit: TickLimit, awaited: str) -> int:
    """The exit status of a run that stopped before ``awaited`` (the end it was
    run for), after its one-line error on stderr."""
    event = stop_event(cause, limit)
    if event in (ExitEvent.KERNEL_PANIC, ExitEvent.KERNEL_OOPS):
        print(f"error: {cause} (the kernel log is in board.workload.dmesg)", file=sys.stderr)
        return EXIT_KERNEL_PANIC
    if event == ExitEvent.MAX_TICK:
        print(f"error: tick limit {limit.limit} reached before {awaited}", file=sys.stderr)
        return EXIT_HUNG
    if limit.stalled:
        print(f"error: no CPU committed an instruction from tick {limit.stalled_since} for "
              f"{limit.stall_ticks / 1e9:g} ms of simulated time inside the detailed part, "
              f"before {awaited}: the model deadlocked (a simulator fault, not a result)",
              file=sys.stderr)
        return EXIT_STALLED
    if event == ExitEvent.FAIL:
        print(f"error: the guest script failed ({cause})", file=sys.stderr)
        return EXIT_GUEST_FAILED
    print(f"error: unexpected exit event: {cause}", file=sys.stderr)
    return EXIT_UNEXPECTED
