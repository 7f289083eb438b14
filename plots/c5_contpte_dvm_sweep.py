"""Figure and table: claim C5's sensitivity to the assumed DVM costs.

Reads results/c5-contpte-dvm-sweep.csv (experiments/definitions/
c5-contpte-dvm-sweep.toml: eight 16 MiB exits at once over four N1 cores, no
contpte and no exit optimisation, one or two NUMA nodes, broadcasts priced for
80 cores per node, each assumed DVM cost moved alone from the base setting);
writes plots/out/c5_contpte_dvm_sweep.{pdf,png,md}.
One panel per swept cost: the no-optimisation arm's time per exit over no
contpte's at that setting, a line per node count. No public figure gives any
of these costs (docs/parameter-sources.md), so there is no hardware point.
"""

from __future__ import annotations

import math

from hardening import param_overrides
from plots import style
from plots.c5_contpte_burst import nodes_label
from plots.c5_contpte_numa import BASELINE, VARIANTS

EXPERIMENT = "c5-contpte-dvm-sweep"
ARM = "contpte-noopt"
# The base setting's value of each swept parameter (the experiment file's first
# params entry), in ns, and the panel that sweeps it.
BASE = {"tlbi.distributor_per_target": 1.0, "tlbi.distributor_per_operation": 0.0,
        "tlbi.per_other_node": 200.0, "tlbi.broadcast_interval": 0.0}
PANELS = {"tlbi.distributor_per_target": "distributor, per target (ns)",
          "tlbi.distributor_per_operation": "distributor, per operation (ns)",
          "tlbi.per_other_node": "per other node (ns)"}
Setting = tuple[float, float, float, float]  # BASE's parameters, in its order


def setting(params: str) -> Setting:
    fields = param_overrides.parse_column(params)
    return tuple(float(fields[name].removesuffix("ns")) if name in fields else 0.0
                 for name in BASE)  # type: ignore[return-value]


def moved(point: Setting) -> list[str]:
    """The parameters this setting moves away from the base."""
    return [name for name, value, base in zip(BASE, point, BASE.values()) if value != base]


def main(folders: style.Folders) -> None:
    frame = folders.load(EXPERIMENT)
    rows = frame[frame["metric"] == "ns_per_iteration"]
    ns: dict[tuple[int, str, Setting], float] = {
        (int(r.nodes), r.variant, setting(r.params)): float(r.value) for r in rows.itertuples()}
    node_counts = sorted({k[0] for k in ns})
    points = sorted({k[2] for k in ns}, key=lambda p: (moved(p), p))
    base = tuple(BASE.values())
    if not any(k[1] == BASELINE for k in ns):
        raise style.NoResults(f"results/{EXPERIMENT}.csv lacks {BASELINE}'s runs: run "
                              f"'python -m experiments run {EXPERIMENT} --variant {BASELINE}'")

    def multiple(nodes: int, point: Setting) -> float:
        return (ns.get((nodes, ARM, point), math.nan)
                / ns.get((nodes, BASELINE, point), math.nan))

    lines = [f"`{EXPERIMENT}` (`results/{EXPERIMENT}.csv`): µs per exit of eight 16 MiB exits "
             "released at once over four N1 cores, broadcasts priced for 80 cores per node; "
             "one layout sample per run; the base setting is 1 ns per target at the "
             "distributor, nothing per operation, 200 ns per other node, no gap between one "
             "core's broadcasts (0 per target: no distributor).", "",
             "| setting | nodes | µs per exit, " + VARIANTS[BASELINE] + " | µs per exit, "
             + VARIANTS[ARM] + " | multiple |", "|---|---:|---:|---:|---:|"]
    for point in points:
        names = moved(point)
        label = ("base" if not names else ", ".join(
            f"{name.removeprefix('tlbi.')} {value:g} ns"
            for name, value in zip(BASE, point) if name in names))
        for nodes in node_counts:
            if (nodes, ARM, point) not in ns and (nodes, BASELINE, point) not in ns:
                continue
            lines.append(f"| {label} | {nodes} | "
                         f"{ns.get((nodes, BASELINE, point), math.nan) / 1e3:,.1f} | "
                         f"{ns.get((nodes, ARM, point), math.nan) / 1e3:,.1f} | "
                         f"{multiple(nodes, point):.2f}x |")
    table = "\n".join(lines) + "\n"

    style.apply()
    fig, axes = style.plt.subplots(1, len(PANELS), squeeze=False, sharey=True,
                                   figsize=(style.FULL_WIDTH_IN, 2.3))
    for p, (axis, (name, label)) in enumerate(zip(axes[0], PANELS.items())):
        index = list(BASE).index(name)
        along = sorted({pt[index] for pt in points
                        if moved(pt) in ([], [name])}, key=float)
        for i, nodes in enumerate(node_counts):
            xs, ys = [], []
            for value in along:
                point = tuple(value if j == index else b for j, b in enumerate(base))
                if (nodes, ARM, point) in ns:
                    xs.append(value)
                    ys.append(multiple(nodes, point))
            if xs:
                axis.plot(xs, ys, marker="os"[i], color=style.PALETTE[i + 1],
                          linestyle=("-", "--")[i],
                          label=nodes_label(nodes))
        axis.axvline(base[index], color="gray", linewidth=0.5, linestyle=":")
        axis.set_xlabel(label)
        axis.set_title(f"({'abc'[p]})", loc="left")
        axis.set_ylim(bottom=0)
    axes[0][0].set_ylabel("no exit opt. / no contpte,\ntime per exit (x)")
    style.legend_on_top(fig, axes[0][0], columns=len(node_counts))
    fig.subplots_adjust(top=0.82, wspace=0.08)
    style.add_note(fig, "gem5: eight 16 MiB exits at once over four N1 cores; one layout "
                   "sample per point; dotted: the base setting; every cost an assumption "
                   "(no hardware figure exists for these parameters)", frame, below=-0.22)
    folders.publish(fig, "c5_contpte_dvm_sweep", table)


if __name__ == "__main__":
    style.run_alone(main)
