"""Guest programs are static AArch64 executables, and the image holds what boots."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import time
from pathlib import Path, PurePosixPath

import pytest

from builders import cache, disk, kernel
from support.skips import missing_build

REPO_ROOT = Path(__file__).resolve().parent.parent
DISK_DIR = REPO_ROOT / "disk-image"
RUNNER = DISK_DIR / "rootfs" / "sbin" / "run-selftest"
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


@pytest.mark.needs_build
def test_every_benchmark_source_builds(benchmarks: Path) -> None:
    sources = {p.stem for p in (DISK_DIR / "benchmarks").glob("*.c")}
    assert sources and sources == {p.name for p in benchmarks.iterdir()}


@pytest.mark.needs_build
def test_benchmarks_are_static_aarch64(benchmarks: Path) -> None:
    for binary in benchmarks.iterdir():
        machine, dynamic = elf_facts(binary)
        assert machine == EM_AARCH64, binary.name
        assert not dynamic, f"{binary.name} is dynamically linked"


def _debugfs(image: Path, request: str) -> str:
    return subprocess.run(["debugfs", "-R", request, str(image)], capture_output=True,
                          text=True, check=True).stdout


@pytest.mark.needs_build
def test_disk_image_contents(gem5_tools: cache.Entry) -> None:
    # The cached image, never one built here: a test writes nothing into the
    # user's cache.
    entry = disk.disk_entry(DISK_DIR, gem5_tools)
    if entry is None or not entry.exists():
        missing_build("the disk image", "'make disk'")
    image = entry.path / disk.IMAGE_NAME
    expected = {
        "/sbin": {"init", "m5", "run-selftest"},
        "/bin": {"busybox", "sh", "mount", "timeout"},
        "/bench": {p.stem for p in (DISK_DIR / "benchmarks").glob("*.c")},
        "/": {"dev", "proc", "sys", "tmp", "selftests"},
    }
    for test in disk.selftest_list(DISK_DIR):
        path = PurePosixPath("/selftests", test)
        expected.setdefault(str(path.parent), set()).add(path.name)
    for directory, names in expected.items():
        listed = set(_debugfs(image, f"ls {directory}").split())
        assert names <= listed, f"{directory} lacks {names - listed}"
    init = _debugfs(image, "cat /sbin/init")
    assert init.startswith("#!/bin/sh") and "m5 readfile" in init
    for script in ("/sbin/init", "/sbin/run-selftest"):
        assert "Mode:  0755" in _debugfs(image, f"stat {script}"), script


# --- kernel selftests --------------------------------------------------------


@pytest.fixture(scope="module")
def kernel_tree(linux_tree: Path) -> Path:
    """The unpacked Linux source the kernels and the selftests are built from."""
    return linux_tree


def _selftest_sources(tree: Path) -> list[Path]:
    return sorted((tree / "tools" / "testing" / "selftests").rglob("*"))


def test_selftest_list_is_well_formed() -> None:
    tests = disk.selftest_list(DISK_DIR)
    assert tests, "disk-image/selftests/list names no tests"
    assert len(tests) == len(set(tests)), "a test is listed twice"
    for test in tests:
        path = PurePosixPath(test)
        assert not path.is_absolute() and ".." not in path.parts and str(path) == test, test
        assert path.suffix != ".c", f"{test}: name the program, not its source"


def _is_selftest_program(selftests: Path, test: str) -> bool:
    """A program built from its own source, or one its directory's Makefile names
    (arm64/bti builds btitest and nobtitest from one source with different flags)."""
    program = selftests / test
    if program.with_suffix(".c").is_file():
        return True
    makefile = program.parent / "Makefile"
    if not makefile.is_file():
        return False
    return any(line.split(":=", 1)[0].strip().startswith("TEST_GEN_PROGS")
               and program.name in line.split(":=", 1)[1].split()
               for line in makefile.read_text().splitlines() if ":=" in line)


def test_listed_selftests_exist_in_kernel_tree(kernel_tree: Path) -> None:
    selftests = kernel_tree / "tools" / "testing" / "selftests"
    missing = [t for t in disk.selftest_list(DISK_DIR)
               if not _is_selftest_program(selftests, t)]
    assert not missing, f"not selftest programs of {kernel_tree.name}: {missing}"


def test_every_mte_selftest_is_listed(kernel_tree: Path) -> None:
    mte = kernel_tree / "tools" / "testing" / "selftests" / "arm64" / "mte"
    # What arm64/mte/Makefile builds: every source but the shared helper.
    programs = {f"arm64/mte/{p.stem}" for p in mte.glob("*.c") if p.stem != "mte_common_util"}
    assert programs and programs <= set(disk.selftest_list(DISK_DIR)), \
        f"not listed: {sorted(programs - set(disk.selftest_list(DISK_DIR)))}"


@pytest.fixture(scope="module")
def selftests(kernel_tree: Path, tmp_path_factory: pytest.TempPathFactory
              ) -> tuple[Path, bool]:
    """The listed selftests built as the disk builder builds them, and whether
    the shared source tree's selftests folder stayed as it was."""
    before = _selftest_sources(kernel_tree)
    scratch = tmp_path_factory.mktemp("selftests")
    disk.build_selftests(DISK_DIR, kernel_tree, 2, scratch / "build", scratch / "out")
    return scratch / "out", _selftest_sources(kernel_tree) == before


def test_every_listed_selftest_builds(selftests: tuple[Path, bool]) -> None:
    out, _ = selftests
    built = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert built == set(disk.selftest_list(DISK_DIR))


def test_selftests_are_static_aarch64(selftests: tuple[Path, bool]) -> None:
    out, _ = selftests
    for test in disk.selftest_list(DISK_DIR):
        machine, dynamic = elf_facts(out / test)
        assert machine == EM_AARCH64, test
        assert not dynamic, f"{test} is dynamically linked"


def test_selftest_build_leaves_kernel_tree_alone(selftests: tuple[Path, bool]) -> None:
    _, untouched = selftests
    assert untouched, "building the selftests wrote into the shared kernel source tree"


# --- the guest-side runner, run by the host's sh against a fake test ------------

FAKE_TEST = """#!/bin/sh
echo "TAP version 13"
echo "# cwd=$PWD args=$*"
echo "# to stderr" >&2
[ -z "$FAKE_SLEEP" ] || sleep "$FAKE_SLEEP"
exit "${FAKE_STATUS:-0}"
"""


@pytest.fixture
def selftest_root(tmp_path: Path) -> Path:
    program = tmp_path / "arm64" / "fake" / "check_fake"
    program.parent.mkdir(parents=True)
    program.write_text(FAKE_TEST)
    program.chmod(0o755)
    return tmp_path


def _run_selftest(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", str(RUNNER), *args], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "SELFTEST_ROOT": str(root), **env})


@pytest.mark.parametrize("status", [0, 4, 1])
def test_run_selftest_frames_the_test_output(selftest_root: Path, status: int) -> None:
    result = _run_selftest(selftest_root, "arm64/fake/check_fake", "-a", "b c",
                           FAKE_STATUS=str(status))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "selftest-begin arm64/fake/check_fake"
    assert lines[-1] == f"selftest-end arm64/fake/check_fake status={status}"
    between = lines[1:-1]
    assert between[0] == "TAP version 13"
    assert f"# cwd={selftest_root / 'arm64' / 'fake'} args=-a b c" in between
    assert "# to stderr" in between


def test_run_selftest_reports_a_missing_test(selftest_root: Path) -> None:
    result = _run_selftest(selftest_root, "arm64/fake/absent")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "selftest-begin arm64/fake/absent"
    assert lines[-1] == "selftest-end arm64/fake/absent status=127"


def test_run_selftest_needs_a_path() -> None:
    result = subprocess.run(["sh", str(RUNNER)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "usage" in result.stderr


@pytest.mark.skipif(shutil.which("timeout") is None, reason="SKIP: the host has no timeout")
def test_run_selftest_stops_a_hung_test(selftest_root: Path) -> None:
    started = time.monotonic()
    result = _run_selftest(selftest_root, "arm64/fake/check_fake", FAKE_SLEEP="30",
                           SELFTEST_TIMEOUT="1")
    assert time.monotonic() - started < 20
    assert result.returncode == 0
    end = result.stdout.splitlines()[-1]
    assert end.startswith("selftest-end arm64/fake/check_fake status=")
    # coreutils' timeout says 124; busybox's (the guest's) kills with SIGTERM: 143.
    assert int(end.rsplit("=", 1)[1]) not in (0, 4)


def test_image_does_not_depend_on_when_it_was_built(tmp_path: Path) -> None:
    """Two builds of the same tree, a second apart and with files touched in
    between, give the same bytes: no build time reaches the image."""
    images = []
    for attempt in range(2):
        stage = tmp_path / f"stage{attempt}"
        (stage / "bin").mkdir(parents=True)
        (stage / "bin" / "tool").write_text("same content\n")
        (stage / "bin" / "link").symlink_to("tool")
        images.append(tmp_path / f"image{attempt}.ext4")
        disk.make_image(stage, images[-1])
        time.sleep(1.1)
    assert images[0].read_bytes() == images[1].read_bytes()
