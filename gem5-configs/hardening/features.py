"""Hardening features as ArmRelease extensions, switched on independently.

Every core model has a base architecture (``catalog.ARCHITECTURES``: what its
namesake implements apart from the features under study); each requested
feature adds its extensions on top. Features the real core lacks can still be
switched on for what-if runs.
"""

from __future__ import annotations

from collections.abc import Iterable

from m5.objects import ArmExtension, ArmRelease

from hardening.catalog import ARCHITECTURES, FEATURES, check_architecture, parse_features

# Extensions each feature needs. MTE, POE, FPAC and BTI come from our gem5
# patches (0005-0008, 0022, 0023); a gem5 built without them lacks the names
# and the run says so.
FEATURE_EXTENSIONS: dict[str, tuple[str, ...]] = {
    "pan": ("FEAT_PAN",),
    "pac": ("FEAT_PAuth",),
    # A failed AUT* faults at once (EC 0x1C; Linux sends SIGILL) instead of
    # leaving a poisoned pointer to fault where it is used. FPAC is defined
    # on PAuth2, so the switch brings both and PAuth; FPACCOMBINE (the
    # authenticating branches and loads fault too) is left out, since the
    # Neoverse V2 that has FPAC is not listed with it (LLVM-PROC).
    "fpac": ("FEAT_PAuth", "FEAT_PAuth2", "FEAT_FPAC"),
    # Branch target identification: guarded pages' indirect-branch targets
    # must be BTI (or PACIxSP) landing pads.
    "bti": ("FEAT_BTI",),
    "mte": ("FEAT_MTE", "FEAT_MTE2", "FEAT_MTE3"),
    # Linux enables the EL0 overlay through TCR2_EL1 (FEAT_TCR2), and EL1
    # reaches TCR2_EL1 only when HCRX_EL2.TCR2En is set (FEAT_HCX); without
    # HCX the kernel's first TCR2_EL1 access traps to EL2 for ever.
    "poe": ("FEAT_HCX", "FEAT_TCR2", "FEAT_S1POE"),
}
assert set(FEATURE_EXTENSIONS) == set(FEATURES)


class FeatureNotSupported(RuntimeError):
    """The gem5 binary in use does not implement a requested feature."""


def supported_extensions() -> set[str]:
    return set(ArmExtension.vals)


def check_supported(features: Iterable[str]) -> None:
    available = supported_extensions()
    for feature in features:
        missing = [e for e in FEATURE_EXTENSIONS[feature] if e not in available]
        if missing:
            raise FeatureNotSupported(
                f"feature '{feature}' is not supported by this gem5 build "
                f"(no {', '.join(missing)}); it needs the gem5 patches that add it")


def make_release(architecture: str, features: Iterable[str]) -> ArmRelease:
    """An ArmRelease with the architecture's extensions plus the requested features."""
    features = parse_features(",".join(features))
    check_supported(features)
    base = ARCHITECTURES[check_architecture(architecture)]
    extensions = list(dict.fromkeys(
        [*base, *(e for f in features for e in FEATURE_EXTENSIONS[f])]))
    return ArmRelease(extensions=extensions)
