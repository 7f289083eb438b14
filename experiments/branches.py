"""Which branches a run's measured region mispredicts: one run of an
experiment simulated again with gem5's branch-predictor debug output.

``python -m experiments trace NAME --variant V --workload W --branches``
simulates the run as its experiment defines it, with gem5's ``Branch`` debug
flag written into a FIFO, and keeps one event per committed branch: its tick,
PC, type, whether it was taken, and whether the final prediction (the direction
predictor's, or not-taken where the BTB had no target) matched its direction. The events of
the region between the benchmark's stats reset and dump are counted per
branch, each PC named by the kernel symbol it falls in (``nm`` on the run's
``vmlinux``), and written, one count per row (``metric`` ``committed``, ``taken`` or
``mispredicted``), to
``<results-dir>/<name>/<variant>_<features>_<workload>[_sampleN]_branches.csv``.
A mispredicted target with the right direction (an indirect branch or return
sent to the wrong address) is not counted here; the run CSV's
``branch_mispredicts`` (gem5's ``condIncorrect``) counts every redirect.
"""

from __future__ import annotations

import array
import bisect
import collections
import csv
import logging
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from builders import cache, kernel
from experiments import collect, gem5_commands, raw_outputs, simulate, spec, trace

log = logging.getLogger(__name__)

FLAGS = "Branch"
FIFO = "branch-trace.fifo"
COUNTS = "branches.csv"
# Traces are of 64-bit runs only.
NM = f"{kernel.ARCHES[kernel.DEFAULT_ARCH].cross_compile}nm"
MARK = "Commit branch:"
USER = "(user)"
COMMITTED = "committed"
MISPREDICTED = "mispredicted"
TAKEN = "taken"
# What the counter writes, part of a trace's cache key: a trace cached with
# other counts is simulated again.
COUNTS_WRITTEN = f"{COMMITTED},{TAKEN},{MISPREDICTED} per branch"
COUNT_COLUMNS = ("function", "location", "pc", "branch_type", "metric", "value", "unit")
COLUMNS = (*trace.RUN_COLUMNS, *COUNT_COLUMNS, *collect.PROVENANCE)
PROGRESS_EVENTS = 5_000_000


@dataclass(frozen=True)
class Committed:
    tick: int
    pc: int
    branch_type: str
    mispredicted: bool
    taken: bool


def parse_line(line: str) -> Committed | None:
    """A ``Commit branch:`` line (``TICK: ...branchPred: Commit branch: sn:N,
    PC:0x..., TYPE, pred:P, taken:T, target:0x...``); None for any other."""
    head, _, rest = line.partition(": ")
    _, mark, fields = rest.partition(MARK)
    if not mark or not head.strip().isdigit():
        return None
    tokens = fields.replace(",", " ").split()
    values = dict(t.split(":", 1) for t in tokens if ":" in t)
    kinds = [t for t in tokens if ":" not in t]
    if "PC" not in values or "pred" not in values or "taken" not in values or not kinds:
        return None
    return Committed(tick=int(head), pc=int(values["PC"], 16), branch_type=kinds[0],
                     mispredicted=values["pred"] != values["taken"],
                     taken=values["taken"] != "0")


class Events:
    """Every committed branch of a run, compactly: a whole run commits
    millions, and the region is known only once gem5 has dumped its stats."""

    def __init__(self) -> None:
        self.ticks = array.array("Q")
        self.branch_ids = array.array("I")
        self.mispredicted = array.array("B")
        self.taken = array.array("B")
        self.branches: list[tuple[int, str]] = []
        self._ids: dict[tuple[int, str], int] = {}

    def add(self, event: Committed) -> None:
        key = (event.pc, event.branch_type)
        branch_id = self._ids.setdefault(key, len(self.branches))
        if branch_id == len(self.branches):
            self.branches.append(key)
        self.ticks.append(event.tick)
        self.branch_ids.append(branch_id)
        self.mispredicted.append(event.mispredicted)
        self.taken.append(event.taken)

    def read(self, lines: Iterable[str], progress: int = PROGRESS_EVENTS) -> None:
        for line in lines:
            if MARK not in line:
                continue
            event = parse_line(line)
            if event is not None:
                self.add(event)
                if progress and len(self.ticks) % progress == 0:
                    log.info("%d M branches committed", len(self.ticks) // 1_000_000)

    def counted(self, start_tick: int, end_tick: int) -> dict[tuple[int, str], list[int]]:
        """{(pc, type): [committed, mispredicted, taken]} between the two ticks."""
        counts: dict[tuple[int, str], list[int]] = collections.defaultdict(lambda: [0, 0, 0])
        for tick, branch_id, wrong, taken in zip(self.ticks, self.branch_ids,
                                                 self.mispredicted, self.taken):
            if start_tick <= tick <= end_tick:
                entry = counts[self.branches[branch_id]]
                entry[0] += 1
                entry[1] += wrong
                entry[2] += taken
        if not counts:
            raise trace.BadTrace(f"no branch was committed in the region (ticks "
                                 f"{start_tick}-{end_tick}): was the Branch flag honoured?")
        return counts


class Symbols:
    """Kernel text symbols by address, to name a PC."""

    def __init__(self, symbols: Sequence[tuple[int, str]]) -> None:
        ordered = sorted(symbols)
        self._addresses = [address for address, _ in ordered]
        self._names = [name for _, name in ordered]

    @classmethod
    def of(cls, vmlinux: Path) -> Symbols:
        tool = shutil.which(NM)
        if tool is None:
            raise trace.BadTrace(f"{NM} is missing (Debian: apt install binutils-aarch64-linux-gnu)")
        try:
            listed = subprocess.run([tool, "-n", str(vmlinux)], capture_output=True, text=True,
                                    check=True).stdout
        except subprocess.CalledProcessError as err:
            raise trace.BadTrace(f"{NM} {vmlinux} failed: {err.stderr.strip()}") from err
        return cls([(int(address, 16), name) for address, kind, name in
                    (line.split(maxsplit=2) for line in listed.splitlines()
                     if len(line.split()) == 3) if kind in "tTwW"])

    def name(self, pc: int) -> tuple[str, str]:
        """(function, function+offset) of a PC; a user address has neither."""
        if pc < 0xffff000000000000:
            return USER, USER
        index = bisect.bisect_right(self._addresses, pc) - 1
        if index < 0:
            return trace.NO_SYMBOL, trace.NO_SYMBOL
        return self._names[index], f"{self._names[index]}+{pc - self._addresses[index]:#x}"


def count_rows(counts: dict[tuple[int, str], list[int]], symbols: Symbols) -> list[dict[str, object]]:
    """The region's totals first (function 'all'), then every branch that
    was mispredicted at least once, most mispredicted first; each as three
    rows: how often it committed, was taken, and went the wrong direction."""
    def rows(function: str, location: str, pc: str, branch_type: str,
             committed: int, wrong: int, taken: int) -> list[dict[str, object]]:
        where = {"function": function, "location": location, "pc": pc,
                 "branch_type": branch_type}
        return [{**where, "metric": metric, "value": value, "unit": "branches"}
                for metric, value in ((COMMITTED, committed), (TAKEN, taken),
                                      (MISPREDICTED, wrong))]

    listed = rows(trace.ALL, trace.ALL, "", trace.ALL,
                  *(sum(c[i] for c in counts.values()) for i in range(3)))
    for (pc, branch_type), (n, w, t) in sorted(counts.items(), key=lambda item: -item[1][1]):
        if w == 0:
            break
        function, location = symbols.name(pc)
        listed += rows(function, location, f"{pc:#x}", branch_type, n, w, t)
    return listed


def branch_counter(vmlinux: Path) -> trace.FifoReader:
    """Keeps every committed branch as gem5 writes it; counts the region's."""
    events = Events()

    def finish(out: Path) -> None:
        start, end = trace.region_ticks(raw_outputs.stats(out))
        collect.write_csv(count_rows(events.counted(start, end), Symbols.of(vmlinux)),
                          out / COUNTS, COUNT_COLUMNS)

    return trace.FifoReader(FIFO, events.read, finish)


def result_rows(run: spec.RunSpec, entry: cache.Entry) -> list[dict[str, object]]:
    common = trace.common_columns(run, entry)
    with (entry.path / COUNTS).open(newline="") as handle:
        return [{**common, **row} for row in csv.DictReader(handle)]


def result_path(results_dir: Path, run: spec.RunSpec) -> Path:
    path = trace.result_path(results_dir, run)
    return path.with_name(f"{path.stem}_branches.csv")


def summary(rows: Sequence[dict[str, object]], top: int) -> str:
    """The region's branches and its most mispredicted ones."""
    # One branch is one PC (user branches share a location, "(user)").
    counts: dict[tuple[str, str], dict[str, object]] = {}
    for row in rows:
        counts.setdefault((str(row["pc"]), str(row["branch_type"])), {
            "location": row["location"]})[str(row["metric"])] = int(row["value"])
    (_, whole), *ranked = counts.items()
    lines = [f"{whole[COMMITTED]:,} branches committed in the region, "
             f"{whole[MISPREDICTED]:,} in the wrong direction; the most mispredicted:"]
    lines += [f"{c[MISPREDICTED]:>10,} of {c[COMMITTED]:>10,}  {c['location']} "
              f"({branch_type}, taken {c.get(TAKEN, '?')})"
              for (_, branch_type), c in ranked[:top]]
    return "\n".join(lines)


def trace_branches(run: spec.RunSpec, gem5: simulate.Gem5Runner, planned: gem5_commands.Simulation,
                   results_dir: Path, top: int) -> Path:
    """Simulate (or take from the cache) the run's branch trace; write its CSV."""
    vmlinux = planned.builds.kernels[run.variant].path / "vmlinux"
    entry = gem5.simulate(trace.traced(planned, FLAGS, FIFO, "branch trace", COUNTS_WRITTEN),
                          branch_counter(vmlinux))
    rows = result_rows(run, entry)
    target = result_path(results_dir, run)
    collect.write_csv(rows, target, COLUMNS)
    print(summary(rows, top))
    log.info("wrote %s (%d rows)", target, len(rows))
    return target
