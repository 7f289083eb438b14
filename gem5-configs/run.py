"""gem5 run script for arm-hardening-gem5 (run it with gem5.opt).

  gem5.opt run.py boot     ... --checkpoint-out DIR   boot (atomic), checkpoint, stop
  gem5.opt run.py measure  ... --checkpoint DIR       restore into a detailed core (or
                                                      --cpu atomic), run the guest
                                                      script, stop at m5 exit
  gem5.opt run.py direct   ... --cpu atomic|o3        boot and run the script, no checkpoint
  gem5.opt run.py arm32    --vmlinux --bootloader --initramfs
                                                      a 32-bit kernel on the atomic CPU
                                                      with an initramfs as the guest
                                                      (hardening/board32.py), until the
                                                      guest's last console line; with
                                                      --checkpoint-out DIR, until the
                                                      init's m5 checkpoint, saved to DIR
  gem5.opt run.py arm32-measure ... --checkpoint DIR  restore that into a 32-bit core
                                                      model (or --cpu atomic), run the
                                                      getppid loop between m5 resetstats
                                                      and dumpstats, stop at m5 exit;
                                                      per-call figures in getppid.json

The guest's init runs whatever script it gets through ``m5 readfile``. The
boot script checkpoints and then reads again, so a run restored from that
checkpoint gets its own script at that point.

Exit status: 0 success; 2 bad arguments or unsupported feature; 3 the guest
script failed (m5 fail); 4 guest kernel panic or oops; 5 tick limit reached
(guest hung or never called m5 exit); 6 unexpected exit event;
7 a fast-forward run whose measured region did not run wholly on the core
model (the guest never asked for it, or asked too late)
(``hardening/exit_codes.py``, which the runner reads too).

Each board's modes live in one module: ``hardening/arm64_runs.py`` (boot,
measure, direct) and ``hardening/arm32_runs.py`` (arm32, arm32-measure); both
simulate and name their stops through ``hardening/simulation.py``.

``--detail fast-forward`` (measure, direct): the run starts on the atomic CPU
with the core model's caches and switches to the core model only while the
guest asks (``hardening/fast_forward.py``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hardening import arm32_runs, arm64_runs  # noqa: E402

BOARDS = (arm64_runs, arm32_runs)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="run.py")
    sub = parser.add_subparsers(dest="mode", required=True)
    for board in BOARDS:
        board.add_parsers(sub)
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    board = next(board for board in BOARDS if args.mode in board.MODES)
    return board.main(args)


if __name__ == "__m5_main__":
    sys.exit(main(sys.argv[1:]))
