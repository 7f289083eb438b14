"""Build the 32-bit Arm guest: an initramfs whose ``/init`` is the program in
``disk-image/arm32-initramfs`` (claim C3's getppid loop), for QEMU's
vexpress-a15 machine.

The program is compiled static with Debian's ``arm-linux-gnueabihf-gcc`` and
packed with ``/dev/console`` into an uncompressed ``newc`` cpio archive,
written here rather than by ``cpio(1)`` so that the device node needs no root
and every header (inode numbers, times, owners) is fixed: the same inputs give
the same bytes, cached by the hash of the folder, the compiler and the recipe.
"""

from __future__ import annotations

import logging
import stat
from dataclasses import dataclass
from pathlib import Path

from builders import cache
from builders.process import run

log = logging.getLogger(__name__)

CROSS_CC = "arm-linux-gnueabihf-gcc"
RECIPE_VERSION = 1
SOURCE_DIR = "arm32-initramfs"
IMAGE_NAME = "initramfs.cpio"
# 2026-01-01 00:00 UTC, as the disk image's files.
ARCHIVE_TIME = 1767225600
# The console the kernel opens for init's standard streams (char 5:1).
CONSOLE = (5, 1)


@dataclass(frozen=True)
class Member:
    """One archive member: a directory, a regular file or a character device."""

    name: str
    mode: int
    data: bytes = b""
    rdev: tuple[int, int] = (0, 0)


def _pad(length: int) -> bytes:
    return b"\0" * (-length % 4)


def newc_archive(members: list[Member], mtime: int = ARCHIVE_TIME) -> bytes:
    """The members as a ``newc`` (SVR4, no checksum) cpio archive, owned by
    root, numbered in order, ending with the trailer the kernel looks for."""
    out = bytearray()
    for ino, member in enumerate([*members, Member("TRAILER!!!", 0)], start=1):
        name = member.name.encode() + b"\0"
        fields = [ino if member.mode else 0, member.mode, 0, 0,
                  2 if stat.S_ISDIR(member.mode) else 1, mtime if member.mode else 0,
                  len(member.data), 0, 0, *member.rdev, len(name), 0]
        header = b"070701" + b"".join(b"%08X" % field for field in fields)
        out += header + name + _pad(len(header) + len(name))
        out += member.data + _pad(len(member.data))
    return bytes(out)


def build_inputs(disk_dir: Path) -> dict[str, object]:
    return {
        "source": cache.tree_digest(disk_dir / SOURCE_DIR),
        "compiler": run([CROSS_CC, "--version"]).splitlines()[0],
        "recipe": RECIPE_VERSION,
    }


def initramfs_entry(disk_dir: Path) -> cache.Entry:
    """Where the initramfs for these sources is (or will be) cached; builds nothing."""
    return cache.entry("initramfs", build_inputs(disk_dir))


def ensure_initramfs(disk_dir: Path) -> cache.Entry:
    """The initramfs for these sources; built (in seconds) if missing."""
    inputs = build_inputs(disk_dir)
    entry = cache.entry("initramfs", inputs)

    def build() -> None:
        log.info("building the 32-bit Arm initramfs")
        with entry.staging(inputs) as out:
            built = out / "build"
            run(["make", "-s", "-C", str(disk_dir / SOURCE_DIR), f"CC={CROSS_CC}",
                 f"OUT={built}"])
            members = [Member("dev", stat.S_IFDIR | 0o755),
                       Member("dev/console", stat.S_IFCHR | 0o600, rdev=CONSOLE),
                       Member("init", stat.S_IFREG | 0o755, (built / "init").read_bytes())]
            (out / IMAGE_NAME).write_bytes(newc_archive(members))
            (built / "init").rename(out / "init")
            built.rmdir()

    return cache.ensure(entry, "initramfs", build)
