"""Compare a re-run's results with reference results, row by row.

Rows are joined on their coordinates (experiment, CPU, core, kernel variant
and arguments, features, parameters, workload, metric). Where both rows were
made by the same builds (gem5, guest tools, kernel, disk, gem5-configs code),
nothing simulated can differ, so every value must be identical. Otherwise the
values must agree within the metric's tolerance from ``tolerances.toml``.
Host timings are columns, not metrics, and are never compared.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from experiments import collect
from experiments.spec import catalog

TOLERANCES = Path(__file__).resolve().parent / "tolerances.toml"
# "boot" and "repeat": the QEMU reference's boots and the timed runs of each
# boot (empty in gem5's results). A QEMU row's "run" column is that repeat; a
# gem5 row's is the run's cache key, which another build changes, so it is
# not joined on.
JOIN = tuple(c for c in collect.COORDINATES if c != "run") + ("boot", "repeat", "metric")
# What made a row: equal in both, the simulation was the same.
BUILDS = ("gem5_build", "gem5_tools_build", "kernel_build", "disk_build", "configs_hash")


class BadComparison(ValueError):
    """Inputs that cannot be compared (a missing directory, a bad tolerance file)."""


@dataclass(frozen=True)
class Tolerances:
    """Relative tolerance per metric; ``None`` means the values must be equal."""

    default: float
    metrics: dict[str, float | None]
    absolute: dict[str, float]
    # An experiment whose measured spread between runs of one build is larger
    # than ``default``: its own default (the metrics above still apply).
    experiments: dict[str, float] = field(default_factory=dict)

    @classmethod
    def read(cls, path: Path = TOLERANCES) -> Tolerances:
        try:
            data = tomllib.loads(path.read_text())
        except (OSError, tomllib.TOMLDecodeError) as err:
            raise BadComparison(f"{path}: {err}") from err
        metrics: dict[str, float | None] = {}
        for name, value in data.get("metrics", {}).items():
            if value == "exact":
                metrics[name] = None
            elif isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
                metrics[name] = float(value)
            else:
                raise BadComparison(f"{path}: metrics.{name} must be a non-negative number "
                                    f"or \"exact\", got {value!r}")
        default = data.get("default")
        if not isinstance(default, (int, float)) or isinstance(default, bool) or default < 0:
            raise BadComparison(f"{path}: 'default' must be a non-negative number")
        absolute = data.get("absolute", {})
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0
                   for v in absolute.values()):
            raise BadComparison(f"{path}: [absolute] values must be non-negative numbers")
        experiments = {}
        for name, table in data.get("experiments", {}).items():
            value = table.get("default") if isinstance(table, dict) else None
            if (not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0
                    or set(table) != {"default"}):
                raise BadComparison(f"{path}: [experiments.{name}] must hold one key, "
                                    "'default', a non-negative number")
            experiments[name] = float(value)
        unknown = set(data) - {"default", "metrics", "absolute", "experiments"}
        if unknown:
            raise BadComparison(f"{path}: unknown key(s) {', '.join(sorted(unknown))}; "
                                "valid: default, metrics, absolute, experiments")
        return cls(float(default), metrics, {k: float(v) for k, v in absolute.items()},
                   experiments)

    def of(self, metric: str, experiment: str = "") -> float | None:
        return self.metrics.get(metric, self.experiments.get(experiment, self.default))

    def floor(self, metric: str) -> float:
        return self.absolute.get(metric, 0.0)


@dataclass(frozen=True)
class Outcome:
    """One joined row: how it compared."""

    coordinates: tuple[str, ...]
    reference: str
    new: str
    verdict: str  # identical, within, deviates, missing, new
    rule: str

    def describe(self) -> str:
        where = " ".join(f"{c}={v}" for c, v in zip(JOIN, self.coordinates) if v)
        return f"{self.verdict}: {where}: {self.reference} -> {self.new} ({self.rule})"


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def compare_value(reference: str, new: str, same_builds: bool,
                  tolerance: float | None, floor: float = 0.0) -> tuple[str, str]:
    """(verdict, rule) for one pair of values."""
    if same_builds:
        ref_number, new_number = _number(reference), _number(new)
        equal = (reference == new if ref_number is None or new_number is None
                 else ref_number == new_number)
        return ("identical" if equal else "deviates"), "same builds: must be identical"
    if tolerance is None or _number(reference) is None or _number(new) is None:
        return ("identical" if reference == new else "deviates"), "must be equal"
    ref_number, new_number = float(reference), float(new)
    if ref_number == new_number:
        return "identical", f"within {tolerance:.1%}"
    scale = max(abs(ref_number), abs(new_number))
    relative = abs(new_number - ref_number) / scale if scale else 0.0
    close = (relative <= tolerance or math.isclose(relative, tolerance)
             or abs(new_number - ref_number) <= floor)
    rule = f"{relative:.2%} apart, tolerance {tolerance:.1%}"
    return ("within" if close else "deviates"), rule + (f" or {floor:g}" if floor else "")


# Coordinates older results files lack, with the value every row of theirs had
# (a file from before layout samples held sample 0 only).
OLDER_FILES = {**collect.LATER_COORDINATES, "sample": "0"}


def detail_of(row: dict[str, str]) -> str:
    return row.get("detail") or catalog.DETAIL_FULL


def join_value(row: dict[str, str], column: str) -> str:
    if column == "repeat":
        return row.get("run", "") if row.get("boot") else ""
    return row.get(column) or OLDER_FILES.get(column, "")


def key_of(row: dict[str, str]) -> tuple[str, ...]:
    """The row's join key: its run's coordinates, then the metric."""
    return tuple(join_value(row, c) for c in JOIN)


def run_of(key: tuple[str, ...]) -> tuple[str, ...]:
    """The run a join key belongs to: the key less its metric."""
    return key[:-1]


def index_rows(rows: Iterable[dict[str, str]], where: str = "results"
           ) -> dict[tuple[str, ...], dict[str, str]]:
    """Rows by their join key; two rows with one key cannot be paired, so they fail."""
    indexed: dict[tuple[str, ...], dict[str, str]] = {}
    for row in rows:
        key = key_of(row)
        if key in indexed:
            shown = ", ".join(f"{c}={v}" for c, v in zip(JOIN, key) if v)
            raise BadComparison(f"{where}: two rows with the same coordinates ({shown}): "
                                "they cannot be paired")
        indexed[key] = row
    return indexed


def compare_rows(reference: list[dict[str, str]], new: list[dict[str, str]],
                 tolerances: Tolerances, partial: bool = False) -> list[Outcome]:
    """Row by row. ``partial``: the re-run holds some of the reference's runs
    (a reviewer's sample); the runs it lacks altogether are left out, while a
    metric missing from a run it has still counts against it."""
    ref_rows, new_rows = index_rows(reference, "the reference"), index_rows(new, "the re-run")
    runs_rerun = {run_of(coordinates) for coordinates in new_rows}
    outcomes = []
    for coordinates, ref in ref_rows.items():
        row = new_rows.get(coordinates)
        if row is None and partial and run_of(coordinates) not in runs_rerun:
            continue
        if row is None:
            outcomes.append(Outcome(coordinates, ref["value"], "", "missing",
                                    "not in the re-run"))
            continue
        # Same builds only where the reference names them all (older results
        # lack some keys, and QEMU runs are not gem5's), and the same detail
        # mode (rows older than the column are full detail): a fast-forward
        # re-run of a full-detail row is judged by the tolerances.
        same = (all(ref.get(b) and ref.get(b) == row.get(b) for b in BUILDS)
                and detail_of(ref) == detail_of(row))
        verdict, rule = compare_value(ref["value"], row["value"], same,
                                      tolerances.of(coordinates[-1], coordinates[0]),
                                      tolerances.floor(coordinates[-1]))
        outcomes.append(Outcome(coordinates, ref["value"], row["value"], verdict, rule))
    outcomes += [Outcome(c, "", r["value"], "new", "not in the reference")
                 for c, r in new_rows.items() if c not in ref_rows]
    return outcomes


def compare_dirs(reference: Path, new: Path, tolerances: Tolerances,
                 names: Iterable[str] = (), partial: bool | Collection[str] = False
                 ) -> dict[str, list[Outcome]]:
    """Outcomes per results file that the re-run has (or the named ones);
    ``partial``: for every file, or for the files named."""
    return {name: compare_rows(collect.read_csv(ref_path), collect.read_csv(new_path),
                               tolerances, partial if isinstance(partial, bool)
                               else name in partial)
            for name, ref_path, new_path in results_files(reference, new, names)}


def results_files(reference: Path, new: Path, names: Iterable[str] = ()
                  ) -> list[tuple[str, Path, Path]]:
    """(name, reference CSV, re-run CSV) of every results file the re-run has
    (or of the named ones), each required in both directories."""
    for directory in (reference, new):
        if not directory.is_dir():
            raise BadComparison(f"{directory} is not a directory of results")
    wanted = list(names) or sorted(p.stem for p in new.glob("*.csv"))
    if not wanted:
        raise BadComparison(f"{new} holds no results (*.csv) to compare")
    found = []
    for name in wanted:
        ref_path, new_path = reference / f"{name}.csv", new / f"{name}.csv"
        if not ref_path.is_file() or not new_path.is_file():
            missing = ref_path if not ref_path.is_file() else new_path
            raise BadComparison(f"{missing} does not exist")
        found.append((name, ref_path, new_path))
    return found


def report(results: dict[str, list[Outcome]], shown: int = 20) -> tuple[str, bool]:
    """A table per results file and the deviations; whether all agreed."""
    lines = ["| results | rows | identical | within tolerance | deviate | missing | new |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    bad: list[Outcome] = []
    for name, outcomes in results.items():
        counts = {v: sum(o.verdict == v for o in outcomes)
                  for v in ("identical", "within", "deviates", "missing", "new")}
        lines.append(f"| {name} | {len(outcomes)} | {counts['identical']} | {counts['within']} "
                     f"| {counts['deviates']} | {counts['missing']} | {counts['new']} |")
        bad += [o for o in outcomes if o.verdict in ("deviates", "missing")]
    if bad:
        lines.append("")
        lines.append(f"{len(bad)} rows disagree" + (f" (first {shown})" if len(bad) > shown
                                                    else "") + ":")
        lines += [o.describe() for o in bad[:shown]]
    return "\n".join(lines), not bad
