"""make test STRICT=1: only a missing build output may skip a test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CASES = Path(__file__).resolve().parent / "support" / "strict_cases.py"


def _run(*options: str) -> str:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
                           *options, str(CASES)], capture_output=True, text=True,
                          cwd=CASES.parent.parent.parent).stdout


def test_strict_fails_every_skip_but_a_missing_build() -> None:
    out = _run("--strict-skips")
    # A skip in set-up (a marker's, a fixture's) fails as an error of that phase.
    assert "2 failed, 1 passed, 1 skipped, 1 error" in out, out
    assert "SKIPPED [1] tests/support/strict_cases.py:9: SKIP: gem5 is not in the build cache" \
        in out, out
    for case in ("test_skips_for_a_missing_build_unmarked", "test_skips_for_another_reason"):
        assert f"FAILED tests/support/strict_cases.py::{case}" in out, out
    assert "ERROR tests/support/strict_cases.py::test_skipped_by_a_marker" in out, out


def test_without_strict_every_skip_is_a_skip() -> None:
    assert "1 passed, 4 skipped" in _run(), _run()
