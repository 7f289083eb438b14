"""Kernel variants: names, and config fragments that survive Kconfig intact."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from builders import kernel, process

KERNEL_PATCHES = Path(__file__).resolve().parent.parent / "kernel-patches"


def test_baseline_variant_exists() -> None:
    assert "baseline" in kernel.variants(KERNEL_PATCHES)


def test_unknown_variant_names_the_valid_ones() -> None:
    with pytest.raises(kernel.UnknownVariant, match="valid variants: .*baseline"):
        kernel.variant_dir(KERNEL_PATCHES, "no-such-variant")


def test_parse_config_reads_set_and_unset() -> None:
    parsed = kernel.parse_config("CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=\"x\"\n")
    assert parsed == {"CONFIG_A": "y", "CONFIG_B": "n", "CONFIG_C": '"x"'}


def test_dropped_options_reports_each_mismatch() -> None:
    requested = {"CONFIG_A": "y", "CONFIG_B": "n", "CONFIG_C": "y"}
    final = {"CONFIG_A": "y", "CONFIG_C": "n"}
    assert kernel.dropped_options(requested, final) == ["CONFIG_C=y (final: n)"]


@pytest.mark.parametrize("variant", kernel.variants(KERNEL_PATCHES))
def test_fragments_merge_without_dropped_options(variant: str, tmp_path: Path,
                                                 linux_tree: Path) -> None:
    final = kernel.merged_config(KERNEL_PATCHES, variant, tmp_path, linux_tree)
    requested = kernel.requested_config(KERNEL_PATCHES, variant)
    assert kernel.dropped_options(requested, final) == []
    if kernel.variant_arch(KERNEL_PATCHES, variant).name == "arm":
        # Claim C3's variants say whether they use domain-based software PAN.
        assert final.get("CONFIG_CPU_SW_DOMAIN_PAN", "n") == requested["CONFIG_CPU_SW_DOMAIN_PAN"]
        return
    # The features under study are compiled into every arm64 variant that does
    # not turn one off on purpose (pac-off).
    for feature in ("CONFIG_ARM64_PAN", "CONFIG_ARM64_PTR_AUTH_KERNEL", "CONFIG_ARM64_MTE",
                    "CONFIG_ARM64_POE"):
        assert final.get(feature, "n") == requested.get(feature, "y"), feature


def test_a_resumed_build_rebuilds_what_the_stopped_one_wrote_last(tmp_path: Path) -> None:
    """A killed build's newest files may be half-written; older ones are kept."""
    objdir = tmp_path / "obj"
    (objdir / "drivers").mkdir(parents=True)
    done, half_written = objdir / "init.o", objdir / "drivers" / ".bus.o.cmd"
    done.write_text("complete")
    half_written.write_text("cmd_drivers/bus.o := $(wildcard")
    stopped_at = 1_700_000_000.0
    os.utime(done, (stopped_at - 3600, stopped_at - 3600))
    os.utime(half_written, (stopped_at, stopped_at))
    kernel.discard_last_writes(objdir, "baseline")
    assert done.exists() and not half_written.exists()
    kernel.discard_last_writes(tmp_path / "never-built", "baseline")


def test_a_failed_parallel_build_names_its_error_line_even_when_it_scrolled_away() -> None:
    script = ("echo 'drivers/amba/.bus.o.cmd:5: *** unterminated call.  Stop.'; "
              "for i in $(seq 100); do echo \"  CC      net/core/x$i.o\"; done; exit 2")
    with pytest.raises(process.CommandFailed, match=r"error lines:\n.*\*\*\* unterminated"):
        process.run_streaming(["bash", "-c", script], label="kernel test")


def test_tests_read_the_cached_source_or_unpack_their_own(tmp_path: Path) -> None:
    tarball = tmp_path / "linux.tar"
    (tmp_path / "pack" / "linux-6.12").mkdir(parents=True)
    (tmp_path / "pack" / "linux-6.12" / "Makefile").write_text("# top\n")
    subprocess.run(["tar", "-cf", str(tarball), "-C", str(tmp_path / "pack"), "linux-6.12"],
                   check=True)
    source = kernel.KernelSource(tarball, {"kind": "test"})
    root, scratch = tmp_path / "cache", tmp_path / "scratch"
    root.mkdir()
    scratch.mkdir()
    unpacked = kernel.readable_tree(root, source, scratch)
    assert (unpacked / "Makefile").read_text() == "# top\n"
    assert unpacked.is_relative_to(scratch) and not any(root.iterdir()), \
        "a test's unpacking went into the build cache"
    cached = kernel.pristine_path(root, source)
    cached.mkdir(parents=True)
    (cached / "Makefile").write_text("# cached\n")
    assert kernel.readable_tree(root, source, tmp_path / "unused") == cached


def test_kbuild_never_sees_the_calling_makes_variables(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    """``make kernel VARIANT=x`` passes its variables down in MAKEFLAGS, and a
    shell's LOCALVERSION or KBUILD_OUTPUT would rename or move the kernel a key
    names; kbuild gets none of them, and keeps the rest of the environment."""
    for name, value in {"MAKEFLAGS": " -- VARIANT=baseline", "MAKELEVEL": "1",
                        "LOCALVERSION": "-mine", "KBUILD_OUTPUT": "/elsewhere",
                        "PATH": "/usr/bin"}.items():
        monkeypatch.setenv(name, value)
    env = kernel.make_env(tmp_path, kernel.ARCHES["arm64"])
    assert not {"MAKEFLAGS", "MAKELEVEL", "LOCALVERSION", "KBUILD_OUTPUT"} & set(env)
    assert env["PATH"] == "/usr/bin"
