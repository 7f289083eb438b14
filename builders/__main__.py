"""Command line for the builders:
``python -m builders {gem5,gem5-arm32,kernel,disk,initramfs,dist} ...``."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from builders import buildroot, disk, dist, gem5, initramfs, kernel
from builders.process import CommandFailed

REPO_ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m builders")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("-v", "--verbose", action="store_true")
    sub = parser.add_subparsers(dest="what", required=True)
    g = sub.add_parser("gem5", help="build gem5 + m5 + bootloaders into the cache")
    g.add_argument("--print-path", action="store_true",
                   help="print the cache entry path only (build if missing)")
    g.add_argument("--variant", choices=gem5.VARIANTS, default="opt",
                   help="gem5's binary: opt (the default; asserts, debug output for traces) "
                   "or fast (neither; a second full compile)")
    g.add_argument("--memory", choices=tuple(gem5.MEMORY_SYSTEMS), default="classic",
                   help="classic (every experiment's) or ruby-chi (gem5's Ruby CHI protocol, "
                   "for the DVM cross-check only; a binary of its own)")
    sub.add_parser("gem5-arm32", help="build gem5's 32-bit Arm bootloader (boot.arm) into "
                   "the cache, for the arm32 kernel variants on gem5")
    k = sub.add_parser("kernel", help="build one or more kernel variants")
    k.add_argument("variants", nargs="*", help="variant names (default: all)")
    d = sub.add_parser("disk", help="build the guest disk image")
    d.add_argument("--rootfs", choices=tuple(buildroot.ROOTFS_BUILDERS), default="debian",
                   help="debian: Debian's busybox-static + our programs (the default image); "
                   "buildroot: the same contents built by Buildroot (disk-image/buildroot)")
    sub.add_parser("initramfs", help="build the 32-bit Arm initramfs (claim C3 on QEMU)")
    dist.add_arguments(sub.add_parser(
        "dist", help="write one archive of every pinned input, with checksums (make dist)"))
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(message)s", datefmt="%H:%M:%S")
    try:
        if args.what == "gem5":
            tools = gem5.ensure_tools(REPO_ROOT / "gem5-patches", args.jobs)
            print(tools.path)
            entry = gem5.ensure_gem5(REPO_ROOT / "gem5-patches", args.jobs,
                                     options=gem5.Gem5BuildOptions.for_memory(
                                         args.memory, args.variant))
            print(entry.path)
        elif args.what == "gem5-arm32":
            entry = gem5.ensure_arm32_tools(REPO_ROOT / "gem5-patches")
            print(entry.path / gem5.ARM32_BOOTLOADER)
        elif args.what == "kernel":
            patch_root = REPO_ROOT / "kernel-patches"
            for name in args.variants or kernel.variants(patch_root):
                print(kernel.ensure_kernel(patch_root, name, args.jobs).path)
        elif args.what == "disk":
            tools = gem5.ensure_tools(REPO_ROOT / "gem5-patches", args.jobs)
            entry = buildroot.ensure_rootfs(args.rootfs, REPO_ROOT / "disk-image", tools,
                                            args.jobs)
            print(entry.path / disk.IMAGE_NAME)
        elif args.what == "dist":
            return dist.run_dist(args, REPO_ROOT)
        elif args.what == "initramfs":
            print(initramfs.ensure_initramfs(REPO_ROOT / "disk-image").path / initramfs.IMAGE_NAME)
    except (CommandFailed, RuntimeError, FileNotFoundError) as err:
        logging.error("%s", err)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
