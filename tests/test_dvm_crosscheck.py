"""The DVM cross-check (``python -m experiments dvm-crosscheck``): its inputs are
checked at the edge, and on a real gem5 the wrapper really hands our TLBI
timing to gem5's fs.py (a DSB waits the assumed completion) while gem5's own
arm charges nothing of the kind; with the Ruby CHI build, gem5's DVM path
serialises the sixteen operations of a round."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from builders import baremetal, cache, gem5
from experiments import dvm_crosscheck
from experiments.__main__ import main as experiments_main
from support.skips import missing_build

REPO_ROOT = Path(__file__).resolve().parent.parent


def test_classic_memory_keeps_the_default_build_key() -> None:
    patches = REPO_ROOT / "gem5-patches"
    classic = gem5.Gem5BuildOptions.for_memory("classic")
    assert gem5.gem5_entry(patches, classic).key == gem5.gem5_entry(patches).key
    chi = gem5.Gem5BuildOptions.for_memory("ruby-chi")
    assert gem5.gem5_entry(patches, chi).key != gem5.gem5_entry(patches).key


def test_unknown_memory_system_names_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="valid: classic, ruby-chi"):
        gem5.Gem5BuildOptions.for_memory("garnet")


def test_unknown_loop_shape_names_the_valid_ones() -> None:
    assert baremetal.dvm_loop_image(16, "busy") == "dvm-loop-tlbi16-busy.elf"
    with pytest.raises(ValueError, match="TLBIs 1, 16; peers idle, busy"):
        baremetal.dvm_loop_image(4, "idle")


def test_one_core_is_refused_in_one_line(caplog: pytest.LogCaptureFixture) -> None:
    assert experiments_main(["dvm-crosscheck", "--cores", "1", "4"]) == 2
    assert "a broadcast needs at least 2 cores" in caplog.text


@pytest.mark.parametrize(("argv", "message"), [
    (["-j", "0"], "-j 0: at least 1"),
    (["--arm", "ruby-chi", "--cores", "4", "64"], "simulates at most 42 cores"),
])
def test_bad_arguments_are_refused_in_one_line(argv: list[str], message: str,
                                               caplog: pytest.LogCaptureFixture) -> None:
    assert experiments_main(["dvm-crosscheck", *argv]) == 2
    assert message in caplog.text


def test_only_chi_arms_use_ruby_and_only_model_arms_set_tlbi() -> None:
    for arm in dvm_crosscheck.ARMS.values():
        uses_ruby = "--ruby" in arm.fs_args()
        assert uses_ruby == (arm.memory == "ruby-chi")
        assert ("--enable-dvm" in arm.fs_args()) == (arm.name == "ruby-chi")
        assert all(p.startswith("tlbi.") for p in arm.params)
        assert bool(arm.params) == arm.name.startswith("model")


def _rows(path: Path) -> dict[tuple[str, str, str], float]:
    with path.open() as f:
        return {(r["arm"], f"tlbi{r['tlbis']}-{r['peers']}", r["metric"]): float(r["value"])
                for r in csv.DictReader(f)}


def _require(memory: str) -> None:
    entry = gem5.gem5_entry(REPO_ROOT / "gem5-patches", gem5.Gem5BuildOptions.for_memory(memory))
    if not entry.exists():
        missing_build(f"gem5 with the {memory} memory system",
                      f"'python -m builders gem5 --memory {memory}'")
    if not gem5.tools_entry(REPO_ROOT / "gem5-patches").exists():
        missing_build("the gem5 guest tools", "'make gem5'")


@pytest.mark.needs_gem5
def test_model_arm_waits_for_the_assumed_completion(tmp_path: Path) -> None:
    _require("classic")
    arms = [dvm_crosscheck.ARMS["gem5"], dvm_crosscheck.ARMS["model"]]
    target = dvm_crosscheck.crosscheck(arms, [2], [1], ["idle"], tmp_path / "results", 2,
                                       runs_root=tmp_path / "cache")
    rows = _rows(target)
    # 500 ns per broadcast + 20 ns for the one other core, waited for by the
    # round's DSB; gem5's own timing has no such wait.
    assert rows[("model", "tlbi1-idle", "system_dsb_waits_per_round")] == 1.0
    assert rows[("model", "tlbi1-idle", "ns_per_round")] >= 520
    assert rows[("gem5", "tlbi1-idle", "ns_per_round")] < 100
    assert ("gem5", "tlbi1-idle", "system_dsb_waits_per_round") not in rows
    assert cache.cache_root() not in target.parents


@pytest.mark.needs_gem5
def test_chi_serialises_a_rounds_operations(tmp_path: Path) -> None:
    _require("ruby-chi")
    target = dvm_crosscheck.crosscheck([dvm_crosscheck.ARMS["ruby-chi"]], [2], [1, 16],
                                       ["idle"], tmp_path / "results", 2,
                                       runs_root=tmp_path / "cache")
    rows = _rows(target)
    one = rows[("ruby-chi", "tlbi1-idle", "ns_per_round")]
    sixteen = rows[("ruby-chi", "tlbi16-idle", "ns_per_round")]
    # One misc node handles one DVM operation at a time: sixteen cost far more
    # than one, not one overlapped completion.
    assert sixteen > 4 * one
