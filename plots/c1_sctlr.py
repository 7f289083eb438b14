"""Figure and table: claim C1, SCTLR_EL1 switching on kernel entry/exit.

Reads results/c1-sctlr.csv; writes plots/out/c1_sctlr.{pdf,png} and
plots/out/c1_sctlr.md (the README's claims table). Left: ns per invalid
syscall for each kernel variant, simulated cores beside the published
Pixel 4 (Cortex-A76) and DragonBoard 845c (Cortex-A75). Right: each
variant's overhead over C1's baseline (pointer authentication without
SCTLR_EL1 switching), simulated and published.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from plots import style

# Kernel variant -> the published column it reproduces (None: not published).
VARIANTS = {
    "pac-off": (None, "no PAC"),
    "sctlr-none": ("baseline", "baseline\n(no switch)"),
    "baseline": ("cond_msr_ldr", "cond. MSR\n(LDR)\nmainline"),
    "sctlr-uncond": ("uncond_msr", "uncond.\nMSR"),
    "sctlr-cond-mrs": ("cond_msr_mrs", "cond. MSR\n(MRS)"),
}
OVERHEAD_VARIANTS = ("baseline", "sctlr-uncond", "sctlr-cond-mrs")
BASELINE = "sctlr-none"
# Simulated core -> the published platform it stands beside.
CORES = {"cortex-a76": "pixel4", "cortex-a75": "db845c", "neoverse-v1": None}
CORE_LABELS = {"cortex-a76": "gem5 Cortex-A76", "cortex-a75": "gem5 Cortex-A75",
               "neoverse-v1": "gem5 Neoverse-V1"}
WORKLOAD = "invalid"  # IA key enabled, as in the published runs


def simulated(frame: pd.DataFrame) -> dict[tuple[str, str], float]:
    """{(core, variant): ns per invalid syscall}."""
    rows = frame[(frame["metric"] == "ns_per_iteration") & (frame["workload"] == WORKLOAD)]
    return {(r.core, r.variant): float(r.value) for r in rows.itertuples()}


def overhead(values: dict[str, float], variant: str) -> float:
    base = values.get(BASELINE, math.nan)
    return 100.0 * (values.get(variant, math.nan) - base) / base


def table(sim: dict[tuple[str, str], float], published: dict) -> str:
    lines = ["| platform | variant | published ns | published overhead | simulated ns "
             "| simulated overhead | error of the overhead |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for core, platform in CORES.items():
        sim_core = {v: sim.get((core, v), math.nan) for v in VARIANTS}
        hw = published[platform] if platform else None
        hw_values = {v: hw[column] for v, (column, _) in VARIANTS.items()
                     if hw and column} if hw else {}
        for variant in (BASELINE, *OVERHEAD_VARIANTS):
            sim_over = overhead(sim_core, variant) if variant != BASELINE else math.nan
            hw_over = overhead(hw_values, variant) if hw and variant != BASELINE else math.nan
            if variant == BASELINE or not hw:
                error = "—"
            else:
                error = f"{sim_over - hw_over:+.1f} points ({(sim_over / hw_over - 1) * 100:+.0f}%)"
            label = VARIANTS[variant][1].replace("\n", " ")
            lines.append(
                f"| {CORE_LABELS[core]}" + (f" vs {hw['label']}" if hw else "") +
                f" | {label} | {_fmt(hw_values.get(variant), '.1f')} | {_pct(hw_over)} "
                f"| {_fmt(sim_core[variant], '.1f')} | {_pct(sim_over)} | {error} |")
        lines.append(f"| {CORE_LABELS[core]} | no PAC at all | — | — "
                     f"| {_fmt(sim_core['pac-off'], '.1f')} | {_pct(overhead(sim_core, 'pac-off'))} "
                     "| — |")
    return "\n".join(lines) + "\n"


def _fmt(value: float | None, spec: str) -> str:
    return "—" if value is None or math.isnan(value) else format(value, spec)


def _pct(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:+.1f}%"


def main(folders: style.Folders) -> None:
    frame = folders.load("c1-sctlr")
    published = style.published()["c1"]
    sim = simulated(frame)

    style.apply()
    fig, (left, right) = style.plt.subplots(1, 2, figsize=(style.FULL_WIDTH_IN, 2.6),
                                            gridspec_kw={"width_ratios": [5, 3]})
    series: list[tuple[str, dict[str, float], bool]] = []
    for core, platform in CORES.items():
        series.append((CORE_LABELS[core], {v: sim.get((core, v), math.nan) for v in VARIANTS},
                       False))
        if platform:
            hw = published[platform]
            series.append((f"{hw['label']}, published",
                           {v: hw[c] for v, (c, _) in VARIANTS.items() if c}, True))
    width = 0.8 / len(series)
    for axis, variants, value_of in (
            (left, list(VARIANTS), lambda values, v: values.get(v, math.nan)),
            (right, list(OVERHEAD_VARIANTS), overhead)):
        x = np.arange(len(variants))
        model_index = hardware_index = 0
        for i, (label, values, hardware) in enumerate(series):
            heights = [value_of(values, v) for v in variants]
            if hardware:
                colour, hatch = style.HARDWARE_STYLES[hardware_index]
                hardware_index += 1
            else:
                colour, hatch = style.PALETTE[model_index + 1], style.HATCHES[model_index + 1]
                model_index += 1
            axis.bar(x - 0.4 + (i + 0.5) * width, heights, width, label=label, color=colour,
                     hatch=hatch, edgecolor="black", linewidth=0.4)
        axis.set_xticks(x, [VARIANTS[v][1] for v in variants], fontsize=6)
    left.set_ylabel("time per invalid syscall (ns)")
    left.set_title("(a) time per syscall", loc="left")
    right.set_ylabel("overhead over baseline (%)")
    right.set_title("(b) overhead over C1's baseline (no switching)", loc="left")
    right.axhline(0, color="black", linewidth=0.5)
    handles, labels = left.get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.04), ncol=3,
               frameon=False, fontsize=6)
    fig.subplots_adjust(wspace=0.3)
    style.add_provenance(fig, frame)
    folders.publish(fig, "c1_sctlr", table(sim, published))


if __name__ == "__main__":
    style.run_alone(main)
