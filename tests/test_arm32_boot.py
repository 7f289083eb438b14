"""Claim C3 on gem5: the 32-bit kernel variants boot on the AArch32 board
(gem5-configs/hardening/board32.py) into the initramfs's getppid loop.

Needs gem5, the arm32 kernels, the initramfs and the 32-bit bootloader in the
build cache; without them each test is skipped with one line saying which.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from builders import gem5, initramfs, kernel

pytestmark = pytest.mark.needs_gem5
REPO = Path(__file__).resolve().parent.parent
MAX_TICKS = 2 * 10**12  # a boot takes about 0.22 simulated seconds


def _entry_or_skip(entry, what: str):  # type: ignore[no-untyped-def]
    if not entry.exists():
        pytest.skip(f"SKIP: {what} is not in the build cache")
    return entry


@pytest.mark.parametrize(("variant", "cores"), [("arm32-pan-off", 1), ("arm32-sw-pan", 2)])
def test_arm32_kernel_boots_into_the_getppid_loop(variant: str, cores: int,
                                                   tmp_path: Path) -> None:
    simulator = _entry_or_skip(gem5.gem5_entry(REPO / "gem5-patches"), "gem5 ('make gem5')")
    bootloader = _entry_or_skip(gem5.arm32_tools_entry(REPO / "gem5-patches"),
                                "boot.arm ('python -m builders gem5-arm32')")
    vmlinux = _entry_or_skip(kernel.kernel_entry(REPO / "kernel-patches", variant),
                             f"kernel {variant} ('make kernel VARIANT={variant}')")
    guest = _entry_or_skip(initramfs.initramfs_entry(REPO / "disk-image"),
                           "the initramfs ('make initramfs')")
    done = subprocess.run(
        [str(simulator.path / "gem5.opt"), f"--outdir={tmp_path / 'm5out'}",
         str(REPO / "gem5-configs" / "run.py"), "arm32",
         "--vmlinux", str(vmlinux.path / "vmlinux"),
         "--bootloader", str(bootloader.path / gem5.ARM32_BOOTLOADER),
         "--initramfs", str(guest.path / "initramfs.cpio"),
         "--cores", str(cores), "--init-args", "10 1000 1", "--max-ticks", str(MAX_TICKS)],
        capture_output=True, text=True, check=False)
    console = (tmp_path / "m5out" / "board.terminal").read_text(errors="replace")
    assert done.returncode == 0, done.stderr[-2000:] + console[-2000:]
    assert f"smp: Brought up 1 node, {cores} CPU" in console
    assert "c3-getppid done runs=1" in console
