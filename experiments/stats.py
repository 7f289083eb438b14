"""Reading gem5's stats.txt: the dumps, and the metrics the results report."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

BEGIN = "---------- Begin Simulation Statistics ----------"
END = "---------- End Simulation Statistics   ----------"
LINE = re.compile(r"^(\S+)\s+(\S+)")
TICKS_PER_NS = 1000  # gem5's default tick is 1 ps


class MissingStats(RuntimeError):
    pass


def read_dumps(path: Path) -> list[dict[str, float]]:
    """Every dump in the file, in order, as {stat name: value}; non-numbers skipped."""
    dumps: list[dict[str, float]] = []
    current: dict[str, float] | None = None
    for line in path.read_text().splitlines():
        if line.startswith(BEGIN):
            current = {}
        elif line.startswith(END):
            if current is not None:
                dumps.append(current)
            current = None
        elif current is not None and (match := LINE.match(line)):
            try:
                current[match.group(1)] = float(match.group(2))
            except ValueError:
                continue
    return dumps


@dataclass(frozen=True)
class Metric:
    name: str
    value: float
    unit: str


def _sum_matching(dump: dict[str, float], pattern: str) -> float | None:
    regex = re.compile(pattern)
    values = [v for k, v in dump.items() if regex.fullmatch(k) and not math.isnan(v)]
    return sum(values) if values else None


# The region's committed instructions are per-core stats; simInsts is
# cumulative across resets.
INSTRUCTIONS = r"board\.processor\.cores\d*\.core\.commitStats0\.numInsts"
# (metric, unit, stat-name regex summed over cores).
COUNTERS: tuple[tuple[str, str, str], ...] = (
    ("cycles", "cycles", r"board\.processor\.cores\d*\.core\.numCycles"),
    ("instructions", "instructions", INSTRUCTIONS),
    ("branch_mispredicts", "count",
     r"board\.processor\.cores\d*\.core\.branchPred\.condIncorrect"),
    ("l1d_misses", "count", r"board\.cache_hierarchy\.l1d\d*\.overallMisses::total"),
    ("l1i_misses", "count", r"board\.cache_hierarchy\.l1i\d*\.overallMisses::total"),
    ("l2_misses", "count", r"board\.cache_hierarchy\.l2\d*\.overallMisses::total"),
    ("dtlb_misses", "count", r"board\.processor\.cores\d*\.core\.mmu\.dtb\.(?:read|write)Misses"),
    ("itlb_misses", "count", r"board\.processor\.cores\d*\.core\.mmu\.itb\.instMisses"),
    ("memory_reads", "count", r"board\.memory\.mem_ctrl\d*\.readReqs"),
    # MTE runs on a detailed core (gem5 patches 0010/0012, MteTagTiming).
    ("tag_checked_misses", "count", r"board\.cache_hierarchy\.mte_tags\.checkedMisses"),
    ("tag_checked_prefetches", "count",
     r"board\.cache_hierarchy\.mte_tags\.checkedPrefetches"),
    ("tag_cache_misses", "count", r"board\.cache_hierarchy\.mte_tags\.tagCacheMisses"),
    ("tag_reads", "count", r"board\.cache_hierarchy\.mte_tags\.tagReads"),
)


def region_metrics(dump: dict[str, float], iterations: int) -> list[Metric]:
    """Metrics of one measured region (the dump the benchmark asked for)."""
    if "simTicks" not in dump:
        raise MissingStats("the stats dump has no simTicks")
    ticks = dump["simTicks"]
    metrics = [
        Metric("sim_ns", ticks / TICKS_PER_NS, "ns"),
        Metric("ns_per_iteration", ticks / TICKS_PER_NS / iterations, "ns"),
    ]
    counters = {}
    for name, unit, pattern in COUNTERS:
        value = _sum_matching(dump, pattern)
        if value is not None:
            counters[name] = value
            metrics.append(Metric(name, value, unit))
    if "cycles" in counters:
        metrics.append(Metric("cycles_per_iteration", counters["cycles"] / iterations, "cycles"))
    if "instructions" in counters:
        metrics.append(Metric("instructions_per_iteration",
                              counters["instructions"] / iterations, "instructions"))
        if counters.get("cycles"):
            metrics.append(Metric("ipc", counters["instructions"] / counters["cycles"],
                                  "instructions/cycle"))
    return metrics


def host_rate(dump: dict[str, float]) -> float | None:
    """Simulated instructions per host second over the measured region.

    gem5's own hostInstRate divides the cumulative simInsts (which resetstats
    does not reset) by the region's host seconds, so it is recomputed from
    the per-core committed instructions.
    """
    instructions = _sum_matching(dump, INSTRUCTIONS)
    seconds = dump.get("hostSeconds")
    if instructions is None or not seconds:
        return None
    return instructions / seconds
