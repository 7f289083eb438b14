"""Switching between the fast CPU and the core model at the guest's request.

A benchmark asks for detail with ``m5 workbegin`` (``bench_detail_begin()``,
after its set-up, before its detailed warm-up) and gives it up with ``m5
workend`` (``bench_region_end()``, after the region's statistics dump). Work
items are used rather than gem5's ``switchcpu`` operation because they are two
distinct requests: a repeated request is harmless, where a toggle would
invert the meaning of every later one.

A ``full`` run leaves both requests without effect: it is on the core model
from the restore. A ``fast-forward`` run switches. Both log the requests (tick,
host time), which split the run's host time into set-up, detailed part and
teardown (``detail.json`` in gem5's output directory).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import m5

from hardening.catalog import DETAIL_FAST_FORWARD
from hardening.processor import FastForwardProcessor


@dataclass
class Request:
    """One of the guest's requests: for detail (``begin``) or to end it."""

    kind: str
    tick: int
    host_seconds: float
    switched: bool


@dataclass
class DetailSwitcher:
    """The WORKBEGIN and WORKEND handlers of one run, and its log of requests
    (a full run logs them too: they split its host time the same way)."""

    detail: str
    processor: FastForwardProcessor | None
    requests: list[Request] = field(default_factory=list)
    _start: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        if (self.detail == DETAIL_FAST_FORWARD) != (self.processor is not None):
            raise ValueError("a fast-forward run needs a FastForwardProcessor, a full run none")

    def _request(self, kind: str, detailed: bool) -> None:
        switched = self.processor is not None and self.processor.is_detailed() != detailed
        if switched and detailed:
            self.processor.to_detailed()
        elif switched:
            self.processor.to_fast()
        self.requests.append(Request(kind, m5.curTick(), time.monotonic() - self._start,
                                     switched))
        if switched:
            print(f"detail: switched to the {'core model' if detailed else 'fast CPU'} at "
                  f"tick {m5.curTick()}", flush=True)

    def on_work_begin(self) -> Iterator[bool]:
        while True:
            self._request("begin", True)
            yield False

    def on_work_end(self) -> Iterator[bool]:
        while True:
            self._request("end", False)
            yield False

    def in_detail(self) -> bool:
        """Whether the guest's last request was for detail (a benchmark's
        warm-up and regions, whether or not this run switches for them)."""
        return bool(self.requests) and self.requests[-1].kind == "begin"

    @property
    def never_switched(self) -> bool:
        """A fast-forward run whose guest never asked for detail: its timing
        is the atomic CPU's and means nothing."""
        return self.detail == DETAIL_FAST_FORWARD and not any(r.switched for r in self.requests)

    def host_split(self, end_seconds: float) -> dict[str, float]:
        """Host seconds before the first request for detail (set-up), from it
        to the last end of detail (warm-up and regions: each region's own
        share is its dump's hostSeconds) and after that (teardown). Without
        requests, all of it is set-up."""
        begins = [r.host_seconds for r in self.requests if r.kind == "begin"]
        ends = [r.host_seconds for r in self.requests if r.kind == "end"]
        if not begins:
            return {"setup": end_seconds, "detailed": 0.0, "teardown": 0.0}
        first = begins[0]
        last = max(ends[-1] if ends else end_seconds, first)
        return {"setup": first, "detailed": last - first, "teardown": end_seconds - last}

    def write(self, path: Path) -> None:
        end = time.monotonic() - self._start
        path.write_text(json.dumps({
            "detail": self.detail,
            "requests": [vars(r) for r in self.requests],
            "host_seconds": self.host_split(end),
        }, indent=2) + "\n")

