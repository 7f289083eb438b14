"""Stage two: raw gem5 outputs to tidy rows, recomputed on every run.

Nothing here is cached: deriving the metrics from ``stats.txt`` and the guest
console takes milliseconds, so a change to this code (or to ``stats.py`` or
``selftests.py``) changes the CSV at the next run without re-simulating.
Every row carries the run's coordinates and the provenance its raw output's
sidecar recorded.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from builders import cache, gem5
from experiments import raw_outputs, selftests, stats
from experiments.raw_outputs import SimulationFailed, tail
from experiments.spec import RunSpec, catalog

COORDINATES = ("experiment", "run", "cpu", "core", "cores", "nodes", "variant", "kernel_args",
               "features", "params", "workload", "sample")
# Coordinates added later, with the value every older row had.
LATER_COORDINATES = {"cores": "1", "nodes": "1"}
PROVENANCE = ("gem5_version", "gem5_build", "gem5_patches", "gem5_tools_build",
              "kernel_variant", "kernel_source", "kernel_build", "disk_build", "checkpoint",
              "configs_hash", "repo_commit", "repo_dirty")
# How long the host took: differs between two makings of one run.
HOST_TIMING = ("host_seconds", "host_inst_rate", "host_split")
CSV_COLUMNS = (*COORDINATES, "metric", "value", "unit", *PROVENANCE, "host_seconds",
               "host_inst_rate", "detail", "host_split")
OPS_LINE = re.compile(r"\bops=(\d+)\b")
# pgtable_bench's count of 64 KiB (or, PTE-mapped, 2 MiB) folios the kernel
# allocated while it populated its memory, beside how many it asked for:
# which folio size a run measured (-1: the kernel's counter could not be read).
FOLIOS_LINE = re.compile(r"\bfolios_(64k|pmd)=(-?\d+) of (\d+)\b")
# vmalloc_bench's report of the time test_vmalloc measured for its loops
# itself (ktime, microseconds): the published measure, which leaves out the
# module's loading that the region holds too.
KERNEL_US_LINE = re.compile(r"\bkernel_us=(\d+)\b")
# The 32-bit init's line per run (disk-image/arm32-initramfs/init.c): its
# calls and the guest's CLOCK_MONOTONIC nanoseconds around them.
ARM32_RUN_LINE = re.compile(r"^c3-getppid run=\d+ calls=(\d+) ns=(\d+) ", re.MULTILINE)


class BadOutput(RuntimeError):
    """A raw output that does not hold what its workload must report."""


def measured_operations(console: str, label: str) -> int:
    """The benchmark's own count of measured operations (its ``ops=`` line:
    it may round the requested count up). A console without one is an error:
    the benchmark did not finish as it should."""
    found = OPS_LINE.findall(console)
    if not found:
        raise BadOutput(f"{label}: the benchmark printed no ops= line (did it finish?)")
    return int(found[-1])


def guest_reported(console: str) -> list[stats.Metric]:
    """Counts the benchmark printed itself (from the kernel's own counters)."""
    metrics = []
    if found := FOLIOS_LINE.findall(console):
        size, allocated, requested = found[-1]
        metrics += [stats.Metric(f"folios_{size}", float(allocated), "folios"),
                    stats.Metric(f"folios_{size}_requested", float(requested), "folios")]
    if found := KERNEL_US_LINE.findall(console):
        metrics.append(stats.Metric("kernel_timed_us", float(found[-1]), "us"))
    return metrics


def _manifest_field(kind: str, key: str, *path: str) -> str:
    """A field of a build's cache manifest ("" when that entry is gone)."""
    entry = cache.Entry(kind=kind, key=key, root=cache.cache_root())
    if not key or not entry.exists():
        return ""
    value: object = entry.manifest()["inputs"]
    for name in path:
        value = value[name]  # type: ignore[index]
    if isinstance(value, dict):
        return " ".join(str(v) for v in value.values())
    return str(value)


def _patch_ids(key: str) -> str:
    """The gem5 build's patch series as ``0001-0021:<8 hex>`` (see
    ``patches.series_id``): short, since the column repeats on every row; the
    build's manifest in the cache lists each patch's hash."""
    entry = cache.Entry(kind="gem5", key=key, root=cache.cache_root())
    if not key or not entry.exists():
        return ""
    return gem5.patch_ids(entry)


def provenance(raw: Path) -> dict[str, object]:
    sidecar = json.loads((raw / raw_outputs.PROVENANCE).read_text())
    return {
        **{k: sidecar.get(k, "") for k in PROVENANCE},
        "gem5_patches": _patch_ids(sidecar["gem5_build"]),
        "kernel_source": _manifest_field("kernel", sidecar["kernel_build"], "source"),
        "host_seconds": sidecar["host_seconds"],
    }


def model_parts(spec: RunSpec) -> tuple[str, ...]:
    """The run's features and, on two nodes, the links between them (whose
    counters are then required)."""
    return (*spec.features, *((stats.NODE_LINKS,) if spec.nodes > 1 else ()))


def model_objects(raw: Path) -> tuple[str, ...]:
    """Optional model parts the run's configuration says it placed (its
    model.json): the TLB-maintenance timing, which tlbi.* parameters create,
    and the privilege counters (runs made before those existed lack them)."""
    model = raw_outputs.model(raw)
    return (*((stats.TLBI_TIMING,) if model.get("tlbi_timing") else ()),
            *((stats.PRIVILEGE,) if model.get("privilege_cycles") else ()))


def benchmark_metrics(spec: RunSpec, raw: Path) -> tuple[list[stats.Metric], float | None]:
    dumps = stats.read_dumps(raw_outputs.stats(raw))
    if not dumps:
        raise BadOutput(f"{spec.label}: the guest never dumped statistics (no m5 dumpstats "
                        f"in the measured region)\n{tail(raw_outputs.console(raw))}")
    console = raw_outputs.console(raw).read_text(errors="replace")
    operations = measured_operations(console, spec.label)
    parts = model_parts(spec) + model_objects(raw)
    try:
        metrics = stats.region_metrics(dumps[0], operations, parts)
    except stats.MissingStats as err:
        raise BadOutput(f"{spec.label}: {err} ({raw_outputs.stats(raw)})") from err
    return metrics + guest_reported(console), stats.host_rate(dumps[0])


def run_detail(raw: Path) -> str:
    """How much of the run the core model simulated (runs made before the
    choice existed: all of it)."""
    return str(raw_outputs.model(raw).get("detail") or catalog.DETAIL_FULL)


def host_split(raw: Path, region_dumped: bool = True) -> str:
    """Host seconds of a fast-forward run's parts, ``setup=…;warmup=…;region=…;teardown=…``:
    before the guest asked for detail, the detailed part less the region,
    the region (its dump's hostSeconds), after detail ended. Without a
    region dump (``region_dumped`` false: a selftest, whose test program is
    all of the detailed part) the detailed part is the region. Empty for runs
    without a log of the requests (full detail, 32-bit runs, older runs)."""
    log = raw_outputs.detail(raw).get("host_seconds")
    if not isinstance(log, dict) or not log["detailed"]:
        return ""
    if region_dumped:
        dumps = (stats.read_dumps(raw_outputs.stats(raw)) if raw_outputs.stats(raw).is_file()
                 else [])
        if not dumps:
            return ""
        region = dumps[0].get("hostSeconds", 0.0)
    else:
        region = log["detailed"]
    parts = {"setup": log["setup"], "warmup": max(log["detailed"] - region, 0.0),
             "region": region, "teardown": log["teardown"]}
    return ";".join(f"{name}={seconds:.1f}" for name, seconds in parts.items())


def arm32_metrics(spec: RunSpec, raw: Path) -> list[tuple[list[stats.Metric], float | None]]:
    """Each run of the 32-bit init's getppid loop: the metrics of its own
    statistics dump (the init resets before and dumps after each run; gem5's
    dump at exit comes after them), and the guest's own clock for the run,
    m5 operations included, as the init's QEMU runs time it."""
    _, calls, repeats = (int(c) for c in spec.workload.args)
    console = raw_outputs.console(raw).read_text(errors="replace")
    reported = [(int(c), int(ns)) for c, ns in ARM32_RUN_LINE.findall(console)]
    if len(reported) != repeats or any(c != calls for c, _ in reported):
        raise BadOutput(f"{spec.label}: the init reported {len(reported)} runs of "
                        f"{sorted({c for c, _ in reported})} calls, expected {repeats} of "
                        f"{calls}\n{tail(raw_outputs.console(raw))}")
    dumps = stats.read_dumps(raw_outputs.stats(raw))
    if len(dumps) < repeats:
        raise BadOutput(f"{spec.label}: {len(dumps)} statistics dumps for {repeats} runs "
                        f"({raw_outputs.stats(raw)})")
    measured = []
    for dump, (_, guest_ns) in zip(dumps[:repeats], reported):
        try:
            metrics = stats.region_metrics(dump, calls, model_parts(spec))
        except stats.MissingStats as err:
            raise BadOutput(f"{spec.label}: {err} ({raw_outputs.stats(raw)})") from err
        metrics.append(stats.Metric("guest_ns_per_iteration", guest_ns / calls, "ns"))
        measured.append((metrics, stats.host_rate(dump)))
    return measured


def selftest_metrics(spec: RunSpec, raw: Path) -> list[stats.Metric]:
    """The verdict of the selftest the run's console frames (a test that fails
    is a result, not an error; a test that never ends is an error)."""
    console = raw_outputs.console(raw).read_text(errors="replace")
    try:
        verdicts = selftests.parse(console)
    except selftests.MissingVerdict as err:
        raise SimulationFailed(f"{spec.label}: {err}\n{tail(raw_outputs.console(raw))}") from err
    if [v.test for v in verdicts] != [spec.workload.args[0]]:
        raise BadOutput(f"{spec.label}: expected the verdict of {spec.workload.args[0]}, "
                        f"the console has {[v.test for v in verdicts]}")
    (verdict,) = verdicts
    metrics = [stats.Metric(name, value, unit)  # type: ignore[arg-type]
               for name, value, unit in verdict.metrics()]
    # The whole simulation (from reset: the boot too), for how long such a run is.
    dumps = stats.read_dumps(raw_outputs.stats(raw))
    if dumps:
        metrics += [stats.Metric("sim_instructions", int(dumps[-1]["simInsts"]), "instructions"),
                    stats.Metric("sim_seconds", dumps[-1]["simSeconds"], "s")]
    return metrics



def run_coordinates(spec: RunSpec) -> dict[str, object]:
    """Where a run's rows sit, as the CSV's coordinate columns record it (all
    but ``run`` and ``sample``)."""
    return {"experiment": spec.experiment, "cpu": spec.cpu,
            "core": spec.core if spec.cpu == "o3" else "", "cores": spec.cores,
            "nodes": spec.nodes, "variant": spec.variant,
            "features": "+".join(spec.features) or "none",
            "kernel_args": " ".join(spec.kernel_args), "params": " ".join(spec.params),
            "workload": spec.workload.name}

def rows_for(spec: RunSpec, raw: cache.Entry) -> list[dict[str, object]]:
    """Every row one run gives: a metric each, with coordinates and provenance."""
    # (sample, metrics, host rate) for each measurement the run holds: one,
    # except a 32-bit run, whose guest runs are its samples 0, 1, ...
    if spec.workload.kind == "selftests":
        measured = [(spec.sample, selftest_metrics(spec, raw.path), None)]
    elif spec.arm32:
        measured = [(k, m, r) for k, (m, r) in enumerate(arm32_metrics(spec, raw.path))]
    else:
        measured = [(spec.sample, *benchmark_metrics(spec, raw.path))]
    common = {
        **run_coordinates(spec), "run": raw.key, **provenance(raw.path),
        "detail": run_detail(raw.path) if spec.cpu == "o3" else "",
        "host_split": host_split(raw.path, region_dumped=spec.workload.kind == "benchmark"),
    }
    return [{**common, "sample": sample, "host_inst_rate": "" if rate is None else rate,
             "metric": m.name, "value": m.value, "unit": m.unit}
            for sample, metrics, rate in measured for m in metrics]


def read_csv(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def csv_lock(path: Path) -> contextlib.AbstractContextManager[None]:
    """Exclusive hold on reading, merging and writing one results file (the
    lock file lives in the cache, not beside the results)."""
    name = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    return cache.locked(cache.cache_root() / "locks" / f"results-{name}.lock")


def place_of(row: dict[str, object]) -> tuple[str, ...]:
    """Where a row's run sits in its experiment: its coordinates but the run
    key (which another build changes)."""
    return tuple(str(row.get(c, LATER_COORDINATES.get(c, ""))) for c in COORDINATES
                 if c != "run")


def covered_by(new: Sequence[dict[str, object]], cpu_filter: str | None, partial: bool
               ) -> Callable[[dict[str, object]], bool]:
    """Which existing rows a partial run's ``new`` rows stand in for: those of
    the runs a quick part, a ``--sample`` or a ``--variant``/``--features`` run
    made (their places, which name the CPU type, variant, feature set and sample
    too), or else every row of the CPU type a ``--cpu`` run
    made."""
    if partial:
        places = {place_of(row) for row in new}
        return lambda row: place_of(row) in places
    if cpu_filter:
        return lambda row: row["cpu"] == cpu_filter
    raise ValueError("a whole run's rows replace the file; nothing is merged")


def merge_into(path: Path, new: Sequence[dict[str, object]], cpu_filter: str | None,
               partial: bool) -> list[dict[str, object]]:
    """Merge a partial run's rows into the results file at ``path`` (under its
    lock) and return what was written."""
    with csv_lock(path):
        rows = merged(read_csv(path), new, covered_by(new, cpu_filter, partial), path)
        write_csv(rows, path)
    return rows


def merged(existing: Iterable[dict[str, str]], new: Sequence[dict[str, object]],
           covered: Callable[[dict[str, object]], bool], path: Path | None = None
           ) -> list[dict[str, object]]:
    """``new`` rows in place of the existing rows a partial run covered (those
    of the CPU types a ``--cpu`` run made, or of the runs a quick part, a
    ``--sample`` or a ``--variant``/``--features`` run made);
    every other existing row kept (in its place, first). Refused for files
    older than the current columns: their rows cannot be told apart."""
    kept: list[dict[str, object]] = []
    for row in existing:
        row = {**LATER_COORDINATES, **row}
        missing = [c for c in COORDINATES if c not in row]
        if missing:
            raise BadOutput(f"{path or 'the results file'} lacks the columns "
                            f"{', '.join(missing)}: run the whole experiment to write it "
                            "whole")
        if not covered(row):
            kept.append(dict(row))
    return kept + list(new)


def write_csv(rows: Sequence[dict[str, object]], path: Path,
              columns: tuple[str, ...] = CSV_COLUMNS) -> None:
    """Write the CSV whole or not at all (columns it lacks left empty)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile("w", newline="", dir=path.parent,
                                         prefix=f".{path.name}.", suffix=".partial",
                                         delete=False)
    try:
        with handle:
            writer = csv.DictWriter(handle, fieldnames=columns, restval="",
                                    extrasaction="ignore")
            writer.writeheader()
            writer.writerows(rows)
        # A temporary file is private (0600); results are for everyone to read.
        os.chmod(handle.name, 0o644)
        os.replace(handle.name, path)
    finally:
        if os.path.exists(handle.name):
            os.unlink(handle.name)
