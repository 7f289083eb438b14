"""Shared fixtures: the repository root and handles on the build cache."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from builders import cache, gem5  # noqa: E402
from experiments import gem5_builds, spec  # noqa: E402


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


@pytest.fixture(scope="session")
def cached_builds_or_skip() -> Callable[..., gem5_builds.Builds]:
    """Finds gem5 and the named kernel variants in the build cache; a test whose
    builds are missing is skipped with one line naming the commands that make them."""
    def find(*variants: str) -> gem5_builds.Builds:
        found = gem5_builds.cached_builds(list(variants))
        if found is None:
            commands = ["'make gem5'", *(f"'make kernel VARIANT={v}'" for v in variants)]
            if any(spec.variant_is_arm32(v, v) for v in variants):
                commands.append("'python -m builders gem5-arm32'")
            pytest.skip(f"SKIP: gem5 or kernel {', '.join(variants)} is not in the build cache; "
                        f"run {', '.join(commands)} to enable this test")
        return found
    return find


@pytest.fixture
def local_slurm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A one-node Slurm cluster on loopback for the test (SLURM_CONF set); the
    test is skipped with one line saying why where it cannot start."""
    from support.local_slurm import LocalSlurm, Unavailable

    try:
        cluster = LocalSlurm.start(tmp_path / "slurm")
    except Unavailable as err:
        pytest.skip(f"SKIP: no local Slurm cluster: {err}")
    monkeypatch.setenv("SLURM_CONF", str(cluster.conf))
    try:
        yield cluster.conf
    finally:
        cluster.stop()

