"""Names a run can ask for, importable without gem5.

The experiment runner checks names against these before it starts a
simulation, so a typo fails in a second rather than after a boot.
"""

from __future__ import annotations

CORE_MODULES: dict[str, str] = {
    "cortex-a75": "hardening.cores.cortex_a75",
    "cortex-a76": "hardening.cores.cortex_a76",
    "neoverse-n1": "hardening.cores.neoverse_n1",
    "neoverse-v1": "hardening.cores.neoverse_v1",
    "neoverse-v2": "hardening.cores.neoverse_v2",
    "cortex-x3": "hardening.cores.cortex_x3",
}

# Cores of the 32-bit (AArch32-only) board, hardening/board32.py, kept apart:
# an arm64 run cannot use them, and the arm64 lists above stay as they were.
ARM32_CORE_MODULES: dict[str, str] = {
    "cortex-a15": "hardening.cores.cortex_a15",
}
# Armv7-A with LPAE and nothing else (board32.aarch32_release).
ARM32_CORE_ARCHITECTURE: dict[str, str] = {
    "cortex-a15": "armv7-a",
}

# ArmRelease extensions of each base architecture, without the studied features.
# A checkpoint is booted for one architecture and restored only into cores of
# the same one, because the ID registers the guest saw at boot are in it.
# FEAT_VHE is left out on purpose: on the phones of claim C1 the kernel runs at
# EL1 under a vendor hypervisor, and without VHE Linux runs at EL1 here too.
_ARMV8_2 = (
    "LPAE", "VIRTUALIZATION", "SECURITY",
    "FEAT_AES", "FEAT_PMULL", "FEAT_SHA1", "FEAT_SHA256", "FEAT_CRC32",
    "FEAT_LSE", "FEAT_HPDS", "FEAT_VMID16", "FEAT_RDM",
    "FEAT_UAO", "FEAT_DOTPROD",
)
# Armv8.4 with the 8.5/8.6 items V1 has (SVE, I8MM; LLVM-PROC, ID-G3).
_ARMV8_4 = _ARMV8_2 + (
    "FEAT_LPA", "FEAT_LVA", "FEAT_FCMA", "FEAT_JSCVT", "FEAT_TLBIOS", "FEAT_TLBIRANGE",
    "FEAT_FLAGM", "FEAT_IDST", "FEAT_SVE", "FEAT_I8MM",
)
# Armv9.0 as V2 implements it (LLVM-PROC): armv8.4 plus FLAGM2, RNG.
_ARMV9_0 = _ARMV8_4 + ("FEAT_FLAGM2", "FEAT_RNG")

ARCHITECTURES: dict[str, tuple[str, ...]] = {
    "armv8.2": _ARMV8_2,
    "armv8.4": _ARMV8_4,
    "armv9.0": _ARMV9_0,
}

# The base architecture of each core model.
CORE_ARCHITECTURE: dict[str, str] = {
    "cortex-a75": "armv8.2",  # Armv8.2-A (LLVM-PROC)
    "cortex-a76": "armv8.2",  # Armv8.2-A (+RCpc, DotProd, SSBS) (LLVM-PROC)
    "neoverse-n1": "armv8.2",  # Armv8.2-A (LLVM-PROC, ID-ALTRA)
    "neoverse-v1": "armv8.4",  # Armv8.4-A + SVE, BF16, I8MM (LLVM-PROC, ID-G3)
    "neoverse-v2": "armv9.0",  # Armv9.0-A (LLVM-PROC)
    "cortex-x3": "armv9.0",  # Armv9.0-A (LLVM-PROC)
}

# Hardening features a run can switch on, whatever the modelled core has.
FEATURES: tuple[str, ...] = ("pan", "pac", "fpac", "bti", "mte", "poe")

CPU_TYPES: tuple[str, ...] = ("atomic", "o3")

# How much of a detailed (o3) run the core model simulates: all of it from the
# restore, or only what the guest brackets (hardening/fast_forward.py), the
# rest on the atomic CPU through the model's caches.
DETAIL_FULL = "full"
DETAIL_FAST_FORWARD = "fast-forward"
DETAILS: tuple[str, ...] = (DETAIL_FULL, DETAIL_FAST_FORWARD)


class BadDetail(ValueError):
    """A detail mode the run cannot have."""


def check_detail(detail: str, cpu: str) -> None:
    if detail not in DETAILS:
        raise BadDetail(f"unknown detail '{detail}' (valid: {', '.join(DETAILS)})")
    if detail == DETAIL_FAST_FORWARD and cpu != "o3":
        raise BadDetail(f"detail {DETAIL_FAST_FORWARD} switches to a core model: it needs "
                        f"--cpu o3, not {cpu}")

# Machine sizes the board builds (hardening/numa.py): cores split evenly over nodes.
MAX_CORES = 8
NODE_COUNTS: tuple[int, ...] = (1, 2)


class BadTopology(ValueError):
    """A core and node count the machine cannot have."""


def check_topology(cores: int, nodes: int) -> None:
    if not 1 <= cores <= MAX_CORES:
        raise BadTopology(f"cores must be 1 to {MAX_CORES}, got {cores}")
    if nodes not in NODE_COUNTS:
        raise BadTopology(f"NUMA nodes must be one of {', '.join(map(str, NODE_COUNTS))}, "
                          f"got {nodes}")
    if cores % nodes:
        raise BadTopology(f"{cores} cores do not split evenly over {nodes} nodes")

class UnknownName(ValueError):
    """A core, feature or CPU type that does not exist; the message lists the valid ones."""


def check_core(name: str) -> str:
    if name not in CORE_MODULES:
        raise UnknownName(f"unknown core '{name}'; valid cores: {', '.join(CORE_MODULES)}")
    return name


def check_arm32_core(name: str) -> str:
    if name not in ARM32_CORE_MODULES:
        raise UnknownName(f"unknown 32-bit core '{name}'; valid: "
                          f"{', '.join(ARM32_CORE_MODULES)}")
    return name


def architecture_of(core: str) -> str:
    if core in ARM32_CORE_ARCHITECTURE:
        return ARM32_CORE_ARCHITECTURE[core]
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
