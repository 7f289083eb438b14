"""Debian packages from a local folder instead of the network.

``$ARTIFACT_DEBS`` names a folder (searched with its subfolders) of Debian
binary and source package files, such as the ``debian/`` folder of an archive
that ``make dist`` writes. When it is set, the builders take the Linux source
package, the guest's busybox package and Buildroot's source tarballs from it
and download nothing; a file it lacks is an error rather than a download, so
an offline build never waits on a network it does not have.

The files keep the names ``apt-get download`` and ``apt-get source`` give them,
and build keys hash the same names and contents, so a build from the folder
gets the cache key of a build that downloaded them.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV = "ARTIFACT_DEBS"


def folder() -> Path | None:
    """The folder ``$ARTIFACT_DEBS`` names, or None when it is not set."""
    configured = os.environ.get(ENV)
    if not configured:
        return None
    path = Path(configured).expanduser().resolve()
    if not path.is_dir():
        raise RuntimeError(f"{ENV}={configured} is not a folder: point it at an unpacked "
                           "'make dist' archive's debian/ folder, or unset it")
    return path


def find(pattern: str, what: str) -> Path | None:
    """The newest file matching ``pattern`` in the folder (None when
    ``$ARTIFACT_DEBS`` is not set; an error when it is and has none)."""
    root = folder()
    if root is None:
        return None
    found = sorted(root.rglob(pattern))
    if not found:
        raise RuntimeError(f"{what} ({pattern}) is not in {ENV}={root}: make the archive "
                           "again with 'make dist', or unset it to download")
    return found[-1]
