"""Guest programs are static AArch64 executables, and the image holds what boots."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest

from builders import cache, disk

REPO_ROOT = Path(__file__).resolve().parent.parent
DISK_DIR = REPO_ROOT / "disk-image"
EM_AARCH64 = 183
PT_INTERP = 3


def elf_facts(path: Path) -> tuple[int, bool]:
    """(e_machine, has a PT_INTERP program header) of a 64-bit little-endian ELF."""
    data = path.read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, f"{path} is no ELF64 LE"
    machine = struct.unpack_from("<H", data, 18)[0]
    phoff = struct.unpack_from("<Q", data, 32)[0]
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    types = [struct.unpack_from("<I", data, phoff + i * phentsize)[0] for i in range(phnum)]
    return machine, PT_INTERP in types


@pytest.fixture(scope="module")
def benchmarks(gem5_tools: cache.Entry, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench")
    subprocess.run(["make", "-s", "-C", str(DISK_DIR / "benchmarks"),
                    f"M5_INCLUDE={gem5_tools.path / 'include'}",
                    f"M5_LIB={gem5_tools.path / 'libm5.a'}", f"OUT={out}"], check=True)
    return out


def test_every_benchmark_source_builds(benchmarks: Path) -> None:
    sources = {p.stem for p in (DISK_DIR / "benchmarks").glob("*.c")}
    assert sources and sources == {p.name for p in benchmarks.iterdir()}


def test_benchmarks_are_static_aarch64(benchmarks: Path) -> None:
    for binary in benchmarks.iterdir():
        machine, dynamic = elf_facts(binary)
        assert machine == EM_AARCH64, binary.name
        assert not dynamic, f"{binary.name} is dynamically linked"


def _debugfs(image: Path, request: str) -> str:
    return subprocess.run(["debugfs", "-R", request, str(image)], capture_output=True,
                          text=True, check=True).stdout


def test_disk_image_contents(gem5_tools: cache.Entry) -> None:
    image = disk.ensure_disk(DISK_DIR, gem5_tools, jobs=2).path / disk.IMAGE_NAME
    for directory, names in {
        "/sbin": {"init", "m5"},
        "/bin": {"busybox", "sh", "mount"},
        "/bench": {p.stem for p in (DISK_DIR / "benchmarks").glob("*.c")},
        "/": {"dev", "proc", "sys", "tmp"},
    }.items():
        listed = set(_debugfs(image, f"ls {directory}").split())
        assert names <= listed, f"{directory} lacks {names - listed}"
    init = _debugfs(image, "cat /sbin/init")
    assert init.startswith("#!/bin/sh") and "m5 readfile" in init
    assert "Mode:  0755" in _debugfs(image, "stat /sbin/init")
