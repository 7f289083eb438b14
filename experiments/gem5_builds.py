"""The cached builds a simulation uses: which ones runs of given kernel
variants need, what the cache lacks, and making them (``builders/``)."""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from builders import buildroot, cache, disk, gem5, initramfs, kernel
from experiments.spec import REPO_ROOT, variant_is_arm32

log = logging.getLogger(__name__)

CONFIGS = REPO_ROOT / "gem5-configs"


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
        return gem5.entry_binary(self.gem5)

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


def missing_kernels(variants: Sequence[str]) -> list[str]:
    """The kernel variants among these that the cache lacks."""
    return [v for v in variants
            if not kernel.kernel_entry(REPO_ROOT / "kernel-patches", v).exists()]


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
    kernels = missing_kernels(variants)
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


def cached_builds(variants: Sequence[str], jobs: int = 2,
                  make_small: bool = True) -> Builds | None:
    """The builds if gem5 and the kernels are already in the cache (those take
    hours). The disk image and the 32-bit initramfs take a minute: with
    ``make_small`` they are built when missing, without it (a dry run) they
    must be cached too, and nothing is built."""
    gem5_patches = REPO_ROOT / "gem5-patches"
    tools = gem5.tools_entry(gem5_patches)
    simulator = gem5.gem5_entry(gem5_patches)
    kernels = {v: kernel.kernel_entry(REPO_ROOT / "kernel-patches", v) for v in variants}
    if not (tools.exists() and simulator.exists() and all(k.exists() for k in kernels.values())):
        return None
    arm32_tools = initramfs_entry = None
    if any(variant_is_arm32(v, v) for v in variants):
        arm32_tools = gem5.arm32_tools_entry(gem5_patches)
        if not arm32_tools.exists():
            return None
    if make_small:
        image: cache.Entry | None = disk.ensure_disk(REPO_ROOT / "disk-image", tools, jobs)
        if arm32_tools:
            initramfs_entry = initramfs.ensure_initramfs(REPO_ROOT / "disk-image")
    else:
        image = disk.disk_entry(REPO_ROOT / "disk-image", tools)
        if arm32_tools:
            initramfs_entry = initramfs.initramfs_entry(REPO_ROOT / "disk-image")
        if (image is None or not image.exists()
                or (initramfs_entry is not None and not initramfs_entry.exists())):
            return None
    assert image is not None
    return Builds(gem5=simulator, tools=tools, disk=image, kernels=kernels,
                  configs=snapshot_configs(), arm32_tools=arm32_tools,
                  initramfs=initramfs_entry)
