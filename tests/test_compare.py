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


def test_an_experiment_with_a_wider_measured_spread_has_its_own_default(
        tmp_path: Path) -> None:
    """[experiments.NAME] default: C5's exit regions move by up to 8% with the
    simulation's history alone, so another build's 5% is within it there and
    nowhere else; a metric with its own tolerance keeps it."""
    tolerances = tmp_path / "tolerances.toml"
    tolerances.write_text('default = 0.03\n[metrics]\nverdict = "exact"\n'
                          '[experiments.c5-contpte]\ndefault = 0.08\n')
    other = {"disk_build": "d2"}
    for experiment, agrees in (("c5-contpte", True), ("probe", False)):
        reference = [_row("cycles", 1000.0, experiment=experiment)]
        rerun = [_row("cycles", 1050.0, experiment=experiment, **other)]
        outcomes = compare.compare_rows(reference, rerun, compare.Tolerances.read(tolerances))
        assert (outcomes[0].verdict == "within") is agrees, experiment
    moved = compare.compare_rows([_row("verdict", "pass", experiment="c5-contpte")],
                                 [_row("verdict", "fail", experiment="c5-contpte", **other)],
                                 compare.Tolerances.read(tolerances))
    assert moved[0].verdict == "deviates"
    tolerances.write_text('default = 0.03\n[experiments.c5-contpte]\nmetrics = 1\n')
    with pytest.raises(compare.BadComparison, match=r"\[experiments.c5-contpte\] must hold"):
        compare.Tolerances.read(tolerances)


def test_bad_tolerance_file_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "tolerances.toml"
    bad.write_text('default = 0.03\n[metrics]\ncycles = "loose"\n')
    with pytest.raises(compare.BadComparison, match="metrics.cycles"):
        compare.Tolerances.read(bad)


def test_two_rows_with_one_key_fail_instead_of_merging(tmp_path: Path) -> None:
    twice = [_row("cycles", 1000.0), _row("cycles", 1001.0)]
    with pytest.raises(compare.BadComparison, match="two rows with the same coordinates"):
        _compare(tmp_path, twice, [_row("cycles", 1000.0)])
    # A QEMU reference's timed runs of one boot are rows of their own.
    qemu = [{**_row("getppid_us", 1.3), "boot": "1", "run": str(r)} for r in (1, 2, 3)]
    outcomes = compare.compare_rows(qemu, qemu, compare.Tolerances.read())
    assert [o.verdict for o in outcomes] == ["identical"] * 3


def test_every_committed_result_pairs_row_for_row(tmp_path: Path) -> None:
    """Each committed CSV joins with a copy of itself on unique keys, and one
    moved value in the copy is found."""
    import shutil

    results = Path(__file__).resolve().parent.parent / "results"
    copy = tmp_path / "copy"
    shutil.copytree(results, copy, ignore=shutil.ignore_patterns("checks", "traces"))
    outcomes = compare.compare_dirs(results, copy, compare.Tolerances.read())
    assert all(len(found) == len(collect.read_csv(results / f"{name}.csv"))
               for name, found in outcomes.items())
    rows = collect.read_csv(copy / "syscall.csv")
    moved = next(r for r in rows if r["metric"] == "cycles_per_iteration")
    moved["value"] = str(float(moved["value"]) + 1)
    collect.write_csv(rows, copy / "syscall.csv")
    text, agreed = compare.report(compare.compare_dirs(results, copy, compare.Tolerances.read(),
                                                       ["syscall"]))
    assert not agreed and "cycles_per_iteration" in text


def _cli(*args: str) -> int:
    from experiments import __main__ as cli

    return cli.main(["compare", *args])


def test_the_compare_command_exits_1_on_a_moved_number_and_0_on_agreement(
        tmp_path: Path) -> None:
    _write(tmp_path / "ref", [_row("cycles", 1000.0)])
    _write(tmp_path / "same", [_row("cycles", 1000.0)])
    _write(tmp_path / "moved", [_row("cycles", 1001.0)])
    assert _cli(str(tmp_path / "ref"), str(tmp_path / "same")) == 0
    assert _cli(str(tmp_path / "ref"), str(tmp_path / "moved")) == 1


def test_make_compares_with_the_last_commit_not_the_work_tree(repo_root: Path,
                                                             tmp_path: Path) -> None:
    """make compare's reference is results/ as committed: a rewritten work
    tree results/ is what the re-run is held against, and it fails."""
    import subprocess

    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(repo_root), str(clone)], check=True)
    rows = collect.read_csv(clone / "results" / "syscall.csv")
    for row in rows:
        if row["metric"] == "cycles_per_iteration":
            row["value"] = str(float(row["value"]) * 2)
    collect.write_csv(rows, clone / "results" / "syscall.csv")
    subprocess.run(["make", "--no-print-directory", "committed-reference"], cwd=clone,
                   check=True)
    reference = clone / "out" / "committed" / "results"
    committed = subprocess.run(["git", "-C", str(clone), "show", "HEAD:results/syscall.csv"],
                               capture_output=True, check=True).stdout
    assert (reference / "syscall.csv").read_bytes() == committed
    assert _cli(str(reference), str(clone / "results"), "syscall") == 1
    assert _cli(str(reference), str(reference), "syscall") == 0


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
    each other (``results/``, ``checks/before-0023/`` or, for c5-contpte,
    whose record was remade with layout samples, ``checks/fast-forward/full-detail/``
    for 0001-0021)."""
    root = Path(__file__).resolve().parent.parent / "results"
    checks = root / "checks"
    pairs = [(root, checks / "fpac-bti-off",
              ("syscall", "poe-selftests", "c4-uaccess-check")),
             (checks / "fast-forward" / "full-detail", checks / "fpac-bti-off", ("c5-contpte",)),
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


def test_paired_errors_per_metric_and_what_must_not_move() -> None:
    from experiments import paired

    def row(metric: str, value: float, workload: str = "invalid") -> dict[str, str]:
        return {"experiment": "syscall", "core": "cortex-a76", "variant": "baseline",
                "features": "none", "workload": workload, "metric": metric,
                "value": str(value)}

    reference = [row("cycles", 100.0), row("cycles", 200.0, "getppid"),
                 row("iterations", 10.0), row("instructions_per_iteration", 1000.0)]
    new = [row("cycles", 101.0), row("cycles", 196.0, "getppid"),
           row("iterations", 10.0), row("instructions_per_iteration", 1000.5),
           row("cycles", 5.0, "other")]
    pairing = paired.pair(reference, new)
    cycles = next(m for m in pairing.metrics if m.metric == "cycles")
    assert cycles.errors == pytest.approx((0.01, -0.02))
    assert cycles.worst == pytest.approx(0.02) and cycles.mean == pytest.approx(-0.005)
    assert pairing.unpaired == 1 and not pairing.violations
    # An instruction count 0.2% off and a different operation count both fail.
    new[3] = row("instructions_per_iteration", 1002.0)
    new[2] = row("iterations", 11.0)
    assert len(paired.pair(reference, new).violations) == 2


def test_paired_verdicts_must_be_equal() -> None:
    from experiments import paired

    def verdict(value: str, workload: str) -> dict[str, str]:
        return {"experiment": "hardening-selftests", "core": "neoverse-v2",
                "variant": "selftests", "features": "pac", "workload": workload,
                "metric": "verdict", "value": value}

    reference = [verdict("pass", "pac"), verdict("pass", "btitest")]
    assert paired.pair(reference, reference).verdicts == 2
    moved = paired.pair(reference, [verdict("pass", "pac"), verdict("fail", "btitest")])
    assert moved.verdicts == 2 and moved.verdicts_moved == 1 and len(moved.violations) == 1
    assert "workload=btitest" in moved.violations[0]
    assert moved.violations[0].endswith("metric=verdict: pass -> fail (must not move)")


def test_arm_effects_pair_each_arm_with_its_own_samples_baseline() -> None:
    from experiments import paired

    def row(variant: str, sample: int, value: float, args: str = "") -> dict[str, str]:
        return {"experiment": "c4", "core": "cortex-a76", "variant": variant,
                "kernel_args": args, "features": "pan", "workload": "getdents",
                "sample": str(sample), "metric": "ns_per_iteration", "value": str(value)}

    # The arm boots with its own command line; it still pairs with the
    # baseline's run of its sample. Full detail: +10% and +12%.
    reference = [row("baseline", 0, 100), row("baseline", 1, 100),
                 row("swpan", 0, 110, "arm64.nopan"), row("swpan", 1, 112, "arm64.nopan")]
    close = [row("baseline", 0, 90), row("baseline", 1, 95),
             row("swpan", 0, 99.1, "arm64.nopan"), row("swpan", 1, 106.5, "arm64.nopan")]
    (effect,) = paired.arm_effects(reference, close, "baseline", "ns_per_iteration")
    assert effect.reference == pytest.approx((0.10, 0.12))
    assert effect.new == pytest.approx((0.1011, 0.1211), abs=1e-4)
    assert effect.sample_spread == pytest.approx(0.02)
    holds, text = paired.effects_verdict([effect])
    assert holds and "holds" in text
    # An error of three points: above the spread over samples, so it fails.
    far = close[:3] + [row("swpan", 1, 95 * 1.15, "arm64.nopan")]
    holds, text = paired.effects_verdict(
        paired.arm_effects(reference, far, "baseline", "ns_per_iteration"))
    assert not holds and "does not hold" in text
    assert paired.effects_verdict([]) == (False, "no arm pairs with a baseline in both sets")
    # One layout sample per run: only the third of the smallest effect judges,
    # and the text says there was no spread.
    (single,) = paired.arm_effects(reference[::2], close[::2], "baseline", "ns_per_iteration")
    holds, text = paired.effects_verdict([single])
    assert holds and "one layout sample per run" in text and "inf" not in text


def test_another_detail_mode_is_judged_by_the_tolerances(tmp_path: Path) -> None:
    full = [_row("cycles", 1000.0, detail="full")]
    fast = [_row("cycles", 1001.0, detail="fast-forward")]
    text, agreed = _compare(tmp_path, full, fast)
    assert agreed and "same builds: must be identical" not in text
    # Rows older than the column are full detail: identity is still required.
    text, agreed = _compare(tmp_path, [_row("cycles", 1000.0)], [_row("cycles", 1001.0,
                                                                        detail="full")])
    assert not agreed and "same builds: must be identical" in text


def test_a_check_is_paired_with_the_rows_it_kept_where_the_record_was_remade(
        tmp_path: Path) -> None:
    from experiments import paired

    record, check = tmp_path / "results", tmp_path / "check"
    kept = check / paired.PAIRED_AGAINST
    kept.mkdir(parents=True)
    record.mkdir()
    for folder, name in ((record, "remade"), (kept, "remade"), (check, "remade"),
                         (record, "unchanged"), (check, "unchanged")):
        (folder / f"{name}.csv").write_text("experiment\n")
    files = {name: ref for name, ref, _ in paired.paired_files(record, check)}
    assert files == {"remade": kept / "remade.csv", "unchanged": record / "unchanged.csv"}
