"""Figure and table: claim C5 predicted on the Altra-priced machine.

Reads results/c5-contpte-altra.csv (experiments/definitions/c5-contpte-altra.toml:
four Neoverse-N1 cores, one NUMA node or two, every contpte teardown arm,
broadcast TLB maintenance priced for 80 cores per node through one system-wide
distributor); writes plots/out/c5_contpte_altra.{pdf,png,md}.
One panel per way the exits come: one at a time, eight released at once, and
inside a kernel-build-like mix of exec'd helpers (their exits alone,
``build-exit``). A bar is an arm's time per exit over no contpte's on the same
machine and layout sample (median over samples, whiskers their range). The
table adds the absolute times, the TLB maintenance per exit and exit's share of
the build (``build-exit``'s ns per operation over ``build``'s). The published
result is a shape without numbers, so no hardware bar is drawn.
"""

from __future__ import annotations

import math

import numpy as np

from plots import style
from plots.c5_contpte_burst import nodes_label, ratio_text
from plots.c5_contpte_numa import (BASELINE, SHORT, VARIANTS, Key, median, per_operation,
                                   relative, samples)

EXPERIMENT = "c5-contpte-altra"
# Workload -> how its exits come (a panel each).
EXITS = {"exit-spread": "one at a time", "burst-spread": "eight at once",
         "build-exit-spread": "in the build"}
BUILD = "build-spread"
BUILD_EXIT = "build-exit-spread"
PER_EXIT = ("instructions", "broadcast_tlbis", "dsb_tlbi_waits", "dsb_tlbi_wait_ps")


def exit_share(ns: dict[Key, dict[int, float]], nodes: int, variant: str) -> float:
    """ns per exit of the build's helpers released at once over ns per life of
    the build: exit's share of the cores' time in the build."""
    life = median(ns.get((nodes, variant, BUILD), {}))
    death = median(ns.get((nodes, variant, BUILD_EXIT), {}))
    return death / life if life else math.nan


def table(ns: dict[Key, dict[int, float]], sim_ns: dict[Key, dict[int, float]],
          counters: dict[str, dict[Key, dict[int, float]]], node_counts: list[int],
          variants: list[str], sample_count: int) -> str:
    workloads = [w for w in EXITS if any(k[2] == w for k in ns)]
    columns = []
    for workload in workloads:
        columns += [f"µs per exit, {EXITS[workload]}", f"{EXITS[workload]} vs no contpte"]
    columns += ["µs per life, build", "build vs no contpte", "exit share of the build",
                "instructions per exit",
                "broadcast TLBIs per exit", "DSB waits per exit",
                "DSB wait per exit (µs), eight at once"]
    samples_said = (f"medians of {sample_count} layout samples (the ratio's range over "
                    "them in brackets)" if sample_count > 1 else "one layout sample per run")
    lines = [f"`{EXPERIMENT}` (`results/{EXPERIMENT}.csv`): four N1 cores, broadcasts priced "
             f"for 80 cores per node through one distributor; {samples_said}. Per exit: the region's time or count over its "
             "eight exits (in the build: the helpers' exits released at once). Exit share: "
             "ns per exit in the build over ns per life of the build (both over four cores "
             "at once). Counters per exit from the exits one at a time; DSB wait summed "
             "over the cores.", "",
             f"| nodes | variant | {' | '.join(columns)} |",
             "|---:|---|" + "---:|" * len(columns)]
    for nodes in node_counts:
        for variant in variants:
            cells = []
            for workload in workloads:
                key = (nodes, variant, workload)
                cells.append(f"{median(ns[key]) / 1e3:,.1f}" if key in ns else "—")
                cells.append(ratio_text(relative(ns, nodes, variant, workload)))
            life = median(ns.get((nodes, variant, BUILD), {}))
            cells.append("—" if math.isnan(life) else f"{life / 1e3:,.1f}")
            cells.append(ratio_text(relative(ns, nodes, variant, BUILD)))
            share = exit_share(ns, nodes, variant)
            cells.append("—" if math.isnan(share) else f"{100 * share:.0f}%")
            one = (nodes, variant, "exit-spread")
            for metric, digits in zip(PER_EXIT[:3], (0, 0, 1)):
                value = (per_operation(ns, sim_ns, counters[metric], one) if one in ns
                         else math.nan)
                cells.append("—" if math.isnan(value) else f"{value:,.{digits}f}")
            burst = (nodes, variant, "burst-spread")
            wait = (per_operation(ns, sim_ns, counters["dsb_tlbi_wait_ps"], burst) / 1e6
                    if burst in ns else math.nan)
            cells.append("—" if math.isnan(wait) else f"{wait:,.1f}")
            lines.append(f"| {nodes} | {VARIANTS[variant]} | {' | '.join(cells)} |")
    return "\n".join(lines) + "\n"


def main(folders: style.Folders) -> None:
    frame = folders.load(EXPERIMENT)
    ns = samples(frame, "ns_per_iteration")
    if not any(k[1] == BASELINE for k in ns):
        raise style.NoResults(f"results/{EXPERIMENT}.csv lacks {BASELINE}'s runs, the "
                              "baseline of every bar: run 'python -m experiments run "
                              f"{EXPERIMENT} --variant {BASELINE}'")
    node_counts = sorted({k[0] for k in ns})
    variants = [v for v in VARIANTS if any(k[1] == v for k in ns)]
    panels = [w for w in EXITS if any(k[2] == w for k in ns)]
    sample_count = max(len(v) for v in ns.values())

    style.apply()
    fig, axes = style.plt.subplots(1, len(panels), squeeze=False, sharey=True,
                                   figsize=(style.FULL_WIDTH_IN, 2.4))
    x = np.arange(len(variants))
    width = 0.8 / len(node_counts)
    for p, (axis, workload) in enumerate(zip(axes[0], panels)):
        for i, nodes in enumerate(node_counts):
            heights, errors = style.error_bars(
                [relative(ns, nodes, v, workload) for v in variants])
            axis.bar(x + (i - (len(node_counts) - 1) / 2) * width, heights, width,
                     yerr=errors if sample_count > 1 else None,
                     error_kw={"elinewidth": 0.6, "capsize": 1.5}, label=nodes_label(nodes),
                     color=style.PALETTE[i + 1], hatch=style.HATCHES[i + 1],
                     edgecolor="black", linewidth=0.4)
        axis.axhline(1.0, color="black", linewidth=0.6)
        axis.set_xticks(x, [SHORT[v] for v in variants], fontsize=6)
        axis.set_title(f"({'abc'[p]}) exits {EXITS[workload]}", loc="left")
    axes[0][0].set_ylabel("time per exit\nrelative to no contpte (x)")
    style.legend_on_top(fig, axes[0][0], columns=len(node_counts))
    fig.subplots_adjust(top=0.80, wspace=0.08)
    style.add_note(fig, "gem5: four N1 cores, 16 MiB children, broadcasts priced for 80 "
                   "cores per node through one distributor (assumed costs: the experiment "
                   "file); " + (f"median of {sample_count} layout samples per bar, whiskers "
                                "their range" if sample_count > 1 else "one layout sample per "
                                "bar") + "; published: shape only, no numbers", frame,
                   below=-0.2)
    folders.publish(fig, "c5_contpte_altra",
                    table(ns, samples(frame, "sim_ns"), {m: samples(frame, m) for m in PER_EXIT},
                          node_counts, variants, sample_count))


if __name__ == "__main__":
    style.run_alone(main)
