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


def main(folders: style.Folders) -> None:
    frame = folders.load("c5-contpte")
    frame = frame.assign(params=frame["params"].fillna(""))
    value: dict[tuple[str, str, str, str], float] = {}
    settings: list[str] = []
    for r in frame.itertuples():
        label = broadcast_label(r.params)
        if label not in settings:
            settings.append(label)
        value[(r.workload, label, r.variant, r.metric)] = float(r.value)

    lines = ["Claim C5 on the Neoverse-N1 model, one core, one node, one layout sample per "
             "run; relative = the variant's cost over contpte-off's under the same settings.", ""]
    for workload, unit in WORKLOADS.items():
        lines += [f"**{workload}** ({unit})", "",
                  "| setting | variant | ns | relative | instructions | broadcast TLBIs | "
                  "DSB wait (ns) | dTLB misses |", "|---|---|---:|---:|---:|---:|---:|---:|"]
        lines.insert(len(lines) - 2, "(every column per operation: per exit or per life)")
        lines.insert(len(lines) - 2, "")
        for setting in settings:
            base = value.get((workload, setting, BASELINE, "ns_per_iteration"), math.nan)
            for variant, name in VARIANTS.items():
                def get(metric: str) -> float:
                    return value.get((workload, setting, variant, metric), math.nan)
                ns = get("ns_per_iteration")
                ops = get("sim_ns") / ns

                def per_op(metric: str) -> float:
                    return get(metric) / ops
                lines.append(
                    f"| {setting} | {name} | {ns:,.0f} | {ns / base:.2f}x | "
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
            base = value.get((workload, setting, BASELINE, "ns_per_iteration"), math.nan)
            ratios = [value.get((workload, setting, v, "ns_per_iteration"), math.nan) / base
                      for v in VARIANTS]
            axis.bar(x + (i - (len(settings) - 1) / 2) * width, ratios, width,
                     label=setting, color=style.PALETTE[i + 1], hatch=style.HATCHES[i + 1],
                     edgecolor="black", linewidth=0.4)
        axis.axhline(1.0, color="black", linewidth=0.6)
        axis.set_xticks(x, list(SHORT.values()))
        axis.set_ylabel(f"{unit}\nrelative to no contpte (x)")
        axis.set_title(workload, pad=14)
    style.legend_on_top(fig, axes[0], len(settings))
    style.add_note(fig, "one sample per bar (no spread measured yet); published: shape only, "
                   "no numbers", frame, below=-0.1)
    folders.publish(fig, "c5_contpte", table)


if __name__ == "__main__":
    style.run_alone(main)
