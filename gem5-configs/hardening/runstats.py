"""Per-call figures from the statistics dumps of a marked loop.

The 32-bit init (``init gem5 ...``) resets gem5's statistics before each run
of CALLS getppid() calls and dumps them after it, so each dump in
``stats.txt`` covers exactly one run. Importable without gem5, so host-side
tools can read finished runs the same way.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

DUMP_START = "---------- Begin Simulation Statistics ----------"
# A statistic's line: name, value, then an optional comment.
STAT_LINE = re.compile(r"^(\S+)\s+(-?[\d.]+(?:e[+-]?\d+)?|nan|inf)\b", re.MULTILINE)
# Per-core names of the board's processor (one core: "cores.core", several:
# "cores0.core", ...). Committed instructions count every instruction that
# retired, the kernel's included; O3 and atomic CPUs both keep this one.
CYCLES = re.compile(r"^board\.processor\.cores\d*\.core\.numCycles$")
INSTRUCTIONS = re.compile(r"^board\.processor\.cores\d*\.core\.commitStats0\.numInsts$")
TICKS_PER_NS = 1000  # gem5's tick is 1 ps (simFreq 10^12)


@dataclass(frozen=True)
class RunStats:
    """One dump: simulated time, cycles and committed instructions of all
    cores, and the same per getppid() call."""

    calls: int
    ticks: int
    cycles: int
    instructions: int

    @property
    def ns_per_call(self) -> float:
        return self.ticks / TICKS_PER_NS / self.calls

    @property
    def cycles_per_call(self) -> float:
        return self.cycles / self.calls

    @property
    def instructions_per_call(self) -> float:
        return self.instructions / self.calls

    def as_dict(self) -> dict[str, float]:
        return {**asdict(self), "ns_per_call": self.ns_per_call,
                "cycles_per_call": self.cycles_per_call,
                "instructions_per_call": self.instructions_per_call}

    def summary(self) -> str:
        return (f"{self.cycles_per_call:.1f} cycles, {self.ns_per_call:.1f} ns, "
                f"{self.instructions_per_call:.1f} instructions per call "
                f"({self.calls} calls)")


def dumps(text: str) -> list[dict[str, float]]:
    """Each dump's statistics, name to value, in file order."""
    found = []
    for block in text.split(DUMP_START)[1:]:
        found.append({m.group(1): float(m.group(2)) for m in STAT_LINE.finditer(block)})
    return found


def _sum(stats: dict[str, float], pattern: re.Pattern[str]) -> int:
    values = [v for name, v in stats.items() if pattern.match(name)]
    if not values:
        raise ValueError(f"no statistic matches {pattern.pattern} in a dump")
    return int(sum(values))


def parse_run_stats(text: str, calls: int) -> list[RunStats]:
    """One ``RunStats`` per dump of ``stats.txt`` (the caller knows how many
    runs the guest made; gem5's own dump at exit, if already written, would
    be one more)."""
    return [RunStats(calls=calls, ticks=int(stats["simTicks"]),
                     cycles=_sum(stats, CYCLES), instructions=_sum(stats, INSTRUCTIONS))
            for stats in dumps(text)]


def regions_on_the_fast_cpu(text: str) -> list[int]:
    """For each dump of a fast-forward run's ``stats.txt``, the instructions its
    atomic CPUs committed within it: all zero when every region ran on the
    core model. (They sit at the boot's path, ``cores``, which INSTRUCTIONS
    matches; the core model's CPUs are ``detailed_cores``.)"""
    return [_sum(stats, INSTRUCTIONS) if any(INSTRUCTIONS.match(n) for n in stats) else 0
            for stats in dumps(text)]
