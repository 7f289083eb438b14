"""Figure: what MTE tag checking costs, per core model and tag-storage timing.

Reads results/mte.csv; writes plots/out/mte.{pdf,png,md}. Bars: ns per random
object access (load the object's pointer, load from it, store to it) in each
tag-check mode, for the two tag-storage timings of gem5-configs'
``mte_timing.py``: ``with_data`` (tags travel with their line, +2 cycles per
tag-checked miss) and ``tag_cache`` (a 32 KiB tag cache in front of a 1/32
DRAM carve-out). The table adds the cost of tagging an object (IRG + 2 x ST2G)
and the tag model's own counters. Cortex-A76 has no MTE; Neoverse V2 has it
in the core, but its one measured part (Graviton4) does not enable it, so no
hardware numbers stand beside these.
"""

from __future__ import annotations

import pandas as pd

from plots import style

MODES = (("untagged", "untagged\nmemory"), ("none", "checks\noff"), ("sync", "sync"),
         ("async", "async"), ("asymm", "asymm"))
TIMINGS = (("with_data", "tags with data (+2 cycles per checked miss)"),
           ("tag_cache", "tag carve-out + 32 KiB tag cache"))
TAG_STATS = ("tag_checked_misses", "tag_cache_misses")


def timing_of(params: str) -> str:
    for timing, _ in TIMINGS:
        if f"mte_tags.mode={timing}" in params.split():
            return timing
    raise ValueError(f"no mte_tags.mode in params '{params}'")


def by_sample(rows: pd.DataFrame, core: str, timing: str, workload: str, metric: str
              ) -> dict[int, float]:
    """One cell's values per layout sample. An untagged loop checks no tags,
    so it runs under one timing only (mte.toml) and stands for both."""
    match = rows[(rows["core"] == core) & (rows["workload"] == workload)
                 & (rows["metric"] == metric)]
    if not workload.endswith("-untagged"):
        match = match[match["timing"] == timing]
    return {int(sample): float(value) for sample, value in zip(match["sample"], match["value"])}


def spread(rows: pd.DataFrame, core: str, timing: str, workload: str
           ) -> tuple[float, float, float, float]:
    """ns per operation over layout samples: median and its interval."""
    return style.median_interval(
        list(by_sample(rows, core, timing, workload, "ns_per_iteration").values()))


def ns(rows: pd.DataFrame, core: str, timing: str, workload: str) -> float:
    return spread(rows, core, timing, workload)[0]


def paired_cost(rows: pd.DataFrame, core: str, timing: str, mode: str
                ) -> tuple[float, float, float]:
    """A mode's access time over checks off, in percent, each layout sample
    against the same sample (both runs share the guest's layout): the median
    and the range over samples."""
    def times(workload: str) -> dict[int, float]:
        return by_sample(rows, core, timing, workload, "ns_per_iteration")

    arm, base = times(f"access-{mode}"), times("access-none")
    costs = [(arm[k] / base[k] - 1) * 100 for k in sorted(set(arm) & set(base))]
    median = style.paired_ratio(arm, base)[0]
    return (median - 1) * 100, min(costs, default=float("nan")), max(costs, default=float("nan"))


def percent(value: float) -> str:
    # round, then add 0.0 so a tiny negative prints +0.0, not -0.0
    return f"{round(value, 1) + 0.0:+.1f}"


def table(rows: pd.DataFrame) -> str:
    samples = rows["sample"].astype(str).nunique()
    lines = [(f"Medians of {samples} layout samples per cell." if samples > 1
              else "One layout sample per cell."), "",
             "| core | tag timing | " + " | ".join(f"access, {m} (ns)" for m, _ in MODES)
             + " | tag an object, none (ns) | tag, untagged loop (ns) |",
             "|---|---|" + "---:|" * (len(MODES) + 2)]
    for core in sorted(rows["core"].unique()):
        for timing, label in TIMINGS:
            cells = [f"{ns(rows, core, timing, f'access-{m}'):.2f}" for m, _ in MODES]
            cells += [f"{ns(rows, core, timing, w):.2f}" for w in ("tag-none", "tag-untagged")]
            lines.append(f"| {core} | {timing} | " + " | ".join(cells) + " |")
    checked = [m for m, _ in MODES if m != "none"]
    lines += ["", "Each mode's access time over checks off (%), paired by layout sample: "
              "median [range over samples].", "",
              "| core | tag timing | " + " | ".join(checked) + " |",
              "|---|---|" + "---:|" * len(checked)]
    for core in sorted(rows["core"].unique()):
        for timing, _ in TIMINGS:
            cells = [paired_cost(rows, core, timing, m) for m in checked]
            lines.append(f"| {core} | {timing} | " + " | ".join(
                f"{percent(mid)} [{percent(low)}, {percent(high)}]" if samples > 1
                else percent(mid) for mid, low, high in cells) + " |")
    lines += ["", "Per measured access, sync mode: what the tag model saw (medians over samples).", "",
              "| core | tag timing | memory reads | tag-checked misses | tag reads |",
              "|---|---|---:|---:|---:|"]
    for core in sorted(rows["core"].unique()):
        for timing, _ in TIMINGS:
            cells = [per_access(rows, core, timing, m)
                     for m in ("memory_reads", "tag_checked_misses", "tag_reads")]
            lines.append(f"| {core} | {timing} | " + " | ".join(f"{c:.3f}" for c in cells) + " |")
    return "\n".join(lines) + "\n"


def per_access(rows: pd.DataFrame, core: str, timing: str, metric: str) -> float:
    """A counter of the sync access run per access: each run's count over its
    own operations, the median over layout samples."""
    count = by_sample(rows, core, timing, "access-sync", metric)
    operations = by_sample(rows, core, timing, "access-sync", "iterations")
    per_run = [count[k] / operations[k] for k in sorted(set(count) & set(operations))]
    return style.median_interval(per_run)[0] if per_run else float("nan")


def main(folders: style.Folders) -> None:
    frame = folders.load("mte")
    rows = frame.copy()
    rows["value"] = pd.to_numeric(rows["value"], errors="coerce")
    rows["timing"] = rows["params"].apply(timing_of)
    cores = sorted(rows["core"].unique())

    fig, _ = style.figure(width=style.FULL_WIDTH_IN, height=2.3)
    fig.clf()
    panels = fig.subplots(1, len(cores), squeeze=False)[0]
    for ax, core in zip(panels, cores):
        cells = {label: style.error_bars([spread(rows, core, timing, f"access-{mode}")
                                          for mode, _ in MODES])
                 for timing, label in TIMINGS}
        sampled = rows["sample"].astype(str).nunique() > 1
        style.grouped_bars(ax, [name for _, name in MODES],
                           {label: heights for label, (heights, _) in cells.items()},
                           {label: errors for label, (_, errors) in cells.items()}
                           if sampled else None)
        ax.set_title(core, loc="left")
    panels[0].set_ylabel("time per random object access (ns)")
    fig.subplots_adjust(wspace=0.25, top=0.8, bottom=0.2)
    style.legend_on_top(fig, panels[0], len(TIMINGS))
    fig.text(0.5, -0.04, "Cortex-A76 has no MTE; Neoverse V2 has it, but Graviton4 does not "
             "enable it: model numbers only, none measured to compare. 4 MiB of 64-byte "
             "objects, one random access each.",
             ha="center", fontsize=6, wrap=True)
    style.add_provenance(fig, rows)
    folders.publish(fig, "mte", table(rows))


if __name__ == "__main__":
    style.run_alone(main)
