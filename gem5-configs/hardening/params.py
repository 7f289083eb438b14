"""``--param path=value`` overrides, applied to the built SimObjects.

Paths start at a named root (``cpu``, ``l1i``, ``l1d``, ``l2``, ``l3``,
``walker`` (every core's stage-1 table walkers), ``mte_tags`` on MTE runs (the
``MteTagTiming`` of ``hardening/mte_timing.py``) and ``tlbi`` (the
``ArmTlbiTiming`` of ``hardening/tlbi.py``, made when a run names it))
and walk child SimObjects, e.g. ``cpu.branchPred.btb.numEntries=8192`` or
``mte_tags.mode=with_data``. An unknown
root, child or parameter fails with the names that exist at that point.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from m5.SimObject import SimObject


class UnknownParameter(ValueError):
    pass


def parse_override(text: str) -> tuple[list[str], str]:
    path, sep, value = text.partition("=")
    if not sep or not path or "." not in path:
        raise UnknownParameter(f"--param '{text}': expected ROOT.NAME=VALUE, "
                               "e.g. cpu.numROBEntries=192")
    return path.split("."), value


def _param_names(obj: SimObject) -> set[str]:
    # gem5's parameter table is a multidict (own and inherited entries): it
    # supports keys() but not iteration or ``in``.
    return set(obj._params.keys())


def _children(obj: SimObject) -> dict[str, SimObject]:
    """Child SimObjects, whether assigned as children or held in a parameter
    (``cpu.branchPred``, ``cpu.mmu``)."""
    found = dict(obj._children.items())
    for name in _param_names(obj):
        value = getattr(obj, name, None)
        if isinstance(value, SimObject):
            found[name] = value
    return found


def apply_override(roots: dict[str, Sequence[SimObject]], text: str) -> None:
    """Set the parameter on every object under the root (one per core)."""
    parts, value = parse_override(text)
    root, *middle, param = parts
    if root not in roots:
        raise UnknownParameter(f"--param '{text}': unknown root '{root}'; valid roots: "
                               f"{', '.join(sorted(roots))}")
    for obj in roots[root]:
        for name in middle:
            children = _children(obj)
            if name not in children:
                raise UnknownParameter(
                    f"--param '{text}': '{name}' is not a child of {type(obj).__name__}; "
                    f"children: {', '.join(sorted(children)) or 'none'}")
            obj = children[name]
        if param not in _param_names(obj):
            raise UnknownParameter(
                f"--param '{text}': {type(obj).__name__} has no parameter '{param}'; "
                f"valid: {', '.join(sorted(_param_names(obj)))}")
        setattr(obj, param, value)


def apply_overrides(roots: dict[str, Sequence[SimObject]], overrides: Iterable[str]) -> None:
    for text in overrides:
        apply_override(roots, text)
