"""Build the guest root file system with Buildroot (``make disk ROOTFS=buildroot``).

The external tree ``disk-image/buildroot`` configures a pinned Buildroot release
to build busybox from source and our own packages (benchmarks, selftests, m5,
the init's mount points and applet links) with Debian's aarch64 cross compiler
as an external toolchain. Nothing is downloaded while building: busybox's source
comes from Debian's source package into Buildroot's download directory, where
Buildroot's own ``.hash`` file checks it. The image is made from Buildroot's
``output/target`` exactly as the default image is made from its staged tree
(``disk.make_image``), so the two differ only in what they contain.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from builders import cache, disk, kernel, local_debs
from builders.process import checkout_pinned, make_environment, run, run_streaming

log = logging.getLogger(__name__)

BUILDROOT_VERSION = "2022.11.3"
BUILDROOT_COMMIT = "904c8b538e71fcc565f39b72d93b9dd6c67211c0"
UPSTREAM_REPO = "https://gitlab.com/buildroot.org/buildroot.git"
REPO_ENV = "BUILDROOT_REPO"
DEFCONFIG = "arm_hardening_guest_defconfig"
EXTERNAL_TREE = "buildroot"
# Bump when this recipe changes in a way that changes the outputs.
RECIPE_VERSION = 1
TOOLCHAIN_PREFIX = "aarch64-linux-gnu"
# Where Debian's libc6-dev-arm64-cross and linux-libc-dev-arm64-cross put glibc
# and the UAPI headers.
DEBIAN_CROSS_ROOT = Path("/usr/aarch64-linux-gnu")
SYSROOT_PACKAGES = ("libc6-dev-arm64-cross", "linux-libc-dev-arm64-cross")
# The names Buildroot's own Makefile reads from its environment to place its
# output. It takes ROOTFS as the file system whose own target directory to
# install into; given ours (``make disk ROOTFS=buildroot``), its TARGET_DIR was
# empty and packages installed into the host's / (a run as root replaced /bin
# with an empty directory).
BUILDROOT_READS = ("ROOTFS", "TARGET_DIR", "BASE_DIR", "HOST_DIR", "STAGING_DIR",
                   "BINARIES_DIR", "O", "BR2_CONFIG")


class UnsafeBuildrootTarget(RuntimeError):
    """Buildroot would install somewhere other than its own output folder."""


def buildroot_environment(environment: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for Buildroot's make (``process.make_environment``)."""
    return make_environment(BUILDROOT_READS, environment)


def check_target_dir(make: list[str], output: Path, environment: dict[str, str]) -> None:
    """Refuse to build unless Buildroot installs into ``output/target``."""
    printed = run([*make, "-s", "printvars", "VARS=TARGET_DIR"], env=environment)
    found = [line.removeprefix("TARGET_DIR=") for line in printed.splitlines()
             if line.startswith("TARGET_DIR=")]
    target = found[-1] if found else ""
    if not target or Path(target).resolve() != (output / "target").resolve():
        raise UnsafeBuildrootTarget(
            f"Buildroot would install into {target!r}, not {output / 'target'}: "
            "a make variable from the caller reached it (see BUILDROOT_READS)")
DEBIAN_SUITE = "bookworm"
DEBIAN_MIRROR = "http://deb.debian.org/debian"
DEBIAN_KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
# Buildroot's marker in output/target; its own image steps leave it out too.
TARGET_WARNING_FILE = "THIS_IS_NOT_YOUR_ROOT_FILESYSTEM"


@dataclass(frozen=True)
class DebianSource:
    """An upstream tarball that Debian's source package carries unchanged."""

    package: str  # Debian source package
    orig: str  # its upstream tarball in Debian's archive
    buildroot_package: str  # Buildroot's package, the download subdirectory
    dl_name: str  # the name Buildroot's .mk and .hash files give the tarball


# Buildroot 2022.11.3 is the newest release whose busybox (1.35.0) is the one
# Debian 12 ships: the same busybox version as the default image, from a
# source any Debian mirror serves.
DEBIAN_SOURCES = (
    DebianSource("busybox", "busybox_1.35.0.orig.tar.bz2", "busybox", "busybox-1.35.0.tar.bz2"),
)


def prepare_source(src: Path, repo: str) -> None:
    """Make ``src`` a checkout of the pinned commit with no local changes."""
    checkout_pinned(src, repo, "Buildroot", BUILDROOT_COMMIT, BUILDROOT_VERSION)
    run(["git", "-C", str(src), "clean", "-fdxq"])


def _apt_options(apt_dir: Path) -> list[str]:
    """apt options for a private deb-src configuration: the system's apt
    sources and state are neither needed nor touched."""
    return ["-o", f"Dir::Etc::SourceList={apt_dir / 'sources.list'}",
            "-o", f"Dir::Etc::SourceParts={apt_dir / 'sources.list.d'}",
            "-o", f"Dir::State::Lists={apt_dir / 'lists'}",
            "-o", f"Dir::Cache={apt_dir / 'cache'}",
            "-o", "Dir::Etc::Preferences=/dev/null",
            "-o", f"Dir::Etc::PreferencesParts={apt_dir / 'preferences.d'}"]


def source_apt(apt_dir: Path) -> list[str]:
    """apt options reading Debian's source index in ``apt_dir`` (made and
    brought up to date here)."""
    for sub in ("lists/partial", "cache/archives/partial", "sources.list.d", "preferences.d"):
        (apt_dir / sub).mkdir(parents=True, exist_ok=True)
    (apt_dir / "sources.list").write_text(
        f"deb-src [signed-by={DEBIAN_KEYRING}] {DEBIAN_MIRROR} {DEBIAN_SUITE} main\n")
    options = _apt_options(apt_dir)
    log.info("reading Debian %s's source index", DEBIAN_SUITE)
    run(["apt-get", *options, "update"])
    return options


def download_source(options: list[str], source: DebianSource, into: Path) -> None:
    """``apt-get source --download-only`` of ``source`` into ``into`` (the
    .dsc, the upstream tarball and Debian's changes)."""
    log.info("downloading Debian's %s source package", source.package)
    run(["apt-get", *options, "source", "--download-only", source.package], cwd=into)
    if not (into / source.orig).is_file():
        found = sorted(p.name for p in into.iterdir())
        raise RuntimeError(f"Debian's {source.package} source has no {source.orig} "
                           f"(it has {', '.join(found)}): update DEBIAN_SOURCES and "
                           f"the Buildroot release in builders/buildroot.py")


def fetch_debian_sources(root: Path) -> Path:
    """Buildroot's download directory with every ``DEBIAN_SOURCES`` tarball in
    it, fetched once with ``apt-get source`` (or copied from ``$ARTIFACT_DEBS``);
    returns the directory."""
    dl_dir = root / "buildroot" / "dl"
    with cache.locked(root / "buildroot" / ".dl.lock"):
        missing = [s for s in DEBIAN_SOURCES
                   if not (dl_dir / s.buildroot_package / s.dl_name).is_file()]
        if not missing:
            return dl_dir
        options: list[str] | None = None
        for source in missing:
            target = dl_dir / source.buildroot_package / source.dl_name
            target.parent.mkdir(parents=True, exist_ok=True)
            bundled = local_debs.find(source.orig, f"Debian's {source.package} source")
            # A scratch directory first: a copy or download cut short never
            # looks like a tarball.
            with tempfile.TemporaryDirectory(dir=root / "buildroot", prefix=".apt-") as scratch:
                if bundled is not None:
                    shutil.copy2(bundled, Path(scratch) / source.orig)
                else:
                    options = options or source_apt(root / "buildroot" / "apt")
                    download_source(options, source, Path(scratch))
                (Path(scratch) / source.orig).rename(target)
    return dl_dir


def package_version(package: str) -> str:
    return run(["dpkg-query", "-W", "-f=${Version}", package]).strip()


def make_toolchain_view(view: Path) -> Path:
    """Debian's cross compiler as Buildroot expects an external toolchain:
    ``bin/`` with the tools, and a sysroot (glibc and the UAPI headers, copied
    from Debian's cross packages) that the compiler is pointed at.

    Debian's compiler is configured with sysroot ``/`` and its libraries outside
    any sysroot, which Buildroot refuses for a toolchain it would build
    libraries with. This guest builds no library: the compiler scripts add the
    copied sysroot (-B first, so libc.a is found there and Buildroot copies this
    sysroot into staging) and report it in place of ``--with-sysroot=/``.
    """
    sysroot = view / "sysroot"
    (sysroot / "usr").mkdir(parents=True)
    shutil.copytree(DEBIAN_CROSS_ROOT / "lib", sysroot / "lib", symlinks=True)
    shutil.copytree(DEBIAN_CROSS_ROOT / "include", sysroot / "usr" / "include", symlinks=True)
    (sysroot / "usr" / "lib").symlink_to("../lib")
    # glibc's linker scripts (libc.so, libm.so) name their libraries by
    # absolute paths, which the linker looks up inside the sysroot.
    for script in (sysroot / "lib").glob("*.so"):
        if script.is_file() and not script.is_symlink() and script.stat().st_size < 4096:
            text = script.read_bytes()
            if text.startswith(b"/* GNU ld script"):
                script.write_bytes(text.replace(f"{DEBIAN_CROSS_ROOT}/lib/".encode(), b"/lib/"))
    bindir = view / "bin"
    bindir.mkdir()
    compilers = {"gcc", "cc", "cpp", "g++", "c++"}
    for tool in sorted(Path("/usr/bin").glob(f"{TOOLCHAIN_PREFIX}-*")):
        name = tool.name.removeprefix(f"{TOOLCHAIN_PREFIX}-")
        if name in compilers:
            script = bindir / tool.name
            script.write_text(
                "#!/bin/sh\n"
                f'if [ "$*" = "-v" ]; then\n'
                f'\t{tool} -v 2>&1 | sed -e "s|--with-sysroot=/ |--with-sysroot={sysroot} |"\n'
                "\texit 0\n"
                "fi\n"
                f'exec {tool} --sysroot={sysroot} -B{sysroot}/lib/ "$@"\n')
            script.chmod(0o755)
        else:
            (bindir / tool.name).symlink_to(tool)
    return view


def build_inputs(disk_dir: Path, tools: cache.Entry, dl_dir: Path,
                 source: kernel.KernelSource) -> dict[str, object]:
    return {
        "rootfs_builder": "buildroot",
        "buildroot": [BUILDROOT_VERSION, BUILDROOT_COMMIT],
        # Its README documents the tree and builds nothing.
        "external_tree": cache.tree_digest(disk_dir / EXTERNAL_TREE, ("README.md",)),
        "rootfs": cache.tree_digest(disk_dir / "rootfs"),
        "benchmarks": cache.tree_digest(disk_dir / "benchmarks"),
        "selftests": cache.tree_digest(disk_dir / "selftests"),
        "busybox_applets": list(disk.BUSYBOX_APPLETS),
        "sources": {s.dl_name: cache.file_digest(dl_dir / s.buildroot_package / s.dl_name)
                    for s in DEBIAN_SOURCES},
        "kernel_source": source.identity,
        "gem5_tools": tools.key,
        "compiler": run([f"{TOOLCHAIN_PREFIX}-gcc", "--version"]).splitlines()[0],
        "sysroot": {p: package_version(p) for p in SYSROOT_PACKAGES},
        "recipe": RECIPE_VERSION,
    }


def disk_entry(disk_dir: Path, tools: cache.Entry) -> cache.Entry | None:
    """The entry ``ensure_disk`` would build or find, without downloading or
    building anything; None while the download directory lacks a source."""
    root = cache.cache_root()
    dl_dir = root / "buildroot" / "dl"
    if not all((dl_dir / s.buildroot_package / s.dl_name).is_file() for s in DEBIAN_SOURCES):
        return None
    return cache.entry("disk", build_inputs(disk_dir, tools, dl_dir, kernel.locate_source(root)),
                       root)


def ensure_disk(disk_dir: Path, tools: cache.Entry, jobs: int,
                repo: str | None = None) -> cache.Entry:
    """The Buildroot-built disk image for these sources and tools; built if missing."""
    root = cache.cache_root()
    dl_dir = fetch_debian_sources(root)
    source = kernel.locate_source(root)
    inputs = build_inputs(disk_dir, tools, dl_dir, source)
    entry = cache.entry("disk", inputs, root)

    def build() -> None:
        src = root / "buildroot" / "src"
        with cache.locked(root / "buildroot" / ".src.lock"):
            prepare_source(src, repo or os.environ.get(REPO_ENV) or UPSTREAM_REPO)
            _build(entry, inputs, disk_dir, tools, src, dl_dir,
                   kernel.pristine_tree(root, source), jobs)

    return cache.ensure(entry, "Buildroot disk image", build)


def _build(entry: cache.Entry, inputs: dict[str, object], disk_dir: Path,
           tools: cache.Entry, src: Path, dl_dir: Path, kernel_tree: Path,
           jobs: int) -> None:
    started = time.monotonic()
    log.info("building the disk image with Buildroot %s", BUILDROOT_VERSION)
    with entry.staging(inputs) as out:
        work = out / "work"
        output = work / "output"
        view = make_toolchain_view(work / "toolchain")
        make = ["make", "-C", str(src), f"O={output}",
                f"BR2_EXTERNAL={disk_dir / EXTERNAL_TREE}"]
        environment = buildroot_environment()
        run([*make, DEFCONFIG], env=environment)
        variables = [f"BR2_DL_DIR={dl_dir}", f"BR2_JLEVEL={jobs}",
                     f"GUEST_TOOLCHAIN={view}", f"GUEST_GEM5_TOOLS={tools.path}",
                     f"GUEST_KERNEL_TREE={kernel_tree}",
                     f"GUEST_BUSYBOX_APPLETS={' '.join(disk.BUSYBOX_APPLETS)}"]
        check_target_dir([*make, *variables], output, environment)
        # Buildroot runs its own jobs in parallel (BR2_JLEVEL); its top level
        # must not be.
        run_streaming([*make, *variables], label="buildroot", env=environment,
                      log_file=out / "buildroot.log")
        stage = work / "rootfs"
        (output / "target" / TARGET_WARNING_FILE).unlink()
        (output / "target").rename(stage)
        disk.make_image(stage, out / disk.IMAGE_NAME)
        shutil.rmtree(work)
    log.info("Buildroot disk image built in %.1f s", time.monotonic() - started)


# The ways to build the guest's root file system (make disk ROOTFS=...).
ROOTFS_BUILDERS = {"debian": disk.ensure_disk, "buildroot": ensure_disk}


def ensure_rootfs(rootfs: str, disk_dir: Path, tools: cache.Entry, jobs: int) -> cache.Entry:
    """The disk image that ``rootfs`` builds; built if missing."""
    if rootfs not in ROOTFS_BUILDERS:
        raise RuntimeError(f"unknown root file system builder {rootfs!r}; valid: "
                           f"{', '.join(ROOTFS_BUILDERS)}")
    return ROOTFS_BUILDERS[rootfs](disk_dir, tools, jobs)
