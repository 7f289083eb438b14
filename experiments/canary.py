"""Re-check a fast-forward experiment's canary: the runs it also makes in full
detail (``[canary]``, written to ``<results>/canary/<name>.csv``).

Two checks per experiment that has one in the re-run:

- the canary against the reference's full-detail rows of the same runs (its
  own canary file, or its main file where that was made in full detail), as
  ``compare`` judges any re-run: identical on the same builds, else within
  the tolerances;
- the re-run's fast-forward rows against their canary twins, as ``paired``
  judges them: iterations and verdicts must not move, nor instructions per
  iteration by more than 0.1%.

A canary run missing from either side, or a reference whose rows were not
made in full detail, fails: a check that compared nothing must not pass.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from experiments import collect, compare, paired
from experiments.folders import canary_csv
from experiments.spec import catalog

TIME_METRIC = "ns_per_iteration"


def _runs(rows: Iterable[dict[str, str]], detail: str | None = None) -> set[tuple[str, ...]]:
    """The runs (join key less the metric) the rows hold, of one detail if given."""
    return {compare.run_of(compare.key_of(r)) for r in rows
            if detail is None or compare.detail_of(r) == detail}


def _check_one(reference: Path, new: Path, name: str, tolerances: compare.Tolerances
               ) -> tuple[list[str], bool]:
    canary_rows = collect.read_csv(canary_csv(new, name))
    canary_runs = _runs(canary_rows)
    problems: list[str] = []
    # The twins: the re-run's own fast-forward rows of the canary's runs.
    twins = [r for r in collect.read_csv(new / f"{name}.csv")
             if compare.detail_of(r) == catalog.DETAIL_FAST_FORWARD]
    missing_twins = canary_runs - _runs(twins)
    if missing_twins:
        problems.append(f"{len(missing_twins)} canary runs have no fast-forward twin in "
                        f"{new / f'{name}.csv'}")
    pairing = paired.pair(canary_rows, twins)
    # The reference: its own canary file, else its main file where that is full detail.
    own = canary_csv(reference, name)
    source = own if own.is_file() else reference / f"{name}.csv"
    outcomes: list[compare.Outcome] = []
    if not source.is_file():
        problems.append(f"the reference has neither {own} nor {source}")
    else:
        reference_rows = collect.read_csv(source)
        if source != own and any(compare.detail_of(r) != catalog.DETAIL_FULL
                                 for r in reference_rows if r.get("cpu") == "o3"):
            problems.append(f"{source} was not made in full detail and there is no {own}: "
                            "compare against a full-detail reference or one with its canary")
        else:
            absent = canary_runs - _runs(reference_rows, catalog.DETAIL_FULL)
            if absent:
                problems.append(f"{len(absent)} canary runs are not in {source}")
            outcomes = compare.compare_rows(reference_rows, canary_rows, tolerances,
                                            partial=True)
    # As compare judges: a metric the reference lacks (an older file) is not a failure.
    bad = [o for o in outcomes if o.verdict in ("deviates", "missing")]
    agree = sum(1 for o in outcomes if o.verdict in ("identical", "within"))
    fresh = sum(1 for o in outcomes if o.verdict == "new")
    times = next((m for m in pairing.metrics if m.metric == TIME_METRIC), None)
    lines = [f"canary {name}: {len(outcomes)} full-detail values against "
             f"{source.parent.name}/{source.name}: {agree} agree"
             + (f", {fresh} not in it" if fresh else "")
             + f"; fast-forward twins: {len(pairing.violations)} moved of what must not"
             + (f", {TIME_METRIC} within {times.worst:.2%}" if times else "")]
    lines += [f"  FAILED: {p}" for p in problems]
    lines += [f"  {o.describe()}" for o in bad[:20]]
    lines += [f"  moved: {v}" for v in pairing.violations[:20]]
    return lines, not problems and not bad and not pairing.violations


def check(reference: Path, new: Path, tolerances: compare.Tolerances,
          names: Iterable[str] = ()) -> tuple[str, bool]:
    """A report line or more per canary the re-run holds; whether all held."""
    wanted = list(names) or sorted(p.stem for p in new.glob("*.csv"))
    lines: list[str] = []
    held = True
    for name in wanted:
        if not canary_csv(new, name).is_file():
            continue
        found, ok = _check_one(reference, new, name, tolerances)
        lines += found
        held = held and ok
    return "\n".join(lines), held
