"""Figure and table: claim C5 on one NUMA node and on two, in the published layout.

Reads results/c5-contpte-numa.csv and, where it exists, results/c5-contpte-mix.csv
(exec'd short lives, a kernel build's shape); writes
plots/out/c5_contpte_numa.{pdf,png,md} and the README's shorter table,
plots/out/c5_contpte_numa_summary.md.
The published result is a shape without numbers (docs/published-claims.md):
relative to no contpte, exit without the optimisation costs a large multiple,
more with two nodes, and the merged batching is the cheapest. Each bar is a
variant's ns per exit_group() over contpte-off's on the same machine, the same
workload and the same layout sample (median over samples, with its interval);
the table gives the absolute costs and the TLB maintenance and cross-node
traffic behind them.
"""

from __future__ import annotations

import math

import numpy as np

from plots import style

BASELINE = "contpte-off"
VARIANTS = {
    "contpte-off": "no contpte",
    "contpte-noopt": "contpte, no exit optimisation",
    "contpte-simple": "contpte, simple get_and_clear_full",
    "contpte-robust": "contpte, robust get_and_clear_full",
    "contpte-batched": "contpte, batched (6.12)",
}
SHORT = {"contpte-off": "no\ncontpte", "contpte-noopt": "no exit\nopt.",
         "contpte-simple": "simple", "contpte-robust": "robust",
         "contpte-batched": "batched\n(6.12)"}
PANELS = {"exit-node0": "exit, children on node 0's cores",
          "exit-spread": "exit, children on all four cores"}
WORKLOADS = {"exit-node0": "per exit", "exit-spread": "per exit",
             "spawn-node0": "per process life", "spawn-spread": "per process life"}
PER_OPERATION = ("instructions", "broadcast_tlbis", "dsb_tlbi_wait_ps", "dtlb_misses",
                 "remote_memory_responses", "cross_node_snoop_responses")

Key = tuple[int, str, str]  # nodes, variant, workload


def samples(frame, metric: str) -> dict[Key, dict[int, float]]:
    """{(nodes, variant, workload): {layout sample: value}}."""
    found: dict[Key, dict[int, float]] = {}
    for r in frame[frame["metric"] == metric].itertuples():
        found.setdefault((int(r.nodes), r.variant, r.workload), {})[int(r.sample or 0)] = \
            float(r.value)
    return found


def relative(ns: dict[Key, dict[int, float]], nodes: int, variant: str,
             workload: str) -> tuple[float, float, float, float]:
    """Median and interval over layout samples of variant / contpte-off."""
    return style.paired_ratio(ns.get((nodes, variant, workload), {}),
                              ns.get((nodes, BASELINE, workload), {}))


def median(values: dict[int, float]) -> float:
    return style.median_interval(list(values.values()))[0] if values else math.nan


def per_operation(ns: dict[Key, dict[int, float]], sim_ns: dict[Key, dict[int, float]],
                  counter: dict[Key, dict[int, float]], key: Key) -> float:
    """A counter's median over samples divided by the operations of the region."""
    return median(counter.get(key, {})) / (median(sim_ns[key]) / median(ns[key]))


def summary(ns: dict[Key, dict[int, float]], sim_ns: dict[Key, dict[int, float]],
            counters: dict[str, dict[Key, dict[int, float]]], node_counts: list[int],
            variants: list[str], sample_count: int,
            mix_ns: dict[Key, dict[int, float]] | None) -> str:
    """The README's table: each variant's exit cost relative to no contpte on one
    and two nodes, the TLB maintenance behind it and exit's share of a life."""
    def nodes_label(n: int) -> str:
        return f"{n} node{'s' if n > 1 else ''}"
    columns = [f"exit, node 0's cores, {nodes_label(n)}" for n in node_counts]
    columns += [f"exit, all cores, {nodes_label(n)}" for n in node_counts]
    columns += ["instructions per exit", "broadcast TLBIs per exit"]
    columns += [f"DSB wait per exit (µs), {nodes_label(n)}" for n in node_counts]
    columns += [f"exit share of a forked life, {nodes_label(n)}" for n in node_counts]
    if mix_ns:
        columns += [f"exit share of an exec'd life, {nodes_label(n)}" for n in node_counts]
    rows = [f"| variant | {' | '.join(columns)} |", "|---|" + "---:|" * len(columns)]
    for variant in variants:
        cells = []
        for workload in ("exit-node0", "exit-spread"):
            for nodes in node_counts:
                rel, low, high, _ = relative(ns, nodes, variant, workload)
                cells.append(f"{rel:.2f}x" + (f" [{low:.2f}-{high:.2f}]" if high > low else ""))
        first = (node_counts[0], variant, "exit-spread")
        cells.append(f"{per_operation(ns, sim_ns, counters['instructions'], first):,.0f}")
        cells.append(f"{per_operation(ns, sim_ns, counters['broadcast_tlbis'], first):,.0f}")
        for nodes in node_counts:
            wait = per_operation(ns, sim_ns, counters["dsb_tlbi_wait_ps"],
                                 (nodes, variant, "exit-spread"))
            cells.append(f"{wait / 1e6:,.1f}")
        for nodes in node_counts:
            life = median(ns.get((nodes, variant, "spawn-spread"), {}))
            death = median(ns.get((nodes, variant, "exit-spread"), {}))
            cells.append(f"{100 * death / life:.0f}%")
        if mix_ns:
            cells += [f"{100 * exec_share(mix_ns, nodes, variant):.0f}%" for nodes in node_counts]
        rows.append(f"| {VARIANTS[variant]} | {' | '.join(cells)} |")
    samples_said = (f"median of {sample_count} layout samples, interval in brackets"
                    if sample_count > 1 else "one layout sample each")
    return "\n".join([f"Exit cost relative to no contpte on the same machine ({samples_said}); "
                      "counters per exit of a 16 MiB process with the children on all "
                      "cores; exit share: ns per exit over ns per whole life, of forked "
                      "children (exit, spawn) and, where run, of exec'd ones (mix-exit, mix).",
                      "",
                      *rows]) + "\n"


def exec_share(mix_ns: dict[Key, dict[int, float]], nodes: int, variant: str) -> float:
    """Exit's share of an exec'd helper's life: ns per exit over ns per life."""
    return (median(mix_ns.get((nodes, variant, "mix-exit-spread"), {}))
            / median(mix_ns.get((nodes, variant, "mix-spread"), {})))


def mix_table(mix_ns: dict[Key, dict[int, float]], mix_sim_ns: dict[Key, dict[int, float]],
              mix_counters: dict[str, dict[Key, dict[int, float]]], node_counts: list[int],
              variants: list[str]) -> list[str]:
    """Whole exec'd lives and their exits: costs, counters and exit's share."""
    lines = ["", "Exec'd helpers (results/c5-contpte-mix.csv; a kernel build's shape: fork, "
             "exec, fault 16 MiB in, exit), children on all cores: per life (mix) and per "
             "exit (mix-exit).", "",
             "| nodes | variant | ns per life | ns per exit | exit relative to no contpte | "
             "instructions per exit | broadcast TLBIs per exit | exit share |",
             "|---:|---|---:|---:|---:|---:|---:|---:|"]
    for nodes in node_counts:
        for variant in variants:
            life_key, exit_key = (nodes, variant, "mix-spread"), (nodes, variant,
                                                                  "mix-exit-spread")
            if life_key not in mix_ns or exit_key not in mix_ns:
                continue
            rel = relative(mix_ns, nodes, variant, "mix-exit-spread")[0]
            instructions = per_operation(mix_ns, mix_sim_ns, mix_counters["instructions"],
                                         exit_key)
            tlbis = per_operation(mix_ns, mix_sim_ns, mix_counters["broadcast_tlbis"],
                                  exit_key)
            lines.append(f"| {nodes} | {VARIANTS[variant]} | {median(mix_ns[life_key]):,.0f} | "
                         f"{median(mix_ns[exit_key]):,.0f} | {rel:.2f}x | {instructions:,.0f} | "
                         f"{tlbis:,.0f} | {100 * exec_share(mix_ns, nodes, variant):.0f}% |")
    return lines


def main(folders: style.Folders) -> None:
    frame = folders.load("c5-contpte-numa")
    ns = samples(frame, "ns_per_iteration")
    sim_ns = samples(frame, "sim_ns")
    counters = {m: samples(frame, m) for m in PER_OPERATION}
    node_counts = sorted({k[0] for k in ns})
    variants = [v for v in VARIANTS if any(k[1] == v for k in ns)]
    sample_count = max(len(v) for v in ns.values())

    lines = [f"Claim C5 on a four-core Neoverse-N1 machine, one node or two; medians of "
             f"{sample_count} layout sample(s) per run, relative = the variant over contpte-off "
             "on the same machine, workload and sample (interval in brackets when there is "
             "more than one sample). Counters per operation (per exit or per life).", "",
             "| workload | nodes | variant | ns | relative | instructions | broadcast TLBIs | "
             "DSB wait (ns) | dTLB misses | remote memory responses | cross-node snoop "
             "responses |", "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for workload in WORKLOADS:
        for nodes in node_counts:
            for variant in variants:
                key = (nodes, variant, workload)
                if key not in ns:
                    continue
                rel, low, high, _ = relative(ns, nodes, variant, workload)
                spread = f" [{low:.2f}-{high:.2f}]" if high > low else ""
                ops = median(sim_ns[key]) / median(ns[key])
                values = [median(counters[m].get(key, {})) / ops for m in PER_OPERATION]
                values[2] /= 1000  # ps -> ns
                cells = " | ".join("—" if math.isnan(v) else f"{v:,.0f}" for v in values)
                lines.append(f"| {workload} | {nodes} | {VARIANTS[variant]} | "
                             f"{median(ns[key]):,.0f} | {rel:.2f}x{spread} | {cells} |")
    exit_share = []
    for nodes in node_counts:
        for variant in variants:
            life = median(ns.get((nodes, variant, "spawn-spread"), {}))
            death = median(ns.get((nodes, variant, "exit-spread"), {}))
            if not math.isnan(life) and not math.isnan(death):
                exit_share.append(f"| {nodes} | {VARIANTS[variant]} | {100 * death / life:.0f}% |")
    if exit_share:
        lines += ["", "Exit's share of a short process life (children spread over all cores: "
                  "ns per exit over ns per life of the same 16 MiB process).", "",
                  "| nodes | variant | exit share |", "|---:|---|---:|", *exit_share]
    try:
        mix = folders.load("c5-contpte-mix")
    except style.NoResults:
        mix = None
    mix_ns = samples(mix, "ns_per_iteration") if mix is not None else None
    if mix is not None and mix_ns:
        lines += mix_table(mix_ns, samples(mix, "sim_ns"),
                           {m: samples(mix, m) for m in PER_OPERATION}, node_counts, variants)
    table = "\n".join(lines)
    folders.save_table("c5_contpte_numa_summary",
                     summary(ns, sim_ns, counters, node_counts, variants, sample_count, mix_ns))

    style.apply()
    fig, axes = style.plt.subplots(1, len(PANELS), figsize=(style.FULL_WIDTH_IN, 2.4),
                                   sharey=True)
    width = 0.8 / len(node_counts)
    for axis, (workload, title) in zip(axes, PANELS.items()):
        x = np.arange(len(variants))
        for i, nodes in enumerate(node_counts):
            heights, errors = style.error_bars(
                [relative(ns, nodes, v, workload) for v in variants])
            axis.bar(x + (i - (len(node_counts) - 1) / 2) * width, heights, width,
                     yerr=errors if sample_count > 1 else None, capsize=2, label=f"{nodes} node{'s' if nodes > 1 else ''}",
                     color=style.PALETTE[i + 1], hatch=style.HATCHES[i + 1],
                     edgecolor="black", linewidth=0.4)
        axis.axhline(1.0, color="black", linewidth=0.6)
        axis.set_xticks(x, [SHORT[v] for v in variants])
        axis.set_title(title)
    axes[0].set_ylabel("ns per exit_group()\nrelative to no contpte (x)")
    axes[-1].legend(loc="upper right", frameon=False, fontsize=6)
    spread = (f"median of {sample_count} layout samples per bar, error bars their interval"
              if sample_count > 1 else "one layout sample per bar, so no error bars")
    style.add_note(fig, f"{spread}; assumed TLBI and node-link costs (see the experiment "
                   "file); published: shape only, no numbers", frame, below=-0.12)
    folders.publish(fig, "c5_contpte_numa", table)


if __name__ == "__main__":
    style.run_alone(main)
