"""Figure and table: claim C5's exit cost as the broadcast-TLBI completion time varies.

Reads results/c5-contpte-sweep.csv; writes plots/out/c5_contpte_sweep.{pdf,png,md}.
No public figure gives this time for Neoverse N1 (docs/parameter-sources.md), so
the figure shows how each teardown variant's cost, and its ratio to no contpte,
follows the assumption, from gem5's zero-time broadcast to 2 µs.
"""

from __future__ import annotations

import math

from hardening import param_overrides
from plots import style
from plots.c5_contpte import BASELINE, VARIANTS

PARAM = "tlbi.broadcast_completion"


def completion_ns(params: str) -> float:
    fields = param_overrides.parse_column(params)
    return float(fields[PARAM].removesuffix("ns"))


def main(folders: style.Folders) -> None:
    frame = folders.load("c5-contpte-sweep")
    rows = frame[frame["metric"] == "ns_per_iteration"]
    ns: dict[tuple[str, float], float] = {(r.variant, completion_ns(r.params)): float(r.value)
                                          for r in rows.itertuples()}
    costs = sorted({c for _, c in ns})

    lines = ["ns per exit_group() of a 16 MiB process (64 KiB folios) on the Neoverse-N1 "
             "model, one core, one node, one layout sample per run; in brackets the ratio "
             "to no contpte at the same completion time.", "",
             "| broadcast TLBI completion | " + " | ".join(VARIANTS.values()) + " |",
             "|---:|" + "---:|" * len(VARIANTS)]
    for cost in costs:
        base = ns.get((BASELINE, cost), math.nan)
        cells = [f"{ns.get((v, cost), math.nan):,.0f} ({ns.get((v, cost), math.nan) / base:.2f}x)"
                 for v in VARIANTS]
        lines.append(f"| {cost:,.0f} ns | " + " | ".join(cells) + " |")
    table = "\n".join(lines) + "\n"

    style.apply()
    fig, axis = style.figure(height=2.4)
    for i, (variant, name) in enumerate(VARIANTS.items()):
        axis.plot(costs, [ns.get((variant, c), math.nan) / 1000 for c in costs],
                  marker="osD"[i], color=style.PALETTE[i], linestyle=("-", "--", ":")[i],
                  label=name)
    axis.set_xlabel("assumed broadcast TLBI completion (ns)")
    axis.set_ylabel("µs per exit_group()")
    axis.set_ylim(bottom=0)
    axis.legend(frameon=False, fontsize=6)
    style.add_note(fig, "one sample per point; no hardware figure exists for this "
                   "parameter", frame, below=-0.12)
    folders.publish(fig, "c5_contpte_sweep", table)


if __name__ == "__main__":
    style.run_alone(main)
