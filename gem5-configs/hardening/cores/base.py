"""What a core model is: an O3 CPU, its private caches, its clock and its ISA.

A core model module defines SimObject subclasses with the parameters of its
namesake (each value's source next to it) and exports ``MODEL``, a
``CoreModel`` that ties them together.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from m5.objects import BaseCPU, Cache

# Armv8.0 plus the Armv8.1/8.2 extensions every modelled core implements.
# FEAT_VHE is left out on purpose: on the phones of claim C1 the kernel runs at
# EL1 under a vendor hypervisor, and without VHE Linux runs at EL1 here too.
ARMV8_2_BASE: tuple[str, ...] = (
    "LPAE", "VIRTUALIZATION", "SECURITY",
    "FEAT_AES", "FEAT_PMULL", "FEAT_SHA1", "FEAT_SHA256", "FEAT_CRC32",
    "FEAT_LSE", "FEAT_HPDS", "FEAT_VMID16", "FEAT_RDM",
    "FEAT_UAO", "FEAT_DOTPROD",
)


@dataclass(frozen=True)
class CoreModel:
    """A named core: how to build its CPU and caches, and what it implements.

    ``native_features`` records which of the studied hardening features the
    real core has; runs may switch on others, and results record both.
    """

    name: str
    summary: str
    clock: str
    base_extensions: tuple[str, ...]
    native_features: frozenset[str]
    make_cpu: Callable[[int], BaseCPU]
    make_l1i: Callable[[], Cache]
    make_l1d: Callable[[], Cache]
    make_l2: Callable[[], Cache]
    make_l3: Callable[[], Cache]
    sources: dict[str, str] = field(default_factory=dict)
