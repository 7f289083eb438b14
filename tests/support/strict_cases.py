"""Cases for test_strict_skips.py, run by it in a separate pytest (not
collected on their own: the file name does not start with test_)."""

import pytest

from support.skips import missing_build


@pytest.mark.needs_build
def test_skips_for_a_missing_build() -> None:
    missing_build("gem5", "'make gem5'")


def test_skips_for_a_missing_build_unmarked() -> None:
    missing_build("gem5", "'make gem5'")


def test_skips_for_another_reason() -> None:
    pytest.skip("variant x has no patches")


@pytest.mark.skipif(True, reason="the host has no such tool")
def test_skipped_by_a_marker() -> None:
    pass


def test_passes() -> None:
    pass
