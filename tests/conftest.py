"""Shared fixtures: the repository root and handles on the build cache."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from builders import cache, gem5  # noqa: E402


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def gem5_tools() -> cache.Entry:
    """The guest tools (m5, libm5) for the current patch series, if built."""
    entry = gem5.tools_entry(REPO_ROOT / "gem5-patches")
    if not entry.exists():
        pytest.skip("SKIP: gem5 guest tools are not in the build cache; run 'make gem5' first")
    return entry
