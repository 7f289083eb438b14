"""Figure and table: claim C2's vmalloc benchmark, test_vmalloc with
kpkeys-protected page tables, unbatched and batched, real POE and mock.

Reads results/c2-kpkeys-vmalloc.csv; writes plots/out/c2_kpkeys_vmalloc.{pdf,png,md}.
Bars: per test, in the published order (fix_size_alloc_test over p pages, h:0
then h:1; random_size_alloc_test; vm_map_ram_test), each arm's time over
kpkeys-base's on the same CPU (the real-POE arms against the baseline on
the what-if V1 with FEAT_S1POE, the mock arms against it on V1 without).
The time is what the module measures itself (its "avg: N usec",
the published measure). The simulated region also holds loading the module and
unloading it after its init fails on purpose, during which the guest is
mostly idle, so the table gives the region's active cycles (idle cycles are
not counted) rather than its simulated time, with its instructions and
serialising instructions. One run per point: the layout's spread is not
sampled (the fork's was below 1% in c2-kpkeys). The published work gives the
shape only, so no hardware numbers stand beside these.
"""

from __future__ import annotations

import pandas as pd

from plots import style
from plots.c2_kpkeys import ARMS

BASELINE = "kpkeys-base"
MEASURE = "kernel_timed_us"  # the module's own time for its loops, the published measure
# Whole-region counters for the table: (metric, heading, scale, unit suffix).
REGION = (("cycles", "region cycles", 1e6, " M"),
          ("instructions", "region instructions", 1e6, " M"),
          ("serializing_instructions", "region serialising instructions", 1e3, " k"))


def tests(frame: pd.DataFrame) -> list[str]:
    """The workloads in the published order: fix_size by h then p, the others after."""
    def order(name: str) -> tuple[int, int, int]:
        test, pages, huge = name.split("-")
        return (0 if test == "fix_size" else 1 if test == "random_size" else 2,
                int(huge.removeprefix("h")), int(pages.removeprefix("p")))
    return sorted(set(frame["workload"]), key=order)


# Short names under the bars (the table gives the module's).
SHORT = {"fix_size": "fix", "random_size": "random", "vm_map_ram": "map_ram"}


def label(workload: str) -> str:
    test, pages, huge = workload.split("-")
    return f"{SHORT[test]}\n{pages.replace('p', 'p:')} {huge.replace('h', 'h:')}"


def value(frame: pd.DataFrame, metric: str, variant: str, features: str,
          workload: str) -> float:
    rows = frame[(frame["metric"] == metric) & (frame["variant"] == variant)
                 & (frame["features"] == features) & (frame["workload"] == workload)]
    return style.median_interval(list(rows["value"].astype(float)))[0]


def overhead(frame: pd.DataFrame, variant: str, features: str, workload: str,
             metric: str) -> float:
    return 100 * (value(frame, metric, variant, features, workload)
                  / value(frame, metric, BASELINE, features, workload) - 1)


def table(frame: pd.DataFrame, workloads: list[str]) -> str:
    lines = ["Neoverse-V1 model; real-POE arms on a what-if V1 with FEAT_S1POE, mock arms "
             "(CONTEXTIDR_EL1 for POR_EL1) on V1 without, each beside kpkeys-base on the "
             "same CPU. test_vmalloc's "
             "own time for all its loops, and the arm's over kpkeys-base's; then the whole "
             "simulated region (loading and unloading the module included): active cycles, "
             "instructions and serialising instructions, each with the arm's change.", "",
             "| test | kernel | CPU | loops | test µs | vs kpkeys-base | "
             + " | ".join(f"{heading} | vs base" for _, heading, _, _ in REGION) + " |",
             "|---|---|---|---:|---:|---:|" + "---:|---:|" * len(REGION)]
    rows = [(BASELINE, "baseline", "pac+pan+poe"), (BASELINE, "baseline", "pac+pan")]
    rows += list(ARMS)
    for workload in workloads:
        for variant, _, features in rows:
            loops = round(value(frame, "sim_ns", variant, features, workload)
                          / value(frame, "ns_per_iteration", variant, features, workload))
            cells = [f"{value(frame, MEASURE, variant, features, workload):,.0f}",
                     change(frame, variant, features, workload, MEASURE)]
            for metric, _, scale, unit in REGION:
                cells += [f"{value(frame, metric, variant, features, workload) / scale:,.2f}"
                          f"{unit}", change(frame, variant, features, workload, metric)]
            test, pages, huge = workload.split("-")
            cpu = "V1 + POE" if "poe" in features else "V1"
            lines.append(f"| {test} {pages.replace('p', 'p:')} {huge.replace('h', 'h:')} | "
                         f"{variant} | {cpu} | {loops:,} | "
                         + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def change(frame: pd.DataFrame, variant: str, features: str, workload: str,
           metric: str) -> str:
    return ("" if variant == BASELINE
            else f"{overhead(frame, variant, features, workload, metric):+.1f}%")


def main(folders: style.Folders) -> None:
    frame = folders.load("c2-kpkeys-vmalloc")
    workloads = tests(frame)
    fig, ax = style.figure(width=style.COLUMN_WIDTH_IN * 1.6, height=2.4)
    style.grouped_bars(ax, [label(w) for w in workloads],
                       {label: [overhead(frame, variant, features, w, MEASURE)
                                for w in workloads]
                        for variant, label, features in ARMS}, tick_fontsize=5)
    ax.axhline(0, color="black", linewidth=0.5)
    ax.set_ylabel("test_vmalloc time vs.\nkpkeys-base (% more)")
    fig.subplots_adjust(top=0.8)
    style.legend_on_top(fig, ax, 2)
    style.add_note(fig, "Neoverse-V1 model; POE arms on a what-if V1 with FEAT_S1POE, mock "
                   "arms (CONTEXTIDR_EL1 for POR_EL1) on V1 without,\neach against "
                   "kpkeys-base on the same CPU. The module's own "
                   "time for its loops, one run per bar (no spread\nsampled). fix: "
                   "fix_size_alloc_test, random: random_size_alloc_test, map_ram: "
                   "vm_map_ram_test; p: pages, h:1 vmalloc_huge\n(on 6.12 the h:0 path "
                   "below 2 MiB). The published work gives the shape only: no hardware "
                   "numbers to draw beside these.", frame, below=-0.25)
    folders.publish(fig, "c2_kpkeys_vmalloc", table(frame, workloads))


if __name__ == "__main__":
    style.run_alone(main)
