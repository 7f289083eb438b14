"""Where a run's measured region spends its instructions: one run of an
experiment simulated again with gem5's instruction trace.

``python -m experiments trace NAME --variant V --workload W [--features F]``
simulates the run as its experiment defines it (same builds, checkpoint,
core model and parameters) with gem5's ``Exec`` debug output: one line per
committed instruction, with the kernel function it is in and the flags the
run's decoder gave it. A whole trace is gigabytes, so gem5 writes it into a
FIFO and this module counts it as it comes, then keeps the part between the
benchmark's stats reset and dump (the region the experiment's CSV measures)
and writes ``<results-dir>/<name>/<variant>_<features>_<workload>.csv``:
per function, its instruction count, and every system-register access,
barrier, cache or TLB maintenance and exception instruction, and every
instruction gem5 serializes (for the run's core model, whose system-register
timing may relax some), by instruction and operand, over the whole region and
in each function. The counts and gem5's
outputs are cached like a run's, keyed by the run's key and the trace flags.
On the O3 CPU the region's total is gem5's committed-instruction count less
the m5 op that reset the stats; the atomic CPU does not trace instructions
that raise an exception (SVCs).
"""

from __future__ import annotations

import collections
import csv
import dataclasses
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from builders import cache
from experiments import (collect, gem5_builds, gem5_commands, raw_outputs, runner, simulate, spec,
                         stats)

log = logging.getLogger(__name__)

# One line per architectural instruction (a macro-op once, not its micro-ops),
# with its kernel symbol and its static flags; no results or addresses, which
# would only make the stream longer.
FLAGS = "ExecEnable,ExecSymbol,ExecMacro,ExecUser,ExecKernel,ExecFlags"
FIFO = "exec-trace.fifo"
COUNTS = "counts.csv"
# Instructions counted one by one: their operand tells which register,
# barrier domain or maintenance operation.
SYSTEM = frozenset({"mrs", "msr", "isb", "dsb", "dmb", "tlbi", "dc", "ic", "at", "sys",
                    "eret", "svc", "hvc", "smc", "brk", "wfi", "wfe", "sb", "csdb"})
SERIALIZING = ("IsSerializing", "IsSerializeBefore", "IsSerializeAfter")
ALL = "all"
USER = "(user)"
NO_SYMBOL = "(kernel, no symbol)"
PROGRESS_LINES = 10_000_000
COUNT_COLUMNS = ("function", "instruction", "operand", "serializing", "value", "unit")
# What every trace CSV says about its run, before its counts.
RUN_COLUMNS = ("experiment", "trace", "cpu", "core", "variant", "features", "params",
               "workload", "iterations")
COLUMNS = (*RUN_COLUMNS, *COUNT_COLUMNS, *collect.PROVENANCE)


class BadTrace(RuntimeError):
    """The trace could not be made or read; the message says why."""


@dataclass(frozen=True)
class Instruction:
    function: str
    mnemonic: str
    operand: str
    serializing: bool


def split_line(line: str) -> tuple[int, str] | None:
    """A trace line's tick and the rest (``CPU: PC [@FUNC+OFF] : DISASSEMBLY :
    flags=(...)``), which is the same for every execution of one instruction;
    None for a line that is not one."""
    head, sep, body = line.partition(": ")
    head = head.strip()
    if not sep or not head.isdigit():
        return None
    return int(head), body


def parse_body(body: str) -> Instruction | None:
    """What a line's body says: function, mnemonic, the operand that matters
    (system register, barrier domain, maintenance operation) and whether the
    run's decoder made it serializing."""
    _, sep, rest = body.partition(": ")
    parts = rest.split(" : ")
    if not sep or len(parts) < 2:
        return None
    where, disassembly = parts[0].split(), parts[1].replace(",", " ").split()
    if not disassembly:
        return None
    symbol = next((w[1:] for w in where if w.startswith("@")), None)
    if symbol is not None:
        function = symbol.split("+", 1)[0]
    else:
        # The symbol table is the kernel's: a user address has none.
        function = NO_SYMBOL if where and where[0].startswith("0xffff") else USER
    mnemonic = disassembly[0].lower()
    operand = ""
    if mnemonic in SYSTEM and len(disassembly) > 1:
        # mrs Xt, REG names the register second; everything else first.
        operand = disassembly[2] if mnemonic == "mrs" and len(disassembly) > 2 else disassembly[1]
        operand = "" if operand.startswith("x") and operand[1:].isdigit() else operand.lower()
    flags = parts[2] if len(parts) > 2 else ""
    return Instruction(function=function, mnemonic=mnemonic, operand=operand,
                       serializing=any(f in flags for f in SERIALIZING))


@dataclass
class Segment:
    """The instructions between two gem5 pseudo-ops (the guest's m5 calls):
    how often each distinct line body (one static instruction) ran."""

    start_tick: int
    end_tick: int | None = None
    bodies: collections.Counter[str] = field(default_factory=collections.Counter)


def segments(lines: Iterable[str], progress: int = PROGRESS_LINES) -> list[Segment]:
    """The trace cut at every gem5 pseudo-op, each part counted. Only the
    count of each distinct body is kept here: a trace has tens of millions of
    lines but far fewer distinct instructions, each parsed once later."""
    parts = [Segment(start_tick=0)]
    bodies = parts[0].bodies
    seen = 0
    for line in lines:
        seen += 1
        if progress and seen % progress == 0:
            log.info("traced %d M instructions", seen // 1_000_000)
        _, _, body = line.partition(": ")
        if "gem5op" in body:
            split = split_line(line)
            parsed = parse_body(split[1]) if split else None
            if split and parsed and parsed.mnemonic == "gem5op":
                parts[-1].end_tick = split[0]
                parts.append(Segment(start_tick=split[0]))
                bodies = parts[-1].bodies
                continue
        bodies[body] += 1
    return parts


def region(parts: Sequence[Segment], start_tick: int, end_tick: int) -> Segment:
    """The counts from the pseudo-op nearest the region's start (its stats
    reset) to the next pseudo-op (its stats dump): a benchmark makes no m5
    call inside a region, and the ops that follow the dump (the end of
    detail, m5 workend) lie a few instructions later, so matching the dump by
    its tick alone could take one of them (an exec trace's tick is the
    instruction's fetch, before the dump)."""
    bounded = [s for s in parts if s.end_tick is not None]
    if not bounded:
        raise BadTrace("the trace holds no gem5 pseudo-op: the region cannot be found")
    first = min(bounded, key=lambda s: abs(s.start_tick - start_tick))
    if first.end_tick is None or first.end_tick > end_tick:
        raise BadTrace(f"no trace segment spans the region (ticks {start_tick}-{end_tick})")
    return first


@dataclass
class Counted:
    """A region's instructions per function, and its notable ones."""

    per_function: collections.Counter[str] = field(default_factory=collections.Counter)
    notable: collections.Counter[tuple[str, str, str, bool]] = field(
        default_factory=collections.Counter)


def counted(part: Segment) -> Counted:
    result = Counted()
    for body, times in part.bodies.items():
        instruction = parse_body(body)
        if instruction is None:
            continue
        result.per_function[instruction.function] += times
        if instruction.mnemonic in SYSTEM or instruction.serializing:
            result.notable[(instruction.function, instruction.mnemonic, instruction.operand,
                            instruction.serializing)] += times
    return result


def region_ticks(stats_file: Path) -> tuple[int, int]:
    """(start, end) tick of the first stats dump: the benchmark's region."""
    dumps = stats.read_dumps(stats_file)
    if not dumps or "finalTick" not in dumps[0] or "simTicks" not in dumps[0]:
        raise BadTrace(f"{stats_file} has no stats dump with finalTick and simTicks")
    end = int(dumps[0]["finalTick"])
    return end - int(dumps[0]["simTicks"]), end


def count_rows(counts: Counted) -> list[dict[str, object]]:
    """The region's total first; then each function's instruction count
    (instruction 'all'); then each notable instruction over the whole region
    (function 'all') and in each function; each group largest first."""
    def row(function: str, instruction: str, operand: str, serializing: object,
            value: int) -> dict[str, object]:
        return {"function": function, "instruction": instruction, "operand": operand,
                "serializing": serializing, "value": value, "unit": "instructions"}

    totals: collections.Counter[tuple[str, str, bool]] = collections.Counter()
    for (_, mnemonic, operand, serializing), n in counts.notable.items():
        totals[(mnemonic, operand, serializing)] += n
    return ([row(ALL, ALL, "", "", sum(counts.per_function.values()))]
            + [row(f, ALL, "", "", n) for f, n in counts.per_function.most_common()]
            + [row(ALL, m, o, s, n) for (m, o, s), n in totals.most_common()]
            + [row(f, m, o, s, n) for (f, m, o, s), n in counts.notable.most_common()])


def select_run(experiment: spec.Experiment, variant: str, workload: str,
               features: str | None, sample: int = 0) -> spec.RunSpec:
    """The experiment's one run of ``variant`` and ``workload`` in layout
    ``sample`` (and ``features``, where the variant runs with more than one
    set)."""
    def choices(attribute: str) -> str:
        return ", ".join(sorted({str(getattr(r, attribute)) for r in experiment.runs}))

    runs = [r for r in experiment.runs if r.sample == sample]
    if not runs:
        raise spec.BadExperiment(f"{experiment.name} has no layout sample {sample}; "
                                 f"valid: {choices('sample')}")
    if not any(r.variant == variant for r in runs):
        raise spec.BadExperiment(f"{experiment.name} has no variant '{variant}'; "
                                 f"valid: {choices('variant')}")
    workloads = sorted({r.workload.name for r in runs})
    if workload not in workloads:
        raise spec.BadExperiment(f"{experiment.name} has no workload '{workload}'; "
                                 f"valid: {', '.join(workloads)}")
    matching = [r for r in runs if r.variant == variant and r.workload.name == workload]
    if features is not None:
        wanted = ",".join(spec.catalog.parse_features(features))
        sets = sorted({",".join(r.features) for r in matching})
        matching = [r for r in matching if ",".join(r.features) == wanted]
        if not matching:
            raise spec.BadExperiment(f"{experiment.name} runs {variant} with features "
                                     f"{' or '.join(sets)}, not '{features}'")
    if len(matching) > 1:
        raise spec.BadExperiment(
            f"{experiment.name} has {len(matching)} runs of {variant} {workload}; name one "
            "with --features (they are: " + "; ".join(r.label for r in matching) + ")")
    return matching[0]


def traced(run: gem5_commands.Simulation, flags: str, fifo: str, what: str,
           counts: str = "") -> gem5_commands.Simulation:
    """``run`` with gem5's debug output for ``flags`` written into ``fifo`` in
    its m5out (a relative ``--debug-file`` is gem5's outdir's), cached as a
    trace. The flags are part of its key, and so is ``counts``, what the
    reader writes into the entry: the counts are made while gem5 runs, so a
    trace cached with other counts must be simulated again."""
    return dataclasses.replace(run, kind=raw_outputs.TRACES, label=f"{what} {run.label}",
                               gem5_options=(f"--debug-flags={flags}", f"--debug-file={fifo}"),
                               counts=counts)


class FifoReader:
    """Hands gem5's debug output to ``consume`` while gem5 writes it into a
    FIFO in the run's m5out, then ``finish(out)`` writes the counts into the
    run's outputs (``simulate.RunObserver``). A trace is gigabytes: it never
    touches the disk."""

    def __init__(self, fifo: str, consume: Callable[[TextIO], None],
                 finish: Callable[[Path], None]) -> None:
        self._fifo = fifo
        self._consume = consume
        self._finish = finish
        self._failure: list[BaseException] = []
        self._reader: threading.Thread | None = None

    def started(self, out: Path) -> None:
        fifo = out / raw_outputs.M5OUT / self._fifo
        os.mkfifo(fifo)
        self._reader = threading.Thread(target=self._read, args=(fifo,), daemon=True)
        self._reader.start()
        log.info("tracing into %s (counted as gem5 writes it)", fifo)

    def _read(self, fifo: Path) -> None:
        try:
            with fifo.open(errors="replace") as stream:
                try:
                    self._consume(stream)
                except BaseException as err:  # noqa: BLE001 - handed to the waiting thread
                    self._failure.append(err)
                    # Read on to the end, so gem5 finishes instead of dying of
                    # SIGPIPE, which would hide this error behind its own.
                    for _ in stream:
                        pass
        except BaseException as err:  # noqa: BLE001 - handed to the waiting thread
            self._failure.append(err)

    def stopped(self, out: Path) -> None:
        fifo = out / raw_outputs.M5OUT / self._fifo
        if self._reader is not None:
            # The reader may not have reached its open() yet (gem5 failed at
            # once), when opening the writing end fails: try until it ends.
            while self._reader.is_alive():
                unblock(fifo)
                self._reader.join(0.05)
        fifo.unlink(missing_ok=True)

    def finished(self, out: Path) -> None:
        if self._failure:
            raise simulate.SimulationFailed(f"reading the trace failed: {self._failure[0]}")
        try:
            self._finish(out)
        except BadTrace as err:
            raise simulate.SimulationFailed(str(err)) from err


def unblock(path: Path) -> None:
    """Open the FIFO's writing end once, so a reader still waiting for gem5
    to open it (gem5 failed first) sees the end of the stream."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


def instruction_counter() -> FifoReader:
    """Counts the instruction trace as it comes; keeps the measured region."""
    parts: list[list[Segment]] = []

    def finish(out: Path) -> None:
        if not parts:
            raise BadTrace("no trace was read")
        start, end = region_ticks(raw_outputs.stats(out))
        collect.write_csv(count_rows(counted(region(parts[0], start, end))), out / COUNTS,
                          COUNT_COLUMNS)

    return FifoReader(FIFO, lambda stream: parts.append(segments(stream)), finish)


def simulate_traced(gem5: simulate.Gem5Runner, run: gem5_commands.Simulation) -> cache.Entry:
    """The trace's cache entry: cached, or simulated now (gem5 on this host)."""
    return gem5.simulate(traced(run, FLAGS, FIFO, "trace"), instruction_counter())


def common_columns(run: spec.RunSpec, entry: cache.Entry) -> dict[str, object]:
    """What every row of a trace's CSV says about the run and its provenance."""
    return {"experiment": run.experiment, "trace": entry.key, "cpu": run.cpu,
            "core": run.core if run.cpu == "o3" else "", "variant": run.variant,
            "features": "+".join(run.features) or "none", "params": " ".join(run.params),
            "workload": run.workload.name, "iterations": run.workload.iterations,
            **collect.provenance(entry.path)}


def result_rows(run: spec.RunSpec, entry: cache.Entry) -> Iterator[dict[str, object]]:
    common = common_columns(run, entry)
    with (entry.path / COUNTS).open(newline="") as handle:
        for row in csv.DictReader(handle):
            yield {**common, **row}


def result_path(results_dir: Path, run: spec.RunSpec) -> Path:
    features = "+".join(run.features) or "none"
    layout = f"_sample{run.sample}" if run.sample else ""
    return (results_dir / run.experiment
            / f"{run.variant}_{features}_{run.workload.name}{layout}.csv")


def summary(rows: Sequence[dict[str, object]], top: int) -> str:
    """The region's size and its most frequent notable instructions."""
    whole = [r for r in rows if r["function"] == ALL]
    lines = [f"{int(whole[0]['value']):,} instructions in the region; the most frequent "
             "system, barrier and serializing ones (serializing: as this run's core model "
             "decodes them):"]
    lines += [f"{int(r['value']):>10,}  {r['instruction']} {r['operand']}"
              f"{'  serializing' if str(r['serializing']) == 'True' else ''}"
              for r in whole[1:top + 1]]
    return "\n".join(lines)


def prepare(name: str, variant: str, workload: str, features: str | None,
            sample: int = 0, definitions: Path = spec.DEFINITIONS
            ) -> tuple[spec.RunSpec, simulate.Gem5Runner, gem5_commands.Simulation]:
    """The run to trace, a gem5 runner, and the run's simulation (its boot
    checkpoint made first if it is not cached)."""
    experiment = spec.load(name, definitions)
    run = select_run(experiment, variant, workload, features, sample)
    if run.arm32 or run.workload.kind == "selftests":
        raise spec.BadExperiment(f"{run.label}: traces are made of 64-bit benchmark runs only")
    builds = gem5_builds.ensure_builds([run.variant], 1)
    gem5 = simulate.Gem5Runner(simulate.RepoState.read())
    planned = runner.plan(builds, run)
    if planned.boot is not None:
        gem5.simulate(planned.boot)
    return run, gem5, planned.run


def trace_instructions(run: spec.RunSpec, gem5: simulate.Gem5Runner,
                       planned: gem5_commands.Simulation, results_dir: Path, top: int) -> Path:
    """Simulate (or take from the cache) the run's instruction trace; write its CSV."""
    entry = simulate_traced(gem5, planned)
    rows = list(result_rows(run, entry))
    target = result_path(results_dir, run)
    collect.write_csv(rows, target, COLUMNS)
    print(summary(rows, top))
    log.info("wrote %s (%d rows)", target, len(rows))
    return target
