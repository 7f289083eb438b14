"""A ``--param`` value checked against its gem5 parameter's type before
anything is built: ``param_types.json`` lists, per root, the SimObject class's
scalar parameters and their gem5 types (written by gem5 itself from
``gem5_param_types.py``: ``python -m experiments.param_values --write``).

Names and values of a root's own parameters are checked here; a path through
a child object (``cpu.branchPred.btb.numEntries``) and types this module does
not know are checked by gem5, once built, in the model check that comes
before any simulation. ``sysreg.*`` is the system-register table's
(``spec.check_param``).
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from hardening import param_overrides

TYPES = Path(__file__).resolve().parent / "param_types.json"
GENERATOR = Path(__file__).resolve().parent / "gem5_param_types.py"


class BadParamValue(ValueError):
    """A parameter the root lacks, or a value its type refuses."""


def _integer(text: str) -> int | None:
    try:
        return int(text, 0)
    except ValueError:
        return None


def _count(text: str) -> str | None:
    value = _integer(text)
    return None if value is not None and value >= 0 else "a whole number, 0 or more"


def _signed(text: str) -> str | None:
    return None if _integer(text) is not None else "a whole number"


def _bool(text: str) -> str | None:
    # gem5's convert.toBool.
    return None if text.lower() in {"true", "t", "yes", "y", "1", "false", "f", "no", "n",
                                    "0"} else "true or false"


def _percent(text: str) -> str | None:
    try:
        return None if 0 <= float(text) <= 100 else "a percentage, 0 to 100"
    except ValueError:
        return "a percentage, 0 to 100"


SIZE = re.compile(r"(\d+(\.\d+)?)\s*([kKMGTPE]i?)?B")
TIME = re.compile(r"\d+(\.\d+)?\s*(s|ms|us|ns|ps|t|Hz|kHz|MHz|GHz|THz)")


def _size(text: str) -> str | None:
    value = _integer(text)
    if (value is not None and value > 0) or (SIZE.fullmatch(text) and float(
            SIZE.fullmatch(text).group(1)) > 0):  # type: ignore[union-attr]
        return None
    return "a size above 0, e.g. 64KiB or 1MiB"


def _time(text: str) -> str | None:
    return None if TIME.fullmatch(text) else "a time or frequency, e.g. 1ns or 2GHz"


CHECKS: dict[str, Callable[[str], str | None]] = {
    **{t: _count for t in ("Unsigned", "UInt8", "UInt16", "UInt32", "UInt64", "Counter",
                           "Cycles", "Tick")},
    **{t: _signed for t in ("Int", "Int8", "Int16", "Int32", "Int64")},
    "Bool": _bool, "Percent": _percent, "MemorySize": _size, "MemorySize32": _size,
    "Latency": _time, "Frequency": _time, "Clock": _time,
}


def load(path: Path = TYPES) -> dict[str, dict[str, object]]:
    return json.loads(path.read_text())


def check(override: param_overrides.Override, types: dict[str, dict[str, object]]) -> None:
    """Raises with one line if ``override`` names a parameter its root's class
    lacks or gives a value its gem5 type refuses."""
    table = types.get(override.root)
    if table is None:
        return
    params: dict[str, dict[str, object]] = table["params"]  # type: ignore[assignment]
    children: list[str] = table["children"]  # type: ignore[assignment]
    first = override.names[0]
    if len(override.names) > 1:
        if first not in children:
            raise BadParamValue(f"'{override}': {table['class']} has no child '{first}'; "
                                f"children: {', '.join(children)}")
        return
    if first not in params:
        raise BadParamValue(f"'{override}': {table['class']} has no parameter '{first}'; "
                            f"valid: {', '.join(sorted(params))}")
    param = params[first]
    kind = str(param["type"])
    if "values" in param:
        values: list[str] = param["values"]  # type: ignore[assignment]
        if override.value not in values:
            raise BadParamValue(f"'{override}': {kind} is one of {', '.join(values)}")
        return
    checker = CHECKS.get(kind)
    expected = None if checker is None or param.get("vector") else checker(override.value)
    if expected:
        raise BadParamValue(f"'{override}': {table['class']}.{first} is a {kind}: "
                            f"{expected}, not '{override.value}'")


def write(gem5_binary: Path, destination: Path = TYPES) -> None:
    """Asks gem5 for the types and writes them (whole or not at all)."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "types.json"
        subprocess.run([str(gem5_binary), "-q", "--outdir", scratch, str(GENERATOR), str(out)],
                       check=True, capture_output=True, text=True)
        destination.write_text(out.read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.param_values")
    parser.add_argument("--write", action="store_true",
                        help=f"regenerate {TYPES.name} with the cached gem5 build")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if not args.write:
        parser.error("nothing to do: --write regenerates the table")
    from builders import gem5

    entry = gem5.gem5_entry(Path(__file__).resolve().parent.parent / "gem5-patches")
    if not entry.exists():
        logging.error("gem5 is not in the build cache: run 'make gem5' first")
        return 1
    write(entry.path / gem5.Gem5BuildOptions().binary)
    logging.info("wrote %s", TYPES)
    return 0


if __name__ == "__main__":
    sys.exit(main())
