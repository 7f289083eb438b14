"""Tables: what each committed experiment cost in host time, and what it would
cost on more cores; and the same per claim, with the command that re-makes it.

Reads every results/*.csv with a host_seconds column; writes
plots/out/host_times.md (the README's) and plots/out/claim_times.md (the
reviewer's guide's). Per experiment: its simulations (one per run
coordinate; boots and model checks are not in the CSVs and add about 40 s
each), their summed host time as measured (two gem5 processes at once on the
2-core machine, so each ran on one core), the longest one, and two
estimates from those per-run times: 2 local cores (the sum over 2) and a
64-core Slurm cluster (the sum over 64, but never less than the longest run).
A simulation two experiments share (the same run key, e.g. a sweep's
default point) is cached once, so totals count it once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from plots import style
from plots.figures import pictures_of

CLUSTER_CORES = 64
LOCAL_CORES = 2


@dataclass(frozen=True)
class ClaimEntry:
    """One claim of the README's index: where its results are discussed and
    the experiments that make them (its figures: those that read them,
    plots/figures.py)."""

    label: str
    page: str
    experiments: tuple[str, ...]
    # Commands that make the checks its page also discusses (staged definitions,
    # cross-checks), beside the experiments' own command.
    checks: tuple[str, ...] = ()


# The command that makes the staged checks named after it.
CHECKS = "python -m experiments --definitions experiments/definitions/checks run "
# Each claim of the README's index and the reviewer's guide.
CLAIMS: tuple[ClaimEntry, ...] = (
    ClaimEntry("kernel entry cost", "docs/results/syscall.md", ("syscall",)),
    ClaimEntry("C1 as published", "docs/results/c1.md", ("c1-published", "c1-published-fit")),
    ClaimEntry("C1 what-if", "docs/results/c1.md", ("c1-sctlr", "c1-sctlr-sweep"),
               (CHECKS + "c1-sensitivity",)),
    ClaimEntry("C2 page tables under a protection key", "docs/results/c2.md",
               ("kpkeys-selftests", "c2-kpkeys", "c2-kpkeys-64k", "c2-kpkeys-por",
                "c2-kpkeys-vmalloc", "c2-kpkeys-spawn"),
               (CHECKS + "c2-kpkeys-1g c2-kpkeys-sensitivity sysreg-isb",)),
    ClaimEntry("C3 software PAN, 32-bit (gem5)", "docs/results/c3.md",
               ("c3-arm32-pan", "c3-arm32-dacr")),
    ClaimEntry("C4 batched user access", "docs/results/c4.md",
               ("c4-uaccess-check", "c4-uaccess", "c4-uaccess-sysreg"),
               (CHECKS + "c4-uaccess-isb sysreg-isb",)),
    ClaimEntry("C5 contpte teardown", "docs/results/c5.md",
               ("c5-contpte", "c5-contpte-sweep", "c5-contpte-numa", "c5-contpte-mix",
                "c5-contpte-altra", "c5-contpte-dvm-sweep"),
               (CHECKS + "c5-contpte-burst c5-contpte-2023",
                "python -m experiments dvm-crosscheck")),
    ClaimEntry("POE", "docs/results/poe.md", ("poe", "poe-selftests")),
    ClaimEntry("MTE and KASAN", "docs/results/mte.md",
               ("mte", "mte-instructions", "mte-workloads", "mte-selftests", "kasan",
                "kasan-boot"),
               (CHECKS + "mte-sync-tag-lines mte-write-streaming",)),
    ClaimEntry("PAuth and BTI selftests", "docs/results/poe.md", ("hardening-selftests",)),
    ClaimEntry("core-model validation", "docs/results/core-validation.md",
               ("core-validation", "sysreg-microbench")),
)
# Columns that name one simulation when a CSV predates the run column.
COORDINATES = ("cpu", "core", "variant", "kernel_args", "features", "params", "workload",
               "sample")


def simulations(frame: pd.DataFrame) -> pd.Series:
    """Host seconds of each simulation in one results file."""
    if "host_seconds" not in frame.columns:
        return pd.Series(dtype=float)
    timed = frame[frame["host_seconds"].astype(str) != ""]
    key = ["run"] if "run" in timed.columns else [c for c in COORDINATES if c in timed.columns]
    return timed.groupby(key)["host_seconds"].first().astype(float)


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f}"


def experiment_runs(results: Path) -> dict[str, pd.Series]:
    """Host seconds of each simulation, per experiment in ``results``."""
    runs = {}
    for path in sorted(results.glob("*.csv")):
        frame = pd.read_csv(path, keep_default_na=False)
        timed = simulations(frame)
        if "run" not in frame.columns:
            # Coordinates name a simulation within its experiment only; run
            # keys, which are what the cache shares, name it everywhere.
            timed.index = [(path.stem, *([i] if not isinstance(i, tuple) else i))
                           for i in timed.index]
        if not timed.empty:
            runs[path.stem] = timed
    return runs


def once(runs: list[pd.Series]) -> pd.Series:
    """The simulations of several experiments, each cached one counted once."""
    joined = pd.concat(runs)
    return joined[~joined.index.duplicated()]


def row(label: str, runs: pd.Series) -> str:
    summed, longest = float(runs.sum()), float(runs.max())
    return (f"| {label} | {len(runs)} | {minutes(summed)} | {minutes(longest)} | "
            f"{minutes(max(summed / LOCAL_CORES, longest))} | "
            f"{minutes(max(summed / CLUSTER_CORES, longest))} |")


def table(per_experiment: dict[str, pd.Series]) -> str:
    lines = ["| experiment | simulations | host time, summed (min) | longest (min) | "
             f"on {LOCAL_CORES} cores (min) | on a {CLUSTER_CORES}-core cluster (min) |",
             "|---|---:|---:|---:|---:|---:|"]
    lines += [row(f"`{name}`", runs) for name, runs in per_experiment.items()]
    if not per_experiment:
        return "\n".join(lines) + "\n"
    every = once(list(per_experiment.values()))
    lines.append(row("all", every))
    total = float(every.sum())
    hours = round(total / LOCAL_CORES / 3600, 1)
    lines += ["", f"Measured host seconds of each simulation (the `host_seconds` column, as "
              f"measured: two at a time on the 2-core machine, or more where an experiment's "
              f"section says so). Summed: {minutes(total)} min; about {hours:g} "
              f"h of wall clock on {LOCAL_CORES} cores, plus about 40 s per boot checkpoint. "
              f"The cluster column assumes one simulation per core and a queue that is never "
              f"the bottleneck: the longest simulation then bounds each experiment. A "
              f"simulation two experiments share (one cache entry) counts once in `all`."]
    return "\n".join(lines) + "\n"


def claim_table(per_experiment: dict[str, pd.Series]) -> str:
    """Per claim: the command that re-makes its results and what it costs."""
    lines = ["| claim | command | simulations | host time, summed (min) | "
             f"on {LOCAL_CORES} cores (min) |", "|---|---|---:|---:|---:|"]
    for claim in CLAIMS:
        present = [per_experiment[n] for n in claim.experiments if n in per_experiment]
        if not present:
            continue
        runs = once(present)
        summed = float(runs.sum())
        lines.append(f"| {claim.label} | `python -m experiments run "
                     f"{' '.join(claim.experiments)}` | {len(runs)} | "
                     f"{minutes(summed)} | {minutes(max(summed / LOCAL_CORES, runs.max()))} |")
    if per_experiment:
        every = once(list(per_experiment.values()))
        summed = float(every.sum())
        lines.append(f"| everything | `make EXPERIMENTS=all` | {len(every)} | {minutes(summed)} | "
                     f"{minutes(max(summed / LOCAL_CORES, every.max()))} |")
    return "\n".join(lines) + "\n"


def index_table(per_experiment: dict[str, pd.Series]) -> str:
    """The README's index: per claim its results page, figures, the command
    that re-makes it and its host time on the local cores."""
    lines = ["| claim | results | figures | command | host time on "
             f"{LOCAL_CORES} cores (min) |", "|---|---|---|---|---:|"]
    for claim in CLAIMS:
        present = [per_experiment[n] for n in claim.experiments if n in per_experiment]
        runs = once(present) if present else None
        cost = (minutes(max(float(runs.sum()) / LOCAL_CORES, runs.max()))
                if runs is not None else "not run")
        figures = ", ".join(f"[{name}](plots/out/{name}.png)"
                            for name in pictures_of(claim.experiments, claim.label)) or "—"
        commands = "; checks: ".join(
            f"`{command}`" for command in (f"python -m experiments run "
                                           f"{' '.join(claim.experiments)}", *claim.checks))
        lines.append(f"| {claim.label} | [{Path(claim.page).stem}]({claim.page}) | {figures} | "
                     f"{commands} | {cost} |")
    return "\n".join(lines) + "\n"


def main(folders: style.Folders) -> None:
    per_experiment = experiment_runs(folders.results)
    print(style.shown(folders.save_table("host_times", table(per_experiment))))
    print(style.shown(folders.save_table("claim_times", claim_table(per_experiment))))
    print(style.shown(folders.save_table("claim_index", index_table(per_experiment))))


if __name__ == "__main__":
    style.run_alone(main)
