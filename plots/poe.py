"""Figure: what protection keys cost on FEAT_S1POE, per core model.

Reads results/poe.csv; writes plots/out/poe.{pdf,png,md}. Bars: ns per
pkey_set() (MRS + MSR POR_EL0 + ISB) and per access denied by the key's
overlay (fault, SIGSEGV with SEGV_PKUERR, handler, sigreturn), beside the
same denial through page permissions (PROT_NONE), each with the model's POR
write timing (gem5's own: the MSR drains the pipeline) and with a relaxed,
free write. No shipping core implements POE, so there is no
hardware number to stand beside these: the figure says so.
"""

from __future__ import annotations

import pandas as pd

from plots import style

WORKLOADS = (("set", "pkey_set()"), ("deny-pkey", "denied by\npkey overlay"),
             ("deny-prot", "denied by\nPROT_NONE"))
TIMINGS = (("", "POR write drains (gem5 timing, model default)"),
           ("relaxed", "POR write relaxed, free"))


def timing_of(params: str) -> str:
    return "relaxed" if "sysreg.por.write_serialize=false" in params.split() else ""


def table(rows: pd.DataFrame) -> str:
    lines = ["| core | POR write timing | pkey_set() (ns) | pkey-denied access (ns) | "
             "PROT_NONE-denied access (ns) |", "|---|---|---:|---:|---:|"]
    for (core, timing), group in rows.groupby(["core", "timing"], sort=True):
        ns = group.set_index("workload")["value"]
        label = dict(TIMINGS)[timing]
        lines.append(f"| {core} | {label} | {ns.get('set', float('nan')):.2f} | "
                     f"{ns.get('deny-pkey', float('nan')):.0f} | "
                     f"{ns.get('deny-prot', float('nan')):.0f} |")
    return "\n".join(lines) + "\n"


def main(folders: style.Folders) -> None:
    frame = folders.load("poe")
    rows = frame[frame["metric"] == "ns_per_iteration"].copy()
    rows["value"] = rows["value"].astype(float)
    rows["timing"] = rows["params"].apply(timing_of)
    cores = sorted(rows["core"].unique())

    fig, axes = style.figure(width=style.FULL_WIDTH_IN, height=2.2)
    fig.clf()
    panels = fig.subplots(1, len(WORKLOADS))
    for ax, (workload, title) in zip(panels, WORKLOADS):
        style.grouped_bars(ax, cores, {
            label: [rows[(rows["core"] == c) & (rows["workload"] == workload)
                         & (rows["timing"] == timing)]["value"].mean() for c in cores]
            for timing, label in TIMINGS})
        ax.set_title(title.replace("\n", " "), loc="left")
    panels[0].set_ylabel("time per operation (ns)")
    fig.subplots_adjust(wspace=0.3, top=0.78)
    style.legend_on_top(fig, panels[0], len(TIMINGS))
    fig.text(0.5, -0.02, "No core ships FEAT_S1POE: no hardware numbers exist to compare.",
             ha="center", fontsize=6)
    style.add_provenance(fig, rows)
    folders.publish(fig, "poe", table(rows))


if __name__ == "__main__":
    style.run_alone(main)
