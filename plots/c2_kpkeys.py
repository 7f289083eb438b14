"""Figure: what protecting page-table pages with kpkeys costs (claim C2).

Reads results/c2-kpkeys.csv (4 KiB folios, every arm) and
results/c2-kpkeys-64k.csv (64 KiB folios, every arm; each workload's arms are
compared with its own baseline runs); writes
plots/out/c2_kpkeys.{pdf,png,md}. Bars: per workload, each arm's time per
operation relative to kpkeys-base on the same CPU (the real-POE arms against
the baseline on the what-if V1 with FEAT_S1POE, the mock arms against it on V1
without), unbatched and batched, real and mock, with the interval for the
median its layout samples give (with three, their range: 75% coverage). The
published work gives its shape only (hundreds of percent for an unbatched
fork, a few percent batched), no numbers to draw beside these;
the figure says so. The table adds the instructions and the
serialising-instruction count per operation that explain the bars.
"""

from __future__ import annotations

import math

import pandas as pd

from plots import style

BASELINE = "kpkeys-base"
# (variant, label, CPU feature set of the variant and of its baseline)
ARMS = (("kpkeys-pgtables", "unbatched, POE", "pac+pan+poe"),
        ("kpkeys-pgtables-batched", "batched, POE", "pac+pan+poe"),
        ("kpkeys-pgtables-mock", "unbatched, mock", "pac+pan"),
        ("kpkeys-pgtables-batched-mock", "batched, mock", "pac+pan"))
WORKLOADS = (("fork-4k", "fork\n4 KiB folios"), ("munmap-4k", "munmap\n4 KiB folios"),
             ("fork-64k", "fork\n64 KiB folios"), ("munmap-64k", "munmap\n64 KiB folios"))
RESULTS = ("c2-kpkeys", "c2-kpkeys-64k")
COUNTERS = (("instructions_per_iteration", "instructions"),
            ("serializing_instructions", "serialising instructions"))


def by_sample(frame: pd.DataFrame, metric: str, variant: str, features: str,
              workload: str) -> dict[str, float]:
    rows = frame[(frame["metric"] == metric) & (frame["variant"] == variant)
                 & (frame["features"] == features) & (frame["workload"] == workload)]
    return {str(s): float(v) for s, v in zip(rows["sample"], rows["value"])}


def samples(frame: pd.DataFrame, metric: str, variant: str, features: str,
            workload: str) -> list[float]:
    return list(by_sample(frame, metric, variant, features, workload).values())


def overhead(frame: pd.DataFrame, variant: str, features: str, workload: str
             ) -> tuple[float, float, float, float]:
    """Median, interval and coverage of the arm's ns per operation over the
    baseline's median, as percent more."""
    base = samples(frame, "ns_per_iteration", BASELINE, features, workload)
    arm = samples(frame, "ns_per_iteration", variant, features, workload)
    if not base or not arm:
        return math.nan, math.nan, math.nan, 0.0
    reference = style.median_interval(base)[0]
    median, low, high, coverage = style.median_interval(arm)
    return (100 * (median / reference - 1), 100 * (low / reference - 1),
            100 * (high / reference - 1), coverage)


def per_operation(frame: pd.DataFrame, metric: str, variant: str, features: str,
                  workload: str) -> float:
    values = samples(frame, metric, variant, features, workload)
    if not values:
        return math.nan
    if metric.endswith("_per_iteration"):
        return style.median_interval(values)[0]
    counter = by_sample(frame, metric, variant, features, workload)
    ops = by_sample(frame, "ns_per_iteration", variant, features, workload)
    sim = by_sample(frame, "sim_ns", variant, features, workload)
    # A whole-region counter: per operation = counter / (region ns / ns per op),
    # each sample's counter with that sample's times.
    return style.median_interval([counter[s] * ops[s] / sim[s] for s in counter])[0]


def table(frame: pd.DataFrame) -> str:
    lines = ["| workload | kernel | CPU | ns per operation | vs kpkeys-base | "
             + " | ".join(f"{label} per operation" for _, label in COUNTERS) + " |",
             "|---|---|---|---:|---:|" + "---:|" * len(COUNTERS)]
    rows = [(BASELINE, "baseline", "pac+pan+poe"), (BASELINE, "baseline", "pac+pan")]
    rows += [(variant, label, features) for variant, label, features in ARMS]
    for workload, title in WORKLOADS:
        for variant, label, features in rows:
            ns = samples(frame, "ns_per_iteration", variant, features, workload)
            if not ns:
                continue
            median, low, high, coverage = style.median_interval(ns)
            spread = (f" ({low:,.0f}-{high:,.0f}, {100 * coverage:.0f}%)"
                      if len(ns) > 1 else "")
            rel = ("" if variant == BASELINE
                   else f"{overhead(frame, variant, features, workload)[0]:+.1f}%")
            cpu = "V1 + POE" if "poe" in features else "V1"
            counters = " | ".join(
                f"{per_operation(frame, metric, variant, features, workload):,.0f}"
                for metric, _ in COUNTERS)
            lines.append(f"| {title.replace(chr(10), ', ')} | {variant} ({label}) | {cpu} | "
                         f"{median:,.0f}{spread} | {rel} | {counters} |")
    return "\n".join(lines) + "\n"


def main(folders: style.Folders) -> None:
    frame = pd.concat([folders.load(name) for name in RESULTS], ignore_index=True)
    fig, ax = style.figure(height=2.4)
    bars = {label: style.error_bars([overhead(frame, variant, features, w)
                                     for w, _ in WORKLOADS])
            for variant, label, features in ARMS}
    style.grouped_bars(ax, [title for _, title in WORKLOADS],
                       {label: heights for label, (heights, _) in bars.items()},
                       {label: yerr for label, (_, yerr) in bars.items()},
                       tick_fontsize=6)
    ax.axhline(0, color="black", linewidth=0.5)
    ax.set_ylabel("time per operation vs.\nkpkeys-base (% more)")
    fig.subplots_adjust(top=0.78)
    style.legend_on_top(fig, ax, 2)
    style.add_note(fig, "Neoverse-V1 model; POE arms on a what-if V1 with FEAT_S1POE, mock\n"
                   "arms (CONTEXTIDR_EL1 for POR_EL1) on V1 without, each against\n"
                   "kpkeys-base on the same CPU; bars: medians of three layout samples,\n"
                   "whiskers their range. The published work gives the shape only: no\n"
                   "hardware numbers to draw beside these.", frame, below=-0.2)
    folders.publish(fig, "c2_kpkeys", table(frame))


if __name__ == "__main__":
    style.run_alone(main)
