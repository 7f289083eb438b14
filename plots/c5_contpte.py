"""Figure and table: claim C5, what exit_group() costs per contpte teardown variant.

Reads results/c5-contpte.csv; writes plots/out/c5_contpte.{pdf,png,md}. The
published result is a shape without numbers (docs/published-claims.md):
without the exit optimisation the exit cost rises by a large multiple of the
no-contpte baseline, more with two nodes, and the merged batching is the
cheapest. The figure gives the simulated exit cost of each variant relative to
contpte-off under the same model settings, for each assumed broadcast-TLBI
completion time, with the TLB maintenance behind it in the table.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from hardening import param_overrides
from plots import style

BASELINE = "contpte-off"
VARIANTS = {
    "contpte-off": "no contpte",
    "contpte-noopt": "contpte, no exit optimisation",
    "contpte-batched": "contpte, batched (6.12)",
}
SHORT = {"contpte-off": "no contpte", "contpte-noopt": "contpte,\nno exit opt.",
         "contpte-batched": "contpte,\nbatched (6.12)"}
WORKLOADS = {"exit": "ns per exit_group()", "spawn": "ns per process life"}


def broadcast_label(params: str) -> str:
    fields = param_overrides.parse_column(params)
    cost = fields.get("tlbi.broadcast_completion", "untimed")
    return f"broadcast TLBI {cost}"


Cell = tuple[str, str, str, str]  # workload, setting, variant, metric


def per_sample(frame: pd.DataFrame) -> tuple[dict[Cell, dict[int, float]], list[str]]:
    """{(workload, setting, variant, metric): {layout sample: value}} and the
    settings in the order the results give them."""
    value: dict[Cell, dict[int, float]] = {}
    settings: list[str] = []
    for r in frame.itertuples():
        label = broadcast_label(r.params)
        if label not in settings:
            settings.append(label)
        value.setdefault((r.workload, label, r.variant, r.metric), {})[int(r.sample or 0)] = \
            float(r.value)
    return value, settings


def relative(value: dict[Cell, dict[int, float]], workload: str, setting: str,
             variant: str) -> tuple[float, float, float, float]:
    """Median and interval over layout samples of the variant's ns over
    contpte-off's in the same sample."""
    return style.paired_ratio(value.get((workload, setting, variant, "ns_per_iteration"), {}),
                              value.get((workload, setting, BASELINE, "ns_per_iteration"), {}))


def per_operation(value: dict[Cell, dict[int, float]], workload: str, setting: str,
                  variant: str, metric: str) -> float:
    """A counter per operation (the region's operations: sim_ns / ns per
    operation), the median over layout samples."""
    def cell(name: str) -> dict[int, float]:
        return value.get((workload, setting, variant, name), {})
    ns, sim_ns, counter = cell("ns_per_iteration"), cell("sim_ns"), cell(metric)
    samples = sorted(set(ns) & set(sim_ns) & set(counter))
    if not samples:
        return math.nan
    return style.median_interval([counter[k] / (sim_ns[k] / ns[k]) for k in samples])[0]


def main(folders: style.Folders) -> None:
    frame = folders.load("c5-contpte")
    frame = frame.assign(params=frame["params"].fillna(""))
    value, settings = per_sample(frame)
    style.require_cells(value, ((w, s, v, "ns_per_iteration")
                                for w in WORKLOADS for s in settings for v in VARIANTS))
    sample_count = max(len(v) for v in value.values())
    samples_said = ("one layout sample per run" if sample_count == 1 else
                    f"medians of {sample_count} layout samples per run, the relative cost's "
                    "interval in brackets")

    lines = [f"Claim C5 on the Neoverse-N1 model, one core, one node, {samples_said}; "
             "relative = the variant's cost over contpte-off's under the same settings.", ""]
    for workload, unit in WORKLOADS.items():
        lines += [f"**{workload}** ({unit})", "",
                  "| setting | variant | ns | relative | instructions | broadcast TLBIs | "
                  "DSB wait (ns) | dTLB misses |", "|---|---|---:|---:|---:|---:|---:|---:|"]
        lines.insert(len(lines) - 2, "(every column per operation: per exit or per life)")
        lines.insert(len(lines) - 2, "")
        for setting in settings:
            for variant, name in VARIANTS.items():
                ns = style.median_interval(list(value.get(
                    (workload, setting, variant, "ns_per_iteration"), {}).values()))[0]
                rel, low, high, _ = relative(value, workload, setting, variant)
                spread = f" [{low:.2f}-{high:.2f}]" if high > low else ""

                def per_op(metric: str) -> float:
                    return per_operation(value, workload, setting, variant, metric)
                lines.append(
                    f"| {setting} | {name} | {ns:,.0f} | {rel:.2f}x{spread} | "
                    f"{per_op('instructions'):,.0f} | {per_op('broadcast_tlbis'):,.0f} | "
                    f"{per_op('dsb_tlbi_wait_ps') / 1000:,.0f} | "
                    f"{per_op('dtlb_misses'):,.0f} |")
        lines.append("")
    table = "\n".join(lines)

    style.apply()
    fig, axes = style.plt.subplots(1, len(WORKLOADS), figsize=(style.FULL_WIDTH_IN, 2.4))
    width = 0.8 / len(settings)
    for axis, (workload, unit) in zip(axes, WORKLOADS.items()):
        x = np.arange(len(VARIANTS))
        for i, setting in enumerate(settings):
            heights, errors = style.error_bars(
                [relative(value, workload, setting, v) for v in VARIANTS])
            spread = ({"yerr": errors, "error_kw": {"elinewidth": 0.6, "capsize": 1.2}}
                      if sample_count > 1 else {})
            axis.bar(x + (i - (len(settings) - 1) / 2) * width, heights, width,
                     label=setting, color=style.PALETTE[i + 1], hatch=style.HATCHES[i + 1],
                     edgecolor="black", linewidth=0.4, **spread)
        axis.axhline(1.0, color="black", linewidth=0.6)
        axis.set_xticks(x, list(SHORT.values()))
        axis.set_ylabel(f"{unit}\nrelative to no contpte (x)")
        axis.set_title(workload, pad=14)
    style.legend_on_top(fig, axes[0], len(settings))
    style.add_note(fig, ("one sample per bar (no spread measured yet)" if sample_count == 1
                         else f"median of {sample_count} layout samples per bar, error bars "
                         "the median's interval") + "; published: shape only, no numbers",
                   frame, below=-0.1)
    folders.publish(fig, "c5_contpte", table)


if __name__ == "__main__":
    style.run_alone(main)
