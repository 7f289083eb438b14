"""Core models, one module per core; ``load_core`` finds one by name
(``load_arm32_core`` for the 32-bit board's cores)."""

from __future__ import annotations

import importlib

from hardening.catalog import ARM32_CORE_MODULES, CORE_MODULES, check_arm32_core, check_core
from hardening.cores.base import CoreModel


def load_core(name: str) -> CoreModel:
    module = importlib.import_module(CORE_MODULES[check_core(name)])
    return module.MODEL


def load_arm32_core(name: str) -> CoreModel:
    module = importlib.import_module(ARM32_CORE_MODULES[check_arm32_core(name)])
    return module.MODEL
