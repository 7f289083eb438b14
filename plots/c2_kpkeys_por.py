"""Figure and table: claim C2 sensitivity, what a fork costs with
kpkeys-protected page tables as a POR_EL1 write costs more.

Reads results/c2-kpkeys-por.csv; writes plots/out/c2_kpkeys_por.{pdf,png,md}.
The x axis orders the POR_EL1 write's timing from a relaxed write with no
extra latency through extra cycles of write latency to the Neoverse-V1
model's default, gem5's own timing of a system-register write (the pipeline
drains; an assumption too, no core with POE has shipped). kpkeys-base writes no POR_EL1
on a fork's path and is the control. The table's slope (added cycles per
fork for each extra cycle of write latency) counts the POR_EL1 writes whose
latency the fork waits for. Each point is one run of one memory layout; the
error bars are the median's interval over layout samples where a run has
more than one (none did when this was written: no spread is drawn).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from plots import style

WORKLOAD = "fork-4k"
VARIANTS = {"kpkeys-base": "kpkeys-base (control)",
            "kpkeys-pgtables": "unbatched",
            "kpkeys-pgtables-batched": "batched"}
BASELINE = "kpkeys-base"
PREFIX = "sysreg.por."


def label_and_order(params: str) -> tuple[str, int]:
    """The x-axis label of one setting and its place (cheapest first; the
    drain last, as its cost is not a number of cycles)."""
    s = style.sweep_settings(params, PREFIX)
    if s.get("write_serialize") != "false":
        return "drain\n(default)", 10**6
    latency = int(s.get("write_latency", "0"))
    return ("relaxed" if latency == 0 else f"relaxed\n+{latency}"), latency


def samples(frame: pd.DataFrame, metric: str, variant: str, params: str) -> list[float]:
    rows = frame[(frame["metric"] == metric) & (frame["variant"] == variant)
                 & (frame["params"] == params) & (frame["workload"] == WORKLOAD)]
    return list(rows["value"].astype(float))


def microseconds(spread: tuple[float, float, float, float]
                 ) -> tuple[float, float, float, float]:
    """A median and its interval in ns as µs (the coverage unchanged)."""
    median, low, high, coverage = spread
    return median / 1000, low / 1000, high / 1000, coverage


def main(folders: style.Folders) -> None:
    frame = folders.load("c2-kpkeys-por")
    settings = sorted(set(frame["params"]), key=lambda p: label_and_order(p)[1])
    labels = [label_and_order(p)[0] for p in settings]
    us = {(v, p): microseconds(style.median_interval(samples(frame, "ns_per_iteration", v, p)))
          for v in VARIANTS for p in settings}
    cycles = {(v, p): style.median_interval(samples(frame, "cycles_per_iteration", v, p))[0]
              for v in VARIANTS for p in settings}

    timed = [p for p in settings if label_and_order(p)[1] < 10**6]
    latencies = [label_and_order(p)[1] for p in timed]
    slope = {v: float(np.polyfit(latencies, [cycles[(v, p)] for p in timed], 1)[0])
             if len(timed) > 1 else float("nan") for v in VARIANTS}

    lines = ["Neoverse-V1 model with FEAT_S1POE (a what-if: V1 has none), `pgtable_bench fork "
             "4k 32 4`, per fork: µs, cycles, and the arm's time over kpkeys-base's with "
             "the same POR_EL1 timing; the write's timing from cheapest to dearest.", "",
             "| POR_EL1 write | kpkeys-base µs | unbatched µs | batched µs | unbatched vs base "
             "| batched vs base | base cycles | unbatched cycles | batched cycles |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for p in settings:
        base = us[(BASELINE, p)][0]
        lines.append(
            f"| {label_and_order(p)[0].replace(chr(10), ' ')} "
            + "".join(f"| {us[(v, p)][0]:.1f} " for v in VARIANTS)
            + "".join(f"| {100 * (us[(v, p)][0] / base - 1):+.1f}% "
                      for v in VARIANTS if v != BASELINE)
            + "".join(f"| {cycles[(v, p)]:,.0f} " for v in VARIANTS) + "|")
    lines += ["", "Added cycles per fork for each extra cycle of POR_EL1 write latency "
              "(least-squares slope over the relaxed settings): "
              + ", ".join(f"{VARIANTS[v]} {slope[v]:,.0f}" for v in VARIANTS) + "."]
    table = "\n".join(lines) + "\n"

    fig, ax = style.figure(height=2.4)
    style.setting_lines(ax, labels, {label: [us[(variant, p)] for p in settings]
                                     for variant, label in VARIANTS.items()})
    style.sweep_labels(ax, "POR_EL1 write (MSR): extra cycles, or a full drain",
                       "µs per fork (32 MiB, 4 KiB folios)",
                       "Neoverse-V1 + POE model: POR_EL1 write cost", headroom=0.2)
    style.add_note(fig, "gem5 simulated time, one run per point (no layout samples, no spread "
                   "drawn); no core with POE has shipped, so the default is an assumption",
                   frame, below=-0.14)
    folders.publish(fig, "c2_kpkeys_por", table)


if __name__ == "__main__":
    style.run_alone(main)
