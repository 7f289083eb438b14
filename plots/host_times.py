"""Table: what each committed experiment cost in host time, and what it would
cost on more cores.

Reads every results/*.csv with a host_seconds column; writes
plots/out/host_times.md. Per experiment: its simulations (one per run
coordinate; boots and model checks are not in the CSVs and add about 40 s
each), their summed host time as measured (two gem5 processes at once on the
2-core machine, so each ran on one core), the longest one, and two
estimates from those per-run times: 2 local cores (the sum over 2) and a
64-core Slurm cluster (the sum over 64, but never less than the longest run).
"""

from __future__ import annotations

import math

import pandas as pd

from plots import style

CLUSTER_CORES = 64
LOCAL_CORES = 2
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


def table() -> str:
    lines = ["| experiment | simulations | host time, summed (min) | longest (min) | "
             f"on {LOCAL_CORES} cores (min) | on a {CLUSTER_CORES}-core cluster (min) |",
             "|---|---:|---:|---:|---:|---:|"]
    total, longest_all, count_all = 0.0, 0.0, 0
    for path in sorted(style.RESULTS.glob("*.csv")):
        runs = simulations(pd.read_csv(path, keep_default_na=False))
        if runs.empty:
            continue
        summed, longest = float(runs.sum()), float(runs.max())
        total += summed
        longest_all = max(longest_all, longest)
        count_all += len(runs)
        lines.append(f"| `{path.stem}` | {len(runs)} | {minutes(summed)} | {minutes(longest)} | "
                     f"{minutes(max(summed / LOCAL_CORES, longest))} | "
                     f"{minutes(max(summed / CLUSTER_CORES, longest))} |")
    if count_all:
        lines.append(f"| all | {count_all} | {minutes(total)} | {minutes(longest_all)} | "
                     f"{minutes(max(total / LOCAL_CORES, longest_all))} | "
                     f"{minutes(max(total / CLUSTER_CORES, longest_all))} |")
    hours = math.ceil(total / LOCAL_CORES / 360) / 10
    lines += ["", f"Measured host seconds of each simulation (the `host_seconds` column; two "
              f"at a time on the 2-core machine). Summed: {minutes(total)} min; about {hours:g} "
              f"h of wall clock on {LOCAL_CORES} cores, plus about 40 s per boot checkpoint. "
              f"The cluster column assumes one simulation per core and a queue that is never "
              f"the bottleneck: the longest simulation then bounds each experiment."]
    return "\n".join(lines) + "\n"


def main() -> None:
    path = style.save_table("host_times", table())
    print(path)


if __name__ == "__main__":
    main()
