"""Kernel variants: names, and config fragments that survive Kconfig intact."""

from __future__ import annotations

from pathlib import Path

import pytest

from builders import kernel

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
def test_fragments_merge_without_dropped_options(variant: str, tmp_path: Path) -> None:
    if not kernel.DEBIAN_TARBALL.is_file():
        pytest.skip("SKIP: no Linux source (run 'make deps')")
    final = kernel.merged_config(KERNEL_PATCHES, variant, tmp_path)
    requested = kernel.requested_config(KERNEL_PATCHES, variant)
    assert kernel.dropped_options(requested, final) == []
    # The features under study are compiled into every variant that does not
    # turn one off on purpose (pac-off).
    for feature in ("CONFIG_ARM64_PAN", "CONFIG_ARM64_PTR_AUTH_KERNEL", "CONFIG_ARM64_MTE",
                    "CONFIG_ARM64_POE"):
        assert final.get(feature, "n") == requested.get(feature, "y"), feature
