"""Paired errors between two result sets of the same runs (a fast-forward
re-run against the full-detail rows, say): per metric, how far each new value
lies from its reference, and whether what must not move did not.

Rows pair on compare's join key (the runs' coordinates and the metric), so
the two sets may come from different builds, configs or detail modes.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from experiments import collect, compare

# What fast-forward must leave exactly as it was: the benchmark's own count,
# and the work done per operation (the switch adds no instructions to a region).
EXACT = ("iterations",)
INSTRUCTION_METRICS = ("instructions_per_iteration",)
INSTRUCTION_TOLERANCE = 0.001
Z_99 = 2.576


@dataclass(frozen=True)
class MetricErrors:
    """Relative errors (new / reference - 1) of one metric over its pairs."""

    metric: str
    errors: tuple[float, ...]

    @property
    def mean(self) -> float:
        return statistics.fmean(self.errors)

    @property
    def p95(self) -> float:
        ordered = sorted(abs(e) for e in self.errors)
        return ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]

    @property
    def worst(self) -> float:
        return max(abs(e) for e in self.errors)

    @property
    def interval99(self) -> tuple[float, float]:
        """99% interval of the mean error (normal approximation)."""
        if len(self.errors) < 2:
            return (self.mean, self.mean)
        half = Z_99 * statistics.stdev(self.errors) / math.sqrt(len(self.errors))
        return (self.mean - half, self.mean + half)


@dataclass(frozen=True)
class Pairing:
    metrics: list[MetricErrors]
    unpaired: int
    violations: list[str]
    from_zero: list[str]


def pair(reference: Iterable[dict[str, str]], new: Iterable[dict[str, str]]) -> Pairing:
    ref_rows = compare.index_rows(reference, "the reference")
    new_rows = compare.index_rows(new, "the re-run")
    errors: dict[str, list[float]] = {}
    violations: list[str] = []
    from_zero: list[str] = []
    for key, row in new_rows.items():
        ref = ref_rows.get(key)
        metric = key[-1]
        if ref is None:
            continue
        try:
            before, after = float(ref["value"]), float(row["value"])
        except ValueError:
            continue  # a verdict, not a number
        where = " ".join(f"{c}={v}" for c, v in zip(compare.JOIN, key) if v)
        if metric in EXACT and before != after:
            violations.append(f"{where}: {before:g} -> {after:g} (must be equal)")
        if before == 0:
            # No relative error: a count that was zero (a TLB miss or two at
            # the switch) is listed, and only fails where nothing may move.
            if after != 0:
                from_zero.append(f"{where}: 0 -> {after:g}")
                if metric in INSTRUCTION_METRICS:
                    violations.append(f"{where}: 0 -> {after:g} (must not move)")
            continue
        error = after / before - 1
        if metric in INSTRUCTION_METRICS and abs(error) > INSTRUCTION_TOLERANCE:
            violations.append(f"{where}: {before:g} -> {after:g} ({error:+.3%}, more than "
                              f"{INSTRUCTION_TOLERANCE:.1%})")
        errors.setdefault(metric, []).append(error)
    unpaired = sum(1 for key in new_rows if key not in ref_rows)
    return Pairing([MetricErrors(m, tuple(e)) for m, e in sorted(errors.items())], unpaired,
                   violations, from_zero)


def pair_dirs(reference: Path, new: Path, names: Iterable[str] = ()) -> Pairing:
    """Every results file the re-run has (or the named ones), paired as one set."""
    files = compare.results_files(reference, new, names)
    return pair([row for _, ref_path, _ in files for row in collect.read_csv(ref_path)],
                [row for _, _, new_path in files for row in collect.read_csv(new_path)])


def table(pairing: Pairing) -> str:
    """Markdown: one line per metric, errors in percent of the reference."""
    lines = ["| metric | pairs | mean error | 99% interval of the mean | 95th pct. abs. | "
             "max abs. |", "|---|---:|---:|---:|---:|---:|"]
    for m in pairing.metrics:
        low, high = m.interval99
        lines.append(f"| {m.metric} | {len(m.errors)} | {m.mean:+.3%} | "
                     f"[{low:+.3%}, {high:+.3%}] | {m.p95:.3%} | {m.worst:.3%} |")
    return "\n".join(lines)
