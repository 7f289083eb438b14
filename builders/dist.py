"""One archive with every pinned input (``make dist``, ``python -m builders dist``).

The archive ``arm-hardening-gem5-dist-<commit>.tar`` holds one folder:

* ``arm-hardening-gem5.tar.gz``: this repository at HEAD (``git archive``);
* ``sources/gem5.git``, ``sources/buildroot.git``: bare repositories holding
  only the pinned commit and its tag (gem5 without ``tests/test-progs``, the
  prebuilt test binaries no build uses), so ``GEM5_REPO``/``BUILDROOT_REPO``
  take them as they take any clone;
* ``debian/host``: the Debian packages ``install-deps.sh`` installs and what
  they depend on, at the versions installed here (see ``host_packages``);
  ``debian/guest``: the guest's busybox-static (arm64); ``debian/source``: the
  Debian source packages whose tarballs Buildroot builds from;
* ``wheels``: the Python packages of ``requirements.lock``, for this host's
  Python and platform;
* ``MANIFEST.json`` (the commit of this repository that made it, the pins, every
  package and version) and ``SHA256SUMS`` over every other file.

Nothing appears under the final name until it is complete: the folder is
staged beside it and the archive written as ``.partial`` first.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from builders import buildroot, cache, disk, gem5, kernel
from builders.process import run

log = logging.getLogger(__name__)

NAME = "arm-hardening-gem5"
SUMS = "SHA256SUMS"
MANIFEST = "MANIFEST.json"
INSTALL_DEPS = Path("builders") / "install-deps.sh"
REQUIREMENTS_LOCK = "requirements.lock"


class DistError(RuntimeError):
    """An input of the archive is missing; the message says what to set or run."""


@dataclass(frozen=True)
class PinnedRepo:
    """A source the builders check out from a git repository at a pinned commit."""

    name: str
    env: str
    tag: str
    commit: str
    # Paths whose files the archive leaves out (the builders never check them out).
    leave_out: tuple[str, ...] = ()


# The pins are the builders' own: one place for each.
PINNED_REPOS = (
    PinnedRepo("gem5", gem5.REPO_ENV, gem5.GEM5_VERSION, gem5.GEM5_COMMIT,
               ("tests/test-progs",)),
    PinnedRepo("buildroot", buildroot.REPO_ENV, buildroot.BUILDROOT_VERSION,
               buildroot.BUILDROOT_COMMIT),
)


def git(repo: Path, *args: str) -> str:
    return run(["git", "-C", str(repo), *args])


def has_commit(repo: Path, commit: str) -> bool:
    return subprocess.run(["git", "-C", str(repo), "cat-file", "-e", f"{commit}^{{commit}}"],
                          capture_output=True).returncode == 0


def local_clone(pin: PinnedRepo, scratch: Path) -> Path:
    """The repository ``$<pin.env>`` names, as a local path holding the pinned
    commit (a URL is fetched from, the pinned tag only)."""
    where = os.environ.get(pin.env)
    if not where:
        raise DistError(f"set {pin.env} to a clone of {pin.name} (path or URL) holding "
                        f"{pin.tag} ({pin.commit})")
    if Path(where).is_dir():
        repo = Path(where)
    else:
        repo = scratch / f"{pin.name}-fetched.git"
        run(["git", "init", "--quiet", "--bare", str(repo)])
        log.info("fetching %s %s from %s", pin.name, pin.tag, where)
        try:
            git(repo, "fetch", "--quiet", "--depth", "1", where,
                f"refs/tags/{pin.tag}:refs/tags/{pin.tag}")
        except RuntimeError as err:
            raise DistError(f"{pin.env}={where}: cannot fetch {pin.tag} ({err}); set {pin.env} "
                            f"to a local clone holding {pin.commit}") from None
    if not has_commit(repo, pin.commit):
        raise DistError(f"{pin.env}={where} lacks {pin.name} {pin.tag} ({pin.commit}): set "
                        f"{pin.env} to a clone that has it")
    return repo


def pack_pinned(pin: PinnedRepo, repo: Path, dest: Path) -> None:
    """A bare repository at ``dest`` with the pinned commit's tree and tag and
    no history. Its commit keeps its id (its parents are simply absent), so the
    builders' check for the pinned commit passes, and a local clone (which
    copies objects without walking them) checks it out."""
    def left_out_path(path: str) -> bool:
        return any(path == p or path.startswith(p + "/") for p in pin.leave_out)

    entries = [line.split("\t", 1)
               for line in git(repo, "ls-tree", "-r", pin.commit).splitlines()]
    # Blobs only: every tree stays, since a sparse checkout still reads the
    # whole tree into its index; a blob also used outside the left-out paths stays.
    left_out = ({meta.split()[2] for meta, path in entries if left_out_path(path)}
                - {meta.split()[2] for meta, path in entries if not left_out_path(path)})
    objects = []
    for line in git(repo, "rev-list", "--objects", "--no-walk", "--missing=print",
                    pin.commit).splitlines():
        oid = line.split()[0]
        if oid.startswith("?"):
            if oid[1:] not in left_out:
                raise DistError(f"{pin.env}={repo} lacks object {oid[1:]} of {pin.tag}: "
                                f"set {pin.env} to a complete clone")
            continue
        if oid not in left_out:
            objects.append(oid)
    tag_ref = f"refs/tags/{pin.tag}"
    # Empty when the clone lacks the tag (the commit alone is pinned).
    tag_object = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "-q", tag_ref],
                                capture_output=True, text=True).stdout.strip()
    if tag_object and tag_object != pin.commit:
        objects.append(tag_object)
    run(["git", "init", "--quiet", "--bare", str(dest)])
    subprocess.run(["git", "-C", str(repo), "pack-objects", "--quiet",
                    str(dest / "objects" / "pack" / "pack")],
                   input="\n".join(objects) + "\n", text=True, check=True,
                   stdout=subprocess.DEVNULL)
    git(dest, "update-ref", tag_ref, tag_object or pin.commit)
    # A clone's HEAD: the pinned commit, detached.
    (dest / "HEAD").write_text(pin.commit + "\n")
    for sample in (dest / "hooks").glob("*.sample"):
        sample.unlink()


# Packages on every Debian system (Essential, or of priority required): left
# out of the closure, since no system that runs apt lacks them.
PRESENT_EVERYWHERE = re.compile(r"^(required|yes)$")


def installed(packages: list[str]) -> dict[str, tuple[str, str, str]]:
    """{package: (version, priority, essential)} of those installed here."""
    output = subprocess.run(
        ["dpkg-query", "-W", "-f=${binary:Package}\t${Version}\t${Priority}\t${Essential}\t"
         "${db:Status-Abbrev}\n", *packages], capture_output=True, text=True).stdout
    found = {}
    for line in output.splitlines():
        name, version, priority, essential, status = line.split("\t")
        if status.startswith("ii"):
            found[name] = (version, priority, essential)
    return found


def host_packages(repo_root: Path) -> dict[str, str]:
    """{package: version}: what ``install-deps.sh`` installs and, recursively,
    what those depend on (Depends and Pre-Depends; no Recommends), as installed
    on this host, without the packages every Debian system has."""
    listed = run(["bash", str(repo_root / INSTALL_DEPS), "--list"]).split()
    versions = installed(listed)
    missing = sorted(set(listed) - {n.split(":")[0] for n in versions})
    if missing:
        raise DistError(f"not installed here: {' '.join(missing)}: run 'make deps' first "
                        "(the archive holds the versions this host builds with)")
    closure = run(["apt-cache", "depends", "--recurse", "--installed", "--no-recommends",
                   "--no-suggests", "--no-conflicts", "--no-breaks", "--no-replaces",
                   "--no-enhances", *listed])
    names = sorted({line.strip() for line in closure.splitlines()
                    if line and not line.startswith((" ", "<"))})
    return {name: facts[0] for name, facts in sorted(installed(names).items())
            if not (PRESENT_EVERYWHERE.match(facts[1]) or PRESENT_EVERYWHERE.match(facts[2]))
            or name.split(":")[0] in listed}


# apt-cache policy's version table: a version line, then the sources serving it.
POLICY_VERSION = re.compile(r"^ (?:\*\*\*| {3}) (\S+) -?\d+$")
POLICY_SOURCE = re.compile(r"^ {8}-?\d+ (\S+)")
DPKG_STATUS = "/var/lib/dpkg/status"


def served_versions(installed_versions: dict[str, str]) -> dict[str, str]:
    """{package: version to download}: the installed one where apt still serves
    it, otherwise apt's candidate (a point release replaced it; logged)."""
    output = run(["apt-cache", "policy", *installed_versions])
    served: dict[str, set[str]] = {}
    candidate: dict[str, str] = {}
    name = version = ""
    for line in output.splitlines():
        if not line.startswith(" "):
            name, version = line.rstrip(":").split(":")[0], ""
            served[name] = set()
        elif line.strip().startswith("Candidate:"):
            candidate[name] = line.split()[1]
        elif match := POLICY_VERSION.match(line):
            version = match.group(1)
        elif (match := POLICY_SOURCE.match(line)) and match.group(1) != DPKG_STATUS:
            served[name].add(version)
    chosen = {}
    for package, have in installed_versions.items():
        bare = package.split(":")[0]
        if have in served.get(bare, set()):
            chosen[package] = have
        elif candidate.get(bare, "(none)") != "(none)":
            log.warning("%s %s is no longer served by apt: archiving %s", package, have,
                        candidate[bare])
            chosen[package] = candidate[bare]
        else:
            raise DistError(f"apt serves no version of {package}: 'apt-get update' first")
    return chosen


def apt_download(packages: dict[str, str], into: Path) -> list[str]:
    """``apt-get download`` of each package at its version into ``into``;
    returns the file names."""
    into.mkdir(parents=True, exist_ok=True)
    wanted = [f"{name}={version}" for name, version in packages.items()]
    log.info("downloading %d Debian packages into %s", len(wanted), into)
    # In batches, so a long download shows progress.
    batch = 100
    for start in range(0, len(wanted), batch):
        try:
            run(["apt-get", "download", *wanted[start:start + batch]], cwd=into)
        except RuntimeError as err:
            raise DistError(f"apt-get download failed (is apt's package index current? "
                            f"'apt-get update'): {err}") from None
        log.info("  %d/%d", min(start + batch, len(wanted)), len(wanted))
    return sorted(p.name for p in into.glob("*.deb"))


def download_wheels(repo_root: Path, into: Path) -> list[str]:
    """The wheels ``requirements.lock`` pins (hash-checked), for this Python."""
    log.info("downloading the Python wheels of %s", REQUIREMENTS_LOCK)
    run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
         "--require-hashes", "--no-deps", "--only-binary=:all:", "-r",
         str(repo_root / REQUIREMENTS_LOCK), "-d", str(into)])
    return sorted(p.name for p in into.iterdir())


def write_sums(folder: Path) -> int:
    """``SHA256SUMS`` over every file below ``folder`` (sha256sum -c reads it);
    returns how many files it lists."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != SUMS)
    lines = [f"{cache.file_digest(p)}  {p.relative_to(folder).as_posix()}\n" for p in files]
    (folder / SUMS).write_text("".join(lines))
    return len(lines)


def repository_commit(repo_root: Path) -> tuple[str, bool]:
    """HEAD's commit and whether the work tree has changes the archive lacks."""
    try:
        commit = git(repo_root, "rev-parse", "--verify", "HEAD").strip()
    except RuntimeError:
        raise DistError(f"{repo_root} is not a git checkout: make dist archives HEAD") from None
    dirty = bool(git(repo_root, "status", "--porcelain", "--untracked-files=no").strip())
    return commit, dirty


def make_dist(repo_root: Path, out_dir: Path) -> Path:
    """Write the archive into ``out_dir``; returns its path."""
    commit, dirty = repository_commit(repo_root)
    if dirty:
        log.warning("the work tree has uncommitted changes: the archive holds HEAD (%s) "
                    "without them", commit[:12])
    name = f"{NAME}-dist-{commit[:12]}"
    out_dir.mkdir(parents=True, exist_ok=True)
    cache.sweep_partials(out_dir)
    scratch = out_dir / f".{commit[:12]}.partial-{os.getpid()}"
    archive = out_dir / f"{name}.tar"
    partial = archive.with_name(archive.name + ".partial")
    started = time.monotonic()
    try:
        folder = scratch / name
        folder.mkdir(parents=True)
        # Every check that can fail in one line comes before the long steps.
        clones = {pin.name: local_clone(pin, scratch) for pin in PINNED_REPOS}
        packages = host_packages(repo_root)

        log.info("this repository at %s", commit[:12])
        run(["git", "-C", str(repo_root), "archive", "--format=tar.gz", f"--prefix={NAME}/",
             "-o", str(folder / f"{NAME}.tar.gz"), commit])
        for pin in PINNED_REPOS:
            log.info("%s %s (%s) as a one-commit repository", pin.name, pin.tag, pin.commit[:12])
            pack_pinned(pin, clones[pin.name], folder / "sources" / f"{pin.name}.git")

        debian = folder / "debian"
        archived = served_versions(packages)
        host_debs = apt_download(archived, debian / "host")
        # The guest's busybox as the build cache holds it (downloaded there
        # first when missing, as 'make disk' does): the one the disk keys name.
        guest = disk.BUSYBOX_PACKAGE
        busybox = disk.fetch_deb(cache.cache_root(), guest)
        guest_version = run(["dpkg-deb", "-f", str(busybox), "Version"]).strip()
        (debian / "guest").mkdir()
        shutil.copy2(busybox, debian / "guest" / busybox.name)
        guest_debs = [busybox.name]
        (debian / "source").mkdir()
        options = buildroot.source_apt(scratch / "apt")
        for source in buildroot.DEBIAN_SOURCES:
            buildroot.download_source(options, source, debian / "source")
        wheels = download_wheels(repo_root, folder / "wheels")

        (folder / MANIFEST).write_text(json.dumps({
            "repository_commit": commit,
            "uncommitted_changes_left_out": dirty,
            "made": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "host": {"debian": Path("/etc/debian_version").read_text().strip()
                     if Path("/etc/debian_version").is_file() else "unknown",
                     "machine": platform.machine(),
                     "python": platform.python_version()},
            "pins": {pin.name: {"tag": pin.tag, "commit": pin.commit,
                                "left_out": list(pin.leave_out)} for pin in PINNED_REPOS}
            | {"linux_source": {"package": kernel.DEBIAN_PACKAGE,
                                "version": archived.get(kernel.DEBIAN_PACKAGE, "")}},
            "debian": {"host": archived, "guest": {guest: guest_version},
                       "host_installed_where_it_differs": {
                           n: v for n, v in packages.items() if archived[n] != v},
                       "source": [s.package for s in buildroot.DEBIAN_SOURCES],
                       "files": {"host": host_debs, "guest": guest_debs,
                                 "source": sorted(p.name for p in
                                                  (debian / "source").iterdir())}},
            "wheels": wheels,
        }, indent=2, sort_keys=True) + "\n")
        count = write_sums(folder)
        log.info("writing %s (%d files)", archive, count)
        run(["tar", "--sort=name", "--owner=0", "--group=0", "--numeric-owner",
             "-cf", str(partial), "-C", str(scratch), name])
        partial.rename(archive)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        partial.unlink(missing_ok=True)
    size = archive.stat().st_size
    log.info("%s: %.0f MiB, %d files, in %.1f min", archive.name, size / (1 << 20), count,
             (time.monotonic() - started) / 60)
    return archive


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=Path("out") / "dist",
                        help="the folder the archive goes to (default: out/dist)")


def run_dist(args: argparse.Namespace, repo_root: Path) -> int:
    try:
        print(make_dist(repo_root, args.out.resolve()))
    except DistError as err:
        log.error("make dist: %s", err)
        return 1
    return 0
