"""Where a gem5 command runs: here (the default) or as a Slurm job.

The runner decides what to simulate and in which order (a restore starts only
after its boot's checkpoint is in the cache), and keeps the cache; a backend
only starts one command in its output directory and reports how it ended. So a
Slurm job is exactly the command a local run would execute, with the cache on
a filesystem the nodes share, and both backends make the same raw outputs.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

log = logging.getLogger(__name__)

# util-linux's setpriv: the child gets SIGKILL when its parent dies.
ORPHAN_GUARD = ("setpriv", "--pdeathsig", "KILL") if shutil.which("setpriv") else ()
EXIT_STATUS = ".exit-status"  # written by the Slurm job, read and removed here
BACKENDS = ("local", "slurm")


class BackendFailed(RuntimeError):
    """A job that ended without an exit status of its command (cancelled by
    the scheduler, out of time or memory, node failure) or could not start."""


class Job(Protocol):
    def wait(self, timeout: float) -> int | None:
        """The command's exit status, or None if it is still queued or running."""

    def kill(self) -> None: ...

    def describe(self) -> str:
        """A few words on where the job is, for progress lines ('' if local)."""


class Backend(Protocol):
    def start(self, command: list[str], out: Path, name: str) -> Job: ...


class LocalJob:
    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process

    def wait(self, timeout: float) -> int | None:
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def describe(self) -> str:
        return ""


class LocalBackend:
    """A child process of this one, in a session of its own (so that a cancel
    kills gem5 and nothing else) and killed with this process (so a runner
    killed outright leaves no gem5 writing into a directory nobody keeps)."""

    def start(self, command: list[str], out: Path, name: str) -> Job:
        with (out / "simout.txt").open("wb") as stdout, \
                (out / "simerr.txt").open("wb") as stderr:
            return LocalJob(subprocess.Popen([*ORPHAN_GUARD, *command], stdout=stdout,
                                             stderr=stderr, cwd=out, start_new_session=True))


@dataclass(frozen=True)
class SlurmOptions:
    """sbatch options for every job; empty means the cluster's default."""

    partition: str = ""
    account: str = ""
    time: str = ""  # sbatch --time, e.g. 2:00:00
    mem: str = ""  # sbatch --mem, e.g. 4G
    poll_seconds: float = 5.0

    def sbatch_flags(self) -> list[str]:
        flags = {"--partition": self.partition, "--account": self.account,
                 "--time": self.time, "--mem": self.mem}
        return [f"{flag}={value}" for flag, value in flags.items() if value]


# Job states in which the job will not run any more (squeue --states=all).
FINISHED_STATES = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL",
                   "OUT_OF_MEMORY", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "SPECIAL_EXIT"}


def _slurm(command: list[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise BackendFailed(f"{command[0]}: {err}") from err
    if done.returncode != 0:
        raise BackendFailed(f"{shlex.join(command)} failed: "
                            f"{(done.stderr or done.stdout).strip()[:300]}")
    return done.stdout.strip()


class SlurmJob:
    def __init__(self, job_id: str, out: Path, options: SlurmOptions) -> None:
        self.job_id = job_id
        self.out = out
        self.options = options
        self.state = "PENDING"
        self.node = ""

    def _poll(self) -> None:
        line = _slurm(["squeue", "--noheader", "--states=all", f"--jobs={self.job_id}",
                       "--format=%T %N"]) if self.state not in FINISHED_STATES else ""
        if line:
            state, _, node = line.partition(" ")
            if state != self.state:
                log.debug("slurm job %s: %s", self.job_id, state)
            self.state, self.node = state, node.strip() or self.node
        elif self.state not in FINISHED_STATES:
            # Gone from the controller's memory (MinJobAge): it has ended.
            self.state = "COMPLETED" if (self.out / EXIT_STATUS).exists() else "VANISHED"

    def wait(self, timeout: float) -> int | None:
        deadline = time.monotonic() + timeout
        while True:
            self._poll()
            if self.state in FINISHED_STATES or self.state == "VANISHED":
                return self._exit_status()
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            time.sleep(min(self.options.poll_seconds, left))

    def _exit_status(self) -> int:
        status = self.out / EXIT_STATUS
        # Shared filesystems may show a file a moment after the job ended.
        for _ in range(10):
            if status.exists():
                text = status.read_text().strip()
                status.unlink()
                code = int(text)
                # sh reports a death by signal N as 128 + N; as Popen does: -N.
                return -(code - 128) if code > 128 else code
            time.sleep(1)
        raise BackendFailed(f"slurm job {self.job_id} ended {self.state} on "
                            f"{self.node or 'no node'} before its command finished "
                            "(scheduler cancel, time or memory limit, node failure)")

    def kill(self) -> None:
        try:
            _slurm(["scancel", self.job_id])
        except BackendFailed as err:
            log.warning("%s", err)

    def describe(self) -> str:
        where = f" on {self.node}" if self.node and self.state == "RUNNING" else ""
        return f"slurm job {self.job_id} {self.state.lower()}{where}"


class SlurmBackend:
    """Each command as one sbatch job, 1 CPU, its output directory on the
    shared filesystem as working directory; the command's exit status is
    written beside its outputs, so how it ended needs no accounting database."""

    def __init__(self, options: SlurmOptions) -> None:
        if not shutil.which("sbatch") or not shutil.which("squeue"):
            raise BackendFailed("--backend slurm: sbatch/squeue not found (install "
                                "slurm-client and point SLURM_CONF at the cluster)")
        self.options = options

    def start(self, command: list[str], out: Path, name: str) -> Job:
        script = (f"{shlex.join(command)} >simout.txt 2>simerr.txt; "
                  f"echo $? >{EXIT_STATUS}")
        job_id = _slurm(["sbatch", "--parsable", f"--job-name={name}", f"--chdir={out}",
                         "--ntasks=1", "--cpus-per-task=1", "--output=/dev/null",
                         *self.options.sbatch_flags(), f"--wrap={script}"])
        job_id = job_id.split(";")[0]  # "id;cluster" on federated clusters
        if not job_id.isdigit():
            raise BackendFailed(f"sbatch gave no job id: {job_id!r}")
        return SlurmJob(job_id, out, self.options)


def make_backend(name: str, options: SlurmOptions | None = None) -> Backend:
    if name == "local":
        return LocalBackend()
    if name == "slurm":
        return SlurmBackend(options or SlurmOptions())
    raise BackendFailed(f"unknown backend '{name}' (valid: {', '.join(BACKENDS)})")
