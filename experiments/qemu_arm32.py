"""Claim C3 on QEMU: getppid() round trips on 32-bit Arm, software PAN off and on.

``python -m experiments qemu-arm32`` (part of ``make qemu-reference``) boots the
``arm32-pan-off`` and ``arm32-sw-pan`` kernels on ``qemu-system-arm -M
vexpress-a15 -smp 2``, the setup of the published measurement, with the
32-bit initramfs (``builders/initramfs.py``), whose ``/init`` times RUNS runs
of CALLS getppid() calls and powers off. The variants take turns boot by boot,
so that a change in the host's load falls on both. It writes
``<results-dir>/c3-arm32-pan-qemu.csv``, one row per (boot, variant, run, metric),
with QEMU's version and the kernel and initramfs builds as provenance, and
logs each variant's median, its spread and the ratio of the medians.

QEMU's times are host times of an emulator, not of any Arm core: what carries
over is the direction and size of the ratio, as the claim says. The guest
times itself with the architected timer, which QEMU runs at host speed, so
the host's other load shows in the numbers; its load average at each boot is
in the CSV.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import statistics
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from builders import cache, initramfs, kernel
from experiments import collect, folders, spec
from experiments.qemu_reference import QemuFailed, emulator_version, pump

log = logging.getLogger(__name__)

EXPERIMENT = "c3-arm32-pan"
QEMU = "qemu-system-arm"
MACHINE = "vexpress-a15"
CPUS = 2
# As published (-M vexpress-a15 -m 2G -smp cpus=2); without HIGHMEM the kernel
# uses the first 760 MiB or so.
MEMORY = "2G"
# Software PAN off first: the ratio is the second over the first.
VARIANTS = ("arm32-pan-off", "arm32-sw-pan")
DTB = "vexpress-v2p-ca15-tc1.dtb"
DEFAULT_BOOTS = 5
DEFAULT_WARMUP = 10_000
DEFAULT_CALLS = 10_000_000
DEFAULT_RUNS = 3
# Far above the published 14.9 µs per call, for a busy host.
TIMEOUT_US_PER_CALL = 200
BOOT_TIMEOUT_S = 300
POWER_OFF_TIMEOUT_S = 60
METRIC = ("getppid_us", "us")
RUN_LINE = re.compile(
    r"^c3-getppid run=(\d+) calls=(\d+) ns=(\d+) us_per_call=(\d+\.\d{3})\s*$")
DONE_LINE = re.compile(r"^c3-getppid done runs=(\d+)\s*$")
ERROR_LINE = re.compile(r"^c3-getppid error: (.*)$")
CSV_COLUMNS = ("experiment", "emulator", "machine", "boot", "variant", "run", "calls",
               "metric", "value", "unit", "qemu_version", "kernel_variant", "kernel_source",
               "kernel_build", "initramfs_build", "host_load", "host_cpus")


class GuestOutputError(ValueError):
    """The guest's console lacks or garbles the lines this module reads."""


@dataclass(frozen=True)
class Run:
    """One timed run of the guest's loop."""

    run: int
    calls: int
    ns: int

    @property
    def us_per_call(self) -> float:
        return self.ns / self.calls / 1000


def parse_console(text: str) -> list[Run]:
    """The runs a guest reported, checked: numbered 1..N without gaps, each
    line's rounded µs consistent with its ns, and the done line saying N."""
    runs: list[Run] = []
    done = None
    for line in text.splitlines():
        line = line.strip()
        if match := ERROR_LINE.match(line):
            raise GuestOutputError(f"the guest failed: {match.group(1)}")
        if match := RUN_LINE.match(line):
            run = Run(int(match.group(1)), int(match.group(2)), int(match.group(3)))
            if run.calls <= 0:
                raise GuestOutputError(f"a run of no calls: {line}")
            # The guest truncates to whole nanoseconds per call.
            if abs(float(match.group(4)) - run.us_per_call) > 0.0011:
                raise GuestOutputError(f"us_per_call does not match ns/calls: {line}")
            runs.append(run)
        elif match := DONE_LINE.match(line):
            done = int(match.group(1))
    if done is None:
        raise GuestOutputError("no 'c3-getppid done' line: the guest did not finish")
    if [r.run for r in runs] != list(range(1, done + 1)):
        raise GuestOutputError(f"runs {[r.run for r in runs]} reported, {done} announced")
    return runs


def command(kernel_entry: cache.Entry, initrd: Path, warmup: int, calls: int,
            runs: int) -> list[str]:
    # What follows "--" on the kernel command line is init's argv.
    append = f"console=ttyAMA0 -- {warmup} {calls} {runs}"
    return [QEMU, "-M", MACHINE, "-smp", str(CPUS), "-m", MEMORY,
            # The board's audio codec would otherwise look for a host sound card.
            "-display", "none", "-audio", "none", "-serial", "stdio", "-monitor", "none",
            "-no-reboot",
            "-kernel", str(kernel_entry.path / "zImage"), "-dtb", str(kernel_entry.path / DTB),
            "-initrd", str(initrd), "-append", append]


def boot(argv: list[str], console_path: Path, timeout_s: float) -> str:
    """Run QEMU until the guest powers off; the console, also kept in
    ``console_path``. Fails on a timeout, or if the guest has not powered off
    a minute after its last line."""
    console_path.parent.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
    console: list[str] = []
    why_killed: list[str] = []

    def kill(why: str) -> None:
        why_killed.append(why)
        process.kill()

    timers = [threading.Timer(timeout_s, kill, [f"no result after {timeout_s:.0f} s"])]
    timers[0].start()
    def watch(line: str) -> None:
        if DONE_LINE.match(line.strip()) or ERROR_LINE.match(line.strip()):
            timers.append(threading.Timer(POWER_OFF_TIMEOUT_S, kill,
                                          ["the guest did not power off"]))
            timers[-1].start()

    try:
        pump(process, console_path, console, watch)
        process.wait()
    finally:
        for timer in timers:
            timer.cancel()
        if process.poll() is None:
            process.kill()
            process.wait()
    if why_killed:
        raise QemuFailed(f"{why_killed[0]}; console tail ({console_path}):\n"
                         + "".join(console[-20:]))
    return "".join(console)


@dataclass(frozen=True)
class Summary:
    """One variant's runs: median, extremes and the per-boot medians."""

    median: float
    low: float
    high: float
    boot_medians: tuple[float, ...]

    @property
    def spread(self) -> float:
        """(max - min) / median."""
        return (self.high - self.low) / self.median


def summarise(values_by_boot: dict[int, list[float]]) -> Summary:
    values = [v for boot in sorted(values_by_boot) for v in values_by_boot[boot]]
    return Summary(statistics.median(values), min(values), max(values),
                   tuple(statistics.median(values_by_boot[b]) for b in sorted(values_by_boot)))


def report(rows: list[dict[str, object]]) -> str:
    """The log's account of the rows: each variant's median and spread, the
    ratio of the medians and the range of the per-boot ratios."""
    by_variant: dict[str, dict[int, list[float]]] = {}
    for row in rows:
        if row["metric"] == METRIC[0]:
            by_variant.setdefault(str(row["variant"]), {}).setdefault(
                int(str(row["boot"])), []).append(float(str(row["value"])))
    summaries = {v: summarise(by_variant[v]) for v in VARIANTS if v in by_variant}
    lines = []
    for variant, s in summaries.items():
        count = sum(len(b) for b in by_variant[variant].values())
        lines.append(f"{variant}: median {s.median:.3f} µs per getppid() over {count} runs "
                     f"in {len(s.boot_medians)} boots, range {s.low:.3f}-{s.high:.3f} "
                     f"({100 * s.spread:.0f}% of the median); per-boot medians "
                     + ", ".join(f"{m:.3f}" for m in s.boot_medians))
    if len(summaries) == len(VARIANTS):
        off, on = (summaries[v] for v in VARIANTS)
        per_boot = [b / a for a, b in zip(off.boot_medians, on.boot_medians)]
        lines.append(f"software PAN on/off: {on.median / off.median:.2f}x (medians); "
                     f"per boot {min(per_boot):.2f}x-{max(per_boot):.2f}x "
                     "(published: 14.9 vs 3.7 µs, about 4x)")
    return "\n".join(lines)


def reference(results_dir: Path, boots: int, warmup: int, calls: int, runs: int,
              jobs: int) -> Path:
    patch_root = spec.REPO_ROOT / "kernel-patches"
    version = emulator_version(QEMU)
    kernels = {v: kernel.ensure_kernel(patch_root, v, jobs) for v in VARIANTS}
    ramdisk = initramfs.ensure_initramfs(spec.REPO_ROOT / "disk-image")
    initrd = ramdisk.path / initramfs.IMAGE_NAME
    timeout_s = BOOT_TIMEOUT_S + (warmup + calls * runs) * TIMEOUT_US_PER_CALL / 1e6
    rows: list[dict[str, object]] = []
    for number in range(1, boots + 1):
        for variant in VARIANTS:
            entry = kernels[variant]
            console_path = (cache.cache_root() / "qemu-reference"
                            / f"{EXPERIMENT}-{variant}-boot{number}.console.log")
            load = os.getloadavg()[0]
            log.info("%s on QEMU %s (%s, %d CPUs): %s, boot %d of %d, %d runs of %d calls, "
                     "host load %.1f; console: %s", EXPERIMENT, version, MACHINE, CPUS,
                     variant, number, boots, runs, calls, load, console_path)
            started = time.monotonic()
            console = boot(command(entry, initrd, warmup, calls, runs), console_path,
                           timeout_s)
            try:
                measured = parse_console(console)
            except GuestOutputError as err:
                raise QemuFailed(f"{console_path}: {err}") from err
            log.info("%s boot %d: %s µs per call (%.0f s)", variant, number,
                     ", ".join(f"{r.us_per_call:.3f}" for r in measured),
                     time.monotonic() - started)
            provenance = {
                "kernel_variant": variant,
                "kernel_source": " ".join(
                    str(v) for v in entry.manifest()["inputs"]["source"].values()),
                "kernel_build": entry.key, "initramfs_build": ramdisk.key}
            rows += [{"experiment": EXPERIMENT, "emulator": "qemu",
                      "machine": f"{MACHINE} -smp {CPUS} -m {MEMORY}", "boot": number,
                      "variant": variant, "run": r.run, "calls": r.calls,
                      "metric": METRIC[0], "value": f"{r.us_per_call:.4f}", "unit": METRIC[1],
                      "qemu_version": version, **provenance, "host_load": f"{load:.2f}",
                      "host_cpus": os.cpu_count()} for r in measured]
    target = results_dir / f"{EXPERIMENT}-qemu.csv"
    collect.write_csv(rows, target, CSV_COLUMNS)
    log.info("wrote %s (%d rows)\n%s", target, len(rows), report(rows))
    return target


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``python -m experiments qemu-arm32``'s arguments."""
    parser.add_argument("--boots", type=int, default=DEFAULT_BOOTS,
                        help="boots per variant (default %(default)s)")
    parser.add_argument("--calls", type=int, default=DEFAULT_CALLS,
                        help="getppid() calls per run (default %(default)s)")
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS,
                        help="timed runs per boot (default %(default)s)")
    parser.add_argument("--warmup", type=int, default=DEFAULT_WARMUP,
                        help="untimed calls before the runs (default %(default)s)")
    folders.results_dir_argument(parser)
    parser.add_argument("-j", "--jobs", type=int, default=2)


def cli(args: argparse.Namespace) -> int:
    """The subcommand: 0 when every reference run succeeded, 1 naming what failed."""
    if min(args.boots, args.calls, args.runs) < 1 or args.warmup < 0:
        logging.error("--boots, --calls and --runs must be positive, --warmup not negative")
        return 2
    try:
        reference(args.results_dir, args.boots, args.warmup, args.calls, args.runs,
                  args.jobs)
    except (QemuFailed, RuntimeError) as err:
        logging.error("%s", err)
        return 1
    return 0
