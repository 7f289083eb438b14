"""Table: fast-forward against full detail, the same runs paired.

Reads each ``<results>/checks/fast-forward/<name>.csv`` (runs made with
``--detail fast-forward``) and the full-detail rows of the same runs in
``<results>/<name>.csv``; writes ``fast_forward.md``: per metric, the
relative error over every pair (``experiments.paired``), then per
experiment the host time of the paired runs in each mode and, for the
fast-forward runs, where it went (the ``host_split`` column).
"""

from __future__ import annotations

import pandas as pd

from experiments import paired
from plots import style

CHECKS = "checks/fast-forward"
PARTS = ("setup", "warmup", "region", "teardown")


def split_seconds(text: str) -> dict[str, float]:
    """``setup=1.0;warmup=…`` as numbers (empty: none)."""
    return {name: float(value) for name, value in
            (part.split("=", 1) for part in text.split(";") if part)}


def host_rows(name: str, full: pd.DataFrame, fast: pd.DataFrame) -> str:
    def per_run(frame: pd.DataFrame) -> pd.DataFrame:
        return frame.groupby("run").first()

    fast_runs, full_runs = per_run(fast), per_run(full)
    coordinates = ["core", "variant", "features", "params", "workload", "sample"]
    paired_full = full_runs.merge(fast_runs[coordinates], on=coordinates)
    full_seconds = paired_full["host_seconds"].astype(float).sum()
    fast_seconds = fast_runs["host_seconds"].astype(float).sum()
    parts = {p: 0.0 for p in PARTS}
    for text in fast_runs["host_split"]:
        for part, seconds in split_seconds(text).items():
            parts[part] += seconds
    spent = " / ".join(f"{parts[p] / 60:.1f}" for p in PARTS)
    return (f"| `{name}` | {len(fast_runs)} | {full_seconds / 60:.1f} | "
            f"{fast_seconds / 60:.1f} | {full_seconds / fast_seconds:.1f}x | {spent} |")


def main(folders: style.Folders) -> None:
    checks = folders.results / CHECKS
    names = sorted(p.stem for p in checks.glob("*.csv"))
    if not names:
        raise style.NoResults(f"{style.shown(checks)} holds no results: run 'python -m "
                              "experiments run NAME --detail fast-forward --results-dir "
                              f"{style.shown(checks)}' first")
    pairing = paired.pair_dirs(folders.results, checks, names)
    lines = [paired.table(pairing), "",
             f"Relative error of each fast-forward value against the same run's full-detail "
             f"value, over {', '.join(f'`{n}`' for n in names)}. Iterations and "
             f"instructions per iteration must not move (0.1%): "
             f"{'none did' if not pairing.violations else f'{len(pairing.violations)} did'}. "
             f"Counts that were zero in full detail and are not now (a TLB or cache miss or "
             f"two at the switch): {len(pairing.from_zero)}.", "",
             "| experiment | runs | full detail, committed rows (host min) | fast-forward "
             "(host min) | ratio | fast-forward: set-up / warm-up / region / teardown (host "
             "min) |",
             "|---|---:|---:|---:|---:|---|"]
    lines += [host_rows(name, folders.load(name), pd.read_csv(checks / f"{name}.csv",
                                                              keep_default_na=False))
              for name in names]
    print(style.shown(folders.save_table("fast_forward", "\n".join(lines) + "\n")))


if __name__ == "__main__":
    style.run_alone(main)
