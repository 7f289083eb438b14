"""``python -m experiments [--definitions DIR] run NAME [NAME ...] [-j N] [--cpu C] [--sample N]
[--variant V] [--features F] [--results-dir D]``,
``python -m experiments compare REFERENCE NEW [NAME ...]``,
``python -m experiments paired REFERENCE NEW [NAME ...]``,
``python -m experiments trace NAME --variant V --workload W [--features F] [--sample N]
[--branches]``,
``python -m experiments region-stats CSV --stat NAME [--where COLUMN=VALUE[,VALUE]]
[--label COLUMN]`` and
``python -m experiments list``."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from pathlib import Path

from builders import buildroot
from builders.gem5 import VARIANTS as GEM5_VARIANTS
from builders.process import CommandFailed
from experiments import (backends, branches, canary, collect, compare, dry_run,
                         dvm_crosscheck, folders, gem5_builds, paired, qemu_arm32,
                         qemu_reference, region_stats, runner, simulate, spec, trace)

EXIT_FAILED = 1
EXIT_CANCELLED = 130  # as a shell reports a process stopped by SIGINT


def _build_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rootfs", choices=tuple(buildroot.ROOTFS_BUILDERS), default="debian",
                        help="the disk image's builder (default: debian, the image of the "
                        "committed results)")
    parser.add_argument("--gem5-variant", choices=GEM5_VARIANTS, default="opt",
                        help="gem5's binary (default: opt, the committed results'; fast "
                        "has no asserts or debug output, and its runs are cached and keyed "
                        "apart)")


def _backend_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "where gem5 runs", "--backend slurm submits every boot and run as a Slurm job "
        "(the cache, $ARTIFACT_CACHE, must be on a filesystem the nodes share); builds and "
        "the CSVs stay on this machine")
    group.add_argument("--backend", choices=backends.BACKENDS, default="local")
    group.add_argument("--slurm-jobs", type=int, default=64,
                       help="most jobs queued or running at once (default 64)")
    group.add_argument("--slurm-partition", default="", help="sbatch --partition")
    group.add_argument("--slurm-account", default="", help="sbatch --account")
    group.add_argument("--slurm-time", default="", help="sbatch --time per job, e.g. 4:00:00")
    group.add_argument("--slurm-mem", default="", help="sbatch --mem per job, e.g. 4G")


def _runner_and_jobs(args: argparse.Namespace) -> tuple[simulate.Gem5Runner, int]:
    """The gem5 runner on the chosen backend, and how many runs go at once."""
    if args.slurm_jobs < 1:
        raise spec.BadExperiment(f"--slurm-jobs must be at least 1, got {args.slurm_jobs}")
    options = backends.SlurmOptions(partition=args.slurm_partition,
                                    account=args.slurm_account, time=args.slurm_time,
                                    mem=args.slurm_mem)
    backend = backends.make_backend(args.backend, options)
    jobs = args.slurm_jobs if args.backend == "slurm" else args.jobs
    return simulate.Gem5Runner(simulate.RepoState.read(), backend=backend), jobs


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def cancel_on_signals() -> None:
    """SIGTERM (kill, a batch scheduler's cancel) stops a run as Ctrl-C does;
    SIGINT does too when the shell started us in the background, which would
    otherwise leave it ignored."""
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments")
    parser.add_argument("--definitions", type=Path, default=spec.DEFINITIONS,
                        help="the folder of experiment definitions (default: "
                        "experiments/definitions)")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run experiments and write <results-dir>/<name>.csv")
    run.add_argument("names", nargs="*", help="experiment names (default: the quick set)")
    run.add_argument("--all", action="store_true", help="every experiment, not the quick set")
    run.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    run.add_argument("--cpu", help="only the runs on this CPU type (atomic or o3); their rows "
                     "replace that CPU type's rows in the CSV, the others are kept")
    run.add_argument("--results-dir", type=Path,
                     help="where the CSVs go (default: out/results, or out/derived/<what> "
                     "with --core or --param; the committed record is results/)")
    run.add_argument("--core", action="append", default=[], dest="cores",
                     help="run on this core model instead (repeatable): a derived run")
    run.add_argument("--param", action="append", default=[], dest="params",
                     help="add a parameter override KEY=VALUE to every run (repeatable), "
                     "e.g. cpu.numROBEntries=64: a derived run")
    run.add_argument("--samples", type=int, help="layout samples per run (overrides the "
                     "experiment's 'samples'; sample 0 is the run as defined)")
    run.add_argument("--sample", type=int, help="only this layout sample of each run (0 is "
                     "the run as defined); its rows replace that sample's rows in the CSV, "
                     "the others are kept, so a long experiment can be made a sample at a "
                     "time")
    run.add_argument("--variant", dest="variants", action="append", default=[],
                     help="only the runs on this kernel variant (repeatable); their rows "
                     "replace those runs' rows in the CSV, the others are kept")
    run.add_argument("--features", action="append", default=[],
                     help="only the runs with this feature set (repeatable, e.g. pan,pac); "
                     "merged like --variant")
    run.add_argument("--dry-run", action="store_true",
                     help="list what would be built and simulated, with host times from the "
                     "recorded runs, and build or simulate nothing")
    run.add_argument("--detail", choices=spec.catalog.DETAILS,
                     help="full: the core model from the restore; fast-forward: the atomic "
                     "CPU through the model's caches except from each benchmark's detailed "
                     "warm-up to its region's end (overrides the experiment's 'detail'; "
                     "a change goes to out/derived/detail-<detail>)")
    _build_arguments(run)
    _backend_arguments(run)
    sweeping = sub.add_parser("sweep", help="run a benchmark experiment with one parameter "
                              "over a list of values, beside the unmodified model")
    sweeping.add_argument("name", help="a benchmark experiment")
    sweeping.add_argument("--param", required=True, dest="key",
                          help="the parameter, e.g. l2.data_latency")
    sweeping.add_argument("--values", required=True, nargs="+", help="its values")
    sweeping.add_argument("--core", action="append", default=[], dest="cores",
                          help="on this core model instead (repeatable)")
    sweeping.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    _build_arguments(sweeping)
    _backend_arguments(sweeping)
    sweeping.add_argument("--results-dir", type=Path,
                          help="default: out/derived/sweep-<param>")
    sub.add_parser("list", help="list experiments")
    comparison = sub.add_parser(
        "compare", help="compare re-run results with reference results; exit 1 if they differ")
    comparison.add_argument("reference", type=Path, help="directory of reference CSVs "
                            "(e.g. results)")
    comparison.add_argument("new", type=Path, help="directory of re-run CSVs")
    comparison.add_argument("names", nargs="*", help="results to compare (default: every CSV "
                            "in the re-run directory)")
    comparison.add_argument("--quick", action="store_true",
                            help="compare the quick set's results (what 'make' runs; of an "
                            "experiment that a [quick] table chooses runs of, only the runs the "
                            "re-run has, as --partial)")
    comparison.add_argument("--tolerances", type=Path, default=compare.TOLERANCES)
    comparison.add_argument("--partial", action="store_true",
                            help="the re-run holds only some runs: compare those, and do not "
                            "count the runs it lacks")
    pairing = sub.add_parser(
        "paired", help="per metric, the relative errors of re-run rows against the same runs' "
        "reference rows (e.g. fast-forward against full detail); exit 1 if the iterations, "
        "verdicts or the instructions per iteration (by over 0.1%%) moved")
    pairing.add_argument("reference", type=Path)
    pairing.add_argument("new", type=Path)
    pairing.add_argument("names", nargs="*", help="results to pair (default: every CSV in NEW)")
    pairing.add_argument("--baseline", metavar="VARIANT",
                         help="also each other arm's effect (arm / this kernel variant's run at "
                         "the same place - 1) in both sets, and whether its error stays under a "
                         "third of the smallest effect and under the spread over layout "
                         "samples (exit 1 if not)")
    pairing.add_argument("--metric", default="ns_per_iteration",
                         help="the metric of --baseline's effects (default ns_per_iteration)")
    tracing = sub.add_parser(
        "trace", help="simulate one run again with gem5's instruction trace and count, per "
        "kernel function, its region's system-register, barrier and serializing instructions")
    tracing.add_argument("name", help="the experiment")
    tracing.add_argument("--variant", required=True, help="the run's kernel variant")
    tracing.add_argument("--workload", required=True, help="the run's workload")
    tracing.add_argument("--features", help="the run's CPU features, where the variant runs "
                         "with more than one set (e.g. pan,pac,poe)")
    tracing.add_argument("--sample", type=int, default=0,
                         help="the run's layout sample, where the experiment has several "
                         "(default 0)")
    tracing.add_argument("--branches", action="store_true",
                         help="trace the branch predictor instead: per branch of the region, "
                         "how often it committed and how often in the wrong direction")
    tracing.add_argument("--top", type=int, default=20,
                         help="how many instructions the printed summary lists (default 20)")
    tracing.add_argument("--results-dir", type=Path, default=folders.USER_TRACES,
                         help="where the CSV goes (default: out/results/traces, under the "
                         "experiment's name; the committed record is results/traces)")
    qemu_reference.add_arguments(sub.add_parser(
        "qemu-reference", help="a selftests experiment's tests on QEMU (-machine virt, "
        "-cpu max), beside gem5's verdicts"))
    qemu_arm32.add_arguments(sub.add_parser(
        "qemu-arm32", help="claim C3 as published: getppid() on QEMU's vexpress-a15, "
        "software PAN off and on"))
    dvm_crosscheck.add_arguments(sub.add_parser(
        "dvm-crosscheck", help="our TLBI model against gem5's Ruby CHI DVM path: one "
        "bare-metal TLBI loop at 4-32 simulated cores (needs python -m builders gem5 "
        "--memory ruby-chi)"))
    region_stats.add_arguments(sub.add_parser(
        "region-stats", help="chosen gem5 statistics of the measured region (the first "
        "dump) of a results CSV's runs, from the run cache, under the command that prints them"))
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s",
                        datefmt="%H:%M:%S")
    definitions = args.definitions
    if not definitions.is_dir():
        parser.error(f"--definitions {definitions}: no such folder")
    if args.command == "dvm-crosscheck":
        return dvm_crosscheck.cli(args)
    if args.command == "qemu-reference":
        return qemu_reference.cli(args)
    if args.command == "qemu-arm32":
        return qemu_arm32.cli(args)
    if args.command == "region-stats":
        return region_stats.cli(args)
    if args.command == "list":
        broken = 0
        for name in spec.available(definitions):
            try:
                experiment = spec.load(name, definitions)
            except spec.BadExperiment as err:
                print(f"{name:20} BROKEN  {err}")
                broken += 1
                continue
            quick = f"{len(experiment.quick):3} quick" if experiment.quick else " " * 9
            print(f"{name:20} {len(experiment.runs):3} runs {quick}  {experiment.description}")
        return EXIT_FAILED if broken else 0
    if args.command == "compare":
        try:
            names = args.names + (spec.quick_set(definitions) if args.quick else [])
            tolerances = compare.Tolerances.read(args.tolerances)
            # An experiment in the quick set by a [quick] table has only those runs.
            selections = ([n for n in spec.quick_set(definitions)
                           if spec.quick_part(spec.load(n, definitions)).partial]
                          if args.quick else [])
            text, agreed = compare.report(compare.compare_dirs(
                args.reference, args.new, tolerances, names, args.partial or selections))
            print(text)
            canaries, canaries_held = canary.check(args.reference, args.new, tolerances, names)
        except (compare.BadComparison, spec.BadExperiment) as err:
            logging.error("%s", err)
            return EXIT_FAILED
        if canaries:
            print(canaries)
        agreed = agreed and canaries_held
        print("compare: the re-run agrees with the reference" if agreed else
              "compare: the re-run DIFFERS from the reference")
        return 0 if agreed else EXIT_FAILED
    if args.command == "paired":
        try:
            pairing = paired.pair_dirs(args.reference, args.new, args.names)
        except compare.BadComparison as err:
            logging.error("%s", err)
            return EXIT_FAILED
        print(paired.table(pairing))
        if pairing.unpaired:
            print(f"{pairing.unpaired} rows of {args.new} have no reference row")
        for change in pairing.from_zero:
            print(f"from zero: {change}")
        for violation in pairing.violations:
            print(f"moved: {violation}")
        effects_hold = True
        if args.baseline:
            files = paired.paired_files(args.reference, args.new, args.names)
            effects = paired.arm_effects(
                [row for _, ref, _ in files for row in collect.read_csv(ref)],
                [row for _, _, new in files for row in collect.read_csv(new)],
                args.baseline, args.metric)
            effects_hold, verdict = paired.effects_verdict(effects)
            print()
            print(paired.effects_table(effects))
            print(f"{args.metric}, arms against {args.baseline}: {verdict}")
        return EXIT_FAILED if pairing.violations or not effects_hold else 0
    if args.command == "trace":
        try:
            run, gem5, planned = trace.prepare(args.name, args.variant, args.workload,
                                               args.features, args.sample, definitions)
            make = branches.trace_branches if args.branches else trace.trace_instructions
            make(run, gem5, planned, args.results_dir, args.top)
        except (KeyboardInterrupt, simulate.Cancelled):
            logging.error("stopped by the user: gem5 killed, nothing partial kept")
            return EXIT_CANCELLED
        except (spec.BadExperiment, trace.BadTrace, simulate.SimulationFailed, CommandFailed,
                RuntimeError) as err:
            logging.error("%s", err)
            return EXIT_FAILED
        return 0
    if args.jobs < 1:
        parser.error(f"-j must be at least 1, got {args.jobs}")
    try:
        # Every definition is read and checked before anything is built.
        results_dir, cpu = args.results_dir, None
        if args.command == "sweep":
            experiments = [spec.sweep(spec.load(args.name, definitions), args.key, args.values,
                                      args.cores)]
            label = spec.derived_label(args.cores, [f"sweep-{args.key}"])
            results_dir = results_dir or folders.USER_DERIVED / label
        else:
            if args.names or args.all:
                experiments = [spec.load(name, definitions)
                               for name in args.names or spec.available(definitions)]
            else:
                experiments = [spec.quick_part(spec.load(name, definitions))
                               for name in spec.quick_set(definitions)]
            if args.cores or args.params:
                experiments = [spec.derive(e, args.cores, args.params) for e in experiments]
                label = spec.derived_label(args.cores, args.params)
                results_dir = results_dir or folders.USER_DERIVED / label
            if args.samples is not None:
                experiments = [spec.with_samples(e, args.samples) for e in experiments]
            if args.sample is not None:
                experiments = [spec.only_sample(e, args.sample) for e in experiments]
            if args.variants or args.features:
                experiments = [spec.only_runs(e, args.variants, args.features)
                               for e in experiments]
            if args.detail is not None:
                changed = [spec.with_detail(e, args.detail) for e in experiments]
                if changed != experiments and not (args.cores or args.params):
                    results_dir = results_dir or folders.USER_DERIVED / f"detail-{args.detail}"
                experiments = changed
            if args.cpu:
                experiments = [spec.only_cpu(e, args.cpu) for e in experiments]
                cpu = args.cpu
        if args.gem5_variant != "opt" and args.results_dir is None:
            # The committed results are gem5.opt's: another binary's go beside them.
            suffix = f"gem5-{args.gem5_variant}"
            results_dir = (results_dir.with_name(f"{results_dir.name}-{suffix}") if results_dir
                           else folders.USER_DERIVED / suffix)
        results_dir = results_dir or folders.USER_RESULTS
        if getattr(args, "dry_run", False):
            print(dry_run.report(experiments, args.jobs, args.gem5_variant))
            return 0
        variants = sorted({r.variant for e in experiments for r in e.runs})
        builds = gem5_builds.ensure_builds(variants, args.jobs, rootfs=args.rootfs,
                                        gem5_variant=args.gem5_variant)
        gem5, jobs = _runner_and_jobs(args)
        runner.run_experiments(experiments, builds, gem5, jobs, results_dir, cpu)
    except (KeyboardInterrupt, simulate.Cancelled):
        logging.error("stopped by the user: queued runs cancelled, running gem5 processes "
                      "killed, nothing partial kept")
        return EXIT_CANCELLED
    except (spec.BadExperiment, runner.ExperimentFailed, simulate.SimulationFailed,
            backends.BackendFailed, CommandFailed, RuntimeError) as err:
        logging.error("%s", err)
        return EXIT_FAILED
    except Exception as err:  # noqa: BLE001 - one line, not a traceback
        logging.error("%s: %s", type(err).__name__, err)
        return EXIT_FAILED
    return 0


if __name__ == "__main__":
    cancel_on_signals()
    sys.exit(main())
