"""Re-check a fast-forward experiment's canary: the runs it also makes in full
detail (``[canary]``, written to ``<results>/canary/<name>.csv``).

Two checks per experiment that has one in the re-run:

- the canary against the reference's full-detail rows of the same runs (its
  own canary file, or its main file where that was made in full detail), as
  ``compare`` judges any re-run: identical on the same builds, else within
  the tolerances;
- the re-run's fast-forward rows against their canary twins, as ``paired``
  judges them: iterations, verdicts and instructions per iteration must not
  move.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from experiments import collect, compare, paired
from experiments.folders import canary_csv
from experiments.spec import catalog

TIME_METRIC = "ns_per_iteration"


def check(reference: Path, new: Path, tolerances: compare.Tolerances,
          names: Iterable[str] = ()) -> tuple[str, bool]:
    """A report line or two per canary the re-run holds; whether all held."""
    wanted = list(names) or sorted(p.stem for p in new.glob("*.csv"))
    lines: list[str] = []
    held = True
    for name in wanted:
        rerun = canary_csv(new, name)
        if not rerun.is_file():
            continue
        canary_rows = collect.read_csv(rerun)
        own = canary_csv(reference, name)
        source = own if own.is_file() else reference / f"{name}.csv"
        if not source.is_file():
            raise compare.BadComparison(f"{name}: the reference has neither {own} nor "
                                        f"{source}: nothing to hold the canary against")
        reference_rows = collect.read_csv(source)
        # A main file made with fast-forward holds no full-detail twin to join.
        if source != own and any(compare.detail_of(r) != catalog.DETAIL_FULL
                                 for r in reference_rows if r.get("cpu") == "o3"):
            raise compare.BadComparison(f"{name}: {source} was not made in full detail and "
                                        f"the reference has no {own}")
        outcomes = compare.compare_rows(reference_rows, canary_rows, tolerances, partial=True)
        # As compare judges: a metric the reference lacks (an older file) is not a failure.
        bad = [o for o in outcomes if o.verdict in ("deviates", "missing")]
        pairing = paired.pair(canary_rows, collect.read_csv(new / f"{name}.csv"))
        times = next((m for m in pairing.metrics if m.metric == TIME_METRIC), None)
        agree = sum(1 for o in outcomes if o.verdict in ("identical", "within"))
        fresh = sum(1 for o in outcomes if o.verdict == "new")
        lines.append(
            f"canary {name}: {len(outcomes)} full-detail values against {source.parent.name}/"
            f"{source.name}: {agree} agree" + (f", {fresh} not in it" if fresh else "")
            + "; fast-forward twins: "
            f"{len(pairing.violations)} moved of what must not"
            + (f", {TIME_METRIC} within {times.worst:.2%}" if times else ""))
        lines += [f"  {o.describe()}" for o in bad[:20]]
        lines += [f"  moved: {v}" for v in pairing.violations[:20]]
        held = held and not bad and not pairing.violations
    return "\n".join(lines), held
