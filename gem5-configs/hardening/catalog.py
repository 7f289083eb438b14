"""Names a run can ask for, importable without gem5.

The experiment runner checks names against these before it starts a
simulation, so a typo fails in a second rather than after a boot.
"""

from __future__ import annotations

CORE_MODULES: dict[str, str] = {
    "cortex-a76": "hardening.cores.cortex_a76",
}

# Hardening features a run can switch on, whatever the modelled core has.
FEATURES: tuple[str, ...] = ("pan", "pac", "mte", "poe")

CPU_TYPES: tuple[str, ...] = ("atomic", "o3")


class UnknownName(ValueError):
    """A core, feature or CPU type that does not exist; the message lists the valid ones."""


def check_core(name: str) -> str:
    if name not in CORE_MODULES:
        raise UnknownName(f"unknown core '{name}'; valid cores: {', '.join(CORE_MODULES)}")
    return name


def parse_features(text: str) -> tuple[str, ...]:
    """``"pan,pac"`` -> ``("pac", "pan")``; empty or ``none`` means no feature."""
    names = [n.strip() for n in text.split(",") if n.strip() and n.strip() != "none"]
    unknown = [n for n in names if n not in FEATURES]
    if unknown:
        raise UnknownName(f"unknown feature(s) {', '.join(unknown)}; valid features: "
                          f"{', '.join(FEATURES)}")
    return tuple(sorted(set(names)))
