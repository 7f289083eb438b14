"""``python -m experiments region-stats``: the committed region statistics the
docs quote are what their first line prints, and bad selections fail in one line."""

from __future__ import annotations

import argparse
import csv
import shlex
from pathlib import Path

import pytest

from builders import cache
from experiments import raw_outputs, region_stats
from experiments.__main__ import main
from support.skips import missing_runs

REPO_ROOT = Path(__file__).resolve().parent.parent
COMMITTED = sorted(REPO_ROOT.glob("results/**/stats*.txt"))

STATS_TEXT = """
---------- Begin Simulation Statistics ----------
simTicks                                      5000 # region
board.core.numCycles                          1200 # cycles
board.l1d.avgMissLatency::total        3836.709040 # ticks
board.l1d.misses::total                         16 # misses
board.l1d.peakBW                          12800.00 # its own precision
board.l1d.unused                               nan # no sample
---------- End Simulation Statistics   ----------

---------- Begin Simulation Statistics ----------
board.core.numCycles                          9999 # after the region
---------- End Simulation Statistics   ----------
"""


def write_results(path: Path, runs: dict[str, dict[str, str]]) -> None:
    with path.open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=["run", "workload", "sample", "metric"])
        writer.writeheader()
        for key, row in runs.items():
            for metric in ("sim_ns", "instructions"):
                writer.writerow({"run": key, **row, "metric": metric})


def arguments(csv_path: Path, *words: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    region_stats.add_arguments(parser)
    return parser.parse_args([str(csv_path), *words])


@pytest.fixture
def run_cache(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    for key in ("aaaa", "bbbb"):
        (runs / key / "m5out").mkdir(parents=True)
        (runs / key / "m5out" / "stats.txt").write_text(STATS_TEXT)
    write_results(tmp_path / "x.csv", {"aaaa": {"workload": "memset-none", "sample": "0"},
                                       "bbbb": {"workload": "memset-sync", "sample": "0"},
                                       "cccc": {"workload": "memset-sync", "sample": "1"}})
    return runs


def test_the_first_dump_of_each_chosen_run_under_its_command(tmp_path: Path,
                                                             run_cache: Path) -> None:
    args = arguments(tmp_path / "x.csv", "--where", "sample=0", "--stat", "board.l1d.*",
                     "--stat", "board.core.numCycles", "--stat", "board.l1d.misses::total")
    text = region_stats.report(args, run_cache)
    lines = text.splitlines()
    assert lines[0] == f"# python -m experiments region-stats {shlex.quote(str(tmp_path))}" \
        "/x.csv --where sample=0 --stat 'board.l1d.*' --stat board.core.numCycles " \
        "--stat board.l1d.misses::total"
    # As gem5 wrote them (a float would print 12800.00 as 12800), each once.
    block = ["board.l1d.avgMissLatency::total 3836.709040", "board.l1d.misses::total 16",
             "board.l1d.peakBW 12800.00", "board.l1d.unused nan", "board.core.numCycles 1200"]
    assert lines[1:] == ["## run aaaa: workload=memset-none", *block,
                         "## run bbbb: workload=memset-sync", *block]


def test_a_statistic_one_run_lacks_is_left_out_of_that_run_only(tmp_path: Path,
                                                                 run_cache: Path) -> None:
    # gem5 leaves some zero counters out of stats.txt.
    (run_cache / "bbbb" / "m5out" / "stats.txt").write_text(
        STATS_TEXT.replace("board.l1d.misses::total                         16 # misses\n", ""))
    args = arguments(tmp_path / "x.csv", "--where", "sample=0", "--stat",
                     "board.l1d.misses::total")
    assert region_stats.report(args, run_cache).splitlines()[1:] == [
        "## run aaaa: workload=memset-none", "board.l1d.misses::total 16",
        "## run bbbb: workload=memset-sync"]


def test_the_first_line_names_a_csv_inside_the_repository_from_its_root() -> None:
    args = arguments(REPO_ROOT / "results" / "syscall.csv", "--stat", "simTicks")
    assert region_stats.command_line(args) == (
        "python -m experiments region-stats results/syscall.csv --stat simTicks")


@pytest.mark.parametrize("words, message", [
    (["--where", "colour=red"], "no column 'colour'; the CSV has run, workload, sample, metric"),
    (["--where", "sample"], "expected COLUMN=VALUE"),
    (["--label", "colour"], "--label colour: not a column"),
    (["--where", "sample=7"], "--where sample: no row has 7"),
    (["--where", "sample=0,7"], "--where sample: no row has 7"),
    (["--where", "sample=0", "--where", "workload=memset-nonee"],
     "--where workload: no row has memset-nonee"),
    (["--where", "sample=1", "--where", "workload=memset-none"],
     "no row matches sample=1 workload=memset-none"),
    (["--where", "sample=1"], "run cccc (workload=memset-sync) is not in this machine's run "
                              "cache"),
    (["--where", "sample=0", "--stat", "simTicks", "--stat", "nothing.like.this"],
     "--stat nothing.like.this: in none of the 2 runs' first dumps"),
])
def test_a_bad_selection_fails_in_one_line_naming_why(tmp_path: Path, run_cache: Path,
                                                      words: list[str], message: str) -> None:
    stat = [] if "--stat" in words else ["--stat", "board.core.numCycles"]
    with pytest.raises(region_stats.BadSelection, match=message.replace("(", r"\(")
                       .replace(")", r"\)")) as err:
        region_stats.report(arguments(tmp_path / "x.csv", *words, *stat), run_cache)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("content, message", [
    (None, "no such results CSV"),
    ("", "no rows"),
    ("test,verdict\nmte_tag_check,pass\n", "no 'run' column"),
    ("run,workload\naaaa,memset,extra\n", "line 2 has not one field per column"),
    ("run,workload\naaaa\n", "line 2 has not one field per column"),
])
def test_what_is_not_a_results_csv_of_runs_exits_1_in_one_line(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, content: str | None,
        message: str) -> None:
    path = tmp_path / "x.csv"
    if content is not None:
        path.write_text(content)
    assert main(["region-stats", str(path), "--stat", "x"]) == 1
    assert message in caplog.text


@pytest.mark.needs_build
@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_a_committed_stats_file_is_what_its_first_line_prints(
        path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    first = path.read_text().splitlines()[0]
    prefix = f"# {region_stats.COMMAND} "
    assert first.startswith(prefix), f"{path}: its first line is not the command that made it"
    words = shlex.split(first[len(prefix):])
    monkeypatch.chdir(REPO_ROOT)
    args = arguments(Path(words[0]), *words[1:])
    runs_root = cache.cache_root() / "runs"
    missing = [key for key, _ in region_stats.chosen_runs(args)
               if not raw_outputs.stats(runs_root / key).is_file()]
    if missing:
        missing_runs(missing, f"the experiment that made {args.csv} on this machine "
                     "(results/README.md names its command)")
    assert main(["region-stats", *words]) == 0
    assert capsys.readouterr().out == path.read_text()
