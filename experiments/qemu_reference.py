"""Reference runs of a selftests experiment on QEMU instead of gem5.

``python -m experiments qemu-reference mte-selftests`` boots the same kernel
variant and the same disk image on ``qemu-system-aarch64 -machine virt,mte=on
-cpu max`` (Debian's QEMU), runs every selftest of the experiment in one
boot (``qemu_boots`` boots, where verdicts vary from boot to boot), and writes
``<results-dir>/<experiment>-qemu.csv``: one row per (boot, test, metric) like the
gem5 results, with QEMU's version as the provenance. The
figure script puts both verdicts side by side.

The guest's init asks gem5 for its script with ``m5 readfile``; under QEMU
that instruction is undefined, init finds no script and starts a shell on the
console, and this module types the commands into it.
"""

from __future__ import annotations

import argparse
import logging
import re
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from builders import cache, disk
from experiments import collect, folders, gem5_builds, selftests, spec

log = logging.getLogger(__name__)

QEMU = "qemu-system-aarch64"
# The features each gem5 feature set needs from QEMU's machine and CPU.
MACHINE_OPTIONS = {"mte": "mte=on"}
SHELL_READY = "init: no host script; starting a shell"
DONE = "qemu-reference: all tests ran"
# Per test, in host seconds: above the longest guest-side limit (run-selftest's
# 45 s default, or a workload's timeout_s), since QEMU runs near real time.
TIMEOUT_SECONDS = 1200
KERNEL_ARGS = ("console=ttyAMA0", "root=/dev/vda", "rw", "norandmaps")
# No gem5 columns: gem5 takes no part in these runs; the guest is named as in
# gem5's results.
CSV_COLUMNS = ("experiment", "emulator", "boot", "variant", "kernel_args", "features",
               "workload", "metric", "value", "unit", "qemu_version", "kernel_variant", "kernel_source", "kernel_build",
               "disk_build")


class QemuFailed(RuntimeError):
    pass


def pump(process: subprocess.Popen[bytes], console_path: Path, lines: list[str],
         on_line: Callable[[str], None]) -> None:
    """Copy QEMU's console into ``lines`` and ``console_path`` as it comes,
    flushed line by line (a hung guest's last words are on disk), and hand
    each line to ``on_line``."""
    assert process.stdout is not None
    with console_path.open("w") as log_file:
        for raw in process.stdout:
            line = raw.decode(errors="replace")
            lines.append(line)
            log_file.write(line)
            log_file.flush()
            on_line(line)


def emulator_version(binary: str) -> str:
    """What ``binary --version`` says, without its "QEMU emulator version" prefix."""
    try:
        first = subprocess.run([binary, "--version"], capture_output=True, text=True,
                               check=True).stdout.splitlines()[0]
    except (OSError, subprocess.CalledProcessError) as err:
        raise QemuFailed(f"{binary} is not usable ({err}): run 'make deps' "
                         "(installs qemu-system-arm)") from err
    return re.sub(r"^QEMU emulator version\s+", "", first)


def qemu_version() -> str:
    version = emulator_version(QEMU)
    check_mte_reference(version)
    return version


def check_mte_reference(version: str) -> None:
    """Refuse a QEMU whose MTE is known to be wrong."""
    if re.match(r"7\.2\.", version):
        raise QemuFailed(
            f"{QEMU} {version} cannot be the MTE reference: QEMU 7.2 drops the page "
            "offset when it locates allocation tags (QEMU issue 1416, fixed in 8.0), so "
            "one STG tags every other granule of its page and out-of-bounds accesses "
            "next to a tagged object never fault. Install QEMU >= 8.0: on Debian 12 "
            "'make deps' takes it from bookworm-backports")


def command(kernel_image: Path, image: Path, features: tuple[str, ...],
            kernel_args: tuple[str, ...] = (), memory: str = "1GiB") -> list[str]:
    machine = ",".join(["virt", "gic-version=3",
                        *(MACHINE_OPTIONS[f] for f in features if f in MACHINE_OPTIONS)])
    return [QEMU, "-machine", machine, "-cpu", "max", "-smp", "1",
            # QEMU spells 256MiB as 256M.
            "-m", memory.removesuffix("iB"), "-nographic", "-no-reboot",
            "-kernel", str(kernel_image), "-append", " ".join((*KERNEL_ARGS, *kernel_args)),
            # snapshot: the cached image is never written.
            "-drive", f"file={image},format=raw,if=none,id=root,snapshot=on",
            "-device", "virtio-blk-pci,drive=root"]


def run_guest(argv: list[str], commands: list[str], console_path: Path) -> str:
    """Boot, wait for the shell, then type one command at a time, each after
    the previous one's ``selftest-end`` line (a test that reads the console
    would otherwise swallow the commands queued behind it)."""
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
    console: list[str] = []
    ready = threading.Event()
    ended = threading.Semaphore(0)

    def read(line: str) -> None:
        if SHELL_READY in line:
            ready.set()
        elif selftests.END.match(line.strip()):
            ended.release()

    def fail(why: str) -> QemuFailed:
        process.kill()
        return QemuFailed(f"{why}:\n" + "".join(console[-30:]))

    reader = threading.Thread(target=pump, args=(process, console_path, console, read),
                              daemon=True)
    reader.start()
    started = time.monotonic()
    if not ready.wait(timeout=300):
        raise fail("the guest never reached its shell")
    assert process.stdin is not None
    for line in commands:
        process.stdin.write((line + "\n").encode())
        process.stdin.flush()
        if not ended.acquire(timeout=TIMEOUT_SECONDS):
            raise fail(f"no end line for '{line}' after {TIMEOUT_SECONDS} s")
    process.stdin.write(f"echo '{DONE}'; poweroff -f\n".encode())
    process.stdin.flush()
    try:
        process.wait(timeout=120)
    except subprocess.TimeoutExpired:
        raise fail("QEMU did not power off") from None
    reader.join(timeout=10)
    log.info("QEMU ran %d commands in %.0f s", len(commands), time.monotonic() - started)
    return "".join(console)


def reference(name: str, results_dir: Path, jobs: int,
              definitions: Path = spec.DEFINITIONS) -> Path:
    experiment = spec.load(name, definitions)
    if experiment.kind != "selftests":
        raise spec.BadExperiment(f"{name} is not a selftests experiment")
    # One boot per (variant, features, kernel command line); the CPU and core
    # axes are gem5's and do not apply.
    groups: dict[tuple, list[spec.RunSpec]] = {}
    for run in experiment.runs:
        if run.cpu == "atomic" or all(r.cpu != "atomic" for r in experiment.runs):
            groups.setdefault((run.variant, run.features, run.kernel_args, run.memory),
                              []).append(run)
    version = qemu_version()
    builds = gem5_builds.ensure_builds(sorted({k[0] for k in groups}), jobs, simulator=False)
    rows: list[dict[str, object]] = []
    # Consoles are named by feature set too, so that one boot's console does
    # not overwrite another's. (Only mte changes QEMU's command line, so e.g.
    # pac and pac,fpac,bti boot the same max CPU, which has all three, once
    # each, for rows of their own.)
    for (variant, features, kernel_args, memory), runs in groups.items():
        # The command each run's guest script ends with, timeout included.
        commands = {r.workload: r.guest_script().splitlines()[-1] for r in runs}
        workloads = list(commands)
        kernel_image = builds.kernels[variant].path / "Image"
        image = builds.disk.path / disk.IMAGE_NAME
        # The console is evidence, not a result: it stays in the build cache.
        cmdline = f"-{cache.key_of({'kernel_args': list(kernel_args)})}" if kernel_args else ""
        feature_set = "+".join(features) or "none"
        results_dir.mkdir(parents=True, exist_ok=True)
        for boot in range(1, experiment.qemu_boots + 1):
            numbered = f"-boot{boot}" if experiment.qemu_boots > 1 else ""
            console_path = (cache.cache_root() / "qemu-reference"
                            / f"{name}-{variant}-{feature_set}{cmdline}{numbered}.console.log")
            console_path.parent.mkdir(parents=True, exist_ok=True)
            log.info("%s on QEMU (%s): %s%s [%s], %d tests, boot %d of %d; console: %s", name,
                     version, variant, runs[0].cmdline_label, "+".join(features),
                     len(workloads), boot, experiment.qemu_boots, console_path)
            console = run_guest(command(kernel_image, image, features, kernel_args, memory),
                                list(commands.values()), console_path)
            verdicts = {v.test: v for v in selftests.parse(console)}
            for workload in workloads:
                verdict = verdicts.get(workload.args[0])
                if verdict is None:
                    raise QemuFailed(f"no verdict for {workload.args[0]} in {console_path}")
                common = {"experiment": name, "emulator": "qemu", "boot": boot,
                          "variant": variant, "kernel_args": " ".join(kernel_args),
                          "features": "+".join(features) or "none", "workload": workload.name,
                          "qemu_version": version,
                          **{k: v for k, v in builds.guest_provenance(variant).items()
                             if k in CSV_COLUMNS}}
                rows += [{**common, "metric": metric, "value": value, "unit": unit}
                         for metric, value, unit in verdict.metrics()]
    target = results_dir / f"{name}-qemu.csv"
    collect.write_csv(rows, target, CSV_COLUMNS)
    log.info("wrote %s (%d rows)", target, len(rows))
    return target


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``python -m experiments qemu-reference``'s arguments."""
    parser.add_argument("names", nargs="+", help="selftests experiments, e.g. mte-selftests")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    folders.results_dir_argument(parser)


def cli(args: argparse.Namespace) -> int:
    """The subcommand: 0 when every reference run succeeded, 1 naming what failed."""
    try:
        for name in args.names:
            reference(name, args.results_dir, args.jobs, args.definitions)
    except (spec.BadExperiment, QemuFailed, RuntimeError) as err:
        logging.error("%s", err)
        return 1
    return 0
