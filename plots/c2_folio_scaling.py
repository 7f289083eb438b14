"""Figure: how the unprotected kernel's fork and munmap scale from page-size
folios to larger ones, the model beside a published hardware measurement
(claim C2's independent check of its baseline).

Reads the kpkeys-base rows on the V1 model without POE of
results/c2-kpkeys.csv and results/c2-kpkeys-64k.csv (4 KiB against 64 KiB
folios: 32 MiB forked four times, 16 MiB unmapped four times) and of
results/checks/kpkeys-1g/c2-kpkeys-1g.csv (4 KiB against PTE-mapped 2 MiB
folios: 1 GiB forked or unmapped once, micromm's size), and the Xeon figures
of published.toml's [c2.folio_scaling]; writes
plots/out/c2_folio_scaling.{pdf,png,md}. A bar is the larger folios' time per
call over the 4 KiB folios' time, each layout sample against the same
sample: the median and the samples' range. Ratios, not times, are compared:
the hardware is an x86-64 Xeon.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from plots import style

BASELINE = "kpkeys-base"
FEATURES = "pac+pan"
CHECK = "checks/kpkeys-1g/c2-kpkeys-1g.csv"
CHECK_COMMAND = ("python -m experiments --definitions experiments/definitions/checks run "
                 "c2-kpkeys-1g --variant kpkeys-base --features pan,pac")
SAMPLES = range(3)
# (folio size, its label, the results holding it, the 4 KiB and the larger
# folios' workload in them, the sizes the model's runs work on)
SIZES = (("64k", "64 KiB folios", ("c2-kpkeys", "c2-kpkeys-64k"),
          {"fork": ("fork-4k", "fork-64k"), "munmap": ("munmap-4k", "munmap-64k")},
          {"fork": "32 MiB x4", "munmap": "16 MiB x4"}),
         ("pmd", "2 MiB folios,\nPTE-mapped", ("c2-kpkeys-1g",),
          {"fork": ("fork-4k-1g", "fork-pmd-1g"), "munmap": ("munmap-4k-1g", "munmap-pmd-1g")},
          {"fork": "1 GiB once", "munmap": "1 GiB once"}))
CALLS = ("fork", "munmap")


def drawn_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The unprotected kernel's rows on the V1 model without POE."""
    return frame[(frame["variant"] == BASELINE) & (frame["features"] == FEATURES)]


def ns_by_sample(frame: pd.DataFrame, workload: str) -> dict[int, float]:
    rows = frame[(frame["metric"] == "ns_per_iteration") & (frame["workload"] == workload)]
    return {int(s): float(v) for s, v in zip(rows["sample"], rows["value"])}


def load(folders: style.Folders) -> dict[str, pd.DataFrame]:
    """Per folio size, the drawn rows of the results holding it (the committed
    experiments' and the check's)."""
    by_name = {name: folders.load(name) for name in ("c2-kpkeys", "c2-kpkeys-64k")}
    by_name[Path(CHECK).stem] = folders.load_check(CHECK, CHECK_COMMAND)
    return {size: drawn_rows(pd.concat([by_name[name] for name in results],
                                       ignore_index=True))
            for size, _, results, _, _ in SIZES}


def model_ratios(frames: dict[str, pd.DataFrame]
                 ) -> dict[tuple[str, str], tuple[float, float, float, float]]:
    """(folio size, call) -> the model's ratio to 4 KiB folios over layout samples."""
    ratios = {}
    for size, _, results, workloads, _ in SIZES:
        for call in CALLS:
            small, large = (ns_by_sample(frames[size], w) for w in workloads[call])
            if not set(SAMPLES) <= small.keys() & large.keys():
                raise style.NoResults(f"{', '.join(results)} lack some of {workloads[call]}'s "
                                      f"{len(SAMPLES)} layout samples (the check: "
                                      f"'{CHECK_COMMAND} --sample K')")
            ratios[size, call] = style.paired_ratio(large, small)
    return ratios


def hardware() -> tuple[str, dict[tuple[str, str], float]]:
    """The published machine's label and its ratio to 4 KiB folios per (size, call)."""
    xeon = style.published()["c2"]["folio_scaling"]
    return xeon["label"], {(size, call): xeon[f"{call}_{size}"] / xeon[f"{call}_4k"]
                           for size, *_ in SIZES for call in CALLS}


def table(frames: dict[str, pd.DataFrame],
          ratios: dict[tuple[str, str], tuple[float, float, float, float]],
          label: str, published: dict[tuple[str, str], float]) -> str:
    lines = ["| call | folios | model's sizes | model, 4 KiB folios (µs per call) | "
             "model, larger folios (µs per call) | model, ratio (samples' range) | "
             f"{label}, ratio |", "|---|---|---|---:|---:|---:|---:|"]
    for call in CALLS:
        for size, title, _, workloads, sizes in SIZES:
            small, large = (style.median_interval(list(ns_by_sample(frames[size], w).values()))[0]
                            for w in workloads[call])
            median, low, high, _ = ratios[size, call]
            lines.append(f"| {call} | {title.replace(chr(10), ' ')} | {sizes[call]} | "
                         f"{small / 1e3:,.1f} | {large / 1e3:,.1f} | {median:.2f}x "
                         f"({low:.2f}-{high:.2f}) | {published[size, call]:.2f}x |")
    return "\n".join(lines) + "\n"


def main(folders: style.Folders) -> None:
    frames = load(folders)
    ratios = model_ratios(frames)
    label, published = hardware()
    style.apply()
    fig, axes = style.plt.subplots(1, len(CALLS), figsize=(style.COLUMN_WIDTH_IN, 2.4),
                                   sharey=True)
    x = np.arange(len(SIZES))
    width = 0.38
    hw_colour, hw_hatch = style.HARDWARE_STYLES[0]
    for axis, call in zip(axes, CALLS):
        heights, errors = style.error_bars([ratios[size, call] for size, *_ in SIZES])
        axis.bar(x - width / 2, heights, width, label="gem5: Neoverse-V1, kpkeys-base",
                 color=style.PALETTE[1], hatch=style.HATCHES[1], edgecolor="black",
                 linewidth=0.4, yerr=errors, error_kw={"elinewidth": 0.6, "capsize": 1.5})
        axis.bar(x + width / 2, [published[size, call] for size, *_ in SIZES], width,
                 label=f"published: {label}", color=hw_colour, hatch=hw_hatch,
                 edgecolor="black", linewidth=0.4)
        axis.set_xticks(x, [title for _, title, *_ in SIZES], fontsize=6)
        axis.axhline(1, color="black", linewidth=0.5, linestyle=":")
        axis.set_title(f"({'ab'[CALLS.index(call)]}) {call}", loc="left")
    axes[0].set_ylabel("time per call vs.\n4 KiB folios (x)")
    style.legend_on_top(fig, axes[0], columns=1)
    fig.subplots_adjust(top=0.74, wspace=0.08)
    frame = pd.concat(frames.values(), ignore_index=True)
    frame = frame[frame["workload"].isin({w for *_, workloads, _ in SIZES
                                          for pair in workloads.values() for w in pair})]
    style.add_note(fig, "gem5: the unprotected kpkeys-base kernel on the V1 model; 64 KiB: "
                   "32 MiB forked and 16 MiB unmapped four times (full detail), 2 MiB: 1 GiB "
                   "once (set-up fast-forwarded); medians of three layout samples, each "
                   "against its own 4 KiB run, whiskers their range. Published: 1 GiB once, x86-64.", frame, below=-0.2)
    folders.publish(fig, "c2_folio_scaling", table(frames, ratios, label, published))


if __name__ == "__main__":
    style.run_alone(main)
