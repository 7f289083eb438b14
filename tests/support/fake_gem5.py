#!/usr/bin/env python3
"""A stand-in for gem5.opt that the runner's tests can start as a process.

It takes gem5's command line (``--outdir=DIR run.py MODE ...``) and writes
what a real run leaves behind: ``stats.txt`` with a measured-region dump,
the guest console with the benchmark's ``ops=`` line, and for a boot the
checkpoint directory. Numbers are derived from the arguments, so different
runs differ. Environment knobs (the tests set them):

- ``FAKE_GEM5_LOG``: a file that gets one line per simulation (``pid mode``);
- ``FAKE_GEM5_SLEEP``: seconds to run before finishing (progress lines meanwhile);
- ``FAKE_GEM5_EXIT``: the exit status to end with (run.py's meanings);
- ``FAKE_GEM5_NO_OPS``: leave the ``ops=`` line out of the console;
- ``FAKE_GEM5_NO_L2``: leave every L2 statistic out of stats.txt;
- ``FAKE_GEM5_BAD_PARAM``: a ``--param`` text the model check rejects, as
  run.py does a parameter the model lacks (status 2, the reason on stderr).

A run writes ``model.json`` and ``detail.json`` as run.py does; with
``--detail fast-forward`` its statistics name both processors' cores.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import time
from pathlib import Path


def _arg(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def stats_text(seed: int, with_l2: bool, fast_forward: bool = False) -> str:
    cycles = 100_000 + seed % 1000
    cores = "detailed_cores" if fast_forward else "cores"
    lines = [
        "---------- Begin Simulation Statistics ----------",
        "simSeconds 0.000050",
        f"simTicks {cycles * 350}",
        "simInsts 999999",
        "hostSeconds 0.5",
        f"board.processor.{cores}.core.numCycles {cycles}",
        f"board.processor.{cores}.core.commitStats0.numInsts 50000",
        f"board.processor.{cores}.core.branchPred.condIncorrect 10",
        f"board.processor.{cores}.core.rename.serializing 120",
        f"board.processor.{cores}.core.rename.serializeStallCycles 3000",
        f"board.processor.{cores}.core.iew.dispNonSpecInsts 6",
        f"board.processor.{cores}.core.fetch.cacheLines 9000",
        # l1d misses are absent (zero), as gem5 leaves out nozero counters.
        "board.cache_hierarchy.l1d.overallHits::total 4000",
        "board.cache_hierarchy.l1i.overallMisses::total 3",
        f"board.processor.{cores}.core.mmu.dtb.readMisses 2",
        f"board.processor.{cores}.core.mmu.itb.instMisses 1",
        f"board.processor.{cores}.core.mmu.dtb.flushTlb 7",
        f"board.processor.{cores}.core.mmu.dtb.flushedEntries 30",
        "board.memory.mem_ctrl.readReqs 5",
    ]
    if fast_forward:
        # The atomic CPU at the boot's path: idle while the region ran.
        lines += ["board.processor.cores.core.numCycles 0",
                  "board.processor.cores.core.commitStats0.numInsts 0"]
    if with_l2:
        lines.append("board.cache_hierarchy.l2.overallMisses::total 4")
    lines.append("---------- End Simulation Statistics   ----------")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    outdir = Path(next(a for a in argv if a.startswith("--outdir=")).split("=", 1)[1])
    args = argv[argv.index(next(a for a in argv if a.endswith("run.py"))) + 1:]
    mode = args[0]
    outdir.mkdir(parents=True, exist_ok=True)
    log = os.environ.get("FAKE_GEM5_LOG")
    if log and "--check" not in args:
        with open(log, "a") as handle:
            handle.write(f"{os.getpid()} {mode}\n")
    if "--check" in args:
        bad = os.environ.get("FAKE_GEM5_BAD_PARAM")
        if bad and bad in args:
            print(f"error: --param '{bad}': BranchPredictor has no parameter", file=sys.stderr)
            return 2
        print("model ok")
        return 0
    seconds = float(os.environ.get("FAKE_GEM5_SLEEP", "0"))
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        elapsed = time.monotonic() - started
        print(f"progress: tick={int(elapsed * 1e9)} start=0 limit=10000000000 "
              f"insts={int(elapsed * 1e6)}", flush=True)
        time.sleep(0.05)
    # As gem5's statistics, independent of where the cache is: directories dropped.
    seed = int(hashlib.sha256(re.sub(r"/\S*/", "", " ".join(args)).encode()).hexdigest(), 16)
    script_path = _arg(args, "--script")
    script = Path(script_path).read_text() if script_path else ""
    console = ["init: up", f"run: {script.strip().splitlines()[-1] if script else ''}"]
    if mode != "boot" and not os.environ.get("FAKE_GEM5_NO_OPS"):
        console.append("selftest-free benchmark ops=1000")
    (outdir / "board.terminal").write_text("\n".join(console) + "\n")
    if mode == "boot":
        checkpoint = Path(_arg(args, "--checkpoint-out") or outdir / "cpt")
        checkpoint.mkdir(parents=True, exist_ok=True)
        (checkpoint / "m5.cpt").write_text("fake\n")
    else:
        detail = _arg(args, "--detail") or "full"
        fast_forward = detail == "fast-forward"
        (outdir / "stats.txt").write_text(stats_text(
            seed, with_l2=not os.environ.get("FAKE_GEM5_NO_L2"), fast_forward=fast_forward))
        (outdir / "model.json").write_text(json.dumps({"mode": mode, "detail": detail}))
        (outdir / "detail.json").write_text(json.dumps({
            "detail": detail,
            "host_seconds": {"setup": 2.0, "detailed": 1.5, "teardown": 0.25}}))
    return int(os.environ.get("FAKE_GEM5_EXIT", "0"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
