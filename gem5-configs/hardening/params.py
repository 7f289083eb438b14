"""``--param ROOT.NAME=VALUE`` overrides (``hardening/param_overrides.py``), applied to
the built SimObjects.

A path walks child SimObjects from its root, e.g.
``cpu.branchPred.btb.numEntries=8192`` or ``mte_tags.mode=with_data``; a
SimObject parameter the model leaves unset is created on the way
(``l1d.write_allocator.coalesce_limit=2``). An unknown root, child or
parameter fails with the names that exist at that point.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from m5.SimObject import SimObject

from hardening import param_overrides


class UnknownParameter(ValueError):
    pass


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


def _create_unset(obj: SimObject, name: str) -> SimObject | None:
    """A SimObject-typed parameter the model leaves unset (NULL), given an
    object of its type with gem5's defaults, so that a path can reach its
    fields: ``l1d.write_allocator.no_allocate_limit=12`` gives every core's
    L1D a write allocator. None where ``name`` is no such parameter."""
    if name not in _param_names(obj) or isinstance(getattr(obj, name, None), SimObject):
        return None
    ptype = getattr(obj._params[name], "ptype", None)
    if not (isinstance(ptype, type) and issubclass(ptype, SimObject)):
        return None
    setattr(obj, name, ptype())
    return getattr(obj, name)


def apply_override(roots: dict[str, Sequence[SimObject]], text: str) -> None:
    """Set the parameter on every object under the root (one per core)."""
    try:
        override = param_overrides.parse(text, sorted(roots))
    except param_overrides.BadOverride as err:
        raise UnknownParameter(f"--param {err}") from err
    *middle, param = override.names
    for obj in roots[override.root]:
        for name in middle:
            children = _children(obj)
            if name not in children and (created := _create_unset(obj, name)) is not None:
                children[name] = created
            if name not in children:
                raise UnknownParameter(
                    f"--param '{text}': '{name}' is not a child of {type(obj).__name__}; "
                    f"children: {', '.join(sorted(children)) or 'none'}")
            obj = children[name]
        if param not in _param_names(obj):
            raise UnknownParameter(
                f"--param '{text}': {type(obj).__name__} has no parameter '{param}'; "
                f"valid: {', '.join(sorted(_param_names(obj)))}")
        setattr(obj, param, override.value)


def apply_overrides(roots: dict[str, Sequence[SimObject]], texts: Iterable[str]) -> None:
    for text in texts:
        apply_override(roots, text)
