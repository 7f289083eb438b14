"""The docs' numbers match the results they cite (publish/claims.toml)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from publish import claims


@pytest.mark.parametrize("claim", claims.read(), ids=lambda c: c.id)
def test_stated_number_matches_its_results(claim: claims.Claim) -> None:
    claims.check(claim, claims.page_text(claim))


def test_a_claim_on_a_missing_page_fails(tmp_path: Path) -> None:
    claim = claims.Claim("probe", "takes 121 ns", "probe", {"x": {"metric": "ns"}}, "x", 121,
                         0.5, page="docs/results/no-such-page.md")
    with pytest.raises(claims.BadClaim, match="no-such-page.md does not exist"):
        claims.page_text(claim, tmp_path)
    bad = tmp_path / "claims.toml"
    bad.write_text('[[claim]]\nid = "x"\ntext = "t"\nresults = "r"\nwhere = { a = "b" }\n'
                   'value = 1\ntolerance = 0\n')
    with pytest.raises(claims.BadClaim, match="no page"):
        claims.read(bad)


def test_a_moved_number_fails(tmp_path: Path) -> None:
    (tmp_path / "probe.csv").write_text("workload,metric,value\ninvalid,ns,120.2\n")
    claim = claims.Claim("probe", "takes 121 ns", "probe",
                         {"x": {"workload": "invalid", "metric": "ns"}}, "x", 121, 0.5)
    with pytest.raises(claims.BadClaim, match="give 120.2"):
        claims.check(claim, "it takes 121 ns", tmp_path)
    with pytest.raises(claims.BadClaim, match="no longer says"):
        claims.check(claim, "it takes 120 ns", tmp_path)


def test_a_median_claim_takes_the_median_of_its_samples(tmp_path: Path) -> None:
    (tmp_path / "probe.csv").write_text("sample,metric,value\n0,ns,10\n1,ns,14\n2,ns,11\n")
    claim = claims.Claim("probe", "takes 11 ns", "probe", {"x": {"metric": "ns"}}, "x", 11, 0.1,
                         aggregate="median")
    assert claims.check(claim, "it takes 11 ns", tmp_path) == 11
    one = claims.Claim("probe", "takes 11 ns", "probe", {"x": {"metric": "ns"}}, "x", 11, 0.1)
    with pytest.raises(claims.BadClaim, match="matches 3 rows, not one"):
        claims.check(one, "it takes 11 ns", tmp_path)


def test_a_sum_claim_adds_the_rows_it_selects(tmp_path: Path) -> None:
    (tmp_path / "probe.csv").write_text("kind,serializing,value\nisb,True,4\nmrs,True,6\n"
                                        "add,False,90\n")
    claim = claims.Claim("probe", "10 serializing", "probe", {"x": {"serializing": "True"}},
                         "x", 10, 0.1, aggregate="sum")
    assert claims.check(claim, "it has 10 serializing", tmp_path) == 10


def test_a_count_claim_counts_the_rows_it_selects_even_none(tmp_path: Path) -> None:
    (tmp_path / "probe.csv").write_text("boot,metric,value\n1,verdict,pass\n2,verdict,fail\n"
                                        "3,verdict,fail\n")
    failed = claims.Claim("probe", "2 of 3", "probe", {"x": {"value": "fail"}}, "x", 2, 0,
                          aggregate="count")
    assert claims.check(failed, "2 of 3 boots", tmp_path) == 2
    skipped = claims.Claim("probe", "0 of 3", "probe", {"x": {"value": "skip"}}, "x", 0, 0,
                           aggregate="count")
    assert claims.check(skipped, "0 of 3 boots", tmp_path) == 0
    misspelt = claims.Claim("probe", "0 of 3", "probe", {"x": {"metric": "verdit",
                                                              "value": "skip"}}, "x", 0, 0,
                            aggregate="count")
    with pytest.raises(claims.BadClaim, match="matches no row"):
        claims.check(misspelt, "0 of 3 boots", tmp_path)


def test_a_row_may_come_from_another_results_file(tmp_path: Path) -> None:
    (tmp_path / "after.csv").write_text("metric,value\ncycles,103\n")
    (tmp_path / "before").mkdir()
    (tmp_path / "before" / "probe.csv").write_text("metric,value\ncycles,100\n")
    claim = claims.Claim("probe", "3% longer", "after",
                         {"new": {"metric": "cycles"},
                          "old": {"results": "before/probe", "metric": "cycles"}},
                         "100 * (new / old - 1)", 3, 0.05)
    assert claims.check(claim, "it takes 3% longer", tmp_path) == pytest.approx(3)


def test_expressions_are_arithmetic_and_comparisons_only() -> None:
    assert claims.evaluate("100 * (a / b - 1)", {"a": 110.0, "b": 100.0}) == pytest.approx(10)
    with pytest.raises(claims.BadClaim):
        claims.evaluate("__import__('os')", {})
    assert claims.evaluate("median(a / b, 3, 1)", {"a": 4.0, "b": 2.0}) == 2
    assert claims.evaluate("abs(min(a, b) - max(a, b))", {"a": 4.0, "b": 2.0}) == 2
    assert claims.evaluate("a > b and not a < 1", {"a": 4.0, "b": 2.0}) == 1
    assert claims.evaluate("1 < a < 3 or a >= 5", {"a": 4.0}) == 0
    for bad in ("open('x')", "abs(a, a)", "a / 0", "a +", "a.real", "a == 4", "a is a"):
        with pytest.raises(claims.BadClaim):
            claims.evaluate(bad, {"a": 4.0})


def test_readme_and_guide_tables_are_the_generated_ones() -> None:
    from publish import tables

    for document in tables.DOCUMENTS:
        _, stale = tables.refreshed(document.read_text())
        assert not stale, f"{document.name} tables differ from plots/out: {stale} (make publish)"


def test_median_interval_from_order_statistics() -> None:
    from plots import style

    median, low, high, coverage = style.median_interval([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (median, low, high) == (3.0, 1.0, 5.0) and coverage == pytest.approx(1 - 2 / 32)
    values = [float(v) for v in range(1, 21)]
    median, low, high, coverage = style.median_interval(values)
    assert median == 10.5 and coverage >= 0.95 and (low, high) == (6.0, 15.0)
    assert style.median_interval([7.0])[1:3] == (7.0, 7.0)


def test_a_claim_checks_the_number_its_text_prints(tmp_path: Path) -> None:
    (tmp_path / "probe.csv").write_text("workload,metric,value\ninvalid,ns,8.5\n")
    where = {"x": {"workload": "invalid", "metric": "ns"}}
    rounded = claims.Claim("probe", "costs about 9 cycles", "probe", where, "x", 8.5, 0.5)
    with pytest.raises(claims.BadClaim, match="does not print 8.5"):
        claims.check(rounded, "it costs about 9 cycles", tmp_path)
    printed = claims.Claim("probe", "costs about 9 cycles", "probe", where, "x", 9, 0.5)
    assert claims.check(printed, "it costs about 9 cycles", tmp_path) == 8.5


def test_numbers_in_words_bounds_and_stated_words(tmp_path: Path) -> None:
    (tmp_path / "probe.csv").write_text("workload,metric,value\na,ns,4\nb,ns,0.3\n")
    four = {"x": {"workload": "a", "metric": "ns"}}
    small = {"x": {"workload": "b", "metric": "ns"}}
    words = claims.Claim("probe", "four writes per call", "probe", four, "x", 4, 0)
    assert claims.check(words, "four writes per call", tmp_path) == 4
    bound = claims.Claim("probe", "within 0.5 ns", "probe", small, "x", 0, 0.5, bound=True)
    assert claims.check(bound, "within 0.5 ns", tmp_path) == pytest.approx(0.3)
    unbounded = claims.Claim("probe", "within 0.5 ns", "probe", small, "x", 0, 0.5)
    with pytest.raises(claims.BadClaim, match="does not print 0"):
        claims.check(unbounded, "within 0.5 ns", tmp_path)
    other = claims.Claim("probe", "1,234 calls and 4 writes", "probe", four, "x", 4, 0,
                         stated="1,234 calls")
    with pytest.raises(claims.BadClaim, match="'1,234 calls' does not print 4"):
        claims.check(other, "1,234 calls and 4 writes", tmp_path)
    assert claims.printed_numbers("1,234 and -0.3 (0.97-1.02x), three quarters") == {
        1234, -0.3, 0.3, 0.97, 1.02, 0.75}


def test_the_verdict_table_is_current_and_its_rules_judge() -> None:
    from plots import style
    from publish import verdicts

    rows = verdicts.read()
    assert {row.claim for row in rows} == {"C1", "C2", "C3", "C4", "C5"}
    committed = (style.OUT / "verdicts.md").read_text()
    assert committed == verdicts.table(rows, style.RESULTS), "python -m publish.verdicts"
    labels = {verdicts.REPRODUCED, verdicts.SHAPE_ONLY, verdicts.NOT_REPRODUCED,
              verdicts.NOT_COMPARABLE}
    assert {row.verdict() for row in rows} <= labels


def test_a_verdict_follows_its_rule() -> None:
    from publish import verdicts

    def row(value: float, **rules: object) -> verdicts.Verdict:
        return verdicts.Verdict("C1", "x", "+10%", {"a": "id"}, "{a}", "r", "docs/results/c1.md",
                                values={"a": value}, **rules)

    rules = {"reproduced": "abs(a / 10 - 1) <= 0.25", "shape": "a > 0"}
    assert row(11.0, **rules).verdict() == verdicts.REPRODUCED
    assert row(20.0, **rules).verdict() == verdicts.SHAPE_ONLY
    assert row(-1.0, **rules).verdict() == verdicts.NOT_REPRODUCED
    assert row(20.0, shape="a > 0").verdict() == verdicts.SHAPE_ONLY
    assert row(11.0, comparable=False, **rules).verdict() == verdicts.NOT_COMPARABLE


def test_a_verdict_naming_no_claim_fails_in_one_line(tmp_path: Path) -> None:
    from publish import verdicts

    bad = tmp_path / "verdicts.toml"
    bad.write_text('[[verdict]]\nclaim = "C1"\nwhat = "w"\npublished = "1"\nshown = "{a}"\n'
                   'rule = "r"\npage = "docs/results/c1.md"\nsimulated = { a = "no-such-claim" }\n')
    with pytest.raises(verdicts.BadVerdict, match="no claim 'no-such-claim'"):
        verdicts.read(bad)
    bad.write_text(bad.read_text().replace('claim = "C1"', 'claim = "C9"'))
    with pytest.raises(verdicts.BadVerdict, match="valid: C1"):
        verdicts.read(bad)


def test_a_rerun_of_some_runs_is_set_beside_the_same_runs_of_the_record(
        repo_root: Path, tmp_path: Path) -> None:
    """publish.remade: a re-run holding layout sample 0 of two C2 arms re-measures
    the fork claim against the record's sample 0 (not its median over three),
    and a moved value shows as moved."""
    from publish import remade
    committed = pd.read_csv(repo_root / "results" / "c2-kpkeys.csv", keep_default_na=False,
                            dtype=str)
    chosen = committed[(committed["sample"] == "0") & (committed["workload"] == "fork-4k")
                       & (committed["features"] == "pac+pan+poe")
                       & committed["variant"].isin(["kpkeys-base", "kpkeys-pgtables"])]
    rerun = tmp_path / "rerun"
    rerun.mkdir()
    chosen.to_csv(rerun / "c2-kpkeys.csv", index=False)
    found = {r.claim.id: r for r in remade.remade(repo_root / "results", rerun)}
    fork = found["c2-fork-unbatched"]
    assert fork.remade == fork.committed and fork.committed != fork.claim.value
    assert "c2-fork-batched-layout1" not in found  # its runs are not in the re-run
    moved = chosen.copy()
    on = (moved["variant"] == "kpkeys-pgtables") & (moved["metric"] == "ns_per_iteration")
    moved.loc[on, "value"] = str(float(moved.loc[on, "value"].iloc[0]) * 1.1)
    moved.to_csv(rerun / "c2-kpkeys.csv", index=False)
    fork = {r.claim.id: r for r in remade.remade(repo_root / "results", rerun)}[
        "c2-fork-unbatched"]
    assert fork.remade > fork.committed
    assert "c2-fork-unbatched" in remade.table([fork]) and "%" in remade.table([fork])
