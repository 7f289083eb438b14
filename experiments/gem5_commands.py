"""What gem5 runs: a simulation is gem5's argument list for ``run.py``.

Its cache key is that list with every file replaced by what identifies its
content (a cache entry's key, or the guest script's text), the gem5 build's
key and the hash of the code gem5 imports (``gem5-configs/``, docstrings and
comments left out). Nothing else: labels, experiment names and the code that
turns outputs into results are not in it, so changing them re-simulates
nothing, and a change to what gem5 runs always re-simulates.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from builders import cache, disk, gem5, initramfs, kernel
from experiments import raw_outputs
from experiments.gem5_builds import Builds
from experiments.spec import RunSpec, catalog

BOOTLOADER = "boot_foundation.arm64"
BOOT_MAX_TICKS = 5 * 10**12  # 5 s of guest time; a boot to init takes ~20 ms


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

    kind: str  # one of raw_outputs' cache kinds
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
        return [str(self.builds.gem5_binary), f"--outdir={outdir / raw_outputs.M5OUT}",
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
        return Simulation(raw_outputs.CHECKPOINTS, tuple(args32), label, spec.variant,
                          BOOT_MAX_TICKS, builds)
    args: list[Arg] = [
        "boot", *_files(builds, spec.variant), "--architecture", architecture,
        "--features", ",".join(spec.features), "--memory", spec.memory,
        "--cores", str(spec.cores), *_numa_args(spec), "--max-ticks", str(BOOT_MAX_TICKS),
        *[a for k in spec.kernel_args for a in ("--kernel-arg", k)],
        "--checkpoint-out", OutputDir("cpt")]
    return Simulation(raw_outputs.CHECKPOINTS, tuple(args), label, spec.variant,
                      BOOT_MAX_TICKS, builds)


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
        # Left out at its default, so full-detail runs keep their keys.
        *(["--detail", spec.detail] if spec.detail != catalog.DETAIL_FULL else []),
        *(["--atomic-clock", spec.workload.atomic_clock]
          if spec.cpu == "atomic" and spec.workload.atomic_clock else [])]
    kind, label = ((raw_outputs.MODEL_CHECKS, f"check {spec.label}") if check
                   else (raw_outputs.RUNS, spec.label))
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
    kind, label = ((raw_outputs.MODEL_CHECKS, f"check {spec.label}") if check
                   else (raw_outputs.RUNS, spec.label))
    return Simulation(kind, tuple(args), label, spec.variant, max_ticks, builds, checkpoint)
