"""``python -m experiments run NAME [NAME ...] [-j N]`` / ``python -m experiments list``."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from builders.process import CommandFailed
from experiments import runner, spec


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run experiments and write results/<name>.csv")
    run.add_argument("names", nargs="*", help="experiment names (default: the quick set)")
    run.add_argument("--all", action="store_true", help="every experiment, not the quick set")
    run.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    run.add_argument("--cpu", help="only the runs on this CPU type (atomic or o3); the CSV "
                     "then holds those rows alone")
    sub.add_parser("list", help="list experiments")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s",
                        datefmt="%H:%M:%S")
    if args.command == "list":
        for name in spec.available():
            experiment = spec.load(name)
            print(f"{name:20} {'quick' if experiment.quick else '     '} "
                  f"{len(experiment.runs):3} runs  {experiment.description}")
        return 0
    try:
        names = args.names or [n for n in spec.available()
                               if args.all or spec.load(n).quick]
        experiments = [spec.load(name) for name in names]
        if args.cpu:
            experiments = [spec.only_cpu(e, args.cpu) for e in experiments]
        for experiment in experiments:
            runner.run_experiment(experiment, args.jobs, spec.REPO_ROOT / "results")
    except (spec.BadExperiment, runner.SimulationFailed, CommandFailed, RuntimeError) as err:
        logging.error("%s", err)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
