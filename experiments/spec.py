"""Experiment definitions (TOML, one file each) and the runs they expand to."""

from __future__ import annotations

import base64
import itertools
import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from collections.abc import Sequence
from typing import Any

DEFINITIONS = Path(__file__).resolve().parent / "definitions"

from hardening import catalog, param_overrides, sysreg  # noqa: E402

from builders import kernel  # noqa: E402
from experiments import param_values, schema  # noqa: E402
from experiments.folders import REPO_ROOT  # noqa: E402
from experiments.schema import BadExperiment  # noqa: E402


KINDS = ("benchmark", "selftests")
# Layout samples: 1 MiB and 17 pages more per sample, so that successive samples
# start the benchmark at different page colours as well as different pages.
LAYOUT_STEP_KIB = 1024 + 17 * 4
SELFTEST_LIST = REPO_ROOT / "disk-image" / "selftests" / "list"
# The 32-bit guest (disk-image/arm32-initramfs) has one program, its /init: the
# getppid loop, WARMUP CALLS RUNS. Its workloads name it as their benchmark.
ARM32_BENCHMARK = "c3-getppid"
# The init keeps its runs' times until the end (MAX_GEM5_RUNS in init.c).
ARM32_MAX_RUNS = 64
KERNEL_PATCHES = REPO_ROOT / "kernel-patches"


@dataclass(frozen=True)
class Workload:
    """One guest command. A benchmark runs ``/bench/<benchmark> <args>`` and
    measures ``iterations`` operations (its ``ops=`` line has the last word);
    a selftest runs ``run-selftest <args>`` (the kernel selftest's path under
    ``/selftests`` and its arguments) and reports a verdict."""

    name: str
    benchmark: str
    args: tuple[str, ...]
    iterations: int
    kind: str = "benchmark"
    # Selftests: guest seconds before run-selftest stops the test (0: its default).
    timeout_s: int = 0
    # Atomic runs: the CPU clock after the restore ("": the boot's). It only sets
    # how many instructions a guest second holds.
    atomic_clock: str = ""
    # Selftests ``kunit/<suite>``: run the suite again now, through its debugfs
    # ``run`` file, and report that run (instead of the boot's).
    kunit_rerun: bool = False
    # Boot on the run's own CPU and run the script, with no checkpoint: on O3
    # the detailed core makes everything the boot does (e.g. KUnit suites).
    from_reset: bool = False
    # A module of the run's kernel build (e.g. "test_vmalloc"): the script
    # writes it in base64 to the guest's /tmp and the benchmark gets that
    # file's path as its first argument. Its variant must build modules.
    kernel_module: str = ""



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
    nodes: int = 1
    max_ms: float = 1000.0
    cpu: str = "o3"
    kernel_args: tuple[str, ...] = ()
    # 0: the run as defined; k > 0: the same run after the guest pins
    # k * LAYOUT_STEP_KIB of tmpfs, so the benchmark gets other physical pages
    # (other cache sets, DRAM banks): a sample of the layout's effect.
    sample: int = 0
    # catalog.DETAILS: the core model from the restore, or only from the
    # benchmark's bench_detail_begin() to its region's end (the rest on the
    # atomic CPU through the model's caches).
    detail: str = catalog.DETAIL_FULL

    @property
    def label(self) -> str:
        features = "+".join(self.features) or "none"
        params = (" " + " ".join(self.params)) if self.params else ""
        where = self.core if self.cpu == "o3" else self.cpu
        reset = " (from reset)" if self.workload.from_reset else ""
        detail = f" ({self.detail})" if self.detail != catalog.DETAIL_FULL else ""
        sample = f" #{self.sample}" if self.sample else ""
        return (f"{where}{self.machine_label}{reset}{detail} {self.variant}{self.cmdline_label} "
                f"[{features}] {self.workload.name}{params}{sample}")

    @property
    def arm32(self) -> bool:
        """A run on the 32-bit board (hardening/board32.py): its core is a 32-bit
        core model, its kernel a 32-bit variant, its guest the initramfs."""
        return self.core in catalog.ARM32_CORE_MODULES

    @property
    def init_args(self) -> str:
        """The 32-bit init's ``WARMUP CALLS RUNS`` (run.py arm32-measure --init-args)."""
        return " ".join(self.workload.args)

    @property
    def machine_label(self) -> str:
        """`` (4 cores, 2 nodes)`` for labels, or nothing for one core."""
        if self.cores == 1 and self.nodes == 1:
            return ""
        return f" ({self.cores} cores, {self.nodes} node{'s' if self.nodes > 1 else ''})"

    @property
    def cmdline_label(self) -> str:
        """`` {extra kernel arguments}`` for labels, or nothing."""
        return (" {" + " ".join(self.kernel_args) + "}") if self.kernel_args else ""

    @property
    def guest_module_path(self) -> str:
        return f"/tmp/{self.workload.kernel_module}.ko.base64"

    def guest_script(self, module: bytes | None = None) -> str:
        """The shell script the guest runs; ``module``: the bytes of the
        workload's kernel module (required if it names one)."""
        if self.workload.kind == "selftests":
            limit = ([f"SELFTEST_TIMEOUT={self.workload.timeout_s}"]
                     if self.workload.timeout_s else [])
            if self.detail == catalog.DETAIL_FAST_FORWARD:
                limit.append("SELFTEST_DETAIL=1")
            command = " ".join([*limit, "run-selftest", *self.workload.args])
            if self.workload.kunit_rerun:
                suite = self.workload.args[0].removeprefix("kunit/")
                # The write returns when the suite has run (in this context).
                command = ("mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true; "
                           f"echo run > /sys/kernel/debug/kunit/{suite}/run; {command}")
        else:
            module_args = [self.guest_module_path] if self.workload.kernel_module else []
            command = " ".join([f"/bench/{self.workload.benchmark}", *module_args,
                                *self.workload.args])
        pad = ""
        if self.sample:
            kib = self.sample * LAYOUT_STEP_KIB
            # Whole steps per write: few system calls on the detailed core.
            pad = (f"echo 'layout sample {self.sample}: {kib} KiB pinned'\n"
                   f"dd if=/dev/zero of=/dev/shm/layout-pad bs={LAYOUT_STEP_KIB * 1024} "
                   f"count={self.sample} 2>/dev/null\n")
        handed = ""
        if self.workload.kernel_module:
            if module is None:
                raise ValueError(f"{self.label}: the script needs the kernel's "
                                 f"{self.workload.kernel_module}.ko")
            encoded = base64.encodebytes(module).decode()
            handed = (f"cat > {self.guest_module_path} <<'MODULE'\n{encoded}MODULE\n")
        return f"set -e\n{pad}{handed}echo 'run: {command}'\n{command}\n"

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class Experiment:
    name: str
    description: str
    # The runs `make` makes by default (the quick set): every run, the
    # headline runs a [quick] table chooses, or none.
    quick: tuple[RunSpec, ...]
    runs: tuple[RunSpec, ...] = field(default_factory=tuple)
    kind: str = "benchmark"
    # Reference boots on QEMU per kernel command line (qemu_reference): more
    # than one where verdicts vary from boot to boot (random tags).
    qemu_boots: int = 1
    # Full-detail twins of some fast-forward runs ([canary]): their rows go to
    # <results>/canary/<name>.csv and `compare` pairs them with their twins.
    canary: tuple[RunSpec, ...] = ()
    # Some of the experiment's runs only (its quick part, one layout sample, or
    # some variants or feature sets):
    # their rows replace theirs in the results file and the other rows stay.
    partial: bool = False


def _exclusion(entry: dict[str, Any]) -> dict[str, str]:
    """An ``[[exclude]]`` table: runs matching every key it gives are left out
    (combinations of the matrix that cannot run, e.g. ``ia-off`` without PAC)."""
    # params, kernel_args: the matrix entry's whole list, matched as a whole;
    # nodes: a count, matched as written.
    return {k: " ".join(v) if isinstance(v, list) else str(v) for k, v in entry.items()}


def _matches(run: RunSpec, exclusion: dict[str, str]) -> bool:
    values = {"cpu": run.cpu, "core": run.core, "variant": run.variant,
              "workload": run.workload.name, "params": " ".join(run.params),
              "kernel_args": " ".join(run.kernel_args), "features": ",".join(run.features),
              "nodes": str(run.nodes)}
    return all(values[k] == v for k, v in exclusion.items())


def available(definitions: Path = DEFINITIONS) -> list[str]:
    return sorted(p.stem for p in definitions.glob("*.toml"))


def quick_set(definitions: Path = DEFINITIONS) -> list[str]:
    """The experiments ``make`` runs by default (``quick = true`` or a ``[quick]``
    table): their quick runs are ``quick_part``."""
    return [name for name in available(definitions) if load(name, definitions).quick]


def quick_part(experiment: Experiment) -> Experiment:
    """The experiment with only its quick runs (and their canaries)."""
    if not experiment.quick:
        raise BadExperiment(f"{experiment.name} has no quick runs (no 'quick' in its "
                            "definition)")
    return replace(_with_canary_of(experiment, experiment.quick),
                   partial=experiment.quick != experiment.runs)


def check_param(where: str, text: str) -> None:
    """``ROOT.NAME=VALUE`` with a known root; ``sysreg.*`` checked in full, a
    SimObject parameter's name and value against its gem5 type
    (``param_values``; a path through a child object is left to gem5's own
    check, in seconds, before any simulation)."""
    try:
        override = param_overrides.parse(text)
        param_values.check(override, param_values.load())
    except (param_overrides.BadOverride, param_values.BadParamValue) as err:
        raise BadExperiment(f"{where}: {err}") from err
    if override.root == "sysreg":
        # Any class name is accepted here (each core has its own table).
        base = (sysreg.SysRegTiming(classes={override.names[0]: sysreg.SysRegClass(regs=())})
                if len(override.names) == 2 else sysreg.GEM5_TIMING)
        try:
            base.overridden([text])
        except sysreg.BadSysRegTiming as err:
            raise BadExperiment(f"{where}: {err}") from err


def load(name: str, definitions: Path = DEFINITIONS) -> Experiment:
    path = definitions / f"{name}.toml"
    if not path.is_file():
        raise BadExperiment(f"unknown experiment '{name}'; valid experiments: "
                            f"{', '.join(available(definitions))}")
    data = schema.read(path)
    if data.get("name", name) != name:
        raise BadExperiment(f"{path}: name '{data['name']}' differs from the file's name "
                            f"'{name}' (the file name is the experiment's name)")
    kind = data.get("kind", "benchmark")
    if kind not in KINDS:
        raise BadExperiment(f"{path}: unknown kind '{kind}'; valid kinds: {', '.join(KINDS)}")
    workloads = []
    for number, w in enumerate(data["workloads"], start=1):
        if kind == "benchmark" and "iterations" not in w:
            raise BadExperiment(f"{path}: [[workloads]] #{number} ({w['name']}): a benchmark "
                                "workload needs 'iterations' (an integer)")
        if kind == "benchmark" and w["iterations"] <= 0:
            raise BadExperiment(f"{path}: [[workloads]] #{number} ({w['name']}): "
                                f"'iterations' must be positive, got {w['iterations']}")
        workloads.append(Workload(
            w["name"], w.get("benchmark", data.get("benchmark", "")),
            tuple(str(a) for a in w["args"]),
            w["iterations"] if kind == "benchmark" else 0, kind, w.get("timeout_s", 0),
            w.get("atomic_clock", ""), w.get("kunit_rerun", False), w.get("from_reset", False),
            w.get("kernel_module", "")))
    names = [w.name for w in workloads]
    if len(set(names)) != len(names):
        raise BadExperiment(f"{path}: workload names must be unique, got {', '.join(names)}")
    for w in workloads:
        if w.kunit_rerun and not (w.kind == "selftests" and w.args[0].startswith("kunit/")):
            raise BadExperiment(f"{path}: workload '{w.name}': kunit_rerun needs a "
                                "selftests workload whose args start with kunit/<suite>")
        _check_workload(path, w)
    matrix = data["matrix"]
    cpus = matrix.get("cpus", ["o3"])
    unknown_cpus = [c for c in cpus if c not in catalog.CPU_TYPES]
    if unknown_cpus:
        raise BadExperiment(f"{path}: unknown cpu '{unknown_cpus[0]}'; valid cpus: "
                            f"{', '.join(catalog.CPU_TYPES)}")
    if kind == "benchmark" and cpus != ["o3"]:
        raise BadExperiment(f"{path}: benchmarks measure the detailed (o3) core only")
    for core in matrix["cores"]:
        check_any_core(f"{path}", core)
    for variant in matrix["variants"]:
        variant_is_arm32(f"{path}", variant)
        for w in workloads:
            if w.kernel_module:
                check_builds_modules(f"{path}: workload {w.name}", variant)
    try:
        feature_sets = [catalog.parse_features(f) for f in matrix["features"]]
    except catalog.UnknownName as err:
        raise BadExperiment(f"{path}: {err}") from err
    param_sets = [tuple(p) for p in matrix.get("params", [[]])]
    for params in param_sets:
        for text in params:
            check_param(f"{path}: [matrix] params", text)
    # Kernel command lines: each boots (and checkpoints) separately.
    cmdlines = [tuple(c) for c in matrix.get("kernel_args", [[]])]
    excludes = [_exclusion(e) for e in data.get("exclude", [])]
    # A feature set is matched as parsed ("pan,pac" is "pac,pan").
    for exclusion in excludes:
        if "features" in exclusion:
            try:
                exclusion["features"] = ",".join(catalog.parse_features(exclusion["features"]))
            except catalog.UnknownName as err:
                raise BadExperiment(f"{path}: [[exclude]]: {err}") from err
    max_ms = float(data.get("max_ms", 1000.0))
    if not (math.isfinite(max_ms) and max_ms > 0):
        raise BadExperiment(f"{path}: 'max_ms' must be a positive number of guest "
                            f"milliseconds, got {max_ms}")
    if data.get("qemu_boots", 1) < 1:
        raise BadExperiment(f"{path}: 'qemu_boots' must be at least 1")
    for w in workloads:
        if w.timeout_s < 0:
            raise BadExperiment(f"{path}: workload '{w.name}': 'timeout_s' must be 0 (the "
                                "test's own) or more")
    if "core_count" in data and "core_counts" in matrix:
        raise BadExperiment(f"{path}: give 'core_count' or [matrix] 'core_counts', not both")
    core_counts = matrix.get("core_counts", [data.get("core_count", 1)])
    node_counts = matrix.get("nodes", [1])
    names_of = {"cpu": cpus, "core": matrix["cores"], "variant": matrix["variants"],
                "workload": [w.name for w in workloads],
                "params": [" ".join(p) for p in param_sets],
                "kernel_args": [" ".join(c) for c in cmdlines],
                "features": [",".join(f) for f in feature_sets],
                "nodes": [str(n) for n in node_counts]}
    for number, exclusion in enumerate(excludes, start=1):
        _check_in_experiment(f"{path}: [[exclude]] #{number}", exclusion, names_of)
    for key, counts in (("core_counts", core_counts), ("nodes", node_counts)):
        if len(set(counts)) != len(counts):
            raise BadExperiment(f"{path}: [matrix] '{key}' must list distinct counts, "
                                f"got {counts}")
    for core_count, nodes in itertools.product(core_counts, node_counts):
        try:
            catalog.check_topology(core_count, nodes)
        except catalog.BadTopology as err:
            raise BadExperiment(f"{path}: core_count {core_count}, nodes {nodes}: {err}") from err
    detail = data.get("detail", catalog.DETAIL_FULL)
    if detail not in catalog.DETAILS:
        raise BadExperiment(f"{path}: unknown detail '{detail}'; valid: "
                            f"{', '.join(catalog.DETAILS)}")
    samples = data.get("samples", 1)
    if samples < 1 or (samples > 1 and kind != "benchmark"):
        raise BadExperiment(f"{path}: 'samples' must be at least 1, and above 1 only for "
                            f"benchmarks (got {samples} for a {kind} experiment)")
    every = [
        RunSpec(experiment=data.get("name", name), core=core,
                variant=variant, features=features, params=params, workload=workload,
                memory=data.get("memory", "1GiB"), cores=core_count, nodes=nodes, max_ms=max_ms,
                cpu=cpu, kernel_args=cmdline, sample=sample,
                detail=detail if cpu == "o3" else catalog.DETAIL_FULL)
        for cpu, core, variant, features, cmdline, core_count, nodes, params, workload, sample
        in itertools.product(cpus, matrix["cores"], matrix["variants"], feature_sets, cmdlines,
                             core_counts, node_counts, param_sets, workloads, range(samples))
        # The atomic CPU has no core model: one run, not one per core.
        if cpu == "o3" or core == matrix["cores"][0]]
    if len(set(every)) != len(every):
        duplicate = next(r for r in every if every.count(r) > 1)
        raise BadExperiment(f"{path}: the matrix names one run twice ({duplicate.label}); "
                            "remove the repeated entry")
    runs = tuple(r for r in every if not any(_matches(r, e) for e in excludes))
    for run in runs:
        check_run(f"{path}", run)
    return Experiment(name=name, description=data.get("description", ""),
                      quick=_quick(path, data, runs, names_of), runs=runs, kind=kind,
                      qemu_boots=data.get("qemu_boots", 1),
                      canary=_canary(path, data, runs, names_of))


def _quick(path: Path, data: dict[str, Any], runs: tuple[RunSpec, ...],
           names_of: dict[str, list[str]]) -> tuple[RunSpec, ...]:
    """``quick = true``: every run. A ``[quick]`` table: the runs of layout
    sample 0 matching every key it gives, a list of names matching any of them
    (one headline measurement, not its spread: that is the whole experiment's)."""
    quick = data.get("quick", False)
    if isinstance(quick, bool):
        return runs if quick else ()
    choices: dict[str, tuple[str, ...]] = {}
    for key, value in quick.items():
        names = ([value] if isinstance(value, (str, int)) or key in ("params", "kernel_args")
                 else value)
        choices[key] = tuple(_selected(f"{path}: [quick]", key, _exclusion({key: n})[key],
                                       names_of) for n in names)
    chosen = tuple(r for r in runs if r.sample == 0 and all(
        any(_matches(r, {key: name}) for name in names) for key, names in choices.items()))
    if not chosen:
        shown = ", ".join(f"{k} = {' or '.join(map(_shown, v))}" for k, v in choices.items())
        raise BadExperiment(f"{path}: [quick] ({shown}) chooses no run left after [[exclude]]")
    return chosen


def _canary(path: Path, data: dict[str, Any], runs: Sequence[RunSpec],
            names_of: dict[str, list[str]]) -> tuple[RunSpec, ...]:
    """The full-detail twins of the fast-forward runs ``[canary]`` selects, in
    layout sample 0 only (each sample would add a full-detail run)."""
    if "canary" not in data:
        return ()
    if data.get("detail", catalog.DETAIL_FULL) != catalog.DETAIL_FAST_FORWARD:
        raise BadExperiment(f"{path}: [canary] needs detail = "
                            f"\"{catalog.DETAIL_FAST_FORWARD}\": a canary is the full-detail "
                            "twin of a fast-forward run")
    selection = {key: _selected(f"{path}: [canary]", key, name, names_of)
                 for key, name in _exclusion(data["canary"]).items()}
    twins = tuple(replace(r, detail=catalog.DETAIL_FULL) for r in runs
                  if r.detail == catalog.DETAIL_FAST_FORWARD and r.sample == 0
                  and _matches(r, selection))
    if not twins:
        shown = ", ".join(f"{k} = {_shown(v)}" for k, v in selection.items())
        raise BadExperiment(f"{path}: [canary] ({shown}) selects no detailed run left after "
                            "[[exclude]]")
    return twins


def _selected(where: str, key: str, name: str, names_of: dict[str, list[str]]) -> str:
    """One name a [quick] or [canary] table gives, as the matrix spells it
    (features in their canonical order); refused unless the matrix has it."""
    if key == "features":
        try:
            name = ",".join(catalog.parse_features(name))
        except catalog.UnknownName as err:
            raise BadExperiment(f"{where}: {err}") from err
    _check_in_experiment(where, {key: name}, names_of)
    return name


def _shown(value: str) -> str:
    """A matrix entry as a definition writes it ('' for none)."""
    return f"'{value}'"


def _check_in_experiment(where: str, selection: dict[str, str],
                         names_of: dict[str, list[str]]) -> None:
    """Each value a selection names must be one of the matrix's, or the selection
    would silently match nothing."""
    for key, value in selection.items():
        if value not in names_of[key]:
            raise BadExperiment(f"{where}: {key} {_shown(value)} is not in the experiment "
                                f"(valid: {', '.join(map(_shown, names_of[key]))})")


def _with_canary_of(experiment: Experiment, runs: tuple[RunSpec, ...]) -> Experiment:
    """The experiment with these runs, keeping the canaries whose twin is among them."""
    twins = set(runs)
    canary = tuple(c for c in experiment.canary
                   if replace(c, detail=catalog.DETAIL_FAST_FORWARD) in twins)
    return replace(experiment, runs=runs, canary=canary)


def only_cpu(experiment: Experiment, cpu: str) -> Experiment:
    """The experiment's runs on one CPU type (e.g. the quick atomic selftests)."""
    if cpu not in catalog.CPU_TYPES:
        raise BadExperiment(f"unknown cpu '{cpu}'; valid cpus: {', '.join(catalog.CPU_TYPES)}")
    return _with_canary_of(experiment, tuple(r for r in experiment.runs if r.cpu == cpu))


def with_detail(experiment: Experiment, detail: str) -> Experiment:
    """Every detailed run of the experiment with this detail (``run --detail``)."""
    if detail not in catalog.DETAILS:
        raise BadExperiment(f"unknown detail '{detail}'; valid: {', '.join(catalog.DETAILS)}")
    runs = tuple(replace(r, detail=detail) if r.cpu == "o3" else r for r in experiment.runs)
    for run in runs:
        check_run(experiment.name, run)
    # A canary is the twin of a fast-forward run: none where no run is one.
    canary = experiment.canary if detail == catalog.DETAIL_FAST_FORWARD else ()
    return replace(experiment, runs=runs, canary=canary)


def derive(experiment: Experiment, cores: Sequence[str] = (),
           params: Sequence[str] = ()) -> Experiment:
    """The experiment on other cores and/or with more parameter overrides: each
    run's core replaced by every one of ``cores`` (if given) and ``params``
    applied after its own (an override of a key the run already sets replaces
    it). Checked like an experiment file's entries."""
    for core in cores:
        check_any_core("--core", core)
    for text in params:
        check_param("--param", text)
    keys = {param_overrides.key_of(t) for t in params}
    derived: list[RunSpec] = []
    for run in experiment.runs:
        merged = (tuple(p for p in run.params if param_overrides.key_of(p) not in keys)
                  + tuple(params))
        # The atomic CPU has no core model: its runs keep their one core.
        for core in (cores if cores and run.cpu == "o3" else (run.core,)):
            candidate = replace(run, core=core, params=merged)
            check_run(f"{experiment.name} (derived)", candidate)
            if candidate not in derived:
                derived.append(candidate)
    what = " ".join([*(f"--core {c}" for c in cores), *(f"--param {p}" for p in params)])
    # A derived run is a what-if, not the record: it keeps no canary.
    return replace(experiment, runs=tuple(derived), canary=(),
                   description=f"{experiment.description} (derived: {what})")


def sweep(experiment: Experiment, key: str, values: Sequence[str],
          cores: Sequence[str] = ()) -> Experiment:
    """The unmodified experiment (on ``cores``, if given) and one copy of it per
    value of the parameter ``key``."""
    if experiment.kind != "benchmark":
        raise BadExperiment(f"{experiment.name} is a {experiment.kind} experiment: a sweep "
                            "needs a benchmark one")
    if not values:
        raise BadExperiment("a sweep needs at least one value")
    runs = list(derive(experiment, cores).runs)
    for value in values:
        runs += [r for r in derive(experiment, cores, [f"{key}={value}"]).runs if r not in runs]
    return replace(experiment, runs=tuple(runs), canary=(),
                   description=f"{experiment.description} (sweep of {key}: "
                               f"{', '.join(values)})")


def with_samples(experiment: Experiment, samples: int) -> Experiment:
    """Every run of the experiment in ``samples`` layout samples (0 … samples-1)."""
    if samples < 1:
        raise BadExperiment(f"--samples must be at least 1, got {samples}")
    if samples > 1 and experiment.kind != "benchmark":
        raise BadExperiment(f"{experiment.name} is a {experiment.kind} experiment: layout "
                            "samples are for benchmarks")
    if samples > 1 and any(run.arm32 for run in experiment.runs):
        raise BadExperiment(f"{experiment.name}: layout samples are for the arm64 guest; a "
                            "32-bit run repeats its calls within one simulation (RUNS)")
    runs = [replace(run, sample=k) for run in experiment.runs if run.sample == 0
            for k in range(samples)]
    return _with_canary_of(experiment, tuple(runs))


def only_sample(experiment: Experiment, sample: int) -> Experiment:
    """The experiment's runs of one layout sample: a long experiment made one
    sample at a time (in separate sessions or on separate machines), each
    sample's rows merged into the results file in place of that sample's."""
    samples = sorted({run.sample for run in experiment.runs})
    if sample not in samples:
        raise BadExperiment(f"{experiment.name} has no layout sample {sample}; its samples: "
                            f"{', '.join(map(str, samples))}")
    runs = tuple(run for run in experiment.runs if run.sample == sample)
    return replace(_with_canary_of(experiment, runs), partial=True)


def only_runs(experiment: Experiment, variants: Sequence[str] = (),
              features: Sequence[str] = ()) -> Experiment:
    """The experiment's runs on these kernel variants and/or feature sets (e.g.
    only the base kernel of a check whose other arms are not built yet), their
    rows merged into the results file in place of those runs' rows. A name the
    experiment lacks, or a pair its exclusions leave empty, is refused."""
    def shown(feature_set: tuple[str, ...]) -> str:
        return ",".join(feature_set) or "none"

    try:
        wanted = {catalog.parse_features(f) for f in features}
    except catalog.UnknownName as err:
        raise BadExperiment(f"{experiment.name}: --features: {err}") from None
    own_variants = sorted({r.variant for r in experiment.runs})
    own_features = sorted({r.features for r in experiment.runs})
    unknown = [v for v in variants if v not in own_variants]
    if unknown:
        raise BadExperiment(f"{experiment.name} has no variant {', '.join(unknown)} "
                            f"(valid: {', '.join(own_variants)})")
    unknown = [shown(f) for f in wanted if f not in own_features]
    if unknown:
        raise BadExperiment(f"{experiment.name} has no feature set {', '.join(unknown)} "
                            f"(valid: {', '.join(map(shown, own_features))})")
    runs = tuple(run for run in experiment.runs
                 if (not variants or run.variant in variants)
                 and (not wanted or run.features in wanted))
    if not runs:
        pairs = sorted({f"{r.variant} [{shown(r.features)}]" for r in experiment.runs})
        raise BadExperiment(f"{experiment.name} has no run on that variant with that feature "
                            f"set (its pairs: {'; '.join(pairs)})")
    return replace(_with_canary_of(experiment, runs),
                   partial=experiment.partial or runs != experiment.runs)


def derived_label(cores: Sequence[str], params: Sequence[str]) -> str:
    """A directory name for a derived experiment's results."""
    text = "-".join([*cores, *params]) or "unmodified"
    return "".join(c if c.isalnum() or c in "-_.=" else "_" for c in text)[:120]


def selftests_available(listing: Path = SELFTEST_LIST) -> list[str]:
    """The kernel selftests the disk image carries (paths under /selftests)."""
    if not listing.is_file():
        return []
    lines = (line.split("#", 1)[0].strip() for line in listing.read_text().splitlines())
    return [line for line in lines if line]


def check_any_core(where: str, core: str) -> None:
    """An arm64 core model or a 32-bit one (which of them a run may use is
    ``check_run``'s question)."""
    if core in catalog.ARM32_CORE_MODULES:
        return
    try:
        catalog.check_core(core)
    except catalog.UnknownName as err:
        raise BadExperiment(f"{where}: {err}, or a 32-bit one: "
                            f"{', '.join(catalog.ARM32_CORE_MODULES)}") from err


def variant_is_arm32(where: str, variant: str) -> bool:
    """Whether a kernel variant is for 32-bit Arm (its ``arch`` file says ``arm``);
    arm64 and arm are the architectures the simulated boards boot."""
    try:
        arch = kernel.variant_arch(KERNEL_PATCHES, variant)
    except kernel.UnknownVariant as err:
        raise BadExperiment(f"{where}: {err}") from err
    if arch.name not in ("arm64", "arm"):
        raise BadExperiment(f"{where}: kernel variant '{variant}' is for {arch.name}; the "
                            "simulated boards boot arm64 and 32-bit arm kernels")
    return arch.name == "arm"


def check_run(where: str, run: RunSpec) -> None:
    """A run the boards can make: a 32-bit core with a 32-bit kernel and its
    initramfs's getppid loop, on one node, with none of the arm64 features;
    an arm64 core with an arm64 kernel. Checked before anything is built."""
    arm32_kernel = variant_is_arm32(where, run.variant)
    if run.arm32 != arm32_kernel:
        raise BadExperiment(
            f"{where}: core '{run.core}' is {'a 32-bit' if run.arm32 else 'an arm64'} core "
            f"and kernel variant '{run.variant}' is {'32-bit arm' if arm32_kernel else 'arm64'}; "
            f"32-bit variants run on {', '.join(catalog.ARM32_CORE_MODULES)}, arm64 ones on "
            f"{', '.join(catalog.CORE_MODULES)}")
    if run.detail == catalog.DETAIL_FAST_FORWARD and (
            run.arm32 or run.cpu != "o3" or run.workload.from_reset
            or run.workload.kunit_rerun or run.workload.args[0].startswith("kunit/")):
        raise BadExperiment(
            f"{where}: {run.label}: detail {catalog.DETAIL_FAST_FORWARD} switches from the "
            "atomic CPU to the core model when a program of the arm64 disk asks (a "
            "benchmark's bench_detail_begin, run-selftest around its test program); this "
            "run cannot (a 32-bit board, a KUnit suite, the atomic CPU or a boot from "
            "reset); use detail full")
    if not run.arm32:
        if run.workload.benchmark == ARM32_BENCHMARK:
            raise BadExperiment(f"{where}: workload {run.workload.name}: '{ARM32_BENCHMARK}' is "
                                "the 32-bit initramfs's loop; it runs on a 32-bit core")
        return
    if run.features:
        raise BadExperiment(f"{where}: features {','.join(run.features)} are arm64 features; "
                            f"a 32-bit run ({run.core}, {run.variant}) takes none (the "
                            "kernel variant decides its PAN)")
    if run.nodes != 1:
        raise BadExperiment(f"{where}: the 32-bit board has one NUMA node, got {run.nodes}")
    if run.cpu != "o3" or run.workload.kind != "benchmark" or run.workload.from_reset:
        raise BadExperiment(f"{where}: a 32-bit run restores its boot's checkpoint into the "
                            "o3 core model and runs the getppid benchmark")
    for text in run.params:
        try:
            param_overrides.parse(text, param_overrides.ARM32_ROOTS)
        except param_overrides.BadOverride as err:
            raise BadExperiment(f"{where}: parameter '{text}': a 32-bit run takes the roots "
                                f"{', '.join(param_overrides.ARM32_ROOTS)}") from err
    workload = run.workload
    counts = workload.args
    if workload.benchmark != ARM32_BENCHMARK or len(counts) != 3 or not all(
            c.isdigit() for c in counts):
        raise BadExperiment(f"{where}: workload {workload.name}: a 32-bit run's benchmark is "
                            f"'{ARM32_BENCHMARK}' (the initramfs's /init) with args "
                            "[WARMUP, CALLS, RUNS]")
    _, calls, repeats = (int(c) for c in counts)
    if not (calls > 0 and 0 < repeats <= ARM32_MAX_RUNS and workload.iterations == calls):
        raise BadExperiment(f"{where}: workload {workload.name}: CALLS must be positive and "
                            f"equal 'iterations', RUNS 1 to {ARM32_MAX_RUNS}; got args "
                            f"{list(counts)}, iterations {workload.iterations}")
    if run.sample:
        raise BadExperiment(f"{where}: layout samples are for the arm64 guest; a 32-bit run "
                            "repeats its calls within one simulation (RUNS)")


def check_builds_modules(where: str, variant: str) -> None:
    """A workload that loads a module needs a kernel built with modules
    (called after variant_is_arm32 has checked that the variant exists)."""
    config = kernel.requested_config(KERNEL_PATCHES, variant)
    if config.get("CONFIG_MODULES") != "y":
        raise BadExperiment(f"{where}: loads a kernel module, but kernel variant '{variant}' "
                            "is built without modules (CONFIG_MODULES=y in its config)")


def _check_workload(path: Path, workload: Workload) -> None:
    if workload.benchmark == ARM32_BENCHMARK:
        return  # the 32-bit init; check_run checks its arguments
    if workload.kind == "selftests":
        tests = selftests_available()
        # kunit/<suite>: a KUnit suite the kernel ran at boot (run-selftest).
        if workload.args and workload.args[0].startswith("kunit/"):
            return
        if not workload.args or workload.args[0] not in tests:
            got = workload.args[0] if workload.args else "nothing"
            raise BadExperiment(f"{path}: workload {workload.name}: unknown selftest "
                                f"'{got}'; valid: {', '.join(tests)}")
        return
    benchmarks = {p.stem for p in (REPO_ROOT / "disk-image" / "benchmarks").glob("*.c")}
    if workload.benchmark not in benchmarks:
        raise BadExperiment(f"{path}: workload {workload.name}: unknown benchmark "
                            f"'{workload.benchmark}'; valid: {', '.join(sorted(benchmarks))}")
