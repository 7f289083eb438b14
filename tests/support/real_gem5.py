"""Driving the real gem5 from the tests that need it: one simulation of run.py
outside the cache, and one experiment definition through the runner.

The tests that import this skip (``cached_builds_or_skip``) unless gem5 and
the kernel they name are in the build cache.
"""

from __future__ import annotations

import csv
import tomllib
from pathlib import Path

from experiments import gem5_commands, raw_outputs, runner, simulate, spec
from experiments.gem5_builds import Builds


def run_gem5(builds: Builds, variant: str, out: Path, mode: str, *args: gem5_commands.Arg,
             max_ticks: int, label: str = "test",
             gem5_options: tuple[str, ...] = ()) -> str:
    """Run gem5 once into ``out`` (not cached) on ``variant``'s kernel; the
    guest console."""
    simulation = gem5_commands.Simulation(
        raw_outputs.RUNS, (mode, *gem5_commands._files(builds, variant), *args), label,
        variant, max_ticks, builds, gem5_options=gem5_options)
    simulate.Gem5Runner(simulate.RepoState("test", False)).run(simulation, out)
    return raw_outputs.console(out).read_text(errors="replace")


def run_definition(text: str, builds: Builds, folder: Path, results: str = "results") -> Path:
    """Write the experiment definition ``text`` into ``folder``, run it
    through the runner (cached like any run) and return its CSV."""
    name = str(tomllib.loads(text)["name"])
    (folder / f"{name}.toml").write_text(text)
    experiment = spec.load(name, folder)
    gem5 = simulate.Gem5Runner(simulate.RepoState.read())
    (target,) = runner.run_experiments([experiment], builds, gem5, 1, folder / results)
    return target


def rows_by_metric(target: Path) -> dict[str, dict[str, str]]:
    """A one-run CSV's rows, keyed by metric."""
    with target.open() as handle:
        return {r["metric"]: r for r in csv.DictReader(handle)}
