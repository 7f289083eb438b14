"""Running build commands with readable failures and progress on long steps."""

from __future__ import annotations

import collections
import logging
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

log = logging.getLogger(__name__)

TAIL_LINES = 40


# What a calling make hands down to every make below it: ``make disk
# ROOTFS=buildroot`` puts ROOTFS=buildroot into MAKEFLAGS, where the make we
# run would take it as its own variable.
CALLER_MAKE_VARIABLES = ("MAKEFLAGS", "MFLAGS", "GNUMAKEFLAGS", "MAKEOVERRIDES", "MAKELEVEL")


def make_environment(reads: tuple[str, ...],
                     environment: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a make we run: ours (or ``environment``) without
    what a calling make passes down and without ``reads``, the names that
    make's own Makefile takes from its environment to place or name what it
    builds (a user's shell may have any of them set)."""
    source = os.environ if environment is None else environment
    dropped = set(CALLER_MAKE_VARIABLES) | set(reads)
    return {name: value for name, value in source.items() if name not in dropped}


class CommandFailed(RuntimeError):
    """A build command exited non-zero; the message carries its output tail."""


def run(cmd: list[str], cwd: Path | None = None, quiet_errors: bool = False,
        env: dict[str, str] | None = None) -> str:
    """Run a short command; raise with its stderr when it fails."""
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise CommandFailed(f"{' '.join(cmd)} failed ({result.returncode}):\n"
                            f"{result.stderr.strip() or result.stdout.strip()}")
    if result.stderr and not quiet_errors:
        log.debug("%s", result.stderr.strip())
    return result.stdout


def run_streaming(cmd: list[str], cwd: Path | None = None, label: str = "",
                  env: dict[str, str] | None = None, log_file: Path | None = None,
                  every: float = 30.0) -> None:
    """Run a long command, printing a progress line periodically.

    Every output line goes to ``log_file`` (when given); the terminal sees one
    status line per ``every`` seconds and, on failure, the last lines of output.
    """
    # SCons is Python: without this its output reaches us in 4 KiB bursts.
    env = {**(env or os.environ), "PYTHONUNBUFFERED": "1"}
    tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
    # With -j, the line that says why a build failed is often followed by
    # many lines of the other jobs; keep make's and the compiler's error lines.
    errors: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
    started = last = time.monotonic()
    lines = 0
    sink = log_file.open("w") if log_file else None
    try:
        with subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, errors="replace") as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines += 1
                tail.append(line.rstrip("\n"))
                if "***" in line or "error:" in line.lower():
                    errors.append(line.rstrip("\n"))
                if sink:
                    sink.write(line)
                now = time.monotonic()
                if now - last >= every:
                    last = now
                    print(f"[{label}] {(now - started) / 60:5.1f} min, {lines} lines: "
                          f"{tail[-1][:100]}", file=sys.stderr, flush=True)
            code = proc.wait()
    finally:
        if sink:
            sink.close()
    if code != 0:
        found = [e for e in errors if e not in tail]
        raise CommandFailed(f"[{label}] {' '.join(cmd)} failed ({code}); "
                            + (("error lines:\n" + "\n".join(found) + "\n") if found else "")
                            + "last output:\n" + "\n".join(tail))
    log.info("[%s] done in %.1f min", label, (time.monotonic() - started) / 60)


def checkout_pinned(src: Path, repo: str, what: str, commit: str, tag: str,
                    sparse: tuple[str, ...] = ()) -> None:
    """Make ``src`` a clone of ``repo`` (a URL or a local clone) with ``commit``
    checked out, fetching ``tag`` when the clone lacks it; ``sparse``: the
    sparse-checkout patterns of a new clone. Only files that differ from the
    commit are rewritten, so a rebuild after a patch change stays small."""
    if not (src / ".git").is_dir():
        log.info("cloning %s from %s", what, repo)
        if src.exists():
            shutil.rmtree(src)
        clone = ["git", "clone", "--quiet", "--no-checkout"]
        if "://" in repo or repo.startswith("git@"):
            clone.append("--filter=blob:none")
        run([*clone, repo, str(src)])
        if sparse:
            run(["git", "-C", str(src), "sparse-checkout", "set", "--no-cone", *sparse])
    have = subprocess.run(["git", "-C", str(src), "cat-file", "-e", f"{commit}^{{commit}}"],
                          capture_output=True).returncode == 0
    if not have:
        run(["git", "-C", str(src), "fetch", "--quiet", repo, f"refs/tags/{tag}"])
    run(["git", "-C", str(src), "-c", "advice.detachedHead=false", "checkout",
         "--quiet", "--force", "--detach", commit], quiet_errors=True)
