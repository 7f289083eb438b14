"""Selftest verdicts come from the guest's framing lines and kselftest output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments import collect, raw_outputs, selftests

CONSOLE = """\
init: up
selftest-begin arm64/mte/check_prctl
TAP version 13
1..3
ok 1 check_basic_read
ok 2 NONE
not ok 3 SYNC
# Totals: pass:2 fail:1 xfail:0 xpass:0 skip:0 error:0
selftest-end arm64/mte/check_prctl status=1
selftest-begin arm64/mte/check_hugetlb_options
ok 1 # SKIP hugetlb not available
selftest-end arm64/mte/check_hugetlb_options status=4
selftest-begin mm/protection_keys
done (all tests OK)
selftest-end mm/protection_keys status=0
"""


def test_verdicts_follow_kselftest_exit_codes() -> None:
    verdicts = {v.test: v for v in selftests.parse(CONSOLE)}
    assert verdicts["arm64/mte/check_prctl"].verdict == "fail"
    assert (verdicts["arm64/mte/check_prctl"].passed,
            verdicts["arm64/mte/check_prctl"].failed) == (2, 1)
    assert verdicts["arm64/mte/check_hugetlb_options"].verdict == "skip"
    assert verdicts["arm64/mte/check_hugetlb_options"].skipped == 1
    assert verdicts["mm/protection_keys"].verdict == "pass"


def test_a_test_that_never_ends_is_an_error() -> None:
    with pytest.raises(selftests.MissingVerdict, match="mm/protection_keys"):
        selftests.parse("selftest-begin mm/protection_keys\nKernel panic\n")


def test_exit_zero_with_failed_subtests_is_a_failure() -> None:
    console = "selftest-begin t\nnot ok 1 x\nselftest-end t status=0\n"
    assert selftests.parse(console)[0].verdict == "fail"


def test_kunit_counts_cases_not_the_suite() -> None:
    console = ("selftest-begin kunit/kasan\nKTAP version 1\n1..1\n    # Subtest: kasan\n"
               "    1..3\n    ok 1 kmalloc_oob_right\n    not ok 2 kmalloc_uaf\n"
               "    ok 3 kasan_bitops_generic # SKIP Test requires CONFIG_KASAN_GENERIC=y\n"
               "not ok 1 kasan\nselftest-end kunit/kasan status=1\n")
    (verdict,) = selftests.parse(console)
    assert (verdict.verdict, verdict.passed, verdict.failed, verdict.skipped) == ("fail", 1, 1, 1)


def test_failed_cases_are_named() -> None:
    verdicts = {v.test: v for v in selftests.parse(CONSOLE)}
    assert verdicts["arm64/mte/check_prctl"].failed_cases == ("SYNC",)
    assert verdicts["mm/protection_keys"].failed_cases == ()
    kunit = ("selftest-begin kunit/kasan\n    ok 1 kmalloc_oob_right\n"
             "    not ok 2 kmalloc_oob_left\n    ok 3 kasan_global_oob_left # SKIP clang\n"
             "not ok 1 kasan\nselftest-end kunit/kasan status=1\n")
    (verdict,) = selftests.parse(kunit)
    assert verdict.failed_cases == ("kmalloc_oob_left",)


def test_a_fast_forward_selftest_splits_its_host_time_with_the_test_as_its_region(
        tmp_path: Path) -> None:
    # A selftest has no region dump (gem5's dump at exit covers the whole
    # run): the test program, all of the detailed part, is the region.
    m5out = tmp_path / raw_outputs.M5OUT
    m5out.mkdir()
    (m5out / raw_outputs.DETAIL).write_text(json.dumps({
        "detail": "fast-forward",
        "host_seconds": {"setup": 19.6, "detailed": 78.1, "teardown": 14.8}}))
    (m5out / raw_outputs.STATS).write_text(
        "---------- Begin Simulation Statistics ----------\nhostSeconds 112.5 # s\n"
        "---------- End Simulation Statistics   ----------\n")
    assert collect.host_split(tmp_path, region_dumped=False) == (
        "setup=19.6;warmup=0.0;region=78.1;teardown=14.8")
    # A full-detail run logs no requests: no split.
    (m5out / raw_outputs.DETAIL).unlink()
    assert collect.host_split(tmp_path, region_dumped=False) == ""
