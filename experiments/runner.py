"""Run an experiment: builds, boot checkpoints, detailed runs, tidy CSV.

Every simulation's outputs go to a content-addressed cache entry keyed by all
of its inputs (run spec, gem5 build, kernel, disk image, our gem5 configs,
checkpoint), so a run is skipped when its outputs exist for the same inputs.
"""

from __future__ import annotations

import collections
import csv
import json
import logging
import os
import re
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from builders import cache, disk, gem5, kernel
from experiments import selftests, stats
from experiments.spec import REPO_ROOT, Experiment, RunSpec, catalog

log = logging.getLogger(__name__)

CONFIGS = REPO_ROOT / "gem5-configs"
# A boot runs on the atomic CPU with no caches: core models, caches and
# parameter overrides do not change a checkpoint, so editing them keeps it.
NOT_USED_BY_BOOT = ("hardening/cores/", "hardening/caches.py", "hardening/params.py",
                    "hardening/sysreg.py")
RUN_SCRIPT = CONFIGS / "run.py"
BOOTLOADER = "boot_foundation.arm64"
CONSOLE = "board.terminal"
BOOT_MAX_TICKS = 5 * 10**12  # 5 s of guest time; a boot to init takes ~20 ms
TAIL_LINES = 30
PROGRESS_SECONDS = 60
GEM5_EXIT_MEANING = {
    2: "bad arguments or a feature this gem5 build lacks",
    3: "the guest script failed",
    4: "the guest kernel panicked or oopsed",
    5: "tick limit reached: the guest hung or never ran m5 exit",
    6: "unexpected exit event",
}


class SimulationFailed(RuntimeError):
    """A gem5 run ended badly; the message carries the guest console's tail."""


@dataclass(frozen=True)
class Builds:
    gem5: cache.Entry
    tools: cache.Entry
    disk: cache.Entry
    kernels: dict[str, cache.Entry]
    configs_digest: str
    boot_configs_digest: str

    @property
    def gem5_binary(self) -> Path:
        return self.gem5.path / "gem5.opt"

    def provenance(self, variant: str) -> dict[str, str]:
        return {
            "gem5_version": gem5.GEM5_VERSION,
            "gem5_build": self.gem5.key,
            "gem5_patches": ";".join(name for name, _ in self.gem5.manifest()["inputs"]["patches"]),
            "kernel_variant": variant,
            "kernel_source": " ".join(
                str(v) for v in self.kernels[variant].manifest()["inputs"]["source"].values()),
            "kernel_build": self.kernels[variant].key,
            "disk_build": self.disk.key,
            "configs_hash": self.configs_digest[:16],
        }


# Documentation (this file, docstrings, comments) does not change what a run
# computes, so it does not change the runs' keys.
DOCS = ("README.md",)


def configs_digests() -> dict[str, str]:
    return {"configs_digest": cache.tree_digest(CONFIGS, DOCS, cache.code_digest),
            "boot_configs_digest": cache.tree_digest(CONFIGS, NOT_USED_BY_BOOT + DOCS,
                                                     cache.code_digest)}


def ensure_builds(variants: list[str], jobs: int) -> Builds:
    gem5_patches = REPO_ROOT / "gem5-patches"
    tools = gem5.ensure_tools(gem5_patches, jobs)
    return Builds(
        gem5=gem5.ensure_gem5(gem5_patches, jobs),
        tools=tools,
        disk=disk.ensure_disk(REPO_ROOT / "disk-image", tools, jobs),
        kernels={v: kernel.ensure_kernel(REPO_ROOT / "kernel-patches", v, jobs)
                 for v in variants},
        **configs_digests(),
    )


def cached_builds(variants: list[str], jobs: int = 2) -> Builds | None:
    """The builds if gem5 and the kernels are already in the cache (those take
    hours); the disk image takes seconds and is built when missing."""
    gem5_patches = REPO_ROOT / "gem5-patches"
    tools = gem5.tools_entry(gem5_patches)
    simulator = gem5.gem5_entry(gem5_patches)
    kernels = {v: kernel.kernel_entry(REPO_ROOT / "kernel-patches", v) for v in variants}
    if not (tools.exists() and simulator.exists() and all(k.exists() for k in kernels.values())):
        return None
    return Builds(gem5=simulator, tools=tools,
                  disk=disk.ensure_disk(REPO_ROOT / "disk-image", tools, jobs),
                  kernels=kernels, **configs_digests())


def tail(path: Path, lines: int = TAIL_LINES) -> str:
    if not path.is_file():
        return f"({path.name} was not written)"
    return "\n".join(collections.deque(path.read_text(errors="replace").splitlines(), lines))


def run_gem5(builds: Builds, variant: str, outdir: Path, mode_args: list[str],
             label: str) -> float:
    """Run gem5.opt once; return host seconds, or raise with the console tail."""
    command = [
        str(builds.gem5_binary), f"--outdir={outdir}", str(RUN_SCRIPT), *mode_args,
        "--vmlinux", str(builds.kernels[variant].path / "vmlinux"),
        "--disk", str(builds.disk.path / disk.IMAGE_NAME),
        "--bootloader", str(builds.tools.path / BOOTLOADER),
    ]
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / "command.txt").write_text(" ".join(command) + "\n")
    started = time.monotonic()
    with (outdir / "simout.txt").open("w") as out, (outdir / "simerr.txt").open("w") as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, cwd=outdir)
        while True:
            try:
                code = process.wait(timeout=PROGRESS_SECONDS)
                break
            except subprocess.TimeoutExpired:
                log.info("%s: %.0f s, guest console: %s", label, time.monotonic() - started,
                         tail(outdir / CONSOLE, 1)[:100])
    seconds = time.monotonic() - started
    if code != 0:
        meaning = GEM5_EXIT_MEANING.get(code, "gem5 itself failed")
        raise SimulationFailed(
            f"{label}: gem5 exited with status {code} ({meaning}) after {seconds:.0f} s.\n"
            f"--- gem5 stderr (tail) ---\n{tail(outdir / 'simerr.txt', 15)}\n"
            f"--- guest console (tail) ---\n{tail(outdir / CONSOLE)}\n"
            f"(full outputs in {outdir})")
    return seconds


def check_models(builds: Builds, runs: list[RunSpec], jobs: int) -> None:
    """Build each distinct (core, features, params) model in gem5 without
    simulating, so a bad parameter path fails in seconds, not after a boot."""
    distinct = {(r.core, r.features, r.params): r for r in runs if r.cpu == "o3"}
    scratch = cache.cache_root() / "model-checks"

    def check(spec: RunSpec) -> None:
        outdir = scratch / f"{os.getpid()}-{cache.key_of(spec.as_dict())}"
        script = outdir / "unused.sh"
        outdir.mkdir(parents=True, exist_ok=True)
        script.write_text("true\n")
        try:
            run_gem5(builds, spec.variant, outdir, [
                "measure", "--check", "--core", spec.core,
                "--features", ",".join(spec.features), "--checkpoint", str(outdir),
                "--script", str(script), *[a for p in spec.params for a in ("--param", p)],
            *(["--atomic-clock", spec.workload.atomic_clock]
              if spec.cpu == "atomic" and spec.workload.atomic_clock else [])],
                f"check {spec.label}")
        finally:
            shutil.rmtree(outdir, ignore_errors=True)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for future in as_completed([pool.submit(check, r) for r in distinct.values()]):
            future.result()


def checkpoint_inputs(builds: Builds, spec: RunSpec) -> dict:
    architecture = catalog.architecture_of(spec.core)
    return {
        "gem5": builds.gem5.key, "kernel": builds.kernels[spec.variant].key,
        "disk": builds.disk.key, "configs": builds.boot_configs_digest,
        "architecture": [architecture, list(catalog.ARCHITECTURES[architecture])],
        "features": list(spec.features), "memory": spec.memory, "cores": spec.cores,
        # Only when given, so that boots without extra arguments keep their keys.
        **({"kernel_args": list(spec.kernel_args)} if spec.kernel_args else {}),
    }


def ensure_checkpoint(builds: Builds, spec: RunSpec) -> cache.Entry:
    """Boot once (atomic CPU) per (kernel, features, memory, cores) and checkpoint."""
    inputs = checkpoint_inputs(builds, spec)
    architecture = inputs["architecture"][0]
    entry = cache.entry("checkpoints", inputs)
    if entry.exists():
        return entry
    with cache.locked(entry.root / "checkpoints" / f"{entry.key}.lock"):
        if entry.exists():
            return entry
        label = (f"boot {spec.variant}{spec.cmdline_label} {architecture} "
                 f"[{'+'.join(spec.features) or 'none'}]")
        log.info("%s: booting on the atomic CPU to take a checkpoint", label)
        with entry.staging(inputs) as out:
            seconds = run_gem5(builds, spec.variant, out / "m5out", [
                "boot", "--architecture", architecture,
                "--features", ",".join(spec.features), "--memory", spec.memory,
                "--cores", str(spec.cores), "--max-ticks", str(BOOT_MAX_TICKS),
                *[a for k in spec.kernel_args for a in ("--kernel-arg", k)],
                "--checkpoint-out", str(out / "cpt")], label)
            (out / "boot.json").write_text(json.dumps({"host_seconds": round(seconds, 1)}) + "\n")
            log.info("%s: checkpoint taken in %.0f s", label, seconds)
    return entry


def run_key_inputs(builds: Builds, spec: RunSpec, checkpoint: cache.Entry | None) -> dict:
    return {"spec": spec.as_dict(), "gem5": builds.gem5.key,
            "kernel": builds.kernels[spec.variant].key, "disk": builds.disk.key,
            "configs": builds.configs_digest,
            "checkpoint": checkpoint.key if checkpoint is not None else None}


OPS_LINE = re.compile(r"\bops=(\d+)\b")


def measured_operations(console: str, spec: RunSpec) -> int:
    """The benchmark's own count of measured operations (its ``ops=`` line; it
    may round the requested count up), else the count the definition gives."""
    found = OPS_LINE.findall(console)
    return int(found[-1]) if found else spec.workload.iterations


def run_done(builds: Builds, spec: RunSpec) -> bool:
    """Whether this run's outputs are cached (without booting for its checkpoint)."""
    checkpoint = (None if spec.workload.from_reset
                  else cache.entry("checkpoints", checkpoint_inputs(builds, spec)))
    return cache.entry("runs", run_key_inputs(builds, spec, checkpoint)).exists()


def simulation_args(spec: RunSpec, checkpoint: cache.Entry | None, script: Path) -> list[str]:
    """run.py's arguments: restore the boot checkpoint, or (``from_reset``)
    boot on the run's own CPU with the boot's kernel arguments."""
    start = (["direct", *[a for k in spec.kernel_args for a in ("--kernel-arg", k)]]
             if checkpoint is None else ["measure", "--checkpoint", str(checkpoint.path / "cpt")])
    return [
        *start, "--cpu", spec.cpu, "--core", spec.core,
        "--architecture", catalog.architecture_of(spec.core),
        "--features", ",".join(spec.features),
        "--memory", spec.memory, "--cores", str(spec.cores),
        "--max-ticks", str(int(spec.max_ms * 1e9)),
        "--script", str(script), *[a for p in spec.params for a in ("--param", p)],
        *(["--atomic-clock", spec.workload.atomic_clock]
          if spec.cpu == "atomic" and spec.workload.atomic_clock else [])]


def run_one(builds: Builds, spec: RunSpec) -> cache.Entry:
    checkpoint = None if spec.workload.from_reset else ensure_checkpoint(builds, spec)
    inputs = run_key_inputs(builds, spec, checkpoint)
    entry = cache.entry("runs", inputs)
    if entry.exists():
        return entry
    with entry.staging(inputs) as out:
        (out / "spec.json").write_text(json.dumps(spec.as_dict(), indent=2) + "\n")
        script = out / "guest-script.sh"
        script.write_text(spec.guest_script())
        if checkpoint is None:
            log.info("%s: booting from reset on this CPU (no checkpoint)", spec.label)
        seconds = run_gem5(builds, spec.variant, out / "m5out",
                           simulation_args(spec, checkpoint, script), spec.label)
        shutil.copy2(out / "m5out" / CONSOLE, out / "console.log")
        if spec.workload.kind == "selftests":
            write_selftest_result(out, spec, seconds, builds)
            return entry
        dumps = stats.read_dumps(out / "m5out" / "stats.txt")
        if not dumps:
            raise SimulationFailed(f"{spec.label}: the guest never dumped statistics "
                                   f"(no m5 dumpstats in the measured region)\n"
                                   f"{tail(out / 'm5out' / CONSOLE)}")
        operations = measured_operations((out / "console.log").read_text(errors="replace"),
                                         spec)
        metrics = stats.region_metrics(dumps[0], operations)
        (out / "result.json").write_text(json.dumps({
            "metrics": [m.__dict__ for m in metrics],
            "host_seconds": round(seconds, 1),
            "host_inst_rate": stats.host_rate(dumps[0]),
            "operations": operations,
            "provenance": builds.provenance(spec.variant),
        }, indent=2) + "\n")
    return entry


def write_selftest_result(out: Path, spec: RunSpec, seconds: float, builds: Builds) -> None:
    """The verdicts of the selftests the run's console frames (a test that
    fails is a result, not an error; a test that never ends is an error)."""
    try:
        verdicts = selftests.parse((out / "console.log").read_text(errors="replace"))
    except selftests.MissingVerdict as err:
        raise SimulationFailed(f"{spec.label}: {err}\n{tail(out / 'console.log')}") from err
    if [v.test for v in verdicts] != [spec.workload.args[0]]:
        raise SimulationFailed(f"{spec.label}: expected the verdict of {spec.workload.args[0]}, "
                               f"the console has {[v.test for v in verdicts]}\n"
                               f"{tail(out / 'console.log')}")
    (v,) = verdicts
    metrics = [{"name": name, "value": value, "unit": unit} for name, value, unit in v.metrics()]
    # The whole simulation (from reset: the boot too), for how long such a run is.
    dumps = stats.read_dumps(out / "m5out" / "stats.txt")
    if dumps:
        metrics += [{"name": "sim_instructions", "value": int(dumps[-1]["simInsts"]),
                     "unit": "instructions"},
                    {"name": "sim_seconds", "value": dumps[-1]["simSeconds"], "unit": "s"}]
    (out / "result.json").write_text(json.dumps({
        "metrics": metrics,
        "host_seconds": round(seconds, 1),
        "host_inst_rate": "",
        "provenance": builds.provenance(spec.variant),
    }, indent=2) + "\n")


CSV_COLUMNS = ("experiment", "run", "cpu", "core", "variant", "kernel_args", "features",
               "params", "workload",
               "metric", "value", "unit", "gem5_version", "gem5_build", "gem5_patches",
               "kernel_variant", "kernel_source", "kernel_build", "disk_build", "configs_hash",
               "host_seconds", "host_inst_rate")


def rows_for(spec: RunSpec, entry: cache.Entry) -> list[dict[str, object]]:
    result = json.loads((entry.path / "result.json").read_text())
    common = {
        "experiment": spec.experiment, "run": entry.key, "cpu": spec.cpu,
        "core": spec.core if spec.cpu == "o3" else "",
        "variant": spec.variant, "features": "+".join(spec.features) or "none",
        "kernel_args": " ".join(spec.kernel_args),
        "params": " ".join(spec.params), "workload": spec.workload.name,
        **result["provenance"], "host_seconds": result["host_seconds"],
        "host_inst_rate": result["host_inst_rate"],
    }
    return [{**common, "metric": m["name"], "value": m["value"], "unit": m["unit"]}
            for m in result["metrics"]]


def write_csv(rows: list[dict[str, object]], path: Path,
              columns: tuple[str, ...] = CSV_COLUMNS) -> None:
    """Write the CSV whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with partial.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    partial.rename(path)


def run_experiment(experiment: Experiment, jobs: int, results_dir: Path) -> Path:
    variants = sorted({run.variant for run in experiment.runs})
    builds = ensure_builds(variants, jobs)
    runs = list(experiment.runs)
    log.info("%s: %d runs, up to %d at a time", experiment.name, len(runs), jobs)
    pending = [r for r in runs if not run_done(builds, r)]
    if pending:
        check_models(builds, pending, jobs)
    # Checkpoints first, one per boot configuration, so parallel runs share them.
    boots = {(r.variant, catalog.architecture_of(r.core), r.features, r.memory, r.cores,
              r.kernel_args): r for r in runs if not r.workload.from_reset}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for future in as_completed([pool.submit(ensure_checkpoint, builds, r)
                                    for r in boots.values()]):
            future.result()
    entries: dict[RunSpec, cache.Entry] = {}
    failures: list[str] = []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(run_one, builds, spec): spec for spec in runs}
        for done, future in enumerate(as_completed(futures), start=1):
            spec = futures[future]
            try:
                entries[spec] = future.result()
                log.info("[%d/%d] %s: done", done, len(runs), spec.label)
            except SimulationFailed as err:
                failures.append(str(err))
                log.error("[%d/%d] %s: FAILED", done, len(runs), spec.label)
    if failures:
        raise SimulationFailed("\n\n".join(failures))
    rows = [row for spec in runs for row in rows_for(spec, entries[spec])]
    target = results_dir / f"{experiment.name}.csv"
    write_csv(rows, target)
    log.info("%s: wrote %s (%d rows)", experiment.name, target, len(rows))
    return target
