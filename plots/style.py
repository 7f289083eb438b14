"""Shared figure style: two-column-paper sizes, a colour-blind-safe palette that
also separates in grayscale (distinct lightness plus hatching), and output in
PDF (paper) and PNG (README)."""

from __future__ import annotations

import argparse
import json
import math
import statistics
import tomllib
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import matplotlib.legend

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from experiments import folders as layout  # noqa: E402
from experiments.collect import PROVENANCE as PROVENANCE_COLUMNS  # noqa: E402
from hardening import param_overrides  # noqa: E402

PLOTS = Path(__file__).resolve().parent
REPO_ROOT = PLOTS.parent
# The committed record (results/ drawn into plots/out/, whose tables the docs
# hold) and a user's own runs (out/results/ drawn into out/figures/); the rule
# is experiments/folders.py's.
RESULTS = layout.COMMITTED_RESULTS
OUT = PLOTS / "out"
USER_RESULTS = layout.USER_RESULTS
USER_FIGURES = layout.USER_FIGURES

# Okabe-Ito colours ordered by lightness so that bars stay apart in grayscale.
PALETTE = ("#000000", "#0072B2", "#D55E00", "#009E73", "#E69F00", "#56B4E9", "#F0E442")
HATCHES = ("", "//", "..", "\\\\", "--", "oo", "++")
HARDWARE_COLOUR = "#999999"
HARDWARE_HATCH = "xx"  # never one of HATCHES' first entries, so never a model's
# When two hardware platforms stand side by side: grey, told apart by shade and a
# hatch no model uses.
HARDWARE_STYLES = ((HARDWARE_COLOUR, HARDWARE_HATCH), ("#DDDDDD", "**"))
# Every file Folders.save and save_table write for a figure, by suffix (its
# picture at both widths, its table, its provenance): what plots.all removes
# when the figure is skipped.
OUTPUT_SUFFIXES = ("pdf", "png", "column.pdf", "page.pdf", "md", "provenance.json")
# Where add_provenance leaves a figure's builds for Folders.save.
PROVENANCE_ATTRIBUTE = "hardening_provenance"
COLUMN_WIDTH_IN = 3.35  # one column of a two-column ACM/IEEE paper
FULL_WIDTH_IN = 7.0
# The widest a saved picture may be: a column, or the page across both.
COLUMN_LIMIT_IN, PAGE_LIMIT_IN = 3.5, 7.0
# Between two panels stacked for a column: room for tick labels and a title.
PANEL_GAP_IN = 0.7
# Left free at either side of a re-laid figure's drawing.
PANEL_SIDE_IN = 0.02


def apply() -> None:
    plt.rcParams.update({
        "font.family": "serif",
        "font.size": 8,
        "axes.titlesize": 8,
        "axes.labelsize": 8,
        "legend.fontsize": 7,
        "xtick.labelsize": 7,
        "ytick.labelsize": 7,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": True,
        "axes.grid.axis": "y",
        "grid.linewidth": 0.4,
        "grid.alpha": 0.5,
        "hatch.linewidth": 0.6,
        "pdf.fonttype": 42,  # embed TrueType, as publishers ask
        "savefig.bbox": "tight",
        # A thin margin: the saved width is the drawn width, within a column's.
        "savefig.pad_inches": 0.02,
        "savefig.dpi": 200,
    })


def figure(width: float = COLUMN_WIDTH_IN, height: float = 2.2) -> tuple[plt.Figure, plt.Axes]:
    apply()
    return plt.subplots(figsize=(width, height))


def published() -> dict:
    return tomllib.loads((PLOTS / "published.toml").read_text())


class NoResults(SystemExit):
    """A figure's results do not exist yet (``plots.all`` skips the figure)."""


def median_interval(values: Sequence[float], level: float = 0.95
                    ) -> tuple[float, float, float, float]:
    """(median, low, high, coverage): a distribution-free interval for the
    median from order statistics, the narrowest whose coverage reaches
    ``level``, or the whole range (with its smaller coverage) when there are
    too few samples for that. One sample: no interval (low = high = median)."""
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        return math.nan, math.nan, math.nan, 0.0
    median = statistics.median(ordered)
    if n == 1:
        return median, median, median, 0.0
    # Coverage of [x_(k), x_(n+1-k)] (1-based) is 1 - 2 P(Binomial(n, 1/2) < k).
    best = (ordered[0], ordered[-1], 1 - 2 * 0.5 ** n)
    for k in range(1, n // 2 + 1):
        below = sum(math.comb(n, i) for i in range(k)) / 2 ** n
        coverage = 1 - 2 * below
        if coverage >= level:
            best = (ordered[k - 1], ordered[n - k], coverage)
    return median, best[0], best[1], best[2]


def paired_ratio(arm: dict[int, float], base: dict[int, float]
                 ) -> tuple[float, float, float, float]:
    """Median and interval over layout samples of arm / base, each sample
    against the same sample (NaNs where the two share none)."""
    common = sorted(set(arm) & set(base))
    if not common:
        return (math.nan,) * 4
    return median_interval([arm[k] / base[k] for k in common])

def require_cells(found: Collection[object], needed: Iterable[object]) -> None:
    """KeyError naming the first needed cell the results lack: results that
    hold part of an experiment (its quick runs, a run stopped half-way) are
    skipped by plots.all instead of drawn with empty bars."""
    for cell in needed:
        if cell not in found:
            raise KeyError(cell)


def provenance_note(frame: pd.DataFrame) -> str:
    """One line naming the builds that made the data."""
    builds = frame[["gem5_version", "gem5_build", "kernel_build"]].drop_duplicates()
    gem5 = ",".join(sorted(set(builds["gem5_version"] + "/" + builds["gem5_build"])))
    kernels = ",".join(sorted(set(builds["kernel_build"])))
    return f"gem5 {gem5}; kernel {kernels}"


def provenance(frame: pd.DataFrame) -> dict[str, list[str]]:
    """Every build, patch series, configuration and commit behind the data:
    each provenance column the rows have, with its distinct values."""
    # Rows of two kinds (gem5's and QEMU's) leave each other's columns empty.
    return {column: sorted({str(v) for v in frame[column].dropna() if str(v)})
            for column in (*PROVENANCE_COLUMNS, "qemu_version") if column in frame.columns}


def add_note(fig: plt.Figure, text: str, frame: pd.DataFrame, below: float) -> None:
    """A grey line under the axes saying how the data were made; the builds
    that made them go into the files' metadata (add_provenance)."""
    _note(fig, text, below, "baseline")
    add_provenance(fig, frame)


def add_note_under(fig: plt.Figure, text: str, frame: pd.DataFrame, above: plt.Artist,
                   gap_in: float = 0.04) -> None:
    """add_note, its top ``gap_in`` under what ``above`` draws (a figure legend
    under the panels, however many rows it wraps to), measured, not guessed."""
    fig.canvas.draw()
    bottom = above.get_window_extent().y0 / fig.bbox.height
    _note(fig, text, bottom - gap_in / fig.get_figheight(), "top")
    add_provenance(fig, frame)


def _note(fig: plt.Figure, text: str, y: float, alignment: str) -> None:
    # Wrapped at the figure's edge: a note never widens a figure past its column.
    fig.text(0.0, y, text, fontsize=5, color="#555555", transform=fig.transFigure,
             wrap=True, verticalalignment=alignment)


def error_bars(spreads: Sequence[tuple[float, float, float, float]]
               ) -> tuple[list[float], list[list[float]]]:
    """Bar heights and matplotlib yerr from median_interval() results."""
    heights = [m for m, _, _, _ in spreads]
    return heights, [[m - lo for m, lo, _, _ in spreads], [hi - m for m, _, hi, _ in spreads]]


def grouped_bars(ax: plt.Axes, groups: Sequence[str], series: dict[str, Sequence[float]],
                 errors: dict[str, list[list[float]]] | None = None,
                 tick_fontsize: float | None = None) -> None:
    """Bars grouped by category, one per series in each group, told apart in
    grayscale (series i takes PALETTE[i + 1] and HATCHES[i + 1]); ``errors``:
    a series' matplotlib yerr (from error_bars()), where it has one."""
    width = 0.8 / len(series)
    for i, (label, heights) in enumerate(series.items()):
        yerr = (errors or {}).get(label)
        spread = ({"yerr": yerr, "capsize": 1.5, "error_kw": {"linewidth": 0.5}}
                  if yerr is not None else {})
        ax.bar([x + (i - (len(series) - 1) / 2) * width for x in range(len(groups))],
               heights, width, color=PALETTE[i + 1], hatch=HATCHES[i + 1],
               edgecolor="black", linewidth=0.4, label=label, **spread)
    ax.set_xticks(range(len(groups)), groups,
                  **({"fontsize": tick_fontsize} if tick_fontsize else {}))


def setting_lines(ax: plt.Axes, labels: Sequence[str],
                  series: dict[str, Sequence[tuple[float, float, float, float]]],
                  first_colour: int = 0) -> None:
    """One line with error bars per series over categorical settings (a
    parameter sweep's x axis), markers and colours told apart in grayscale."""
    x = np.arange(len(labels))
    for i, (label, spreads) in enumerate(series.items()):
        heights, errors = error_bars(spreads)
        ax.errorbar(x, heights, yerr=errors, capsize=2, marker="o^sDv"[i], markersize=3,
                    linewidth=1, color=PALETTE[first_colour + i], label=label)
    ax.set_xticks(x, labels, fontsize=6)


def sweep_labels(ax: plt.Axes, x_label: str, y_label: str, title: str, *,
                 headroom: float, from_zero: bool = True, legend_size: float = 6) -> None:
    """Label a settings-sweep figure: axes, a title on the left, and the legend
    at the upper left in ``headroom`` (a fraction of the drawn range) left
    free above the lines."""
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    low, high = ax.get_ylim()
    low = 0 if from_zero else low
    ax.set_ylim(low, high + (high - low) * headroom)
    ax.set_title(title, loc="left")
    ax.legend(loc="upper left", frameon=False, fontsize=legend_size)


def sweep_settings(params: str, prefix: str) -> dict[str, str]:
    """A run's parameter overrides under ``prefix``, keyed without it."""
    pairs = param_overrides.parse_column(params).items()
    return {k.removeprefix(prefix): v for k, v in pairs}


def cost_rows(axis: plt.Axes, labels: Sequence[str], x_label: str) -> dict[str, plt.Artist]:
    """A dot plot of costs: one row per label top to bottom, a log x axis in
    plain numbers, vertical grid lines; returns the legend's entries, one per
    label drawn (a series plotted on several rows appears once)."""
    axis.set_yticks(list(range(len(labels))), list(labels), fontsize=6)
    axis.invert_yaxis()
    axis.set_xscale("log")
    axis.xaxis.set_major_formatter(plt.FuncFormatter(lambda value, _: f"{value:g}"))
    axis.xaxis.set_minor_formatter(plt.NullFormatter())
    axis.set_xlabel(x_label)
    axis.grid(True, axis="x", linewidth=0.4, alpha=0.5)
    handles, names = axis.get_legend_handles_labels()
    return dict(zip(names, handles))

def add_provenance(fig: plt.Figure, frame: pd.DataFrame) -> None:
    """Name the builds behind the data in the figure's files, not in its
    picture: Folders.save writes them into the PDF's and PNG's metadata and a
    ``<name>.provenance.json`` beside them."""
    setattr(fig, PROVENANCE_ATTRIBUTE, provenance(frame))


def legend_on_top(fig: plt.Figure, axes: plt.Axes, columns: int) -> None:
    """One legend for the whole figure, above its panels (from ``axes``' bars)."""
    handles, labels = axes.get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=columns, frameon=False,
               fontsize=6, bbox_to_anchor=(0.5, 1.0))


def shown(path: Path) -> str:
    """A path as printed: relative to the checkout when it is inside it."""
    return str(path.relative_to(REPO_ROOT)) if path.is_relative_to(REPO_ROOT) else str(path)


@dataclass(frozen=True)
class Folders:
    """Where a figure reads its results and writes its PDF, PNG and table."""

    results: Path
    out: Path

    def load(self, name: str) -> pd.DataFrame:
        """An experiment's results. (That committed results hold only parameter
        sets their definition still has is a test's to check, not a figure's.)"""
        path = self.results / f"{name}.csv"
        if not path.is_file():
            raise NoResults(f"{shown(path)} does not exist: run 'python -m experiments run "
                            f"{name} --results-dir {shown(self.results)}' first")
        return pd.read_csv(path, keep_default_na=False)

    def load_check(self, relative: str, command: str) -> pd.DataFrame:
        """A check's results (``<results>/<relative>``, e.g.
        ``checks/isb/sysreg-isb.csv``); ``command`` is what makes them, named in
        the error when they are missing."""
        path = self.results / relative
        if not path.is_file():
            raise NoResults(f"{shown(path)} does not exist: run '{command} "
                            f"--results-dir {shown(path.parent)}' first")
        return pd.read_csv(path, keep_default_na=False)

    def save_table(self, name: str, markdown: str) -> Path:
        """Write ``<out>/<name>.md`` whole or not at all."""
        self.out.mkdir(parents=True, exist_ok=True)
        path = self.out / f"{name}.md"
        partial = path.with_name(f".{name}.partial.md")
        partial.write_text(markdown)
        partial.rename(path)
        return path

    def save(self, fig: plt.Figure, name: str) -> list[Path]:
        """The figure as PDF and PNG at the width it was drawn for, as
        ``<name>.column.pdf`` or ``<name>.page.pdf`` at the other paper width
        (for_other_width), each with the builds behind it in its metadata, and
        those builds as ``<name>.provenance.json``; each file written whole or
        not at all."""
        self.out.mkdir(parents=True, exist_ok=True)
        builds = getattr(fig, PROVENANCE_ATTRIBUTE, {})
        summary = json.dumps(builds, sort_keys=True)
        written = []
        for suffix in ("pdf", "png"):
            path = self.out / f"{name}.{suffix}"
            partial = path.with_name(f".{path.stem}.partial.{suffix}")
            # No creation date: the same data gives the same file.
            metadata = ({"CreationDate": None, "Subject": summary} if suffix == "pdf"
                        else {"Description": summary})
            fig.savefig(partial, metadata=metadata)
            partial.rename(path)
            written.append(path)
        # The other paper width, for the PDF only (the PNG is the README's).
        other = self.out / f"{name}.{for_other_width(fig)}.pdf"
        partial = other.with_name(f".{other.stem}.partial.pdf")
        fig.savefig(partial, metadata={"CreationDate": None, "Subject": summary})
        partial.rename(other)
        written.append(other)
        sidecar = self.out / f"{name}.provenance.json"
        partial = sidecar.with_name(f".{name}.partial.provenance.json")
        partial.write_text(json.dumps({"figure": name, "builds": builds}, indent=2,
                                      sort_keys=True) + "\n")
        partial.rename(sidecar)
        written.append(sidecar)
        plt.close(fig)
        return written

    def publish(self, fig: plt.Figure, name: str, table: str | None = None) -> None:
        """Write the figure (PDF, PNG) and its markdown table, printing each path."""
        for path in self.save(fig, name):
            print(shown(path))
        if table is not None:
            print(shown(self.save_table(name, table)))


def _two_lines(text: str) -> str:
    words = text.split(" ")
    half = (len(words) + 1) // 2
    return " ".join(words[:half]) + "\n" + " ".join(words[half:])


def _fit_category_labels(fig: plt.Figure, axes: plt.Axes) -> None:
    """Category labels under a narrowed panel that run into each other: one
    word a line, then turned upright if that is not enough; an axis title
    wider than the panel on two lines."""
    label = axes.xaxis.label
    fig.canvas.draw()
    words = label.get_text().split(" ")
    if len(words) > 1 and label.get_window_extent().width > axes.get_window_extent().width:
        # An axis title wider than its narrowed panel: two lines.
        label.set_text(_two_lines(label.get_text()))

    def crowded() -> bool:
        fig.canvas.draw()
        boxes = [label.get_window_extent() for label in axes.get_xticklabels()
                 if label.get_visible() and label.get_text().strip()]
        return any(a.x1 > b.x0 and b.x1 > a.x0 and a.y1 > b.y0 and b.y1 > a.y0
                   for i, a in enumerate(boxes) for b in boxes[i + 1:])

    if not crowded():
        return
    ticks = axes.get_xticks()
    labels = [label.get_text() for label in axes.get_xticklabels()]
    axes.set_xticks(ticks, [label.replace(" ", "\n") for label in labels])
    if crowded():
        axes.set_xticks(ticks, [" ".join(label.split()) for label in labels], rotation=90)


def for_other_width(fig: plt.Figure) -> str:
    """Re-lay a figure drawn for one paper width out for the other, in place,
    and name the width it now has: a column's figure widened to the page
    ("page"), a page-wide figure's panels stacked in one column ("column").
    Stacked, each panel keeps its height, the margins and the notes under the
    panels keep their distances in inches, a figure legend gets at most two
    columns (one if two are wider than the column), and what would stick out
    at the sides (titles, axis labels, crowded category labels, panel legends
    over bars) is wrapped, turned or moved; the panels then fill the width."""
    width, height = fig.get_size_inches()
    if width <= COLUMN_LIMIT_IN:
        fig.set_size_inches(FULL_WIDTH_IN, height)
        return "page"
    from matplotlib.transforms import ScaledTranslation

    panels = [axes for axes in fig.axes if axes.get_subplotspec() is not None]
    fig.canvas.draw()

    def foot_in() -> float:
        return min(axes.get_tightbbox().y0 for axes in panels) / fig.dpi

    # What hangs under the panels (notes, figure legends), top to bottom, each
    # with the gap above it.
    under = sorted((item for item in (*fig.texts, *fig.legends)
                    if item.get_window_extent().y1 / fig.dpi < foot_in()),
                   key=lambda item: -item.get_window_extent().y1)
    gaps, edge = [], foot_in()
    for item in under:
        box = item.get_window_extent()
        gaps.append(edge - box.y1 / fig.dpi)
        edge = box.y0 / fig.dpi
    for legend in fig.legends:
        _repack(legend, min(legend._ncols, 2))
        fig.canvas.draw()
        if legend.get_window_extent().width / fig.dpi > COLUMN_WIDTH_IN:
            _repack(legend, 1)
    fig.canvas.draw()
    # A legend across the top sat between panels side by side; over stacked
    # panels it needs a band of its own above the first title.
    on_top = [legend for legend in fig.legends
              if legend.get_bbox_to_anchor().transformed(fig.transFigure.inverted()).y1 > 0.9]
    band = max(((1 - legend.get_window_extent().transformed(fig.transFigure.inverted()).y0)
                * height for legend in on_top), default=0.0)
    stacked = None
    if len(panels) > 1:
        grid = panels[0].get_subplotspec().get_gridspec()
        top = grid.top if grid.top is not None else fig.subplotpars.top
        bottom = grid.bottom if grid.bottom is not None else fig.subplotpars.bottom
        panel, gap = (top - bottom) * height, PANEL_GAP_IN
        above, below = (1 - top) * height + band, bottom * height
        new_height = above + below + len(panels) * panel + (len(panels) - 1) * gap
        stacked = fig.add_gridspec(len(panels), 1, top=1 - above / new_height,
                                   bottom=below / new_height, hspace=gap / panel)
        for row, axes in enumerate(panels):
            axes.set_subplotspec(stacked[row])
            # A panel that shared its left neighbour's y axis now stands alone.
            axes.tick_params(labelleft=True)
    else:
        new_height = height * 1.3
    fig.set_size_inches(COLUMN_WIDTH_IN, new_height)
    fig.canvas.draw()
    for axes in panels:
        for title in (axes.title, axes._left_title):
            if title.get_text() and title.get_window_extent().width > fig.bbox.width * 0.8:
                title.set_text(_two_lines(title.get_text()))
        _fit_category_labels(fig, axes)
    _fill_width(fig, stacked)
    for axes in panels:
        legend = axes.get_legend()
        if legend is not None and _over_bars(fig, axes):
            legend.set_loc("best")  # matplotlib's emptiest corner
        if legend is not None and _over_bars(fig, axes):
            # No corner is free: under the panel, anchored to it so that a
            # layout engine moving the panel moves the legend too.
            fig.canvas.draw()
            depth = (axes.get_window_extent().y0 - axes.xaxis.get_tightbbox().y0) / fig.dpi
            legend.set_loc("upper center")
            legend.set_bbox_to_anchor((0.5, 0), transform=axes.transAxes + ScaledTranslation(
                0, -(depth + 0.05), fig.dpi_scale_trans))
    edge = (fig.canvas.draw(), foot_in())[1]
    for item, gap in zip(under, gaps):
        top = (edge - gap) / new_height
        if isinstance(item, matplotlib.legend.Legend):
            item.set_loc("upper center")
            item.set_bbox_to_anchor((0.5, top), transform=fig.transFigure)
        else:
            item.set_verticalalignment("top")
            item.set_y(top)
        fig.canvas.draw()
        edge = item.get_window_extent().y0 / fig.dpi
    return "column"


def _repack(legend: plt.Artist, columns: int) -> None:
    """The legend's entries in ``columns`` columns (matplotlib packs a
    legend's box once, when it is made)."""
    legend._ncols = columns
    legend._init_legend_box(legend.legend_handles, [t.get_text() for t in legend.texts],
                            markerfirst=True)
    legend._set_loc(legend._loc)  # the new box's place, as the legend's own


def _over_bars(fig: plt.Figure, axes: plt.Axes) -> bool:
    name = repr(axes.get_title(loc="left") or axes.get_title())
    return f"legend over a bar of {name}" in collisions(fig)


def _fill_width(fig: plt.Figure, stacked: object) -> None:
    """Move the panels' left and right edges so that what is drawn, labels
    included, spans the figure's width and no more (a layout engine, where the
    figure has one, does this itself)."""
    if fig.get_layout_engine() is not None:
        return
    for _ in range(3):  # a label that wraps moves the edges it was measured at
        fig.canvas.draw()
        drawn = fig.get_tightbbox()
        width = fig.get_figwidth()
        params = stacked if stacked is not None else fig.subplotpars
        left = params.left if params.left is not None else fig.subplotpars.left
        right = params.right if params.right is not None else fig.subplotpars.right
        new_left = left - (drawn.x0 - PANEL_SIDE_IN) / width
        new_right = right + (width - PANEL_SIDE_IN - drawn.x1) / width
        if new_right - new_left < 0.3:
            return
        if stacked is not None:
            stacked.update(left=new_left, right=new_right)
        else:
            fig.subplots_adjust(left=new_left, right=new_right)


COMMITTED = Folders(RESULTS, OUT)


def folder_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results", type=Path, default=USER_RESULTS,
                        help="the results to draw (default: out/results, where 'make' and "
                        "'python -m experiments run' write; the committed record: results)")
    parser.add_argument("--out", type=Path, default=USER_FIGURES,
                        help="where figures and tables go (default: out/figures; the "
                        "committed record: plots/out)")


def run_alone(main: Callable[[Folders], None]) -> None:
    """One figure script on its own: ``python -m plots.<script> [--results D] [--out D]``."""
    parser = argparse.ArgumentParser()
    folder_arguments(parser)
    args = parser.parse_args()
    main(Folders(args.results, args.out))


def collisions(fig: plt.Figure, slack_px: float = 0.5) -> list[str]:
    """Pairs of drawn texts that overlap, and legends over a text or bar not
    their own, as the saved picture would show them (empty when none)."""
    from matplotlib.legend import Legend
    from matplotlib.patches import Rectangle
    from matplotlib.text import Text
    from matplotlib.transforms import Bbox

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    hidden = set()
    # A tick outside its axis's view keeps a visible label that is never drawn.
    for axes in fig.axes:
        for axis in (axes.xaxis, axes.yaxis):
            low, high = sorted(axis.get_view_interval())
            span = (high - low) or 1.0
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not low - 1e-9 * span <= tick.get_loc() <= high + 1e-9 * span:
                    hidden.update((tick.label1, tick.label2))
    texts = [(t, t.get_window_extent(renderer)) for t in fig.findobj(Text)
             if t.get_visible() and t.get_text().strip() and t not in hidden]

    def overlap(a: Bbox, b: Bbox) -> bool:
        # A bar of a missing value (NaN height) is not drawn and has no place.
        if not (np.isfinite(a.extents).all() and np.isfinite(b.extents).all()):
            return False
        return (min(a.x1, b.x1) - max(a.x0, b.x0) > slack_px
                and min(a.y1, b.y1) - max(a.y0, b.y0) > slack_px)

    found = [f"text {a.get_text()!r} over text {b.get_text()!r}"
             for i, (a, box_a) in enumerate(texts) for b, box_b in texts[i + 1:]
             if overlap(box_a, box_b)]
    for legend in fig.findobj(Legend):
        box = legend.get_window_extent(renderer)
        own = set(legend.get_texts()) | {legend.get_title()}
        found += [f"legend over text {t.get_text()!r}" for t, text_box in texts
                  if t not in own and overlap(box, text_box)]
        # A figure's own legend may sit over any panel's bars.
        for axes in [legend.axes] if legend.axes is not None else fig.axes:
            found += [f"legend over a bar of {axes.get_title(loc='left') or axes.get_title()!r}"
                      for bar in axes.patches
                      if isinstance(bar, Rectangle) and bar.get_visible()
                      and overlap(box, bar.get_window_extent(renderer))]
    return found
