"""``run --dry-run``: what a run command would build and simulate, and how long
that took when it was last done, without building or simulating anything.

Builds are looked up in the cache by key (``gem5_builds.builds_to_make``).
Whether a run is cached can be known only when its builds are (its key
includes theirs); then each run is planned and looked up. Expected host time
comes from the recorded ``host_seconds`` of the same run (the same
coordinates, sample and detail mode) in the committed results and their
fast-forward checks; a run never recorded counts at the median of its
experiment's recorded runs of that workload and mode, else at its full-detail
time, else at the median of other experiments' runs of a workload of that name
and mode (a new experiment of an existing benchmark), and is said to be
estimated.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from experiments import collect, folders, gem5_builds, runner
from experiments.spec import Experiment, RunSpec, catalog

# Where recorded host times are: the committed record and its checks.
RECORDS = (folders.COMMITTED_RESULTS, folders.COMMITTED_RESULTS / "checks" / "fast-forward")
Place = tuple[str, ...]


# A run's coordinate columns but its cache key and sample.
COLUMNS = tuple(c for c in collect.COORDINATES if c not in ("run", "sample"))
WORKLOAD = COLUMNS.index("workload")


def _place(row: dict[str, object], sample: object, detail: object) -> Place:
    return (*(str(row.get(c, "")) for c in COLUMNS), str(sample),
            str(detail or catalog.DETAIL_FULL))


def recorded_seconds(names: Sequence[str], records: Sequence[Path] = RECORDS
                     ) -> dict[Place, float]:
    """Host seconds of every recorded run of the named experiments."""
    seconds: dict[Place, float] = {}
    for record in records:
        for name in names:
            for row in collect.read_csv(record / f"{name}.csv"):
                if row.get("host_seconds"):
                    place = _place({**collect.LATER_COORDINATES, **{k: v for k, v in row.items()
                                                                    if v != ""}},
                                   row.get("sample", ""), row.get("detail") or "")
                    seconds.setdefault(place, float(row["host_seconds"]))
    return seconds


def recorded_experiments(records: Sequence[Path] = RECORDS) -> list[str]:
    """The names of every experiment with recorded runs."""
    return sorted({path.stem for record in records for path in record.glob("*.csv")})


def place_of(spec: RunSpec) -> Place:
    return _place(collect.run_coordinates(spec), spec.sample,
                  spec.detail if spec.cpu == "o3" else "")


@dataclass(frozen=True)
class Estimate:
    seconds: float
    recorded: int
    # At the median of the recorded runs of its experiment, workload and mode.
    estimated: int
    # At the same run's full-detail time: a fast-forward run never recorded.
    from_full: int
    unknown: int
    # At the median of other experiments' runs of a workload of that name and mode.
    from_others: int = 0


def estimate(runs: Sequence[RunSpec], seconds: dict[Place, float],
             others: dict[Place, float] | None = None) -> Estimate:
    """Expected host seconds of ``runs``: recorded, else their workload's median
    in the same mode, else the same run's full-detail time, else the median of
    ``others`` (any experiment's records) of that workload name and mode."""
    total, counts = 0.0, {"recorded": 0, "estimated": 0, "from_full": 0, "unknown": 0,
                          "from_others": 0}
    for spec in runs:
        place = place_of(spec)
        full = (*place[:-1], catalog.DETAIL_FULL)
        # The same experiment, workload and detail mode.
        alike = [s for p, s in seconds.items()
                 if (p[0], p[WORKLOAD], p[-1]) == (place[0], place[WORKLOAD], place[-1])]
        elsewhere = [s for p, s in (others or {}).items()
                     if (p[WORKLOAD], p[-1]) == (place[WORKLOAD], place[-1])]
        if place in seconds:
            total, kind = total + seconds[place], "recorded"
        elif alike:
            total, kind = total + statistics.median(alike), "estimated"
        elif full in seconds:
            total, kind = total + seconds[full], "from_full"
        elif elsewhere:
            total, kind = total + statistics.median(elsewhere), "from_others"
        else:
            kind = "unknown"
        counts[kind] += 1
    return Estimate(total, **counts)


def cached_runs(experiments: Sequence[Experiment], variants: Sequence[str]
                ) -> set[RunSpec] | None:
    """The runs already in the cache, or None when that cannot be known
    without building (a long build or the disk image is missing)."""
    builds = gem5_builds.cached_builds(variants, make_small=False)
    if builds is None:
        return None
    return {spec for e in experiments for spec in (*e.runs, *e.canary)
            if runner.plan(builds, spec).run.entry().usable()}


def report(experiments: Sequence[Experiment], jobs: int, gem5_variant: str = "opt") -> str:
    variants = sorted({r.variant for e in experiments for r in e.runs})
    missing = gem5_builds.builds_to_make(variants, gem5_variant=gem5_variant)
    lines = ["dry run: nothing is built or simulated",
             "builds needed: " + ("; ".join(missing) if missing else "none")]
    seconds = recorded_seconds([e.name for e in experiments])
    others: dict[Place, float] | None = None
    total = 0.0
    for e in experiments:
        cached = cached_runs([e], sorted({r.variant for r in e.runs}))
        every = (*e.runs, *e.canary)
        to_run = [r for r in every if cached is None or r not in cached]
        if others is None and any(place_of(r) not in seconds for r in to_run):
            others = recorded_seconds(recorded_experiments())
        guess = estimate(to_run, seconds, others)
        total += guess.seconds
        state = ("cached: unknown until its builds are" if cached is None
                 else f"{len(every) - len(to_run)} cached")
        basis = ", ".join(f"{n} {what}" for n, what in (
            (guess.recorded, "recorded"), (guess.estimated, "at their workload's median"),
            (guess.from_full, "at their full-detail time"),
            (guess.from_others, "at other experiments' runs of their workload"),
            (guess.unknown, "never recorded, counted as 0"))
            if n)
        detail = sorted({r.detail for r in e.runs if r.cpu == "o3"}) or ["-"]
        canary = f" + {len(e.canary)} in full detail (canary)" if e.canary else ""
        lines.append(f"{e.name} ({'/'.join(detail)}): {len(e.runs)} runs{canary}, {state}; "
                     f"{len(to_run)} to simulate"
                     + (f", about {guess.seconds / 60:.1f} host min ({basis})" if to_run else ""))
    lines.append(f"total: about {total / 60:.1f} host min of simulation, about "
                 f"{total / 60 / max(1, jobs):.1f} min of wall clock at -j {jobs}, plus the "
                 "builds above and about 40 s per boot checkpoint not cached")
    return "\n".join(lines)

