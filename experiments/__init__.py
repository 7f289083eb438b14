"""Experiment definitions and the runner that turns them into tidy CSV.

Flow: definitions/<name>.toml -> matrix of runs -> builds from the cache
(gem5, kernel variants, disk) -> one boot checkpoint per (variant, features,
memory, cores) -> detailed runs restored from it -> stats -> results/<name>.csv.
"""

import sys
from pathlib import Path

# The gem5-free modules of gem5-configs/hardening (the core catalog, the
# parameter-override parser, the system-register timing table) serve the
# runner and the figures too; their code is part of every run's key there.
_CONFIGS = str(Path(__file__).resolve().parent.parent / "gem5-configs")
if _CONFIGS not in sys.path:
    sys.path.insert(0, _CONFIGS)
