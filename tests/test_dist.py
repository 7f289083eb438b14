"""make dist's pieces, quickly: the one-commit repositories it packs, and the
builders taking packages from a local folder (ARTIFACT_DEBS) under the same
identity as downloaded or installed ones. test_dist_offline.py builds from a
whole archive."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from builders import dist, disk, kernel, local_debs
from builders.process import checkout_pinned, run
from experiments import collect


def _git(repo: Path, *args: str) -> str:
    return run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args])


def test_install_deps_lists_the_packages_it_installs(repo_root: Path) -> None:
    listed = run(["bash", str(repo_root / dist.INSTALL_DEPS), "--list"]).split()
    assert kernel.DEBIAN_PACKAGE in listed and "gcc-aarch64-linux-gnu" in listed
    assert "qemu-system-arm" in listed


def test_install_deps_pins_the_kernel_source_the_committed_results_name(
        repo_root: Path) -> None:
    script = (repo_root / dist.INSTALL_DEPS).read_text()
    pinned = re.search(r"^LINUX_SOURCE_VERSION=(\S+)$", script, re.MULTILINE)
    assert pinned, "install-deps.sh sets no LINUX_SOURCE_VERSION"
    named = set()
    for table in (repo_root / "results").rglob("*.csv"):
        named |= {row["kernel_source"] for row in collect.read_csv(table)
                  if row.get("kernel_source", "").startswith("debian ")}
    assert named == {f"debian {kernel.DEBIAN_PACKAGE} {pinned.group(1)}"}


def test_pinned_repository_checks_out_without_history_or_left_out_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    _git(upstream, "init", "-q")
    (upstream / "a.txt").write_text("first\n")
    _git(upstream, "add", ".")
    _git(upstream, "commit", "-qm", "first")
    (upstream / "a.txt").write_text("pinned\n")
    (upstream / "big").mkdir()
    (upstream / "big" / "blob.bin").write_text("left out\n")
    (upstream / "big" / "shared.txt").write_text("pinned\n")  # same blob as a.txt
    _git(upstream, "add", ".")
    _git(upstream, "commit", "-qm", "pinned")
    _git(upstream, "tag", "-a", "v1", "-m", "v1")
    commit = _git(upstream, "rev-parse", "HEAD").strip()
    pin = dist.PinnedRepo("thing", "THING_REPO", "v1", commit, ("big",))

    packed = tmp_path / "thing.git"
    dist.pack_pinned(pin, upstream, packed)
    count = int(_git(packed, "count-objects", "-v").split("in-pack: ")[1].split()[0])
    # commit, tag, two trees and one blob (a.txt's, which big/shared.txt shares).
    assert count == 5
    src = tmp_path / "src"
    checkout_pinned(src, str(packed), "thing", commit, "v1", ("/*", "!/big/"))
    assert (src / "a.txt").read_text() == "pinned\n" and not (src / "big").exists()

    missing = dist.PinnedRepo("thing", "THING_REPO", "v1", "0" * 40)
    monkeypatch.setenv("THING_REPO", str(upstream))
    with pytest.raises(dist.DistError, match="THING_REPO=.* lacks thing v1"):
        dist.local_clone(missing, tmp_path)
    monkeypatch.delenv("THING_REPO")
    with pytest.raises(dist.DistError, match="set THING_REPO"):
        dist.local_clone(missing, tmp_path)


def test_busybox_from_the_local_folder_keeps_its_name(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "debian" / "guest"
    folder.mkdir(parents=True)
    name = "busybox-static_1%3a1.35.0-4+deb12u1+b1_arm64.deb"
    (folder / name).write_bytes(b"not really a package")
    monkeypatch.setenv(local_debs.ENV, str(tmp_path / "debian"))
    deb = disk.fetch_deb(tmp_path / "cache", disk.BUSYBOX_PACKAGE)
    assert deb.name == name and deb.read_bytes() == b"not really a package"
    with pytest.raises(RuntimeError, match=local_debs.ENV):
        disk.fetch_deb(tmp_path / "cache", "hello:arm64")


def test_linux_source_from_a_package_file_has_the_installed_identity(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(local_debs.ENV, raising=False)
    monkeypatch.delenv(kernel.TARBALL_URL_ENV, raising=False)
    try:
        installed = kernel.locate_source(tmp_path / "cache")
    except RuntimeError as err:
        pytest.skip(f"SKIP: {err}")
    # A stand-in package of the installed version with a small tarball.
    package = tmp_path / "pkg"
    (package / "DEBIAN").mkdir(parents=True)
    (package / "DEBIAN" / "control").write_text(
        f"Package: {kernel.DEBIAN_PACKAGE}\nVersion: {installed.identity['version']}\n"
        "Architecture: all\nMaintainer: t <t@t>\nDescription: stand-in\n")
    tarball = package / kernel.DEBIAN_TARBALL.relative_to("/")
    tarball.parent.mkdir(parents=True)
    tarball.write_bytes(b"tarball")
    debs = tmp_path / "debian"
    debs.mkdir()
    subprocess.run(["dpkg-deb", "-b", "-Zgzip", str(package), str(debs / "linux.deb")],
                   check=True, capture_output=True)
    (debs / "linux.deb").rename(debs / f"{kernel.DEBIAN_PACKAGE}_1_all.deb")
    monkeypatch.setenv(local_debs.ENV, str(debs))
    bundled = kernel.locate_source(tmp_path / "cache")
    assert bundled.identity == installed.identity
    assert bundled.tarball.read_bytes() == b"tarball"
    assert kernel.pristine_path(tmp_path, bundled) == kernel.pristine_path(tmp_path, installed)
