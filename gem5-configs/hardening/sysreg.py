"""How a core model times system-register accesses and ISB (gem5 patch 0004).

gem5 v24 drains the pipeline around every MSR and MRS, whatever the register.
Patch 0004 lets the ``ArmDecoder`` take timing classes: groups of registers
with whether a write or read serializes and an extra latency in cycles. A core
model lists its classes here; an empty table is gem5's own timing.

Runs can change any field with ``--param sysreg.<class>.<field>=<value>``
(a new class name creates a class; its ``regs`` are ``a+b+c``) and the ISB
with ``--param sysreg.isb_latency=<cycles>``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields, replace

from hardening import param_overrides


class BadSysRegTiming(ValueError):
    """A timing override that names no field, or a value of the wrong kind."""


@dataclass(frozen=True)
class SysRegClass:
    """One group of registers (gem5's names: ``sctlr_el1``, ``pan``, ...).

    The defaults are gem5's: MRS waits for all older instructions to commit,
    MSR executes at the head of the ROB and younger instructions wait for it.
    gem5 refuses relaxations that could change what a program computes; see
    the patch's ``sysreg_timing.cc`` for which registers may be relaxed.
    """

    regs: tuple[str, ...]
    read_serialize: bool = True
    read_latency: int = 0
    write_serialize: bool = True
    write_nonspeculative: bool = True
    write_latency: int = 0


FIELD_TYPES = {f.name: f.type for f in fields(SysRegClass)}


@dataclass(frozen=True)
class SysRegTiming:
    """A core's table: named classes, the ISB's extra latency, and where the
    numbers come from (recorded with every result)."""

    classes: Mapping[str, SysRegClass] = field(default_factory=dict)
    isb_latency: int = 0
    source: str = "gem5 v24 timing: every MSR/MRS serializes, no extra latency"

    def overridden(self, texts: Iterable[str]) -> SysRegTiming:
        """This table with ``sysreg.*`` overrides (``path=value`` texts) applied."""
        timing = self
        for text in texts:
            timing = timing._override(text)
        return timing

    def _override(self, text: str) -> SysRegTiming:
        try:
            override = param_overrides.parse(text, ("sysreg",))
        except param_overrides.BadOverride as err:
            raise BadSysRegTiming(f"--param {err}") from err
        parts, value = (override.root, *override.names), override.value
        if len(parts) not in (2, 3):
            raise BadSysRegTiming(f"--param '{text}': expected sysreg.isb_latency=N or "
                                  "sysreg.<class>.<field>=VALUE")
        if len(parts) == 2:
            if parts[1] != "isb_latency":
                raise BadSysRegTiming(f"--param '{text}': sysreg has isb_latency and the "
                                      f"classes {', '.join(sorted(self.classes)) or '(none)'}")
            return replace(self, isb_latency=_cycles(text, value),
                           source=f"{self.source}; overridden: {text}")
        name, attribute = parts[1], parts[2]
        if attribute not in FIELD_TYPES:
            raise BadSysRegTiming(f"--param '{text}': no field '{attribute}'; valid: "
                                  f"{', '.join(FIELD_TYPES)}")
        current = self.classes.get(name)
        if current is None:
            if attribute != "regs":
                raise BadSysRegTiming(
                    f"--param '{text}': no class '{name}' in this core's table "
                    f"({', '.join(sorted(self.classes)) or 'empty'}); a new class needs "
                    f"sysreg.{name}.regs=REG+REG first")
            current = SysRegClass(regs=())
        if attribute == "regs":
            parsed: object = tuple(r for r in value.split("+") if r)
        elif attribute.endswith("latency"):
            parsed = _cycles(text, value)
        else:
            parsed = _flag(text, value)
        classes = dict(self.classes)
        classes[name] = replace(current, **{attribute: parsed})
        return replace(self, classes=classes, source=f"{self.source}; overridden: {text}")

    def as_dict(self) -> dict[str, object]:
        return {"classes": {name: asdict(c) for name, c in sorted(self.classes.items())},
                "isb_latency": self.isb_latency, "source": self.source}

    @property
    def is_gem5_default(self) -> bool:
        return self.isb_latency == 0 and all(
            c == SysRegClass(regs=c.regs) for c in self.classes.values())

    def install(self, decoder: object) -> None:
        """Give one ``ArmDecoder`` this table (each needs its own SimObjects).

        A table at gem5's values (named classes included) installs nothing, so
        it runs exactly as gem5 v24 does."""
        if self.is_gem5_default:
            return
        if not hasattr(decoder, "isb_latency"):
            raise BadSysRegTiming("this gem5 build has no system-register timing "
                                  "(gem5 patch 0004); rebuild with 'make gem5'")
        from m5.objects import ArmSysRegTimingClass

        decoder.sysreg_timing = [
            ArmSysRegTimingClass(regs=list(c.regs), read_serialize=c.read_serialize,
                                 read_latency=c.read_latency,
                                 write_serialize=c.write_serialize,
                                 write_nonspeculative=c.write_nonspeculative,
                                 write_latency=c.write_latency)
            for _, c in sorted(self.classes.items())]
        decoder.isb_latency = self.isb_latency


GEM5_TIMING = SysRegTiming()


def split_overrides(overrides: Iterable[str]) -> tuple[list[str], list[str]]:
    """(``sysreg.*`` overrides, all others)."""
    sysreg, other = [], []
    for text in overrides:
        (sysreg if text.startswith("sysreg.") else other).append(text)
    return sysreg, other


def _cycles(text: str, value: str) -> int:
    try:
        cycles = int(value)
    except ValueError:
        cycles = -1
    if cycles < 0:
        raise BadSysRegTiming(f"--param '{text}': expected a whole number of cycles")
    return cycles


def _flag(text: str, value: str) -> bool:
    lowered = value.lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise BadSysRegTiming(f"--param '{text}': expected true or false")
