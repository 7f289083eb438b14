"""Build Linux 6.12 kernel variants for the simulated machine.

A variant is a folder ``kernel-patches/<variant>/`` holding ``series`` (patches
applied in order, each named by its path in the pool ``kernel-patches/patches/``,
where every patch is kept once) and ``config`` (a Kconfig fragment), and optionally ``arch``
naming its architecture (``arm`` for 32-bit Arm; arm64 without it). Its kernel
is its architecture's base fragment (``kernel-patches/base.config`` for arm64)
plus that fragment merged onto ``allnoconfig`` with the kernel's own
``merge_config.sh``, cross-compiled with ccache.

Each variant keeps its own patched source tree and object directory in the
cache, so building one variant never invalidates another, and a patch change
recompiles only what it touches. Finished ``Image``/``vmlinux`` land in a
content-addressed entry keyed by source, patches, config fragments, compiler and
(for every architecture but arm64) the architecture.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from builders import cache, local_debs
from builders.patches import Patch, apply_series, read_series
from builders.process import make_environment, run, run_streaming

log = logging.getLogger(__name__)

DEBIAN_TARBALL = Path("/usr/src/linux-source-6.12.tar.xz")
DEBIAN_PACKAGE = "linux-source-6.12"
TARBALL_URL_ENV = "LINUX_TARBALL_URL"
TARBALL_SHA_ENV = "LINUX_TARBALL_SHA256"
RECIPE_VERSION = 1
# Fixed build identity so that rebuilding the same inputs gives the same Image
# and ccache can hit across variants.
REPRODUCIBLE_ENV = {
    "KBUILD_BUILD_TIMESTAMP": "Thu Jan  1 00:00:00 UTC 2026",
    "KBUILD_BUILD_USER": "arm-hardening-gem5",
    "KBUILD_BUILD_HOST": "builder",
}
CONFIG_LINE = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)$")
UNSET_LINE = re.compile(r"^# (CONFIG_[A-Za-z0-9_]+) is not set$")


class UnknownVariant(ValueError):
    pass


@dataclass(frozen=True)
class Arch:
    """How kbuild makes a kernel for one architecture, and what of it is kept."""

    name: str
    cross_compile: str
    base_config: str
    # Cache entry file name -> path below the object directory.
    outputs: tuple[tuple[str, str], ...]
    # kbuild targets besides vmlinux.
    targets: tuple[str, ...]


ARCH_FILE = "arch"
# Every variant's patches, one copy each, in folders by the series they came in.
PATCH_POOL = "patches"
DEFAULT_ARCH = "arm64"
ARCHES = {
    "arm64": Arch("arm64", "aarch64-linux-gnu-", "base.config",
                  (("Image", "arch/arm64/boot/Image"),), ("Image",)),
    # QEMU's vexpress-a15 machine boots a zImage with the Cortex-A15 CoreTile's
    # device tree.
    "arm": Arch("arm", "arm-linux-gnueabihf-", "base-arm.config",
                (("zImage", "arch/arm/boot/zImage"),
                 ("vexpress-v2p-ca15-tc1.dtb",
                  "arch/arm/boot/dts/arm/vexpress-v2p-ca15-tc1.dtb")),
                ("zImage", "arm/vexpress-v2p-ca15-tc1.dtb")),
}


@dataclass(frozen=True)
class KernelSource:
    """Where the Linux tree comes from and what identifies it."""

    tarball: Path
    identity: dict[str, str]


def variants(patch_root: Path) -> list[str]:
    return sorted(p.name for p in patch_root.iterdir()
                  if p.is_dir() and (p / "config").is_file())


def variant_dir(patch_root: Path, variant: str) -> Path:
    known = variants(patch_root)
    if variant not in known:
        raise UnknownVariant(f"unknown kernel variant '{variant}'; valid variants: "
                             + ", ".join(known))
    return patch_root / variant


def variant_patches(patch_root: Path, variant: str) -> list[Patch]:
    """The variant's series, each entry one file of the shared pool."""
    return read_series(variant_dir(patch_root, variant), pool=patch_root / PATCH_POOL)


def variant_arch(patch_root: Path, variant: str) -> Arch:
    """The architecture a variant declares in its ``arch`` file (arm64 without one)."""
    declared = variant_dir(patch_root, variant) / ARCH_FILE
    name = declared.read_text().strip() if declared.is_file() else DEFAULT_ARCH
    if name not in ARCHES:
        raise UnknownVariant(f"kernel variant {variant}: unknown architecture '{name}' in "
                             f"{declared}; valid: " + ", ".join(sorted(ARCHES)))
    return ARCHES[name]


def locate_source(root: Path) -> KernelSource:
    """Debian's linux-source-6.12 by default, or a pinned upstream tarball."""
    url = os.environ.get(TARBALL_URL_ENV)
    if url:
        sha = os.environ.get(TARBALL_SHA_ENV)
        if not sha:
            raise RuntimeError(f"{TARBALL_URL_ENV} needs {TARBALL_SHA_ENV} to pin its contents")
        tarball = root / "kernel" / "tarballs" / f"{sha}{''.join(Path(url).suffixes[-2:])}"
        if not tarball.is_file():
            log.info("downloading %s", url)
            tarball.parent.mkdir(parents=True, exist_ok=True)
            partial = tarball.with_name(tarball.name + ".partial")
            urllib.request.urlretrieve(url, partial)  # noqa: S310 - user-chosen URL
            if cache.file_digest(partial) != sha:
                partial.unlink()
                raise RuntimeError(f"{url} does not match {TARBALL_SHA_ENV}={sha}")
            partial.rename(tarball)
        return KernelSource(tarball, {"kind": "tarball", "sha256": sha})
    bundled = local_debs.find(f"{DEBIAN_PACKAGE}_*.deb", DEBIAN_PACKAGE)
    if bundled is not None:
        return source_from_deb(root, bundled)
    if not DEBIAN_TARBALL.is_file():
        raise RuntimeError(f"{DEBIAN_TARBALL} is missing: run 'make deps' "
                           f"(installs {DEBIAN_PACKAGE}) or set {TARBALL_URL_ENV}")
    version = run(["dpkg-query", "-W", "-f=${Version}", DEBIAN_PACKAGE]).strip()
    # The package version names the contents; hashing 150 MB on every make would
    # only repeat what dpkg already guarantees.
    return KernelSource(DEBIAN_TARBALL, {"kind": "debian", "package": DEBIAN_PACKAGE,
                                         "version": version})


def source_from_deb(root: Path, deb: Path) -> KernelSource:
    """The source tarball of a ``linux-source-6.12`` package file, taken out
    of it once into the cache. Its identity is the installed package's (name
    and version), so kernels built from it keep the keys of kernels built from
    the installed package."""
    version = run(["dpkg-deb", "-f", str(deb), "Version"]).strip()
    suffix = "".join(DEBIAN_TARBALL.suffixes[-2:])
    tarball = root / "kernel" / "tarballs" / f"{DEBIAN_PACKAGE}_{version}{suffix}"
    if not tarball.is_file():
        log.info("taking %s out of %s", DEBIAN_TARBALL.name, deb)
        tarball.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=tarball.parent, prefix=".deb-") as scratch:
            run(["dpkg-deb", "-x", str(deb), scratch])
            (Path(scratch) / DEBIAN_TARBALL.relative_to("/")).rename(tarball)
    return KernelSource(tarball, {"kind": "debian", "package": DEBIAN_PACKAGE,
                                  "version": version})


def compiler_identity(arch: Arch) -> str:
    return run([f"{arch.cross_compile}gcc", "--version"]).splitlines()[0]


def parse_config(text: str) -> dict[str, str]:
    """Kconfig lines as {symbol: value}; ``# X is not set`` becomes ``n``."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if match := CONFIG_LINE.match(line):
            values[match.group(1)] = match.group(2)
        elif match := UNSET_LINE.match(line):
            values[match.group(1)] = "n"
    return values


def dropped_options(requested: dict[str, str], final: dict[str, str]) -> list[str]:
    """Requested settings that the final .config does not honour."""
    dropped = []
    for symbol, value in requested.items():
        got = final.get(symbol, "n")
        if got != value:
            dropped.append(f"{symbol}={value} (final: {got})")
    return dropped


def fragments(patch_root: Path, variant: str) -> list[Path]:
    return [patch_root / variant_arch(patch_root, variant).base_config,
            variant_dir(patch_root, variant) / "config"]


def requested_config(patch_root: Path, variant: str) -> dict[str, str]:
    requested: dict[str, str] = {}
    for fragment in fragments(patch_root, variant):
        requested.update(parse_config(fragment.read_text()))
    return requested


def build_inputs(patch_root: Path, variant: str, source: KernelSource) -> dict[str, object]:
    arch = variant_arch(patch_root, variant)
    inputs: dict[str, object] = {
        "variant": variant,
        "source": source.identity,
        "patches": [[p.name, p.digest()] for p in variant_patches(patch_root, variant)],
        "config_fragments": [[f.name, cache.file_digest(f)]
                             for f in fragments(patch_root, variant)],
        "compiler": compiler_identity(arch),
        "recipe": RECIPE_VERSION,
    }
    # arm64 kernels were cached before variants had an architecture: leaving it
    # out for them keeps their keys, and so every cached kernel, boot
    # checkpoint and simulation made from them.
    if arch.name != DEFAULT_ARCH:
        inputs["arch"] = arch.name
    return inputs


def pristine_path(root: Path, source: KernelSource) -> Path:
    """Where ``pristine_tree`` unpacks this source; unpacks nothing."""
    tag = hashlib.sha256(repr(sorted(source.identity.items())).encode()).hexdigest()[:12]
    return root / "kernel" / f"source-{tag}"


def pristine_tree(root: Path, source: KernelSource) -> Path:
    """The unpacked source, shared read-only by every variant's work tree and by
    the disk builder's selftests."""
    pristine = pristine_path(root, source)
    if (pristine / "Makefile").is_file():
        return pristine
    with cache.locked(pristine.with_name(pristine.name + ".lock")):
        if (pristine / "Makefile").is_file():
            return pristine
        unpack_source(source, pristine)
    return pristine


def readable_tree(root: Path, source: KernelSource, scratch: Path) -> Path:
    """The unpacked source for reading only: the cache's copy when it has one,
    otherwise one unpacked below ``scratch``; the cache is left as it was."""
    cached = pristine_path(root, source)
    if (cached / "Makefile").is_file():
        return cached
    return unpack_source(source, scratch / cached.name)


def unpack_source(source: KernelSource, destination: Path) -> Path:
    """Unpacks ``source`` to ``destination`` (absent), whole or not at all."""
    log.info("unpacking %s (about a minute)", source.tarball)
    partial = destination.with_name(destination.name + ".partial")
    if partial.exists():
        shutil.rmtree(partial)
    partial.mkdir(parents=True)
    run(["tar", "-xf", str(source.tarball), "-C", str(partial)])
    (inner,) = [p for p in partial.iterdir() if p.is_dir()]
    inner.rename(destination)
    shutil.rmtree(partial)
    return destination


def sync_tree(pristine: Path, src: Path) -> None:
    # Compare by content and give rewritten files a fresh mtime, so that undoing
    # an earlier patch makes kbuild recompile exactly the files it had touched.
    src.mkdir(parents=True, exist_ok=True)
    run(["rsync", "-rl", "--checksum", "--no-times", "--delete",
         f"{pristine}/", f"{src}/"])


# Names kbuild takes from its environment that would change where it writes
# or what it builds (a kernel key does not cover them): the output and
# .config paths, the version suffix, extra compiler flags, clang for gcc.
KBUILD_READS = ("KBUILD_OUTPUT", "KCONFIG_CONFIG", "KBUILD_EXTMOD", "LOCALVERSION",
                "KCFLAGS", "KAFLAGS", "KCPPFLAGS", "KRUSTFLAGS", "LLVM", "LLVM_IAS")


def make_env(root: Path, arch: Arch) -> dict[str, str]:
    env = make_environment(KBUILD_READS)
    env.update(REPRODUCIBLE_ENV)
    env.update({"ARCH": arch.name, "CROSS_COMPILE": arch.cross_compile,
                **cache.ccache_env(root, root / "kernel")})
    return env


def merge_config(src: Path, objdir: Path, frags: list[Path], env: dict[str, str]) -> None:
    objdir.mkdir(parents=True, exist_ok=True)
    run(["bash", "scripts/kconfig/merge_config.sh", "-n", "-O", str(objdir),
         *[str(f.resolve()) for f in frags]], cwd=src, env=env)


def check_config(objdir: Path, requested: dict[str, str], variant: str) -> None:
    dropped = dropped_options(requested, parse_config((objdir / ".config").read_text()))
    if dropped:
        raise RuntimeError(f"kernel variant {variant}: Kconfig dropped requested options "
                           "(missing dependencies?): " + ", ".join(dropped))


# A build stopped without warning (SIGKILL, a machine that goes away) leaves the
# files it was writing truncated but newer than their sources, so make would
# take them as built: a half-written ``.o.cmd`` stops the next make with a
# parse error, a half-written object fails at link time or not at all. Those
# files are the object directory's newest; discarding everything written in
# the last minutes of the earlier build costs a few recompiles.
INTERRUPTED_WRITE_SECONDS = 120.0


def discard_last_writes(objdir: Path, variant: str) -> None:
    """Delete what the previous build in ``objdir`` wrote in its last minutes."""
    if not objdir.is_dir():
        return
    files = [(p, p.lstat().st_mtime) for p in objdir.rglob("*")
             if p.is_file() and not p.is_symlink()]
    if not files:
        return
    newest = max(mtime for _, mtime in files)
    recent = [p for p, mtime in files if mtime >= newest - INTERRUPTED_WRITE_SECONDS]
    log.info("kernel %s: rebuilding the %d files the previous build wrote last "
             "(they may be half-written if it was stopped)", variant, len(recent))
    for path in recent:
        path.unlink()


def prepare_variant(root: Path, patch_root: Path, variant: str,
                    source: KernelSource) -> tuple[Path, Path, dict[str, str]]:
    """Patched source and configured object directory for one variant."""
    work = root / "kernel" / "trees" / variant
    src, objdir = work / "src", work / "obj"
    discard_last_writes(objdir, variant)
    log.info("kernel %s: bringing %s in line with the pristine source by content "
             "(minutes on a first build or after a long pause)", variant, src)
    sync_tree(pristine_tree(root, source), src)
    apply_series(src, variant_patches(patch_root, variant), f"kernel {variant}")
    env = make_env(root, variant_arch(patch_root, variant))
    merge_config(src, objdir, fragments(patch_root, variant), env)
    check_config(objdir, requested_config(patch_root, variant), variant)
    return src, objdir, env


def merged_config(patch_root: Path, variant: str, scratch: Path,
                  pristine: Path) -> dict[str, str]:
    """The final .config a variant gets from the unpacked source ``pristine``,
    computed in ``scratch`` (on the same file system) without building.

    The patched tree is a hard-link copy of the pristine source; patch(1)
    replaces files rather than editing them, so the pristine tree is untouched.
    """
    root = cache.cache_root()
    src, objdir = scratch / "src", scratch / "obj"
    run(["cp", "-al", str(pristine), str(src)])
    apply_series(src, variant_patches(patch_root, variant), f"kernel {variant}")
    merge_config(src, objdir, fragments(patch_root, variant),
                 make_env(root, variant_arch(patch_root, variant)))
    return parse_config((objdir / ".config").read_text())


# Where a kernel entry keeps its loadable modules, by file name (kbuild gives
# every module a unique one).
MODULES_DIR = "modules"


def keep_modules(objdir: Path, destination: Path, arch: Arch) -> None:
    """Copy the built ``.ko`` files, without debug info, into ``destination``.

    A run hands a module to the guest through gem5's readfile, so smaller is
    quicker; the symbols insmod needs stay.
    """
    destination.mkdir()
    for module in sorted(objdir.rglob("*.ko")):
        run([f"{arch.cross_compile}strip", "--strip-debug", "-o", str(destination / module.name),
             str(module)])


def kernel_entry(patch_root: Path, variant: str) -> cache.Entry:
    """Where this variant's kernel is (or will be) cached; builds nothing."""
    root = cache.cache_root()
    return cache.entry("kernel", build_inputs(patch_root, variant, locate_source(root)), root)


def ensure_kernel(patch_root: Path, variant: str, jobs: int) -> cache.Entry:
    root = cache.cache_root()
    source = locate_source(root)
    inputs = build_inputs(patch_root, variant, source)
    entry = cache.entry("kernel", inputs, root)
    started = time.monotonic()

    def build() -> None:
        src, objdir, env = prepare_variant(root, patch_root, variant, source)
        arch = variant_arch(patch_root, variant)
        with_modules = requested_config(patch_root, variant).get("CONFIG_MODULES") == "y"
        log.info("building kernel %s (%s) with -j%d", variant, arch.name, jobs)
        run_streaming(["make", "-C", str(src), f"O={objdir}", f"-j{jobs}",
                       f"CC=ccache {arch.cross_compile}gcc", *arch.targets, "vmlinux",
                       *(["modules"] if with_modules else [])],
                      env=env, label=f"kernel {variant}")
        with entry.lock(), entry.staging(
                {**inputs, "build_seconds": round(time.monotonic() - started, 1)}) as out:
            for name, built in [*arch.outputs, ("vmlinux", "vmlinux"), ("config", ".config"),
                                ("System.map", "System.map")]:
                shutil.copy2(objdir / built, out / name)
            if with_modules:
                keep_modules(objdir, out / MODULES_DIR, arch)

    return cache.ensure(entry, f"kernel {variant}", build,
                        root / "kernel" / "trees" / f"{variant}.lock")
