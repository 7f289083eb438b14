"""Figure and table: claim C4, what toggling user access costs per system call.

Reads results/c4-uaccess.csv; writes plots/out/c4_uaccess.{pdf,png,md}. For each
core model and workload, the toggle cost of each variant: its time per
operation minus baseline's (hardware PAN, LDTR/STTR, no toggles), paired by
layout sample, with the median's interval. Beside it: how much per-access
toggling costs over batched toggling (published: about 5x on x86 SMAP, 0.7% ->
0.17% of a make's cycles) and what an ISB after each PSTATE.PAN write adds
(published for arm64: under 1% in basic tests).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from plots import style

BASELINE = "baseline"
VARIANTS = {
    "swpan-batched": "SW PAN, batched",
    "swpan-per-access": "SW PAN, per access",
    "pan-batched": "PAN toggle, batched",
    "pan-per-access": "PAN toggle, per access",
    "pan-batched-isb": "PAN toggle + ISB, batched",
    "pan-per-access-isb": "PAN toggle + ISB, per access",
}
# (per-access variant, batched variant, label) for the batching ratio.
RATIOS = (("swpan-per-access", "swpan-batched", "SW PAN"),
          ("pan-per-access", "pan-batched", "PAN toggle"))
# (with ISB, without) for the ISB's share of the whole call.
ISB_PAIRS = (("pan-batched-isb", "pan-batched", "batched"),
             ("pan-per-access-isb", "pan-per-access", "per access"))
WORKLOADS = {
    "pathwalk": "path walk (newfstatat)",
    "longpath": "4000-byte path (faccessat)",
    "getdents": "getdents64 (per entry)",
    "getppid": "getppid (no user access)",
}
CORES = {"cortex-a76": "Cortex-A76", "neoverse-n1": "Neoverse-N1"}

Samples = dict[int, float]
Key = tuple[str, str, str]  # core, variant, workload


def per_operation(frame: pd.DataFrame, metric: str) -> dict[Key, Samples]:
    """{(core, variant, workload): {layout sample: metric}}."""
    rows = frame[frame["metric"] == metric]
    found: dict[Key, Samples] = {}
    for r in rows.itertuples():
        sample = int(r.sample) if str(r.sample) else 0
        found.setdefault((r.core, r.variant, r.workload), {})[sample] = float(r.value)
    return found


def paired(values: dict[Key, Samples], core: str, variant: str, workload: str,
           combine) -> tuple[float, float, float, float]:
    """Median and interval over layout samples of combine(variant, baseline)."""
    arm = values.get((core, variant, workload), {})
    base = values.get((core, BASELINE, workload), {})
    common = sorted(set(arm) & set(base))
    if not common:
        return (math.nan,) * 4
    return style.median_interval([combine(arm[k], base[k]) for k in common])


def toggle_cost(values: dict[Key, Samples], core: str, variant: str,
                workload: str) -> tuple[float, float, float, float]:
    return paired(values, core, variant, workload, lambda arm, base: arm - base)


def batching_ratio(values: dict[Key, Samples], core: str, per_access: str, batched: str,
                   workload: str) -> tuple[float, float, float, float]:
    """Per-access toggle cost over batched toggle cost, per layout sample."""
    keys = [(core, v, workload) for v in (per_access, batched, BASELINE)]
    common = sorted(set.intersection(*(set(values.get(k, {})) for k in keys)))
    ratios = []
    for k in common:
        slow, fast, base = (values[key][k] for key in keys)
        if fast - base > 0:
            ratios.append((slow - base) / (fast - base))
    return style.median_interval(ratios) if ratios else (math.nan,) * 4


def isb_share(values: dict[Key, Samples], core: str, with_isb: str, without: str,
              workload: str) -> tuple[float, float, float, float]:
    """How much longer a call is with an ISB after every PAN write (%)."""
    a, b = values.get((core, with_isb, workload), {}), values.get((core, without, workload), {})
    common = sorted(set(a) & set(b))
    if not common:
        return (math.nan,) * 4
    return style.median_interval([100.0 * (a[k] - b[k]) / b[k] for k in common])


def fmt(spread: tuple[float, float, float, float], digits: int = 1, unit: str = "") -> str:
    median, low, high, _ = spread
    if math.isnan(median):
        return "—"
    interval = f" [{low:+.{digits}f}, {high:+.{digits}f}]" if high > low else ""
    return f"{median:+.{digits}f}{unit}{interval}"


def table(ns: dict[Key, Samples], insts: dict[Key, Samples], published: dict) -> str:
    cores = [c for c in CORES if any(k[0] == c for k in ns)]
    lines = ["Toggle cost: time per operation minus baseline's (ns; median [interval] over "
             "layout samples), and the extra instructions per operation.", "",
             "| core | workload | baseline ns/op | "
             + " | ".join(VARIANTS.values()) + " |",
             "|---|---|---:|" + "---:|" * len(VARIANTS)]
    for core in cores:
        for workload, label in WORKLOADS.items():
            base = ns.get((core, BASELINE, workload), {})
            if not base:
                continue
            cells = []
            for variant in VARIANTS:
                extra_insts = toggle_cost(insts, core, variant, workload)[0]
                cells.append(f"{fmt(toggle_cost(ns, core, variant, workload))} "
                             f"({extra_insts:+.0f} inst)" if not math.isnan(extra_insts)
                             else "—")
            median_base = style.median_interval(list(base.values()))[0]
            lines.append(f"| {CORES[core]} | {label} | {median_base:.0f} | "
                         + " | ".join(cells) + " |")
    lines += ["", f"Per-access over batched toggle cost (published: about "
              f"{published['batching_ratio_claimed']:g}x, {published['per_access_pct']:g}% → "
              f"{published['batched_pct']:g}% of cycles on x86 SMAP, a ratio of "
              f"{published['per_access_pct'] / published['batched_pct']:.1f}); "
              f"time added by an ISB after every PAN write (published for arm64: under "
              f"{published['isb_overhead_below_pct']:g}% in basic tests).", "",
              "| core | workload | " + " | ".join(f"{label}: per access / batched"
                                                  for _, _, label in RATIOS)
              + " | " + " | ".join(f"ISB, {label}" for _, _, label in ISB_PAIRS) + " |",
              "|---|---|" + "---:|" * (len(RATIOS) + len(ISB_PAIRS))]
    for core in cores:
        for workload, label in WORKLOADS.items():
            if workload == "getppid" or not ns.get((core, BASELINE, workload)):
                continue
            ratios = [batching_ratio(ns, core, slow, fast, workload) for slow, fast, _ in RATIOS]
            isbs = [isb_share(ns, core, a, b, workload) for a, b, _ in ISB_PAIRS]
            lines.append(f"| {CORES[core]} | {label} | "
                         + " | ".join(fmt(r, 2, "x").lstrip("+") for r in ratios) + " | "
                         + " | ".join(fmt(i, 1, "%") for i in isbs) + " |")
    samples = max((len(v) for v in ns.values()), default=0)
    if samples > 1:
        _, _, _, coverage = style.median_interval([0.0] * samples)
        lines += ["", f"Medians of {samples} layout samples per run (each variant against "
                  f"the same sample's baseline); intervals are order-statistic intervals of "
                  f"the median, {coverage:.0%} coverage."]
    return "\n".join(lines) + "\n"


def main(folders: style.Folders) -> None:
    frame = folders.load("c4-uaccess")
    published = style.published()["c4"]
    ns = per_operation(frame, "ns_per_iteration")
    insts = per_operation(frame, "instructions_per_iteration")
    cores = [c for c in CORES if any(k[0] == c for k in ns)]
    style.require_cells(ns, ((c, v, w) for c in cores for v in (BASELINE, *VARIANTS)
                             for w in WORKLOADS))

    style.apply()
    fig, axes = style.plt.subplots(1, len(cores) + 1, figsize=(style.FULL_WIDTH_IN, 2.6),
                                   gridspec_kw={"width_ratios": [3] * len(cores) + [2]})
    x = np.arange(len(WORKLOADS))
    width = 0.8 / len(VARIANTS)
    for axis, core in zip(axes, cores):
        for i, (variant, label) in enumerate(VARIANTS.items()):
            heights, errors = style.error_bars([toggle_cost(ns, core, variant, w)
                                                for w in WORKLOADS])
            axis.bar(x - 0.4 + (i + 0.5) * width, heights, width, label=label,
                     color=style.PALETTE[i + 1], hatch=style.HATCHES[i % len(style.HATCHES)],
                     edgecolor="black", linewidth=0.4, yerr=errors,
                     error_kw={"elinewidth": 0.6, "capsize": 1.2})
        axis.set_yscale("symlog", linthresh=10)
        axis.axhline(0, color="black", linewidth=0.5)
        axis.set_xticks(x, [w for w in WORKLOADS], fontsize=6)
        axis.set_title(f"({'abc'[cores.index(core)]}) {CORES[core]} model", loc="left")
    axes[0].set_ylabel("toggle cost over baseline (ns per op)")

    ratio_axis = axes[-1]
    ratio_workloads = [w for w in WORKLOADS if w != "getppid"]
    xr = np.arange(len(ratio_workloads))
    series = [(core, slow, fast, label) for core in cores for slow, fast, label in RATIOS]
    rw = 0.8 / len(series)
    for i, (core, slow, fast, label) in enumerate(series):
        heights, errors = style.error_bars([batching_ratio(ns, core, slow, fast, w)
                                            for w in ratio_workloads])
        ratio_axis.bar(xr - 0.4 + (i + 0.5) * rw, heights, rw, yerr=errors,
                       label=f"{CORES[core]}: {label}", color=style.PALETTE[i + 1],
                       hatch=style.HATCHES[i], edgecolor="black", linewidth=0.4,
                       error_kw={"elinewidth": 0.6, "capsize": 1.2})
    claimed = published["per_access_pct"] / published["batched_pct"]
    ratio_axis.axhline(claimed, color=style.HARDWARE_COLOUR, linestyle="--", linewidth=1.0,
                       label=f"published, x86 SMAP make ({claimed:.1f}x)")
    ratio_axis.set_yscale("log")
    # Headroom above the tallest bar for the legend.
    ratio_axis.set_ylim(1, 1e5)
    ratio_axis.set_xticks(xr, ["walk", "long", "dents"], fontsize=6)
    ratio_axis.set_ylabel("per-access / batched toggle cost (x)")
    ratio_axis.set_title(f"({'abc'[len(cores)]}) batching", loc="left")
    ratio_axis.legend(loc="upper left", frameon=False, fontsize=5, ncols=1)
    style.legend_on_top(fig, axes[0], columns=3)
    fig.subplots_adjust(top=0.72, wspace=0.35)
    samples = max(len(v) for v in ns.values())
    style.add_note(fig, f"Median over {samples} physical-layout samples, each variant against "
                   "the same sample's baseline (hardware PAN, no toggles); error bars the "
                   "median's interval. Symmetric-log axes in (a, b).", frame, below=-0.10)
    folders.publish(fig, "c4_uaccess", table(ns, insts, published))


if __name__ == "__main__":
    style.run_alone(main)
