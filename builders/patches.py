"""Patch series: a folder with a ``series`` file naming patches in order."""

from __future__ import annotations

import hashlib
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from builders import cache

DIFF_TARGET = re.compile(r"^(?:---|\+\+\+) (?:[ab]/)?(\S+)")


@dataclass(frozen=True)
class Patch:
    name: str
    path: Path

    def digest(self) -> str:
        return cache.file_digest(self.path)

    def touched_files(self) -> list[str]:
        """Paths (relative to the tree root) that this patch reads or writes."""
        paths = []
        for line in self.path.read_text(errors="replace").splitlines():
            match = DIFF_TARGET.match(line)
            if match and match.group(1) != "/dev/null" and match.group(1) not in paths:
                paths.append(match.group(1))
        return paths


def read_series(patch_dir: Path, pool: Path | None = None) -> list[Patch]:
    """Patches named in ``series`` in order; blank lines and ``#`` comments ignored.

    An entry is a path under ``pool`` (default: the series' own folder), so
    that series sharing a patch name one copy of it. A patch's name is its
    file name alone: the build keys list patches by it, and they stay the
    same wherever the file is kept.
    """
    series = patch_dir / "series"
    if not series.is_file():
        return []
    pool = pool or patch_dir
    patches = []
    for line in series.read_text().splitlines():
        entry = line.split("#", 1)[0].strip()
        if not entry:
            continue
        path = pool / entry
        if not path.is_file():
            raise FileNotFoundError(f"{series}: patch '{entry}' does not exist in {pool}")
        patches.append(Patch(path.name, path))
    return patches


def series_id(named_digests: list[tuple[str, str]]) -> str:
    """``0001-0021:<8 hex>``: which patches a build has, and which text of each.

    The range names the first and last patch only (a series with a gap reads
    the same); the hash is over ``sha256sum``'s output for the patch files in
    series order, so ``sed 's/#.*//' series | xargs sha256sum | sha256sum`` in
    the patch folder gives it without Python. Empty for an empty series.
    """
    if not named_digests:
        return ""
    listing = "".join(f"{digest}  {name}\n" for name, digest in named_digests)
    first, last = (named_digests[i][0].split("-", 1)[0] for i in (0, -1))
    return f"{first}-{last}:{hashlib.sha256(listing.encode()).hexdigest()[:8]}"


def apply_series(tree: Path, patches: list[Patch], label: str) -> None:
    """Apply patches in order with GNU patch; name the first one that fails.

    patch(1) writes each result to a new file, so a tree of hard links to a
    pristine copy is safe to patch.
    """
    for patch in patches:
        result = subprocess.run(["patch", "-p1", "--forward", "--batch", "--quiet",
                                 "--no-backup-if-mismatch", "-i", str(patch.path.resolve())],
                                cwd=tree, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"{label} patch {patch.name} does not apply:\n"
                               f"{(result.stdout + result.stderr).strip()}")
