"""The 32-bit board's runs: ``arm32`` and ``arm32-measure`` (see run.py).

``arm32`` boots a 32-bit kernel on the atomic CPU with an initramfs whose
/init is the guest (``board32``) and stops at its last console line, or with
``--checkpoint-out`` at the init's ``m5 checkpoint``; ``arm32-measure``
restores that checkpoint into a 32-bit core model and turns the statistics
dump of each getppid run into per-call figures (``getppid.json``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import m5

from gem5.components.cachehierarchies.classic.no_cache import NoCache
from gem5.simulate.exit_event import ExitEvent
from gem5.simulate.simulator import Simulator

from hardening import catalog
from hardening.board32 import KERNEL_ARGS, INIT_GEM5_MARKERS, V2M_SYS_FLAGS
from hardening.board32 import Arm32Board, ConsoleWatch
from hardening.caches import ClusterL1SharedL2
from hardening.catalog import MAX_CORES
from hardening.cores import load_arm32_core
from hardening.cores.base import ddr4_single_channel
from hardening.exit_codes import EXIT_GUEST_FAILED, EXIT_OK, EXIT_USAGE
from hardening.params import UnknownParameter, apply_overrides
from hardening.processor import atomic_processor, detailed_processor
from hardening.progress import CHECK_TICKS
from hardening.runstats import parse_run_stats
from hardening.simulation import BOOT_CLOCK, simulate, stop_event, stopped_early
from hardening.sysreg import BadSysRegTiming, split_overrides
from hardening.tlbi import WALKER_ROOT, stage1_walkers

MODES = ("arm32", "arm32-measure")


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("arm32")
    p.add_argument("--vmlinux", type=Path, required=True)
    p.add_argument("--bootloader", type=Path, required=True, help="boot.arm")
    p.add_argument("--initramfs", type=Path, required=True)
    p.add_argument("--cores", type=int, default=1)
    p.add_argument("--memory", default="512MiB")
    # The init's own default (3 runs of 10M calls) would take hours of host time.
    p.add_argument("--init-args", default="1000 100000 3",
                   help="the guest init's arguments: WARMUP CALLS RUNS")
    p.add_argument("--kernel-arg", action="append", default=[],
                   help="extra kernel command-line argument (repeatable)")
    p.add_argument("--max-ticks", type=int, default=0,
                   help="stop with exit status 5 after this many ticks (0: no limit)")
    p.add_argument("--check-ticks", type=int, default=CHECK_TICKS)
    p.add_argument("--atomic-clock", default=BOOT_CLOCK)
    p.add_argument("--checkpoint-out", type=Path,
                   help="run the init with its gem5 markers and save a checkpoint to this "
                   "directory at its m5 checkpoint (before the warmup), then stop")
    p = sub.add_parser("arm32-measure")
    p.add_argument("--vmlinux", type=Path, required=True)
    p.add_argument("--bootloader", type=Path, required=True, help="boot.arm")
    p.add_argument("--initramfs", type=Path, required=True)
    p.add_argument("--checkpoint", type=Path, required=True,
                   help="an 'arm32 --checkpoint-out' directory")
    p.add_argument("--cores", type=int, default=1, help="as the boot had")
    p.add_argument("--memory", default="512MiB", help="as the boot had")
    p.add_argument("--init-args", default="1000 2000 1",
                   help="WARMUP CALLS RUNS, handed to the restored init by m5 readfile")
    p.add_argument("--cpu", choices=catalog.CPU_TYPES, default="o3",
                   help="o3: the --core model with its caches; atomic: as the boot")
    p.add_argument("--core", default="cortex-a15",
                   help=f"32-bit core model: {', '.join(catalog.ARM32_CORE_MODULES)}")
    p.add_argument("--param", action="append", default=[],
                   help="override a model parameter (o3 only), e.g. cpu.numROBEntries=64 "
                   "or sysreg.dacr.write_latency=10; roots: cpu, l1i, l1d, l2, walker, sysreg")
    p.add_argument("--check", action="store_true",
                   help="build the model, report bad names, and stop before simulating "
                   "(the checkpoint is not read)")
    p.add_argument("--max-ticks", type=int, default=0,
                   help="stop with exit status 5 after this many ticks (0: no limit)")
    p.add_argument("--check-ticks", type=int, default=CHECK_TICKS)
    p.add_argument("--atomic-clock", default=BOOT_CLOCK)


def run_arm32(args: argparse.Namespace) -> int:
    """Boot a 32-bit kernel into the initramfs's /init and stop at its last line,
    or, with ``--checkpoint-out``, at the init's m5 checkpoint, saved there.
    The console is ``board.terminal`` in the output directory."""
    try:
        board = Arm32Board(clk_freq=args.atomic_clock, processor=atomic_processor(args.cores),
                           memory=ddr4_single_channel(args.memory), cache_hierarchy=NoCache())
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_USAGE
    markers = (INIT_GEM5_MARKERS,) if args.checkpoint_out else ()
    board.set_initramfs_workload(args.vmlinux, args.bootloader, args.initramfs,
                                 (*KERNEL_ARGS, *args.kernel_arg,
                                  "--", *markers, *args.init_args.split()))
    (Path(m5.options.outdir) / "model.json").write_text(json.dumps({
        "mode": args.mode, "cpu": "atomic", "clock": args.atomic_clock,
        "extensions": [str(e) for e in board.release.extensions],
        "memory": args.memory, "cores": args.cores,
        "cpu_release_addr": hex(V2M_SYS_FLAGS),
        "checkpoint_out": str(args.checkpoint_out) if args.checkpoint_out else None,
    }, indent=2) + "\n")
    console = ConsoleWatch(Path(m5.options.outdir) / "board.terminal")
    simulator, limit, cause = simulate(board, args.max_ticks, args.check_ticks,
                                       until=lambda: console.last_line() is not None)
    last = console.last_line()
    if args.checkpoint_out and stop_event(cause, limit) == ExitEvent.CHECKPOINT:
        simulator.save_checkpoint(args.checkpoint_out)
        print(f"checkpoint saved to {args.checkpoint_out} at tick "
              f"{simulator.get_current_tick()}")
        return EXIT_OK
    if limit.done and last is not None:
        print(f"guest finished at tick {simulator.get_current_tick()}: {last}")
        return EXIT_GUEST_FAILED if " error: " in last else EXIT_OK
    return stopped_early(cause, limit, "the guest finished")


def build_arm32(args: argparse.Namespace) -> tuple[Arm32Board, dict]:
    """The 32-bit board a checkpoint restores into: the --core model's O3 CPUs,
    its cluster's caches and memory, or the atomic CPU as the boot had."""
    if args.cpu == "atomic":
        if args.param:
            raise UnknownParameter("--param applies to detailed (o3) runs only")
        board = Arm32Board(clk_freq=args.atomic_clock, processor=atomic_processor(args.cores),
                           memory=ddr4_single_channel(args.memory), cache_hierarchy=NoCache())
        return board, {"cpu": "atomic", "core": None, "clock": args.atomic_clock}
    model = load_arm32_core(args.core)
    sysreg_overrides, object_overrides = split_overrides(args.param)
    timing = model.sysreg_timing.overridden(sysreg_overrides)
    processor = detailed_processor(model.make_cpu, args.cores)
    cpus = [core.get_simobject() for core in processor.get_cores()]
    for cpu in cpus:
        for decoder in cpu.decoder:
            timing.install(decoder)
    hierarchy = ClusterL1SharedL2(args.cores, model.make_l1i, model.make_l1d, model.make_l2)
    apply_overrides({"cpu": cpus, "l1i": hierarchy.l1i, "l1d": hierarchy.l1d,
                     "l2": [hierarchy.l2], WALKER_ROOT: stage1_walkers(cpus)},
                    object_overrides)
    board = Arm32Board(clk_freq=model.clock, processor=processor,
                       memory=model.make_memory(args.memory), cache_hierarchy=hierarchy)
    return board, {"cpu": "o3", "core": model.name, "summary": model.summary,
                   "clock": model.clock, "architecture": model.architecture,
                   "params": list(args.param),
                   "sysreg_timing": timing.as_dict(), "notes": model.notes}


def run_arm32_measure(args: argparse.Namespace) -> int:
    """Restore an ``arm32 --checkpoint-out`` checkpoint, hand the init its counts
    through m5 readfile, run to its m5 exit, and turn the statistics dump of
    each run into per-call figures (``getppid.json``)."""
    counts = args.init_args.split()
    if len(counts) != 3 or not all(c.isdigit() and int(c) > 0 for c in counts[1:]):
        print("error: --init-args must be WARMUP CALLS RUNS", file=sys.stderr)
        return EXIT_USAGE
    try:
        board, description = build_arm32(args)
    except (catalog.UnknownName, UnknownParameter, BadSysRegTiming, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_USAGE
    if args.check:
        # As main()'s --check: the C++ objects check their own parameters.
        board.set_initramfs_workload(args.vmlinux, args.bootloader, args.initramfs)
        Simulator(board=board)._instantiate()
        print("model ok")
        return EXIT_OK
    outdir = Path(m5.options.outdir)
    # The kernel command line is the boot's (in the checkpoint's memory); this
    # one only fills the devicetree gem5 regenerates and the guest never reads.
    readfile = outdir / "init-counts"
    readfile.write_text(" ".join(counts) + "\n")
    board.set_initramfs_workload(args.vmlinux, args.bootloader, args.initramfs,
                                 checkpoint=args.checkpoint, readfile=readfile)
    (outdir / "model.json").write_text(json.dumps({
        "mode": args.mode, **description, "checkpoint": str(args.checkpoint),
        "extensions": [str(e) for e in board.release.extensions],
        "memory": args.memory, "cores": args.cores, "init_args": args.init_args,
    }, indent=2) + "\n")
    simulator, limit, cause = simulate(board, args.max_ticks, args.check_ticks)
    console = ConsoleWatch(outdir / "board.terminal").read()
    if stop_event(cause, limit) != ExitEvent.EXIT:
        return stopped_early(cause, limit, "the guest's m5 exit")
    print(f"guest finished at tick {simulator.get_current_tick()}")
    if "c3-getppid error: " in console:
        print("error: the guest init failed (see board.terminal)", file=sys.stderr)
        return EXIT_GUEST_FAILED
    if "c3-getppid host counts" not in console:
        print("error: the guest did not take the counts from m5 readfile", file=sys.stderr)
        return EXIT_GUEST_FAILED
    # Each m5 dumpstats has been written out; gem5's own dump at exit comes later.
    runs = parse_run_stats((outdir / "stats.txt").read_text(), int(counts[1]))
    (outdir / "getppid.json").write_text(json.dumps(
        {"calls_per_run": int(counts[1]), "runs": [r.as_dict() for r in runs]},
        indent=2) + "\n")
    for i, run in enumerate(runs, start=1):
        print(f"run {i}: {run.summary()}")
    if len(runs) != int(counts[2]):
        print(f"error: {len(runs)} statistics dumps for {counts[2]} runs", file=sys.stderr)
        return EXIT_GUEST_FAILED
    return EXIT_OK


def main(args: argparse.Namespace) -> int:
    if not 1 <= args.cores <= MAX_CORES:
        print(f"error: --cores must be 1 to {MAX_CORES}", file=sys.stderr)
        return EXIT_USAGE
    return run_arm32(args) if args.mode == "arm32" else run_arm32_measure(args)
