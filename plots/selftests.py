"""Tables: verdict of every kernel selftest run in the guest, per CPU model.

Reads results/poe-selftests.csv, results/mte-selftests.csv,
results/hardening-selftests.csv (pauth, BTI), results/kpkeys-selftests.csv
(page tables protected by kpkeys), results/kasan.csv and results/kasan-boot.csv
(whichever exist), and results/<name>-qemu.csv when
the same tests also ran on QEMU; writes plots/out/<name>.md with one row per test
and one column per CPU (atomic, or the O3 core model, then QEMU), each cell
the verdict, the subtest counts (passed/failed/skipped) and the failed
subtests' names, or, for repeated QEMU boots, how many passed and which
subtests failed how often. Where an experiment runs several kernel variants,
CPU feature sets or kernel command lines, each is a row of its own (labelled
with the arguments that differ). The last columns give each gem5 run's
simulated instructions and host time.
"""

from __future__ import annotations

import collections
from collections.abc import Callable

import pandas as pd

from plots import figures, style

EXPERIMENTS = figures.figure("selftests").experiments


def cell(run: pd.DataFrame) -> str:
    if "boot" in run and run["boot"].nunique() > 1:
        return boots_cell(run)
    values = run.set_index("metric")["value"]
    failed = str(values.get("failed_cases", "")).replace(";", ", ")
    if not failed and str(values["subtests_failed"]) not in ("0", ""):
        # Results from before the failed subtests were recorded.
        failed = "not recorded"
    return (f"{values['verdict']} ({values['subtests_passed']}/{values['subtests_failed']}/"
            f"{values['subtests_skipped']}{': ' + failed if failed else ''})")


def boots_cell(run: pd.DataFrame) -> str:
    """Repeated boots: how many passed, and which subtests failed how often."""
    verdicts = run[run["metric"] == "verdict"]["value"]
    failed = collections.Counter(
        case for cases in run[run["metric"] == "failed_cases"]["value"].fillna("")
        for case in str(cases).split(";") if case)
    missed = ", ".join(f"{case} ×{count}" for case, count in failed.most_common())
    return (f"pass in {(verdicts == 'pass').sum()} of {len(verdicts)} boots"
            + (f"; failed: {missed}" if missed else ""))


def varying_args(frame: pd.DataFrame) -> tuple[dict[str, str], list[str]]:
    """Each kernel command line's arguments that not every run shares (a row's
    label), and the shared ones (said once, under the table)."""
    lines = {args: args.split() for args in frame["kernel_args"].unique()}
    shared = [a for a in next(iter(lines.values()), []) if all(a in l for l in lines.values())]
    return {args: " ".join(a for a in words if a not in shared)
            for args, words in lines.items()}, shared


def quantity(run: pd.DataFrame, metric: str) -> float | None:
    """A run's numeric metric, None where it has none."""
    values = pd.to_numeric(run[run["metric"] == metric]["value"], errors="coerce").dropna()
    return float(values.iloc[0]) if len(values) else None


def instructions_cell(run: pd.DataFrame) -> str | None:
    count = quantity(run, "sim_instructions")
    return f"{count / 1e6:,.0f} M" if count is not None else None


def host_time_cell(run: pd.DataFrame) -> str | None:
    seconds = pd.to_numeric(run.get("host_seconds", pd.Series(dtype=float)),
                            errors="coerce").dropna()
    return f"{seconds.iloc[0]:,.0f} s" if len(seconds) else None


# What each gem5 run cost, by column header: a run records it or does not
# (a restored run records no instruction count of its own, only host time).
COSTS: dict[str, Callable[[pd.DataFrame], str | None]] = {
    "instructions": instructions_cell, "host time": host_time_cell}


def cost_cells(runs: pd.DataFrame, columns: list[str], costs: list[str]) -> list[str]:
    """Each of ``costs`` of each gem5 column's run, '/'-separated ('-' where a
    run is missing or did not record it)."""
    return [" / ".join(COSTS[cost](runs[runs["where"] == where]) or "-" for where in columns)
            for cost in costs]


def table(frame: pd.DataFrame, qemu: pd.DataFrame | None = None) -> str:
    """One row per test (and per kernel command line, where they differ), one
    column per CPU: gem5's atomic CPU, its O3 core models, then QEMU."""
    frame = frame.assign(where=frame.apply(
        lambda r: r["core"] if r["cpu"] == "o3" else r["cpu"], axis=1))
    simulated = sorted(frame["where"].unique(), key=lambda w: (w != "atomic", w))
    costs = [cost for cost, formatted in COSTS.items() if formatted(frame)]
    columns = list(simulated)
    if qemu is not None:
        qemu = qemu.assign(where=qemu["qemu_version"].map(lambda v: f"QEMU {v.split()[0]}"))
        columns += sorted(qemu["where"].unique())
        frame = pd.concat([frame, qemu], ignore_index=True)
    frame["kernel_args"] = frame.get("kernel_args", pd.Series("", index=frame.index)
                                     ).fillna("").astype(str)
    labels, shared = varying_args(frame)
    by_kernel = frame["variant"].nunique() > 1 or frame["features"].nunique() > 1
    frame = frame.assign(test=frame.apply(
        lambda r: r["workload"]
        + (f" ({r['variant']}, {r['features']})" if by_kernel else "")
        + (f" `{labels[r['kernel_args']]}`" if labels[r["kernel_args"]] else ""), axis=1))
    header = ["selftest", *columns]
    header += [f"{cost} ({' / '.join(simulated)})" for cost in costs]
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---|" * (len(header) - 1)]
    for test, runs in frame.groupby("test", sort=True):
        cells = []
        for where in columns:
            run = runs[runs["where"] == where]
            cells.append(cell(run) if len(run) else "not run")
        cells += cost_cells(runs, simulated, costs)
        lines.append(f"| {test} | " + " | ".join(cells) + " |")
    builds = style.provenance_note(frame[frame["gem5_build"].fillna("") != ""])
    return ("\n".join(lines) + "\n\nCells: verdict (subtests passed/failed/skipped: the failed "
            "ones). " + (f"Every run's kernel command line has `{' '.join(shared)}`. "
                         if shared else "")
            + f"{builds}; kernel variant {', '.join(sorted(frame['kernel_variant'].unique()))}.\n")


def main(folders: style.Folders) -> None:
    wrote = False
    for name in EXPERIMENTS:
        if not (folders.results / f"{name}.csv").is_file():
            continue
        qemu_csv = folders.results / f"{name}-qemu.csv"
        qemu = pd.read_csv(qemu_csv, keep_default_na=False) if qemu_csv.is_file() else None
        path = folders.save_table(name.replace("-", "_"), table(folders.load(name), qemu))
        print(style.shown(path))
        wrote = True
    if not wrote:
        raise style.NoResults(f"no selftest results in {style.shown(folders.results)}: run "
                              f"'python -m experiments run {' '.join(EXPERIMENTS)}' first")


if __name__ == "__main__":
    style.run_alone(main)
