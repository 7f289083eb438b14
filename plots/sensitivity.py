"""Figures and tables: how much each claim's conclusion depends on an assumed
system-register or ISB cost.

Reads every ``<results>/checks/sensitivity/<experiment>.csv`` (the runs of
``experiments/definitions/checks/<experiment>.toml``: one claim's arms, each
under the model's own timing and under the assumed costs swept); writes
``<experiment>.{pdf,png,md}`` (its name with underscores). Per workload and setting: each
arm's time per operation and its effect over the claim's baseline kernel in
the same setting (arm / baseline - 1), so a reader sees how far an effect
moves when one cost does. One run per point (no layout samples): the tables
say so and no spread is drawn. Where the claim's hardware measured the same
arms on the same workload (C1: the Pixel 4's invalid syscalls), its effects
are drawn beside the settings' and its times are a row of the table.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import pandas as pd

from plots import c1_published, style

CHECKS = "checks/sensitivity"
METRIC = "ns_per_iteration"
# Each sensitivity experiment's baseline kernel: the one its claim's effects
# are measured against.
BASELINES = {"c1-sensitivity": "nopac-base", "c2-kpkeys-sensitivity": "kpkeys-base",
             "c4-uaccess-isb": "baseline"}
# What a run's overrides mean, in the words of the table (an unknown set is
# shown as written).
SETTINGS = {
    "": "the model's timing",
    "sysreg.tcr.regs=tcr_el1 sysreg.tcr.read_serialize=false": "TCR_EL1 reads out of order",
    "sysreg.sctlr.read_serialize=false": "SCTLR_EL1 reads out of order",
    "sysreg.isb_latency=13": "ISB +13 cycles",
    "sysreg.isb_latency=26": "ISB +26 cycles",
}


PUBLISHED_SETTING = "published"


class Hardware(NamedTuple):
    """A machine's measurement of a check's arms and baseline on one of its
    workloads, taken the same way for each kernel."""
    label: str
    statistic: str
    workload: str
    ns: dict[str, float]


def pixel4_invalid_syscalls() -> Hardware:
    c1 = style.published()["c1"]
    pixel4 = c1["pixel4"]
    ns = {arm: pixel4[column] for arm, (column, _) in c1_published.ARMS.items()}
    return Hardware(pixel4["label"], c1["statistic"], "invalid",
                    {c1_published.BASELINE: pixel4["baseline"], **ns})


# The hardware drawn beside each sensitivity experiment, where its claim's
# machine measured the same arms on the same workload.
HARDWARE_BESIDE: dict[str, Callable[[], Hardware]] = {
    "c1-sensitivity": pixel4_invalid_syscalls,
}


def with_published(name: str, ns: dict[tuple[str, str, str], float]
                   ) -> tuple[dict[tuple[str, str, str], float], Hardware | None]:
    """The check's values with the hardware's (if any) as one more setting."""
    if name not in HARDWARE_BESIDE:
        return ns, None
    hardware = HARDWARE_BESIDE[name]()
    return ({**ns, **{(hardware.workload, PUBLISHED_SETTING, v): t
                      for v, t in hardware.ns.items()}}, hardware)


def setting_label(params: str) -> str:
    return SETTINGS.get(params, params)


def values(frame: pd.DataFrame) -> dict[tuple[str, str, str], float]:
    """{(workload, params, variant): ns per operation}, one run each (a check
    run on several cores or samples would need a figure of its own)."""
    found: dict[tuple[str, str, str], float] = {}
    for r in frame[frame["metric"] == METRIC].itertuples():
        cell = (r.workload, r.params, r.variant)
        if cell in found:
            raise RuntimeError(f"two runs of {cell} in one sensitivity check: this figure "
                               "draws one core and one layout sample")
        found[cell] = float(r.value)
    return found


def output_name(experiment: str) -> str:
    return experiment.replace("-", "_")


def ordered_settings(ns: dict[tuple[str, str, str], float]) -> list[str]:
    """The model's own timing first, the swept costs, the hardware last."""
    return sorted({k[1] for k in ns}, key=lambda p: (p == PUBLISHED_SETTING, p != "", p))


def table(name: str, ns: dict[tuple[str, str, str], float], baseline: str,
          hardware: Hardware | None = None) -> str:
    workloads = sorted({k[0] for k in ns})
    settings = ordered_settings(ns)
    variants = sorted({k[2] for k in ns}, key=lambda v: (v != baseline, v))
    arms = [v for v in variants if v != baseline]
    lines = [f"`{name}` (`results/checks/sensitivity/{name}.csv`): ns per operation of each "
             f"kernel and each arm's effect over `{baseline}` in the same setting; one run "
             "per cell, no layout samples.", "",
             "| workload | setting | " + " | ".join(f"`{v}` ns" for v in variants) + " | "
             + " | ".join(f"`{v}` vs base" for v in arms) + " |",
             "|---|---|" + "---:|" * (len(variants) + len(arms))]
    for workload in workloads:
        for params in settings:
            base = ns.get((workload, params, baseline))
            cells = [f"{ns[(workload, params, v)]:,.1f}" if (workload, params, v) in ns
                     else "—" for v in variants]
            cells += [f"{100 * (ns[(workload, params, v)] / base - 1):+.1f}%"
                      if base and (workload, params, v) in ns else "—" for v in arms]
            label = (f"published: {hardware.label}, {hardware.statistic}"
                     if hardware and params == PUBLISHED_SETTING
                     else setting_label(params))
            lines.append(f"| {workload} | {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def figure(name: str, ns: dict[tuple[str, str, str], float], baseline: str,
           frame: pd.DataFrame, hardware: Hardware | None = None) -> style.plt.Figure:
    """One panel per workload: each arm's effect over the baseline, grouped by
    setting, the hardware's (where there is one) in a group of its own at the right."""
    workloads = sorted({k[0] for k in ns})
    settings = ordered_settings(ns)
    arms = sorted({k[2] for k in ns} - {baseline})
    style.apply()
    fig, axes = style.plt.subplots(1, len(workloads), squeeze=False,
                                   figsize=(style.FULL_WIDTH_IN if len(workloads) > 1
                                            else style.COLUMN_WIDTH_IN, 2.4))
    for axis, workload in zip(axes[0], workloads):
        effects = {arm: [100 * (ns[(workload, p, arm)] / ns[(workload, p, baseline)] - 1)
                         if (workload, p, arm) in ns and (workload, p, baseline) in ns
                         else float("nan") for p in settings] for arm in arms}
        labels = [(f"published:\n{hardware.label.split(' (')[0]}"
                   if hardware and p == PUBLISHED_SETTING
                   else setting_label(p).replace(" out of order", "\nout of order")
                   .replace(" +", "\n+")) for p in settings]
        style.grouped_bars(axis, labels, effects, tick_fontsize=6)
        if PUBLISHED_SETTING in settings:
            axis.axvline(settings.index(PUBLISHED_SETTING) - 0.5, color="black",
                         linewidth=0.5, linestyle=":")
        axis.axhline(0, color="black", linewidth=0.5)
        axis.set_title(workload, loc="left")
        axis.set_ylabel(f"effect over {baseline} (%)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    # A column-wide figure has room for two kernel names side by side.
    columns = min(3 if len(workloads) > 1 else 2, len(labels))
    legend = fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.02),
                        ncol=columns, frameon=False, fontsize=6)
    hardware_note = (f"; right of the dotted line: {hardware.label}, {hardware.statistic}"
                     if hardware else "")
    style.add_note_under(fig, "gem5 simulated time, one run per bar (no layout samples, no "
                         "spread drawn); every cost but the model's own is an assumption swept"
                         + hardware_note, frame, legend)
    return fig


def main(folders: style.Folders) -> None:
    checks = folders.results / CHECKS
    names = sorted(p.stem for p in checks.glob("*.csv")) if checks.is_dir() else []
    if not names:
        raise style.NoResults(f"{style.shown(checks)} holds no results: run 'python -m "
                              "experiments --definitions experiments/definitions/checks run "
                              f"NAME --results-dir {style.shown(checks)}' first")
    unknown = sorted(set(names) - set(BASELINES))
    if unknown:
        raise RuntimeError(f"no baseline kernel for {', '.join(unknown)}; known: "
                         f"{', '.join(BASELINES)}")
    for name in names:
        frame = pd.read_csv(checks / f"{name}.csv", keep_default_na=False)
        ns, hardware = with_published(name, values(frame))
        folders.publish(figure(name, ns, BASELINES[name], frame, hardware),
                        output_name(name),
                        table(name, ns, BASELINES[name], hardware))


if __name__ == "__main__":
    style.run_alone(main)
