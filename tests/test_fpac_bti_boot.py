"""FPAC and BTI (gem5 patches 0022-0023) seen where the selftests cannot show them.

The kernel's `corrupt_pac` selftest passes on SIGILL (FPAC: the AUT* itself
faults) and on SIGSEGV (the poisoned pointer faults where it is used), so only
gem5's fault trace tells which path a run took; `btitest` passes without BTI
too, by checking that every call completes. Needs gem5 and the `selftests`
kernel in the build cache; without them it is skipped with one line saying so.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from experiments import raw_outputs
from experiments.gem5_builds import Builds
from experiments.gem5_commands import GuestScript
from support.real_gem5 import run_gem5

pytestmark = pytest.mark.needs_gem5
MAX_TICKS = 5 * 10**12
FAULT_TRACE = "faults.txt"


@pytest.fixture(scope="module")
def builds(cached_builds_or_skip: Callable[..., Builds]) -> Builds:
    return cached_builds_or_skip("selftests")


def _boot_and_run_selftests(builds: Builds, out: Path, features: str) -> tuple[str, str]:
    """Boot on the atomic CPU, run the pauth and BTI selftests; the guest
    console and gem5's trace of every fault taken."""
    console = run_gem5(builds, "selftests", out, "direct", "--cpu", "atomic",
                       "--features", features, "--max-ticks", str(MAX_TICKS),
                       "--script", GuestScript("set -e\nrun-selftest arm64/pauth/pac\n"
                                               "run-selftest arm64/bti/btitest\n"),
                       max_ticks=MAX_TICKS, label="FPAC/BTI test",
                       gem5_options=("--debug-flags=Faults", f"--debug-file={FAULT_TRACE}"))
    return console, (out / raw_outputs.M5OUT / FAULT_TRACE).read_text(errors="replace")


def _both_pass(console: str) -> None:
    totals = [line for line in console.splitlines() if line.startswith("# Totals:")]
    assert len(totals) == 2 and all(" fail:0 " in line for line in totals), totals


def test_fpac_faults_at_the_aut_and_bti_guards_indirect_branches(
        builds: Builds, tmp_path: Path) -> None:
    console, faults = _boot_and_run_selftests(builds, tmp_path, "pac,fpac,bti")
    _both_pass(console)
    assert "HWCAP2_BTI present" in console
    # A call through BLR to a function without a landing pad: BTYPE 10.
    assert "SIGILL in nohint_func/call_using_blr, BTYPE=10 (expected)" in console
    assert "Branch Target" in faults
    assert "PAC Fail" in faults


def test_without_the_switches_neither_happens(builds: Builds, tmp_path: Path) -> None:
    console, faults = _boot_and_run_selftests(builds, tmp_path, "pac")
    _both_pass(console)
    assert "HWCAP2_BTI not present" in console
    assert "SIGILL in" not in console
    assert "Branch Target" not in faults
    assert "PAC Fail" not in faults
