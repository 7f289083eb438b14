"""Figure and table: what single MTE instructions and tag-checked loads and
stores cost in the Neoverse-V2 model, beside the published per-instruction
figures of cores that implement MTE.

Reads results/mte-instructions.csv; writes plots/out/mte_instructions.{pdf,png,md}.
Each run times one loop of mte_insn (disk-image/benchmarks): latency chains
(each operation takes the last one's result) or independent operations for
throughput, 16 to a loop iteration, in 4 KiB of PROT_MTE memory. A published
table subtracts an empty loop's cycles, so the figure draws each run's cycles
per operation less those of the loop alone (the ``loop`` run); the table gives
both, and the instructions the model serialises or issues only at the head of its
reorder buffer per operation, which is where
its costs part from the hardware's. Public figures (plots/published.toml,
[mte_instructions], keyed by workload name) stand beside, each with its core
and source.
"""

from __future__ import annotations

import math

import pandas as pd

from plots import style

EXPERIMENT = "mte-instructions"
METRIC = "cycles_per_iteration"
FREE = 0.05  # where an operation that costs nothing beside the loop is drawn
# Rows in this order: the tag instructions' latency chains, their throughput
# loops, then the tag-checked accesses in each mode (untagged: plain memory).
LOOP = "loop"
TAG_LATENCY = ("irg", "addg", "gmi", "ldg", "stg-post", "st2g-post", "stgp-post", "stzg-post")
TAG_THROUGHPUT = ("irg-tput", "ldg-tput", "ldg-one", "stg", "stg-one", "stzg", "stzg-one",
                  "stgp", "stgp-one", "st2g", "st2g-one", "stz2g", "dc-gva", "dc-gzva")
ACCESSES = ("ldr", "ldr-tput", "str")
MODES = ("untagged", "none", "sync", "async", "asymm")
KIND = {LOOP: "the loop alone", **{w: "latency" for w in TAG_LATENCY},
        **{w: "throughput" for w in TAG_THROUGHPUT},
        "ldr": "latency", "ldr-tput": "throughput", "str": "throughput"}


def workload_order() -> list[str]:
    return [LOOP, *TAG_LATENCY, *TAG_THROUGHPUT,
            *(f"{access}-{mode}" for access in ACCESSES for mode in MODES)]


def operation_of(workload: str) -> str:
    """The OP a workload times (its name less the mode)."""
    for mode in MODES:
        if workload.endswith(f"-{mode}"):
            return workload[: -len(mode) - 1]
    return workload


CORES = ("cortex-x3", "neoverse-v2")  # the measured core's model first


def per_core(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    """A metric per workload (rows, in the table's order) and core (columns);
    workloads the results lack are left out. One run per cell (a second would
    need a spread)."""
    rows = frame[frame["metric"] == metric]
    if rows.empty:
        raise style.NoResults(f"{EXPERIMENT} has no '{metric}' rows")
    twice = rows[rows.duplicated(["workload", "core"], keep=False)]
    if not twice.empty:
        raise RuntimeError(f"{EXPERIMENT}: two runs of {tuple(twice.iloc[0][['workload', 'core']])}; "
                           "this table holds one run per workload and core")
    unknown = sorted(set(rows["workload"]) - set(workload_order()))
    if unknown:
        raise ValueError(f"{EXPERIMENT}: workloads {unknown} are not in the table's order "
                         f"({', '.join(workload_order())})")
    table = rows.pivot(index="workload", columns="core", values="value").astype(float)
    cores = [c for c in CORES if c in table.columns]
    return table.reindex(index=[w for w in workload_order() if w in table.index], columns=cores)


def published_rows() -> dict[str, list[dict[str, object]]]:
    return dict(style.published().get("mte_instructions", {}))


def public_text(entries: list[dict[str, object]]) -> str:
    """Each source's figures in cycles by short name: "X3 2, A715 2 (FINK-MSC)"; a figure
    the model was built from (role "input") says so, as it checks nothing."""
    by_source: dict[str, list[str]] = {}
    for e in entries:
        marked = ", the model's input" if e.get("role") == "input" else ""
        by_source.setdefault(str(e["source"]), []).append(
            f"{e['label']} {float(e['cycles']):g}{marked}")
    return "; ".join(f"{', '.join(v)} ({k})" for k, v in by_source.items()) or "—"


def net_of_loop(cycles: pd.DataFrame) -> pd.DataFrame:
    """Cycles per operation less the loop alone's (what a published table gives)."""
    if LOOP not in cycles.index:
        raise style.NoResults(f"{EXPERIMENT} has no '{LOOP}' run to subtract the loop with")
    return (cycles - cycles.loc[LOOP]).drop(index=LOOP)


def table(cycles: pd.DataFrame, serializing: pd.DataFrame, at_head: pd.DataFrame,
          public: dict[str, list[dict[str, object]]]) -> str:
    cores = list(cycles.columns)
    net = net_of_loop(cycles)
    loop = ", ".join(f"{c} {cycles.loc[LOOP, c]:.2f}" for c in cores)
    lines = ["Cycles per operation less the loop alone's (its five instructions per 16 "
             f"operations: {loop} cycles per 16th of an iteration), as published tables give "
             "them, one run per cell; serialising / at ROB head: instructions per operation the "
             "model serialises (gem5's IsSerialize flags) and those it issues only at the head "
             "of the reorder buffer (IsNonSpeculative); for tag-checked accesses, the loop's change "
             "against the same loop on plain memory; published figures of MTE hardware "
             "beside.", "",
             "| workload | loop | " + " | ".join(cores) + " | serialising / at ROB head | vs untagged "
             "| published |",
             "|---|---|" + "---:|" * len(cores) + "---:|---:|---|"]
    for workload in net.index:
        operation = operation_of(workload)
        untagged = f"{operation}-untagged"
        change = (" / ".join(f"{(cycles.loc[workload, c] / cycles.loc[untagged, c] - 1) * 100:+.1f}%"
                             for c in cores)
                  if operation in ACCESSES and untagged in cycles.index and workload != untagged
                  else "")
        first = serializing.loc[workload, cores[0]] if workload in serializing.index else math.nan
        head = at_head.loc[workload, cores[0]] if workload in at_head.index else math.nan
        lines.append(f"| `{workload}` | {KIND[operation]} | "
                     + " | ".join(f"{net.loc[workload, c]:.2f}" for c in cores)
                     + f" | {first:.2f} / {head:.2f} | {change} | {public_text(public.get(workload, []))} |")
    return "\n".join(lines) + "\n"


def main(folders: style.Folders) -> None:
    frame = folders.load(EXPERIMENT)
    cycles = per_core(frame, METRIC)
    iterations = per_core(frame, "iterations")
    serializing = per_core(frame, "serializing_instructions") / iterations
    at_head = per_core(frame, "nonspeculative_instructions") / iterations
    net = net_of_loop(cycles)
    public = published_rows()

    style.apply()
    height = 0.15 * len(net) + 1.2
    fig, axis = style.plt.subplots(figsize=(style.COLUMN_WIDTH_IN, height))
    rows = range(len(net))
    for i, core in enumerate(net.columns):
        axis.plot(net[core].clip(lower=FREE).values, rows, linestyle="none", marker="o^"[i],
                  markersize=3.5, color=style.PALETTE[i + 1], label=f"{core} model")
    markers: dict[str, str] = {}
    for row, workload in enumerate(net.index):
        for entry in public.get(workload, []):
            if "cycles" in entry:
                hardware = f"{entry['label']} ({entry['source']})"
                marker = markers.setdefault(hardware, "*sDvP"[len(markers) % 5])
                # Each source a little off the row, so equal figures stay apart.
                shift = 0.12 * ("*sDvP".index(marker) - 1.5)
                axis.plot(float(entry["cycles"]), row + shift, marker=marker, markersize=4,
                          linestyle="none", color=style.HARDWARE_COLOUR,
                          label=hardware)
    unique = style.cost_rows(axis, list(net.index), "cycles per operation, loop's netted "
                             f"out\n(log scale; {FREE:g}: free)")
    # The legend sits above the axes (no margin between), the row names inside the column.
    fig.subplots_adjust(top=1 - 0.1 / height, left=0.3)
    fig.legend(unique.values(), unique.keys(), loc="lower center", ncol=2, frameon=False,
               fontsize=6, bbox_to_anchor=(0.5, 1.0))
    style.add_note(fig, "mte_insn loops of 16 operations in 4 KiB of PROT_MTE memory, "
                   "one run per point; grey: published hardware figures in cycles",
                   frame, below=-0.45 / height)
    folders.publish(fig, "mte_instructions", table(cycles, serializing, at_head, public))


if __name__ == "__main__":
    style.run_alone(main)
