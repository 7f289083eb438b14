"""Verdicts of kernel selftests from a guest console.

The guest's ``run-selftest`` frames each test's output with
``selftest-begin <path>`` and ``selftest-end <path> status=<exit status>``.
kselftest's exit codes decide the verdict (0 pass, 4 skip, anything else
fail); the TAP lines in between give the subtest counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

BEGIN = re.compile(r"^selftest-begin (\S+)\s*$")
END = re.compile(r"^selftest-end (\S+) status=(\d+)\s*$")
# KUnit indents a suite's test cases below it.
TAP = re.compile(r"^\s*(?:# )?(not ok|ok) \d+\b(.*)$")
TOTALS = re.compile(r"^# Totals: pass:(\d+) fail:(\d+) xfail:(\d+) xpass:(\d+) skip:(\d+) "
                    r"error:(\d+)")
KSFT_PASS = 0
KSFT_SKIP = 4


@dataclass(frozen=True)
class Verdict:
    test: str
    status: int
    passed: int
    failed: int
    skipped: int
    # The failing subtests' names (KUnit: the cases), as TAP gives them.
    failed_cases: tuple[str, ...] = ()

    def metrics(self) -> list[tuple[str, object, str]]:
        """(name, value, unit) of every result a verdict gives, gem5's or QEMU's."""
        return [("verdict", self.verdict, ""), ("exit_status", self.status, ""),
                ("subtests_passed", self.passed, "count"),
                ("subtests_failed", self.failed, "count"),
                ("subtests_skipped", self.skipped, "count"),
                ("failed_cases", ";".join(self.failed_cases), "")]

    @property
    def verdict(self) -> str:
        if self.status == KSFT_PASS:
            return "pass" if self.failed == 0 else "fail"
        return "skip" if self.status == KSFT_SKIP else "fail"


class MissingVerdict(RuntimeError):
    """The console lacks a test's end line: the guest died inside the test."""


def _counts(lines: list[str]) -> tuple[int, int, int]:
    for line in reversed(lines):
        if match := TOTALS.match(line):
            passed, failed, xfail, xpass, skipped, error = map(int, match.groups())
            return passed + xfail, failed + xpass + error, skipped
    passed = failed = skipped = 0
    # KUnit closes its indented test cases with one unindented line for the
    # whole suite; count the cases, not the suite.
    if any(line[:1].isspace() and TAP.match(line) for line in lines):
        lines = [line for line in lines if line[:1].isspace()]
    for line in lines:
        if match := TAP.match(line):
            if "# SKIP" in match.group(2).upper():
                skipped += 1
            elif match.group(1) == "ok":
                passed += 1
            else:
                failed += 1
    return passed, failed, skipped


def _failed_names(lines: list[str]) -> tuple[str, ...]:
    if any(line[:1].isspace() and TAP.match(line) for line in lines):
        lines = [line for line in lines if line[:1].isspace()]
    return tuple(match.group(2).split("#", 1)[0].strip()
                 for line in lines
                 if (match := TAP.match(line)) and match.group(1) == "not ok")


def parse(console: str) -> list[Verdict]:
    """Every framed test in the console, in order."""
    verdicts: list[Verdict] = []
    current: str | None = None
    body: list[str] = []
    for raw in console.splitlines():
        line = raw.rstrip("\r")
        if match := BEGIN.match(line):
            current, body = match.group(1), []
        elif (match := END.match(line)) and current == match.group(1):
            verdicts.append(Verdict(current, int(match.group(2)), *_counts(body),
                                    _failed_names(body)))
            current = None
        elif current is not None:
            body.append(line)
    if current is not None:
        raise MissingVerdict(f"selftest {current} started but never ended")
    return verdicts
