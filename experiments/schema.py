"""The shape of an experiment file, checked before anything is built.

Every key an experiment TOML may hold is listed here with its type. An
unknown key, a value of the wrong type or a list of the wrong shape is a
``BadExperiment`` naming the file, the key and what was expected, so a typo
fails in a second instead of being ignored (or split into characters) after
an hour of builds.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class BadExperiment(ValueError):
    """An experiment name or definition that cannot run; says what is valid."""


@dataclass(frozen=True)
class Type:
    """A value's expected type: ``check`` says whether a value has it."""

    name: str

    def check(self, value: Any) -> bool:
        if self.name == "string":
            return isinstance(value, str)
        if self.name == "boolean":
            return isinstance(value, bool)
        if self.name == "integer":
            return isinstance(value, int) and not isinstance(value, bool)
        if self.name == "number":
            return isinstance(value, (int, float)) and not isinstance(value, bool)
        if self.name == "table":
            return isinstance(value, dict)
        if self.name == "boolean or table":
            return isinstance(value, (bool, dict))
        if self.name == "string or list of strings":
            return isinstance(value, str) or (
                isinstance(value, list) and all(isinstance(v, str) for v in value))
        if self.name == "list of strings":
            return isinstance(value, list) and all(isinstance(v, str) for v in value)
        if self.name == "list of strings or integers":
            return isinstance(value, list) and all(
                isinstance(v, (str, int)) and not isinstance(v, bool) for v in value)
        if self.name == "list of integers":
            return isinstance(value, list) and all(
                isinstance(v, int) and not isinstance(v, bool) for v in value)
        if self.name == "list of lists of strings":
            return isinstance(value, list) and all(
                isinstance(v, list) and all(isinstance(s, str) for s in v) for v in value)
        if self.name == "list of tables":
            return isinstance(value, list) and all(isinstance(v, dict) for v in value)
        raise AssertionError(f"schema names an unknown type {self.name}")


STRING, BOOLEAN, INTEGER, NUMBER = Type("string"), Type("boolean"), Type("integer"), Type("number")
TABLE, STRINGS = Type("table"), Type("list of strings")
ARGS, LISTS, TABLES = (Type("list of strings or integers"), Type("list of lists of strings"),
                       Type("list of tables"))
INTEGERS = Type("list of integers")
BOOLEAN_OR_TABLE, STRING_OR_STRINGS = Type("boolean or table"), Type("string or list of strings")

TOP_LEVEL: dict[str, Type] = {
    "name": STRING, "description": STRING, "kind": STRING,
    # What `make` runs by default: true for every run, or a [quick] table
    # choosing the experiment's headline runs.
    "quick": BOOLEAN_OR_TABLE,
    "benchmark": STRING, "memory": STRING, "max_ms": NUMBER, "qemu_boots": INTEGER,
    "matrix": TABLE, "workloads": TABLES, "exclude": TABLES, "samples": INTEGER,
    # Cores of the simulated machine (every run of the experiment).
    "core_count": INTEGER,
    # "full" (default) or "fast-forward": the core model only around the regions.
    "detail": STRING,
    # With fast-forward: the runs it selects (keys as [[exclude]]'s) are also
    # made in full detail, a canary that `make compare` re-checks.
    "canary": TABLE,
}
TOP_REQUIRED = ("matrix", "workloads")
MATRIX: dict[str, Type] = {
    "cpus": STRINGS, "cores": STRINGS, "variants": STRINGS, "features": STRINGS,
    # Each entry is one run's whole list of overrides, e.g. [[], ["l2.size=1MiB"]].
    "params": LISTS, "kernel_args": LISTS,
    # NUMA nodes the cores are split over, e.g. [1, 2].
    "nodes": INTEGERS,
    # Machine sizes, every run on each (instead of the top-level core_count).
    "core_counts": INTEGERS,
}
MATRIX_REQUIRED = ("cores", "variants", "features")
WORKLOAD: dict[str, Type] = {
    "name": STRING, "benchmark": STRING, "args": ARGS, "iterations": INTEGER,
    "timeout_s": INTEGER, "atomic_clock": STRING, "kunit_rerun": BOOLEAN, "from_reset": BOOLEAN,
    "kernel_module": STRING,
}
WORKLOAD_REQUIRED = ("name", "args")
EXCLUDE: dict[str, Type] = {
    "cpu": STRING, "core": STRING, "variant": STRING, "workload": STRING, "params": STRINGS,
    "kernel_args": STRINGS, "features": STRING, "nodes": INTEGER,
}

# A [quick] table: keys as [[exclude]]'s, and a list of names where any of them
# is chosen (params and kernel_args stay one run's whole list).
QUICK: dict[str, Type] = {
    **EXCLUDE, "cpu": STRING_OR_STRINGS, "core": STRING_OR_STRINGS,
    "variant": STRING_OR_STRINGS, "workload": STRING_OR_STRINGS, "features": STRING_OR_STRINGS,
}


def _type_name(value: Any) -> str:
    if isinstance(value, list):
        inner = sorted({_type_name(v) for v in value})
        return f"a list of {' and '.join(inner)}" if inner else "an empty list"
    return {bool: "boolean", int: "integer", float: "number", str: "string",
            dict: "table"}.get(type(value), type(value).__name__)


def check_table(path: Path, where: str, table: dict[str, Any], fields: dict[str, Type],
                required: tuple[str, ...] = ()) -> None:
    """Every key known, of its type; every required key present."""
    for key, value in table.items():
        if key not in fields:
            raise BadExperiment(f"{path}: {where}unknown key '{key}'; valid keys: "
                                f"{', '.join(fields)}")
        expected = fields[key]
        if not expected.check(value):
            raise BadExperiment(f"{path}: {where}'{key}' must be a {expected.name}, "
                                f"got {_type_name(value)} ({value!r:.60})")
    for key in required:
        if key not in table:
            raise BadExperiment(f"{path}: {where}missing key '{key}' "
                                f"(a {fields[key].name})")


def read(path: Path) -> dict[str, Any]:
    """The file as TOML, its tables checked against the schema."""
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as err:
        raise BadExperiment(f"{path}: not valid TOML: {err}") from err
    check_table(path, "", data, TOP_LEVEL, TOP_REQUIRED)
    check_table(path, "[matrix]: ", data["matrix"], MATRIX, MATRIX_REQUIRED)
    if not data["workloads"]:
        raise BadExperiment(f"{path}: [[workloads]]: at least one workload is needed")
    for number, workload in enumerate(data["workloads"], start=1):
        check_table(path, f"[[workloads]] #{number}: ", workload, WORKLOAD, WORKLOAD_REQUIRED)
    for number, exclusion in enumerate(data.get("exclude", []), start=1):
        check_table(path, f"[[exclude]] #{number}: ", exclusion, EXCLUDE)
        if not exclusion:
            raise BadExperiment(f"{path}: [[exclude]] #{number}: empty; give one or more of "
                                f"{', '.join(EXCLUDE)}")
    if "canary" in data:
        check_table(path, "[canary]: ", data["canary"], EXCLUDE)
        if not data["canary"]:
            raise BadExperiment(f"{path}: [canary]: empty; give one or more of "
                                f"{', '.join(EXCLUDE)}")
    if isinstance(data.get("quick"), dict):
        check_table(path, "[quick]: ", data["quick"], QUICK)
        if not data["quick"]:
            raise BadExperiment(f"{path}: [quick]: empty; give one or more of "
                                f"{', '.join(QUICK)}, or quick = true for every run")
        for key, value in data["quick"].items():
            if value == [] and key not in ("params", "kernel_args"):
                raise BadExperiment(f"{path}: [quick]: '{key}' is an empty list; give "
                                    "one name or more")
    for key in MATRIX:
        if key in data["matrix"] and not data["matrix"][key]:
            raise BadExperiment(f"{path}: [matrix]: '{key}' is empty (leave it out for the "
                                "default)")
    return data
