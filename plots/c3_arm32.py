"""Figure and table: claim C3 on gem5, software PAN's cost per getppid() on 32-bit Arm.

Reads results/c3-arm32-pan.csv (gem5, Cortex-A15 O3 model) and
results/c3-arm32-pan-qemu.csv (QEMU vexpress-a15, host times); writes
plots/out/c3_arm32.{pdf,png,md} and the QEMU runs' own table,
plots/out/c3_arm32_qemu.md. gem5's nanoseconds and QEMU's microseconds
differ by an order of magnitude and mean different things (a core model's
time against an emulator's host time), so each has its own panel; what they
share is the ratio software PAN / PAN off, the third panel, beside the
published QEMU numbers (about 3.7 and 14.9 µs). Error bars: the median's
interval over the repeated runs (5 guest runs per gem5 simulation, 15 QEMU
runs in 5 boots).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from plots import style

VARIANTS = {"arm32-pan-off": "PAN off", "arm32-sw-pan": "software PAN"}
OFF, ON = VARIANTS
# Per-call counters for the table: (metric, column heading, divide by calls).
COUNTERS = (("cycles_per_iteration", "cycles", False),
            ("instructions_per_iteration", "instructions", False),
            ("serializing_instructions", "serializing instructions", True),
            ("serialize_stall_cycles", "rename serialize-stall cycles", True),
            ("branch_mispredicts", "mispredicts", True))

Spread = tuple[float, float, float, float]


def calls_per_run(frame: pd.DataFrame) -> int:
    """getppid() calls in one run (one statistics dump): simulated ns over ns per call."""
    sim = frame[frame["metric"] == "sim_ns"]["value"].astype(float).iloc[0]
    per_call = frame[frame["metric"] == "ns_per_iteration"]["value"].astype(float).iloc[0]
    return round(sim / per_call)


def gem5_values(frame: pd.DataFrame, metric: str, variant: str, cores: int,
                per_call: bool = False) -> list[float]:
    """One value per guest run (sample) of the run with these coordinates;
    ``per_call``: a whole-run counter divided by the run's calls."""
    rows = frame[(frame["metric"] == metric) & (frame["variant"] == variant)
                 & (frame["cores"].astype(int) == cores)].sort_values("sample")
    values = list(rows["value"].astype(float))
    return [v / calls_per_run(frame) for v in values] if per_call else values


def ratio_of_medians(off: list[float], on: list[float]) -> float:
    return style.median_interval(on)[0] / style.median_interval(off)[0]


def signed(value: float, digits: int = 1) -> str:
    """``+1.0``, ``-1.0``, and ``0.0`` for what rounds to zero (never ``-0.0``)."""
    text = f"{value:+.{digits}f}"
    return text[1:] if float(text) == 0 else text


def spread_text(spread: Spread, digits: int) -> str:
    median, low, high, _ = spread
    return f"{median:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def qemu_table(qemu: pd.DataFrame, published: dict[str, float]) -> str:
    """Per kernel: the published time, the median and range over every run,
    and each boot's median (the host's load drifted between boots)."""
    timed = qemu[qemu["metric"] == "getppid_us"].astype({"value": float, "boot": int})
    runs, boots = len(timed) // len(VARIANTS), timed["boot"].nunique()
    lines = [f"| kernel | published (QEMU, 2025) | measured: median µs per `getppid()` [range], "
             f"{runs} runs in {boots} boots | per-boot medians |", "|---|---:|---:|---|"]
    per_boot: dict[str, list[float]] = {}
    medians: dict[str, float] = {}
    for variant, key, config in ((OFF, "pan_off_us", "n"), (ON, "sw_pan_us", "y")):
        rows = timed[timed["variant"] == variant]
        medians[variant] = float(rows["value"].median())
        low, high = float(rows["value"].min()), float(rows["value"].max())
        per_boot[variant] = [float(rows[rows["boot"] == b]["value"].median())
                             for b in sorted(rows["boot"].unique())]
        lines.append(f"| `{variant}` (`CONFIG_ARM_PAN={config}`) | about {published[key]} | "
                     f"{medians[variant]:.2f} [{low:.2f}, {high:.2f}] | "
                     + ", ".join(f"{m:.2f}" for m in per_boot[variant]) + " |")
    ratios = [on / off for off, on in zip(per_boot[OFF], per_boot[ON])]
    lines.append(f"| software PAN on / off | about "
                 f"{published['sw_pan_us'] / published['pan_off_us']:.0f}× | "
                 f"{medians[ON] / medians[OFF]:.1f}× (medians) | "
                 f"{min(ratios):.1f}× to {max(ratios):.1f}× per boot |")
    return "\n".join(lines) + "\n"


def main(folders: style.Folders) -> None:
    gem5 = folders.load("c3-arm32-pan")
    qemu = folders.load("c3-arm32-pan-qemu")
    published = style.published()["c3"]
    folders.save_table("c3_arm32_qemu", qemu_table(qemu, published))
    core_counts = sorted({int(c) for c in gem5["cores"]})
    runs = len(gem5_values(gem5, "ns_per_iteration", OFF, core_counts[0]))
    qemu_us = {v: list(qemu[(qemu["variant"] == v) & (qemu["metric"] == "getppid_us")]
                       ["value"].astype(float)) for v in VARIANTS}
    ns = {(v, c): gem5_values(gem5, "ns_per_iteration", v, c)
          for v in VARIANTS for c in core_counts}

    lines = [f"Cortex-A15 O3 model (gem5), per `getppid()` call: median [range] over "
             f"{runs} runs of {calls_per_run(gem5)} calls in one simulation; counters per "
             "call, every core's (with two cores the loop runs on one, the other idles).",
             "",
             "| kernel | cores | ns | " + " | ".join(h for _, h, _ in COUNTERS) + " |",
             "|---|---:|---:|" + "---:|" * len(COUNTERS)]
    for cores in core_counts:
        for variant in VARIANTS:
            cells = [spread_text(style.median_interval(ns[(variant, cores)]), 2)]
            for metric, _, per_call in COUNTERS:
                values = gem5_values(gem5, metric, variant, cores, per_call)
                cells.append(f"{style.median_interval(values)[0]:.1f}")
            lines.append(f"| `{variant}` | {cores} | " + " | ".join(cells) + " |")
        diff = [signed(style.median_interval(ns[(ON, cores)])[0]
                       - style.median_interval(ns[(OFF, cores)])[0], 2)]
        for metric, _, per_call in COUNTERS:
            on = style.median_interval(gem5_values(gem5, metric, ON, cores, per_call))[0]
            off = style.median_interval(gem5_values(gem5, metric, OFF, cores, per_call))[0]
            diff.append(signed(on - off))
        lines.append(f"| software PAN − PAN off | {cores} | " + " | ".join(diff) + " |")
    lines += ["", "Software PAN on / off, ratio of the medians:", "",
              "| | PAN off | software PAN | on / off | added per call |",
              "|---|---:|---:|---:|---:|",
              f"| published (QEMU vexpress-a15, 2 CPUs, 2025) | about {published['pan_off_us']}"
              f" µs | about {published['sw_pan_us']} µs | about "
              f"{published['sw_pan_us'] / published['pan_off_us']:.0f}× | about "
              f"{published['sw_pan_us'] - published['pan_off_us']:.1f} µs |"]
    off_q, on_q = (style.median_interval(qemu_us[v])[0] for v in VARIANTS)
    lines.append(f"| QEMU here (vexpress-a15, 2 CPUs; {len(qemu_us[OFF])} runs) | {off_q:.2f} µs | "
                 f"{on_q:.2f} µs | {on_q / off_q:.1f}× | {on_q - off_q:.1f} µs |")
    for cores in core_counts:
        off_g = style.median_interval(ns[(OFF, cores)])[0]
        on_g = style.median_interval(ns[(ON, cores)])[0]
        lines.append(f"| gem5 Cortex-A15 model, {cores} core{'s' if cores > 1 else ''} | "
                     f"{off_g:.1f} ns | {on_g:.1f} ns | {on_g / off_g:.2f}× | "
                     f"{on_g - off_g:.1f} ns |")
    table = "\n".join(lines) + "\n"

    style.apply()
    fig, axes = style.plt.subplots(1, 3, figsize=(style.FULL_WIDTH_IN, 2.3),
                                   gridspec_kw={"width_ratios": [1.2, 1, 1.3]})
    width = 0.38
    # (a) gem5: ns per call, by core count.
    axis = axes[0]
    x = np.arange(len(core_counts))
    for i, (variant, label) in enumerate(VARIANTS.items()):
        heights, errors = style.error_bars(
            [style.median_interval(ns[(variant, c)]) for c in core_counts])
        bars = axis.bar(x + (i - 0.5) * width, heights, width, yerr=errors, capsize=2,
                        label=label, color=style.PALETTE[i + 1], hatch=style.HATCHES[i + 1],
                        edgecolor="black", linewidth=0.5)
        axis.bar_label(bars, fmt="%.0f", fontsize=6, padding=1)
    axis.set_xticks(x, [f"{c} core{'s' if c > 1 else ''}" for c in core_counts])
    axis.set_ylabel("ns per getppid()")
    axis.set_title("gem5, Cortex-A15 model", loc="left")
    axis.set_ylim(0, axis.get_ylim()[1] * 1.15)
    # (b) QEMU: µs per call, measured here and published.
    axis = axes[1]
    for i, (variant, label) in enumerate(VARIANTS.items()):
        heights, errors = style.error_bars([style.median_interval(qemu_us[variant])])
        bars = axis.bar([(i - 0.5) * width], heights, width, yerr=errors, capsize=2,
                        color=style.PALETTE[i + 1], hatch=style.HATCHES[i + 1],
                        edgecolor="black", linewidth=0.5)
        axis.bar_label(bars, fmt="%.1f", fontsize=6, padding=1)
        # Published: two approximate numbers, no spread given.
        key = "pan_off_us" if variant == OFF else "sw_pan_us"
        bars = axis.bar([1 + (i - 0.5) * width], [published[key]], width,
                        color=style.PALETTE[i + 1], hatch=style.HATCHES[i + 1],
                        edgecolor="black", linewidth=0.5)
        axis.bar_label(bars, fmt="%.1f", fontsize=6, padding=1)
    axis.set_xticks(np.arange(2), [f"here\n({len(qemu_us[OFF])} runs)",
                                   "published\n(\"about\")"])
    axis.set_ylabel("µs per getppid() (host time)")
    axis.set_title("QEMU vexpress-a15", loc="left")
    axis.set_ylim(0, axis.get_ylim()[1] * 1.15)
    # (c) the comparison: software PAN / PAN off.
    axis = axes[2]
    labels = [*(f"gem5\n{c} core{'s' if c > 1 else ''}" for c in core_counts), "QEMU\nhere",
              "QEMU\npublished"]
    ratios = [*(ratio_of_medians(ns[(OFF, c)], ns[(ON, c)]) for c in core_counts),
              ratio_of_medians(qemu_us[OFF], qemu_us[ON]),
              published["sw_pan_us"] / published["pan_off_us"]]
    colours = [style.PALETTE[3]] * len(core_counts) + [style.HARDWARE_STYLES[1][0],
                                                       style.HARDWARE_COLOUR]
    hatches = [style.HATCHES[3]] * len(core_counts) + [style.HARDWARE_STYLES[1][1],
                                                       style.HARDWARE_HATCH]
    bars = axis.bar(np.arange(len(ratios)), ratios, 0.6, color=colours, hatch=hatches,
                    edgecolor="black", linewidth=0.5)
    axis.bar_label(bars, fmt="%.2f×", fontsize=6, padding=1)
    axis.axhline(1.0, color="black", linewidth=0.6)
    axis.set_xticks(np.arange(len(ratios)), labels, fontsize=6)
    axis.set_yscale("log")
    axis.set_yticks([1, 2, 4, 10], ["1", "2", "4", "10"])
    axis.minorticks_off()
    axis.set_ylabel("software PAN / PAN off (×)")
    axis.set_title("ratio of the medians", loc="left")
    axis.set_ylim(0.8, max(r for r in ratios if not math.isnan(r)) * 2)
    style.legend_on_top(fig, axes[0], 2)
    fig.subplots_adjust(wspace=0.6, top=0.8)
    style.add_note(fig, "gem5: simulated time of a Cortex-A15 O3 model, gem5's generic AArch32 "
                   "MCR/ISB timing; QEMU: host time (another host and QEMU release than "
                   "published); error bars: the median's interval over the runs",
                   pd.concat([gem5, qemu]), below=-0.12)
    folders.publish(fig, "c3_arm32", table)


if __name__ == "__main__":
    style.run_alone(main)
