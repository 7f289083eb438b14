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


def read_dump_texts(path: Path) -> list[dict[str, str]]:
    """Every complete dump in the file, in order, as {stat name: value as gem5
    wrote it} (each statistic has its own precision, which a float loses)."""
    dumps: list[dict[str, str]] = []
    current: dict[str, str] | None = None
    for line in path.read_text().splitlines():
        if line.startswith(BEGIN):
            current = {}
        elif line.startswith(END):
            if current is not None:
                dumps.append(current)
            current = None
        elif current is not None and (match := LINE.match(line)):
            current[match.group(1)] = match.group(2)
    return dumps


def read_dumps(path: Path) -> list[dict[str, float]]:
    """Every dump in the file, in order, as {stat name: value}; non-numbers skipped."""
    dumps: list[dict[str, float]] = []
    for texts in read_dump_texts(path):
        dump: dict[str, float] = {}
        for name, text in texts.items():
            try:
                dump[name] = float(text)
            except ValueError:
                continue
        dumps.append(dump)
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


@dataclass(frozen=True)
class Counter:
    """A counter the results report: ``stat`` of every SimObject matching
    ``owner`` (one per core or cache), summed. ``feature``: a run feature
    without which the model has no such object (``mte``: the tag model;
    ``tlbi_timing``: the TLB-maintenance timing).
    ``nozero``: gem5 leaves the counter out of stats.txt when it is zero
    (cache misses are flagged so in gem5 v24's cache stats)."""

    name: str
    unit: str
    owner: str
    stat: str
    feature: str = ""
    nozero: bool = False

    def value(self, dump: dict[str, float]) -> float:
        """The sum. A missing counter is an error naming it (a renamed stat must
        not read as zero), except a ``nozero`` one whose owner reports other
        statistics: that one is 0."""
        found = _sum_matching(dump, rf"{self.owner}\.{self.stat}")
        if found is not None:
            return found
        owner = re.compile(rf"{self.owner}\..+")
        if not self.nozero:
            raise MissingStats(f"stats.txt has no '{self.owner}.{self.stat}', so the counter "
                               f"'{self.name}' cannot be read: was the statistic renamed?")
        if not any(owner.fullmatch(k) for k in dump):
            raise MissingStats(f"stats.txt has no statistics of '{self.owner}' at all, so "
                               f"the counter '{self.name}' ({self.owner}.{self.stat}) cannot "
                               "be read: was the SimObject renamed?")
        return 0.0


# Not features: the model part a run has when it sets any tlbi.* parameter,
# and the links between nodes of a two-node machine.
TLBI_TIMING = "tlbi_timing"
NODE_LINKS = "node_links"
# Each detailed core's user/privileged split (gem5 patch 0020), in runs
# whose model.json says the model had it.
PRIVILEGE = "privilege_cycles"

# The region's committed instructions are per-core stats; simInsts is
# cumulative across resets. A fast-forward run has its atomic CPUs at the
# boot's path (cores) and the core model's beside them (detailed_cores).
CORES = r"board\.processor\.(?:detailed_)?cores\d*\.core"
INSTRUCTIONS = rf"{CORES}\.commitStats0\.numInsts"
COUNTERS: tuple[Counter, ...] = (
    Counter("cycles", "cycles", CORES, "numCycles"),
    Counter("instructions", "instructions", CORES, r"commitStats0\.numInsts"),
    Counter("branch_mispredicts", "count", CORES, r"branchPred\.condIncorrect"),
    # The kernel's share: a cycle or an instruction is the privileged
    # level's when the core's committed state is at EL1 or above.
    Counter("privileged_cycles", "cycles", rf"{CORES}\.privilege", "privilegedCycles",
            PRIVILEGE),
    Counter("user_cycles", "cycles", rf"{CORES}\.privilege", "userCycles", PRIVILEGE),
    Counter("privileged_instructions", "instructions", rf"{CORES}\.privilege",
            "privilegedInsts", PRIVILEGE),
    Counter("l1d_misses", "count", r"board\.cache_hierarchy\.l1d\d*", r"overallMisses::total",
            nozero=True),
    Counter("l1i_misses", "count", r"board\.cache_hierarchy\.l1i\d*", r"overallMisses::total",
            nozero=True),
    Counter("l2_misses", "count", r"board\.cache_hierarchy\.l2\d*", r"overallMisses::total",
            nozero=True),
    # What gem5's serializing instructions (its IsSerializeBefore/After flags:
    # MSR/MRS of most system registers, DSB, SVC, ERET, MTE tag stores; and
    # store-exclusives) cost: how many rename met (one squashed and fetched
    # again counts again), and the cycles rename stood still waiting for one to
    # reach the head of the ROB. An A64 ISB is not among them: gem5 squashes
    # everything younger after it instead.
    Counter("serializing_instructions", "count", CORES, r"rename\.serializing"),
    Counter("serialize_stall_cycles", "cycles", CORES, r"rename\.serializeStallCycles"),
    # Instructions that issue only once they reach the head of the ROB
    # (IsNonSpeculative: MTE tag stores, some system instructions), as
    # dispatched; each costs a round trip from commit back to issue.
    Counter("nonspeculative_instructions", "count", CORES, r"iew\.dispNonSpecInsts"),
    # Cache lines fetch read: more lines for the same instructions is code
    # placement (a loop straddling a line), not work.
    Counter("fetched_lines", "count", CORES, r"fetch\.cacheLines"),
    Counter("dtlb_misses", "count", rf"{CORES}\.mmu\.dtb", r"(?:read|write)Misses"),
    Counter("itlb_misses", "count", rf"{CORES}\.mmu\.itb", r"instMisses"),
    # One memory, or one per node (board.memory.node_memories<i>).
    Counter("memory_reads", "count", r"board\.memory\.(?:node_memories\d*\.)?mem_ctrl\d*",
            r"readReqs"),
    # MTE runs on a detailed core (gem5 patches 0010/0012, MteTagTiming).
    Counter("tag_checked_misses", "count", r"board\.cache_hierarchy\.mte_tags",
            "checkedMisses", "mte"),
    Counter("tag_checked_prefetches", "count", r"board\.cache_hierarchy\.mte_tags",
            "checkedPrefetches", "mte"),
    Counter("tag_cache_misses", "count", r"board\.cache_hierarchy\.mte_tags",
            "tagCacheMisses", "mte"),
    Counter("tag_reads", "count", r"board\.cache_hierarchy\.mte_tags", "tagReads", "mte"),
    # SYNC-checked stores the O3 core held until their lines were at the core,
    # and the cycles commit waited for them at the head of the ROB (gem5
    # patch 0029; printed only when a store was held, so 0 when absent).
    Counter("sync_checked_stores", "count", CORES, r"lsq\d*\.syncCheckedStores", "mte",
            nozero=True),
    Counter("sync_check_stall_cycles", "cycles", CORES, r"commit\.syncCheckStalls", "mte",
            nozero=True),
    # TLB invalidations each core's data TLB received (its own TLBIs and every
    # broadcast one), and the entries they removed.
    Counter("dtlb_flushes", "count", rf"{CORES}\.mmu\.dtb", "flushTlb"),
    Counter("dtlb_flushed_entries", "count", rf"{CORES}\.mmu\.dtb", "flushedEntries"),
    # Runs with TLB-maintenance timing (gem5 patch 0014, a tlbi.* parameter).
    Counter("local_tlbis", "count", r"board\.tlbi_timing", "localTlbis", TLBI_TIMING),
    Counter("broadcast_tlbis", "count", r"board\.tlbi_timing", "broadcastTlbis", TLBI_TIMING),
    Counter("dsb_tlbi_waits", "count", r"board\.tlbi_timing", "dsbWaits", TLBI_TIMING),
    Counter("dsb_tlbi_wait_ps", "ps", r"board\.tlbi_timing", "dsbWaitTicks", TLBI_TIMING),
    # Two nodes (gem5 patch 0017, NodeLinkDelay): traffic that left a node.
    Counter("remote_memory_responses", "count", r"board\.cache_hierarchy\.node_link\d*",
            "remoteResponses", NODE_LINKS),
    Counter("cross_node_snoop_responses", "count", r"board\.cache_hierarchy\.node_link\d*",
            "snoopResponses", NODE_LINKS),
)


def region_metrics(dump: dict[str, float], iterations: int,
                   features: tuple[str, ...] = ()) -> list[Metric]:
    """Metrics of one measured region (the dump the benchmark asked for);
    every counter the run's model has is required."""
    if "simTicks" not in dump:
        raise MissingStats("the stats dump has no simTicks")
    if iterations <= 0:
        raise MissingStats(f"the region measured {iterations} operations")
    ticks = dump["simTicks"]
    metrics = [
        Metric("sim_ns", ticks / TICKS_PER_NS, "ns"),
        # The benchmark's own count: what every per-iteration metric divides by.
        Metric("iterations", float(iterations), "operations"),
        Metric("ns_per_iteration", ticks / TICKS_PER_NS / iterations, "ns"),
    ]
    counters = {}
    for counter in COUNTERS:
        if counter.feature and counter.feature not in features:
            continue
        counters[counter.name] = counter.value(dump)
        metrics.append(Metric(counter.name, counters[counter.name], counter.unit))
    metrics.append(Metric("cycles_per_iteration", counters["cycles"] / iterations, "cycles"))
    metrics.append(Metric("instructions_per_iteration",
                          counters["instructions"] / iterations, "instructions"))
    if counters["cycles"]:
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
