"""Where results are written: the committed record, or a user's own runs.

The rule: nothing a user runs writes over the committed record, which is
``results/`` (the CSVs), ``plots/out/`` (figures and the tables the docs
hold) and those tables in the docs. ``make``, ``python -m experiments run``
(and ``sweep``, ``trace``, the QEMU references) and ``python -m plots.all``
write under ``out/`` in the checkout, which git ignores; the record changes
only when asked by name (``make publish``, or ``--results-dir results``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
COMMITTED_RESULTS = REPO_ROOT / "results"
USER_OUT = REPO_ROOT / "out"
USER_RESULTS = USER_OUT / "results"
# Runs on another core, with --param overrides, sweeps, another gem5 binary.
USER_DERIVED = USER_OUT / "derived"
USER_TRACES = USER_RESULTS / "traces"
USER_FIGURES = USER_OUT / "figures"
# A fast-forward experiment's full-detail canary runs, beside its own CSV.
CANARY = "canary"


def canary_csv(results_dir: Path, name: str) -> Path:
    return results_dir / CANARY / f"{name}.csv"


def results_dir_argument(parser: argparse.ArgumentParser) -> None:
    """``--results-dir`` of a command that writes CSVs, defaulting to a user's."""
    parser.add_argument("--results-dir", type=Path, default=USER_RESULTS,
                        help="where the CSVs go (default: out/results; the committed "
                        "record is results/)")
