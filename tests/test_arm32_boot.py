"""Claim C3 on gem5: the 32-bit kernel variants boot on the AArch32 board
(gem5-configs/hardening/board32.py) into the initramfs's getppid loop, and a
checkpoint taken at the loop restores into the Cortex-A15 O3 model.

Needs gem5, the arm32 kernels, the initramfs and the 32-bit bootloader in the
build cache; without them each test is skipped with one line saying which.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from builders import gem5, initramfs, kernel
from support.skips import missing_build

pytestmark = pytest.mark.needs_gem5
REPO = Path(__file__).resolve().parent.parent
MAX_TICKS = 2 * 10**12  # a boot takes about 0.22 simulated seconds


def _entry_or_skip(entry, what: str, command: str):  # type: ignore[no-untyped-def]
    if not entry.exists():
        missing_build(what, command)
    return entry


def _gem5_and_guest_or_skip(variant: str) -> tuple[Path, list[str]]:
    """gem5.opt, and the arguments naming what the 32-bit board starts."""
    simulator = _entry_or_skip(gem5.gem5_entry(REPO / "gem5-patches"), "gem5", "'make gem5'")
    bootloader = _entry_or_skip(gem5.arm32_tools_entry(REPO / "gem5-patches"), "boot.arm",
                                "'python -m builders gem5-arm32'")
    vmlinux = _entry_or_skip(kernel.kernel_entry(REPO / "kernel-patches", variant),
                             f"kernel {variant}", f"'make kernel VARIANT={variant}'")
    guest = _entry_or_skip(initramfs.initramfs_entry(REPO / "disk-image"), "the initramfs",
                           "'make initramfs'")
    return simulator.path / "gem5.opt", [
        "--vmlinux", str(vmlinux.path / "vmlinux"),
        "--bootloader", str(bootloader.path / gem5.ARM32_BOOTLOADER),
        "--initramfs", str(guest.path / "initramfs.cpio"), "--max-ticks", str(MAX_TICKS)]


def _run_py(gem5_opt: Path, outdir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(gem5_opt), f"--outdir={outdir}",
                           str(REPO / "gem5-configs" / "run.py"), *args],
                          capture_output=True, text=True, check=False)


def _boot_to_checkpoint(gem5_opt: Path, common: list[str], tmp_path: Path) -> Path:
    checkpoint = tmp_path / "checkpoint"
    boot = _run_py(gem5_opt, tmp_path / "boot", "arm32", *common,
                   "--checkpoint-out", str(checkpoint))
    assert boot.returncode == 0, boot.stderr[-2000:]
    assert (checkpoint / "m5.cpt").is_file()
    return checkpoint


@pytest.mark.parametrize(("variant", "cores"), [("arm32-pan-off", 1), ("arm32-sw-pan", 2)])
def test_arm32_kernel_boots_into_the_getppid_loop(variant: str, cores: int,
                                                   tmp_path: Path) -> None:
    gem5_opt, common = _gem5_and_guest_or_skip(variant)
    done = _run_py(gem5_opt, tmp_path / "m5out", "arm32", *common, "--cores", str(cores),
                   "--init-args", "10 1000 1")
    console = (tmp_path / "m5out" / "board.terminal").read_text(errors="replace")
    assert done.returncode == 0, done.stderr[-2000:] + console[-2000:]
    assert f"smp: Brought up 1 node, {cores} CPU" in console
    assert "c3-getppid done runs=1" in console


def test_arm32_checkpoint_restores_into_the_a15_o3_model(tmp_path: Path) -> None:
    """One atomic boot to the init's m5 checkpoint, then a restore into the
    Cortex-A15 O3 model that runs the counts given by m5 readfile between
    m5 resetstats/dumpstats and ends at m5 exit with one dump per run."""
    gem5_opt, common = _gem5_and_guest_or_skip("arm32-pan-off")
    checkpoint = _boot_to_checkpoint(gem5_opt, common, tmp_path)
    restore = _run_py(gem5_opt, tmp_path / "o3", "arm32-measure", *common,
                      "--checkpoint", str(checkpoint), "--core", "cortex-a15",
                      "--init-args", "20 50 2")
    console = (tmp_path / "o3" / "board.terminal").read_text(errors="replace")
    assert restore.returncode == 0, restore.stderr[-2000:] + console[-2000:]
    assert "c3-getppid host counts warmup=20 calls=50 runs=2" in console
    result = json.loads((tmp_path / "o3" / "getppid.json").read_text())
    assert len(result["runs"]) == 2
    assert all(run["cycles_per_call"] > run["instructions_per_call"] / 3
               for run in result["runs"])


def test_the_dacr_timing_class_times_software_pan(tmp_path: Path) -> None:
    """gem5 patch 0019 hands the A32 MCR to the timing table: with software
    PAN every getppid() writes DACR on entry and on exit, so an extra write
    latency of L cycles costs each call at least L more cycles. A relaxation
    the patch does not allow is refused when the model is built."""
    gem5_opt, common = _gem5_and_guest_or_skip("arm32-sw-pan")
    checkpoint = _boot_to_checkpoint(gem5_opt, common, tmp_path)
    restore = [*common, "--checkpoint", str(checkpoint), "--init-args", "20 50 1"]
    cycles = {}
    for latency in (0, 40):
        outdir = tmp_path / f"latency-{latency}"
        done = _run_py(gem5_opt, outdir, "arm32-measure", *restore,
                       "--param", f"sysreg.dacr.write_latency={latency}")
        assert done.returncode == 0, done.stderr[-2000:]
        model = json.loads((outdir / "model.json").read_text())
        assert model["sysreg_timing"]["classes"]["dacr"]["write_latency"] == latency
        run, = json.loads((outdir / "getppid.json").read_text())["runs"]
        cycles[latency] = run["cycles_per_call"]
    assert cycles[40] >= cycles[0] + 40, cycles
    refused = _run_py(gem5_opt, tmp_path / "refused", "arm32-measure", *restore, "--check",
                      "--param", "sysreg.ctl.regs=sctlr",
                      "--param", "sysreg.ctl.write_serialize=false")
    assert refused.returncode != 0
    assert "MSR sctlr must stay serializing" in refused.stdout + refused.stderr
