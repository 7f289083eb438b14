"""The layout of a simulation's raw outputs, which running gem5 writes
(``simulate.py``) and turning them into rows reads (``collect.py``).

A raw output directory holds ``m5out/`` (gem5's ``stats.txt`` and
``config.json``, the guest console, and run.py's ``model.json``: what the
run's configuration placed, and ``detail.json``: when the guest asked for the
core model and how the host time split around that), gem5's ``simout.txt`` and ``simerr.txt``,
``command.txt`` and ``provenance.json``, the sidecar saying which commit of
this repository, builds and host made it.
"""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path

M5OUT = "m5out"
CONSOLE = "board.terminal"
STATS = "stats.txt"
MODEL = "model.json"
DETAIL = "detail.json"
SIMOUT = "simout.txt"
SIMERR = "simerr.txt"
COMMAND = "command.txt"
PROVENANCE = "provenance.json"
TAIL_LINES = 30
# The cache kinds a simulation's raw output is kept under: a boot's
# checkpoint, a measured run, a run that only builds the model, a trace.
CHECKPOINTS = "checkpoints"
RUNS = "runs"
MODEL_CHECKS = "model-checks"
TRACES = "traces"


class SimulationFailed(RuntimeError):
    """A gem5 run ended badly, or left outputs that say it did; the message
    carries the guest console's tail."""


def console(raw: Path) -> Path:
    return raw / M5OUT / CONSOLE


def stats(raw: Path) -> Path:
    return raw / M5OUT / STATS


def model(raw: Path) -> dict[str, object]:
    """What run.py says the run's configuration placed (empty for runs made
    before it wrote one)."""
    path = raw / M5OUT / MODEL
    return json.loads(path.read_text()) if path.is_file() else {}


def detail(raw: Path) -> dict[str, object]:
    """run.py's log of the guest's requests for detail (empty for runs made
    before it wrote one, and for 32-bit runs)."""
    path = raw / M5OUT / DETAIL
    return json.loads(path.read_text()) if path.is_file() else {}


def tail(path: Path, lines: int = TAIL_LINES) -> str:
    if not path.is_file():
        return f"({path.name} was not written)"
    return "\n".join(collections.deque(path.read_text(errors="replace").splitlines(), lines))


# How gem5 says why it stopped: panic(), fatal() and failed C++ assertions.
GEM5_ERROR = re.compile(r"\b(?:panic|fatal): |Assertion .* failed")


def gem5_errors(path: Path, lines: int = 3) -> str:
    """The first lines of gem5's standard error that say why it stopped (a
    crash's backtrace fills the tail), or nothing."""
    if not path.is_file():
        return ""
    found = [line for line in path.read_text(errors="replace").splitlines()
             if GEM5_ERROR.search(line)]
    return "\n".join(found[:lines])
