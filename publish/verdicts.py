"""The verdict table: per published result, its number, the simulated one, the
rule and the verdict, with the command that re-makes it and what that costs.

Reads publish/verdicts.toml (the rules) and, through publish/claims.toml, the
committed results; writes plots/out/verdicts.md, which ``python -m
publish.tables`` puts into the reviewers' guide. ``python -m publish.verdicts``.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from plots import host_times, style
from publish import claims

VERDICTS = Path(__file__).resolve().parent / "verdicts.toml"
REPRODUCED, SHAPE_ONLY, NOT_REPRODUCED, NOT_COMPARABLE = (
    "reproduced", "shape only", "not reproduced", "not comparable")
ENTRIES = {entry.label.split()[0]: entry for entry in host_times.CLAIMS
           if entry.label.startswith("C") and "what-if" not in entry.label}


class BadVerdict(ValueError):
    """A verdict row that names no claim, or whose rule cannot be read."""


@dataclass(frozen=True)
class Verdict:
    claim: str
    what: str
    published: str
    simulated: dict[str, str]
    shown: str
    rule: str
    page: str
    reproduced: str = ""
    shape: str = ""
    comparable: bool = True
    command: str = ""
    values: dict[str, float] = field(default_factory=dict)

    def verdict(self) -> str:
        if not self.comparable:
            return NOT_COMPARABLE
        if self.reproduced and claims.evaluate(self.reproduced, self.values):
            return REPRODUCED
        if self.shape and claims.evaluate(self.shape, self.values):
            return SHAPE_ONLY
        return NOT_REPRODUCED


def read(path: Path = VERDICTS, results: Path = style.RESULTS) -> list[Verdict]:
    """Every verdict row, its simulated values read from the results through
    the claims they name (each claim checked against its page on the way)."""
    known = {c.id: c for c in claims.read()}
    keys = {"claim", "what", "published", "simulated", "shown", "rule", "page", "reproduced",
            "shape", "comparable", "command"}
    verdicts = []
    for entry in tomllib.loads(path.read_text()).get("verdict", []):
        what = entry.get("what", "?")
        if unknown := set(entry) - keys:
            raise BadVerdict(f"{path}: verdict '{what}': unknown keys {sorted(unknown)}")
        if entry.get("claim") not in ENTRIES:
            raise BadVerdict(f"{path}: verdict '{what}': claim '{entry.get('claim')}' "
                             f"(valid: {', '.join(ENTRIES)})")
        values = {}
        for name, claim_id in entry["simulated"].items():
            if claim_id not in known:
                raise BadVerdict(f"{path}: verdict '{what}': no claim '{claim_id}' in "
                                 f"{claims.CLAIMS.name}")
            claim = known[claim_id]
            values[name] = claims.check(claim, claims.page_text(claim), results)
        verdict = Verdict(**{k: v for k, v in entry.items() if k != "simulated"},
                          simulated=entry["simulated"], values=values)
        try:
            verdict.verdict()
            verdict.shown.format(**values)
        except (claims.BadClaim, KeyError) as err:
            raise BadVerdict(f"{path}: verdict '{what}': its rule or shown text names "
                             f"something it does not read ({err})") from err
        verdicts.append(verdict)
    return verdicts


def costs(results: Path) -> dict[str, str]:
    """Per claim: the command that re-makes it, its host time on the local
    cores and the kernel variants its runs need."""
    per_experiment = host_times.experiment_runs(results)
    out = {}
    for claim, entry in ENTRIES.items():
        present = [per_experiment[n] for n in entry.experiments if n in per_experiment]
        runs = host_times.once(present) if present else None
        minutes = (host_times.minutes(max(float(runs.sum()) / host_times.LOCAL_CORES,
                                          runs.max())) if runs is not None else "not run")
        variants = set()
        for name in entry.experiments:
            path = results / f"{name}.csv"
            if path.is_file():
                variants |= set(pd.read_csv(path, usecols=["variant"])["variant"])
        out[claim] = (f"`python -m experiments run {' '.join(entry.experiments)}`: "
                      f"{minutes} min, {len(variants)} kernels")
    return out


def everything(results: Path) -> str:
    """The simulations of every committed experiment on the local cores, the
    part of a full reproduction the results themselves time."""
    runs = host_times.once(list(host_times.experiment_runs(results).values()))
    hours = max(float(runs.sum()) / host_times.LOCAL_CORES, float(runs.max())) / 3600
    return (f"The committed results are {len(runs)} simulations, about {hours:.1f} h on "
            f"{host_times.LOCAL_CORES} cores by their own host times; a full reproduction "
            "(`make EXPERIMENTS=all`) adds gem5's and the kernels' builds, the boots and the "
            "QEMU references (each measured in `docs/results/host-and-build-times.md`; added "
            "up below the claim-by-claim tables).")


def table(verdicts: list[Verdict], results: Path) -> str:
    cost = costs(results)
    lines = ["| claim | what | published | simulated | rule | verdict | results | command: "
             f"host time on {host_times.LOCAL_CORES} cores, kernels it builds |",
             "|---|---|---|---|---|---|---|---|"]
    for v in verdicts:
        lines.append(f"| {v.claim} | {v.what} | {v.published} | "
                     f"{v.shown.format(**v.values)} | {v.rule} | **{v.verdict()}** | "
                     f"[{Path(v.page).stem}]({Path(v.page).relative_to('docs')}) | "
                     f"{f'`{v.command}`' if v.command else cost[v.claim]} |")
    counts = {label: sum(v.verdict() == label for v in verdicts)
              for label in (REPRODUCED, SHAPE_ONLY, NOT_REPRODUCED, NOT_COMPARABLE)}
    lines += ["", f"{len(verdicts)} published results: "
              + ", ".join(f"{n} {label}" for label, n in counts.items()) + ". The rules "
              "(`publish/verdicts.toml`) are of one kind for every row and name no simulated "
              "value: a published "
              "number is reproduced within 25% of it, \"a few percent\" is under 10%, "
              "\"hundreds of percent\" at least 100%, \"a large multiple\" at least 2x; "
              "\"shape only\" means the direction or ordering the source reports holds. Host "
              "times are the committed runs' own (simulations only). " + everything(results)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m publish.verdicts")
    style.folder_arguments(parser)
    args = parser.parse_args(argv)
    try:
        verdicts = read(results=args.results)
    except (BadVerdict, claims.BadClaim) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    folders = style.Folders(args.results, args.out)
    print(style.shown(folders.save_table("verdicts", table(verdicts, args.results))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
