"""Table: fast-forward against full detail, the same runs paired.

Reads each ``<results>/checks/fast-forward/<name>.csv`` (runs made with
``--detail fast-forward``) and the full-detail rows of the same runs in
``<results>/<name>.csv``, or the rows the check kept where the record was
remade after it (``experiments.paired.paired_files``); writes ``fast_forward.md``: per metric, the
relative error over every pair (``experiments.paired``), then per
experiment the host time of the paired runs in each mode and, for the
fast-forward runs, where it went (the ``host_split`` column); and per
experiment whether the conclusions survive: each arm's effect against its
baseline kernel at the same place, its largest error against a third of the
smallest effect and the spread over layout samples (``paired.arm_effects``).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from experiments import collect, compare, paired
from plots import (c1_published, c1_sctlr, c2_kpkeys, c2_kpkeys_vmalloc, c4_uaccess,
                   c4_uaccess_sysreg, c5_contpte, c5_contpte_numa, style)

CHECKS = "checks/fast-forward"
PARTS = ("setup", "warmup", "region", "teardown")
# What a post-set-up checkpoint could share: the guest's set-up is the same
# for runs that differ only in the core model or its parameters.
NOT_IN_SETUP = ("run", "core", "params")
# Each experiment's baseline kernel, as its figure takes it.
BASELINES = {
    "c1-published": c1_published.BASELINE, "c1-published-fit": c1_published.BASELINE,
    "c1-sctlr": c1_sctlr.BASELINE, "c2-kpkeys": c2_kpkeys.BASELINE,
    "c2-kpkeys-64k": c2_kpkeys.BASELINE, "c2-kpkeys-por": c2_kpkeys.BASELINE,
    "c2-kpkeys-spawn": c2_kpkeys.BASELINE, "c2-kpkeys-vmalloc": c2_kpkeys.BASELINE,
    "c4-uaccess": c4_uaccess.BASELINE, "c4-uaccess-sysreg": c4_uaccess_sysreg.BASELINE,
    "c5-contpte": c5_contpte.BASELINE, "c5-contpte-sweep": c5_contpte.BASELINE,
    "c5-contpte-mix": c5_contpte.BASELINE, "c5-contpte-numa": c5_contpte_numa.BASELINE,
}
EFFECT_METRIC = "ns_per_iteration"
# Where the figure measures something else: test_vmalloc's region is mostly
# an idle guest around the module's loops, which the module times itself.
EFFECT_METRICS = {"c2-kpkeys-vmalloc": c2_kpkeys_vmalloc.MEASURE}


def effect_metric(name: str) -> str:
    return EFFECT_METRICS.get(name, EFFECT_METRIC)


def split_seconds(text: str) -> dict[str, float]:
    """``setup=1.0;warmup=…`` as numbers (empty: none)."""
    return {name: float(value) for name, value in
            (part.split("=", 1) for part in text.split(";") if part)}


@dataclass(frozen=True)
class HostTimes:
    """Host seconds of one experiment's paired runs in each mode."""
    runs: int
    full: float
    fast: float
    parts: dict[str, float]
    # Set-up seconds of runs whose set-up another run of the same experiment
    # repeats (the longest of each group kept).
    repeated_setup: float = 0.0

    def __add__(self, other: HostTimes) -> HostTimes:
        return HostTimes(self.runs + other.runs, self.full + other.full,
                         self.fast + other.fast,
                         {p: self.parts[p] + other.parts[p] for p in PARTS},
                         self.repeated_setup + other.repeated_setup)

    def row(self, label: str) -> str:
        spent = " / ".join(f"{self.parts[p] / 60:.1f}" for p in PARTS)
        return (f"| {label} | {self.runs} | {self.full / 60:.1f} | {self.fast / 60:.1f} | "
                f"{self.full / self.fast:.1f}x | {spent} | {self.repeated_setup / 60:.1f} |")


def host_times(full: pd.DataFrame, fast: pd.DataFrame) -> HostTimes:
    def per_run(frame: pd.DataFrame) -> pd.DataFrame:
        return frame.groupby("run").first()

    fast_runs, full_runs = per_run(fast), per_run(full)
    # Every coordinate that tells two runs apart, or a run pairs with several
    # (an older file lacks some: it held one value of each).
    coordinates = [c for c in collect.COORDINATES
                   if c != "run" and c in fast_runs.columns and c in full_runs.columns]
    paired_full = full_runs.merge(fast_runs[coordinates], on=coordinates)
    splits = fast_runs["host_split"].map(split_seconds)
    parts = {p: float(splits.map(lambda split: split.get(p, 0.0)).sum()) for p in PARTS}
    setup = splits.map(lambda split: split.get("setup", 0.0))
    same_setup = [c for c in coordinates if c not in NOT_IN_SETUP]
    # Per group of runs with one set-up: all but its longest.
    repeated = setup.groupby([fast_runs[c] for c in same_setup]).agg(
        lambda group: group.sum() - group.max())
    return HostTimes(len(fast_runs), paired_full["host_seconds"].astype(float).sum(),
                     fast_runs["host_seconds"].astype(float).sum(), parts,
                     float(repeated.sum()))


def records(frame: pd.DataFrame) -> list[dict[str, str]]:
    return frame.astype(str).to_dict("records")


def effect_rows(name: str, full: list[dict[str, str]], fast: list[dict[str, str]],
                effects: list[paired.ArmEffect]) -> str:
    """One line: how far the experiment's values and arm effects moved."""
    pairing = paired.pair(full, fast)
    by_metric = {m.metric: m for m in pairing.metrics}
    measure = effect_metric(name)
    ns = by_metric.get(measure)
    moved = sum(1 for v in pairing.violations if "instructions_per_iteration" in v)
    instructions = by_metric.get("instructions_per_iteration")
    cells = [f"`{name}`", str(len(ns.errors)) if ns else "0",
             (f"{ns.mean:+.2%} / {ns.worst:.2%}" + ("" if measure == EFFECT_METRIC
                                                    else f" (`{measure}`)")) if ns else "—",
             f"{instructions.worst:.2%} ({moved} over 0.1%)" if instructions else "—"]
    if not ns and pairing.verdicts:
        cells[1:3] = [str(pairing.verdicts),
                      f"verdicts and failed cases: {pairing.verdicts - pairing.verdicts_moved} of "
                      f"{pairing.verdicts} agree"]
    if not effects:
        return "| " + " | ".join(cells + ["no arms paired", "—", "—", "—"]) + " |"
    holds, _ = paired.effects_verdict(effects)
    worst, third, spread = paired.effect_bounds(effects)
    return "| " + " | ".join(cells + [f"{len(effects)} vs `{BASELINES[name]}`: {worst:.2%}",
                                      f"{third:.2%}",
                                      f"{spread:.2%}" if spread != float("inf") else "one sample",
                                      "holds" if holds else "does not hold"]) + " |"


def main(folders: style.Folders) -> None:
    checks = folders.results / CHECKS
    names = sorted(p.stem for p in checks.glob("*.csv"))
    if not names:
        raise style.NoResults(f"{style.shown(checks)} holds no results: run 'python -m "
                              "experiments run NAME --detail fast-forward --results-dir "
                              f"{style.shown(checks)}' first")
    try:
        files = paired.paired_files(folders.results, checks, names)
    except compare.BadComparison as err:
        raise style.NoResults(str(err)) from err
    pairing = paired.pair([row for _, full_path, _ in files for row in collect.read_csv(full_path)],
                          [row for _, _, fast_path in files for row in collect.read_csv(fast_path)])
    full = {name: pd.read_csv(path, keep_default_na=False) for name, path, _ in files}
    fast = {name: pd.read_csv(path, keep_default_na=False) for name, _, path in files}
    pairs = {name: (records(full[name]), records(fast[name])) for name in names}
    lines = [paired.table(pairing), "",
             f"Relative error of each fast-forward value against the same run's full-detail "
             f"value, over {', '.join(f'`{n}`' for n in names)}. Iterations and verdicts "
             f"must not move, nor instructions per iteration by more than 0.1%: "
             f"{'none did' if not pairing.violations else f'{len(pairing.violations)} did'}. "
             f"Counts that were zero in full detail and are not now (a TLB or cache miss or "
             f"two at the switch): {len(pairing.from_zero)}.", "",
             "| experiment | runs | full detail, committed rows (host min) | fast-forward "
             "(host min) | ratio | fast-forward: set-up / warm-up / region / teardown (host "
             "min) | of the set-up, repeated by runs that differ only in core model or "
             "parameters (host min) |",
             "|---|---:|---:|---:|---:|---|---:|"]
    times = {name: host_times(full[name], fast[name]) for name in names}
    lines += [times[name].row(f"`{name}`") for name in names]
    lines.append(sum(times.values(), HostTimes(0, 0.0, 0.0, {p: 0.0 for p in PARTS}))
                 .row("all paired"))
    effects = {name: paired.arm_effects(*pairs[name], BASELINES[name], effect_metric(name))
               if name in BASELINES else [] for name in names}
    lines += ["", "| experiment | runs paired | ns per operation (or the measure named): mean / max. error | "
              "instructions per operation: max. error | arms' effects (arm / baseline - 1, "
              "same place): largest error | a third of the smallest effect | median spread "
              "over layout samples | conclusions |", "|---|---:|---:|---:|---|---:|---:|---|"]
    lines += [effect_rows(name, *pairs[name], effects[name]) for name in names]
    lines += ["", "Conclusions hold when the largest error of an arm's effect is under a third "
              "of the smallest effect and under the median spread of the effects over layout "
              "samples, in the full-detail rows."]
    print(style.shown(folders.save_table("fast_forward", "\n".join(lines) + "\n")))
    tables = []
    for name in names:
        if effects[name]:
            tables += [f"`{name}`, each arm against `{BASELINES[name]}` ({effect_metric(name)}):",
                       "",
                       paired.effects_table(effects[name]), ""]
    print(style.shown(folders.save_table("fast_forward_effects", "\n".join(tables))))


if __name__ == "__main__":
    style.run_alone(main)
