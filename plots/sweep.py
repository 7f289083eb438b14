"""Figure: a parameter sweep made by ``python -m experiments sweep``.

``python -m plots.sweep RESULTS.csv --param KEY [--metric M]`` draws, for each
series of the experiment (core, kernel variant, features, workload), the metric
against the parameter's values, with the unmodified model's value as a dashed
line, and writes ``<RESULTS>-<KEY>.{pdf,png}`` (and the builds behind them,
``<RESULTS>-<KEY>.provenance.json``) beside the CSV.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import pandas as pd

from hardening import param_overrides
from plots import style

SERIES = ("core", "variant", "features", "workload")


def value_of(params: str, key: str) -> str | None:
    """The swept parameter's value in a run's overrides (None: unmodified)."""
    return param_overrides.parse_column(params).get(key)


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m plots.sweep")
    parser.add_argument("csv", type=Path)
    parser.add_argument("--param", required=True, help="the swept parameter")
    parser.add_argument("--metric", default="ns_per_iteration")
    args = parser.parse_args(argv)
    if not args.csv.is_file():
        raise SystemExit(f"{args.csv} does not exist: run 'python -m experiments sweep' first")
    frame = pd.read_csv(args.csv, keep_default_na=False)
    rows = frame[frame["metric"] == args.metric].copy()
    if rows.empty:
        valid = ", ".join(sorted(set(frame["metric"])))
        raise SystemExit(f"{args.csv} has no metric '{args.metric}'; it has: {valid}")
    rows["swept"] = [value_of(p, args.param) for p in rows["params"]]
    if rows["swept"].isna().all():
        raise SystemExit(f"no run in {args.csv} sets {args.param}")
    unit = rows["unit"].iloc[0]

    fig, axis = style.figure(height=2.4)
    for index, (series, group) in enumerate(rows.groupby(list(SERIES))):
        label = " ".join(str(s) for s in series)
        swept = group[group["swept"].notna()].copy()
        swept["x"] = [_number(v) for v in swept["swept"]]
        numeric = not swept["x"].isna().any()
        swept = swept.sort_values("x" if numeric else "swept")
        xs = list(swept["x"]) if numeric else list(range(len(swept)))
        colour = style.PALETTE[index % len(style.PALETTE)]
        axis.plot(xs, swept["value"].astype(float), marker="os^vD<>"[index % 7], color=colour,
                  linewidth=0.8, markersize=3, label=label)
        if not numeric:
            axis.set_xticks(xs, list(swept["swept"]))
        unmodified = group[group["swept"].isna()]
        if not unmodified.empty:
            axis.axhline(float(unmodified["value"].iloc[0]), color=colour, linestyle="--",
                         linewidth=0.6)
    axis.set_xlabel(args.param)
    axis.set_ylabel(f"{args.metric} ({unit})")
    axis.set_title("dashed: the unmodified model", loc="left", fontsize=6)
    axis.legend(fontsize=5, frameon=False)
    style.add_provenance(fig, frame)
    # Beside the CSV, named by the parameter (which holds dots, so not with_suffix).
    for path in style.Folders(args.csv.parent, args.csv.parent).save(
            fig, f"{args.csv.stem}-{args.param}"):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
