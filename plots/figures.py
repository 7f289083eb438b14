"""The one table of figures: each script in plots/ (``plots/<name>.py``,
drawing ``out/<name>.*``), the experiments whose results it reads, what else
it reads, and whether it draws a picture or writes tables only. ``plots.all``
draws them in this order; the README's index lists a claim's pictures from it;
``python -m plots.figures`` writes it as ``figure_index.md`` for plots/README.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from plots import sensitivity, style


@dataclass(frozen=True)
class Figure:
    name: str
    # The experiments whose CSVs (in the results folder) it reads.
    experiments: tuple[str, ...]
    # Other inputs, in words.
    also_reads: str = ""
    picture: bool = True
    # The experiments whose traces (``traces/<name>/``) it reads.
    traces: tuple[str, ...] = ()
    # What it writes into the output folder (``<output>.{pdf,png,md}``), when
    # more or other than its own name.
    writes: tuple[str, ...] = ()
    # The claim (plots/host_times.CLAIMS label) whose index row lists it, for a
    # figure that reads a check rather than the claim's experiments.
    claim: str = ""

    @property
    def outputs(self) -> tuple[str, ...]:
        return self.writes or (self.name,)


FIGURES: tuple[Figure, ...] = (
    Figure("syscall", ("syscall",)),
    Figure("core_validation", ("core-validation",)),
    Figure("sysreg_microbench", ("sysreg-microbench",)),
    Figure("sysreg_registers", ("sysreg-microbench",),
           "`plots/sysreg_registers.toml`; the getppid and fork traces (`traces/syscall/`, "
           "`traces/c2-kpkeys/`)", picture=False, traces=("syscall", "c2-kpkeys")),
    Figure("c1_published", ("c1-published", "c1-published-fit")),
    Figure("c1_sctlr", ("c1-sctlr",)),
    Figure("c1_sctlr_sweep", ("c1-sctlr-sweep", "c1-sctlr")),
    Figure("c2_kpkeys", ("c2-kpkeys", "c2-kpkeys-64k")),
    Figure("c2_kpkeys_por", ("c2-kpkeys-por",)),
    Figure("c2_kpkeys_vmalloc", ("c2-kpkeys-vmalloc",)),
    Figure("c2_kpkeys_spawn", ("c2-kpkeys-spawn",)),
    Figure("c2_kpkeys_trace", (),
           "`traces/c2-kpkeys/*_pac+pan+poe_fork-4k.csv` (`python -m experiments trace`)",
           traces=("c2-kpkeys",)),
    Figure("c2_folio_scaling", ("c2-kpkeys", "c2-kpkeys-64k"),
           "`checks/kpkeys-1g/c2-kpkeys-1g.csv` (`experiments/definitions/checks`)"),
    Figure("c3_arm32", ("c3-arm32-pan",), "`c3-arm32-pan-qemu.csv` (`make qemu-reference`)",
           writes=("c3_arm32", "c3_arm32_qemu")),
    Figure("c3_dacr", ("c3-arm32-dacr",)),
    Figure("c4_uaccess", ("c4-uaccess",)),
    Figure("c4_uaccess_sysreg", ("c4-uaccess-sysreg",)),
    Figure("c5_contpte", ("c5-contpte",)),
    Figure("c5_contpte_sweep", ("c5-contpte-sweep",)),
    Figure("c5_contpte_numa", ("c5-contpte-numa", "c5-contpte-mix"),
           writes=("c5_contpte_numa", "c5_contpte_numa_summary")),
    Figure("c5_contpte_burst", ("c5-contpte-numa",),
           "`checks/contpte-burst/c5-contpte-burst.csv` (`experiments/definitions/checks`)"),
    Figure("c5_contpte_altra", ("c5-contpte-altra",)),
    Figure("c5_contpte_dvm_sweep", ("c5-contpte-dvm-sweep",)),
    Figure("c5_dvm_crosscheck", (),
           "`checks/dvm-chi/dvm-crosscheck.csv` (`python -m experiments dvm-crosscheck`)",
           claim="C5 contpte teardown"),
    Figure("poe", ("poe",)),
    Figure("mte", ("mte",)),
    Figure("mte_instructions", ("mte-instructions",)),
    Figure("mte_workloads", ("mte-workloads",)),
    Figure("selftests", ("poe-selftests", "mte-selftests", "hardening-selftests",
                         "kpkeys-selftests", "kasan", "kasan-boot"),
           "`<name>-qemu.csv` where QEMU ran the same tests", picture=False,
           writes=("poe_selftests", "mte_selftests", "hardening_selftests", "kpkeys_selftests",
                   "kasan", "kasan_boot")),
    Figure("host_times", (), "every `*.csv` (their `host_seconds`)", picture=False,
           writes=("host_times", "claim_times", "claim_index")),
    Figure("fast_forward", (), "`checks/fast-forward/*.csv` and the same experiments' CSVs",
           picture=False, writes=("fast_forward", "fast_forward_effects")),
    Figure("sysreg_isb", (), "`checks/isb/sysreg-isb.csv` (`experiments/definitions/checks`)",
           picture=False),
    Figure("sensitivity", (), "`checks/sensitivity/*.csv` (`experiments/definitions/checks`)",
           writes=tuple(sensitivity.output_name(n) for n in sensitivity.BASELINES)),
)
NAMES = tuple(f.name for f in FIGURES)


def figure(name: str) -> Figure:
    (found,) = (f for f in FIGURES if f.name == name)
    return found


def pictures_of(experiments: tuple[str, ...], claim: str = "") -> tuple[str, ...]:
    """The figures with a picture that read any of ``experiments``, or that
    name ``claim`` as theirs."""
    return tuple(f.name for f in FIGURES
                 if f.picture and (set(f.experiments + f.traces) & set(experiments)
                                   or (claim and f.claim == claim)))


def index_table() -> str:
    lines = ["| writes (PDF and PNG pictures, Markdown tables) | script | experiments (their CSVs "
             "in the results folder) | also reads |", "|---|---|---|---|"]
    for f in FIGURES:
        drawn = ", ".join(f"`out/{name}.*`" for name in f.outputs)
        experiments = ", ".join(f"`{name}`" for name in f.experiments) or "—"
        lines.append(f"| {drawn} | `{f.name}.py` | {experiments} | {f.also_reads or '—'} |")
    return "\n".join(lines) + "\n"


def main(folders: style.Folders) -> None:
    print(style.shown(folders.save_table("figure_index", index_table())))


if __name__ == "__main__":
    style.run_alone(main)
