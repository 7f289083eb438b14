"""Build the guest root file system as an ext4 image, without root privileges.

Contents: Debian's static arm64 busybox, our ``init``, ``run-selftest`` and
``/etc`` from ``disk-image/rootfs``, gem5's ``m5`` tool, the guest benchmarks
from ``disk-image/benchmarks`` compiled static for AArch64 against ``libm5``, and
the kernel selftests listed in ``disk-image/selftests/list``, compiled static
from the same Linux source as the kernels.
``mke2fs -d`` copies the staged tree into the image, so no loop mount is needed.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
from pathlib import Path

from builders import cache, kernel, local_debs
from builders.process import run

log = logging.getLogger(__name__)

BUSYBOX_PACKAGE = "busybox-static:arm64"
CROSS_CC = "aarch64-linux-gnu-gcc"
RECIPE_VERSION = 3
# 2026-01-01 00:00 UTC: the date of every inode and of the file system itself.
IMAGE_TIME = 1767225600
IMAGE_NAME = "rootfs.ext4"
HEADROOM_MIB = 64
# Applets the init, the run scripts and an interactive shell use. busybox cannot
# list its applets here (it is an arm64 binary), so the list is explicit.
BUSYBOX_APPLETS = (
    "sh ash cat chmod cp date dd df dmesg echo env false grep head hostname ls "
    "mkdir mknod mount mv ps pwd rm rmdir sed sleep sort sync tail tee test time "
    "touch true umount uname wc xargs [ [[ seq expr printf awk cut tr id stat find "
    "poweroff reboot sysctl free top timeout"
).split()
SELFTEST_LIST = Path("selftests") / "list"


def fetch_deb(root: Path, package: str) -> Path:
    """Download a Debian package into the cache once; ``apt-get download`` pins it
    (or copy it from ``$ARTIFACT_DEBS``, see ``local_debs``)."""
    debs = root / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    name, _, arch = package.partition(":")
    with cache.locked(debs / f".{name}.lock"):
        found = sorted(debs.glob(f"{name}_*.deb"))
        if found:
            return found[-1]
        bundled = local_debs.find(f"{name}_*_{arch or '*'}.deb", package)
        if bundled is not None:
            log.info("copying %s from %s", bundled.name, bundled.parent)
            partial = debs / f".{bundled.name}.partial"
            shutil.copy2(bundled, partial)
            partial.rename(debs / bundled.name)
            return debs / bundled.name
        log.info("downloading %s", package)
        # Into a scratch directory first: a download cut short never looks
        # like a package.
        with tempfile.TemporaryDirectory(dir=debs, prefix=".download-") as scratch:
            try:
                run(["apt-get", "download", package], cwd=Path(scratch))
            except Exception as err:
                raise RuntimeError(f"cannot download {package}: run 'make deps' (adds the "
                                   f"arm64 architecture to apt): {err}") from err
            (downloaded,) = sorted(Path(scratch).glob(f"{name}_*.deb"))
            deb = debs / downloaded.name
            downloaded.rename(deb)
    return deb


def selftest_list(disk_dir: Path) -> list[str]:
    """Selftest paths below tools/testing/selftests, as the list file names them."""
    tests = []
    for line in (disk_dir / SELFTEST_LIST).read_text().splitlines():
        path = line.split("#", 1)[0].strip()
        if path:
            tests.append(path)
    return tests


def build_inputs(disk_dir: Path, tools: cache.Entry, busybox_deb: Path,
                 source: kernel.KernelSource) -> dict[str, object]:
    return {
        "rootfs": cache.tree_digest(disk_dir / "rootfs"),
        "benchmarks": cache.tree_digest(disk_dir / "benchmarks"),
        "selftests": cache.tree_digest(disk_dir / "selftests"),
        "kernel_source": source.identity,
        "gem5_tools": tools.key,
        "busybox": [busybox_deb.name, cache.file_digest(busybox_deb)],
        "compiler": run([CROSS_CC, "--version"]).splitlines()[0],
        "recipe": RECIPE_VERSION,
    }


def install_kernel_headers(tree: Path, scratch: Path) -> Path:
    """The tree's arm64 UAPI headers, for the selftests; returns their include dir.

    O= keeps kbuild's objects in ``scratch``: the source tree is shared by every
    kernel build and is never written to.
    """
    headers = scratch / "headers"
    run(["make", "-s", "-C", str(tree), f"O={scratch / 'obj'}", "ARCH=arm64",
         f"INSTALL_HDR_PATH={headers}", "headers_install"])
    return headers / "include"


def build_selftests(disk_dir: Path, tree: Path, jobs: int, scratch: Path, out: Path) -> None:
    """The listed kernel selftests, static AArch64, at ``out/<listed path>``,
    and nothing else there (some selftest Makefiles leave objects beside their
    programs)."""
    listed = selftest_list(disk_dir)
    log.info("building %d kernel selftests", len(listed))
    headers = install_kernel_headers(tree, scratch)
    built = scratch / "out"
    run(["make", "-s", "-C", str(disk_dir / "selftests"), f"-j{jobs}", f"CROSS_CC={CROSS_CC}",
         f"KERNEL_TREE={tree}", f"KERNEL_HEADERS={headers}", f"OUT={built}"])
    for path in listed:
        (out / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built / path, out / path)


def stage_rootfs(disk_dir: Path, tools: cache.Entry, busybox_deb: Path, kernel_tree: Path,
                 jobs: int, stage: Path) -> None:
    for sub in ("bin", "sbin", "dev", "proc", "sys", "tmp", "run", "root", "bench", "etc",
                "selftests"):
        (stage / sub).mkdir(parents=True, exist_ok=True)
    unpacked = stage.parent / "busybox-deb"
    run(["dpkg-deb", "-x", str(busybox_deb), str(unpacked)])
    shutil.copy2(unpacked / "bin" / "busybox", stage / "bin" / "busybox")
    shutil.rmtree(unpacked)
    for applet in BUSYBOX_APPLETS:
        (stage / "bin" / applet).symlink_to("busybox")
    shutil.copytree(disk_dir / "rootfs", stage, dirs_exist_ok=True, symlinks=True)
    shutil.copy2(tools.path / "m5", stage / "sbin" / "m5")
    run(["make", "-s", "-C", str(disk_dir / "benchmarks"), f"-j{jobs}", f"CC={CROSS_CC}",
         f"M5_INCLUDE={tools.path / 'include'}", f"M5_LIB={tools.path / 'libm5.a'}",
         f"OUT={stage / 'bench'}"])
    build_selftests(disk_dir, kernel_tree, jobs, stage.parent / "selftests-build",
                    stage / "selftests")


def tree_size(root: Path) -> int:
    return sum(p.lstat().st_size for p in root.rglob("*"))


def fix_times(stage: Path, when: int) -> None:
    """Every staged file, link and directory dated ``when``: mke2fs copies
    their times into the inodes, and two images that differed only in build
    times were seen to move C4 results by up to 2% (why was not traced)."""
    for path in [*stage.rglob("*"), stage]:
        os.utime(path, (when, when), follow_symlinks=False)


def fix_change_times(stage: Path, image: Path, when: int) -> None:
    """mke2fs takes each inode's change time from the staged file's, which
    no one can set (setting the other times moves it to now): rewrite it in
    the image."""
    inodes = ["/", *(f"/{path.relative_to(stage)}" for path in sorted(stage.rglob("*")))]
    script = image.with_suffix(".debugfs")
    script.write_text("".join(f'sif "{inode}" ctime @{when}\n' for inode in inodes))
    run(["debugfs", "-w", "-f", str(script), str(image)])
    script.unlink()


def make_image(stage: Path, image: Path) -> None:
    size_mib = tree_size(stage) // (1 << 20) + HEADROOM_MIB
    fix_times(stage, IMAGE_TIME)
    # A fixed UUID, hash seed and time keep the image identical for identical inputs.
    env = {**os.environ, "E2FSPROGS_FAKE_TIME": str(IMAGE_TIME)}
    run(["mke2fs", "-q", "-t", "ext4", "-F", "-L", "rootfs", "-U",
         "9a1c7a2e-0000-4000-8000-000000000001", "-E", "hash_seed="
         "9a1c7a2e-0000-4000-8000-000000000002,root_owner=0:0",
         "-d", str(stage), str(image), f"{size_mib}M"], env=env)
    fix_change_times(stage, image, IMAGE_TIME)


def disk_entry(disk_dir: Path, tools: cache.Entry) -> cache.Entry | None:
    """The entry ``ensure_disk`` would build or find, without downloading or
    building anything; None while the busybox package is not downloaded."""
    root = cache.cache_root()
    name = BUSYBOX_PACKAGE.split(":")[0]
    found = sorted((root / "debs").glob(f"{name}_*.deb"))
    if not found:
        return None
    return cache.entry("disk", build_inputs(disk_dir, tools, found[-1],
                                            kernel.locate_source(root)), root)


def ensure_disk(disk_dir: Path, tools: cache.Entry, jobs: int) -> cache.Entry:
    """The disk image for these sources and tools; built (in about a minute) if missing."""
    root = cache.cache_root()
    busybox_deb = fetch_deb(root, BUSYBOX_PACKAGE)
    source = kernel.locate_source(root)
    inputs = build_inputs(disk_dir, tools, busybox_deb, source)
    entry = cache.entry("disk", inputs, root)
    return cache.ensure(entry, "disk image", lambda: _build_disk(
        entry, inputs, disk_dir, tools, busybox_deb, source, jobs))


def _build_disk(entry: cache.Entry, inputs: dict[str, object], disk_dir: Path,
                tools: cache.Entry, busybox_deb: Path, source: kernel.KernelSource,
                jobs: int) -> None:
    root = entry.root
    started = time.monotonic()
    log.info("building the disk image")
    with entry.staging(inputs) as out:
        stage = out / "stage" / "rootfs"
        stage.mkdir(parents=True)
        stage_rootfs(disk_dir, tools, busybox_deb, kernel.pristine_tree(root, source), jobs,
                     stage)
        make_image(stage, out / IMAGE_NAME)
        shutil.rmtree(out / "stage")
    log.info("disk image built in %.1f s", time.monotonic() - started)
