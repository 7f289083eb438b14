"""Every patch series applies, in order, to the real source it targets.

Only the files a series touches are copied out of the pristine source, so this
stays fast even for the kernel.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from builders import cache, gem5, kernel
from builders.patches import apply_series, read_series
from support.skips import missing_build

REPO_ROOT = Path(__file__).resolve().parent.parent
KERNEL_PATCHES = REPO_ROOT / "kernel-patches"
GEM5_PATCHES = REPO_ROOT / "gem5-patches"


KERNEL_POOL = KERNEL_PATCHES / kernel.PATCH_POOL


@pytest.mark.parametrize("folder", ["", *sorted(set(gem5.MEMORY_SERIES.values()))])
def test_gem5_series_names_existing_patches(folder: str) -> None:
    named = {p.name for p in read_series(GEM5_PATCHES / folder)}
    on_disk = {p.name for p in (GEM5_PATCHES / folder).glob("*.patch")}
    assert named == on_disk, "every patch in the folder is on the series, and only those"


def test_every_kernel_patch_is_kept_once_and_used() -> None:
    """Variants name patches in the pool; a variant folder holds none of its
    own, no two pool files are the same bytes, and every pool file is on a
    series (a missing entry fails in read_series)."""
    for variant in kernel.variants(KERNEL_PATCHES):
        assert not list((KERNEL_PATCHES / variant).glob("*.patch")), \
            f"{variant} keeps a patch outside the pool"
    named = {p.path for v in kernel.variants(KERNEL_PATCHES)
             for p in kernel.variant_patches(KERNEL_PATCHES, v)}
    pooled = set(KERNEL_POOL.rglob("*.patch"))
    assert pooled and named <= pooled
    assert pooled - named == set(), "pool patches no series names"
    by_content: dict[str, list[Path]] = {}
    for path in pooled:
        by_content.setdefault(cache.file_digest(path), []).append(path)
    copies = [sorted(str(p.relative_to(KERNEL_POOL)) for p in paths)
              for paths in by_content.values() if len(paths) > 1]
    assert not copies, f"patches stored more than once: {copies}"


ZAP_PER_ENTRY = "0001-mm-zap-present-entries-one-at-a-time-as-before-large.patch"


@pytest.mark.parametrize("variant", [v for v in kernel.variants(KERNEL_PATCHES)
                                     if v.endswith("-2023")])
def test_a_2023_variant_is_its_namesake_plus_the_per_entry_zap(variant: str) -> None:
    """An X-2023 arm differs from X by the one-entry zap loop alone: the same
    configuration and X's series with that patch last (a config line lost
    would build another arm under X's name)."""
    namesake = variant.removesuffix("-2023")
    config = {v: kernel.parse_config((KERNEL_PATCHES / v / "config").read_text())
              for v in (namesake, variant)}
    assert config[variant] == config[namesake]
    names = {v: [p.name for p in kernel.variant_patches(KERNEL_PATCHES, v)]
             for v in (namesake, variant)}
    assert names[variant] == names[namesake] + [ZAP_PER_ENTRY]


def _kernel_source_files(paths: list[str], tree: Path, dest: Path) -> None:
    for rel in paths:
        source = tree / rel
        if source.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_bytes(source.read_bytes())


# Variants that are a config fragment only have no series to apply.
@pytest.mark.parametrize("variant", [v for v in kernel.variants(KERNEL_PATCHES)
                                     if kernel.variant_patches(KERNEL_PATCHES, v)])
def test_kernel_series_applies(variant: str, tmp_path: Path, linux_tree: Path) -> None:
    patches = kernel.variant_patches(KERNEL_PATCHES, variant)
    _kernel_source_files(sorted({f for p in patches for f in p.touched_files()}), linux_tree,
                         tmp_path)
    apply_series(tmp_path, patches, f"kernel {variant}")


@pytest.mark.needs_build
@pytest.mark.parametrize("memory", sorted(gem5.MEMORY_SYSTEMS))
def test_gem5_series_applies(tmp_path: Path, memory: str) -> None:
    patches = gem5.Gem5BuildOptions.for_memory(memory).series(GEM5_PATCHES)
    assert patches, "gem5-patches/series names no patch"
    clone = gem5.worktree_src()
    if not (clone / ".git").is_dir():
        missing_build("the gem5 clone", "'make gem5'")
    for rel in sorted({f for p in patches for f in p.touched_files()}):
        shown = subprocess.run(["git", "-C", str(clone), "show", f"{gem5.GEM5_COMMIT}:{rel}"],
                               capture_output=True)
        if shown.returncode == 0:
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / rel).write_bytes(shown.stdout)
    apply_series(tmp_path, patches, f"gem5 {gem5.GEM5_VERSION}")
