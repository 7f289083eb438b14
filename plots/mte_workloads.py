"""Figure and table: what MTE costs whole programs on the Cortex-X3 model, in
each tag-check mode, beside the one whole-loop measurement published for the
Pixel 8's Cortex-X3.

Reads results/mte-workloads.csv; writes plots/out/mte_workloads.{pdf,png,md}.
Four programs (experiments/definitions/mte-workloads.toml): random accesses to
tagged objects, allocation churn over a tagging allocator, a key-value store
over it, and a memset into tagged memory. Each runs untagged (plain memory,
nothing tagged: the program without MTE), with tags and checks off (none),
and in sync, async and asymm modes, over layout samples. The figure draws
each mode's time per operation over the same sample's untagged run (median
and interval over the samples); the published memset overheads (FINK-MSC,
plots/published.toml [mte_workloads]) are over checks off, so the table gives
both baselines, and the counters that explain the model's costs.
"""

from __future__ import annotations

import math

import pandas as pd

from plots import style

EXPERIMENT = "mte-workloads"
PROGRAMS = (("access", "random object\naccess"), ("churn", "allocator\nchurn"),
            ("kv", "key-value\nstore"), ("memset", "memset"))
MODES = ("untagged", "none", "sync", "async", "asymm")
CHECKED = ("sync", "async", "asymm")
# Per operation, from each run's region counters.
COUNTERS = (("instructions", "instructions"), ("serializing_instructions", "serialized"),
            ("serialize_stall_cycles", "serialize-stall cycles"),
            ("l1d_misses", "L1D misses"), ("tag_checked_misses", "tag-checked misses"),
            ("sync_checked_stores", "SYNC stores held"),
            ("sync_check_stall_cycles", "commit waits for them (cycles)"))


def samples(frame: pd.DataFrame, workload: str, metric: str) -> dict[int, float]:
    """{layout sample: value} of one metric of one workload's runs."""
    rows = frame[(frame["workload"] == workload) & (frame["metric"] == metric)]
    return {int(s): float(v) for s, v in zip(rows["sample"], rows["value"])}


def per_operation(frame: pd.DataFrame, workload: str, metric: str) -> float:
    """A region counter divided by the run's operations, median over samples."""
    counts = samples(frame, workload, metric)
    operations = samples(frame, workload, "iterations")
    ratios = [counts[s] / operations[s] for s in counts if operations.get(s)]
    return style.median_interval(ratios)[0] if ratios else math.nan


def overhead(frame: pd.DataFrame, program: str, mode: str, baseline: str
             ) -> tuple[float, float, float, float]:
    """(median, low, high, coverage) of mode / baseline - 1, in percent,
    each sample against the same sample."""
    median, low, high, coverage = style.paired_ratio(
        samples(frame, f"{program}-{mode}", "ns_per_iteration"),
        samples(frame, f"{program}-{baseline}", "ns_per_iteration"))
    return (100 * (median - 1), 100 * (low - 1), 100 * (high - 1), coverage)


def cell(spread: tuple[float, float, float, float]) -> str:
    median, low, high, coverage = spread
    if math.isnan(median):
        return "—"
    if coverage == 0.0:
        return f"{median:+.2f}%"
    return f"{median:+.2f}% [{low:+.2f}, {high:+.2f}]"


def published_memset() -> list[dict]:
    return style.published().get("mte_workloads", {}).get("memset", [])


def table(frame: pd.DataFrame) -> str:
    sample_count = frame["sample"].astype(str).nunique()
    lines = [f"Cortex-X3 model, ns per operation (median of {sample_count} layout samples):",
             "", "| program | " + " | ".join(MODES) + " |", "|---|" + "---:|" * len(MODES)]
    for program, _ in PROGRAMS:
        cells = []
        for mode in MODES:
            values = list(samples(frame, f"{program}-{mode}", "ns_per_iteration").values())
            median = style.median_interval(values)[0]
            cells.append("—" if math.isnan(median) else f"{median:.2f}")
        lines.append(f"| {program} | " + " | ".join(cells) + " |")
    lines += ["", "Each mode over the program without MTE (untagged) and over tags with checks "
              "off (none), paired by layout sample: median [interval].", "",
              "| program | baseline | none | sync | async | asymm |", "|---|---|---:|---:|---:|---:|"]
    for program, _ in PROGRAMS:
        cells = [cell(overhead(frame, program, mode, "untagged")) for mode in ("none", *CHECKED)]
        lines.append(f"| {program} | untagged | " + " | ".join(cells) + " |")
        cells = [cell(overhead(frame, program, mode, "none")) for mode in CHECKED]
        lines.append(f"| {program} | none | | " + " | ".join(cells) + " |")
    lines += ["", "Published, memset of 128 MiB into PROT_MTE memory on the Pixel 8, over checks "
              "off:", "", "| core | mode | overhead | source |", "|---|---|---:|---|"]
    for entry in published_memset():
        lines.append(f"| {entry['hardware']} | {entry['mode']} | {entry['overhead_percent']:+.1f}% "
                     f"| {entry['source']} |")
    lines += ["", "Per operation, median over samples:", "",
              "| program | mode | " + " | ".join(label for _, label in COUNTERS) + " |",
              "|---|---|" + "---:|" * len(COUNTERS)]
    for program, _ in PROGRAMS:
        for mode in MODES:
            cells = [per_operation(frame, f"{program}-{mode}", metric) for metric, _ in COUNTERS]
            lines.append(f"| {program} | {mode} | "
                         + " | ".join("—" if math.isnan(c) else f"{c:.2f}" for c in cells) + " |")
    return "\n".join(lines) + "\n"


def bars(ax: style.plt.Axes, frame: pd.DataFrame, baseline: str) -> None:
    """Each mode's time per operation over the baseline's, per program; every
    mode keeps its place and shade in both panels (none over none is empty)."""
    series, errors = {}, {}
    for mode in BARS:
        heights, yerr = style.error_bars([overhead(frame, program, mode, baseline)
                                          for program, _ in PROGRAMS])
        if mode == baseline:
            heights = [math.nan] * len(heights)
        series[LABELS[mode]], errors[LABELS[mode]] = heights, yerr
    style.grouped_bars(ax, [name for _, name in PROGRAMS], series, errors, tick_fontsize=6)
    ax.axhline(0, color="black", linewidth=0.5)


BARS = ("none", *CHECKED)
LABELS = {"none": "tags, checks off", "sync": "sync", "async": "async", "asymm": "asymm"}


def main(folders: style.Folders) -> None:
    frame = folders.load(EXPERIMENT).copy()
    frame["value"] = pd.to_numeric(frame["value"], errors="coerce")
    style.apply()
    fig, _ = style.figure(width=style.FULL_WIDTH_IN, height=2.5)
    fig.clf()
    whole, checks = fig.subplots(1, 2)
    bars(whole, frame, "untagged")
    whole.set_ylabel("time per operation (%)")
    whole.set_title("(a) over the program without MTE", loc="left")
    bars(checks, frame, "none")
    checks.set_title("(b) checks alone: over tags with checks off", loc="left")
    # The published memset figures beside the model's sync and async bars.
    width = 0.8 / len(BARS)
    memset = len(PROGRAMS) - 1
    hardware = None
    for entry in published_memset():
        if entry["hardware"] != "Cortex-X3":
            continue
        i = BARS.index(entry["mode"])
        hardware = checks.scatter([memset + (i - (len(BARS) - 1) / 2) * width],
                                  [entry["overhead_percent"]], marker="D", s=16,
                                  color=style.HARDWARE_COLOUR, edgecolor="black",
                                  linewidth=0.5, zorder=3)
    handles, labels = whole.get_legend_handles_labels()
    if hardware is not None:
        handles.append(hardware)
        labels.append("Pixel 8 Cortex-X3, 128 MiB memset (FINK-MSC)")
    fig.legend(handles, labels, loc="upper center", ncol=3, frameon=False, fontsize=6,
               bbox_to_anchor=(0.5, 1.0))
    fig.subplots_adjust(top=0.74, bottom=0.17, wspace=0.25)
    style.add_provenance(fig, frame)
    folders.publish(fig, "mte_workloads", table(frame))


if __name__ == "__main__":
    style.run_alone(main)
