"""A model-parameter override, ``ROOT.NAME[.NAME...]=VALUE``: its one parser,
the roots a run may start from and what each root's values are.

gem5-free, so that every stage reads overrides the same way: the runner
checks an experiment's before anything is built (``experiments/spec.py``),
``run.py`` sets them on the built SimObjects (``params.py``) or on the
system-register timing table (``sysreg.py``), and the figures read them
back from the ``params`` column of the results, the run's overrides joined
by spaces.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

# Where an override starts on the arm64 board, and what its values are: a
# SimObject's parameter (gem5 converts the text and refuses a bad value when
# the run's model is checked, before any simulation) or a field of the core's
# system-register timing table (typed by hardening/sysreg.py's SysRegClass).
ROOTS: dict[str, str] = {
    "cpu": "a parameter of every core's CPU, or of a child such as branchPred.btb",
    "l1i": "a parameter of every core's L1 instruction cache",
    "l1d": "a parameter of every core's L1 data cache",
    "l2": "a parameter of the L2 cache(s)",
    "l3": "a parameter of the L3 cache, where the model has one",
    "walker": "a parameter of every core's stage-1 table walkers",
    "mte_tags": "a parameter of the MTE tag-storage timing (MTE runs)",
    "tlbi": "a parameter of the broadcast TLB-maintenance timing",
    "node_link": "a parameter of the link between NUMA nodes (two-node runs)",
    "sysreg": "isb_latency=<cycles>, or <class>.<field>=<value>: regs (a+b), "
              "*_latency (cycles), *_serialize and write_nonspeculative (true/false)",
}
# The 32-bit Cortex-A15 board has no L3, MTE, TLBI timing or second node.
ARM32_ROOTS: tuple[str, ...] = ("cpu", "l1i", "l1d", "l2", "walker", "sysreg")


class BadOverride(ValueError):
    """Text that is not ``ROOT.NAME=VALUE`` with a known root; says which are."""


@dataclass(frozen=True)
class Override:
    root: str
    # The path below the root: child objects (or sysreg's class), then the field.
    names: tuple[str, ...]
    value: str

    @property
    def key(self) -> str:
        return ".".join((self.root, *self.names))

    def __str__(self) -> str:
        return f"{self.key}={self.value}"


def parse(text: str, roots: Collection[str] = tuple(ROOTS)) -> Override:
    """One override, its root one of ``roots``."""
    key, sep, value = text.partition("=")
    parts = key.split(".")
    if not sep or len(parts) < 2 or not all(parts):
        raise BadOverride(f"'{text}' is not ROOT.NAME=VALUE (e.g. cpu.numROBEntries=192)")
    if parts[0] not in roots:
        raise BadOverride(f"'{text}': unknown root '{parts[0]}'; valid roots: "
                          f"{', '.join(roots)}")
    return Override(parts[0], tuple(parts[1:]), value)


def key_of(text: str) -> str:
    """What an override sets, without its value: a later one with the same
    key replaces it."""
    return text.partition("=")[0]


def parse_column(params: str) -> dict[str, str]:
    """A results row's ``params`` column as key -> value (empty: the model as
    it is). Results of either board are read, so every root is accepted."""
    return {o.key: o.value for o in (parse(text) for text in params.split())}
