"""The branch-trace tool: reading gem5's ``Commit branch`` lines, keeping
the measured region, naming each PC by its kernel symbol."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments import branches, gem5_commands, spec, trace

PREFIX = "board.processor.cores.core.branchPred: Commit branch:"


def commit(tick: int, pc: int, kind: str = "DirectCond", pred: int = 1, taken: int = 1) -> str:
    return (f"{tick}: {PREFIX} sn:{tick // 10}, PC:{pc:#x} {kind}, pred:{pred}, "
            f"taken:{taken}, target:0xffff8000800fbb60")


def test_a_commit_line_gives_tick_pc_type_and_direction() -> None:
    event = branches.parse_line(commit(117473942740, 0xffff8000800fc058, pred=0, taken=1))
    assert event == branches.Committed(tick=117473942740, pc=0xffff8000800fc058,
                                       branch_type="DirectCond", mispredicted=True, taken=True)
    assert not branches.parse_line(commit(5, 0x400100, kind="Return")).mispredicted
    assert not branches.parse_line(commit(5, 0x400100, pred=1, taken=0)).taken


def test_other_branch_output_is_ignored() -> None:
    assert branches.parse_line("117: board.processor.cores.core.branchPred: [tid:0, sn:7] "
                               "PC:0xffff8000800fc058 BTB:hit") is None
    assert branches.parse_line("warn: Commit branch: elsewhere") is None


def test_only_the_region_is_counted() -> None:
    events = branches.Events()
    events.read([commit(50, 0x10, pred=0), commit(100, 0x10, pred=0), commit(150, 0x10),
                 commit(155, 0x10, pred=1, taken=0),
                 commit(160, 0x20, kind="Return"), commit(201, 0x10, pred=0), "noise"])
    assert events.counted(100, 200) == {(0x10, "DirectCond"): [3, 2, 2],
                                        (0x20, "Return"): [1, 0, 1]}
    with pytest.raises(trace.BadTrace, match="no branch was committed"):
        events.counted(300, 400)


def test_rows_total_first_then_mispredicted_branches_named_by_symbol() -> None:
    symbols = branches.Symbols([(0xffff800080010000, "el0_svc"),
                                (0xffff8000800fb638, "copy_page_range")])
    counts = {(0xffff8000800fc058, "DirectCond"): [16, 15, 16],
              (0xffff800080010004, "DirectCond"): [10, 1, 4],
              (0x400100, "Return"): [3, 2, 3],
              (0xffff800080010008, "DirectUncond"): [7, 0, 7]}
    rows = branches.count_rows(counts, symbols)
    total = {"function": "all", "location": "all", "pc": "", "branch_type": "all",
             "unit": "branches"}
    assert rows[:3] == [{**total, "metric": "committed", "value": 36},
                        {**total, "metric": "taken", "value": 30},
                        {**total, "metric": "mispredicted", "value": 18}]
    assert [(r["location"], r["value"]) for r in rows[3:] if r["metric"] == "mispredicted"] == [
        ("copy_page_range+0xa20", 15), ("(user)", 2), ("el0_svc+0x4", 1)]
    assert rows[3]["function"] == "copy_page_range"
    assert branches.summary(rows, top=1).splitlines() == [
        "36 branches committed in the region, 18 in the wrong direction; the most mispredicted:",
        "        15 of         16  copy_page_range+0xa20 (DirectCond, taken 16)"]


def test_the_csv_is_named_after_the_run_and_its_sample() -> None:
    experiment = spec.load("c2-kpkeys")
    run = trace.select_run(experiment, "kpkeys-pgtables-batched", "fork-4k", "pan,pac,poe", 1)
    assert branches.result_path(Path("out"), run) == Path(
        "out/c2-kpkeys/kpkeys-pgtables-batched_pac+pan+poe_fork-4k_sample1_branches.csv")


def test_a_trace_cached_with_other_counts_is_simulated_again(tmp_path: Path) -> None:
    from support import fake_builds

    run = gem5_commands.Simulation(kind="runs", args=("--cpu", "o3"), label="probe",
                              variant="baseline", max_ticks=1,
                              builds=fake_builds.make(tmp_path))
    plain = trace.traced(run, branches.FLAGS, branches.FIFO, "branch trace")
    counted = trace.traced(run, branches.FLAGS, branches.FIFO, "branch trace",
                           branches.COUNTS_WRITTEN)
    assert "counts" not in plain.key_inputs() and "counts" not in run.key_inputs()
    assert counted.entry().key != plain.entry().key
