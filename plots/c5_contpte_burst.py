"""Figure and table: claim C5's exits all at once, as a parallel build has them.

Reads results/checks/contpte-burst/c5-contpte-burst.csv (the check
experiments/definitions/checks/c5-contpte-burst.toml: eight 16 MiB children
released together over four Neoverse-N1 cores, one NUMA node or two, every
contpte teardown arm) and, for the same arms' exits one at a time,
results/c5-contpte-numa.csv; writes plots/out/c5_contpte_burst.{pdf,png,md}.
A bar is an arm's time per exit in the burst over no contpte's on the same
machine and layout sample (median over samples, with their range). Where the
same check was run for the Altra's core counts (SCALED: ``tlbi.*``
overrides, with and without the system-wide DVM distributor), a second panel
sets the no-optimisation arm's multiple in each beside the simulated count's.
The published result is a shape without numbers, so no hardware bar is drawn.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from plots import style
from plots.c5_contpte_numa import (BASELINE, SHORT, VARIANTS, Key, median, per_operation,
                                   relative, samples)

CHECK = "checks/contpte-burst/c5-contpte-burst.csv"
CHECK_COMMAND = ("python -m experiments --definitions experiments/definitions/checks run "
                 "c5-contpte-burst")
BURST = "burst-spread"
ONE_AT_A_TIME = "exit-spread"
# The check re-run with the broadcast priced for more cores than simulated:
# (sub-folder of the check's, label, its tlbi overrides in words).
SCALED = (("altra-no-distributor", "80 cores per node", "tlbi.modelled_cores_per_node=80"),
          ("altra-distributor", "80 per node, distributor",
           "tlbi.modelled_cores_per_node=80, tlbi.distributor_per_target=1ns"))
SCALED_ARM = "contpte-noopt"
TICKS = {"4 simulated cores": "4 cores\n(simulated)", "80 cores per node": "80 per\nnode",
         "80 per node, distributor": "80 per node,\ndistributor"}
PER_EXIT = ("instructions", "broadcast_tlbis", "dsb_tlbi_waits", "dsb_tlbi_wait_ps",
            "serialize_stall_cycles", "remote_memory_responses")


def nodes_label(nodes: int) -> str:
    return f"{nodes} node{'s' if nodes > 1 else ''}"


def ratio_text(ratio: tuple[float, float, float, float]) -> str:
    value, low, high, _ = ratio
    if math.isnan(value):
        return "—"
    return f"{value:.2f}x" + (f" [{low:.2f}-{high:.2f}]" if high > low else "")


def table(ns: dict[Key, dict[int, float]], sim_ns: dict[Key, dict[int, float]],
          counters: dict[str, dict[Key, dict[int, float]]],
          single: dict[Key, dict[int, float]], single_build: str,
          node_counts: list[int], variants: list[str], sample_count: int) -> str:
    lines = [f"`c5-contpte-burst` (`results/{CHECK}`): eight exits released at once over the "
             f"four cores; medians of {sample_count} layout samples (their range in "
             "brackets), per exit = the burst's time or count over its eight exits. "
             "One at a time: the same arms' exits one after another with the children on "
             f"all cores (`results/c5-contpte-numa.csv`, {single_build}).", "",
             "| nodes | variant | µs per exit, burst | burst vs no contpte | one at a time "
             "vs no contpte | instructions per exit | broadcast TLBIs per exit | DSB waits "
             "per exit | DSB wait per exit (µs) | serialize stall cycles per exit | remote "
             "memory responses per exit |",
             "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for nodes in node_counts:
        for variant in variants:
            key = (nodes, variant, BURST)
            if key not in ns:
                continue
            values = [per_operation(ns, sim_ns, counters[m], key) for m in PER_EXIT]
            values[3] /= 1e6  # ps -> µs
            one_at_a_time = (ratio_text(relative(single, nodes, variant, ONE_AT_A_TIME))
                             if (nodes, variant, ONE_AT_A_TIME) in single else "—")
            counts = " | ".join("—" if math.isnan(v) else f"{v:,.{digits}f}"
                                for v, digits in zip(values, (0, 0, 1, 1, 0, 0)))
            lines.append(
                f"| {nodes} | {VARIANTS[variant]} | {median(ns[key]) / 1e3:,.1f} | "
                f"{ratio_text(relative(ns, nodes, variant, BURST))} | {one_at_a_time} | "
                f"{counts} |")
    return "\n".join(lines) + "\n"


def scaled_table(settings: dict[str, dict[Key, dict[int, float]]],
                 sim: dict[str, dict[Key, dict[int, float]]],
                 waits: dict[str, dict[Key, dict[int, float]]], node_counts: list[int]) -> str:
    """No contpte and no optimisation per TLBI pricing: µs per exit, the
    multiple, and DSB wait per exit."""
    lines = ["", "The same burst with broadcasts priced for more cores than the four simulated "
             "(`tlbi.*` overrides on top of the check's; the extra runs in "
             "sub-folders of the check's): µs per exit and DSB wait per exit (summed over "
             "the cores, so it can exceed the time per exit), medians of the layout samples.",
             "", "| TLBI pricing | nodes | µs per exit, no contpte | µs per exit, no exit "
             "optimisation | multiple | DSB wait per exit (µs), no contpte | DSB wait per exit "
             "(µs), no exit optimisation |", "|---|---:|---:|---:|---:|---:|---:|"]
    for label, ns in settings.items():
        for nodes in node_counts:
            base, arm = (nodes, BASELINE, BURST), (nodes, SCALED_ARM, BURST)
            if base not in ns or arm not in ns:
                continue
            wait = [per_operation(ns, sim[label], waits[label], k) / 1e6 for k in (base, arm)]
            lines.append(f"| {label} | {nodes} | {median(ns[base]) / 1e3:,.1f} | "
                         f"{median(ns[arm]) / 1e3:,.1f} | "
                         f"{ratio_text(relative(ns, nodes, SCALED_ARM, BURST))} | "
                         f"{wait[0]:,.1f} | {wait[1]:,.1f} |")
    return "\n".join(lines) + "\n"


def main(folders: style.Folders) -> None:
    path = folders.results / CHECK
    frame = folders.load_check(CHECK, CHECK_COMMAND)
    ns = samples(frame, "ns_per_iteration")
    if not any(k[1] == BASELINE for k in ns):
        raise style.NoResults(f"{style.shown(path)} lacks {BASELINE}'s runs, the baseline "
                              f"of every bar: run '{CHECK_COMMAND} --variant {BASELINE}'")
    node_counts = sorted({k[0] for k in ns})
    variants = [v for v in VARIANTS if any(k[1] == v for k in ns)]
    sample_count = max(len(v) for v in ns.values())
    numa = folders.load("c5-contpte-numa")
    single_build = (f"gem5 {', '.join(sorted(set(numa['gem5_patches'])))}, "
                    f"{', '.join(sorted(set(numa['detail'])))} detail")

    scaled_frames = {label: pd.read_csv(path.parent / folder / path.name, keep_default_na=False)
                     for folder, label, _ in SCALED if (path.parent / folder / path.name).is_file()}
    settings = {"4 simulated cores": ns,
                **{label: samples(f, "ns_per_iteration") for label, f in scaled_frames.items()}}
    sims = {"4 simulated cores": samples(frame, "sim_ns"),
            **{label: samples(f, "sim_ns") for label, f in scaled_frames.items()}}
    waits = {"4 simulated cores": samples(frame, "dsb_tlbi_wait_ps"),
             **{label: samples(f, "dsb_tlbi_wait_ps") for label, f in scaled_frames.items()}}

    style.apply()
    panels = 2 if scaled_frames else 1
    fig, axes = style.plt.subplots(1, panels, squeeze=False, figsize=(
        style.FULL_WIDTH_IN if panels > 1 else style.COLUMN_WIDTH_IN, 2.4),
        gridspec_kw={"width_ratios": [len(variants), 1.3 * len(settings)][:panels]})
    axis = axes[0][0]
    x = np.arange(len(variants))
    width = 0.8 / len(node_counts)
    for i, nodes in enumerate(node_counts):
        heights, errors = style.error_bars([relative(ns, nodes, v, BURST) for v in variants])
        axis.bar(x + (i - (len(node_counts) - 1) / 2) * width, heights, width,
                 yerr=errors if sample_count > 1 else None,
                 error_kw={"elinewidth": 0.6, "capsize": 1.5}, label=nodes_label(nodes),
                 color=style.PALETTE[i + 1], hatch=style.HATCHES[i + 1], edgecolor="black",
                 linewidth=0.4)
    axis.axhline(1.0, color="black", linewidth=0.6)
    axis.set_xticks(x, [SHORT[v] for v in variants], fontsize=6)
    axis.set_ylabel("time per exit in the burst\nrelative to no contpte (x)")
    if panels > 1:
        axis.set_title("(a) every arm, 4 simulated cores", loc="left")
        scaled_axis = axes[0][1]
        x = np.arange(len(settings))
        for i, nodes in enumerate(node_counts):
            heights, errors = style.error_bars(
                [relative(s_ns, nodes, SCALED_ARM, BURST) for s_ns in settings.values()])
            scaled_axis.bar(x + (i - (len(node_counts) - 1) / 2) * width, heights, width,
                            yerr=errors if sample_count > 1 else None,
                            error_kw={"elinewidth": 0.6, "capsize": 1.5},
                            color=style.PALETTE[i + 1], hatch=style.HATCHES[i + 1],
                            edgecolor="black", linewidth=0.4)
        scaled_axis.axhline(1.0, color="black", linewidth=0.6)
        scaled_axis.set_xticks(x, [TICKS.get(label, label) for label in settings], fontsize=6)
        scaled_axis.set_title("(b) no exit opt., broadcast priced for", loc="left")
    style.legend_on_top(fig, axis, columns=len(node_counts))
    fig.subplots_adjust(top=0.80, wspace=0.25)
    style.add_note(fig, f"gem5: eight 16 MiB exits at once over four N1 cores; median of "
                   f"{sample_count} layout samples per bar, whiskers their range; assumed "
                   "TLBI and node-link costs (the experiment file; (b)'s overrides in the "
                   "table); published: shape only, no numbers", frame, below=-0.2)
    folders.publish(fig, "c5_contpte_burst",
                    table(ns, samples(frame, "sim_ns"), {m: samples(frame, m) for m in PER_EXIT},
                          samples(numa, "ns_per_iteration"), single_build, node_counts,
                          variants, sample_count)
                    + (scaled_table(settings, sims, waits, node_counts) if scaled_frames else ""))


if __name__ == "__main__":
    style.run_alone(main)
