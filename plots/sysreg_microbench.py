"""Figure and table: what each system-register access, barrier and TLB
invalidation costs in every core model, beside the public figures for real cores.

Reads results/sysreg-microbench.csv; writes plots/out/sysreg_microbench.{pdf,png,md}.
Each run times one operation at EL1 (test_sysreg_cost, eight copies per loop
iteration); its cost is the run's cycles per operation less those of the loop
alone (the "nop" run on the same core). The serializing column counts the
instructions gem5 renamed as serializing per operation (those squashed on a
wrong path included), which says whether the model drains the pipeline for
it. Public figures (plots/published.toml, [sysreg]) stand beside: few exist
for these cores, and none for most operations (docs/parameter-sources.md).
"""

from __future__ import annotations

import math

import pandas as pd

from plots import style
from plots.core_validation import CORES

LOOP = "nop"
GROUPS = (("barriers", ("isb", "dmb_ish", "dsb_ish", "dsb_sy")),
          ("reads", ("mrs_",)),
          ("writes", ("msr_",)),
          ("TLB invalidation", ("tlbi_",)))


def group_of(operation: str) -> int:
    for index, (_, members) in enumerate(GROUPS):
        if any(operation == m or (m.endswith("_") and operation.startswith(m))
               for m in members):
            return index
    raise ValueError(f"operation '{operation}' is in no group of {[g for g, _ in GROUPS]}")


def per_operation(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    """One metric per operation (rows) and core (columns)."""
    rows = frame[frame["metric"] == metric]
    return rows.pivot_table(index="workload", columns="core", values="value", aggfunc="median")


def costs(frame: pd.DataFrame) -> pd.DataFrame:
    """Cycles per operation above the loop's own, per core."""
    cycles = per_operation(frame, "cycles_per_iteration")
    if LOOP not in cycles.index:
        raise style.NoResults(f"sysreg-microbench has no '{LOOP}' run to subtract the loop with")
    above = cycles - cycles.loc[LOOP]
    above = above.drop(index=LOOP)
    order = sorted(above.index, key=lambda op: (group_of(op), op))
    return above.loc[order]


def serializing_per_operation(frame: pd.DataFrame) -> pd.DataFrame:
    """Instructions gem5 renamed as serialising, per timed operation and core."""
    return (per_operation(frame, "serializing_instructions")
            / per_operation(frame, "iterations"))


def published_rows() -> dict[str, list[dict[str, object]]]:
    return {op: entries for op, entries in style.published().get("sysreg", {}).items()}


def public_text(entries: list[dict[str, object]]) -> str:
    return "; ".join(f"{e['figure']} ({e['hardware']}; {e['source']})" for e in entries) or "—"


def main(folders: style.Folders) -> None:
    frame = folders.load("sysreg-microbench")
    above = costs(frame)
    serializing = serializing_per_operation(frame)
    cores = [c for c in CORES if c in above.columns]
    public = published_rows()
    loop = per_operation(frame, "cycles_per_iteration").loc[LOOP]

    lines = ["Cycles per operation above the loop alone (the `nop` run: "
             + ", ".join(f"{loop[c]:.2f}" for c in cores) + " cycles per copy), at EL1 "
             "with interrupts masked, one run per cell; serialising: instructions gem5 "
             "renamed as serialising per operation on the first core; public figures "
             "where any exist.", "",
             "| operation | " + " | ".join(cores) + " | serialising | public figure |",
             "|---|" + "---:|" * len(cores) + "---:|---|"]
    for op in above.index:
        cells = [f"{above.loc[op, c]:.1f}" if not math.isnan(above.loc[op, c]) else "—"
                 for c in cores]
        first = serializing.loc[op, cores[0]] if op in serializing.index else math.nan
        lines.append(f"| `{op}` | " + " | ".join(cells)
                     + f" | {first:.1f} | {public_text(public.get(op, []))} |")
    table = "\n".join(lines) + "\n"

    style.apply()
    height = 0.16 * len(above) + 1.2
    fig, axis = style.plt.subplots(figsize=(style.FULL_WIDTH_IN, height))
    rows = range(len(above))
    for i, core in enumerate(cores):
        axis.plot(above[core].clip(lower=0.1), rows, linestyle="none", marker="o^sDv"[i],
                  markersize=3.5, color=style.PALETTE[i + 1], label=f"gem5 {core}")
    for row, op in enumerate(above.index):
        for entry in public.get(op, []):
            if "cycles" in entry:
                axis.plot(float(entry["cycles"]), row, marker="*", markersize=7,
                          linestyle="none", color=style.HARDWARE_COLOUR,
                          label=f"published: {entry['hardware']}")
    unique = style.cost_rows(axis, list(above.index),
                             "cycles per operation above the loop alone (log scale; 0.1: free)")
    fig.legend(unique.values(), unique.keys(), loc="lower center", ncol=3, frameon=False,
               fontsize=6, bbox_to_anchor=(0.5, 1.0))
    style.add_note(fig, "gem5 core models at EL1, one run per point (test_sysreg_cost, "
                   "eight copies per loop iteration); stars: published hardware figures "
                   "converted to cycles at the product's clock", frame, below=-0.5 / height)
    folders.publish(fig, "sysreg_microbench", table)


if __name__ == "__main__":
    style.run_alone(main)
