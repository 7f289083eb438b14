"""Draw every figure whose results exist:
``python -m plots.all [FIGURE ...] [--results DIR] [--out DIR]``.

A figure whose CSV is missing, or holds only part of the runs the figure
draws, is skipped with a line saying which experiment makes it, and its pictures and table from an earlier drawing are removed (so
the folder never shows results the folder of CSVs no longer has); a figure
named on the command line and skipped makes the exit status 1. Any other
failure stops with an error. ``make figures`` draws a
user's runs (out/results into out/figures, the defaults); ``make publish``
draws the committed record (results into plots/out), then ``publish.tables``.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from plots import figures, style

FIGURES = figures.NAMES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m plots.all")
    parser.add_argument("figures", nargs="*", help=f"a subset of: {', '.join(FIGURES)}")
    style.folder_arguments(parser)
    args = parser.parse_args(argv)
    folders = style.Folders(args.results, args.out)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    # Matplotlib's PDF backend subsets fonts with fontTools, which logs every glyph.
    logging.getLogger("fontTools").setLevel(logging.WARNING)
    unknown = sorted(set(args.figures) - set(FIGURES))
    if unknown:
        parser.error(f"unknown figure(s) {', '.join(unknown)}; valid: {', '.join(FIGURES)}")
    drawn, skipped = 0, 0
    for name in args.figures or FIGURES:
        module = importlib.import_module(f"plots.{name}")
        try:
            module.main(folders)
            drawn += 1
        except style.NoResults as missing:
            removed = remove_outputs(folders, figures.figure(name).outputs)
            logging.info("skipped %s: %s%s", name, missing,
                         f" (removed the earlier {', '.join(removed)})" if removed else "")
            skipped += 1
        except KeyError as missing_cell:
            # Results holding part of an experiment (a run stopped half-way, a
            # few runs asked for by name) lack a cell the figure looks up; the
            # committed figures are redrawn whole by the tests, so a script's
            # own lookup bug does not hide here on the record.
            removed = remove_outputs(folders, figures.figure(name).outputs)
            needs = figures.figure(name)
            whole = (f"run 'python -m experiments run {' '.join(needs.experiments)} "
                     f"--results-dir {style.shown(folders.results)}' for whole experiments"
                     if needs.experiments else f"re-make all of {needs.also_reads}")
            logging.info("skipped %s: its results lack part of what it draws (no %s); %s%s",
                         name, missing_cell, whole,
                         f" (removed the earlier {', '.join(removed)})" if removed else "")
            skipped += 1
        finally:
            style.plt.close("all")
    if not args.figures:
        figures.main(folders)
    logging.info("figures: %d drawn, %d skipped (results missing or partial)", drawn, skipped)
    return 1 if args.figures and skipped else 0


def remove_outputs(folders: style.Folders, names: tuple[str, ...]) -> list[str]:
    """A skipped figure's files from an earlier drawing, deleted; their names."""
    removed = []
    for name in names:
        for suffix in style.OUTPUT_SUFFIXES:
            path = folders.out / f"{name}.{suffix}"
            if path.is_file():
                path.unlink()
                removed.append(path.name)
    return removed


if __name__ == "__main__":
    sys.exit(main())
