"""User and privileged cycles of each detailed core (gem5 patch 0020).

A kernel-hardening study reports the kernel's share of a region's time, the
system time an operating system gives beside the real time. gem5 patch 0020's
``PrivilegeCycles``, placed under a core, splits the core's active cycles and
committed instructions by the mode of its architectural state, cycle by
cycle on the O3 core (statistics ``<core>.privilege.userCycles``,
``privilegedCycles``, ``userInsts``, ``privilegedInsts``). It only listens:
the core's timing does not change.
"""

from __future__ import annotations

from collections.abc import Iterable

from m5.objects import PrivilegeCycles

# The child's name under each core, which its statistics carry.
CHILD = "privilege"


def count_privilege(cpus: Iterable[object]) -> None:
    """Place one counter under each core."""
    for cpu in cpus:
        setattr(cpu, CHILD, PrivilegeCycles())
