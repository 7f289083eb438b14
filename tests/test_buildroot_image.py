"""The Buildroot-built guest image (make disk ROOTFS=buildroot) holds what the
default image holds: the same paths, types, modes and owners, and the same
guest programs byte for byte.

Needs both images in the build cache ('make disk' and 'make disk
ROOTFS=buildroot'); without them the comparison is skipped with one line saying so.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from builders import buildroot, cache, disk
from support.skips import missing_build

REPO_ROOT = Path(__file__).resolve().parent.parent
DISK_DIR = REPO_ROOT / "disk-image"

# What only the Buildroot image has, and why.
ONLY_IN_BUILDROOT = {
    # Buildroot writes os-release in every target; it names the release that
    # built the image.
    "/usr": "os-release's directory",
    "/usr/lib": "os-release's directory",
    "/usr/lib/os-release": "Buildroot's record of its release",
    "/etc/os-release": "Buildroot's link to it",
}
# Built from the same sources with the same compiler and flags in both images.
# (The selftests are compiled with -g, so their debug information names the
# build directories, which differ.)
SAME_BYTES = ("/bench", "/sbin/init", "/sbin/run-selftest", "/sbin/m5", "/etc/passwd")

Listing = dict[str, tuple[str, str, str]]

pytestmark = pytest.mark.needs_build


def list_image(image: Path) -> Listing:
    """Every path in the image: (mode, uid, gid), from debugfs' parseable
    listing (no mount needed)."""
    listing: Listing = {}
    pending = ["/"]
    while pending:
        directory = pending.pop()
        out = subprocess.run(["debugfs", "-R", f'ls -p "{directory}"', str(image)],
                             capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            fields = line.split("/")
            if len(fields) < 7 or fields[5] in (".", ".."):
                continue
            _, _, mode, uid, gid, name = fields[:6]
            path = f"{directory.rstrip('/')}/{name}"
            listing[path] = (mode, uid, gid)
            if mode.startswith("04") and path != "/lost+found":
                pending.append(path)
    return listing


def file_digest(image: Path, path: str, scratch: Path) -> str:
    out = scratch / "dumped"
    subprocess.run(["debugfs", "-R", f'dump "{path}" {out}', str(image)],
                   capture_output=True, check=True)
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    out.unlink()
    return digest


@pytest.fixture(scope="module")
def images(gem5_tools: cache.Entry) -> tuple[Path, Path]:
    try:
        default = disk.disk_entry(DISK_DIR, gem5_tools)
        built = buildroot.disk_entry(DISK_DIR, gem5_tools)
    except RuntimeError as err:
        missing_build(f"an input of the disk images ({err})", "'make disk'")
    if default is None or not default.exists():
        missing_build("the default disk image", "'make disk'")
    if built is None or not built.exists():
        missing_build("the Buildroot disk image", "'make disk ROOTFS=buildroot'")
    return default.path / disk.IMAGE_NAME, built.path / disk.IMAGE_NAME


def test_same_file_list(images: tuple[Path, Path]) -> None:
    default, built = (list_image(image) for image in images)
    missing = sorted(set(default) - set(built))
    assert not missing, f"the Buildroot image lacks {missing}"
    extra = sorted(set(built) - set(default) - set(ONLY_IN_BUILDROOT))
    assert not extra, f"the Buildroot image has unexplained paths {extra}"
    differ = {path: (default[path], built[path]) for path in default
              if default[path] != built[path]}
    assert not differ, f"(mode, uid, gid) differ: {differ}"


def test_same_programs(images: tuple[Path, Path], tmp_path: Path) -> None:
    default, built = images
    listing = list_image(default)
    paths = [p for p in listing for top in SAME_BYTES
             if (p == top or p.startswith(top + "/")) and listing[p][0].startswith("10")]
    assert any(p.startswith("/bench/") for p in paths)
    differ = [p for p in paths
              if file_digest(default, p, tmp_path) != file_digest(built, p, tmp_path)]
    assert not differ, f"these files differ between the images: {differ}"


def busybox_applets(image: Path, scratch: Path, qemu: str) -> set[str]:
    """The applets of the image's /bin/busybox, asked on the host through
    QEMU's user-mode emulator (busybox --list)."""
    program = scratch / "busybox"
    subprocess.run(["debugfs", "-R", f"dump /bin/busybox {program}", str(image)],
                   capture_output=True, check=True)
    program.chmod(0o755)
    listed = subprocess.run([qemu, str(program), "--list"], capture_output=True, text=True,
                            check=True).stdout.split()
    program.unlink()
    return set(listed)


def test_busybox_has_the_linked_applets(images: tuple[Path, Path], tmp_path: Path) -> None:
    """Every applet link names an applet of the Buildroot busybox (a missing
    one would fail only when a guest script used it)."""
    qemu = shutil.which("qemu-aarch64-static") or shutil.which("qemu-aarch64")
    if qemu is None:
        pytest.skip("SKIP: no qemu-aarch64(-static) to ask busybox for its applets "
                    "(apt-get install qemu-user-static)")
    applets = busybox_applets(images[1], tmp_path, qemu)
    assert not set(disk.BUSYBOX_APPLETS) - applets


def test_unknown_rootfs_builder_names_the_valid_ones(tmp_path: Path) -> None:
    tools = cache.entry("gem5-tools", {}, tmp_path)
    with pytest.raises(RuntimeError, match="valid: debian, buildroot"):
        buildroot.ensure_rootfs("alpine", DISK_DIR, tools, 1)


def test_buildroot_source_defaults_to_upstream() -> None:
    """The pinned release comes from upstream unless BUILDROOT_REPO says
    otherwise; no local path is built in."""
    assert buildroot.UPSTREAM_REPO.startswith("https://")
    makefile = (REPO_ROOT / "Makefile").read_text()
    assert f"BUILDROOT_REPO ?= {buildroot.UPSTREAM_REPO}" in makefile


def test_external_tree_packages_are_configured() -> None:
    """Each package of the external tree is sourced by its Config.in and
    selected by the defconfig."""
    tree = DISK_DIR / "buildroot"
    config_in = (tree / "Config.in").read_text()
    defconfig = (tree / "configs" / f"{buildroot.DEFCONFIG}").read_text()
    for package in sorted((tree / "package").iterdir()):
        assert f"package/{package.name}/Config.in" in config_in, package.name
        symbol = "BR2_PACKAGE_" + package.name.upper().replace("-", "_")
        assert f"{symbol}=y" in defconfig, symbol


def test_buildroot_never_sees_the_calling_makes_variables() -> None:
    """``make disk ROOTFS=buildroot`` passes ROOTFS down in MAKEFLAGS; Buildroot
    reads ROOTFS to choose its target directory, and with ours it installed
    into the host's /. Its make gets none of what a caller's make passes."""
    environment = buildroot.buildroot_environment(
        {"PATH": "/usr/bin", "MAKEFLAGS": " -- ROOTFS=buildroot", "MAKELEVEL": "1",
         "ROOTFS": "buildroot", "HOME": "/root"})
    assert environment == {"PATH": "/usr/bin", "HOME": "/root"}


def test_a_build_that_would_install_outside_its_output_is_refused(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(buildroot, "run", lambda *args, **kwargs: "TARGET_DIR=\n")
    with pytest.raises(buildroot.UnsafeBuildrootTarget, match="would install into ''"):
        buildroot.check_target_dir(["make"], tmp_path / "output", {})
    monkeypatch.setattr(buildroot, "run",
                        lambda *args, **kwargs: f"TARGET_DIR={tmp_path}/output/target\n")
    buildroot.check_target_dir(["make"], tmp_path / "output", {})
