"""Experiment definitions (TOML, one file each) and the runs they expand to."""

from __future__ import annotations

import itertools
import sys
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFINITIONS = Path(__file__).resolve().parent / "definitions"
sys.path.insert(0, str(REPO_ROOT / "gem5-configs"))

from hardening import catalog  # noqa: E402

from builders import kernel  # noqa: E402


class BadExperiment(ValueError):
    """An experiment name or definition that cannot run; says what is valid."""


@dataclass(frozen=True)
class Workload:
    """One guest command: ``/bench/<benchmark> <args>``, measuring ``iterations``
    operations (the benchmark's ``ops=`` line has the last word)."""

    name: str
    benchmark: str
    args: tuple[str, ...]
    iterations: int


@dataclass(frozen=True)
class RunSpec:
    """One simulation: everything that decides its result except the builds."""

    experiment: str
    core: str
    variant: str
    features: tuple[str, ...]
    params: tuple[str, ...]
    workload: Workload
    memory: str = "1GiB"
    cores: int = 1
    max_ms: float = 1000.0

    @property
    def label(self) -> str:
        features = "+".join(self.features) or "none"
        params = (" " + " ".join(self.params)) if self.params else ""
        return f"{self.core} {self.variant} [{features}] {self.workload.name}{params}"

    def guest_script(self) -> str:
        command = " ".join([f"/bench/{self.workload.benchmark}", *self.workload.args])
        return f"set -e\necho 'run: {command}'\n{command}\n"

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class Experiment:
    name: str
    description: str
    quick: bool
    runs: tuple[RunSpec, ...] = field(default_factory=tuple)


EXCLUDE_KEYS = ("core", "variant", "workload")


def _exclusion(path: Path, entry: dict[str, object]) -> dict[str, str]:
    """An ``[[exclude]]`` table: runs matching every key it gives are left out
    (combinations of the matrix that cannot run, e.g. ``ia-off`` without PAC)."""
    unknown = sorted(set(entry) - set(EXCLUDE_KEYS))
    if unknown or not entry:
        raise BadExperiment(f"{path}: [[exclude]] keys must be among "
                            f"{', '.join(EXCLUDE_KEYS)} (got {', '.join(unknown) or 'none'})")
    return {k: str(v) for k, v in entry.items()}


def _matches(run: RunSpec, exclusion: dict[str, str]) -> bool:
    values = {"core": run.core, "variant": run.variant, "workload": run.workload.name}
    return all(values[k] == v for k, v in exclusion.items())


def available() -> list[str]:
    return sorted(p.stem for p in DEFINITIONS.glob("*.toml"))


def load(name: str, definitions: Path = DEFINITIONS) -> Experiment:
    path = definitions / f"{name}.toml"
    if not path.is_file():
        valid = sorted(p.stem for p in definitions.glob("*.toml"))
        raise BadExperiment(f"unknown experiment '{name}'; valid experiments: "
                            f"{', '.join(valid)}")
    data = tomllib.loads(path.read_text())
    try:
        matrix = data["matrix"]
        workloads = [Workload(w["name"], w.get("benchmark", data.get("benchmark", "")),
                              tuple(str(a) for a in w["args"]), int(w["iterations"]))
                     for w in data["workloads"]]
    except KeyError as err:
        raise BadExperiment(f"{path}: missing key {err}") from err
    for core in matrix["cores"]:
        try:
            catalog.check_core(core)
        except catalog.UnknownName as err:
            raise BadExperiment(f"{path}: {err}") from err
    patch_root = REPO_ROOT / "kernel-patches"
    for variant in matrix["variants"]:
        try:
            kernel.variant_dir(patch_root, variant)
        except kernel.UnknownVariant as err:
            raise BadExperiment(f"{path}: {err}") from err
    try:
        feature_sets = [catalog.parse_features(f) for f in matrix["features"]]
    except catalog.UnknownName as err:
        raise BadExperiment(f"{path}: {err}") from err
    benchmarks = {p.stem for p in (REPO_ROOT / "disk-image" / "benchmarks").glob("*.c")}
    for workload in workloads:
        if workload.benchmark not in benchmarks:
            raise BadExperiment(f"{path}: workload {workload.name}: unknown benchmark "
                                f"'{workload.benchmark}'; valid: {', '.join(sorted(benchmarks))}")
    param_sets = [tuple(p) for p in matrix.get("params", [[]])]
    excludes = [_exclusion(path, e) for e in data.get("exclude", [])]
    runs = tuple(
        run for run in (
            RunSpec(experiment=data.get("name", name), core=core,
                    variant=variant, features=features, params=params, workload=workload,
                    memory=data.get("memory", "1GiB"), max_ms=float(data.get("max_ms", 1000.0)))
            for core, variant, features, params, workload in itertools.product(
                matrix["cores"], matrix["variants"], feature_sets, param_sets, workloads))
        if not any(_matches(run, e) for e in excludes))
    return Experiment(name=name, description=data.get("description", ""),
                      quick=bool(data.get("quick", False)), runs=runs)
