"""Table: per system register and barrier the measured kernel paths use, how
often they use it, what a read and a write cost in the A76, N1 and V1 models
and whether the model makes them wait, what the architecture requires of
them, and what hardware figure exists.

Reads plots/sysreg_registers.toml (the registers, the architecture's rule and
its source key), results/sysreg-microbench.csv (the models' cycles and
serialising counts, as plots/sysreg_microbench.py reduces them), the
instruction traces of `syscall`'s getppid and of claim C2's fork
(results/traces/; how many accesses one operation commits), and the hardware
figures of plots/published.toml [sysreg]. Writes plots/out/sysreg_registers.md.
Every model cost here is gem5's own system-register timing, an assumption the
table says so of, except where a hardware figure stands beside it.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from plots import style
from plots.c2_kpkeys_trace import read_trace, whole_region
from plots.sysreg_microbench import (costs, public_text, published_rows,
                                     serializing_per_operation)

REGISTERS = style.PLOTS / "sysreg_registers.toml"
CORES = ("cortex-a76", "neoverse-n1", "neoverse-v1")
# Operations the microbenchmark times as a pair of writes (set and clear).
PAIRS = {"msr_pan_pair": 2}
# The traces counted, as (column heading, trace file under the results folder).
TRACES = (("per getppid (A76)", "traces/syscall/baseline_pan_getppid.csv"),
          ("per fork, baseline (V1)", "traces/c2-kpkeys/kpkeys-base_pac+pan+poe_fork-4k.csv"),
          ("per fork, kpkeys POE (V1)",
           "traces/c2-kpkeys/kpkeys-pgtables_pac+pan+poe_fork-4k.csv"))


@dataclass(frozen=True)
class Register:
    name: str
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    traced: tuple[str, ...]
    barrier: bool
    used_by: str
    rule: str
    source: str


def registers(path: Path = REGISTERS) -> list[Register]:
    entries = tomllib.loads(path.read_text()).get("register", [])
    if not entries:
        raise ValueError(f"{style.shown(path)} lists no [[register]]")
    known = {"name", "reads", "writes", "traced", "barrier", "used_by", "rule", "source"}
    found = []
    for entry in entries:
        unknown = set(entry) - known
        if unknown:
            raise ValueError(f"{style.shown(path)}: register {entry.get('name')!r} has unknown "
                             f"key(s) {sorted(unknown)}; valid: {sorted(known)}")
        found.append(Register(
            name=entry["name"], reads=tuple(entry.get("reads", ())),
            writes=tuple(entry.get("writes", ())), traced=tuple(entry.get("traced", ())),
            barrier=bool(entry.get("barrier", False)), used_by=entry["used_by"],
            rule=entry["rule"], source=entry["source"]))
    return found


def trace_counts(results: Path, relative: str) -> dict[tuple[str, str], float]:
    """Accesses per operation in one trace's whole region, by (instruction,
    operand); the barriers' operand is empty."""
    frame = read_trace(results / relative,
                       "python -m experiments trace (plots/README.md names the runs)")
    region = whole_region(frame)
    region = region[region["instruction"] != "all"]
    per = float(frame["iterations"].iloc[0])
    counts: dict[tuple[str, str], float] = {}
    for row in region.itertuples():
        operand = row.operand if row.instruction in ("mrs", "msr") else ""
        key = (row.instruction, operand)
        counts[key] = counts.get(key, 0.0) + float(row.value) / per
    return counts


def _number(count: float) -> str:
    return "0" if count == 0 else f"{count:,.0f}" if count >= 10 else f"{count:.2g}"


def count_text(counts: dict[tuple[str, str], float], register: Register) -> str:
    """Reads / writes of a register, or a barrier's count, per operation."""
    if register.barrier:
        barrier = sum(v for (instruction, operand), v in counts.items()
                      if instruction in register.traced
                      or (instruction == "msr" and operand in register.traced))
        return _number(barrier)
    reads = sum(counts.get(("mrs", name), 0.0) for name in register.traced)
    writes = sum(counts.get(("msr", name), 0.0) for name in register.traced)
    return f"{_number(reads)} / {_number(writes)}"


def cycles_text(above: pd.DataFrame, operations: tuple[str, ...]) -> str:
    """Each operation's cycles on the A76, N1 and V1 models, a / b / c."""
    parts = []
    for op in operations:
        if op not in above.index:
            raise ValueError(f"sysreg-microbench has no '{op}' run "
                             f"(plots/sysreg_registers.toml names it)")
        per_access = above.loc[op, list(CORES)] / PAIRS.get(op, 1)
        cells = " / ".join("—" if math.isnan(v) else f"{v:.1f}" for v in per_access)
        label = " + ISB" if op.endswith("_isb") else ""
        parts.append(f"{cells}{label}")
    return "; ".join(parts)


def waits_text(serializing: pd.DataFrame, operations: tuple[str, ...]) -> str:
    """Whether the models rename the access as serialising (drain older
    instructions first), from the A76 run; the ISB variants are left out."""
    plain = [op for op in operations if not op.endswith("_isb")]
    if not plain:
        return "—"
    per_access = [serializing.loc[op, CORES[0]] / PAIRS.get(op, 1) for op in plain]
    return "yes" if all(v >= 0.5 for v in per_access) else (
        "no" if all(v < 0.5 for v in per_access) else "mixed")


def main(folders: style.Folders) -> None:
    frame = folders.load("sysreg-microbench")
    above = costs(frame)
    serializing = serializing_per_operation(frame)
    traced = [(heading, trace_counts(folders.results, path)) for heading, path in TRACES]
    public = published_rows()

    lines = ["Per register or barrier: accesses per operation in the measured paths "
             "(reads / writes; instruction traces of `syscall`'s getppid on the A76 "
             "model and of claim C2's fork of 32 MiB on the V1 model), the models' cycles per access "
             "(A76 / N1 / V1, from `sysreg-microbench`, above the loop alone), whether the "
             "models drain older instructions first (serialising), what the architecture "
             "requires (source keys: `docs/parameter-sources.md`), and the hardware "
             "figures that exist. Every model cost is gem5's own timing: an assumption "
             "where no hardware figure stands beside it.", "",
             "| register or barrier | used by | "
             + " | ".join(heading for heading, _ in traced)
             + " | read: cycles | read drains | write or barrier: cycles | drains "
             "| architecture | source | hardware |",
             "|---|---|" + "---:|" * len(traced) + "---|---|---|---|---|---|---|"]
    for register in registers():
        counts = [count_text(c, register) for _, c in traced]
        hardware = "; ".join(text for op in register.reads + register.writes
                             if (text := public_text(public.get(op, []))) != "—") or "none found"
        lines.append(
            f"| {register.name} | {register.used_by} | " + " | ".join(counts)
            + f" | {cycles_text(above, register.reads) if register.reads else '—'}"
            f" | {waits_text(serializing, register.reads)}"
            f" | {cycles_text(above, register.writes) if register.writes else '—'}"
            f" | {waits_text(serializing, register.writes)}"
            f" | {register.rule} | {register.source} | {hardware} |")
    folders.save_table("sysreg_registers", "\n".join(lines) + "\n")
    print(style.shown(folders.out / "sysreg_registers.md"))


if __name__ == "__main__":
    style.run_alone(main)
