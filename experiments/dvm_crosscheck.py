"""The DVM cross-check: our classic-memory TLB-maintenance model (gem5 patches
0014 and 0028) against gem5's own Ruby CHI DVM implementation, on one
bare-metal loop (``disk-image/dvm-loop``) at 4 to 32 simulated cores.

Core 0 times rounds of N broadcast ``tlbi vale1is`` and one ``dsb ish``; the
other cores wait (idle) or run the same loop (busy), so their broadcasts
contend. Every arm runs through gem5's ``fs.py`` (``gem5-configs/dvm_crosscheck.py``)
with the same generic O3 CPU, platform and guest; the memory system and its DVM
path differ:

* ``gem5``: classic memory, gem5's timing (a broadcast reaches every core in
  zero time; the DSB is an ordinary drain);
* ``model``: classic memory with claim C5's assumed costs (500 ns per
  broadcast, 20 ns per other core), no distributor;
* ``model-distributor``: the same with one system-wide distributor at 1 ns
  per target (the burst check's assumption);
* ``ruby-chi``: gem5's Ruby CHI with ``--enable-dvm``: one misc node sends
  each DVM operation to every core, one operation at a time;
* ``ruby-chi-no-dvm``: the same Ruby CHI without ``--enable-dvm`` (a TLBI
  reaches every core in zero time, as in ``gem5``): what the CHI memory
  system alone costs the loop.

A run is cached like a simulation (``dvm-runs/<key>``, keyed by the gem5
build, the guest image, the cached copy of ``gem5-configs/`` gem5 runs and
every argument; the repository's commit is recorded when it runs); the CSV is
made again from the cache on every invocation.
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from builders import baremetal, cache, gem5
from experiments import collect, folders, gem5_builds, stats
from experiments.raw_outputs import tail
from experiments.simulate import RepoState
from experiments.spec import REPO_ROOT

log = logging.getLogger(__name__)

NAME = "dvm-crosscheck"
# gem5-configs/'s entry point, run from the cached copy (gem5_builds.snapshot_configs).
SCRIPT_NAME = "dvm_crosscheck.py"
# gem5's own scripts, from the patched work tree the binaries were built in
# (no patch of the series touches configs/).
FS_SCRIPT = Path("configs/deprecated/example/fs.py")
GEM5_SCRIPTS = (FS_SCRIPT, Path("configs/ruby/CHI.py"), Path("configs/ruby/CHI_config.py"),
                Path("configs/common/FSConfig.py"), Path("configs/common/CacheConfig.py"))
# Claim C5's assumed TLBI costs (docs/parameter-sources.md), here with the
# simulated core counts.
C5_ASSUMED = ("tlbi.broadcast_completion=500ns", "tlbi.per_other_core=20ns",
              "tlbi.per_other_node=200ns")


@dataclass(frozen=True)
class Arm:
    name: str
    memory: str  # a builders.gem5.MEMORY_SYSTEMS key
    params: tuple[str, ...] = ()
    # Ruby CHI only: TLBIs travel as DVM operations through its misc node.
    dvm: bool = False

    def fs_args(self) -> list[str]:
        if self.memory == "ruby-chi":
            return ["--ruby", *(["--enable-dvm"] if self.dvm else [])]
        return ["--caches", "--l2cache"]


ARMS = {arm.name: arm for arm in (
    Arm("gem5", "classic"),
    Arm("model", "classic", C5_ASSUMED),
    Arm("model-distributor", "classic", (*C5_ASSUMED, "tlbi.distributor_per_target=1ns")),
    Arm("ruby-chi", "ruby-chi", dvm=True),
    Arm("ruby-chi-no-dvm", "ruby-chi"),
)}
CORE_COUNTS = (4, 8, 16, 32)
# Ruby's sets of controllers hold NUMBER_BITS_PER_SET (builders/gem5.py) and a
# CHI system has three cache controllers per core.
CHI_CONTROLLERS_PER_CORE = 3
COLUMNS = ("experiment", "arm", "memory", "cores", "tlbis", "peers", "rounds", "params",
           "metric", "value", "unit", "gem5_version", "gem5_build", "gem5_patches",
           "guest_build", "configs_hash", "repo_commit", "repo_dirty", "host_seconds")
# Our TLBI model's statistics, where the arm has it: every core's DSBs, so
# with busy peers they count the peers' waits too.
MODEL_STATS = {"system_dsb_waits": ("system.tlbi_timing.dsbWaits", 1, "count"),
               "system_dsb_wait_ns": ("system.tlbi_timing.dsbWaitTicks", 1000, "ns")}


class CrossCheckFailed(RuntimeError):
    pass


@dataclass(frozen=True)
class Point:
    arm: Arm
    cores: int
    tlbis: int
    peers: str

    @property
    def label(self) -> str:
        return f"{self.arm.name} {self.cores} cores tlbi{self.tlbis}-{self.peers}"


@dataclass(frozen=True)
class Inputs:
    """What every run shares: the builds, our configs' cached copy, gem5's
    scripts and the repository's state when the runs were asked for."""

    gem5_entries: dict[str, cache.Entry]
    guest: cache.Entry
    configs: cache.Entry
    gem5_src: Path
    repo: RepoState

    def fs_script(self) -> Path:
        return self.gem5_src / FS_SCRIPT

    @property
    def configs_hash(self) -> str:
        return str(self.configs.manifest()["inputs"]["code"])[:16]


def gem5_scripts_hash(src: Path) -> str:
    return cache.key_of({str(p): cache.file_digest(src / p) for p in GEM5_SCRIPTS})


def run_inputs(point: Point, inputs: Inputs) -> dict[str, object]:
    return {
        "gem5": inputs.gem5_entries[point.arm.memory].key,
        "guest": inputs.guest.key,
        "image": baremetal.dvm_loop_image(point.tlbis, point.peers),
        "cores": point.cores,
        "params": list(point.arm.params),
        "fs_args": fs_args(point, inputs.guest),
        "code": inputs.configs_hash,
        "gem5_scripts": gem5_scripts_hash(inputs.gem5_src),
    }


def fs_args(point: Point, guest: cache.Entry) -> list[str]:
    image = guest.path / baremetal.dvm_loop_image(point.tlbis, point.peers)
    return ["--bare-metal", f"--kernel={image}", "--machine-type=VExpress_GEM5_V2",
            f"--num-cpus={point.cores}", "--cpu-type=ArmO3CPU", *point.arm.fs_args()]


def simulate(point: Point, inputs: Inputs, runs_root: Path | None = None) -> cache.Entry:
    """The point's run from the cache (``runs_root``: the build cache's), or
    simulated into it."""
    run_in = run_inputs(point, inputs)
    entry = cache.entry("dvm-runs", run_in, runs_root)

    def build() -> None:
        with entry.staging(run_in) as out:
            command = [str(gem5.entry_binary(inputs.gem5_entries[point.arm.memory])),
                       "-d", str(out / "m5out"), str(inputs.configs.path / SCRIPT_NAME),
                       f"--fs-script={inputs.fs_script()}",
                       *(f"--param={p}" for p in point.arm.params),
                       "--", *fs_args(point, inputs.guest)]
            log.info("start: %s", point.label)
            started = time.monotonic()
            with (out / "gem5.log").open("w") as gem5_log:
                done = subprocess.run(command, stdout=gem5_log, stderr=subprocess.STDOUT,
                                      check=False, cwd=inputs.gem5_src)
            seconds = time.monotonic() - started
            console = (out / "gem5.log").read_text(errors="replace")
            if done.returncode != 0 or "m5_exit instruction encountered" not in console:
                raise CrossCheckFailed(
                    f"{point.label}: gem5 exited {done.returncode} without the guest's "
                    f"m5 exit; last lines:\n{tail(out / 'gem5.log')}")
            (out / "host.json").write_text(json.dumps({
                "host_seconds": round(seconds, 1), "repo_commit": inputs.repo.commit,
                "repo_dirty": inputs.repo.dirty}))
            log.info("done: %s in %.0f s", point.label, seconds)

    return cache.ensure(entry, f"dvm run {point.label}", build)


def rows_of(point: Point, entry: cache.Entry, inputs: Inputs) -> list[dict[str, object]]:
    dumps = stats.read_dumps(entry.path / "m5out" / "stats.txt")
    if not dumps:
        raise CrossCheckFailed(f"{point.label}: no statistics dump in {entry.path}")
    region = dumps[0]  # the guest's dump after its timed rounds
    rounds = baremetal.DVM_LOOP_ROUNDS
    ns = region["simTicks"] / 1000
    metrics: list[tuple[str, float, str]] = [
        ("ns_per_round", ns / rounds, "ns"),
        ("ns_per_tlbi", ns / (rounds * point.tlbis), "ns"),
    ]
    for metric, (name, scale, unit) in MODEL_STATS.items():
        if name in region:
            metrics.append((f"{metric}_per_round", region[name] / scale / rounds, unit))
    gem5_entry = inputs.gem5_entries[point.arm.memory]
    host = json.loads((entry.path / "host.json").read_text())
    common = {"experiment": NAME, "arm": point.arm.name, "memory": point.arm.memory,
              "cores": point.cores, "tlbis": point.tlbis, "peers": point.peers,
              "rounds": rounds, "params": " ".join(point.arm.params),
              "gem5_version": gem5.GEM5_VERSION, "gem5_build": gem5_entry.key,
              "gem5_patches": gem5.patch_ids(gem5_entry), "guest_build": inputs.guest.key,
              "configs_hash": entry.manifest()["inputs"]["code"],
              "repo_commit": host["repo_commit"], "repo_dirty": host["repo_dirty"],
              "host_seconds": host["host_seconds"]}
    return [{**common, "metric": m, "value": round(v, 3), "unit": u} for m, v, u in metrics]


def prepare(arms: Sequence[Arm], guest_root: Path | None = None) -> Inputs:
    """The cached builds every run needs; a missing gem5 binary is an error
    naming the command that builds it (the Ruby one is a 1-2 h compile)."""
    patch_dir = REPO_ROOT / "gem5-patches"
    entries: dict[str, cache.Entry] = {}
    for memory in sorted({arm.memory for arm in arms}):
        entry = gem5.gem5_entry(patch_dir, gem5.Gem5BuildOptions.for_memory(memory))
        if not entry.usable():
            raise CrossCheckFailed(
                f"no gem5 build with the {memory} memory system in the cache "
                f"({entry.path}); build it with: python -m builders gem5 --memory {memory}")
        entries[memory] = entry
    tools = gem5.tools_entry(patch_dir)
    if not tools.usable():
        raise CrossCheckFailed("no gem5 tools in the cache; build them with: make gem5")
    src = gem5.worktree_src()
    if not (src / FS_SCRIPT).is_file():
        raise CrossCheckFailed(f"gem5's work tree ({src}) has no {FS_SCRIPT}: make gem5 "
                               "leaves it there")
    guest = baremetal.ensure_dvm_loop(REPO_ROOT / "disk-image", tools, guest_root)
    return Inputs(entries, guest, gem5_builds.snapshot_configs(), src, RepoState.read())


def crosscheck(arms: Sequence[Arm], core_counts: Sequence[int], tlbis: Sequence[int],
               peers: Sequence[str], results_dir: Path, jobs: int,
               runs_root: Path | None = None) -> Path:
    """Run (or find) every point and write ``<results_dir>/dvm-crosscheck.csv``.
    ``runs_root`` puts the guest build and the runs in another cache (tests)."""
    inputs = prepare(arms, runs_root)
    points = [Point(arm, cores, t, p) for arm in arms for cores in core_counts
              for t in tlbis for p in peers]
    log.info("%s: %d runs (up to %d at a time)", NAME, len(points), jobs)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        entries = list(pool.map(lambda point: simulate(point, inputs, runs_root), points))
    rows = [row for point, entry in zip(points, entries, strict=True)
            for row in rows_of(point, entry, inputs)]
    results_dir.mkdir(parents=True, exist_ok=True)
    target = results_dir / f"{NAME}.csv"
    collect.write_csv(rows, target, COLUMNS)
    log.info("wrote %s (%d rows)", target, len(rows))
    return target


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``python -m experiments dvm-crosscheck``'s arguments."""
    parser.add_argument("--arm", action="append", choices=tuple(ARMS), dest="arms",
                        help="DVM model(s) to run (default: all)")
    parser.add_argument("--cores", type=int, nargs="+", default=list(CORE_COUNTS),
                        help="simulated core counts (default: 4 8 16 32)")
    parser.add_argument("--tlbis", type=int, nargs="+", default=list(baremetal.DVM_LOOP_TLBIS),
                        choices=baremetal.DVM_LOOP_TLBIS, help="broadcast TLBIs per DSB")
    parser.add_argument("--peers", nargs="+", default=list(baremetal.DVM_LOOP_PEERS),
                        choices=baremetal.DVM_LOOP_PEERS,
                        help="the other cores wait (idle) or broadcast too (busy)")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    folders.results_dir_argument(parser)


def usage_error(args: argparse.Namespace, arms: Sequence[Arm]) -> str | None:
    """What is wrong with the arguments, in one line, or None."""
    if args.jobs < 1:
        return f"-j {args.jobs}: at least 1"
    if any(n < 2 for n in args.cores):
        return (f"--cores {' '.join(map(str, args.cores))}: a broadcast needs at least "
                "2 cores")
    if any(arm.memory == "ruby-chi" for arm in arms):
        bits = int(gem5.MEMORY_SYSTEMS["ruby-chi"]["NUMBER_BITS_PER_SET"])
        most = bits // CHI_CONTROLLERS_PER_CORE
        if max(args.cores) > most:
            return (f"--cores {max(args.cores)}: the Ruby CHI build simulates at most {most} "
                    f"cores (NUMBER_BITS_PER_SET {bits}, {CHI_CONTROLLERS_PER_CORE} caches "
                    "per core)")
    return None


def cli(args: argparse.Namespace) -> int:
    """0 when every point ran, 1 naming what failed, 2 for bad arguments."""
    arms = [ARMS[name] for name in (args.arms or ARMS)]
    if (problem := usage_error(args, arms)) is not None:
        logging.error("%s", problem)
        return 2
    try:
        crosscheck(arms, args.cores, args.tlbis, args.peers, args.results_dir, args.jobs)
    except (RuntimeError, FileNotFoundError) as err:  # CommandFailed is a RuntimeError
        logging.error("%s", err)
        return 1
    return 0
