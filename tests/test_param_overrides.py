"""The one parser of ``ROOT.NAME=VALUE`` overrides, shared by the runner,
run.py and the figures (gem5-configs/hardening/param_overrides.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

import experiments  # noqa: F401 - puts gem5-configs' gem5-free modules on the path
from hardening import param_overrides


def test_an_override_parses_into_root_path_and_value() -> None:
    override = param_overrides.parse("cpu.branchPred.btb.numEntries=8192")
    assert (override.root, override.names, override.value) == (
        "cpu", ("branchPred", "btb", "numEntries"), "8192")
    assert override.key == "cpu.branchPred.btb.numEntries"
    assert str(override) == "cpu.branchPred.btb.numEntries=8192"
    # A value may itself hold '=' or '.'; only the first '=' splits.
    assert param_overrides.parse("sysreg.x.regs=a.b=c").value == "a.b=c"


@pytest.mark.parametrize("text, message", [
    ("cpu.numROBEntries", "is not ROOT.NAME=VALUE"),
    ("l2size=1MiB", "is not ROOT.NAME=VALUE"),
    ("cpu..x=1", "is not ROOT.NAME=VALUE"),
    ("l4.size=1MiB", "unknown root 'l4'; valid roots: cpu, l1i, l1d, l2, l3"),
])
def test_bad_text_fails_naming_the_valid_roots(text: str, message: str) -> None:
    with pytest.raises(param_overrides.BadOverride, match=message):
        param_overrides.parse(text)


def test_the_32_bit_board_has_fewer_roots() -> None:
    assert set(param_overrides.ARM32_ROOTS) < set(param_overrides.ROOTS)
    with pytest.raises(param_overrides.BadOverride, match="valid roots: cpu, l1i, l1d, l2, "
                       "walker, sysreg"):
        param_overrides.parse("l3.size=4MiB", param_overrides.ARM32_ROOTS)


def test_a_results_params_column_reads_back_as_keys_and_values() -> None:
    assert param_overrides.parse_column("") == {}
    assert param_overrides.parse_column(
        "sysreg.sctlr.write_latency=10 tlbi.broadcast_completion=500ns") == {
        "sysreg.sctlr.write_latency": "10", "tlbi.broadcast_completion": "500ns"}
    assert param_overrides.key_of("l2.data_latency=14") == "l2.data_latency"


def test_a_value_its_gem5_type_refuses_fails_before_any_build() -> None:
    from experiments import param_values, spec

    types = param_values.load()
    for good in ("l2.size=1MiB", "l2.data_latency=12", "cpu.numROBEntries=64",
                 "walker.contiguous_entries=true", "l2.clusivity=mostly_excl",
                 "cpu.branchPred.btb.numEntries=8192"):
        param_values.check(param_overrides.parse(good), types)
    for bad, why in (("l2.data_latency=abc", "Cycles: a whole number"),
                     ("l2.size=-5", "MemorySize: a size above 0"),
                     ("cpu.noSuchParam=5", "has no parameter 'noSuchParam'"),
                     ("cpu.nope.x=1", "has no child 'nope'"),
                     ("l2.clusivity=bogus", "one of mostly_excl, mostly_incl"),
                     ("walker.contiguous_entries=maybe", "Bool: true or false")):
        with pytest.raises(spec.BadExperiment, match=why):
            spec.check_param("--param", bad)


@pytest.mark.needs_gem5
def test_the_parameter_types_are_what_the_cached_gem5_gives(tmp_path: Path) -> None:
    from builders import gem5
    from experiments import param_values
    from support.skips import missing_build

    entry = gem5.gem5_entry(Path(__file__).resolve().parent.parent / "gem5-patches")
    if not entry.exists():
        missing_build("gem5", "'make gem5'")
    fresh = tmp_path / "types.json"
    param_values.write(entry.path / gem5.Gem5BuildOptions().binary, fresh)
    assert fresh.read_text() == param_values.TYPES.read_text(), \
        "experiments/param_types.json is stale: python -m experiments.param_values --write"
