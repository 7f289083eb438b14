"""Chosen gem5 statistics of a measured region, for the runs of a results CSV.

The docs explain a difference from hardware with counters the CSVs do not
keep (L1D misses, commit stalls, tag reads). This reads them from the first
dump of each run's ``stats.txt`` in the run cache (the dump at the region's
end) and prints them under the command that printed them, so a committed
``stats-*.txt`` file can be made again by running its first line.
"""

from __future__ import annotations

import argparse
import fnmatch
import logging
import shlex
from collections.abc import Sequence
from pathlib import Path

from builders import cache
from experiments import collect, raw_outputs, stats

COMMAND = "python -m experiments region-stats"


class BadSelection(ValueError):
    """The rows or statistics asked for cannot be printed; the message says why."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("csv", type=Path, help="a results CSV (its 'run' column names the runs)")
    parser.add_argument("--where", action="append", default=[], metavar="COLUMN=VALUE[,VALUE]",
                        help="only rows whose COLUMN has one of the VALUEs (repeatable; all "
                        "must hold)")
    parser.add_argument("--label", action="append", default=[], metavar="COLUMN",
                        help="a column printed beside each run key (repeatable; default "
                        "workload)")
    parser.add_argument("--stat", action="append", required=True, metavar="NAME",
                        help="a statistic's full name or a shell-style pattern (repeatable; "
                        "printed in this order)")


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
    """(run key, label) of each run with a matching row, in the CSV's order."""
    runs: dict[str, str] = {}
    for row in rows:
        if all(row[column] in values for column, values in where.items()):
            runs.setdefault(row["run"], " ".join(f"{c}={shlex.quote(row[c])}" for c in label))
    return list(runs.items())


def format_value(value: float) -> str:
    """As gem5 writes it: integers bare, other numbers with six decimals."""
    return str(int(value)) if value.is_integer() else f"{value:.6f}"


def region_lines(dump: dict[str, float], patterns: Sequence[str]) -> list[str]:
    lines: list[str] = []
    for pattern in patterns:
        names = sorted(n for n in dump if fnmatch.fnmatchcase(n, pattern))
        lines.extend(f"{name} {format_value(dump[name])}" for name in names)
    return lines


def command_line(args: argparse.Namespace) -> str:
    """The command that prints this report again, its options in one order."""
    words = [str(args.csv)]
    for option, values in (("--where", args.where), ("--label", args.label),
                           ("--stat", args.stat)):
        for value in values:
            words += [option, value]
    return f"{COMMAND} {shlex.join(words)}"


def report(args: argparse.Namespace, runs_root: Path) -> str:
    """The command line, then each run's key, label and matching statistics."""
    if not args.csv.is_file():
        raise BadSelection(f"{args.csv}: no such results CSV")
    rows = collect.read_csv(args.csv)
    if not rows:
        raise BadSelection(f"{args.csv}: no rows")
    columns = list(rows[0])
    label = args.label or ["workload"]
    unknown = [c for c in label if c not in columns]
    if unknown:
        raise BadSelection(f"--label {', '.join(unknown)}: not a column; the CSV has "
                           f"{', '.join(columns)}")
    runs = selected_runs(rows, parse_where(args.where, columns), label)
    if not runs:
        raise BadSelection(f"{args.csv}: no row matches {' '.join(args.where)}")
    lines = [f"# {command_line(args)}"]
    for key, text in runs:
        path = raw_outputs.stats(runs_root / key)
        if not path.is_file():
            raise BadSelection(f"run {key} ({text}) is not in the run cache ({runs_root}): "
                               "run its experiment on this machine first")
        dumps = stats.read_dumps(path)
        if not dumps:
            raise BadSelection(f"run {key}: {path} has no complete dump")
        found = region_lines(dumps[0], args.stat)
        if not found:
            raise BadSelection(f"run {key}: no statistic matches {' '.join(args.stat)}")
        lines += [f"## run {key}: {text}", *found]
    return "\n".join(lines) + "\n"


def cli(args: argparse.Namespace) -> int:
    try:
        print(report(args, cache.cache_root() / "runs"), end="")
    except BadSelection as err:
        logging.error("%s", err)
        return 1
    return 0
