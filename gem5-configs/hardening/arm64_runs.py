"""The 64-bit board's runs: ``boot``, ``measure`` and ``direct`` (see run.py).

``boot`` boots on the atomic CPU and saves a checkpoint at the guest init's
``m5 checkpoint``; ``measure`` restores one into the ``--core`` model (or the
atomic CPU) and runs the host's guest script to its ``m5 exit``; ``direct``
boots and runs the script without a checkpoint. The model's description goes
to ``model.json`` and, for a run with ``--detail fast-forward``, the guest's
requests for detail to ``detail.json``.
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
from hardening.board import make_board, set_workload
from hardening.caches import PrivateL1L2SharedL3
from hardening.catalog import MAX_CORES, NODE_COUNTS, BadTopology
from hardening.cores import load_core
from hardening.cores.base import ddr4_single_channel
from hardening.exit_codes import EXIT_NO_DETAIL, EXIT_OK, EXIT_USAGE
from hardening.fast_forward import DetailSwitcher
from hardening.features import FeatureNotSupported, make_release
from hardening.mte_timing import (
    BadMemorySize, kernel_args, make_mte_tag_timing, memory_with_tag_carve_out)
from hardening.numa import NODE_LINK_ROOT, Topology, make_memory
from hardening.params import UnknownParameter, apply_overrides
from hardening.privilege import count_privilege
from hardening.processor import FastForwardProcessor, atomic_processor, detailed_processor
from hardening.progress import CHECK_TICKS, TickLimit
from hardening.runstats import regions_on_the_fast_cpu
from hardening.simulation import BOOT_CLOCK, simulate, stop_event, stopped_early
from hardening.sysreg import GEM5_TIMING, BadSysRegTiming, split_overrides
from hardening.tlbi import TLBI_ROOT, WALKER_ROOT, describe, make_tlbi_timing, stage1_walkers

MODES = ("boot", "measure", "direct")
BOOT_SCRIPT = """\
echo "boot: init is up, taking the checkpoint"
m5 checkpoint
m5 readfile > /run/restored-script
echo "restore: running the host script"
sh /run/restored-script
"""


def add_parsers(sub: argparse._SubParsersAction) -> None:
    for mode in MODES:
        p = sub.add_parser(mode)
        p.add_argument("--vmlinux", type=Path, required=True)
        p.add_argument("--disk", type=Path, required=True)
        p.add_argument("--bootloader", type=Path, required=True)
        p.add_argument("--features", default="", help=f"comma list of {catalog.FEATURES}")
        p.add_argument("--memory", default="1GiB")
        p.add_argument("--cores", type=int, default=1,
                       help=f"cores, 1 to {MAX_CORES}, split evenly over the nodes")
        p.add_argument("--numa-nodes", type=int, default=1,
                       help=f"NUMA nodes: {', '.join(map(str, NODE_COUNTS))} (two: an L3 "
                       "and half the memory each; a restore needs the boot's)")
        p.add_argument("--kernel-arg", action="append", default=[],
                       help="extra kernel command-line argument (repeatable); a restored "
                       "run keeps the boot's")
        p.add_argument("--max-ticks", type=int, default=0,
                       help="stop with exit status 5 after this many ticks (0: no limit)")
        p.add_argument("--check-ticks", type=int, default=CHECK_TICKS,
                       help="simulated ticks between tick-limit and progress checks (to "
                       "show that the checks change no simulated result)")
        if mode != "boot":
            p.add_argument("--script", type=Path, required=True,
                           help="shell script the guest runs")
            p.add_argument("--core", default="cortex-a76",
                           help=f"core model: {', '.join(catalog.CORE_MODULES)}")
            p.add_argument("--param", action="append", default=[],
                           help="override a model parameter, e.g. cpu.numROBEntries=192 or "
                                "sysreg.sctlr.write_latency=4")
            p.add_argument("--check", action="store_true",
                           help="build the model, report bad names, and stop before simulating")
        # The atomic CPU has no core model, so it takes the architecture
        # (the release without the features) from here.
        p.add_argument("--architecture", default="armv8.2",
                       help="base architecture of an atomic run, or of the cores that will "
                       f"restore a boot checkpoint: {', '.join(catalog.ARCHITECTURES)}")
        if mode == "boot":
            p.add_argument("--checkpoint-out", type=Path, required=True)
        if mode == "measure":
            p.add_argument("--checkpoint", type=Path, required=True)
        if mode != "boot":
            p.add_argument("--cpu", choices=catalog.CPU_TYPES,
                           default="o3" if mode == "measure" else "atomic",
                           help="o3: the --core model with its caches; atomic: as the boot")
            p.add_argument("--detail", choices=catalog.DETAILS, default=catalog.DETAIL_FULL,
                           help="o3 only. full: the core model from the start; "
                           "fast-forward: the atomic CPU through the model's caches, "
                           "the core model only between the guest's m5 workbegin and "
                           "workend")
            p.add_argument("--atomic-clock", default=BOOT_CLOCK,
                           help="clock of the atomic CPU (--cpu atomic only): it only sets "
                           "how many instructions a guest second holds, e.g. lower for a "
                           "test that waits guest seconds while a kernel thread spins")


def build(args: argparse.Namespace) -> tuple[object, dict]:
    """The board for this run, and a description of the model for the results."""
    features = catalog.parse_features(args.features)
    topology = Topology(args.cores, args.numa_nodes)
    if "mte" in features and topology.nodes > 1:
        raise BadTopology("the mte feature's tag storage models one memory: it runs on "
                          "one NUMA node only")
    detailed = args.mode != "boot" and args.cpu == "o3"
    detail = getattr(args, "detail", catalog.DETAIL_FULL)
    if args.mode != "boot":
        catalog.check_detail(detail, args.cpu)
    fast_forward = detail == catalog.DETAIL_FAST_FORWARD
    model = load_core(args.core) if detailed else None
    architecture = model.architecture if model else catalog.check_architecture(args.architecture)
    release = make_release(architecture, features)
    overrides = list(getattr(args, "param", []))
    sysreg_overrides, object_overrides = split_overrides(overrides)
    timing = GEM5_TIMING
    # An mte run's memory holds the tag carve-out, on the boot as on the restore.
    memory_size = memory_with_tag_carve_out(args.memory) if "mte" in features else args.memory
    mte_tags = make_mte_tag_timing(features, detailed, args.memory)
    tlbi_timing = make_tlbi_timing(object_overrides) if detailed else None
    if detailed:
        if args.atomic_clock != BOOT_CLOCK:
            raise UnknownParameter("--atomic-clock applies to --cpu atomic only (an o3 run "
                                   "has its core model's clock)")
        if fast_forward:
            processor = FastForwardProcessor(model.make_cpu, args.cores)
            cpus = processor.detailed_cpus()
            topology.place([core.get_simobject() for core in processor.get_cores()])
        else:
            processor = detailed_processor(model.make_cpu, args.cores)
            cpus = [core.get_simobject() for core in processor.get_cores()]
        topology.place(cpus)
        timing = model.sysreg_timing.overridden(sysreg_overrides)
        for cpu in cpus:
            for decoder in cpu.decoder:
                timing.install(decoder)
        hierarchy = PrivateL1L2SharedL3(topology, model.make_l1i, model.make_l1d,
                                        model.make_l2, model.make_l3, mte_tags)
        if mte_tags is not None:
            # A store checked in SYNC mode waits for its tags from here (gem5 0030)
            for cpu in cpus:
                cpu.syncCheckTags = mte_tags
        count_privilege(cpus)
        apply_overrides({
            "cpu": cpus,
            "l1i": hierarchy.l1i, "l1d": hierarchy.l1d, "l2": hierarchy.l2,
            "l3": hierarchy.l3,
            **({NODE_LINK_ROOT: hierarchy.node_links()} if hierarchy.node_links() else {}),
            WALKER_ROOT: stage1_walkers(cpus),
            **({"mte_tags": [mte_tags]} if mte_tags is not None else {}),
            **({TLBI_ROOT: [tlbi_timing]} if tlbi_timing is not None else {}),
        }, object_overrides)
    else:
        if overrides:
            raise UnknownParameter("--param applies to detailed (o3) runs only")
        processor = atomic_processor(args.cores)
        topology.place([core.get_simobject() for core in processor.get_cores()])
        hierarchy = NoCache()
    clock = model.clock if model else getattr(args, "atomic_clock", BOOT_CLOCK)
    memory = make_memory(topology, model.make_memory if model else ddr4_single_channel,
                         memory_size)
    board = make_board(processor, hierarchy, memory, clock, release, topology)
    if tlbi_timing is not None:
        board.tlbi_timing = tlbi_timing
    description = {
        "mode": args.mode,
        "cpu": "o3" if detailed else "atomic",
        "detail": detail if args.mode != "boot" else None,
        "core": model.name if model else None,
        "clock": clock,
        "architecture": architecture,
        "features": list(features),
        "native_features": sorted(model.native_features) if model else None,
        "extensions": [str(e) for e in release.extensions],
        "params": overrides,
        "sysreg_timing": timing.as_dict(),
        "tlbi_timing": describe(tlbi_timing),
        "privilege_cycles": detailed,
        "memory": args.memory,
        "cores": args.cores,
        "numa_nodes": args.numa_nodes,
        "node_link": ({"remote_latency": str(hierarchy.node_links()[0].remote_latency),
                       "snoop_latency": str(hierarchy.node_links()[0].snoop_latency)}
                      if detailed and hierarchy.node_links() else None),
    }
    if "mte" in features:
        description["mte_tag_storage"] = {
            "simulated_memory": memory_size,
            "timing": type(mte_tags).__name__ if mte_tags is not None else None,
        }
    return board, description


def run_simulation(board: object, args: argparse.Namespace, script: str,
                   checkpoint: Path | None, switcher: DetailSwitcher | None = None
                   ) -> tuple[Simulator, TickLimit, str]:
    set_workload(board, args.vmlinux, args.disk, args.bootloader, script, checkpoint,
                 (*args.kernel_arg, *kernel_args(catalog.parse_features(args.features),
                                                 args.memory)))
    return simulate(board, args.max_ticks, args.check_ticks, switcher=switcher)


def main(args: argparse.Namespace) -> int:
    try:
        board, description = build(args)
    except (catalog.UnknownName, FeatureNotSupported, UnknownParameter,
            BadSysRegTiming, BadMemorySize, BadTopology, catalog.BadDetail) as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_USAGE
    if getattr(args, "check", False):
        # Instantiating makes the C++ objects check their own parameters (a
        # BTB size that is not a power of two, say) without simulating.
        set_workload(board, args.vmlinux, args.disk, args.bootloader, "", None,
                     tuple(kernel_args(catalog.parse_features(args.features), args.memory)))
        Simulator(board=board)._instantiate()
        print("model ok")
        return EXIT_OK
    outdir = Path(m5.options.outdir)
    (outdir / "model.json").write_text(json.dumps(description, indent=2) + "\n")

    if args.mode == "boot":
        simulator, limit, cause = run_simulation(board, args, BOOT_SCRIPT, None)
        if stop_event(cause, limit) == ExitEvent.CHECKPOINT:
            simulator.save_checkpoint(args.checkpoint_out)
            print(f"checkpoint saved to {args.checkpoint_out} at tick "
                  f"{simulator.get_current_tick()}")
            return EXIT_OK
        return stopped_early(cause, limit, "the guest's m5 checkpoint")
    script = args.script.read_text()
    checkpoint = args.checkpoint if args.mode == "measure" else None
    processor = board.get_processor()
    switcher = DetailSwitcher(
        args.detail, processor if isinstance(processor, FastForwardProcessor) else None)
    simulator, limit, cause = run_simulation(board, args, script, checkpoint, switcher)
    switcher.write(outdir / "detail.json")
    if stop_event(cause, limit) != ExitEvent.EXIT:
        return stopped_early(cause, limit, "the guest finished")
    if switcher.never_switched:
        print("error: fast-forward run, but the guest never asked for the core model "
              "(m5 workbegin, bench_detail_begin()): nothing was measured in detail",
              file=sys.stderr)
        return EXIT_NO_DETAIL
    stats = outdir / "stats.txt"
    on_fast_cpu = (regions_on_the_fast_cpu(stats.read_text())
                   if switcher.processor is not None and stats.is_file() else [])
    if any(on_fast_cpu):
        print("error: fast-forward run, but a measured region ran (partly) on the fast "
              "CPU: the guest asked for the core model after the region began "
              f"(instructions on the atomic CPU per dump: {on_fast_cpu})", file=sys.stderr)
        return EXIT_NO_DETAIL
    print(f"guest finished at tick {simulator.get_current_tick()}")
    return EXIT_OK
