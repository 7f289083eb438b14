"""Stage one: run gem5 and keep its raw outputs, keyed by what gem5 runs.

A simulation is gem5's argument list. Its cache key is that list with every
file replaced by what identifies its content (a cache entry's key, or the
guest script's text), the gem5 build's key and the hash of the code gem5
imports (``gem5-configs/``, docstrings and comments left out). Nothing else:
labels, experiment names and the code that turns outputs into results are not
in it, so changing them re-simulates nothing, and a change to what gem5 runs
always re-simulates.

A raw output directory holds ``m5out/`` (stats.txt, config.json, the guest
console), ``command.txt`` and ``provenance.json``, the sidecar saying which
commit of this repository, builds and host made it.
"""

from __future__ import annotations

import collections
import hashlib
import json
import logging
import platform
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from builders import buildroot, cache, disk, gem5, initramfs, kernel
from builders.process import run
from experiments import backends
from experiments.spec import REPO_ROOT, RunSpec, catalog, variant_is_arm32

log = logging.getLogger(__name__)

CONFIGS = REPO_ROOT / "gem5-configs"
BOOTLOADER = "boot_foundation.arm64"
CONSOLE = "board.terminal"
BOOT_MAX_TICKS = 5 * 10**12  # 5 s of guest time; a boot to init takes ~20 ms
TAIL_LINES = 30
PROGRESS_SECONDS = 60.0
# run.py prints one of these now and then (hardening/progress.py).
PROGRESS_LINE = re.compile(r"^progress: tick=(\d+) start=(\d+) limit=(\d+) insts=(\d+)")
TICKS_PER_SECOND = 10**12
GEM5_EXIT_MEANING = {
    2: "bad arguments or a feature this gem5 build lacks",
    3: "the guest script failed",
    4: "the guest kernel panicked or oopsed",
    5: "tick limit reached: the guest hung or never ran m5 exit",
    6: "unexpected exit event",
    -signal.SIGKILL: "killed",
    -signal.SIGTERM: "stopped",
}


class SimulationFailed(RuntimeError):
    """A gem5 run ended badly; the message carries the guest console's tail."""


class Cancelled(RuntimeError):
    """The user stopped the experiment (Ctrl-C); nothing partial is kept."""


@dataclass(frozen=True)
class Builds:
    """The cached builds a simulation uses."""

    gem5: cache.Entry
    tools: cache.Entry
    disk: cache.Entry
    kernels: dict[str, cache.Entry]
    configs: cache.Entry
    # The 32-bit board's guest side (boot.arm, the initramfs): only when a
    # 32-bit kernel variant runs.
    arm32_tools: cache.Entry | None = None
    initramfs: cache.Entry | None = None

    @property
    def gem5_binary(self) -> Path:
        """gem5.opt or gem5.fast: the one binary the gem5 entry was built as."""
        variant = self.gem5.manifest()["inputs"]["options"]["variant"]
        return self.gem5.path / gem5.Gem5BuildOptions(variant=variant).binary

    @property
    def configs_digest(self) -> str:
        return str(self.configs.manifest()["inputs"]["code"])

    @property
    def run_script(self) -> Path:
        return self.configs.path / "run.py"

    def guest(self, variant: str) -> tuple[cache.Entry, cache.Entry]:
        """The guest tools and the disk a variant's runs use: for a 32-bit
        variant, the 32-bit bootloader and the initramfs (the provenance
        columns gem5_tools_build and disk_build name these)."""
        if not variant_is_arm32(variant, variant):
            return self.tools, self.disk
        if self.arm32_tools is None or self.initramfs is None:
            raise RuntimeError(f"kernel variant {variant} is 32-bit: its runs need boot.arm "
                               "and the initramfs, which these builds lack")
        return self.arm32_tools, self.initramfs

    def guest_provenance(self, variant: str) -> dict[str, str]:
        """What the guest side of a run was: kernel, disk, guest tools."""
        kernel_entry = self.kernels[variant]
        tools, guest_disk = self.guest(variant)
        return {
            "kernel_variant": variant,
            "kernel_source": " ".join(
                str(v) for v in kernel_entry.manifest()["inputs"]["source"].values()),
            "kernel_build": kernel_entry.key,
            "disk_build": guest_disk.key,
            "gem5_tools_build": tools.key,
        }


def snapshot_configs(root: Path | None = None) -> cache.Entry:
    """A copy of ``gem5-configs/``'s Python files in the cache, keyed by their
    code (docstrings and comments left out). gem5 runs the copy, so an edit or a
    checkout while a long experiment runs cannot make a simulation run other
    code than its key says."""
    root = root or cache.cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root, prefix=".configs-") as scratch:
        copy = Path(scratch) / "configs"
        for source in sorted(CONFIGS.rglob("*.py")):
            if "__pycache__" in source.parts:
                continue
            target = copy / source.relative_to(CONFIGS)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
        inputs = {"code": cache.tree_digest(copy, (), cache.code_digest)}
        entry = cache.entry("gem5-configs", inputs, root)
        if entry.usable():
            return entry
        with entry.lock():
            if not entry.exists():
                with entry.staging(inputs) as out:
                    shutil.copytree(copy, out, dirs_exist_ok=True)
    return entry


def builds_to_make(variants: Sequence[str], simulator: bool = True,
                   gem5_variant: str = "opt") -> list[str]:
    """What the runs of these kernel variants need that the cache lacks (the
    long builds; the disk image takes under a minute and is not listed)."""
    gem5_patches = REPO_ROOT / "gem5-patches"
    options = gem5.Gem5BuildOptions(variant=gem5_variant)
    missing = []
    if simulator and not gem5.gem5_entry(gem5_patches, options).exists():
        missing.append(f"{options.binary} (1.5-2.5 h on 2 cores)")
    if not gem5.tools_entry(gem5_patches).exists():
        missing.append("the guest m5 tool and bootloaders (minutes)")
    kernels = [v for v in variants
               if not kernel.kernel_entry(REPO_ROOT / "kernel-patches", v).exists()]
    if kernels:
        missing.append(f"{len(kernels)} kernel variant(s), 5-25 min each on 2 cores (20-25 "
                       "without ccache hits, as for a variant that changes a widely included "
                       "header): "
                       + ", ".join(kernels))
    return missing


def ensure_builds(variants: Sequence[str], jobs: int, simulator: bool = True,
                  rootfs: str = "debian", gem5_variant: str = "opt") -> Builds:
    """Builds exactly what runs of these kernel variants need, saying first what
    that is. Without ``simulator`` (guests run on QEMU) gem5 itself is not built:
    its entry is named but may be absent. ``rootfs`` names the disk image's
    builder (``buildroot.ROOTFS_BUILDERS``), ``gem5_variant`` gem5's binary
    (``gem5.VARIANTS``)."""
    options = gem5.Gem5BuildOptions(variant=gem5_variant)
    missing = builds_to_make(variants, simulator, gem5_variant)
    # The disk image is keyed by the guest tools' build, so it cannot be
    # looked up before them; it is built below when missing, in minutes.
    log.info("long builds needed and not cached: %s (the disk image is checked next)",
             "; ".join(missing) if missing else "none")
    gem5_patches = REPO_ROOT / "gem5-patches"
    tools = gem5.ensure_tools(gem5_patches, jobs)
    # boot.arm and the initramfs take seconds to build.
    arm32 = any(variant_is_arm32(v, v) for v in variants)
    return Builds(
        gem5=(gem5.ensure_gem5(gem5_patches, jobs, options=options) if simulator
              else gem5.gem5_entry(gem5_patches, options)),
        tools=tools,
        disk=buildroot.ensure_rootfs(rootfs, REPO_ROOT / "disk-image", tools, jobs),
        kernels={v: kernel.ensure_kernel(REPO_ROOT / "kernel-patches", v, jobs)
                 for v in variants},
        configs=snapshot_configs(),
        arm32_tools=gem5.ensure_arm32_tools(gem5_patches) if arm32 else None,
        initramfs=initramfs.ensure_initramfs(REPO_ROOT / "disk-image") if arm32 else None,
    )


def cached_builds(variants: Sequence[str], jobs: int = 2) -> Builds | None:
    """The builds if gem5 and the kernels are already in the cache (those take
    hours); the disk image takes a minute and is built when missing."""
    gem5_patches = REPO_ROOT / "gem5-patches"
    tools = gem5.tools_entry(gem5_patches)
    simulator = gem5.gem5_entry(gem5_patches)
    kernels = {v: kernel.kernel_entry(REPO_ROOT / "kernel-patches", v) for v in variants}
    if not (tools.exists() and simulator.exists() and all(k.exists() for k in kernels.values())):
        return None
    arm32_tools = None
    if any(variant_is_arm32(v, v) for v in variants):
        arm32_tools = gem5.arm32_tools_entry(gem5_patches)
        if not arm32_tools.exists():
            return None
    return Builds(gem5=simulator, tools=tools,
                  disk=disk.ensure_disk(REPO_ROOT / "disk-image", tools, jobs),
                  kernels=kernels, configs=snapshot_configs(), arm32_tools=arm32_tools,
                  initramfs=(initramfs.ensure_initramfs(REPO_ROOT / "disk-image")
                             if arm32_tools else None))


# --- what gem5 runs ---------------------------------------------------------

@dataclass(frozen=True)
class CachedFile:
    """A file inside a cache entry: keyed by the entry's key."""

    entry: cache.Entry
    name: str

    def concrete(self, outdir: Path) -> str:
        return str(self.entry.path / self.name)

    def canonical(self) -> str:
        return f"{self.entry.kind}/{self.entry.key}/{self.name}"


@dataclass(frozen=True)
class GuestScript:
    """The shell script the guest runs, written beside gem5's outputs."""

    text: str

    def concrete(self, outdir: Path) -> str:
        path = outdir / "guest-script.sh"
        path.write_text(self.text)
        return str(path)

    def canonical(self) -> str:
        return "guest-script:" + hashlib.sha256(self.text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class OutputDir:
    """A directory gem5 writes into the entry (the boot's checkpoint)."""

    name: str

    def concrete(self, outdir: Path) -> str:
        return str(outdir / self.name)

    def canonical(self) -> str:
        return f"output:{self.name}"


Arg = str | CachedFile | GuestScript | OutputDir


@dataclass(frozen=True)
class Simulation:
    """One gem5 invocation of ``run.py``: its arguments and what it is for."""

    kind: str  # cache kind: "checkpoints", "runs", "traces"
    args: tuple[Arg, ...]
    label: str
    variant: str
    max_ticks: int
    builds: Builds = field(compare=False, repr=False)
    checkpoint: cache.Entry | None = None
    # gem5's own options (debug flags and files), before its script; paths in
    # them are relative to the run's m5out, so they are the same on every host.
    gem5_options: tuple[str, ...] = ()
    # A trace's counts as its reader writes them (not kept by gem5): named
    # only when set, so the keys of runs and instruction traces stay as they were.
    counts: str = ""

    def key_inputs(self) -> dict[str, object]:
        inputs: dict[str, object] = {
            "gem5": self.builds.gem5.key,
            "configs": self.builds.configs_digest,
            "argv": [a if isinstance(a, str) else a.canonical() for a in self.args],
            "scripts": [a.text for a in self.args if isinstance(a, GuestScript)],
        }
        if self.gem5_options:
            inputs["gem5_options"] = list(self.gem5_options)
        if self.counts:
            inputs["counts"] = self.counts
        return inputs

    def entry(self) -> cache.Entry:
        return cache.entry(self.kind, self.key_inputs())

    def command(self, outdir: Path) -> list[str]:
        return [str(self.builds.gem5_binary), f"--outdir={outdir / 'm5out'}",
                *self.gem5_options, str(self.builds.run_script),
                *[a if isinstance(a, str) else a.concrete(outdir) for a in self.args]]


def _files(builds: Builds, variant: str) -> list[Arg]:
    return ["--vmlinux", CachedFile(builds.kernels[variant], "vmlinux"),
            "--disk", CachedFile(builds.disk, disk.IMAGE_NAME),
            "--bootloader", CachedFile(builds.tools, BOOTLOADER)]


def _arm32_files(builds: Builds, variant: str) -> list[Arg]:
    """What the 32-bit board starts: the kernel, boot.arm and the initramfs."""
    bootloader, guest = builds.guest(variant)
    return ["--vmlinux", CachedFile(builds.kernels[variant], "vmlinux"),
            "--bootloader", CachedFile(bootloader, gem5.ARM32_BOOTLOADER),
            "--initramfs", CachedFile(guest, initramfs.IMAGE_NAME)]


def _numa_args(spec: RunSpec) -> list[Arg]:
    # Named only when there are two nodes, so one-node keys stay what they were.
    return ["--numa-nodes", str(spec.nodes)] if spec.nodes > 1 else []


def boot_simulation(builds: Builds, spec: RunSpec) -> Simulation:
    """Boot on the atomic CPU to init and checkpoint: one per (kernel,
    architecture, features, memory, cores, nodes, kernel arguments)."""
    architecture = catalog.architecture_of(spec.core)
    label = (f"boot{spec.machine_label} {spec.variant}{spec.cmdline_label} {architecture} "
             f"[{'+'.join(spec.features) or 'none'}]")
    if spec.arm32:
        # The init stops at its m5 checkpoint, before the loop: the counts come
        # from the restore (m5 readfile), so every workload shares the boot.
        args32: list[Arg] = [
            "arm32", *_arm32_files(builds, spec.variant), "--memory", spec.memory,
            "--cores", str(spec.cores), "--max-ticks", str(BOOT_MAX_TICKS),
            *[a for k in spec.kernel_args for a in ("--kernel-arg", k)],
            "--checkpoint-out", OutputDir("cpt")]
        return Simulation("checkpoints", tuple(args32), label, spec.variant, BOOT_MAX_TICKS,
                          builds)
    args: list[Arg] = [
        "boot", *_files(builds, spec.variant), "--architecture", architecture,
        "--features", ",".join(spec.features), "--memory", spec.memory,
        "--cores", str(spec.cores), *_numa_args(spec), "--max-ticks", str(BOOT_MAX_TICKS),
        *[a for k in spec.kernel_args for a in ("--kernel-arg", k)],
        "--checkpoint-out", OutputDir("cpt")]
    return Simulation("checkpoints", tuple(args), label, spec.variant, BOOT_MAX_TICKS, builds)


def kernel_module(builds: Builds, spec: RunSpec) -> bytes | None:
    """The run's kernel module from its kernel build, if its workload loads one."""
    name = spec.workload.kernel_module
    if not name:
        return None
    modules = builds.kernels[spec.variant].path / kernel.MODULES_DIR
    path = modules / f"{name}.ko"
    if not path.is_file():
        built = sorted(p.stem for p in modules.glob("*.ko"))
        raise FileNotFoundError(f"{spec.label}: kernel {spec.variant} built no module "
                                f"'{name}'; its modules: {', '.join(built) or 'none'}")
    return path.read_bytes()


def run_simulation(builds: Builds, spec: RunSpec, checkpoint: cache.Entry | None,
                   check: bool = False) -> Simulation:
    """Restore the boot's checkpoint into the run's CPU and run the guest
    script; or (``from_reset``) boot on the run's own CPU with no checkpoint.
    ``check``: only build the run's model in gem5 (a bad parameter name fails
    in seconds, before any boot)."""
    if spec.arm32:
        return _arm32_run_simulation(builds, spec, checkpoint, check)
    if check:
        start: list[Arg] = ["measure", "--check", "--checkpoint", OutputDir("unused")]
    elif checkpoint is None:
        start = ["direct", *[a for k in spec.kernel_args for a in ("--kernel-arg", k)]]
    else:
        start = ["measure", "--checkpoint", CachedFile(checkpoint, "cpt")]
    max_ticks = int(spec.max_ms * 1e9)
    args: list[Arg] = [
        *start, *_files(builds, spec.variant), "--cpu", spec.cpu, "--core", spec.core,
        "--architecture", catalog.architecture_of(spec.core),
        "--features", ",".join(spec.features),
        "--memory", spec.memory, "--cores", str(spec.cores), *_numa_args(spec),
        "--max-ticks", str(max_ticks),
        # A model check reads no script: one check per distinct model.
        "--script", GuestScript("# model check\n" if check
                                else spec.guest_script(kernel_module(builds, spec))),
        *[a for p in spec.params for a in ("--param", p)],
        *(["--atomic-clock", spec.workload.atomic_clock]
          if spec.cpu == "atomic" and spec.workload.atomic_clock else [])]
    kind, label = ("model-checks", f"check {spec.label}") if check else ("runs", spec.label)
    return Simulation(kind, tuple(args), label, spec.variant, max_ticks, builds, checkpoint)


def _arm32_run_simulation(builds: Builds, spec: RunSpec, checkpoint: cache.Entry | None,
                          check: bool) -> Simulation:
    """Restore a 32-bit boot's checkpoint into the run's core model; the init
    takes WARMUP CALLS RUNS from m5 readfile and brackets each run with m5
    resetstats/dumpstats (one statistics dump per run). ``check``: only build
    the model."""
    if check:
        start: list[Arg] = ["arm32-measure", "--check", "--checkpoint", OutputDir("unused")]
    elif checkpoint is None:
        raise ValueError(f"{spec.label}: a 32-bit run restores its boot's checkpoint")
    else:
        start = ["arm32-measure", "--checkpoint", CachedFile(checkpoint, "cpt")]
    max_ticks = int(spec.max_ms * 1e9)
    args: list[Arg] = [
        *start, *_arm32_files(builds, spec.variant), "--cpu", spec.cpu, "--core", spec.core,
        "--memory", spec.memory, "--cores", str(spec.cores), "--max-ticks", str(max_ticks),
        "--init-args", spec.init_args, *[a for p in spec.params for a in ("--param", p)]]
    kind, label = ("model-checks", f"check {spec.label}") if check else ("runs", spec.label)
    return Simulation(kind, tuple(args), label, spec.variant, max_ticks, builds, checkpoint)


# --- provenance -------------------------------------------------------------

@dataclass(frozen=True)
class RepoState:
    """This repository's commit and whether its work tree differs from it."""

    commit: str
    dirty: bool

    @classmethod
    def read(cls, root: Path = REPO_ROOT) -> RepoState:
        try:
            commit = run(["git", "-C", str(root), "rev-parse", "HEAD"]).strip()
            # Untracked files count: a new kernel variant or config file is input.
            dirty = bool(run(["git", "-C", str(root), "status", "--porcelain"]).strip())
        except Exception:  # noqa: BLE001 - a copy without git history
            return cls(commit="unknown", dirty=True)
        return cls(commit=commit, dirty=dirty)


def provenance_sidecar(simulation: Simulation, repo: RepoState, seconds: float,
                       started: float) -> dict[str, object]:
    builds = simulation.builds
    tools, guest_disk = builds.guest(simulation.variant)
    return {
        "repo_commit": repo.commit,
        "repo_dirty": repo.dirty,
        "gem5_version": gem5.GEM5_VERSION,
        "gem5_build": builds.gem5.key,
        "gem5_tools_build": tools.key,
        "kernel_variant": simulation.variant,
        "kernel_build": builds.kernels[simulation.variant].key,
        "disk_build": guest_disk.key,
        "checkpoint": simulation.checkpoint.key if simulation.checkpoint else "",
        "configs_hash": builds.configs_digest[:16],
        "host": platform.node(),
        "host_platform": platform.platform(),
        "host_python": platform.python_version(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "host_seconds": round(seconds, 1),
    }


# --- running gem5 -----------------------------------------------------------

def tail(path: Path, lines: int = TAIL_LINES) -> str:
    if not path.is_file():
        return f"({path.name} was not written)"
    return "\n".join(collections.deque(path.read_text(errors="replace").splitlines(), lines))


@dataclass(frozen=True)
class Progress:
    """What a running gem5 last reported."""

    tick: int
    start: int
    limit: int
    instructions: int

    @classmethod
    def last_in(cls, simout: Path) -> Progress | None:
        if not simout.is_file():
            return None
        found = None
        for line in simout.read_text(errors="replace").splitlines():
            if match := PROGRESS_LINE.match(line):
                found = match
        return cls(*map(int, found.groups())) if found else None

    def describe(self, host_seconds: float) -> str:
        simulated = self.tick - self.start
        share = simulated / self.limit if self.limit else 0.0
        rate = self.instructions / host_seconds if host_seconds else 0.0
        left = ""
        if 0 < share < 1:
            left = f", at most {host_seconds * (1 - share) / share / 60:.0f} min to the limit"
        return (f"{simulated / TICKS_PER_SECOND * 1e3:.2f} ms simulated "
                f"({share:.1%} of the tick limit), {self.instructions / 1e6:.1f} M instructions, "
                f"{rate / 1e3:.0f} k instructions/host s{left}")


class RunObserver(Protocol):
    """Work done beside one gem5 run on this host, e.g. reading its debug
    output as gem5 writes it."""

    def started(self, out: Path) -> None:
        """Before gem5 starts (``out / 'm5out'`` exists)."""

    def stopped(self, out: Path) -> None:
        """After gem5 has exited, failed to start or been killed."""

    def finished(self, out: Path) -> None:
        """After gem5 succeeded, before the run's provenance is written;
        raises ``SimulationFailed`` if what it made is unusable."""


class Gem5Runner:
    """Runs simulations, any number of threads at once, and can stop them all.

    ``cancel()`` (from Ctrl-C) kills every running gem5 and makes every later
    ``simulate`` raise ``Cancelled``; the staging directories of the killed
    runs are removed, so nothing partial is left in the cache.
    """

    def __init__(self, repo: RepoState, progress_seconds: float = PROGRESS_SECONDS,
                 report: Callable[[str], None] = log.info,
                 backend: backends.Backend | None = None) -> None:
        self.repo = repo
        self.progress_seconds = progress_seconds
        self.report = report
        self.backend = backend or backends.LocalBackend()
        self._cancelled = threading.Event()
        self._lock = threading.Lock()
        self._running: dict[int, backends.Job] = {}

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def cancel(self) -> None:
        self._cancelled.set()
        with self._lock:
            jobs = list(self._running.values())
        for job in jobs:
            job.kill()

    def simulate(self, simulation: Simulation,
                 observer: RunObserver | None = None) -> cache.Entry:
        """The raw outputs of ``simulation``: cached, or made now (with
        ``observer`` beside gem5, which then must run on this host)."""
        if observer is not None and not isinstance(self.backend, backends.LocalBackend):
            raise SimulationFailed(f"{simulation.label}: this run reads gem5's output as it "
                                   "is written, so it runs on this host only")
        entry = simulation.entry()
        if entry.usable():
            return entry
        try:
            with entry.lock(cancelled=lambda: self.cancelled):
                if entry.exists():
                    return entry
                if self.cancelled:
                    raise Cancelled(simulation.label)
                with entry.staging(simulation.key_inputs()) as out:
                    started = time.time()
                    seconds = self.run(simulation, out, observer)
                    (out / "provenance.json").write_text(json.dumps(
                        provenance_sidecar(simulation, self.repo, seconds, started),
                        indent=2) + "\n")
        except cache.Interrupted as err:
            raise Cancelled(simulation.label) from err
        return entry

    def run(self, simulation: Simulation, out: Path,
            observer: RunObserver | None = None) -> float:
        """Run gem5 once into ``out``; return host seconds, or raise with the
        console's tail."""
        m5out = out / "m5out"
        m5out.mkdir(parents=True, exist_ok=True)
        command = simulation.command(out)
        (out / "command.txt").write_text(" ".join(command) + "\n")
        started = time.monotonic()
        if observer is not None:
            observer.started(out)
        try:
            code = self._start_and_wait(simulation, command, out, started)
        finally:
            if observer is not None:
                observer.stopped(out)
        seconds = time.monotonic() - started
        if self.cancelled:
            raise Cancelled(simulation.label)
        if code != 0:
            meaning = GEM5_EXIT_MEANING.get(code, "gem5 itself failed")
            raise SimulationFailed(
                f"{simulation.label}: gem5 exited with status {code} ({meaning}) after "
                f"{seconds:.0f} s.\n"
                f"--- gem5 stderr (tail) ---\n{tail(out / 'simerr.txt', 15)}\n"
                f"--- guest console (tail) ---\n{tail(m5out / CONSOLE)}")
        if observer is not None:
            observer.finished(out)
        return seconds

    def _start_and_wait(self, simulation: Simulation, command: list[str], out: Path,
                        started: float) -> int:
        try:
            job = self.backend.start(command, out, job_name(simulation.label))
        except backends.BackendFailed as err:
            raise SimulationFailed(f"{simulation.label}: {err}") from err
        with self._lock:
            self._running[id(job)] = job
        try:
            if self.cancelled:
                self.cancel()
            return self._wait(job, simulation, out, started)
        except backends.BackendFailed as err:
            raise SimulationFailed(
                f"{simulation.label}: {err}.\n"
                f"--- gem5 stderr (tail) ---\n{tail(out / 'simerr.txt', 15)}\n"
                f"--- guest console (tail) ---\n{tail(out / 'm5out' / CONSOLE)}") from err
        finally:
            with self._lock:
                self._running.pop(id(job), None)

    def _wait(self, job: backends.Job, simulation: Simulation, out: Path,
              started: float) -> int:
        while True:
            code = job.wait(self.progress_seconds)
            if code is not None:
                return code
            elapsed = time.monotonic() - started
            progress = Progress.last_in(out / "simout.txt")
            where = (progress.describe(elapsed) if progress else
                     "guest console: " + tail(out / "m5out" / CONSOLE, 1)[:100])
            queue = job.describe()
            self.report(f"{simulation.label}: {elapsed / 60:.1f} host min"
                        + (f" ({queue})" if queue else "") + f", {where}")


def job_name(label: str) -> str:
    """A scheduler-friendly name for a run: letters, digits, - _ . only."""
    return "ahg-" + re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip("-")[:100]


def interpreter_version() -> str:
    return sys.version.split()[0]
