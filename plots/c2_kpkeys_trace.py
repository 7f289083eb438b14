"""Figure and table: the system-register accesses and ISBs a fork commits in
claim C2's kernels, from instruction traces of the c2-kpkeys fork run.

Reads results/traces/c2-kpkeys/<variant>_pac+pan+poe_fork-4k.csv (``python -m
experiments trace c2-kpkeys --variant V --workload fork-4k --features
pan,pac,poe`` for kpkeys-base, kpkeys-pgtables and kpkeys-pgtables-batched);
writes plots/out/c2_kpkeys_trace.{pdf,png,md}. Bars: per kind of instruction,
how many each kernel commits per fork; the table adds every instruction the
Neoverse-V1 model serializes (its decoder's flags, read from the trace: which
accesses serialize depends on the gem5 build and the core's timing table). The traces count every committed
instruction, so they are exact, not sampled.
No hardware traces exist to stand beside these.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from plots import style

TRACES = "traces/c2-kpkeys"
WORKLOAD = "fork-4k"
FEATURES = "pac+pan+poe"
VARIANTS = {"kpkeys-base": "baseline", "kpkeys-pgtables": "unbatched, POE",
            "kpkeys-pgtables-batched": "batched, POE"}
# The kinds drawn, as (instruction, operand): the reads of `current` (SP_EL0)
# and of TCR_EL1, the POR_EL1 switch and the ISB after it (gem5 squashes
# everything younger). Which of them serialize is the trace's own column.
KINDS = (("mrs", "sp_el0"), ("mrs", "tcr_el1"), ("mrs", "por_el1"), ("msr", "por_el1"),
         ("isb", ""))
OTHER = "other serializing"


def read_trace(path: Path, made_by: str) -> pd.DataFrame:
    """One instruction-trace table (experiments/trace.py writes them);
    made_by is the command that makes it, for the error when it is missing."""
    if not path.is_file():
        raise style.NoResults(f"{style.shown(path)} does not exist: run '{made_by}' first")
    return pd.read_csv(path, keep_default_na=False)


def load(results: Path, variant: str) -> pd.DataFrame:
    return read_trace(results / TRACES / f"{variant}_{FEATURES}_{WORKLOAD}.csv",
                      f"python -m experiments trace c2-kpkeys --variant {variant} "
                      f"--workload {WORKLOAD} --features pan,pac,poe")


def whole_region(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["function"] == "all"]


def per_fork(frame: pd.DataFrame) -> dict[str, float]:
    """Per fork: each kind's count, the other instructions the model
    serializes, 'serializing' (every one it serializes) and 'instructions'
    (every committed one)."""
    region = whole_region(frame)
    forks = float(frame["iterations"].iloc[0])
    value = region["value"].astype(float)
    serializing = region["serializing"].astype(str) == "True"
    counts = {f"{i} {o}".strip(): float(value[(region["instruction"] == i)
                                              & (region["operand"] == o)].sum()) / forks
              for i, o in KINDS}
    kind_rows = pd.Series(False, index=region.index)
    for i, o in KINDS:
        kind_rows |= (region["instruction"] == i) & (region["operand"] == o)
    counts[OTHER] = float(value[serializing & ~kind_rows].sum()) / forks
    counts["serializing"] = float(value[serializing].sum()) / forks
    counts["instructions"] = float(value[region["instruction"] == "all"].iloc[0]) / forks
    return counts


def serializing_kinds(frame: pd.DataFrame) -> list[str]:
    """The drawn kinds the traced decoder flagged serializing (a model
    property: gem5 patch 0021 and the core's timing table decide it)."""
    region = whole_region(frame)
    flagged = region[region["serializing"].astype(str) == "True"]
    return [f"{i} {o}".strip() for i, o in KINDS
            if ((flagged["instruction"] == i) & (flagged["operand"] == o)).any()]


def table(counts: dict[str, dict[str, float]]) -> str:
    kinds = [f"{i} {o}".strip() for i, o in KINDS] + [OTHER]
    lines = ["Per fork (`pgtable_bench fork 4k 32 4`, Neoverse-V1 model with FEAT_S1POE): "
             "committed instructions, those the model serializes (gem5's IsSerialize flags "
             "as the model's decoder sets them), and the system-register accesses and ISBs "
             "by kind, each kernel's and its difference from kpkeys-base.", "",
             "| kernel | instructions | serializing | "
             + " | ".join(f"`{k}`" if k != OTHER else k for k in kinds) + " |",
             "|---|---:|---:|" + "---:|" * len(kinds)]
    base = counts["kpkeys-base"]
    for variant, mine in counts.items():
        def cell(key: str) -> str:
            text = f"{mine[key]:,.0f}"
            return text if variant == "kpkeys-base" else f"{text} ({mine[key] - base[key]:+,.0f})"
        lines.append(f"| {variant} | {cell('instructions')} | {cell('serializing')} | "
                     + " | ".join(cell(k) for k in kinds) + " |")
    return "\n".join(lines) + "\n"


def main(folders: style.Folders) -> None:
    frames = {variant: load(folders.results, variant) for variant in VARIANTS}
    counts = {variant: per_fork(frame) for variant, frame in frames.items()}
    kinds = [f"{i} {o}".strip() for i, o in KINDS] + [OTHER]
    fig, ax = style.figure(width=style.COLUMN_WIDTH_IN * 1.4, height=2.4)
    style.grouped_bars(ax, kinds, {VARIANTS[v]: [counts[v][k] / 1000 for k in kinds]
                                   for v in VARIANTS}, tick_fontsize=5)
    ax.set_ylabel("instructions per fork\n(thousands)")
    fig.subplots_adjust(top=0.8)
    style.legend_on_top(fig, ax, 3)
    serialized = serializing_kinds(pd.concat(frames.values()))
    style.add_note(fig, "Neoverse-V1 model with FEAT_S1POE (a what-if); every committed "
                   "instruction of four forks of a 32 MiB process, traced\n(gem5 Exec "
                   f"trace). The traced model serializes: {', '.join(serialized) or 'none'} "
                   "of these; an ISB squashes what follows.\nExact counts, not samples. "
                   "No hardware traces to draw beside these.", pd.concat(frames.values()),
                   below=-0.24)
    folders.publish(fig, "c2_kpkeys_trace", table(counts))


if __name__ == "__main__":
    style.run_alone(main)
