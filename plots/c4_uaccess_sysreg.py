"""Figure and table: claim C4's toggle cost as the toggle writes' timing varies.

Reads results/c4-uaccess-sysreg.csv; writes plots/out/c4_uaccess_sysreg.{pdf,png,md}.
On the Cortex-A76 model and the 4000-byte-path faccessat loop, each variant's
toggle cost (ns per call over baseline under the same timing) with the
TTBR0_EL1/TTBR1_EL1 writes (software PAN) or the PSTATE.PAN writes (PAN
toggling) timed by gem5's drain, relaxed, or made longer.
"""

from __future__ import annotations

import math

import numpy as np

from hardening import param_overrides
from plots import style

BASELINE = "baseline"
WORKLOAD = "longpath"
VARIANTS = {
    "swpan-batched": "SW PAN, batched",
    "swpan-per-access": "SW PAN, per access",
    "pan-batched": "PAN toggle, batched",
    "pan-per-access": "PAN toggle, per access",
}


def timing_label(params: str) -> str:
    """A short name for one parameter set of the experiment."""
    if not params:
        return "model default (gem5 drain)"
    fields = param_overrides.parse_column(params)
    register = "TTBR0/1" if "sysreg.ttbr.regs" in fields else "PAN"
    prefix = "sysreg.ttbr." if register == "TTBR0/1" else "sysreg.pan."
    relaxed = fields.get(prefix + "write_serialize") == "false"
    latency = int(fields.get(prefix + "write_latency", 0))
    label = f"{register} {'relaxed' if relaxed else 'drain'}"
    return label + (f" +{latency} cycles" if latency else "")


def main(folders: style.Folders) -> None:
    frame = folders.load("c4-uaccess-sysreg")
    rows = frame[(frame["metric"] == "ns_per_iteration") & (frame["workload"] == WORKLOAD)]
    ns: dict[tuple[str, str], float] = {}
    order: list[str] = []
    for r in rows.itertuples():
        params = r.params if isinstance(r.params, str) else ""
        label = timing_label(params)
        if label not in order:
            order.append(label)
        ns[(label, r.variant)] = float(r.value)
    order.sort(key=lambda t: (not t.startswith("model"), not t.startswith("TTBR"), t))

    lines = [f"Toggle cost on the Cortex-A76 model, {WORKLOAD} workload: ns per call over "
             "baseline under the same timing (one layout sample each).", "",
             "| toggle-write timing | baseline ns/call | "
             + " | ".join(VARIANTS.values()) + " |",
             "|---|---:|" + "---:|" * len(VARIANTS)]
    costs: dict[str, list[float]] = {}
    for timing in order:
        base = ns.get((timing, BASELINE), math.nan)
        cells = []
        for variant in VARIANTS:
            value = ns.get((timing, variant))
            cost = value - base if value is not None else math.nan
            costs.setdefault(variant, []).append(cost)
            cells.append("—" if math.isnan(cost) else f"{cost:+.0f}")
        lines.append(f"| {timing} | {base:.0f} | " + " | ".join(cells) + " |")
    table = "\n".join(lines) + "\n"

    style.apply()
    fig, axes = style.plt.subplots(1, 2, figsize=(style.FULL_WIDTH_IN, 2.4))
    panels = (("TTBR0/1", ("swpan-batched", "swpan-per-access"),
               "software PAN: TTBR0/TTBR1 write timing"),
              ("PAN", ("pan-batched", "pan-per-access"), "PAN toggling: PSTATE.PAN write timing"))
    for n, (axis, (register, variants, title)) in enumerate(zip(axes, panels)):
        timings = [t for t in order if t.startswith("model") or t.startswith(register + " ")]
        x = np.arange(len(timings))
        width = 0.8 / len(variants)
        for i, variant in enumerate(variants):
            heights = [costs[variant][order.index(t)] for t in timings]
            colour = list(VARIANTS).index(variant) + 1
            axis.bar(x - 0.4 + (i + 0.5) * width, heights, width, label=VARIANTS[variant],
                     color=style.PALETTE[colour], hatch=style.HATCHES[colour],
                     edgecolor="black", linewidth=0.4)
        axis.set_yscale("log")
        low, high = axis.get_ylim()
        axis.set_ylim(low, high * 8)  # room for the legend
        axis.set_xticks(x, [t.replace("model default (gem5 drain)", "default\n(gem5 drain)")
                            .replace(register + " ", "").replace(" +", "\n+")
                            for t in timings], fontsize=6)
        axis.set_title(f"({'ab'[n]}) {title}", loc="left")
        axis.legend(loc="upper left", frameon=False, fontsize=6)
    axes[0].set_ylabel("toggle cost over baseline (ns per call)")
    fig.subplots_adjust(wspace=0.25)
    style.add_note(fig, "Cortex-A76 model, faccessat() of a 4000-byte path; one layout "
                   "sample per bar (c4-uaccess gives the spread of the default timing).",
                   frame, below=-0.10)
    folders.publish(fig, "c4_uaccess_sysreg", table)


if __name__ == "__main__":
    style.run_alone(main)
