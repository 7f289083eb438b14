"""Shared fixtures: the repository root and handles on the build cache."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from builders import cache, gem5, kernel  # noqa: E402
from experiments import gem5_builds, spec  # noqa: E402
from support.skips import MissingBuild, missing_build  # noqa: E402

STRICT_OPTION = "--strict-skips"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(STRICT_OPTION, action="store_true",
                     help="fail every skip except a missing build output's (make test STRICT=1)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if not (report.skipped and item.config.getoption(STRICT_OPTION)):
        return
    missing = call.excinfo is not None and call.excinfo.errisinstance(MissingBuild)
    marked = any(item.iter_markers("needs_gem5")) or any(item.iter_markers("needs_build"))
    if not missing or not marked:
        report.outcome = "failed"
        why = ("skipped for a reason other than a missing build output" if not missing else
               "skipped for a missing build output but not marked needs_gem5 or needs_build")
        report.longrepr = f"{STRICT_OPTION}: {why}: {call.excinfo.value if call.excinfo else report}"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def gem5_tools() -> cache.Entry:
    """The guest tools (m5, libm5) for the current patch series, if built."""
    entry = gem5.tools_entry(REPO_ROOT / "gem5-patches")
    if not entry.exists():
        missing_build("the gem5 guest tools", "'make gem5'")
    return entry


@pytest.fixture(scope="session")
def linux_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The unpacked Linux source the kernels are built from: the build cache's
    copy of exactly this source when it has one (tests only read it), otherwise
    one unpacked for this session outside the cache. Either way a test finds it
    whatever ran before, and no test writes into the user's cache."""
    root = cache.cache_root()
    try:
        source = kernel.locate_source(root)
    except RuntimeError as err:
        pytest.skip(f"SKIP: no Linux source: {err}")
    return kernel.readable_tree(root, source, tmp_path_factory.mktemp("linux"))


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
            missing_build(f"gem5 or kernel {', '.join(variants)}", ", ".join(commands))
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

