"""The README's two commands, in order, on a fresh clone of the last commit:
``make`` (the quick set, its figures and its comparison with the committed
results), then ``make test``. ``make`` must leave every tracked file as the
commit has it, put its results and figures under ``out/``, and the suite must
pass after it.

It needs gem5 and the quick set's kernels in the build cache (otherwise one
SKIP line naming what to build: the kernels take about an hour on 2 cores, more
than a test may); the disk image and runs it lacks are built and simulated as a
user's ``make`` would.
The suite run inside the clone leaves out the tests that simulate
(``needs_gem5``, this one included): they read no file ``make`` writes and the
outer suite runs them; what a rewritten checkout would break is the rest.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from builders import gem5
from experiments import gem5_builds, spec
from support.skips import missing_build

pytestmark = pytest.mark.needs_gem5

MINUTES = 60


def _run(command: list[str], cwd: Path, timeout_minutes: int,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, text=True, capture_output=True,
                          timeout=timeout_minutes * MINUTES, env=env, check=False)


def _tail(result: subprocess.CompletedProcess[str], lines: int = 30) -> str:
    return "\n".join((result.stdout + result.stderr).splitlines()[-lines:])


def test_make_then_make_test_on_a_fresh_clone(repo_root: Path, tmp_path: Path) -> None:
    if not gem5.gem5_entry(repo_root / "gem5-patches").exists():
        missing_build("gem5", "'make gem5' to enable the README's two commands on a fresh clone")
    quick = [spec.quick_part(spec.load(name)) for name in spec.quick_set()]
    kernels = gem5_builds.missing_kernels(sorted({r.variant for e in quick for r in e.runs}))
    if kernels:
        missing_build(f"the quick set's kernel set (missing: {', '.join(kernels)})",
                      "'make kernels' (or 'make kernel VARIANT=<name>' for each)")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(repo_root), str(clone)], check=True)

    made = _run(["make", f"JOBS={os.cpu_count() or 1}"], clone, timeout_minutes=35)
    assert made.returncode == 0, f"make failed:\n{_tail(made)}"
    assert "compare: the re-run agrees with the reference" in made.stdout, _tail(made)
    changed = _run(["git", "status", "--porcelain"], clone, timeout_minutes=1).stdout
    assert changed == "", f"make changed the checkout:\n{changed}"
    # What it made is the user's, beside the record and consistent with it.
    for experiment in quick:
        assert (clone / "out" / "results" / f"{experiment.name}.csv").is_file()
    for name in ("syscall.png", "syscall.pdf", "host_times.md"):
        assert (clone / "out" / "figures" / name).is_file()
    host_times = (clone / "out" / "figures" / "host_times.md").read_text()
    assert "c4-uaccess`" in host_times and "c4-uaccess-check" not in host_times

    env = {**os.environ, "PYTEST_ADDOPTS": "-m 'not needs_gem5'"}
    tested = _run(["make", "test"], clone, timeout_minutes=25, env=env)
    assert tested.returncode == 0, f"make test failed after make:\n{_tail(tested)}"
    assert " failed" not in tested.stdout.splitlines()[-1], _tail(tested)
