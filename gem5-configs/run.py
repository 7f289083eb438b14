"""gem5 run script for arm-hardening-gem5 (run it with gem5.opt).

  gem5.opt run.py boot     ... --checkpoint-out DIR   boot (atomic), checkpoint, stop
  gem5.opt run.py measure  ... --checkpoint DIR       restore into a detailed core (or
                                                      --cpu atomic), run the guest
                                                      script, stop at m5 exit
  gem5.opt run.py direct   ... --cpu atomic|o3        boot and run the script, no checkpoint
  gem5.opt run.py arm32    --vmlinux --bootloader --initramfs
                                                      a 32-bit kernel on the atomic CPU
                                                      with an initramfs as the guest
                                                      (hardening/board32.py), until the
                                                      guest's last console line; with
                                                      --checkpoint-out DIR, until the
                                                      init's m5 checkpoint, saved to DIR
  gem5.opt run.py arm32-measure ... --checkpoint DIR  restore that into a 32-bit core
                                                      model (or --cpu atomic), run the
                                                      getppid loop between m5 resetstats
                                                      and dumpstats, stop at m5 exit;
                                                      per-call figures in getppid.json

The guest's init runs whatever script it gets through ``m5 readfile``. The
boot script checkpoints and then reads again, so a run restored from that
checkpoint gets its own script at that point.

Exit status: 0 success; 2 bad arguments or unsupported feature; 3 the guest
script failed (m5 fail); 4 guest kernel panic or oops; 5 tick limit reached
(guest hung or never called m5 exit); 6 unexpected exit event;
7 a fast-forward run whose measured region did not run wholly on the core
model (the guest never asked for it, or asked too late)
(``hardening/exit_codes.py``, which the runner reads too).

``--detail fast-forward`` (measure, direct): the run starts on the atomic CPU
with the core model's caches and switches to the core model only while the
guest asks (``hardening/fast_forward.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import m5  # noqa: E402

from gem5.components.cachehierarchies.classic.no_cache import NoCache  # noqa: E402
from gem5.simulate.exit_event import ExitEvent  # noqa: E402
from gem5.simulate.simulator import Simulator  # noqa: E402

from hardening import catalog  # noqa: E402
from hardening.board import make_board, set_workload  # noqa: E402
from hardening.board32 import KERNEL_ARGS as ARM32_KERNEL_ARGS  # noqa: E402
from hardening.board32 import INIT_GEM5_MARKERS, V2M_SYS_FLAGS  # noqa: E402
from hardening.board32 import Arm32Board, ConsoleWatch  # noqa: E402
from hardening.caches import ClusterL1SharedL2, PrivateL1L2SharedL3  # noqa: E402
from hardening.cores import load_arm32_core, load_core  # noqa: E402
from hardening.cores.base import ddr4_single_channel  # noqa: E402
from hardening.features import FeatureNotSupported, make_release  # noqa: E402
from hardening.mte_timing import (  # noqa: E402
    BadMemorySize, kernel_args, make_mte_tag_timing, memory_with_tag_carve_out)
from hardening.params import UnknownParameter, apply_overrides  # noqa: E402
from hardening.progress import CHECK_TICKS, TickLimit  # noqa: E402
from hardening.runstats import parse_run_stats, regions_on_the_fast_cpu  # noqa: E402
from hardening.sysreg import GEM5_TIMING, BadSysRegTiming, split_overrides  # noqa: E402
from hardening.tlbi import (  # noqa: E402
    TLBI_ROOT, WALKER_ROOT, describe, make_tlbi_timing, stage1_walkers)
from hardening.catalog import MAX_CORES, NODE_COUNTS, BadTopology  # noqa: E402
from hardening.exit_codes import (  # noqa: E402
    EXIT_GUEST_FAILED, EXIT_HUNG, EXIT_KERNEL_PANIC, EXIT_NO_DETAIL, EXIT_OK, EXIT_UNEXPECTED,
    EXIT_USAGE)
from hardening.fast_forward import DetailSwitcher  # noqa: E402
from hardening.numa import NODE_LINK_ROOT, Topology, make_memory  # noqa: E402
from hardening.privilege import count_privilege  # noqa: E402
from hardening.processor import (  # noqa: E402
    FastForwardProcessor, atomic_processor, detailed_processor)

BOOT_CLOCK = "2GHz"  # the atomic boot's clock only sets how fast guest time passes
BOOT_SCRIPT = """\
echo "boot: init is up, taking the checkpoint"
m5 checkpoint
m5 readfile > /run/restored-script
echo "restore: running the host script"
sh /run/restored-script
"""
STOP_EVENTS = (ExitEvent.EXIT, ExitEvent.FAIL, ExitEvent.CHECKPOINT, ExitEvent.KERNEL_PANIC,
               ExitEvent.KERNEL_OOPS, ExitEvent.MAX_TICK, ExitEvent.USER_INTERRUPT)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="run.py")
    sub = parser.add_subparsers(dest="mode", required=True)
    for mode in ("boot", "measure", "direct"):
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
    return parser.parse_args(argv)


def stop_on(events: tuple[ExitEvent, ...]) -> dict:
    """Hand every listed exit event back to main(), which decides what it means."""
    def stop():
        while True:
            yield True
    return {event: stop() for event in events}


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


def is_guest_panic(cause: str) -> bool:
    return "panic" in cause.lower() or "oops" in cause.lower()


def simulate(board, args: argparse.Namespace,
             until: Callable[[], bool] | None = None,
             switcher: DetailSwitcher | None = None) -> tuple[Simulator, TickLimit, str]:
    """Instantiate the board and simulate until an exit event main() decides
    on, the tick limit, or ``until`` holds; the exit event's cause. The guest's
    work items go to ``switcher`` (by default one that ignores them: gem5's
    own handlers would reset and dump the statistics)."""
    limit = TickLimit(board, args.max_ticks, check_ticks=args.check_ticks, until=until)
    switcher = switcher or DetailSwitcher(catalog.DETAIL_FULL, None)
    simulator = Simulator(board=board, on_exit_event={
        **stop_on(STOP_EVENTS), ExitEvent.SCHEDULED_TICK: limit.on_tick_exit(),
        ExitEvent.WORKBEGIN: switcher.on_work_begin(),
        ExitEvent.WORKEND: switcher.on_work_end()})
    # The limit counts from the run's first tick, which a restore sets.
    simulator._instantiate()
    limit.begin()
    try:
        simulator.run()
    except NotImplementedError:
        # gem5 v24's stdlib cannot name the exit event that its own guest
        # panic/oops detection raises ("Kernel panic in simulated kernel").
        if not is_guest_panic(simulator.get_last_exit_event_cause()):
            raise
    return simulator, limit, simulator.get_last_exit_event_cause()


def run_simulation(board, args: argparse.Namespace, script: str, checkpoint: Path | None,
                   switcher: DetailSwitcher | None = None
                   ) -> tuple[ExitEvent, str, Simulator]:
    set_workload(board, args.vmlinux, args.disk, args.bootloader, script, checkpoint,
                 (*args.kernel_arg, *kernel_args(catalog.parse_features(args.features),
                                                 args.memory)))
    simulator, limit, cause = simulate(board, args, switcher=switcher)
    if is_guest_panic(cause):
        return ExitEvent.KERNEL_PANIC, cause, simulator
    if limit.reached:
        return ExitEvent.MAX_TICK, "tick limit", simulator
    return ExitEvent.translate_exit_status(cause), cause, simulator


def run_arm32(args: argparse.Namespace) -> int:
    """Boot a 32-bit kernel into the initramfs's /init and stop at its last line,
    or, with ``--checkpoint-out``, at the init's m5 checkpoint, saved there.
    The console is ``board.terminal`` in the output directory."""
    if not 1 <= args.cores <= MAX_CORES:
        print(f"error: --cores must be 1 to {MAX_CORES}", file=sys.stderr)
        return EXIT_USAGE
    try:
        board = Arm32Board(clk_freq=args.atomic_clock, processor=atomic_processor(args.cores),
                           memory=ddr4_single_channel(args.memory), cache_hierarchy=NoCache())
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_USAGE
    markers = (INIT_GEM5_MARKERS,) if args.checkpoint_out else ()
    board.set_initramfs_workload(args.vmlinux, args.bootloader, args.initramfs,
                                 (*ARM32_KERNEL_ARGS, *args.kernel_arg,
                                  "--", *markers, *args.init_args.split()))
    (Path(m5.options.outdir) / "model.json").write_text(json.dumps({
        "mode": args.mode, "cpu": "atomic", "clock": args.atomic_clock,
        "extensions": [str(e) for e in board.release.extensions],
        "memory": args.memory, "cores": args.cores,
        "cpu_release_addr": hex(V2M_SYS_FLAGS),
        "checkpoint_out": str(args.checkpoint_out) if args.checkpoint_out else None,
    }, indent=2) + "\n")
    console = ConsoleWatch(Path(m5.options.outdir) / "board.terminal")
    simulator, limit, cause = simulate(board, args,
                                       until=lambda: console.last_line() is not None)
    last = console.last_line()
    if args.checkpoint_out and ExitEvent.translate_exit_status(cause) == ExitEvent.CHECKPOINT:
        simulator.save_checkpoint(args.checkpoint_out)
        print(f"checkpoint saved to {args.checkpoint_out} at tick "
              f"{simulator.get_current_tick()}")
        return EXIT_OK
    if limit.done and last is not None:
        print(f"guest finished at tick {simulator.get_current_tick()}: {last}")
        return EXIT_GUEST_FAILED if " error: " in last else EXIT_OK
    if is_guest_panic(cause):
        print(f"error: {cause} (the kernel log is in board.workload.dmesg)", file=sys.stderr)
        return EXIT_KERNEL_PANIC
    if limit.reached:
        print(f"error: tick limit {args.max_ticks} reached before the guest finished",
              file=sys.stderr)
        return EXIT_HUNG
    print(f"error: unexpected exit event: {cause}", file=sys.stderr)
    return EXIT_UNEXPECTED


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
    if not 1 <= args.cores <= MAX_CORES:
        print(f"error: --cores must be 1 to {MAX_CORES}", file=sys.stderr)
        return EXIT_USAGE
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
    simulator, limit, cause = simulate(board, args)
    console = ConsoleWatch(outdir / "board.terminal").read()
    if ExitEvent.translate_exit_status(cause) != ExitEvent.EXIT:
        if is_guest_panic(cause):
            print(f"error: {cause} (the kernel log is in board.workload.dmesg)",
                  file=sys.stderr)
            return EXIT_KERNEL_PANIC
        if limit.reached:
            print(f"error: tick limit {args.max_ticks} reached before the guest's m5 exit",
                  file=sys.stderr)
            return EXIT_HUNG
        print(f"error: unexpected exit event: {cause}", file=sys.stderr)
        return EXIT_UNEXPECTED
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


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.mode == "arm32":
        return run_arm32(args)
    if args.mode == "arm32-measure":
        return run_arm32_measure(args)
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
        event, cause, simulator = run_simulation(board, args, BOOT_SCRIPT, None)
        if event == ExitEvent.CHECKPOINT:
            simulator.save_checkpoint(args.checkpoint_out)
            print(f"checkpoint saved to {args.checkpoint_out} at tick "
                  f"{simulator.get_current_tick()}")
            return EXIT_OK
    else:
        script = args.script.read_text()
        checkpoint = args.checkpoint if args.mode == "measure" else None
        processor = board.get_processor()
        switcher = DetailSwitcher(
            args.detail, processor if isinstance(processor, FastForwardProcessor) else None)
        event, cause, simulator = run_simulation(board, args, script, checkpoint, switcher)
        switcher.write(outdir / "detail.json")
        if event == ExitEvent.EXIT and switcher.never_switched:
            print("error: fast-forward run, but the guest never asked for the core model "
                  "(m5 workbegin, bench_detail_begin()): nothing was measured in detail",
                  file=sys.stderr)
            return EXIT_NO_DETAIL
        stats = outdir / "stats.txt"
        on_fast_cpu = (regions_on_the_fast_cpu(stats.read_text())
                       if event == ExitEvent.EXIT and switcher.processor is not None
                       and stats.is_file() else [])
        if any(on_fast_cpu):
            print("error: fast-forward run, but a measured region ran (partly) on the fast "
                  "CPU: the guest asked for the core model after the region began "
                  f"(instructions on the atomic CPU per dump: {on_fast_cpu})", file=sys.stderr)
            return EXIT_NO_DETAIL
        if event == ExitEvent.EXIT:
            print(f"guest finished at tick {simulator.get_current_tick()}")
            return EXIT_OK
    if event == ExitEvent.FAIL:
        print(f"error: the guest script failed ({cause})", file=sys.stderr)
        return EXIT_GUEST_FAILED
    if event in (ExitEvent.KERNEL_PANIC, ExitEvent.KERNEL_OOPS):
        print(f"error: {cause} (the kernel log is in board.workload.dmesg)", file=sys.stderr)
        return EXIT_KERNEL_PANIC
    if event == ExitEvent.MAX_TICK:
        print(f"error: tick limit {args.max_ticks} reached before the guest finished",
              file=sys.stderr)
        return EXIT_HUNG
    print(f"error: unexpected exit event: {cause}", file=sys.stderr)
    return EXIT_UNEXPECTED


if __name__ == "__m5_main__":
    sys.exit(main(sys.argv[1:]))
