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
import io
import json
import logging
import os
import re
import shutil
import tempfile
import time
import tokenize
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


# Compiled objects of gem5 and of every kernel variant share one ccache. It
# held 0.76 GiB after nine kernel builds and about a fifth of a gem5 build; the
# limit leaves room for whole gem5 builds beside every kernel variant.
CCACHE_MAXSIZE = "20G"


def ccache_env(root: Path, basedir: Path) -> dict[str, str]:
    """ccache settings for a build under ``basedir`` (paths below it hash relative)."""
    return {"CCACHE_DIR": str(root / "ccache"), "CCACHE_BASEDIR": str(basedir),
            "CCACHE_MAXSIZE": CCACHE_MAXSIZE}


def file_digest(path: Path) -> str:
    """sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _docstring_spans(tree: ast.AST, lines: list[str]) -> list[tuple[int, int, int, int]]:
    """(line, column, end line, end column) of every module, class and function
    docstring, columns in characters; positions are the same in every Python
    version."""
    def column(line: int, utf8_offset: int) -> int:
        return len(lines[line - 1].encode()[:utf8_offset].decode(errors="ignore"))

    spans = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                doc = body[0]
                assert doc.end_lineno is not None and doc.end_col_offset is not None
                spans.append((doc.lineno, column(doc.lineno, doc.col_offset),
                              doc.end_lineno, column(doc.end_lineno, doc.end_col_offset)))
    return spans


def _blank(lines: list[str], span: tuple[int, int, int, int]) -> None:
    """Overwrite a (1-based line, 0-based column) span of ``lines`` with spaces."""
    line, col, end_line, end_col = span
    for number in range(line, end_line + 1):
        text = lines[number - 1]
        start = col if number == line else 0
        stop = end_col if number == end_line else len(text)
        lines[number - 1] = text[:start] + " " * (stop - start) + text[stop:]


def _string_lines(tree: ast.AST) -> set[int]:
    """Line numbers inside multi-line string literals (not their first line):
    their text, blank lines and trailing spaces included, is data."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Constant, ast.JoinedStr)) and node.end_lineno is not None \
                and node.end_lineno > node.lineno \
                and (isinstance(node, ast.JoinedStr) or isinstance(node.value, (str, bytes))):
            # The last line holds the closing quotes: never blank, and its
            # trailing space is outside the string.
            inside.update(range(node.lineno + 1, node.end_lineno))
    return inside


def python_code(source: str) -> str:
    """The source with comments and docstrings removed, and the blank lines
    and trailing spaces of the code (not of string literals) dropped: what the
    code computes, as text. Unlike a syntax-tree dump this text is the same on
    every Python version, so keys made from it are too."""
    source = source.replace("\r\n", "\n").replace("\r", "\n")
    tree = ast.parse(source)
    # Lines as ast and tokenize count them (str.splitlines would also split at
    # form feeds).
    lines = source.split("\n")
    docstrings = _docstring_spans(tree, lines)
    for span in docstrings:
        _blank(lines, span)
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    for token in tokens:
        if token.type == tokenize.COMMENT:
            _blank(lines, (*token.start, *token.end))
    # A docstring's own lines are blank now, not string data.
    data = _string_lines(tree) - {n for span in docstrings for n in range(span[0], span[2] + 1)}
    kept = []
    for number, line in enumerate(lines, start=1):
        if number in data:
            kept.append(line)
        elif line.strip():
            kept.append(line.rstrip())
    return "\n".join(kept) + "\n"


def code_digest(path: Path) -> str:
    """sha256 of what a file computes: for Python, its code without docstrings,
    comments or blank lines (so editing documentation keeps the simulations
    cached, on any host Python); other files, their bytes."""
    if path.suffix != ".py":
        return file_digest(path)
    try:
        code = python_code(path.read_text())
    except (SyntaxError, tokenize.TokenError, UnicodeDecodeError):
        return file_digest(path)
    return hashlib.sha256(code.encode()).hexdigest()


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
        """Complete: the manifest is there and every file it lists has its size
        (a cheap check; ``damage()`` reads the contents)."""
        if not (self.path / MANIFEST).is_file():
            return False
        try:
            files = self.manifest().get("files", {})
        except (OSError, ValueError):
            return False
        for name, facts in files.items():
            path = self.path / name
            if not path.is_file() or path.stat().st_size != facts["size"]:
                return False
        return True

    def damage(self) -> list[str]:
        """The files whose contents differ from the manifest's checksums
        (entries made before checksums were recorded have none to check)."""
        if not self.exists():
            return ["incomplete (a listed file is missing or has another size)"]
        return [name for name, facts in self.manifest().get("files", {}).items()
                if file_digest(self.path / name) != facts["sha256"]]

    def usable(self) -> bool:
        """Whether this entry can be used as it is. A damaged entry (edited or
        truncated outputs) is removed so that it is built again."""
        if not (self.path / MANIFEST).is_file():
            return False
        damaged = self.damage()
        if not damaged:
            return True
        with self.lock():
            # Another builder may have replaced it meanwhile: look again.
            damaged = self.damage() if (self.path / MANIFEST).is_file() else []
            if not damaged:
                return (self.path / MANIFEST).is_file()
            log.warning("cache entry %s is damaged (%s): removing it to build it again",
                        self.path, ", ".join(damaged[:5]))
            trash = self.path.with_name(f".{self.key}.partial-{os.getpid()}-damaged")
            self.path.rename(trash)
            shutil.rmtree(trash, ignore_errors=True)
        return False

    def manifest(self) -> dict[str, Any]:
        return json.loads((self.path / MANIFEST).read_text())

    def lock(self, cancelled: Callable[[], bool] | None = None
             ) -> contextlib.AbstractContextManager[None]:
        """Exclusive hold on building this entry: two processes (or two threads
        of one) never build the same entry at once. Check ``exists()`` again
        once it is held."""
        return locked(self.root / self.kind / f".{self.key}.lock", cancelled)

    @contextlib.contextmanager
    def staging(self, inputs: dict[str, Any]) -> Iterator[Path]:
        """Yield a scratch directory; on success it becomes this entry atomically.

        The manifest records the inputs so that every output says what made it.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        sweep_partials(self.path.parent)
        # Unique per call, so two stagings of one key in one process (threads)
        # never share a scratch directory.
        scratch = Path(tempfile.mkdtemp(prefix=f".{self.key}.partial-{os.getpid()}-",
                                        dir=self.path.parent))
        try:
            yield scratch
            files = {path.relative_to(scratch).as_posix():
                     {"size": path.stat().st_size, "sha256": file_digest(path)}
                     for path in sorted(scratch.rglob("*"))
                     if path.is_file() and not path.is_symlink()}
            (scratch / MANIFEST).write_text(
                json.dumps({"kind": self.kind, "key": self.key, "inputs": inputs,
                            "files": files}, indent=2, sort_keys=True) + "\n")
            if self.path.exists():
                shutil.rmtree(self.path)
            scratch.rename(self.path)
            log.info("cached %s/%s", self.kind, self.key)
        finally:
            if scratch.exists():
                shutil.rmtree(scratch)


PARTIAL = re.compile(r"^\.[0-9a-f]+\.partial-(\d+)(?:-.*)?$")


def sweep_partials(directory: Path) -> None:
    """Remove scratch directories left by builds or runs that were killed (of
    any key): their process is gone."""
    for stale in directory.glob(".*.partial-*"):
        match = PARTIAL.match(stale.name)
        if match and not _process_alive(int(match.group(1))):
            shutil.rmtree(stale, ignore_errors=True)


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


def ensure(entry: Entry, what: str, build: Callable[[], None],
           workspace_lock: Path | None = None) -> Entry:
    """``entry`` as cached, or made by ``build()`` (which stages it).

    The build runs under the entry's lock, or under ``workspace_lock`` when it
    uses a work tree that builds of other entries share (gem5's, a kernel
    variant's), and only if the entry is still missing once the lock is held:
    another process may have built it meanwhile.
    """
    if entry.usable():
        log.info("%s cache hit: %s", what, entry.path)
        return entry
    with locked(workspace_lock) if workspace_lock else entry.lock():
        if not entry.exists():
            build()
    return entry


class Interrupted(RuntimeError):
    """Waiting for a lock was given up because the caller was cancelled."""


LOCK_POLL_SECONDS = 0.5


@contextlib.contextmanager
def locked(path: Path, cancelled: Callable[[], bool] | None = None) -> Iterator[None]:
    """Hold an exclusive lock so that two builds never share a work tree at once.

    flock locks belong to an open file description, so two threads of one
    process that each open the file exclude each other as two processes do.
    While another holder has it, wait, asking ``cancelled`` now and then (a
    Ctrl-C must not wait for another process's hour-long build).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.info("waiting for another build holding %s", path)
            while True:
                if cancelled is not None and cancelled():
                    raise Interrupted(f"gave up waiting for {path}") from None
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    time.sleep(LOCK_POLL_SECONDS)
        yield
