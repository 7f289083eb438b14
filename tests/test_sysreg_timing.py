"""Timing-table overrides (``--param sysreg.*``) are parsed on the host, so a
typo fails before gem5 starts; gem5 itself checks register names and which
relaxations are safe (see tests/test_boot_integration.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "gem5-configs"))

from hardening.sysreg import (  # noqa: E402
    GEM5_TIMING,
    BadSysRegTiming,
    SysRegClass,
    SysRegTiming,
    split_overrides,
)

TABLE = SysRegTiming(classes={"sctlr": SysRegClass(regs=("sctlr_el1",), write_serialize=False,
                                                   write_nonspeculative=False, write_latency=2)},
                     source="test")


def test_field_override_changes_only_that_field() -> None:
    timing = TABLE.overridden(["sysreg.sctlr.write_latency=9", "sysreg.isb_latency=3"])
    assert timing.classes["sctlr"].write_latency == 9
    assert timing.classes["sctlr"].write_serialize is False
    assert timing.isb_latency == 3
    assert "sysreg.sctlr.write_latency=9" in timing.source


def test_new_class_needs_registers_first() -> None:
    timing = GEM5_TIMING.overridden(["sysreg.keys.regs=apiakeylo_el1+apiakeyhi_el1",
                                     "sysreg.keys.write_serialize=false"])
    assert timing.classes["keys"].regs == ("apiakeylo_el1", "apiakeyhi_el1")
    with pytest.raises(BadSysRegTiming, match="needs sysreg.keys.regs"):
        GEM5_TIMING.overridden(["sysreg.keys.write_latency=1"])


@pytest.mark.parametrize("text, message", [
    ("sysreg.sctlr.write_speed=1", "valid: regs, read_serialize"),
    ("sysreg.sctlr.write_latency=-1", "whole number"),
    ("sysreg.sctlr.write_serialize=maybe", "true or false"),
    ("sysreg.isb=1", "isb_latency and the classes sctlr"),
])
def test_bad_overrides_name_the_valid_choices(text: str, message: str) -> None:
    with pytest.raises(BadSysRegTiming, match=message):
        TABLE.overridden([text])


def test_default_table_is_gem5s_timing() -> None:
    assert GEM5_TIMING.is_gem5_default
    assert not TABLE.is_gem5_default
    assert split_overrides(["cpu.numROBEntries=64", "sysreg.isb_latency=1"]) == (
        ["sysreg.isb_latency=1"], ["cpu.numROBEntries=64"])
