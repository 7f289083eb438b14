"""Run by gem5 (``gem5.opt experiments/gem5_param_types.py OUT.json``): the
scalar parameters of the SimObject class behind each ``--param`` root, with
their gem5 types (and an enum's values), so that ``experiments/param_values.py``
can check a value before gem5 is built. Parameters that hold SimObjects are
listed as children: a path through them (``cpu.branchPred.btb.numEntries``)
is checked by gem5 itself, once built, before any simulation.

``python -m experiments.param_values --write`` runs it and writes
``experiments/param_types.json``; a test with gem5 cached checks that file is
what this gives.
"""

import json
import sys

import m5.params
from m5.objects import (ArmO3CPU, ArmTableWalker, ArmTlbiTiming, Cache, MteTagTiming,
                        NodeLinkDelay)
from m5.SimObject import SimObject

# The class each root's objects are (or derive from without new parameters):
# gem5-configs/hardening (cores/*.py, caches.py, tlbi.py, mte_timing.py, numa.py).
ROOT_CLASSES = {"cpu": ArmO3CPU, "l1i": Cache, "l1d": Cache, "l2": Cache, "l3": Cache,
                "walker": ArmTableWalker, "mte_tags": MteTagTiming, "tlbi": ArmTlbiTiming,
                "node_link": NodeLinkDelay}


def describe(cls: type) -> dict:
    params, children = {}, []
    for name, desc in sorted(cls._params.items()):
        ptype = desc.ptype
        if isinstance(ptype, type) and issubclass(ptype, SimObject):
            children.append(name)
            continue
        entry = {"type": desc.ptype_str}
        if isinstance(desc, m5.params.VectorParamDesc):
            entry["vector"] = True
        if isinstance(ptype, type) and issubclass(ptype, m5.params.Enum):
            entry["values"] = sorted(ptype.vals)
        params[name] = entry
    return {"class": cls.__name__, "params": params, "children": children}


with open(sys.argv[-1], "w") as out:
    json.dump({root: describe(cls) for root, cls in ROOT_CLASSES.items()}, out, indent=1,
              sort_keys=True)
    out.write("\n")
