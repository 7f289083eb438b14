"""What a core model is: an O3 CPU, its private caches, its clock and its ISA.

A core model module defines SimObject subclasses with the parameters of its
namesake (each value's source next to it) and exports ``MODEL``, a
``CoreModel`` that ties them together.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from m5.objects import BaseCPU, Cache

from hardening import catalog

@dataclass(frozen=True)
class CoreModel:
    """A named core: how to build its CPU and caches, and what it implements.

    ``native_features`` records which of the studied hardening features the
    real core has; runs may switch on others, and results record both.
    """

    name: str
    summary: str
    clock: str
    native_features: frozenset[str]
    make_cpu: Callable[[int], BaseCPU]
    make_l1i: Callable[[], Cache]
    make_l1d: Callable[[], Cache]
    make_l2: Callable[[], Cache]
    make_l3: Callable[[], Cache]
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def architecture(self) -> str:
        """Recorded in the catalog, so host tools can key checkpoints on it."""
        return catalog.architecture_of(self.name)
