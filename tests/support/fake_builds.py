"""Cache entries standing in for the builds, with the fake gem5 as gem5.opt.

Also a harness for the Ctrl-C test, run as its own process:
``python tests/support/fake_builds.py DEFINITIONS NAME RESULTS_DIR`` runs
experiment NAME (from the DEFINITIONS folder) on fake builds in
``$ARTIFACT_CACHE`` and exits as ``python -m experiments run`` does.
"""

from __future__ import annotations

import json
import logging
import shutil
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT))

from builders import cache  # noqa: E402
from experiments import gem5_builds, gem5_commands, runner, simulate, spec  # noqa: E402
from experiments.__main__ import cancel_on_signals  # noqa: E402

FAKE_GEM5 = Path(__file__).resolve().parent / "fake_gem5.py"


def _entry(root: Path, kind: str, key: str, inputs: dict[str, object],
           files: dict[str, str]) -> cache.Entry:
    entry = cache.Entry(kind=kind, key=key, root=root)
    entry.path.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (entry.path / name).write_text(text)
    (entry.path / cache.MANIFEST).write_text(json.dumps(
        {"kind": kind, "key": key, "inputs": inputs}))
    return entry


def make(root: Path, variants: tuple[str, ...] = ("baseline",)) -> gem5_builds.Builds:
    gem5 = _entry(root, "gem5", "fa4e9e5000000001", {"patches": [["0001-fake.patch", "0"]],
                                                     "options": {"variant": "opt"}}, {})
    shutil.copy2(FAKE_GEM5, gem5.path / "gem5.opt")
    (gem5.path / "gem5.opt").chmod(0o755)
    tools = _entry(root, "gem5-tools", "fa4e9e5000000002", {},
                   {gem5_commands.BOOTLOADER: "bootloader"})
    disk = _entry(root, "disk", "fa4e9e5000000003", {}, {"rootfs.ext4": "image"})
    kernels = {v: _entry(root, "kernel", f"fa4e9e50000001{n:02d}",
                         {"source": {"kind": "debian", "version": "6.12.fake"}},
                         {"vmlinux": f"kernel {v}"})
               for n, v in enumerate(variants)}
    return gem5_builds.Builds(gem5=gem5, tools=tools, disk=disk, kernels=kernels,
                           configs=gem5_builds.snapshot_configs(root))


def harness(definitions: Path, name: str, results_dir: Path) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    experiment = spec.load(name, definitions)
    builds = make(cache.cache_root(), tuple(sorted({r.variant for r in experiment.runs})))
    gem5 = simulate.Gem5Runner(simulate.RepoState.read(), progress_seconds=0.2)
    try:
        runner.run_experiments([experiment], builds, gem5, 2, results_dir)
    except (KeyboardInterrupt, simulate.Cancelled):
        return 130
    except runner.ExperimentFailed as err:
        logging.error("%s", err)
        return 1
    return 0


if __name__ == "__main__":
    cancel_on_signals()
    sys.exit(harness(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])))
