"""Figure and table: claim C3 sensitivity, ns per getppid() on the Cortex-A15
model as software PAN's DACR write costs more or less.

Reads results/c3-arm32-dacr.csv; writes plots/out/c3_dacr.{pdf,png,md}. The
x axis orders the DACR write's timing from cheapest to dearest: relaxed (no
serialization), executed at the ROB head only, then gem5's full drain (the
model's default, no public A15 figure) plus 0 to 50 extra cycles. PAN off
writes no DACR in its loop and is the control. The table's slope (added
cycles per call for each extra cycle of write latency) counts the DACR writes
on the loop's path. Error bars: the median's interval over the guest runs of
one simulation.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from plots import style

VARIANTS = {"arm32-pan-off": "PAN off (control)", "arm32-sw-pan": "software PAN"}
OFF, ON = VARIANTS
PREFIX = "sysreg.dacr."


def label_and_order(params: str) -> tuple[str, int]:
    """The x-axis label of one setting and its place (cheapest first)."""
    s = style.sweep_settings(params, PREFIX)
    if s.get("write_nonspeculative") == "false":
        return "relaxed", -2
    if s.get("write_serialize") == "false":
        return "ROB head", -1
    latency = int(s.get("write_latency", "0"))
    return ("drain\n(default)" if latency == 0 else f"drain\n+{latency}"), latency


def per_run(frame: pd.DataFrame, metric: str, variant: str, params: str) -> list[float]:
    rows = frame[(frame["metric"] == metric) & (frame["variant"] == variant)
                 & (frame["params"] == params)].sort_values("sample")
    return list(rows["value"].astype(float))


def main(folders: style.Folders) -> None:
    frame = folders.load("c3-arm32-dacr")
    settings = sorted(set(frame["params"]), key=lambda p: label_and_order(p)[1])
    labels = [label_and_order(p)[0] for p in settings]
    ns = {(v, p): style.median_interval(per_run(frame, "ns_per_iteration", v, p))
          for v in VARIANTS for p in settings}
    cycles = {(v, p): style.median_interval(per_run(frame, "cycles_per_iteration", v, p))[0]
              for v in VARIANTS for p in settings}
    runs = len(per_run(frame, "ns_per_iteration", ON, settings[0]))

    drained = [p for p in settings if label_and_order(p)[1] >= 0]
    latencies = [label_and_order(p)[1] for p in drained]
    slope = {v: float(np.polyfit(latencies, [cycles[(v, p)] for p in drained], 1)[0])
             for v in VARIANTS} if len(drained) > 1 else {v: float("nan") for v in VARIANTS}
    lines = [f"Cortex-A15 O3 model, per `getppid()` call: median over {runs} runs in one "
             "simulation (ns with its interval); the DACR write's timing from cheapest to "
             "dearest.", "",
             "| DACR write | PAN off ns | software PAN ns | PAN off cycles | software PAN "
             "cycles | added cycles | software PAN / PAN off |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for p in settings:
        off, on = ns[(OFF, p)], ns[(ON, p)]
        lines.append(
            f"| {label_and_order(p)[0].replace(chr(10), ' ')} "
            f"| {off[0]:.1f} [{off[1]:.1f}, {off[2]:.1f}] "
            f"| {on[0]:.1f} [{on[1]:.1f}, {on[2]:.1f}] "
            f"| {cycles[(OFF, p)]:.0f} | {cycles[(ON, p)]:.0f} "
            f"| {cycles[(ON, p)] - cycles[(OFF, p)]:.0f} | {on[0] / off[0]:.2f}× |")
    lines += ["", "Added cycles per call for each extra cycle of DACR write latency "
              f"(least-squares slope over the drained settings): software PAN "
              f"{slope[ON]:.2f}, PAN off {slope[OFF]:.2f}."]
    table = "\n".join(lines) + "\n"

    fig, ax = style.figure(height=2.4)
    style.setting_lines(ax, labels, {f"gem5 A15, {label}": [ns[(variant, p)] for p in settings]
                                     for variant, label in VARIANTS.items()}, first_colour=1)
    style.sweep_labels(ax, "DACR write (MCR): how it serializes, extra cycles",
                       "ns per getppid()", "Cortex-A15 model: sensitivity to the DACR write",
                       headroom=0.25)
    style.add_note(fig, "gem5 simulated time; no public A15 cost of an MCR to DACR exists, so "
                   "the model's default is gem5's drain with no extra latency",
                   frame, below=-0.14)
    folders.publish(fig, "c3_dacr", table)


if __name__ == "__main__":
    style.run_alone(main)
