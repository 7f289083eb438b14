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

from experiments import gem5_commands, raw_outputs, simulate
from experiments.gem5_builds import Builds
from experiments.gem5_commands import GuestScript

pytestmark = pytest.mark.needs_gem5
MAX_TICKS = 5 * 10**12
FAULT_TRACE = "faults.txt"


@pytest.fixture(scope="module")
def builds(cached_builds_or_skip: Callable[..., Builds]) -> Builds:
    return cached_builds_or_skip("selftests")


def _boot_and_run_selftests(builds: Builds, out: Path, features: str) -> tuple[str, str]:
    """Boot on the atomic CPU, run the pauth and BTI selftests; the guest
    console and gem5's trace of every fault taken."""
    simulation = gem5_commands.Simulation(
        "runs", ("direct", *gem5_commands._files(builds, "selftests"), "--cpu", "atomic",
                 "--features", features, "--max-ticks", str(MAX_TICKS),
                 "--script", GuestScript("set -e\nrun-selftest arm64/pauth/pac\n"
                                         "run-selftest arm64/bti/btitest\n")),
        "FPAC/BTI test", "selftests", MAX_TICKS, builds,
        gem5_options=("--debug-flags=Faults", f"--debug-file={FAULT_TRACE}"))
    simulate.Gem5Runner(simulate.RepoState("test", False)).run(simulation, out)
    m5out = out / "m5out"
    return ((m5out / raw_outputs.CONSOLE).read_text(errors="replace"),
            (m5out / FAULT_TRACE).read_text(errors="replace"))


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
