"""A one-node Slurm cluster on this machine, for testing the Slurm backend.

Debian's munge, slurmctld and slurmd, all on loopback, with their state, logs,
key and configuration in one temporary directory; nothing under /etc is
touched. ``LocalSlurm.start`` returns the running cluster or raises
``Unavailable`` saying why it cannot run here (the test then skips).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo")


class Unavailable(RuntimeError):
    """Slurm cannot run here (not root, packages missing, a daemon failed)."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _find(program: str) -> str:
    for directory in (*os.environ.get("PATH", "").split(":"), "/usr/sbin", "/sbin"):
        candidate = Path(directory) / program
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    raise Unavailable(f"{program} not found (make deps installs slurmctld, slurmd, munge)")


class LocalSlurm:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.conf = root / "slurm.conf"
        self.pids: list[Path] = []
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}

    @classmethod
    def start(cls, root: Path) -> LocalSlurm:
        if os.geteuid() != 0:
            raise Unavailable("slurmd needs root here")
        programs = {p: _find(p) for p in DAEMONS}
        cluster = cls(root)
        try:
            cluster._start(programs)
        except Unavailable:
            cluster.stop()
            raise
        return cluster

    def _start(self, programs: dict[str, str]) -> None:
        root = self.root
        for sub in ("munge", "state", "spool", "log"):
            (root / sub).mkdir(mode=0o700, parents=True, exist_ok=True)
        key = root / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        socket_path = root / "munge" / "socket"
        self._run([programs["munged"], "--force", f"--socket={socket_path}",
                   f"--key-file={key}", f"--log-file={root / 'log' / 'munged.log'}",
                   f"--pid-file={root / 'munge' / 'munged.pid'}",
                   f"--seed-file={root / 'munge' / 'seed'}"])
        self.pids.append(root / "munge" / "munged.pid")
        host = socket.gethostname()
        self.conf.write_text("\n".join([
            "ClusterName=artifact-test",
            f"SlurmctldHost={host}(127.0.0.1)",
            f"SlurmctldPort={_free_port()}",
            f"SlurmdPort={_free_port()}",
            "AuthType=auth/munge",
            f"AuthInfo=socket={socket_path}",
            "CredType=cred/munge",
            "SlurmUser=root",
            "SlurmdUser=root",
            f"StateSaveLocation={root / 'state'}",
            f"SlurmdSpoolDir={root / 'spool'}",
            f"SlurmctldPidFile={root / 'slurmctld.pid'}",
            f"SlurmdPidFile={root / 'slurmd.pid'}",
            f"SlurmctldLogFile={root / 'log' / 'slurmctld.log'}",
            f"SlurmdLogFile={root / 'log' / 'slurmd.log'}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "SchedulerType=sched/builtin",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "ReturnToService=2",
            "MpiDefault=none",
            f"NodeName={host} NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000 State=UNKNOWN",
            "PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        ]) + "\n")
        for daemon in ("slurmctld", "slurmd"):
            self._run([programs[daemon], "-f", str(self.conf)])
            self.pids.append(root / f"{daemon}.pid")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            state = subprocess.run([programs["sinfo"], "--noheader", "--format=%T"],
                                   capture_output=True, text=True, env=self.env).stdout
            if state.strip() == "idle":
                return
            time.sleep(0.5)
        raise Unavailable(f"the test node never became idle: {self.log_tail()}")

    def _run(self, command: list[str]) -> None:
        done = subprocess.run(command, capture_output=True, text=True, env=self.env)
        if done.returncode != 0:
            raise Unavailable(f"{Path(command[0]).name} failed to start: "
                              f"{(done.stderr or done.stdout).strip()[:300]} {self.log_tail()}")

    def log_tail(self) -> str:
        texts = []
        for log in sorted((self.root / "log").glob("*.log")):
            lines = log.read_text(errors="replace").splitlines()[-3:]
            texts.append(f"[{log.name}] " + " | ".join(lines))
        return " ".join(texts)

    def stop(self) -> None:
        for pid_file in reversed(self.pids):
            try:
                os.kill(int(pid_file.read_text().strip()), 15)
            except (OSError, ValueError):
                pass
        time.sleep(0.5)
        shutil.rmtree(self.root / "state", ignore_errors=True)
