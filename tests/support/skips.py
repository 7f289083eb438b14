"""The one reason a test may skip under ``make test STRICT=1``: a build output
it needs is not in the build cache (conftest.py turns every other skip into a
failure in that mode)."""

from __future__ import annotations

from typing import NoReturn

import pytest


class MissingBuild(pytest.skip.Exception):  # type: ignore[misc,name-defined]
    """A skip because a build output is not in the cache."""

    # pytest prints a skip's reason without the exception's name only for the
    # name and module its own skip has.
    __module__ = "builtins"


MissingBuild.__name__ = MissingBuild.__qualname__ = "Skipped"


def missing_build(what: str, command: str) -> NoReturn:
    """Skips the test with one line naming what is not built and the command
    that builds it, at the test's own location."""
    raise MissingBuild(f"SKIP: {what} is not in the build cache; run {command}",
                       _use_item_location=True)


def missing_runs(keys: list[str], command: str) -> NoReturn:
    """Skips the test with one line naming the runs that are not in the run
    cache (outputs of simulations, as builds are of compilers: strict mode
    accepts the skip for the same reason) and the command that makes them."""
    raise MissingBuild(f"SKIP: runs {', '.join(keys)} are not in the run cache; run {command}",
                       _use_item_location=True)
