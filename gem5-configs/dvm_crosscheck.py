"""Entry point of the DVM cross-check: gem5's own full-system script
(``configs/deprecated/example/fs.py``) running a bare-metal guest, with our
TLB-maintenance timing (gem5 patches 0014, 0028) on its system when the run
names ``--param tlbi.<field>=<value>``.

Why gem5's script and not ``run.py``: the check sets our classic-memory TLBI
model against gem5's Ruby CHI DVM path (``CHI-dvm-misc-node.sm``), which only
gem5's Ruby configs build (``configs/ruby/CHI.py``, ``--ruby --enable-dvm``).
Running both memory systems through one script keeps the CPU, platform and
guest the same, so the DVM model is the only difference. gem5's configs are
not in the gem5 binary; the caller names the script in gem5's source tree.

    gem5.opt dvm_crosscheck.py --fs-script <gem5>/configs/deprecated/example/fs.py \\
        [--param tlbi.distributor_per_target=1ns ...] -- <fs.py arguments>
"""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hardening import params, tlbi  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(prog="dvm_crosscheck.py")
    parser.add_argument("--fs-script", type=Path, required=True,
                        help="gem5's configs/deprecated/example/fs.py")
    parser.add_argument("--param", action="append", default=[],
                        help="tlbi.<field>=<value>: our TLBI timing on the system "
                        "(classic memory only; none: gem5's own timing)")
    parser.add_argument("fs_args", nargs=argparse.REMAINDER,
                        help="-- then fs.py's arguments")
    args = parser.parse_args()
    if not args.fs_script.is_file():
        parser.error(f"--fs-script {args.fs_script}: no such file")
    timing = tlbi.make_tlbi_timing(args.param)
    if timing is not None:
        if "--ruby" in args.fs_args:
            parser.error("--param tlbi.* times TLBIs in the classic memory system; "
                         "a --ruby run's DVM path is gem5's CHI protocol")
        params.apply_overrides({tlbi.TLBI_ROOT: [timing]}, args.param)
        from m5.objects import ArmSystem
        # fs.py builds and instantiates the system itself; a class default is
        # the one place to hand it the object before it does.
        ArmSystem.tlbi_timing = timing
    elif args.param:
        parser.error(f"--param {args.param[0]}: only tlbi.<field>=<value> applies here")
    if "--enable-dvm" in args.fs_args:
        from m5.objects import ArmDecoder
        # fs.py has configs/ruby/CHI.py set dvm_enabled on the CPUs' decoders
        # before it creates them (createThreads comes after create_system),
        # so its --enable-dvm reaches no decoder; the class default does.
        ArmDecoder.dvm_enabled = True
    fs_args = args.fs_args[1:] if args.fs_args[:1] == ["--"] else args.fs_args
    sys.argv = [str(args.fs_script), *fs_args]
    # gem5's scripts find their libraries (configs/common, configs/ruby)
    # relative to sys.path[0], which must be the script's own folder.
    sys.path.insert(0, str(args.fs_script.resolve().parent))
    runpy.run_path(str(args.fs_script), run_name="__main__")


if __name__ == "__m5_main__":
    main()
