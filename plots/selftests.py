"""Tables: verdict of every kernel selftest run in the guest, per CPU model.

Reads results/poe-selftests.csv, results/mte-selftests.csv,
results/hardening-selftests.csv (pauth, BTI), results/kpkeys-selftests.csv
(page tables protected by kpkeys), results/kasan.csv and results/kasan-boot.csv
(whichever exist), and results/<name>-qemu.csv when
the same tests also ran on QEMU; writes plots/out/<name>.md with one row per test
and one column per CPU (atomic, or the O3 core model, then QEMU), each cell
the verdict and the subtest counts (passed/failed/skipped), or, for repeated
QEMU boots, how many passed and which subtests failed how often. Where an
experiment runs several kernel variants or CPU feature sets, each is a row of
its own.
"""

from __future__ import annotations

import collections

import pandas as pd

from plots import style

EXPERIMENTS = ("poe-selftests", "mte-selftests", "hardening-selftests", "kpkeys-selftests",
               "kasan", "kasan-boot")


def cell(run: pd.DataFrame) -> str:
    if "boot" in run and run["boot"].nunique() > 1:
        return boots_cell(run)
    values = run.set_index("metric")["value"]
    return (f"{values['verdict']} ({values['subtests_passed']}/{values['subtests_failed']}/"
            f"{values['subtests_skipped']})")


def boots_cell(run: pd.DataFrame) -> str:
    """Repeated boots: how many passed, and which subtests failed how often."""
    verdicts = run[run["metric"] == "verdict"]["value"]
    failed = collections.Counter(
        case for cases in run[run["metric"] == "failed_cases"]["value"].fillna("")
        for case in str(cases).split(";") if case)
    missed = ", ".join(f"{case} ×{count}" for case, count in failed.most_common())
    return (f"pass in {(verdicts == 'pass').sum()} of {len(verdicts)} boots"
            + (f"; failed: {missed}" if missed else ""))


def table(frame: pd.DataFrame, qemu: pd.DataFrame | None = None) -> str:
    frame = frame.assign(where=frame.apply(
        lambda r: (r["core"] if r["cpu"] == "o3" else r["cpu"])
        + (f" {r['kernel_args']}" if r.get("kernel_args") else ""), axis=1))
    columns = sorted(frame["where"].unique(), key=lambda w: (not w.startswith("atomic"), w))
    if qemu is not None:
        qemu = qemu.assign(where=qemu.apply(
            lambda r: f"QEMU {r['qemu_version'].split()[0]}"
            + (f" {r['kernel_args']}" if r.get("kernel_args") else ""), axis=1))
        columns += sorted(qemu["where"].unique())
        frame = pd.concat([frame, qemu], ignore_index=True)
    by_kernel = frame["variant"].nunique() > 1 or frame["features"].nunique() > 1
    frame = frame.assign(test=frame.apply(
        lambda r: f"{r['workload']} ({r['variant']}, {r['features']})" if by_kernel
        else r["workload"], axis=1))
    lines = ["| selftest | " + " | ".join(columns) + " |",
             "|---|" + "---|" * len(columns)]
    for workload, runs in frame.groupby("test", sort=True):
        cells = []
        for where in columns:
            run = runs[runs["where"] == where]
            cells.append(cell(run) if len(run) else "not run")
        lines.append(f"| {workload} | " + " | ".join(cells) + " |")
    builds = style.provenance_note(frame[frame["gem5_build"].fillna("") != ""])
    return ("\n".join(lines) + "\n\nCells: verdict (subtests passed/failed/skipped). "
            f"{builds}; kernel variant {', '.join(sorted(frame['kernel_variant'].unique()))}.\n")


def main() -> None:
    wrote = False
    for name in EXPERIMENTS:
        if not (style.RESULTS / f"{name}.csv").is_file():
            continue
        qemu_csv = style.RESULTS / f"{name}-qemu.csv"
        qemu = pd.read_csv(qemu_csv, keep_default_na=False) if qemu_csv.is_file() else None
        path = style.save_table(name.replace("-", "_"), table(style.load_results(name), qemu))
        print(path.relative_to(style.REPO_ROOT))
        wrote = True
    if not wrote:
        raise SystemExit("no selftest results: run 'python -m experiments run poe-selftests "
                         "mte-selftests' first")


if __name__ == "__main__":
    main()
