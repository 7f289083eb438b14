"""Running gem5: a simulation's raw outputs, made once and kept in the cache
under its key (``gem5_commands.py``), with progress while gem5 runs and the
provenance of what made them (``raw_outputs.py`` names the files)."""

from __future__ import annotations

import json
import logging
import platform
import re
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from builders import cache, gem5
from builders.process import run
from experiments import backends, raw_outputs
from experiments.gem5_commands import Simulation
from experiments.raw_outputs import SimulationFailed, tail
from experiments.spec import REPO_ROOT
from hardening import exit_codes

log = logging.getLogger(__name__)

PROGRESS_SECONDS = 60.0
# run.py prints one of these now and then (hardening/progress.py).
PROGRESS_LINE = re.compile(r"^progress: tick=(\d+) start=(\d+) limit=(\d+) insts=(\d+)")
TICKS_PER_SECOND = 10**12
GEM5_EXIT_MEANING = {
    **exit_codes.MEANING,
    -signal.SIGKILL: "killed",
    -signal.SIGTERM: "stopped",
}


class Cancelled(RuntimeError):
    """The user stopped the experiment (Ctrl-C); nothing partial is kept."""


@dataclass(frozen=True)
class RepoState:
    """This repository's commit and whether its work tree differs from it."""

    commit: str
    dirty: bool

    @classmethod
    def read(cls, root: Path = REPO_ROOT) -> RepoState:
        try:
            commit = run(["git", "-C", str(root), "rev-parse", "HEAD"]).strip()
            # Untracked files count: a new kernel variant or config file is input.
            dirty = bool(run(["git", "-C", str(root), "status", "--porcelain"]).strip())
        except Exception:  # noqa: BLE001 - a copy without git history
            return cls(commit="unknown", dirty=True)
        return cls(commit=commit, dirty=dirty)


def provenance_sidecar(simulation: Simulation, repo: RepoState, seconds: float,
                       started: float) -> dict[str, object]:
    builds = simulation.builds
    tools, guest_disk = builds.guest(simulation.variant)
    return {
        "repo_commit": repo.commit,
        "repo_dirty": repo.dirty,
        "gem5_version": gem5.GEM5_VERSION,
        "gem5_build": builds.gem5.key,
        "gem5_tools_build": tools.key,
        "kernel_variant": simulation.variant,
        "kernel_build": builds.kernels[simulation.variant].key,
        "disk_build": guest_disk.key,
        "checkpoint": simulation.checkpoint.key if simulation.checkpoint else "",
        "configs_hash": builds.configs_digest[:16],
        "host": platform.node(),
        "host_platform": platform.platform(),
        "host_python": platform.python_version(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "host_seconds": round(seconds, 1),
    }


@dataclass(frozen=True)
class Progress:
    """What a running gem5 last reported."""

    tick: int
    start: int
    limit: int
    instructions: int

    @classmethod
    def last_in(cls, simout: Path) -> Progress | None:
        if not simout.is_file():
            return None
        found = None
        for line in simout.read_text(errors="replace").splitlines():
            if match := PROGRESS_LINE.match(line):
                found = match
        return cls(*map(int, found.groups())) if found else None

    def describe(self, host_seconds: float) -> str:
        simulated = self.tick - self.start
        share = simulated / self.limit if self.limit else 0.0
        rate = self.instructions / host_seconds if host_seconds else 0.0
        left = ""
        if 0 < share < 1:
            left = f", at most {host_seconds * (1 - share) / share / 60:.0f} min to the limit"
        return (f"{simulated / TICKS_PER_SECOND * 1e3:.2f} ms simulated "
                f"({share:.1%} of the tick limit), {self.instructions / 1e6:.1f} M instructions, "
                f"{rate / 1e3:.0f} k instructions/host s{left}")


class RunObserver(Protocol):
    """Work done beside one gem5 run on this host, e.g. reading its debug
    output as gem5 writes it."""

    def started(self, out: Path) -> None:
        """Before gem5 starts (``out / 'm5out'`` exists)."""

    def stopped(self, out: Path) -> None:
        """After gem5 has exited, failed to start or been killed."""

    def finished(self, out: Path) -> None:
        """After gem5 succeeded, before the run's provenance is written;
        raises ``SimulationFailed`` if what it made is unusable."""


class Gem5Runner:
    """Runs simulations, any number of threads at once, and can stop them all.

    ``cancel()`` (from Ctrl-C) kills every running gem5 and makes every later
    ``simulate`` raise ``Cancelled``; the staging directories of the killed
    runs are removed, so nothing partial is left in the cache.
    """

    def __init__(self, repo: RepoState, progress_seconds: float = PROGRESS_SECONDS,
                 report: Callable[[str], None] = log.info,
                 backend: backends.Backend | None = None) -> None:
        self.repo = repo
        self.progress_seconds = progress_seconds
        self.report = report
        self.backend = backend or backends.LocalBackend()
        self._cancelled = threading.Event()
        self._lock = threading.Lock()
        self._running: dict[int, backends.Job] = {}

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def cancel(self) -> None:
        self._cancelled.set()
        with self._lock:
            jobs = list(self._running.values())
        for job in jobs:
            job.kill()

    def simulate(self, simulation: Simulation,
                 observer: RunObserver | None = None) -> cache.Entry:
        """The raw outputs of ``simulation``: cached, or made now (with
        ``observer`` beside gem5, which then must run on this host)."""
        if observer is not None and not isinstance(self.backend, backends.LocalBackend):
            raise SimulationFailed(f"{simulation.label}: this run reads gem5's output as it "
                                   "is written, so it runs on this host only")
        entry = simulation.entry()
        if entry.usable():
            return entry
        try:
            with entry.lock(cancelled=lambda: self.cancelled):
                if entry.exists():
                    return entry
                if self.cancelled:
                    raise Cancelled(simulation.label)
                with entry.staging(simulation.key_inputs()) as out:
                    started = time.time()
                    seconds = self.run(simulation, out, observer)
                    (out / raw_outputs.PROVENANCE).write_text(json.dumps(
                        provenance_sidecar(simulation, self.repo, seconds, started),
                        indent=2) + "\n")
        except cache.Interrupted as err:
            raise Cancelled(simulation.label) from err
        return entry

    def run(self, simulation: Simulation, out: Path,
            observer: RunObserver | None = None) -> float:
        """Run gem5 once into ``out``; return host seconds, or raise with the
        console's tail."""
        m5out = out / raw_outputs.M5OUT
        m5out.mkdir(parents=True, exist_ok=True)
        command = simulation.command(out)
        (out / raw_outputs.COMMAND).write_text(" ".join(command) + "\n")
        started = time.monotonic()
        if observer is not None:
            observer.started(out)
        try:
            code = self._start_and_wait(simulation, command, out, started)
        finally:
            if observer is not None:
                observer.stopped(out)
        seconds = time.monotonic() - started
        if self.cancelled:
            raise Cancelled(simulation.label)
        if code != 0:
            meaning = GEM5_EXIT_MEANING.get(code, "gem5 itself failed")
            errors = raw_outputs.gem5_errors(out / raw_outputs.SIMERR)
            raise SimulationFailed(
                f"{simulation.label}: gem5 exited with status {code} ({meaning}) after "
                f"{seconds:.0f} s.\n"
                + (f"--- gem5's error ---\n{errors}\n" if errors else "")
                + f"--- gem5 stderr (tail) ---\n{tail(out / raw_outputs.SIMERR, 15)}\n"
                f"--- guest console (tail) ---\n{tail(raw_outputs.console(out))}")
        if observer is not None:
            observer.finished(out)
        return seconds

    def _start_and_wait(self, simulation: Simulation, command: list[str], out: Path,
                        started: float) -> int:
        try:
            job = self.backend.start(command, out, job_name(simulation.label))
        except backends.BackendFailed as err:
            raise SimulationFailed(f"{simulation.label}: {err}") from err
        with self._lock:
            self._running[id(job)] = job
        try:
            if self.cancelled:
                self.cancel()
            return self._wait(job, simulation, out, started)
        except backends.BackendFailed as err:
            raise SimulationFailed(
                f"{simulation.label}: {err}.\n"
                f"--- gem5 stderr (tail) ---\n{tail(out / raw_outputs.SIMERR, 15)}\n"
                f"--- guest console (tail) ---\n{tail(raw_outputs.console(out))}") from err
        finally:
            with self._lock:
                self._running.pop(id(job), None)

    def _wait(self, job: backends.Job, simulation: Simulation, out: Path,
              started: float) -> int:
        while True:
            code = job.wait(self.progress_seconds)
            if code is not None:
                return code
            elapsed = time.monotonic() - started
            progress = Progress.last_in(out / raw_outputs.SIMOUT)
            where = (progress.describe(elapsed) if progress else
                     "guest console: " + tail(raw_outputs.console(out), 1)[:100])
            queue = job.describe()
            self.report(f"{simulation.label}: {elapsed / 60:.1f} host min"
                        + (f" ({queue})" if queue else "") + f", {where}")


def job_name(label: str) -> str:
    """A scheduler-friendly name for a run: letters, digits, - _ . only."""
    return "ahg-" + re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip("-")[:100]


def interpreter_version() -> str:
    return sys.version.split()[0]
