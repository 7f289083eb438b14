"""Core models, one module per core; ``load_core`` finds one by name."""

from __future__ import annotations

import importlib

from hardening.catalog import CORE_MODULES, check_core
from hardening.cores.base import CoreModel


def load_core(name: str) -> CoreModel:
    module = importlib.import_module(CORE_MODULES[check_core(name)])
    return module.MODEL
