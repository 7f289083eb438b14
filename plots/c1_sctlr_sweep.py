"""Figure: claim C1 sensitivity, ns per invalid syscall as an SCTLR_EL1 write
costs more, on the Cortex-A76 model with the sctlr-uncond kernel.

Reads results/c1-sctlr-sweep.csv (the sweep) and results/c1-sctlr.csv (the
same core's baseline, for reference lines); writes
plots/out/c1_sctlr_sweep.{pdf,png}. Reference lines: the simulated C1
baseline (no switching), that baseline plus the published single-write cost
(0.7 ns, Pixel 4), and that baseline plus the published relative overhead of
the unconditional write (Pixel 4 table).
"""

from __future__ import annotations

import pandas as pd

from hardening import param_overrides
from plots import style

CORE = "cortex-a76"
WORKLOAD = "invalid"
SINGLE_WRITE_NS = 0.7  # docs/published-claims.md C1: exit-only write about 0.7 ns (Pixel 4)


def setting(params: str) -> dict[str, str]:
    values = param_overrides.parse_column(params)
    return {k.removeprefix("sysreg.sctlr."): v for k, v in values.items()}


def label_and_order(params: str) -> tuple[str, float]:
    """The x-axis label of one sweep point and where it goes (cost order)."""
    s = setting(params)
    if s.get("write_serialize") == "true":
        return "full\ndrain", 1e6
    if s.get("write_nonspeculative") == "true":
        return "ROB\nhead", 1e5
    latency = int(s.get("write_latency", "0"))
    return (f"+{latency}" if latency else "free"), latency


def main(folders: style.Folders) -> None:
    sweep = folders.load("c1-sctlr-sweep")
    rows = sweep[(sweep["metric"] == "ns_per_iteration") & (sweep["core"] == CORE)].copy()
    rows["value"] = rows["value"].astype(float)
    rows[["label", "order"]] = rows["params"].apply(
        lambda p: pd.Series(label_and_order(p)))
    rows = rows.sort_values("order")

    c1 = folders.load("c1-sctlr")
    ns = c1[(c1["metric"] == "ns_per_iteration") & (c1["core"] == CORE)
            & (c1["workload"] == WORKLOAD)].set_index("variant")["value"].astype(float)
    pixel4 = style.published()["c1"]["pixel4"]
    published_ratio = pixel4["uncond_msr"] / pixel4["baseline"]

    fig, ax = style.figure(height=2.4)
    # Extra cycles on a relaxed write form a line; the two serializing modes
    # are other kinds of cost and stand apart, unconnected.
    relaxed = rows[rows["order"] < 1e5]
    serializing = rows[rows["order"] >= 1e5]
    x_relaxed = list(range(len(relaxed)))
    x_serializing = [len(relaxed) + 0.5 + i for i in range(len(serializing))]
    ax.plot(x_relaxed, relaxed["value"], marker="o", color=style.PALETTE[1], linewidth=1,
            label="gem5 A76, sctlr-uncond: relaxed write + extra cycles")
    ax.plot(x_serializing, serializing["value"], marker="s", linestyle="none",
            color=style.PALETTE[2], label="gem5 A76, sctlr-uncond: serializing write")
    if "sctlr-none" in ns:
        base = ns["sctlr-none"]
        ax.axhline(base, color="black", linestyle=":", linewidth=0.8,
                   label="gem5 A76, baseline (no switching)")
        ax.axhline(base + SINGLE_WRITE_NS, color=style.PALETTE[3], linestyle="--",
                   linewidth=0.8, label="baseline + 0.7 ns (Pixel 4 single write)")
        ax.axhline(base * published_ratio, color=style.HARDWARE_COLOUR, linestyle="-.",
                   linewidth=0.8, label=f"baseline x {published_ratio:.3f} (Pixel 4 table)")
    ax.set_xticks(x_relaxed + x_serializing, list(rows["label"]), fontsize=6)
    style.sweep_labels(ax, "SCTLR_EL1 write: extra cycles, or how it serializes",
                       "time per invalid syscall (ns)",
                       "Cortex-A76 model: SCTLR_EL1 write cost", headroom=0.6,
                       from_zero=False, legend_size=5.5)
    style.add_provenance(fig, pd.concat([rows, c1]))
    folders.publish(fig, "c1_sctlr_sweep")


if __name__ == "__main__":
    style.run_alone(main)
