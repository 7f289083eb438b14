"""Claim C3 on QEMU: 32-bit kernel variants, their cache keys, the initramfs
archive and the reading of the guest's console. Nothing here boots or times."""

from __future__ import annotations

import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from builders import cache, initramfs, kernel
from experiments import qemu_arm32

KERNEL_PATCHES = Path(__file__).resolve().parent.parent / "kernel-patches"
SOURCE = kernel.KernelSource(Path("/nowhere/linux.tar.xz"),
                             {"kind": "debian", "package": "linux-source-6.12",
                              "version": "6.12.117-1~deb12u1"})


def _patch_root(tmp_path: Path, arch: str | None) -> Path:
    """A kernel-patches folder with both base fragments and one variant ``v``."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "base.config").write_text("CONFIG_SMP=y\n")
    (tmp_path / "base-arm.config").write_text("CONFIG_MMU=y\n")
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "config").write_text("# CONFIG_X is not set\n")
    if arch is not None:
        (tmp_path / "v" / "arch").write_text(arch + "\n")
    return tmp_path


@pytest.fixture
def compilers(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Compiler identities without running a compiler; records which was asked."""
    asked: list[str] = []

    def identity(arch: kernel.Arch) -> str:
        asked.append(arch.cross_compile)
        return f"{arch.cross_compile}gcc (Debian 12.2.0-14) 12.2.0"

    monkeypatch.setattr(kernel, "compiler_identity", identity)
    return asked


def test_a_variant_without_an_arch_file_is_arm64(tmp_path: Path) -> None:
    assert kernel.variant_arch(_patch_root(tmp_path, None), "v") is kernel.ARCHES["arm64"]
    assert kernel.variant_arch(KERNEL_PATCHES, "baseline").name == "arm64"


@pytest.mark.parametrize("variant", ["arm32-pan-off", "arm32-sw-pan"])
def test_the_c3_variants_are_32_bit_arm_on_their_own_base(variant: str) -> None:
    arch = kernel.variant_arch(KERNEL_PATCHES, variant)
    assert arch.name == "arm" and arch.cross_compile == "arm-linux-gnueabihf-"
    assert [f.name for f in kernel.fragments(KERNEL_PATCHES, variant)] == [
        "base-arm.config", "config"]
    # QEMU's vexpress-a15 needs the compressed kernel and the CoreTile's tree.
    assert {name for name, _ in arch.outputs} == {"zImage", qemu_arm32.DTB}


def test_an_unknown_arch_names_the_valid_ones(tmp_path: Path) -> None:
    with pytest.raises(kernel.UnknownVariant, match="unknown architecture 'riscv'.*arm, arm64"):
        kernel.variant_arch(_patch_root(tmp_path, "riscv"), "v")


def test_arm64_build_inputs_keep_the_shape_their_cached_keys_were_made_of(
        tmp_path: Path, compilers: list[str]) -> None:
    """Kernels, checkpoints and simulations are cached under keys made from
    these inputs before variants had an architecture: any new field would
    rebuild and re-simulate everything."""
    root = _patch_root(tmp_path, None)
    assert kernel.build_inputs(root, "v", SOURCE) == {
        "variant": "v",
        "source": SOURCE.identity,
        "patches": [],
        "config_fragments": [["base.config", cache.file_digest(root / "base.config")],
                             ["config", cache.file_digest(root / "v" / "config")]],
        "compiler": "aarch64-linux-gnu-gcc (Debian 12.2.0-14) 12.2.0",
        "recipe": 1,
    }
    assert compilers == ["aarch64-linux-gnu-"]


def test_an_explicit_arm64_arch_file_changes_no_key(tmp_path: Path,
                                                    compilers: list[str]) -> None:
    implicit = cache.key_of(kernel.build_inputs(_patch_root(tmp_path / "a", None), "v", SOURCE))
    explicit = cache.key_of(kernel.build_inputs(_patch_root(tmp_path / "b", "arm64"), "v",
                                                SOURCE))
    assert implicit == explicit


def test_the_baseline_key_is_the_one_the_committed_results_name(
        compilers: list[str]) -> None:
    # Computed with Debian's compiler and source, the key of baseline's kernel
    # is the one results/syscall.csv was made with: a change to baseline's
    # fragments (or to how kernels are keyed) fails here until the results
    # are made again, instead of passing silently.
    import csv

    results = KERNEL_PATCHES.parent / "results" / "syscall.csv"
    with results.open(newline="") as handle:
        recorded = {row["kernel_build"] for row in csv.DictReader(handle)
                    if row["kernel_variant"] == "baseline"}
    inputs = kernel.build_inputs(KERNEL_PATCHES, "baseline", SOURCE)
    assert recorded == {cache.key_of(inputs)}


def test_a_32_bit_variant_keys_its_architecture_and_compiler(tmp_path: Path,
                                                            compilers: list[str]) -> None:
    root = _patch_root(tmp_path, "arm")
    inputs = kernel.build_inputs(root, "v", SOURCE)
    assert inputs["arch"] == "arm"
    assert inputs["config_fragments"] == [
        ["base-arm.config", cache.file_digest(root / "base-arm.config")],
        ["config", cache.file_digest(root / "v" / "config")]]
    assert compilers == ["arm-linux-gnueabihf-"]


def test_make_env_cross_compiles_for_the_variants_arch(tmp_path: Path) -> None:
    env = kernel.make_env(tmp_path, kernel.ARCHES["arm"])
    assert (env["ARCH"], env["CROSS_COMPILE"]) == ("arm", "arm-linux-gnueabihf-")


def _members() -> list[initramfs.Member]:
    return [initramfs.Member("dev", stat.S_IFDIR | 0o755),
            initramfs.Member("dev/console", stat.S_IFCHR | 0o600, rdev=initramfs.CONSOLE),
            initramfs.Member("init", stat.S_IFREG | 0o755, b"\x7fELF-ish")]


def test_the_initramfs_archive_is_aligned_and_the_same_every_time() -> None:
    archive = initramfs.newc_archive(_members())
    assert archive == initramfs.newc_archive(_members())
    assert archive.startswith(b"070701") and len(archive) % 4 == 0
    assert b"TRAILER!!!\0" in archive


@pytest.mark.skipif(shutil.which("cpio") is None, reason="SKIP: no cpio(1) to read it back")
def test_cpio_reads_the_initramfs_back(tmp_path: Path) -> None:
    listing = subprocess.run(["cpio", "-itv"], input=initramfs.newc_archive(_members()),
                             capture_output=True, check=True).stdout.decode()
    lines = listing.splitlines()
    assert [line.split()[-1] for line in lines] == ["dev", "dev/console", "init"]
    assert lines[1].startswith("crw-------") and "5,   1" in lines[1]
    assert lines[2].startswith("-rwxr-xr-x")


CONSOLE = """\
Booting Linux on physical CPU 0x0
[    0.000000] Linux version 6.12.117 (arm-hardening-gem5@builder)
c3-getppid start kernel=6.12.117 warmup=10000 calls=10000000 runs=2
c3-getppid run=1 calls=10000000 ns=37123456789 us_per_call=3.712\r
[    5.100000] random: crng init done
c3-getppid run=2 calls=10000000 ns=36999999999 us_per_call=3.699
c3-getppid done runs=2
reboot: Power down
"""


def test_the_guest_console_gives_each_run_exactly() -> None:
    runs = qemu_arm32.parse_console(CONSOLE)
    assert [(r.run, r.calls, r.ns) for r in runs] == [(1, 10_000_000, 37_123_456_789),
                                                      (2, 10_000_000, 36_999_999_999)]
    assert runs[0].us_per_call == pytest.approx(3.7123456789)


@pytest.mark.parametrize("console, why", [
    (CONSOLE.replace("c3-getppid done runs=2\n", ""), "did not finish"),
    (CONSOLE.replace("runs=2\nreboot", "runs=3\nreboot"), r"runs \[1, 2\] reported, 3"),
    (CONSOLE.replace("us_per_call=3.699", "us_per_call=3.799"), "does not match"),
    ("c3-getppid error: usage: init [WARMUP CALLS RUNS]\n", "the guest failed: usage"),
])
def test_a_bad_guest_console_is_refused(console: str, why: str) -> None:
    with pytest.raises(qemu_arm32.GuestOutputError, match=why):
        qemu_arm32.parse_console(console)


def test_qemu_boots_the_published_machine_with_the_loop_counts() -> None:
    entry = cache.Entry("kernel", "0123456789abcdef", Path("/cache"))
    argv = qemu_arm32.command(entry, Path("/cache/initramfs.cpio"), 10, 1000, 3)
    assert argv[:5] == ["qemu-system-arm", "-M", "vexpress-a15", "-smp", "2"]
    assert argv[argv.index("-kernel") + 1] == "/cache/kernel/0123456789abcdef/zImage"
    assert argv[argv.index("-dtb") + 1].endswith("/vexpress-v2p-ca15-tc1.dtb")
    assert argv[argv.index("-initrd") + 1] == "/cache/initramfs.cpio"
    assert argv[argv.index("-append") + 1].endswith(" -- 10 1000 3")


def test_the_report_gives_medians_spread_and_ratio() -> None:
    values = {("arm32-pan-off", 1): [4.0, 4.2], ("arm32-pan-off", 2): [3.8, 4.0],
              ("arm32-sw-pan", 1): [16.0, 16.4], ("arm32-sw-pan", 2): [15.6, 16.0]}
    rows: list[dict[str, object]] = [
        {"variant": v, "boot": b, "metric": "getppid_us", "value": str(x)}
        for (v, b), xs in values.items() for x in xs]
    text = qemu_arm32.report(rows)
    assert "arm32-pan-off: median 4.000" in text and "range 3.800-4.200 (10% " in text
    assert "arm32-sw-pan: median 16.000" in text
    assert "software PAN on/off: 4.00x (medians); per boot 3.95x-4.05x" in text
