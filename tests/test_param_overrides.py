"""The one parser of ``ROOT.NAME=VALUE`` overrides, shared by the runner,
run.py and the figures (gem5-configs/hardening/param_overrides.py)."""

from __future__ import annotations

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
