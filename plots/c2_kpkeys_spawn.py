"""Figure and table: claim C2's kernel-build stand-in, whole process lives
with kpkeys-protected page tables: real time and system time, real POE and
mock.

Reads results/c2-kpkeys-spawn.csv; writes plots/out/c2_kpkeys_spawn.{pdf,png,md}.
The published measure is kernbench's real, system and user time. Here real
time is the region's simulated time per life, system time its cycles at a
privileged level and user time its cycles in user mode (gem5 patch 0020
splits each active cycle by the mode the core's committed state is in).
Bars: each arm's real and system time over kpkeys-base's on the same CPU (the
real-POE arms against the baseline on the what-if V1 with FEAT_S1POE, the mock
arms against it on V1 without). One run per point
(no layout samples, so no spread is drawn). The published work gives the
shape only, so no hardware numbers stand beside these.
"""

from __future__ import annotations

import pandas as pd

from plots import style
from plots.c2_kpkeys import ARMS

BASELINE = "kpkeys-base"
ROWS = ((BASELINE, "baseline", "pac+pan+poe"), (BASELINE, "baseline", "pac+pan"), *ARMS)
WORKLOAD = "spawn-4k"
# (label, metric per life)
MEASURES = (("real time", "ns_per_iteration"), ("system time", "privileged_cycles"),
            ("user time", "user_cycles"))


def per_life(frame: pd.DataFrame, metric: str, variant: str, features: str) -> float:
    rows = frame[(frame["variant"] == variant) & (frame["features"] == features)
                 & (frame["workload"] == WORKLOAD)]
    values = rows[rows["metric"] == metric]["value"].astype(float)
    if metric.endswith("_per_iteration"):
        return style.median_interval(list(values))[0]
    lives = float(rows[rows["metric"] == "sim_ns"]["value"].iloc[0]
                  / rows[rows["metric"] == "ns_per_iteration"]["value"].iloc[0])
    return style.median_interval(list(values / lives))[0]


def table(frame: pd.DataFrame) -> str:
    lines = ["Neoverse-V1 model; real-POE arms on a what-if V1 with FEAT_S1POE, mock arms "
             "(CONTEXTIDR_EL1 for POR_EL1) on V1 without, each beside kpkeys-base on the "
             "same CPU. `pgtable_bench spawn 4k 4 8`: per life (fork, exec, 4 MiB of page faults, "
             "exit, reap), the simulated time and the active cycles at a privileged level "
             "and in user mode, each with the arm's change over kpkeys-base.", "",
             "| kernel | CPU | real µs | vs base | system cycles | vs base | user cycles | vs base "
             "| system share |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for variant, _, features in ROWS:
        cells = []
        for _, metric in MEASURES:
            mine = per_life(frame, metric, variant, features)
            shown = mine / 1000 if metric == "ns_per_iteration" else mine
            cells.append(f"{shown:,.1f}" if metric == "ns_per_iteration" else f"{shown:,.0f}")
            cells.append("" if variant == BASELINE
                         else f"{overhead(frame, metric, variant, features):+.1f}%")
        system = per_life(frame, "privileged_cycles", variant, features)
        share = system / (system + per_life(frame, "user_cycles", variant, features))
        cpu = "V1 + POE" if "poe" in features else "V1"
        lines.append(f"| {variant} | {cpu} | " + " | ".join(cells)
                     + f" | {100 * share:.1f}% |")
    return "\n".join(lines) + "\n"


def overhead(frame: pd.DataFrame, metric: str, variant: str, features: str) -> float:
    return 100 * (per_life(frame, metric, variant, features)
                  / per_life(frame, metric, BASELINE, features) - 1)


def main(folders: style.Folders) -> None:
    frame = folders.load("c2-kpkeys-spawn")
    shown = MEASURES[:2]
    fig, ax = style.figure(height=2.2)
    style.grouped_bars(ax, [name for name, _ in shown], {
        label: [overhead(frame, metric, variant, features) for _, metric in shown]
        for variant, label, features in ARMS})
    ax.axhline(0, color="black", linewidth=0.5)
    ax.set_ylabel("per process life vs.\nkpkeys-base (% more)")
    fig.subplots_adjust(top=0.8)
    style.legend_on_top(fig, ax, 2)
    style.add_note(fig, "Neoverse-V1 model; POE arms on a what-if V1 with FEAT_S1POE, mock "
                   "arms\n(CONTEXTIDR_EL1 for POR_EL1) on V1 without, each against "
                   "kpkeys-base on the same CPU.\nFork, exec, 4 MiB "
                   "of page faults, exit. Real: simulated time; system: cycles at EL1 "
                   "(gem5 patch 0020). One run per bar, no spread sampled.",
                   frame, below=-0.16)
    folders.publish(fig, "c2_kpkeys_spawn", table(frame))


if __name__ == "__main__":
    style.run_alone(main)
