"""Paper figures: one script per figure, sharing ``style``."""

# Importing the experiments package puts gem5-configs' gem5-free modules
# (hardening.param_overrides, which reads a results row's params) on the path.
import experiments  # noqa: F401
