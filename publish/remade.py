"""The docs' claims a re-run measures again, the committed value beside the
re-run's: ``python -m publish.remade REFERENCE RESULTS [--out FILE]``.

``make`` runs it after the quick set, so a user sees the headline numbers of
C1-C5 from their own runs next to what the docs state. A claim is re-measured
when every row it reads is in RESULTS; the reference side reads only the runs
RESULTS holds (the same coordinates: core, variant, features, parameters,
workload, layout sample), so a re-run of layout sample 0 is set beside the
record's sample 0, not beside a median over samples it did not make.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from experiments.collect import COORDINATES, LATER_COORDINATES
from publish import claims

log = logging.getLogger("publish.remade")

# A run's place in its experiment: its coordinates but the cache key, which
# another build changes.
PLACE = tuple(c for c in COORDINATES if c != "run")


@dataclass(frozen=True)
class Remade:
    claim: claims.Claim
    committed: float
    remade: float


class Frames:
    """The CSVs of one results folder, each read once; ``within`` keeps only
    the runs another folder's CSV of the same experiment holds."""

    def __init__(self, folder: Path, within: Frames | None = None) -> None:
        self.folder, self.within, self.cache = folder, within, {}

    def __call__(self, name: str) -> pd.DataFrame:
        if name not in self.cache:
            path = self.folder / f"{name}.csv"
            if not path.is_file():
                raise claims.BadClaim(f"{path} does not exist")
            frame = pd.read_csv(path, keep_default_na=False, dtype=str)
            for column, value in LATER_COORDINATES.items():
                frame[column] = frame[column].replace("", value) if column in frame else value
            if self.within is not None:
                places = set(map(tuple, self.within(name)[list(PLACE)].to_numpy()))
                frame = frame[[tuple(p) in places for p in frame[list(PLACE)].to_numpy()]]
            self.cache[name] = frame
        return self.cache[name]


def remade(reference: Path, results: Path) -> list[Remade]:
    """Every claim whose rows all exist in ``results``, valued both ways."""
    mine = Frames(results)
    committed = Frames(reference, within=mine)
    found = []
    for claim in claims.read():
        # Only claims on experiments the re-run made: a claim on a check
        # folder's rows is not re-measured by a make.
        if not (results / f"{claim.results}.csv").is_file() or any(
                "results" in where for where in claim.rows.values()):
            continue
        try:
            found.append(Remade(claim, claims.value_of(claim, committed),
                                claims.value_of(claim, mine)))
        except claims.BadClaim as missing:
            log.debug("not re-measured: %s", missing)
    return found


def table(rows: list[Remade]) -> str:
    lines = ["| claim | page | the page says | committed | re-made | re-made over committed |",
             "|---|---|---|---:|---:|---:|"]
    for row in rows:
        # Within rounding: a median of the same rows read in another order.
        moved = ("identical" if math.isclose(row.remade, row.committed, rel_tol=1e-12)
                 else
                 f"{100 * (row.remade / row.committed - 1):+.2f}%" if row.committed
                 else f"{row.remade - row.committed:+.3g} (from 0)")
        lines.append(f"| `{row.claim.id}` | {row.claim.page} | "
                     f"{' '.join(row.claim.text.split())} | {row.committed:.4g} | "
                     f"{row.remade:.4g} | {moved} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m publish.remade", description=__doc__)
    parser.add_argument("reference", type=Path, help="the committed results (a results/ folder)")
    parser.add_argument("results", type=Path, help="the re-run's results (e.g. out/results)")
    parser.add_argument("--out", type=Path, help="also write the table here (markdown)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for folder in (args.reference, args.results):
        if not folder.is_dir():
            parser.error(f"{folder} is not a folder of results")
    rows = remade(args.reference, args.results)
    text = (f"{len(rows)} claims of the docs re-measured by the runs in {args.results} "
            f"(each against the same runs in {args.reference}):\n\n" + table(rows))
    print(text, end="")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        partial = args.out.with_name(f".{args.out.name}.partial")
        partial.write_text(text)
        partial.rename(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
