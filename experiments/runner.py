"""Run experiments: builds, boot checkpoints, simulations, then tidy CSV.

``simulate`` (stage one) makes each run's raw outputs, cached by what gem5
runs; ``collect`` (stage two) turns them into rows every time. This module
orders the two: every boot checkpoint first (runs share them), then the runs,
up to ``jobs`` gem5 processes at once, then the CSV of each experiment.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from builders import cache
from experiments import collect, folders, gem5_commands
from experiments.gem5_builds import Builds
from experiments.simulate import Cancelled, Gem5Runner
from experiments.spec import Experiment, RunSpec

log = logging.getLogger(__name__)

T = TypeVar("T")
U = TypeVar("U")


class ExperimentFailed(RuntimeError):
    """One or more runs failed; the message lists every failure."""


@dataclass(frozen=True)
class Planned:
    """A run with the simulations it needs."""

    spec: RunSpec
    boot: gem5_commands.Simulation | None  # None: from reset, no checkpoint
    run: gem5_commands.Simulation


def plan(builds: Builds, spec: RunSpec) -> Planned:
    if spec.workload.from_reset:
        return Planned(spec, None, gem5_commands.run_simulation(builds, spec, None))
    boot = gem5_commands.boot_simulation(builds, spec)
    return Planned(spec, boot, gem5_commands.run_simulation(builds, spec, boot.entry()))


def _in_parallel(runner: Gem5Runner, jobs: int, items: Sequence[T], work: Callable[[T], U],
                 describe: Callable[[T], str], on_done: Callable[[int, T, U], None],
                 failures: list[str]) -> None:
    """``work`` on every item, ``jobs`` at once. Every failure is collected
    (whatever its kind); Ctrl-C cancels what is queued, kills what runs and
    waits until their partial outputs are gone."""
    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        futures: dict[Future[U], T] = {pool.submit(work, item): item for item in items}
        for done, future in enumerate(as_completed(futures), start=1):
            item = futures[future]
            try:
                on_done(done, item, future.result())
            except Cancelled:
                raise
            except Exception as err:  # noqa: BLE001 - every kind goes in the summary
                failures.append(f"{describe(item)}: {type(err).__name__}: {err}")
                log.error("[%d/%d] %s: FAILED (%s)", done, len(items), describe(item),
                          type(err).__name__)
    except (KeyboardInterrupt, Cancelled):
        log.error("stopping: cancelling queued runs and killing running gem5 processes")
        runner.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        raise Cancelled("stopped by the user; no partial output was kept") from None
    pool.shutdown(wait=True)


def run_experiments(experiments: Sequence[Experiment], builds: Builds, runner: Gem5Runner,
                    jobs: int, results_dir: Path, cpu_filter: str | None = None) -> list[Path]:
    """Simulate every run of ``experiments`` and write ``results_dir/<name>.csv``
    for each; with ``cpu_filter`` only that CPU type's rows are replaced."""
    planned = [plan(builds, spec) for e in experiments for spec in (*e.runs, *e.canary)]
    pending = [p for p in planned if not p.run.entry().usable()]
    log.info("%d runs: %d cached, %d to simulate (up to %d at a time)", len(planned),
             len(planned) - len(pending), len(pending), jobs)
    failures: list[str] = []
    checks = list({c.entry().key: c for c in (
        gem5_commands.run_simulation(builds, p.spec, None, check=True)
        for p in pending if p.spec.cpu == "o3")}.values())
    if checks:
        log.info("checking %d distinct models in gem5 (no simulation)", len(checks))
        _in_parallel(runner, jobs, checks, runner.simulate, lambda s: s.label,
                     lambda *_: None, failures)
        if failures:
            raise ExperimentFailed("\n\n".join(failures))
    boots = list({p.boot.entry().key: p.boot for p in pending if p.boot is not None}.values())
    missing_boots = [b for b in boots if not b.entry().usable()]
    if missing_boots:
        log.info("%d boot checkpoints to take on the atomic CPU", len(missing_boots))

        def booted(done: int, boot: gem5_commands.Simulation, entry: cache.Entry) -> None:
            log.info("[boot %d/%d] %s: checkpoint %s", done, len(missing_boots), boot.label,
                     entry.key)

        _in_parallel(runner, jobs, missing_boots, runner.simulate, lambda s: s.label, booted,
                     failures)
        if failures:
            raise ExperimentFailed("\n\n".join(failures))
    entries: dict[RunSpec, cache.Entry] = {}

    def start(item: tuple[int, Planned]) -> cache.Entry:
        number, p = item
        cached = p.run.entry().exists()
        log.info("[%d/%d] %s %s", number, len(planned), "cached:" if cached else "start:",
                 p.spec.label)
        return runner.simulate(p.run)

    def finished(done: int, item: tuple[int, Planned], entry: cache.Entry) -> None:
        entries[item[1].spec] = entry

    _in_parallel(runner, jobs, list(enumerate(planned, start=1)), start,
                 lambda item: item[1].spec.label, finished, failures)

    def rows_of(specs: Sequence[RunSpec]) -> list[dict[str, object]]:
        # A run whose outputs cannot be read goes in ``failures``, as a failed run does.
        rows: list[dict[str, object]] = []
        for spec in specs:
            if spec not in entries:
                continue
            try:
                rows += collect.rows_for(spec, entries[spec])
            except Exception as err:  # noqa: BLE001 - every kind goes in the summary
                failures.append(f"{spec.label}: {type(err).__name__}: {err} "
                                f"(raw outputs: {entries[spec].path})")
        return rows

    written = []
    for experiment in experiments:
        rows, canary_rows = rows_of(experiment.runs), rows_of(experiment.canary)
        if failures:
            continue
        target = results_dir / f"{experiment.name}.csv"
        partial = bool(cpu_filter or experiment.partial)
        if partial:
            # Rows of runs this call did not make stay as they were.
            rows = collect.merge_into(target, rows, cpu_filter, experiment.partial)
        else:
            collect.write_csv(rows, target)
        log.info("%s: wrote %s (%d rows)", experiment.name, target, len(rows))
        written.append(target)
        canary = folders.canary_csv(results_dir, experiment.name)
        if canary_rows:
            if partial:
                canary_rows = collect.merge_into(canary, canary_rows, cpu_filter,
                                                 experiment.partial)
            else:
                collect.write_csv(canary_rows, canary)
            log.info("%s: wrote its full-detail canary %s (%d rows)", experiment.name, canary,
                     len(canary_rows))
            written.append(canary)
        elif not (cpu_filter or experiment.partial) and canary.is_file():
            # An older canary beside rows that no longer have twins would be re-checked.
            canary.unlink()
            log.info("%s: removed %s (this run makes no canary)", experiment.name, canary)
    if failures:
        raise ExperimentFailed(f"{len(failures)} failed:\n\n" + "\n\n".join(failures))
    return written
