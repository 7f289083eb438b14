"""Chosen gem5 statistics of a measured region, for the runs of a results CSV.

The docs explain a difference from hardware with counters the CSVs do not
keep (L1D misses, commit stalls, tag reads). This reads them from the first
dump of each run's ``stats.txt`` in the run cache (for a benchmark run, the
dump at its region's end) and prints them, as gem5 wrote them, under the
command that printed them, so a committed ``stats-*.txt`` file can be made
again by running its first line from the repository's root.
"""

from __future__ import annotations

import argparse
import fnmatch
import logging
import shlex
from collections.abc import Sequence
from pathlib import Path

from builders import cache
from experiments import collect, folders, raw_outputs, stats

COMMAND = "python -m experiments region-stats"


class BadSelection(ValueError):
    """The rows or statistics asked for cannot be printed; the message says why."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("csv", type=Path, help="a results CSV of gem5 runs (its 'run' column "
                        "names them)")
    parser.add_argument("--where", action="append", default=[], metavar="COLUMN=VALUE[,VALUE]",
                        help="only rows whose COLUMN has one of the VALUEs (repeatable: a row "
                        "must match every COLUMN given; each VALUE must match some row)")
    parser.add_argument("--label", action="append", default=[], metavar="COLUMN",
                        help="a column printed beside each run key (repeatable; default "
                        "workload)")
    parser.add_argument("--stat", action="append", required=True, metavar="NAME",
                        help="a statistic's full name or a shell-style pattern (repeatable; "
                        "printed in this order; gem5 leaves some zero counters out, so a "
                        "name need only be in one of the runs)")


def read_rows(path: Path) -> list[dict[str, str]]:
    """The CSV's rows, refused in one line unless it is a results CSV of runs."""
    if not path.is_file():
        raise BadSelection(f"{path}: no such results CSV")
    rows = collect.read_csv(path)
    if not rows:
        raise BadSelection(f"{path}: no rows")
    if "run" not in rows[0]:
        raise BadSelection(f"{path}: no 'run' column, so no gem5 runs to read")
    for number, row in enumerate(rows, start=2):
        if None in row or None in row.values():
            raise BadSelection(f"{path}: line {number} has not one field per column")
    return rows


def parse_where(items: Sequence[str], columns: Sequence[str]) -> dict[str, set[str]]:
    where: dict[str, set[str]] = {}
    for item in items:
        column, sep, values = item.partition("=")
        if not sep or not column:
            raise BadSelection(f"--where {item!r}: expected COLUMN=VALUE[,VALUE]")
        if column not in columns:
            raise BadSelection(f"--where {item!r}: no column {column!r}; the CSV has "
                               f"{', '.join(columns)}")
        where.setdefault(column, set()).update(values.split(","))
    return where


def selected_runs(rows: Sequence[dict[str, str]], where: dict[str, set[str]],
                  label: Sequence[str]) -> list[tuple[str, str]]:
    """(run key, label) of each run with a matching row, in the CSV's order;
    a --where value that matches no row at all is refused (a misspelt key or
    workload would otherwise be left out without a word)."""
    for column, values in where.items():
        unmatched = sorted(values - {row[column] for row in rows})
        if unmatched:
            raise BadSelection(f"--where {column}: no row has {', '.join(unmatched)}")
    runs: dict[str, str] = {}
    for row in rows:
        if all(row[column] in values for column, values in where.items()):
            runs.setdefault(row["run"], " ".join(f"{c}={shlex.quote(row[c])}" for c in label))
    return list(runs.items())


def region_lines(dump: dict[str, str], patterns: Sequence[str]) -> list[str]:
    """Each statistic matching a pattern, once, in the patterns' order."""
    printed: set[str] = set()
    lines: list[str] = []
    for pattern in patterns:
        for name in sorted(n for n in dump if fnmatch.fnmatchcase(n, pattern)):
            if name not in printed:
                printed.add(name)
                lines.append(f"{name} {dump[name]}")
    return lines


def shown_path(path: Path) -> str:
    """The CSV as the first line names it: from the repository's root, where
    that line runs, when it is inside the repository."""
    try:
        return str(path.resolve().relative_to(folders.REPO_ROOT))
    except ValueError:
        return str(path.resolve())


def command_line(args: argparse.Namespace) -> str:
    """The command that prints this report again, its options in one order."""
    words = [shown_path(args.csv)]
    for option, values in (("--where", args.where), ("--label", args.label),
                           ("--stat", args.stat)):
        for value in values:
            words += [option, value]
    return f"{COMMAND} {shlex.join(words)}"


def chosen_runs(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(run key, label) of every run the arguments choose; bad arguments refused."""
    rows = read_rows(args.csv)
    columns = list(rows[0])
    label = args.label or ["workload"]
    unknown = [c for c in label if c not in columns]
    if unknown:
        raise BadSelection(f"--label {', '.join(unknown)}: not a column; the CSV has "
                           f"{', '.join(columns)}")
    runs = selected_runs(rows, parse_where(args.where, columns), label)
    if not runs:
        raise BadSelection(f"{args.csv}: no row matches {' '.join(args.where)}")
    return runs


def report(args: argparse.Namespace, runs_root: Path) -> str:
    """The command line, then each run's key, label and matching statistics."""
    runs = chosen_runs(args)
    lines = [f"# {command_line(args)}"]
    matched: set[str] = set()
    for key, text in runs:
        path = raw_outputs.stats(runs_root / key)
        if not path.is_file():
            raise BadSelection(f"run {key} ({text}) is not in this machine's run cache "
                               f"({runs_root}): run its experiment here first")
        dumps = stats.read_dump_texts(path)
        if not dumps:
            raise BadSelection(f"run {key}: {path} has no complete dump")
        found = region_lines(dumps[0], args.stat)
        matched.update(p for p in args.stat if any(fnmatch.fnmatchcase(n, p) for n in dumps[0]))
        lines += [f"## run {key}: {text}", *found]
    missing = [p for p in args.stat if p not in matched]
    if missing:
        raise BadSelection(f"--stat {', '.join(missing)}: in none of the {len(runs)} runs' "
                           "first dumps")
    return "\n".join(lines) + "\n"


def cli(args: argparse.Namespace) -> int:
    try:
        print(report(args, cache.cache_root() / raw_outputs.RUNS), end="")
    except BadSelection as err:
        logging.error("%s", err)
        return 1
    return 0
