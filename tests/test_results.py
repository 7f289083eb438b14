"""Checks on the recorded results in results/ (real runs, committed with their
provenance): the system-register timing classes move the measured cost the
way they should. These read numbers; they time nothing."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from plots.c1_sctlr_sweep import setting as _setting

RESULTS = Path(__file__).resolve().parent.parent / "results"
DEFINITIONS = Path(__file__).resolve().parent.parent / "experiments" / "definitions"
PROVENANCE = ("gem5_version", "gem5_build", "gem5_patches", "kernel_variant", "kernel_source",
              "kernel_build", "disk_build", "configs_hash")
# Reference runs on QEMU (experiments/qemu_reference.py, qemu_arm32.py) name
# QEMU instead of gem5, and the guest's disk image or initramfs.
QEMU_PROVENANCE = ("qemu_version", "kernel_variant", "kernel_source", "kernel_build")
GUEST_IMAGES = ("disk_build", "initramfs_build")


def _rows(name: str) -> list[dict[str, str]]:
    """A committed result's rows: committed, so never missing and never empty."""
    path = RESULTS / f"{name}.csv"
    assert path.is_file(), f"{path} is not committed"
    with path.open() as handle:
        rows = list(csv.DictReader(handle))
    assert rows, f"{path} has no rows"
    return rows


def _ns_by_params(rows: list[dict[str, str]]) -> dict[str, float]:
    return {r["params"]: float(r["value"]) for r in rows if r["metric"] == "ns_per_iteration"}


def test_sctlr_write_cost_rises_with_its_timing_class() -> None:
    ns = _ns_by_params(_rows("c1-sctlr-sweep"))
    relaxed = sorted((int(_setting(p)["write_latency"]), v) for p, v in ns.items()
                     if _setting(p)["write_serialize"] == "false"
                     and _setting(p)["write_nonspeculative"] == "false")
    drained = [v for p, v in ns.items() if _setting(p)["write_serialize"] == "true"]
    assert len(relaxed) >= 3 and drained
    latencies = [ns_value for _, ns_value in relaxed]
    # More extra cycles on the write never makes the syscall cheaper (to within
    # a picosecond: equal cycle counts can end on different ticks) ...
    assert all(later >= earlier - 1e-3 for earlier, later in zip(latencies, latencies[1:]))
    # ... and 40 extra cycles or a full drain make it clearly dearer than free.
    assert latencies[-1] > latencies[0] + 5
    assert min(drained) > latencies[0]


def test_c1_variants_order_as_their_instructions() -> None:
    rows = [r for r in _rows("c1-sctlr")
            if r["metric"] == "ns_per_iteration" and r["workload"] == "invalid"]
    ns = {(r["core"], r["variant"]): float(r["value"]) for r in rows}
    cores = {c for c, _ in ns}
    assert len(cores) >= 3, f"c1-sctlr's invalid-syscall rows cover only {sorted(cores)}"
    for core in cores:
        # Pointer authentication costs something, and so does writing
        # SCTLR_EL1 on every exit, against the kernel that never switches.
        assert ns[(core, "pac-off")] < ns[(core, "sctlr-none")]
        assert ns[(core, "sctlr-none")] < ns[(core, "sctlr-uncond")]


@pytest.mark.parametrize("name", sorted(p.stem for p in RESULTS.glob("*.csv")))
def test_every_result_row_has_provenance(name: str) -> None:
    required = QEMU_PROVENANCE if name.endswith("-qemu") else PROVENANCE
    for row in _rows(name):
        missing = [c for c in required if c != "gem5_patches" and not row.get(c)]
        if name.endswith("-qemu") and not any(row.get(c) for c in GUEST_IMAGES):
            missing.append(" or ".join(GUEST_IMAGES))
        assert not missing, f"{name}: run {row.get('run')} lacks {missing}"


@pytest.mark.parametrize("name", sorted(p.stem for p in RESULTS.glob("*.csv")
                                        if (DEFINITIONS / f"{p.stem}.toml").is_file()))
def test_committed_results_hold_only_parameter_sets_their_definition_has(name: str) -> None:
    """A figure labels a run by what its parameter set means in today's
    definition: results made with a set the definition no longer has would be
    drawn under the wrong label, so they must be re-run first."""
    from experiments import spec

    defined = {" ".join(run.params) for run in spec.load(name).runs}
    stale = sorted({row.get("params", "") for row in _rows(name)} - defined)
    assert not stale, f"results/{name}.csv holds params {stale[0]!r}, which " \
        f"experiments/definitions/{name}.toml no longer defines: re-run {name}"
