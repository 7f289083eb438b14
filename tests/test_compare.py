"""compare: identical where the builds match, tolerances elsewhere, names what moved."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from experiments import collect, compare

BUILDS = {"gem5_build": "g1", "gem5_tools_build": "t1", "kernel_build": "k1",
          "disk_build": "d1", "configs_hash": "c1"}


def _row(metric: str, value: object, **changes: str) -> dict[str, object]:
    return {"experiment": "probe", "run": "r1", "cpu": "o3", "core": "cortex-a76",
            "variant": "baseline", "features": "pan", "workload": "invalid",
            "metric": metric, "value": value, **BUILDS, **changes}


def _write(directory: Path, rows: list[dict[str, object]]) -> Path:
    collect.write_csv(rows, directory / "probe.csv")
    return directory


def _compare(tmp_path: Path, reference: list[dict[str, object]],
             new: list[dict[str, object]]) -> tuple[str, bool]:
    results = compare.compare_dirs(_write(tmp_path / "ref", reference),
                                   _write(tmp_path / "new", new), compare.Tolerances.read())
    return compare.report(results)


def test_same_builds_must_be_identical(tmp_path: Path) -> None:
    text, agreed = _compare(tmp_path, [_row("cycles", 1000.0)], [_row("cycles", 1000.0)])
    assert agreed and "| probe | 1 | 1 | 0 | 0 | 0 | 0 |" in text
    text, agreed = _compare(tmp_path, [_row("cycles", 1000.0)], [_row("cycles", 1000.5)])
    assert not agreed and "same builds: must be identical" in text and "cycles" in text


def test_other_builds_get_the_metric_tolerance(tmp_path: Path) -> None:
    other = {"disk_build": "d2"}
    _, agreed = _compare(tmp_path, [_row("cycles", 1000.0)], [_row("cycles", 1020.0, **other)])
    assert agreed
    text, agreed = _compare(tmp_path, [_row("cycles", 1000.0)],
                            [_row("cycles", 1100.0, **other)])
    assert not agreed and "9.09% apart, tolerance 3.0%" in text
    # A few misses more is within the absolute floor however large relatively.
    _, agreed = _compare(tmp_path, [_row("l1i_misses", 3)], [_row("l1i_misses", 9, **other)])
    assert agreed
    # Verdicts never move.
    _, agreed = _compare(tmp_path, [_row("verdict", "pass")], [_row("verdict", "fail", **other)])
    assert not agreed


def test_missing_rows_disagree_and_new_rows_are_listed(tmp_path: Path) -> None:
    text, agreed = _compare(tmp_path, [_row("cycles", 1.0), _row("ipc", 2.0)],
                            [_row("cycles", 1.0), _row("new_metric", 3.0)])
    assert not agreed and "missing: " in text and "metric=ipc" in text
    assert "| probe | 3 | 1 | 0 | 0 | 1 | 1 |" in text


def test_a_partial_rerun_is_judged_on_the_runs_it_has(tmp_path: Path) -> None:
    reference = [_row("cycles", 1.0), _row("ipc", 2.0),
                 _row("cycles", 5.0, workload="getppid")]
    rerun = [_row("cycles", 1.0)]  # the invalid run only, and without its ipc
    results = compare.compare_dirs(_write(tmp_path / "ref", reference),
                                   _write(tmp_path / "new", rerun), compare.Tolerances.read(),
                                   partial=True)
    text, agreed = compare.report(results)
    assert not agreed and "metric=ipc" in text and "workload=getppid" not in text
    results = compare.compare_dirs(tmp_path / "ref",
                                   _write(tmp_path / "new", [_row("cycles", 1.0),
                                                             _row("ipc", 2.0)]),
                                   compare.Tolerances.read(), partial=True)
    assert compare.report(results)[1]


def test_bad_tolerance_file_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "tolerances.toml"
    bad.write_text('default = 0.03\n[metrics]\ncycles = "loose"\n')
    with pytest.raises(compare.BadComparison, match="metrics.cycles"):
        compare.Tolerances.read(bad)


def test_the_committed_results_agree_with_themselves() -> None:
    results = Path(__file__).resolve().parent.parent / "results"
    text, agreed = compare.report(compare.compare_dirs(results, results,
                                                       compare.Tolerances.read()))
    assert agreed, text


def test_the_runs_redone_on_a_second_machine_are_identical() -> None:
    machines = Path(__file__).resolve().parent.parent / "results" / "checks" / "cross-machine"
    outcomes = compare.compare_dirs(machines / "first", machines / "second",
                                    compare.Tolerances.read(), partial=True)
    text, agreed = compare.report(outcomes)
    assert agreed, text
    # Agreement here is exact: nothing may lean on a tolerance. (A metric added
    # since the first machine's rows were made, iterations, is "new" there.)
    assert not [o for found in outcomes.values() for o in found if o.verdict == "within"]


def _last_patch(series: str) -> str:
    """The last patch of a ``gem5_patches`` value, either form:
    ``0001-0023:<hash>`` or ``0001:<hash>;...;0021:<hash>``."""
    return series.split(";")[-1].split(":")[0].split("-")[-1]


def test_fpac_and_bti_patches_change_nothing_when_switched_off() -> None:
    """gem5 patches 0022-0023 (FPAC, BTI) act only under their feature
    switches: runs without them on 0001-0023 (another gem5 build, disk and
    configs hash) give every value of the 0001-0021 rows exactly, kept beside
    each other (``results/`` or ``checks/before-0023/`` for 0001-0021)."""
    root = Path(__file__).resolve().parent.parent / "results"
    checks = root / "checks"
    pairs = [(root, checks / "fpac-bti-off",
              ("syscall", "poe-selftests", "c4-uaccess-check", "c5-contpte")),
             (checks / "before-0023", root, ("hardening-selftests",))]
    for before, after, names in pairs:
        outcomes = compare.compare_dirs(before, after, compare.Tolerances.read(), names)
        text, agreed = compare.report(outcomes)
        assert agreed, text
        # hardening-selftests adds the runs with the switches on: "new" rows.
        assert {o.verdict for found in outcomes.values() for o in found} <= {"identical", "new"}
        for name in outcomes:
            last = [{_last_patch(r["gem5_patches"])
                     for r in csv.DictReader((d / f"{name}.csv").open())}
                    for d in (before, after)]
            assert last == [{"0021"}, {"0023"}], name


def test_the_buildroot_image_measures_what_the_default_image_measures() -> None:
    """The quick set on both root file systems, same gem5, kernel and configs:
    only the image (its layout) differs, so the rows agree within tolerance
    and every instruction count is the same."""
    checks = Path(__file__).resolve().parent.parent / "results" / "checks" / "rootfs"
    outcomes = compare.compare_dirs(checks / "debian", checks / "buildroot",
                                    compare.Tolerances.read())
    text, agreed = compare.report(outcomes)
    assert agreed, text
    rows = {name: list(csv.DictReader((checks / name / "syscall.csv").open()))
            for name in ("debian", "buildroot")}
    for column in ("gem5_build", "kernel_build", "configs_hash"):
        assert {r[column] for r in rows["debian"]} == {r[column] for r in rows["buildroot"]}
    disks = [{r["disk_build"] for r in found} for found in rows.values()]
    assert not disks[0] & disks[1]
    instructions = [{(r["workload"], r["features"]): r["value"] for r in found
                     if r["metric"] == "instructions"} for found in rows.values()]
    assert instructions[0] and instructions[0] == instructions[1]


def test_an_older_file_without_the_later_coordinates_still_joins(tmp_path: Path) -> None:
    old = {"experiment": "probe", "run": "r1", "cpu": "o3", "core": "cortex-a76",
           "variant": "baseline", "features": "pan", "workload": "invalid",
           "metric": "cycles", "value": 1.0, **BUILDS}
    ref = tmp_path / "ref"
    ref.mkdir()
    with (ref / "probe.csv").open("w") as handle:
        handle.write(",".join(old) + "\n" + ",".join(str(v) for v in old.values()) + "\n")
    results = compare.compare_dirs(ref, _write(tmp_path / "new", [_row("cycles", 1.0)]),
                                   compare.Tolerances.read())
    assert compare.report(results)[1]
