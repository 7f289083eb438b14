"""Figure and table: each core model's microbenchmark results beside published values.

Reads results/core-validation.csv; writes plots/out/core_validation.{pdf,png}
(load-to-use latency over working-set size, and simulated vs published
latencies) and plots/out/core_validation.md (the README's validation table).

A pointer chase walks one fixed random cycle, so an LRU cache smaller than the
working set hits almost never: the latency at a size between two cache
capacities is the outer level's load-to-use latency, no mixing correction.
"""

from __future__ import annotations

import math

import pandas as pd

from plots import style

CORES = ("cortex-a75", "cortex-a76", "neoverse-n1", "neoverse-v1", "neoverse-v2", "cortex-x3")
CHASE_PREFIX = "chase-"
SIZE_UNITS = {"KiB": 1 << 10, "MiB": 1 << 20}
TARGET_ERROR = 0.20
# Which run reads each metric: every model has a 64 KiB L1D and an L2 of at
# least 256 KiB; only cortex-a76 has a published L3 latency (2 MB DSU L3, above
# its 512 KiB L2).
LATENCY_PROBES = {"l1_load_to_use": "chase-8KiB", "l2_load_to_use": "chase-256KiB",
                  "l3_load_to_use": "chase-1MiB"}
METRIC_LABELS = {
    "l1_load_to_use": "L1D load-to-use (cycles)",
    "l2_load_to_use": "L2 load-to-use (cycles)",
    "l3_load_to_use": "L3 load-to-use (cycles)",
    "add_latency": "dependent ADD (cycles)",
    "mul_latency": "dependent MUL (cycles)",
    "mispredict_penalty": "branch mispredict refill (cycles)",
    "l1_load_bytes_per_cycle": "L1D load bandwidth (B/cycle)",
    "l1_store_bytes_per_cycle": "L1D store bandwidth (B/cycle)",
    "dram_latency_ns": "DRAM latency at 64 MiB (ns)",
    "tlb_walk_cycles": "TLB miss + walk, 4096 pages (cycles)",
}


# plots/published.toml: what the model took from each published value.
ROLE_LABELS = {"input": "input (set from it)", "fit": "fit (tuned to it)",
               "prediction": "prediction"}


def size_of(workload: str) -> int:
    text = workload.removeprefix(CHASE_PREFIX)
    for unit, scale in SIZE_UNITS.items():
        if text.endswith(unit):
            return int(text.removesuffix(unit)) * scale
    raise ValueError(workload)


def per_op(frame: pd.DataFrame, metric: str) -> pd.Series:
    """{(core, workload): value} of one per-operation metric."""
    rows = frame[frame["metric"] == metric]
    return rows.set_index(["core", "workload"])["value"].astype(float)


def derived_metrics(frame: pd.DataFrame) -> pd.DataFrame:
    cycles = per_op(frame, "cycles_per_iteration")
    nanos = per_op(frame, "ns_per_iteration")
    total_cycles = per_op(frame, "cycles")
    mispredicts = per_op(frame, "branch_mispredicts")
    records = []

    def add(core: str, metric: str, value: float) -> None:
        if not math.isnan(value):
            records.append({"core": core, "metric": metric, "simulated": value})

    for core in CORES:
        def c(workload: str) -> float:
            return float(cycles.get((core, workload), math.nan))
        for metric, workload in LATENCY_PROBES.items():
            add(core, metric, c(workload))
        add(core, "add_latency", c("add-chain"))
        add(core, "mul_latency", c("mul-chain"))
        # Same instructions and taken branches in both runs: the extra cycles
        # of the random one per extra misprediction. After each refill the
        # byte that decides the next branch is loaded again, so its L1
        # load-to-use latency is in that figure too; a published penalty is
        # the refill alone.
        per_mispredict = (
            (total_cycles.get((core, "branch-random"), math.nan)
             - total_cycles.get((core, "branch-predictable"), math.nan))
            / (mispredicts.get((core, "branch-random"), math.nan)
               - mispredicts.get((core, "branch-predictable"), math.nan)))
        add(core, "mispredict_penalty", per_mispredict - c(LATENCY_PROBES["l1_load_to_use"]))
        add(core, "l1_load_bytes_per_cycle", 1 / c("l1-load"))
        add(core, "l1_store_bytes_per_cycle", 1 / c("l1-store"))
        add(core, "dram_latency_ns", float(nanos.get((core, "chase-64MiB"), math.nan)))
        add(core, "tlb_walk_cycles", c("tlb-4096-pages") - c("chase-256KiB"))
    return pd.DataFrame(records)


def with_published(derived: pd.DataFrame) -> pd.DataFrame:
    published = style.published()["validation"]
    rows = []
    for record in derived.to_dict("records"):
        entry = published.get(record["core"], {}).get(record["metric"])
        value = entry["value"] if entry else math.nan
        rows.append({**record, "published": value,
                     "source": entry["source"] if entry else "",
                     "modeller_choice": bool(entry and entry.get("modeller_choice")),
                     "role": (entry.get("role", "prediction") if entry else ""),
                     "relative_error": (record["simulated"] - value) / value
                     if entry else math.nan})
    return pd.DataFrame(rows)


def markdown_table(table: pd.DataFrame) -> str:
    lines = ["| core | metric | simulated | published | error | role of the published value "
             "| source |", "|---|---|---:|---:|---:|---|---|"]
    for row in table.to_dict("records"):
        published = "—" if math.isnan(row["published"]) else f"{row['published']:g}"
        if math.isnan(row["relative_error"]):
            error = "—"
        else:
            flag = "" if abs(row["relative_error"]) <= TARGET_ERROR or row["modeller_choice"] \
                else " ⚠"
            error = f"{row['relative_error']:+.0%}{flag}"
        lines.append(f"| {row['core']} | {METRIC_LABELS[row['metric']]} | "
                     f"{row['simulated']:.3g} | {published} | {error} | "
                     f"{ROLE_LABELS.get(row['role'], '—')} | {row['source']} |")
    return "\n".join(lines) + "\n"


def main(folders: style.Folders) -> None:
    frame = folders.load("core-validation")
    table = with_published(derived_metrics(frame))
    style.apply()
    compared = table[~table["published"].isna()].reset_index(drop=True)
    fig, (curve, bars) = style.plt.subplots(
        1, 2, figsize=(style.FULL_WIDTH_IN, max(2.6, 0.16 * len(compared) + 0.8)),
        gridspec_kw={"width_ratios": [1, 1.3]}, layout="constrained")
    cycles = per_op(frame, "cycles_per_iteration").reset_index()
    chases = cycles[cycles["workload"].str.startswith(CHASE_PREFIX)].copy()
    chases["size"] = chases["workload"].map(size_of)
    markers = ("o", "s", "^", "D", "v", "P")
    for i, core in enumerate(CORES):
        points = chases[chases["core"] == core].sort_values("size")
        if points.empty:
            continue
        curve.plot(points["size"] / 1024, points["value"], marker=markers[i],
                   color=style.PALETTE[i], label=core, linewidth=1, markersize=3)
    curve.set_xscale("log", base=2)
    curve.set_xticks([2 ** k for k in range(3, 17, 3)])
    curve.xaxis.set_major_formatter(style.plt.FuncFormatter(
        lambda kib, _: f"{kib / 1024:g} Mi" if kib >= 1024 else f"{kib:g} Ki"))
    curve.set_xlabel("working set (bytes)")
    curve.set_ylabel("load-to-use latency (cycles)")
    curve.legend(frameon=False)
    curve.set_title("(a) pointer chase", loc="left")

    labels = [f"{r.core}: {METRIC_LABELS[r.metric]}" for r in compared.itertuples()]
    positions = range(len(compared))
    bars.barh([p + 0.2 for p in positions], compared["simulated"], 0.4, label="gem5 model",
              color=style.PALETTE[1], edgecolor="black", linewidth=0.4)
    bars.barh([p - 0.2 for p in positions], compared["published"], 0.4,
              label="published hardware", color=style.HARDWARE_COLOUR, hatch=style.HARDWARE_HATCH,
              edgecolor="black", linewidth=0.4)
    bars.set_yticks(list(positions), labels, fontsize=5)
    bars.set_xlabel("cycles (bandwidth: bytes/cycle)")
    bars.legend(frameon=False, fontsize=6)
    bars.set_title("(b) simulated vs published", loc="left")
    style.add_provenance(fig, frame)
    folders.publish(fig, "core_validation", markdown_table(table))


if __name__ == "__main__":
    style.run_alone(main)
