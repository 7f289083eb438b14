"""Names a run can ask for, importable without gem5.

The experiment runner checks names against these before it starts a
simulation, so a typo fails in a second rather than after a boot.
"""

from __future__ import annotations

CORE_MODULES: dict[str, str] = {
    "cortex-a76": "hardening.cores.cortex_a76",
}

# ArmRelease extensions of each base architecture, without the studied features.
# A checkpoint is booted for one architecture and restored only into cores of
# the same one, because the ID registers the guest saw at boot are in it.
# FEAT_VHE is left out on purpose: on the phones of claim C1 the kernel runs at
# EL1 under a vendor hypervisor, and without VHE Linux runs at EL1 here too.
ARCHITECTURES: dict[str, tuple[str, ...]] = {
    "armv8.2": (
        "LPAE", "VIRTUALIZATION", "SECURITY",
        "FEAT_AES", "FEAT_PMULL", "FEAT_SHA1", "FEAT_SHA256", "FEAT_CRC32",
        "FEAT_LSE", "FEAT_HPDS", "FEAT_VMID16", "FEAT_RDM",
        "FEAT_UAO", "FEAT_DOTPROD",
    ),
}

# The base architecture of each core model.
CORE_ARCHITECTURE: dict[str, str] = {
    "cortex-a76": "armv8.2",  # Armv8.2-A (+RCpc, DotProd, SSBS) (LLVM-PROC)
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


def architecture_of(core: str) -> str:
    return CORE_ARCHITECTURE[check_core(core)]


def check_architecture(name: str) -> str:
    if name not in ARCHITECTURES:
        raise UnknownName(f"unknown architecture '{name}'; valid: {', '.join(ARCHITECTURES)}")
    return name


def parse_features(text: str) -> tuple[str, ...]:
    """``"pan,pac"`` -> ``("pac", "pan")``; empty or ``none`` means no feature."""
    names = [n.strip() for n in text.split(",") if n.strip() and n.strip() != "none"]
    unknown = [n for n in names if n not in FEATURES]
    if unknown:
        raise UnknownName(f"unknown feature(s) {', '.join(unknown)}; valid features: "
                          f"{', '.join(FEATURES)}")
    return tuple(sorted(set(names)))
