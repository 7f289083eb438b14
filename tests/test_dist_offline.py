"""The archive ``make dist`` writes builds without network: unpacked into a
temporary folder, its checksums hold, its wheels make a virtual environment,
and the baseline kernel and the default disk image (with gem5's guest tools
they need) build from its sources and packages inside ``unshare -n`` into a
temporary build cache, under the cache keys of a normal build.

It costs a kernel build, so it runs only when asked: ``make test-dist`` (or
``DIST_ARCHIVE=<archive> make test``). Only the compiler cache is shared with
the user's build cache (when it has one), so that the kernel compiles from it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from builders import cache, dist, disk, gem5, local_debs
from support.skips import missing_build

pytestmark = pytest.mark.needs_build

ARCHIVE_ENV = "DIST_ARCHIVE"
VARIANT = "baseline"
# What the normal build's keys are computed with: the archive's own code and
# inputs, with the system's Linux source package and the build cache's busybox.
KEYS = """
import json, sys
from pathlib import Path
from builders import disk, gem5, kernel
tools = gem5.tools_entry(Path("gem5-patches"))
image = disk.disk_entry(Path("disk-image"), tools)
print(json.dumps({"kernel": kernel.kernel_entry(Path("kernel-patches"), sys.argv[1]).key,
                  "gem5-tools": tools.key, "disk": image.key if image else None}))
"""


def offline(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    """Run ``command`` in a new network namespace (no network at all), niced."""
    result = subprocess.run(["unshare", "--net", "nice", "-n", "19", *command], cwd=cwd,
                            env=env, capture_output=True, text=True)
    assert result.returncode == 0, (f"{' '.join(command)} failed offline:\n"
                                    f"{result.stderr[-4000:]}\n{result.stdout[-2000:]}")
    return result.stdout


def test_offline_build_from_dist_archive(tmp_path: Path) -> None:
    archive = os.environ.get(ARCHIVE_ENV)
    if not archive:
        missing_build("the offline build from the dist archive (the baseline kernel and the "
                      "disk image without network; asked for only)",
                      f"'make test-dist', or set {ARCHIVE_ENV}=<archive of 'make dist'>")
    started = time.monotonic()
    subprocess.run(["tar", "-xf", archive, "-C", str(tmp_path)], check=True)
    (folder,) = tmp_path.iterdir()
    subprocess.run(["sha256sum", "--quiet", "-c", dist.SUMS], cwd=folder, check=True)
    manifest = json.loads((folder / dist.MANIFEST).read_text())
    subprocess.run(["tar", "-xzf", dist.NAME + ".tar.gz"], cwd=folder, check=True)
    repo = folder / dist.NAME

    normal = json.loads(subprocess.run(
        [sys.executable, "-c", KEYS, VARIANT], cwd=repo, capture_output=True, text=True,
        check=True, env={k: v for k, v in os.environ.items() if k != local_debs.ENV}).stdout)
    if normal["disk"] is None:
        missing_build("the busybox package a normal disk build downloads", "'make disk'")

    venv = tmp_path / "venv"
    base = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    # This interpreter's pip installs into it: running ensurepip in the new
    # environment would only repeat that work.
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", str(venv)], check=True)
    offline([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
             "--quiet",
             "--disable-pip-version-check", "--no-index", "--find-links",
             str(folder / "wheels"), "--require-hashes", "-r", "requirements.lock"], repo, base)

    build_cache = tmp_path / "cache"
    build_cache.mkdir()
    shared_ccache = cache.cache_root() / "ccache"
    if shared_ccache.is_dir():
        (build_cache / "ccache").symlink_to(shared_ccache)
    env = {**base, cache.CACHE_ENV: str(build_cache), local_debs.ENV: str(folder / "debian"),
           gem5.REPO_ENV: str(folder / "sources" / "gem5.git"),
           "BUILDROOT_REPO": str(folder / "sources" / "buildroot.git")}
    python = str(venv / "bin" / "python")
    jobs = str(os.cpu_count() or 1)
    kernel_path = offline([python, "-m", "builders", "-j", jobs, "kernel", VARIANT],
                          repo, env).split()[-1]
    image_path = offline([python, "-m", "builders", "-j", jobs, "disk"], repo, env).split()[-1]
    built = {"kernel": Path(kernel_path).name, "disk": Path(image_path).parent.name,
             # The kind's folder also holds the entries' lock files (dot names).
             "gem5-tools": [p.name for p in (build_cache / "gem5-tools").iterdir()
                            if not p.name.startswith(".")]}
    print(f"\narchive of {manifest['repository_commit'][:12]}: normal keys {normal}, "
          f"offline keys {built}, {(time.monotonic() - started) / 60:.1f} min")
    assert built == {**normal, "gem5-tools": [normal["gem5-tools"]]}
    assert (Path(kernel_path) / "Image").is_file() and Path(image_path).is_file()
    # Nothing was downloaded: the packages came from the archive.
    assert [p.name for p in (build_cache / "debs").glob("*.deb")] == \
        manifest["debian"]["files"]["guest"]
    shutil.rmtree(tmp_path, ignore_errors=True)
