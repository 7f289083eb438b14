"""Content-addressed cache for build outputs.

Outputs are stored under ``<root>/<kind>/<key>/`` where ``key`` is a hash of every
input that can change them. An entry only appears once it is complete: builders
write into a temporary sibling directory and rename it into place, so an
interrupted build never leaves a half-written entry that later looks like a hit.
"""

from __future__ import annotations

import ast
import contextlib
import fcntl
import hashlib
import json
import logging
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

CACHE_ENV = "ARTIFACT_CACHE"
DEFAULT_CACHE = Path.home() / ".cache" / "arm-hardening-gem5"
MANIFEST = "manifest.json"
KEY_LENGTH = 16


def cache_root() -> Path:
    """The cache directory: ``$ARTIFACT_CACHE`` or ``~/.cache/arm-hardening-gem5``."""
    configured = os.environ.get(CACHE_ENV)
    return Path(configured).expanduser().resolve() if configured else DEFAULT_CACHE


def file_digest(path: Path) -> str:
    """sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _without_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                node.body = body[1:] or [ast.Pass()]
    return tree


def code_digest(path: Path) -> str:
    """sha256 of what a file computes: for Python, its syntax tree without
    docstrings, comments or layout (so editing documentation keeps the
    simulations cached; the tree's form is the host Python's); other files,
    their bytes."""
    if path.suffix != ".py":
        return file_digest(path)
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except SyntaxError:
        return file_digest(path)
    return hashlib.sha256(ast.dump(_without_docstrings(tree)).encode()).hexdigest()


def tree_digest(root: Path, exclude: tuple[str, ...] = (),
                content: Callable[[Path], str] = file_digest) -> str:
    """sha256 over every file's relative path and ``content`` digest below
    ``root`` (Python bytecode caches excluded: they are not inputs), leaving
    out paths that start with any of ``exclude`` (relative, POSIX style)."""
    digest = hashlib.sha256()
    files = (p for p in root.rglob("*")
             if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
             and not p.relative_to(root).as_posix().startswith(exclude))
    for path in sorted(files):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(content(path).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def key_of(inputs: dict[str, Any]) -> str:
    """A short, stable hash of a JSON-serialisable description of build inputs."""
    canonical = json.dumps(inputs, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:KEY_LENGTH]


@dataclass(frozen=True)
class Entry:
    """One cache entry: a directory holding outputs plus a manifest of their inputs."""

    kind: str
    key: str
    root: Path

    @property
    def path(self) -> Path:
        return self.root / self.kind / self.key

    def exists(self) -> bool:
        return (self.path / MANIFEST).is_file()

    def manifest(self) -> dict[str, Any]:
        return json.loads((self.path / MANIFEST).read_text())

    @contextlib.contextmanager
    def staging(self, inputs: dict[str, Any]) -> Iterator[Path]:
        """Yield a scratch directory; on success it becomes this entry atomically.

        The manifest records the inputs so that every output says what made it.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for stale in self.path.parent.glob(".*.partial-*"):
            # Left by a build or run that was killed (of any key); its process
            # is gone.
            if not _process_alive(int(stale.name.rsplit("-", 1)[1])):
                shutil.rmtree(stale, ignore_errors=True)
        scratch = self.path.parent / f".{self.key}.partial-{os.getpid()}"
        if scratch.exists():
            shutil.rmtree(scratch)
        scratch.mkdir()
        try:
            yield scratch
            (scratch / MANIFEST).write_text(
                json.dumps({"kind": self.kind, "key": self.key, "inputs": inputs},
                           indent=2, sort_keys=True) + "\n")
            if self.path.exists():
                shutil.rmtree(self.path)
            scratch.rename(self.path)
            log.info("cached %s/%s", self.kind, self.key)
        finally:
            if scratch.exists():
                shutil.rmtree(scratch)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def entry(kind: str, inputs: dict[str, Any], root: Path | None = None) -> Entry:
    return Entry(kind=kind, key=key_of(inputs), root=root or cache_root())


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock so that two builds never share a work tree at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.info("waiting for another build holding %s", path)
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield
