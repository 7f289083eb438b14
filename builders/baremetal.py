"""Build the bare-metal guests: ``disk-image/dvm-loop``'s images for the DVM
cross-check (no kernel, no disk; every core starts in the image).

Compiled with Debian's ``aarch64-linux-gnu-gcc`` against the m5 operation
numbers of the gem5 tools entry, cached by the hash of the folder, the
compiler, that entry and the recipe.
"""

from __future__ import annotations

import logging
from pathlib import Path

from builders import cache
from builders.disk import CROSS_CC
from builders.process import run

log = logging.getLogger(__name__)

RECIPE_VERSION = 1
SOURCE_DIR = "dvm-loop"
# TLBIs per DSB, and whether the other cores wait (idle) or broadcast too
# (busy): the images the folder's Makefile makes, one per shape.
DVM_LOOP_TLBIS = (1, 16)
DVM_LOOP_PEERS = ("idle", "busy")
# Rounds core 0 times; the runner divides the region's time by it.
DVM_LOOP_ROUNDS = 64


def dvm_loop_image(tlbis: int, peers: str) -> str:
    """The file name of one shape's image in the entry."""
    if tlbis not in DVM_LOOP_TLBIS or peers not in DVM_LOOP_PEERS:
        raise ValueError(f"dvm-loop shape tlbi{tlbis}-{peers} (valid: TLBIs "
                         f"{', '.join(map(str, DVM_LOOP_TLBIS))}; peers "
                         f"{', '.join(DVM_LOOP_PEERS)})")
    return f"dvm-loop-tlbi{tlbis}-{peers}.elf"


def build_inputs(disk_dir: Path, tools: cache.Entry) -> dict[str, object]:
    return {
        "source": cache.tree_digest(disk_dir / SOURCE_DIR),
        "compiler": run([CROSS_CC, "--version"]).splitlines()[0],
        "gem5_tools": tools.key,
        "rounds": DVM_LOOP_ROUNDS,
        "recipe": RECIPE_VERSION,
    }


def ensure_dvm_loop(disk_dir: Path, tools: cache.Entry, root: Path | None = None
                    ) -> cache.Entry:
    """The dvm-loop images for these sources (in ``root``, default the build
    cache); built (in a second) if missing."""
    inputs = build_inputs(disk_dir, tools)
    entry = cache.entry("dvm-loop", inputs, root)

    def build() -> None:
        log.info("building the bare-metal dvm-loop images")
        with entry.staging(inputs) as out:
            run(["make", "-s", "-C", str(disk_dir / SOURCE_DIR), f"CC={CROSS_CC}",
                 f"M5_INCLUDE={tools.path / 'include'}", f"ROUNDS={DVM_LOOP_ROUNDS}",
                 f"OUT={out}"])
            missing = [name for name in (dvm_loop_image(t, p) for t in DVM_LOOP_TLBIS
                                         for p in DVM_LOOP_PEERS)
                       if not (out / name).is_file()]
            if missing:
                raise RuntimeError(f"dvm-loop build made no {', '.join(missing)}")

    return cache.ensure(entry, "dvm-loop", build)
