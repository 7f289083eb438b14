"""The instruction-trace tool: reading gem5's Exec lines, finding the
measured region, picking the run; and (with gem5 cached) one traced run
whose region agrees with gem5's own count of committed instructions."""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

import pytest

from experiments import runner, simulate, spec, stats, trace
from experiments.gem5_builds import Builds

KERNEL_LINE = ("  107408012000: board.processor.cores.core: 0xffff800080234a10 "
               "@copy_page_range+1232    : mrs   x2, sp_el0                 :   "
               "flags=(IsInteger|IsSerializeBefore|IsNonSpeculative)")
BARRIER_LINE = ("  107408012500: board.processor.cores.core: 0xffff800080234a14 "
                "@copy_page_range+1236    : isb                        :   "
                "flags=(IsSerializeAfter|IsNonSpeculative)")
USER_LINE = ("  107408013000: board.processor.cores.core: 0x4005d0    : "
             "svc   #0x0                 :   flags=(IsSerializeAfter|IsNonSpeculative|IsSyscall)")
PLAIN_LINE = ("  107408013500: board.processor.cores.core: 0xffff800080010000 @el0_svc+4    : "
              "add   x0, x1, #8             :   flags=(IsInteger)")


def op_line(tick: int) -> str:
    return f"  {tick}: board.processor.cores.core: 0x400800    : gem5op                     :   "


def parsed(line: str) -> trace.Instruction | None:
    split = trace.split_line(line)
    return trace.parse_body(split[1]) if split else None


def test_a_kernel_line_names_function_register_and_serialization() -> None:
    assert trace.split_line(KERNEL_LINE)[0] == 107408012000
    assert parsed(KERNEL_LINE) == trace.Instruction(
        function="copy_page_range", mnemonic="mrs", operand="sp_el0", serializing=True)
    assert parsed(BARRIER_LINE).operand == ""


def test_user_lines_and_other_output_are_told_apart() -> None:
    user = parsed(USER_LINE)
    assert (user.function, user.mnemonic, user.operand) == (trace.USER, "svc", "#0x0")
    assert parsed("warn: something else: here") is None
    assert parsed("") is None


def test_the_region_is_the_part_between_reset_and_dump() -> None:
    lines = [PLAIN_LINE, op_line(100), KERNEL_LINE, BARRIER_LINE, PLAIN_LINE, op_line(200),
             USER_LINE, op_line(300)]
    counted = trace.counted(trace.region(trace.segments(lines), 100, 200))
    assert counted.per_function == {"copy_page_range": 2, "el0_svc": 1}
    assert counted.notable[("copy_page_range", "mrs", "sp_el0", True)] == 1
    assert counted.notable[("copy_page_range", "isb", "", True)] == 1
    rows = trace.count_rows(counted)
    assert rows[0] == {"function": "all", "instruction": "all", "operand": "",
                       "serializing": "", "value": 3, "unit": "instructions"}
    assert {"function": "all", "instruction": "mrs", "operand": "sp_el0",
            "serializing": True, "value": 1, "unit": "instructions"} in rows
    assert "1  mrs sp_el0  serializing" in trace.summary(rows, 5)
    # The end of detail (m5 workend) right after the dump, its fetch nearer the
    # dump's tick than the dump's own: still the dump ends the region.
    lines = [op_line(100), KERNEL_LINE, op_line(190), PLAIN_LINE, op_line(199), USER_LINE]
    assert trace.counted(trace.region(trace.segments(lines), 100, 200)).per_function == {
        "copy_page_range": 1}


def test_a_trace_without_pseudo_ops_is_refused() -> None:
    with pytest.raises(trace.BadTrace, match="no gem5 pseudo-op"):
        trace.region(trace.segments([PLAIN_LINE]), 0, 10)


def test_choosing_the_run_names_the_valid_choices() -> None:
    experiment = spec.load("c2-kpkeys")
    with pytest.raises(spec.BadExperiment, match="valid: kpkeys-base"):
        trace.select_run(experiment, "nope", "fork-4k", None)
    with pytest.raises(spec.BadExperiment, match="valid: fork-4k, munmap-4k"):
        trace.select_run(experiment, "kpkeys-base", "fork", None)
    with pytest.raises(spec.BadExperiment, match="name one with --features"):
        trace.select_run(experiment, "kpkeys-base", "fork-4k", None)
    run = trace.select_run(experiment, "kpkeys-base", "fork-4k", "poe,pan,pac")
    assert run.features == ("pac", "pan", "poe")
    assert trace.result_path(Path("r"), run) == Path(
        "r/c2-kpkeys/kpkeys-base_pac+pan+poe_fork-4k.csv")
    with pytest.raises(spec.BadExperiment, match="no layout sample 3; valid: 0, 1, 2"):
        trace.select_run(experiment, "kpkeys-base", "fork-4k", "poe,pan,pac", 3)
    later = trace.select_run(experiment, "kpkeys-base", "fork-4k", "poe,pan,pac", 1)
    assert later.sample == 1
    assert trace.result_path(Path("r"), later) == Path(
        "r/c2-kpkeys/kpkeys-base_pac+pan+poe_fork-4k_sample1.csv")


def test_the_fifo_reader_hands_gems_output_over_and_leaves_no_fifo(tmp_path: Path) -> None:
    (tmp_path / "m5out").mkdir()
    read: list[str] = []
    finished: list[Path] = []
    reader = trace.FifoReader("probe.fifo", lambda stream: read.extend(stream),
                              finished.append)
    reader.started(tmp_path)
    fifo = tmp_path / "m5out" / "probe.fifo"
    with fifo.open("w") as gem5_side:
        gem5_side.write("10: one\n20: two\n")
    reader.stopped(tmp_path)
    reader.finished(tmp_path)
    assert read == ["10: one\n", "20: two\n"]
    assert finished == [tmp_path]
    assert not fifo.exists()


def test_a_trace_gem5_never_wrote_or_that_fails_to_count_fails_the_run(tmp_path: Path) -> None:
    (tmp_path / "m5out").mkdir()
    never = trace.FifoReader("probe.fifo", lambda stream: stream.read(), lambda out: None)
    never.started(tmp_path)
    never.stopped(tmp_path)  # gem5 failed before opening the FIFO: the reader must not hang
    never.finished(tmp_path)

    def unreadable(out: Path) -> None:
        raise trace.BadTrace("no pseudo-op")

    failing = trace.FifoReader("probe.fifo", lambda stream: stream.read(), unreadable)
    failing.started(tmp_path)
    failing.stopped(tmp_path)
    with pytest.raises(simulate.SimulationFailed, match="no pseudo-op"):
        failing.finished(tmp_path)

    def broken(stream: object) -> None:
        raise ValueError("garbled line")

    garbled = trace.FifoReader("probe.fifo", broken, lambda out: None)
    garbled.started(tmp_path)
    garbled.stopped(tmp_path)
    with pytest.raises(simulate.SimulationFailed, match="reading the trace failed: garbled"):
        garbled.finished(tmp_path)


@pytest.mark.needs_gem5
def test_a_traced_region_counts_what_gem5_committed(
        cached_builds_or_skip: Callable[..., Builds], tmp_path: Path) -> None:
    """The syscall experiment's getppid run (10,000 calls on the A76 model),
    traced: an ERET per call, and every instruction gem5 committed in the
    region but the m5 op that reset the stats (the trace's cut)."""
    builds = cached_builds_or_skip("baseline")
    run = trace.select_run(spec.load("syscall"), "baseline", "getppid", "pan")
    planned = runner.plan(builds, run)
    gem5 = simulate.Gem5Runner(simulate.RepoState("test", False))
    gem5.simulate(planned.boot)
    gem5.run(trace.traced(planned.run, trace.FLAGS, trace.FIFO, "trace"), tmp_path,
             trace.instruction_counter())
    with (tmp_path / trace.COUNTS).open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    whole = {(r["instruction"], r["operand"]): int(r["value"])
             for r in rows if r["function"] == "all"}
    committed = stats.read_dumps(tmp_path / "m5out" / "stats.txt")[0]
    numinsts = next(v for k, v in committed.items() if k.endswith("commitStats0.numInsts"))
    # One ERET per call, and one per interrupt the region took (if any).
    assert 10_000 <= whole[("eret", "")] <= 10_010
    assert numinsts - whole[("all", "")] == 1
    assert not (tmp_path / "m5out" / trace.FIFO).exists()
    assert "--debug-file=exec-trace.fifo" in (tmp_path / "command.txt").read_text()
