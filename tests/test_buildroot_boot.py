"""Boot the baseline kernel in gem5 (atomic CPU) on the Buildroot-built disk
image and run a benchmark and a selftest from it.

Needs gem5, the baseline kernel and the Buildroot image in the build cache
('make gem5 kernels' and 'make disk ROOTFS=buildroot'); without them it is
skipped with one line saying so.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from builders import buildroot
from experiments.gem5_builds import Builds
from experiments.gem5_commands import GuestScript
from support.real_gem5 import run_gem5
from support.skips import missing_build

pytestmark = pytest.mark.needs_gem5
MAX_TICKS = 5 * 10**12
DISK_DIR = Path(__file__).resolve().parent.parent / "disk-image"


@pytest.fixture(scope="module")
def builds(cached_builds_or_skip: Callable[..., Builds]) -> Builds:
    found = cached_builds_or_skip("baseline")
    entry = buildroot.disk_entry(DISK_DIR, found.tools)
    if entry is None or not entry.exists():
        missing_build("the Buildroot disk image", "'make disk ROOTFS=buildroot'")
    return dataclasses.replace(found, disk=entry)


def test_buildroot_image_boots_and_runs_the_guest_programs(builds: Builds,
                                                           tmp_path: Path) -> None:
    console = run_gem5(builds, "baseline", tmp_path, "direct", "--cpu", "atomic",
                       "--max-ticks", str(MAX_TICKS), "--script", GuestScript(
                           "cat /etc/os-release\n"
                           "/bench/syscall_loop getppid 10 1000\n"
                           "run-selftest arm64/abi/hwcap\n"),
                       max_ticks=MAX_TICKS, label="Buildroot boot test")
    assert "init: up" in console
    assert "NAME=Buildroot" in console
    assert "ops=1000" in console
    # The program the Debian image runs too, where it exits 0 on these kernels
    # (results/poe-selftests.csv, hwcap): the same source, so the same status.
    assert "selftest-end arm64/abi/hwcap status=0" in console, console[-2000:]
    assert "host script exited with status 0" in console
