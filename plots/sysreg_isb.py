"""Table: what the sensitivity checks' extra ISB cycles come to per ISB, on
the A76, N1 and V1 models, beside the public figures (one cycle count for these cores).

Reads results/checks/isb/sysreg-isb.csv (the runs of
experiments/definitions/checks/sysreg-isb.toml: sysreg-microbench's loops of
one ISB and of nothing, at the model's own ISB timing and with extra cycles);
writes sysreg_isb.md. A cost is the run's cycles per operation less those of
the loop alone (the "nop" run with the same core and setting), as in
sysreg_microbench. One run per cell.
"""

from __future__ import annotations

import pandas as pd

from plots import style
from plots.core_validation import CORES
from plots.sysreg_microbench import LOOP, public_text, published_rows

CHECK = "checks/isb/sysreg-isb.csv"
METRIC = "cycles_per_iteration"
EXTRA = "sysreg.isb_latency="


def extra_cycles(params: str) -> int:
    """The extra ISB cycles a run's overrides set (0: the model's own timing)."""
    if not params:
        return 0
    if not params.startswith(EXTRA) or " " in params:
        raise ValueError(f"{CHECK}: a run with overrides '{params}', where only "
                         f"'{EXTRA}N' is swept")
    return int(params[len(EXTRA):])


def isb_costs(frame: pd.DataFrame) -> pd.DataFrame:
    """Cycles per ISB above the loop alone: one row per extra-cycle setting,
    one column per core."""
    rows = frame[frame["metric"] == METRIC].copy()
    rows["extra"] = rows["params"].map(extra_cycles)
    cells = ["extra", "workload", "core"]
    twice = rows[rows.duplicated(cells, keep=False)]
    if not twice.empty:
        raise RuntimeError(f"{CHECK}: two runs of {tuple(twice.iloc[0][cells])}; this table "
                           "holds one run per cell")
    cycles = rows.pivot_table(index=["extra", "workload"], columns="core", values="value",
                              aggfunc="first")
    missing = {LOOP, "isb"} - set(cycles.index.get_level_values("workload"))
    if missing:
        raise style.NoResults(f"{CHECK} has no {sorted(missing)} runs")
    above = cycles.xs("isb", level="workload") - cycles.xs(LOOP, level="workload")
    return above[[c for c in CORES if c in above.columns]].sort_index()


def table(above: pd.DataFrame) -> str:
    cores = list(above.columns)
    lines = ["Cycles per ISB above the loop alone (sysreg-microbench's `isb` less its `nop`, "
             "same core and setting), at EL1 with interrupts masked, one run per cell; the "
             "setting adds that many cycles to the model's ISB (`sysreg.isb_latency`). "
             "Public figures: " + public_text(published_rows().get("isb", [])) + ".", "",
             "| extra ISB cycles | " + " | ".join(cores) + " |",
             "|---:|" + "---:|" * len(cores)]
    for extra, row in above.iterrows():
        setting = "0 (the model's)" if extra == 0 else f"+{extra}"
        lines.append(f"| {setting} | " + " | ".join(f"{row[c]:.1f}" for c in cores) + " |")
    return "\n".join(lines) + "\n"


def main(folders: style.Folders) -> None:
    frame = folders.load_check(CHECK, "python -m experiments --definitions "
                               "experiments/definitions/checks run sysreg-isb")
    print(style.shown(folders.save_table("sysreg_isb", table(isb_costs(frame)))))


if __name__ == "__main__":
    style.run_alone(main)
