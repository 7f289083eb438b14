"""Build gem5 (with our patch series), its m5 utility and the arm64 bootloaders;
apart from those, gem5's 32-bit bootloader for the arm32 kernel variants.

gem5 is an external dependency: its source is checked out into a work tree in the
cache, our patches from ``gem5-patches/series`` are applied on top of the pinned
release, and the outputs are copied into a content-addressed entry keyed by the
release, the patch contents and the build options.

The work tree is reused across keys on purpose. Re-applying a different series
only rewrites the files the patches touch, and SCons decides what to rebuild by
content, so a one-file patch change recompiles that file and relinks.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from builders import cache
from builders.patches import Patch, apply_series, read_series, series_id
from builders.process import CommandFailed, checkout_pinned, run, run_streaming

log = logging.getLogger(__name__)

GEM5_VERSION = "v24.0.0.1"
GEM5_COMMIT = "b1a44b89c7bae73fae2dc547bc1f871452075b85"
UPSTREAM_REPO = "https://github.com/gem5/gem5.git"
REPO_ENV = "GEM5_REPO"
# Large prebuilt test binaries that gem5 keeps in git; not needed to build, and
# some mirrors lack their blobs.
SPARSE_PATTERNS = ("/*", "!/tests/test-progs/")
# Bump when this recipe changes in a way that changes the outputs.
RECIPE_VERSION = 1
M5_CROSS_COMPILE = "aarch64-linux-gnu-"
# gem5's system/arm/bootloader/arm makefile defaults to arm-linux-gnueabi-;
# Debian's hard-float compiler, which builds the arm32 kernels, assembles the
# same boot.S (no floating point in it).
ARM32_CROSS_COMPILE = "arm-linux-gnueabihf-"
ARM32_BOOTLOADER = "boot.arm"


# gem5's binary flavours: opt keeps asserts and debug output (--debug-flags,
# the trace tools need it); fast compiles both out (same -O3 code otherwise).
VARIANTS = ("opt", "fast")

# Memory systems a binary can carry. Every experiment runs on the classic one;
# Ruby CHI exists for one cross-check (gem5's own DVM distributor in
# CHI-dvm-misc-node.sm against our classic TLBI model), and building Ruby adds
# its protocol's generated sources to the compile, so it is a separate binary.
MEMORY_SYSTEMS: dict[str, dict[str, str]] = {
    "classic": {"RUBY": "n", "USE_SYSTEMC": "n", "USE_KVM": "n"},
    # Ruby's sets of controllers hold 64 by default, and a CHI system has three
    # per core (L1I, L1D, L2): 128 lets the cross-check reach 32 cores.
    "ruby-chi": {"RUBY": "y", "RUBY_PROTOCOL_CHI": "y", "NUMBER_BITS_PER_SET": "128",
                 "USE_SYSTEMC": "n", "USE_KVM": "n"},
}
# Patches only a memory system's own sources need: a series in this folder of
# gem5-patches/, applied after the main one. Kept apart so that the classic
# binary's key, and with it every cached run's, does not change with them.
MEMORY_SERIES: dict[str, str] = {"ruby-chi": "ruby-chi"}


@dataclass(frozen=True)
class Gem5BuildOptions:
    """What is built: the ISA, binary flavour and Kconfig settings."""

    isa: str = "ARM"
    variant: str = "opt"
    kconfig: dict[str, str] = field(default_factory=lambda: dict(MEMORY_SYSTEMS["classic"]))
    # A folder of gem5-patches/ with a series applied after the main one ("": none).
    extra_series: str = ""

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"gem5 variant '{self.variant}' (valid: {', '.join(VARIANTS)})")

    @classmethod
    def for_memory(cls, memory: str, variant: str = "opt") -> Gem5BuildOptions:
        """Options for one of ``MEMORY_SYSTEMS``; the classic one's key is unchanged."""
        if memory not in MEMORY_SYSTEMS:
            raise ValueError(f"gem5 memory system '{memory}' "
                             f"(valid: {', '.join(MEMORY_SYSTEMS)})")
        return cls(variant=variant, kconfig=dict(MEMORY_SYSTEMS[memory]),
                   extra_series=MEMORY_SERIES.get(memory, ""))

    @property
    def binary(self) -> str:
        return f"gem5.{self.variant}"

    def as_dict(self) -> dict[str, object]:
        facts: dict[str, object] = {"isa": self.isa, "variant": self.variant,
                                    "kconfig": dict(self.kconfig)}
        if self.extra_series:
            facts["extra_series"] = self.extra_series
        return facts

    def series(self, patch_dir: Path) -> list[Patch]:
        """The patches this build applies: the series, then its extra one."""
        extra = read_series(patch_dir / self.extra_series) if self.extra_series else []
        return [*read_series(patch_dir), *extra]


def _version_line(command: list[str], marker: str = "") -> str:
    """The first output line of a version command (containing ``marker``)."""
    try:
        output = run(command)
    except (CommandFailed, FileNotFoundError):
        return "missing"
    lines = [line.strip() for line in output.splitlines() if marker in line and line.strip()]
    return lines[0] if lines else "unknown"


def host_toolchain() -> dict[str, str]:
    """The host tools whose versions can change the simulator binary."""
    return {
        "cxx": _version_line(["g++", "--version"]),
        "scons": _version_line(["scons", "--version"], "SCons:"),
        # The interpreter beside the python3-config the build embeds.
        "python": _version_line([str(Path(python_config()).with_name("python3")), "--version"]),
        "protoc": _version_line(["protoc", "--version"]),
    }


def build_inputs(patch_dir: Path, options: Gem5BuildOptions) -> dict[str, object]:
    return {
        "gem5_version": GEM5_VERSION,
        "gem5_commit": GEM5_COMMIT,
        "patches": [[p.name, p.digest()] for p in read_series(patch_dir)],
        **({"extra_patches": [[p.name, p.digest()]
                              for p in read_series(patch_dir / options.extra_series)]}
           if options.extra_series else {}),
        "options": options.as_dict(),
        "toolchain": host_toolchain(),
        "recipe": RECIPE_VERSION,
    }


def gem5_entry(patch_dir: Path, options: Gem5BuildOptions | None = None,
               root: Path | None = None) -> cache.Entry:
    return cache.entry("gem5", build_inputs(patch_dir, options or Gem5BuildOptions()), root)


def tools_inputs(patch_dir: Path) -> dict[str, object]:
    # Guest tools do not depend on the simulator's build options.
    inputs = {**build_inputs(patch_dir, Gem5BuildOptions()), "outputs": "guest-tools",
              "toolchain": {"cross_cc": _version_line([f"{M5_CROSS_COMPILE}gcc", "--version"]),
                            "scons": _version_line(["scons", "--version"], "SCons:")}}
    inputs.pop("options")
    return inputs


def tools_entry(patch_dir: Path, root: Path | None = None) -> cache.Entry:
    return cache.entry("gem5-tools", tools_inputs(patch_dir), root)


def arm32_tools_inputs(patch_dir: Path) -> dict[str, object]:
    # A kind of its own rather than one more file in gem5-tools: adding it there
    # would change that entry's key, and with it the disk image's and every
    # cached run's.
    inputs = {**build_inputs(patch_dir, Gem5BuildOptions()), "outputs": "arm32-bootloader",
              "toolchain": {"cross_cc": _version_line([f"{ARM32_CROSS_COMPILE}gcc",
                                                       "--version"])}}
    inputs.pop("options")
    return inputs


def arm32_tools_entry(patch_dir: Path, root: Path | None = None) -> cache.Entry:
    return cache.entry("gem5-tools-arm32", arm32_tools_inputs(patch_dir), root)


def prepare_source(src: Path, repo: str) -> None:
    """Make ``src`` a sparse checkout of the pinned commit with no local changes."""
    checkout_pinned(src, repo, "gem5 (sparse, without tests/test-progs)", GEM5_COMMIT,
                    GEM5_VERSION, SPARSE_PATTERNS)
    run(["git", "-C", str(src), "reset", "--quiet", "--hard", GEM5_COMMIT], quiet_errors=True)
    run(["git", "-C", str(src), "clean", "-fdq", "-e", "/build/",
         "-e", "/util/m5/build/"])


def configure(src: Path, options: Gem5BuildOptions) -> None:
    """Run gem5's Kconfig steps, only when the options differ from the last build's."""
    build_dir = src / "build" / options.isa
    stamp = src / "build" / f".options-{options.isa}.json"
    wanted = json.dumps(options.as_dict(), sort_keys=True)
    if stamp.is_file() and stamp.read_text() == wanted and (build_dir / "gem5.build").is_dir():
        return
    scons = ["scons", "--ignore-style"]
    run([*scons, "defconfig", f"build/{options.isa}", f"build_opts/{options.isa}"], cwd=src,
        env=scons_env())
    settings = [f"{k}={v}" for k, v in sorted(options.kconfig.items())]
    run([*scons, "setconfig", f"build/{options.isa}", *settings], cwd=src, env=scons_env())
    stamp.write_text(wanted)


def python_config() -> str:
    # The simulator embeds Python; use the distribution's, not a pyenv or venv
    # interpreter that may lack a shared libpython.
    system = Path("/usr/bin/python3-config")
    return str(system) if system.exists() else "python3-config"


# Debian's ccache package puts gcc/g++ wrappers here; first on PATH, they make
# every compile of gem5 go through ccache.
CCACHE_WRAPPERS = Path("/usr/lib/ccache")


def scons_env() -> dict[str, str]:
    """gem5's SConstruct reads PYTHON_CONFIG from the environment only: a
    command-line ``PYTHON_CONFIG=`` is ignored and the first python3-config on
    PATH (a pyenv one, say) would be embedded instead.

    Compiles go through ccache where it is installed: SCons records what it
    built only when it exits, so a build stopped outright (a session that ends,
    SIGKILL) would otherwise compile everything again; with ccache the next
    build finds those objects in the cache.
    """
    env = {**os.environ, "PYTHON_CONFIG": python_config()}
    if (CCACHE_WRAPPERS / "g++").exists():
        root = cache.cache_root()
        env.update(cache.ccache_env(root, root / "gem5"))
        env["PATH"] = f"{CCACHE_WRAPPERS}:{env.get('PATH', '')}"
    return env


def build_gem5(src: Path, options: Gem5BuildOptions, jobs: int) -> Path:
    target = f"build/{options.isa}/gem5.{options.variant}"
    log.info("building %s with -j%d (from cold: about 1.5 h on 2 cores; after a patch "
             "change: what the patch touched)", target, jobs)
    run_streaming(["scons", "--ignore-style", f"-j{jobs}", target],
                  cwd=src, label="gem5", env=scons_env())
    return src / target


def build_m5(src: Path, jobs: int) -> Path:
    m5_dir = src / "util" / "m5"
    log.info("building util/m5 for arm64 (static)")
    run_streaming(["scons", f"-j{jobs}", f"arm64.CROSS_COMPILE={M5_CROSS_COMPILE}",
                   "build/arm64/out/m5", "build/arm64/out/libm5.a"], cwd=m5_dir, label="m5")
    return m5_dir / "build" / "arm64" / "out"


def build_bootloaders(src: Path, out: Path) -> None:
    log.info("building arm64 bootloaders")
    work = out / ".bootloader-build"
    run(["make", "-s", "-C", str(src / "system" / "arm" / "bootloader" / "arm64"),
         f"BUILDDIR={work}", "all"])
    for image in sorted(work.glob("*.arm64")):
        shutil.copy2(image, out / image.name)
    shutil.rmtree(work)


def build_arm32_bootloader(src: Path, out: Path) -> None:
    """``boot.arm``: gem5's AArch32 bootloader (CPU 0 jumps to the kernel in r3,
    the others wait in WFI for an interrupt, then for a non-zero word at r5)."""
    log.info("building the 32-bit Arm bootloader")
    # The makefile writes its outputs beside boot.S and has no BUILDDIR: build a
    # copy, so the shared work tree stays as the series left it.
    work = out / ".bootloader-build"
    shutil.copytree(src / "system" / "arm" / "bootloader" / "arm", work)
    run(["make", "-s", "-C", str(work), f"CROSS_COMPILE={ARM32_CROSS_COMPILE}",
         ARM32_BOOTLOADER])
    shutil.copy2(work / ARM32_BOOTLOADER, out / ARM32_BOOTLOADER)
    shutil.rmtree(work)


def worktree_src(root: Path | None = None) -> Path:
    """The one gem5 work tree every build uses (its last build's series applied)."""
    return (root or cache.cache_root()) / "gem5" / "worktree" / "src"


def entry_binary(entry: cache.Entry) -> Path:
    """gem5.opt or gem5.fast: the one binary a gem5 entry was built as."""
    variant = entry.manifest()["inputs"]["options"]["variant"]
    return entry.path / Gem5BuildOptions(variant=variant).binary


def patch_ids(entry: cache.Entry) -> str:
    """A build's patch series as ``0001-0031:<8 hex>`` (``patches.series_id``),
    and its extra series after a ``+`` where it has one."""
    inputs = entry.manifest()["inputs"]
    ids = [series_id([(n, d) for n, d in inputs["patches"]])]
    if inputs.get("extra_patches"):
        extra = inputs["options"].get("extra_series", "extra")
        ids.append(f"{extra} {series_id([(n, d) for n, d in inputs['extra_patches']])}")
    return " + ".join(ids)


def _source(entry: cache.Entry, patch_dir: Path, options: Gem5BuildOptions,
            repo: str | None) -> Path:
    """The work tree at the pinned commit with the series applied and configured."""
    repo = repo or os.environ.get(REPO_ENV) or UPSTREAM_REPO
    src = worktree_src(entry.root)
    src.parent.mkdir(parents=True, exist_ok=True)
    prepare_source(src, repo)
    apply_series(src, options.series(patch_dir), f"gem5 {GEM5_VERSION}")
    configure(src, options)
    return src


def _ensure(entry: cache.Entry, inputs: dict[str, object], patch_dir: Path,
            options: Gem5BuildOptions, repo: str | None,
            fill: Callable[[Path, Path], None]) -> cache.Entry:
    """``entry`` from the cache, or built in the patched work tree: ``fill(src,
    out)`` builds in ``src`` and copies what the entry holds into ``out``."""
    def build() -> None:
        src = _source(entry, patch_dir, options, repo)
        with entry.lock(), entry.staging(inputs) as out:
            fill(src, out)

    return cache.ensure(entry, entry.kind, build, entry.root / "gem5" / "worktree.lock")


def ensure_tools(patch_dir: Path, jobs: int, repo: str | None = None) -> cache.Entry:
    """The guest-side tools: static arm64 ``m5``, ``libm5.a`` + headers, bootloaders.

    Kept apart from the simulator binary because they build in a minute, and the
    disk image and benchmarks need them long before a cold gem5 build ends.
    """
    def fill(src: Path, out: Path) -> None:
        m5_out = build_m5(src, jobs)
        build_bootloaders(src, out)
        shutil.copy2(m5_out / "m5", out / "m5")
        shutil.copy2(m5_out / "libm5.a", out / "libm5.a")
        shutil.copytree(src / "include", out / "include")

    return _ensure(tools_entry(patch_dir), tools_inputs(patch_dir), patch_dir,
                   Gem5BuildOptions(), repo, fill)


def ensure_arm32_tools(patch_dir: Path, repo: str | None = None) -> cache.Entry:
    """The 32-bit bootloader (``boot.arm``) for the arm32 kernel variants on gem5."""
    return _ensure(arm32_tools_entry(patch_dir), arm32_tools_inputs(patch_dir), patch_dir,
                   Gem5BuildOptions(), repo, lambda src, out: build_arm32_bootloader(src, out))


def ensure_gem5(patch_dir: Path, jobs: int, repo: str | None = None,
                options: Gem5BuildOptions | None = None) -> cache.Entry:
    """Return the cache entry for this patch series, building it if it is missing."""
    options = options or Gem5BuildOptions()
    inputs = build_inputs(patch_dir, options)
    entry = cache.entry("gem5", inputs)
    started = time.monotonic()

    def fill(src: Path, out: Path) -> None:
        binary = build_gem5(src, options, jobs)
        log.info("copying %s into the cache", binary.name)
        shutil.copy2(binary, out / binary.name)
        (out / "build-info.json").write_text(json.dumps({
            "build_seconds": round(time.monotonic() - started, 1),
            "jobs": jobs,
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }, indent=2) + "\n")

    return _ensure(entry, inputs, patch_dir, options, repo, fill)
