"""Figure: ns per system call on the Cortex-A76 model, PAN off and on.

Reads results/syscall.csv; writes plots/out/syscall.{pdf,png}. The published
Pixel 4 (Cortex-A76) invalid-syscall baseline of claim C1 stands beside the
simulated bars (a different kernel, 4.14, and a 2.84 GHz/powersave phone).
"""

from __future__ import annotations

import numpy as np

from plots import style

WORKLOADS = ("invalid", "getppid")
FEATURE_LABELS = {"none": "PAN off", "pan": "PAN on"}


def main(folders: style.Folders) -> None:
    frame = folders.load("syscall")
    data = frame[(frame["metric"] == "ns_per_iteration") & (frame["core"] == "cortex-a76")
                 & (frame["variant"] == "baseline")].copy()
    data["value"] = data["value"].astype(float)
    grouped = data.groupby(["workload", "features"])["value"].agg(["mean", "std", "count"])

    fig, ax = style.figure()
    width = 0.27
    x = np.arange(len(WORKLOADS))
    for i, (feature, label) in enumerate(FEATURE_LABELS.items()):
        means = [grouped.loc[(w, feature), "mean"] if (w, feature) in grouped.index else np.nan
                 for w in WORKLOADS]
        errors = [grouped.loc[(w, feature), "std"] if (w, feature) in grouped.index
                  and grouped.loc[(w, feature), "count"] > 1 else 0 for w in WORKLOADS]
        bars = ax.bar(x + (i - 1) * width, means, width,
                      yerr=errors if any(errors) else None, capsize=2,
                      label=f"gem5 {label}", color=style.PALETTE[i + 1],
                      hatch=style.HATCHES[i + 1], edgecolor="black", linewidth=0.5)
        ax.bar_label(bars, fmt="%.0f", fontsize=6, padding=1)
    pixel4 = style.published()["c1"]["pixel4"]
    hw = ax.bar([x[0] + width], [pixel4["baseline"]], width, color=style.HARDWARE_COLOUR,
                hatch=style.HARDWARE_HATCH, edgecolor="black", linewidth=0.5,
                label="Pixel 4 (A76, Linux 4.14), published")
    ax.bar_label(hw, fmt="%.0f", fontsize=6, padding=1)
    ax.set_xticks(x, ["invalid syscall", "getppid()"])
    ax.set_ylabel("time per system call (ns)")
    ax.set_ylim(0, ax.get_ylim()[1] * 1.45)  # room for the legend above the bars
    ax.legend(loc="upper left", frameon=False, fontsize=6)
    ax.set_title("Cortex-A76 model, baseline Linux 6.12", loc="left")
    style.add_provenance(fig, data)
    folders.publish(fig, "syscall")


if __name__ == "__main__":
    style.run_alone(main)
