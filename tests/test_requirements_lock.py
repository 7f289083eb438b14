"""The Python lock file pins what requirements.txt names, every package with hashes."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PIN = re.compile(r"^([A-Za-z0-9_.-]+)==(\S+)")


def pins(text: str) -> dict[str, str]:
    return {m[1].lower(): m[2] for line in text.splitlines() if (m := PIN.match(line))}


def lock_entries(text: str) -> dict[str, list[str]]:
    """Each locked package and its hashes (a package's lines run to the next pin)."""
    entries: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if m := PIN.match(line):
            current = m[1].lower()
            entries[current] = []
        elif current and "--hash=sha256:" in line:
            entries[current].append(line.split("--hash=sha256:")[1].split()[0])
    return entries


def test_the_lock_holds_every_requirement_at_its_version() -> None:
    wanted = pins((REPO / "requirements.txt").read_text())
    locked = pins((REPO / "requirements.lock").read_text())
    assert wanted, "requirements.txt names no pinned package"
    assert {name: locked.get(name) for name in wanted} == wanted


def test_every_locked_package_has_a_hash() -> None:
    entries = lock_entries((REPO / "requirements.lock").read_text())
    assert entries
    assert [name for name, hashes in entries.items() if not hashes] == []
    assert all(len(h) == 64 for hashes in entries.values() for h in hashes)


def test_the_lock_names_no_local_path() -> None:
    text = (REPO / "requirements.lock").read_text()
    assert not re.search(r"^\s*--(find-links|index-url|extra-index-url)", text, re.M)


def test_make_venv_installs_the_lock_with_hashes() -> None:
    makefile = (REPO / "Makefile").read_text()
    assert "--require-hashes -r requirements.lock" in makefile
