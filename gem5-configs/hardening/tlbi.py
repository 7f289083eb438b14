"""TLB-maintenance timing and contiguous TLB entries (gem5 patches 0014, 0015).

gem5 v24 applies a broadcast TLBI to every core in zero simulated time and the
DSB after it is an ordinary drain, so without patch 0014 the cost of TLB
maintenance depends neither on the kind of TLBI nor on how many cores and nodes
must acknowledge it. Patch 0014's ``ArmTlbiTiming`` (on the system) adds:

* extra issue cycles per TLBI kind (``va_latency``, ``asid_latency``,
  ``all_latency``, ``range_latency``) and for broadcasting
  (``broadcast_issue_latency``);
* a completion time per broadcast TLBI: ``broadcast_completion`` +
  ``per_other_core`` x (other cores) + ``per_other_node`` x (other nodes),
  with broadcasts from one core starting at least ``broadcast_interval``
  apart; ``local_completion`` for local TLBIs;
* the DSB waits at issue until the TLBIs it covers have completed (stats
  ``system.tlbi_timing.dsbWaits``/``dsbWaitTicks``).

No public figure gives these costs for the modelled cores (see
``docs/parameter-sources.md``), so no core model sets them: every model keeps
gem5's timing, and experiments that study TLB maintenance set them per run as
labelled assumptions and sweep them, e.g.
``--param tlbi.broadcast_completion=200ns --param tlbi.per_other_node=300ns``.
The object exists only when a run names a ``tlbi.`` parameter, so every other
run's SimObject tree and statistics are unchanged.

Patch 0015's ``contiguous_entries`` on the stage-1 table walkers makes a run
of descriptors with the contiguous bit one TLB entry (TLB reach, and a TLBI of
any page drops the whole run). Off by default, as gem5 has it; switched on per
run with ``--param walker.contiguous_entries=true`` (every core's instruction
and data walkers).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from m5.SimObject import SimObject

from hardening.features import FeatureNotSupported

TLBI_ROOT = "tlbi"
WALKER_ROOT = "walker"


def wants_tlbi_timing(overrides: Iterable[str]) -> bool:
    return any(text.startswith(f"{TLBI_ROOT}.") for text in overrides)


def make_tlbi_timing(overrides: Sequence[str]) -> SimObject | None:
    """An all-zero ``ArmTlbiTiming`` for the run's ``tlbi.`` overrides to set,
    or None when the run names none.

    Imported here, not at the top, so a gem5 without patch 0014 still runs
    everything else.
    """
    if not wants_tlbi_timing(overrides):
        return None
    try:
        from m5.objects import ArmTlbiTiming
    except ImportError:
        raise FeatureNotSupported(
            "--param tlbi.* needs ArmTlbiTiming, which this gem5 build lacks "
            "(gem5 patch 0014)") from None
    return ArmTlbiTiming()


def stage1_walkers(cpus: Iterable[SimObject]) -> list[SimObject]:
    """Every core's instruction and data stage-1 table walkers, the objects
    ``walker.<param>`` overrides set."""
    return [walker for cpu in cpus for walker in (cpu.mmu.itb_walker, cpu.mmu.dtb_walker)]


def describe(tlbi: SimObject | None) -> dict[str, str] | None:
    """The timing a run used, for ``model.json``: every parameter, as set."""
    if tlbi is None:
        return None
    return {name: str(getattr(tlbi, name)) for name in sorted(tlbi._params.keys())}
