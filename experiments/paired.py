"""Paired errors between two result sets of the same runs (a fast-forward
re-run against the full-detail rows, say): per metric, how far each new value
lies from its reference, and whether what must not move did not.

Rows pair on compare's join key (the runs' coordinates and the metric), so
the two sets may come from different builds, configs or detail modes.
"""

from __future__ import annotations

import logging
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
    # Pairs of values that are not numbers (a selftest's verdict, its failed
    # cases), and how many of them moved: each also a violation.
    verdicts: int = 0
    verdicts_moved: int = 0


def pair(reference: Iterable[dict[str, str]], new: Iterable[dict[str, str]]) -> Pairing:
    ref_rows = compare.index_rows(reference, "the reference")
    new_rows = compare.index_rows(new, "the re-run")
    errors: dict[str, list[float]] = {}
    violations: list[str] = []
    from_zero: list[str] = []
    verdicts = verdicts_moved = 0
    for key, row in new_rows.items():
        ref = ref_rows.get(key)
        metric = key[-1]
        if ref is None:
            continue
        where = " ".join(f"{c}={v}" for c, v in zip(compare.JOIN, key) if v)
        try:
            before, after = float(ref["value"]), float(row["value"])
        except ValueError:
            verdicts += 1
            if ref["value"] != row["value"]:
                verdicts_moved += 1
                violations.append(f"{where}: {ref['value']} -> {row['value']} (must not move)")
            continue
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
                   violations, from_zero, verdicts, verdicts_moved)


# A check's folder keeps here the full-detail rows it was paired against when
# the experiment's record was remade after the check (another build, more
# layout samples), so the check still pairs the runs it was made against.
PAIRED_AGAINST = "full-detail"


def paired_files(reference: Path, new: Path, names: Iterable[str] = ()
                 ) -> list[tuple[str, Path, Path]]:
    """``compare.results_files``, each reference file replaced by the rows the
    check kept (``NEW/full-detail/NAME.csv``) where it kept them."""
    files = []
    for name, ref_path, new_path in compare.results_files(reference, new, names):
        kept = new / PAIRED_AGAINST / f"{name}.csv"
        if kept.is_file():
            logging.info("%s: paired with %s, the rows the check was made against", name, kept)
            ref_path = kept
        files.append((name, ref_path, new_path))
    return files


def pair_dirs(reference: Path, new: Path, names: Iterable[str] = ()) -> Pairing:
    """Every results file the re-run has (or the named ones), paired as one set."""
    files = paired_files(reference, new, names)
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


# A run's place apart from its kernel: an arm pairs with the baseline kernel's
# run at the same place (the same core, CPU features, parameters, workload and
# layout sample; kernel_args differ where an arm boots with its own).
PLACE = tuple(c for c in collect.COORDINATES
              if c not in ("experiment", "run", "variant", "kernel_args"))


@dataclass(frozen=True)
class ArmEffect:
    """One arm's effect (arm / baseline - 1 at the same place) in both sets,
    over the layout samples both have."""

    variant: str
    place: str  # the place without its sample
    reference: tuple[float, ...]
    new: tuple[float, ...]

    @property
    def errors(self) -> tuple[float, ...]:
        return tuple(n - r for r, n in zip(self.reference, self.new))

    @property
    def worst_error(self) -> float:
        return max(abs(e) for e in self.errors)

    @property
    def reference_median(self) -> float:
        return statistics.median(self.reference)

    @property
    def sample_spread(self) -> float:
        """Range of the reference effect over layout samples (0 with one)."""
        return max(self.reference) - min(self.reference)


def arm_effects(reference: Iterable[dict[str, str]], new: Iterable[dict[str, str]],
                baseline: str, metric: str) -> list[ArmEffect]:
    """Every non-baseline arm's effect on ``metric`` in both sets, paired by
    place; places either set lacks are left out."""
    def by_place(rows: Iterable[dict[str, str]]) -> dict[tuple[str, tuple[str, ...]], float]:
        values = {}
        for row in rows:
            if row.get("metric") == metric:
                place = tuple(compare.join_value(row, c) for c in PLACE)
                values[(row["variant"], place)] = float(row["value"])
        return values

    ref, fresh = by_place(reference), by_place(new)
    grouped: dict[tuple[str, tuple[str, ...]], list[tuple[float, float]]] = {}
    for (variant, place), value in sorted(fresh.items()):
        base_key = (baseline, place)
        if variant == baseline or (variant, place) not in ref or base_key not in ref \
                or base_key not in fresh:
            continue
        pair_ = (ref[(variant, place)] / ref[base_key] - 1, value / fresh[base_key] - 1)
        grouped.setdefault((variant, place[:-1]), []).append(pair_)
    return [ArmEffect(variant, " ".join(v for v in place if v),
                      tuple(r for r, _ in pairs), tuple(n for _, n in pairs))
            for (variant, place), pairs in sorted(grouped.items())]


def effects_table(effects: list[ArmEffect]) -> str:
    """Markdown: per arm and place, the effect in both sets and the error of
    the effect against the two bounds the proof sets."""
    lines = ["| arm | place | samples | effect, reference (median) | effect, re-run (median) | "
             "max. error of the effect | spread over samples |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for e in effects:
        lines.append(f"| {e.variant} | {e.place} | {len(e.errors)} | {e.reference_median:+.2%} | "
                     f"{statistics.median(e.new):+.2%} | {e.worst_error:.2%} | "
                     f"{e.sample_spread:.2%} |")
    return "\n".join(lines)


def effects_verdict(effects: list[ArmEffect]) -> tuple[bool, str]:
    """Whether every arm's effect error is under a third of the smallest effect
    and under the spread over layout samples (where there are several)."""
    if not effects:
        return False, "no arm pairs with a baseline in both sets"
    worst, third, spread = effect_bounds(effects)
    holds = worst < third and worst < spread
    spread_text = (f"median spread over layout samples {spread:.2%}" if spread != math.inf
                   else "one layout sample per run (no spread to hold it against)")
    return holds, (f"largest error of an arm's effect {worst:.2%}; a third of the smallest "
                   f"effect {third:.2%}; {spread_text}: "
                   f"{'holds' if holds else 'does not hold'}")


def effect_bounds(effects: list[ArmEffect]) -> tuple[float, float, float]:
    """The largest error of an effect, a third of the smallest effect, and the
    median spread over layout samples (infinite with one sample)."""
    spreads = [e.sample_spread for e in effects if len(e.reference) > 1]
    return (max(e.worst_error for e in effects),
            min(abs(e.reference_median) for e in effects) / 3,
            statistics.median(spreads) if spreads else math.inf)
