"""Figure and table: our TLB-maintenance model against gem5's Ruby CHI DVM path.

Reads results/checks/dvm-chi/dvm-crosscheck.csv (``python -m experiments
dvm-crosscheck``: a bare-metal loop on gem5's fs.py, core 0 timing rounds of
1 or 16 broadcast ``tlbi vale1is`` and a ``dsb ish`` while the other cores
wait or run the same loop, at 4 to 32 simulated cores); writes
plots/out/c5_dvm_crosscheck.{pdf,png,md}. Each point is one run: the loop
has no memory layout to vary, so repeated runs give the same ticks. Beside
them, the throughput of long runs of DVM operations measured on Altra-class
meshes (published.toml ``[c5.dvm_operation]``; I-cache invalidations by line,
not TLBIs).
"""

from __future__ import annotations

import pandas as pd

from plots import style

CHECK = "checks/dvm-chi/dvm-crosscheck.csv"
CHECK_COMMAND = "python -m experiments dvm-crosscheck"
# Arm, label, in the order drawn (experiments/dvm_crosscheck.py's ARMS).
ARMS = (("gem5", "gem5 (zero-time broadcast)"),
        ("model", "our model, no distributor"),
        ("model-distributor", "our model, distributor"),
        ("ruby-chi", "gem5 Ruby CHI (misc node)"),
        ("ruby-chi-no-dvm", "gem5 Ruby CHI, no DVM"))
MARKERS = ("o", "s", "^", "D", "v")
LINESTYLES = ("-", "--", "-.", ":", (0, (1, 1)))
PEERS = (("idle", "(a) other cores idle"), ("busy", "(b) other cores run the same loop"))


def values(frame: pd.DataFrame, metric: str) -> dict[tuple[str, int, str, int], float]:
    """{(arm, TLBIs per DSB, peers, cores): value} of one metric."""
    rows = frame[frame["metric"] == metric]
    return {(r.arm, int(r.tlbis), r.peers, int(r.cores)): float(r.value)
            for r in rows.itertuples()}


def table(ns_round: dict[tuple[str, int, str, int], float], core_counts: list[int],
          tlbi_counts: list[int]) -> str:
    lines = [f"`python -m experiments dvm-crosscheck` (`results/{CHECK}`): ns per round of "
             "core 0's loop (N broadcast `tlbi vale1is`, one `dsb ish`), one run per point; "
             "in brackets, ns per TLBI.", "",
             "| arm | TLBIs per DSB | other cores | "
             + " | ".join(f"{c} cores" for c in core_counts) + " |",
             "|---|---:|---|" + "---:|" * len(core_counts)]
    for arm, label in ARMS:
        for tlbis in tlbi_counts:
            for peers, _ in PEERS:
                cells = [ns_round.get((arm, tlbis, peers, c)) for c in core_counts]
                if all(v is None for v in cells):
                    continue
                shown = " | ".join("—" if v is None else
                                   (f"{v:,.1f}" if tlbis == 1 else f"{v:,.1f} ({v / tlbis:,.1f})")
                                   for v in cells)
                lines.append(f"| {label} | {tlbis} | {peers} | {shown} |")
    return "\n".join(lines) + "\n"


def main(folders: style.Folders) -> None:
    frame = folders.load_check(CHECK, CHECK_COMMAND)
    ns_round = values(frame, "ns_per_round")
    core_counts = sorted({k[3] for k in ns_round})
    tlbi_counts = sorted({k[1] for k in ns_round})
    drawn_tlbis = max(tlbi_counts)
    hardware = style.published()["c5"]["dvm_operation"]

    style.apply()
    fig, axes = style.plt.subplots(1, len(PEERS), sharey=True,
                                   figsize=(style.FULL_WIDTH_IN, 2.3))
    for axis, (peers, title) in zip(axes, PEERS):
        for i, (arm, label) in enumerate(ARMS):
            points = [(c, ns_round[(arm, drawn_tlbis, peers, c)] / drawn_tlbis)
                      for c in core_counts if (arm, drawn_tlbis, peers, c) in ns_round]
            if not points:
                continue
            axis.plot([c for c, _ in points], [v for _, v in points], label=label,
                      color=style.PALETTE[i], marker=MARKERS[i], linestyle=LINESTYLES[i],
                      linewidth=0.9, markersize=3)
        for value, name, dashes in ((hardware["altra"], "Altra", (4, 2)),
                                    (hardware["altra_max"], "Altra Max", (1, 2))):
            axis.axhline(value, color="#777777", linewidth=0.6, dashes=dashes)
            axis.annotate(f"{name}, I-cache inval. per line", (core_counts[0], value),
                          textcoords="offset points", xytext=(0, 2), fontsize=5,
                          color="#555555")
        axis.set_xscale("log", base=2)
        axis.set_yscale("log")
        axis.set_xticks(core_counts, [str(c) for c in core_counts])
        axis.set_xlabel("simulated cores")
        axis.set_title(title, loc="left")
    axes[0].set_ylabel(f"ns per TLBI, rounds of\n{drawn_tlbis} TLBIs + DSB (log)")
    style.legend_on_top(fig, axes[0], columns=3)
    fig.subplots_adjust(top=0.74, wspace=0.08)
    style.add_note(fig, "gem5 fs.py, generic O3 CPU, bare-metal loop; one run per point "
                   "(deterministic: no layout to vary); our model at claim C5's assumed "
                   "costs; grey lines: published Altra/Altra Max I-cache invalidation per "
                   "line over 512 MiB, a throughput of DVM operations, not TLBIs",
                   frame, below=-0.3)
    folders.publish(fig, "c5_dvm_crosscheck", table(ns_round, core_counts, tlbi_counts))


if __name__ == "__main__":
    style.run_alone(main)
