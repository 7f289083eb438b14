"""Put the generated tables into the README and the pages of docs/.

A block ``<!-- table: NAME -->`` … ``<!-- end table -->`` in any of them
holds ``plots/out/NAME.md`` (written by that figure's script from the
committed results), so no table of results is typed by hand. ``python -m
publish.tables`` rewrites the blocks, document by document (``make publish``
runs it); ``--check`` only reports stale ones.
"""

from __future__ import annotations

import argparse
import re
import sys

from plots import style

README = style.REPO_ROOT / "README.md"
DOCUMENTS = (README, style.PLOTS / "README.md",
             *sorted((style.REPO_ROOT / "docs").rglob("*.md")))
BLOCK = re.compile(r"(<!-- table: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end table -->)",
                   re.DOTALL)


def refreshed(text: str) -> tuple[str, list[str]]:
    """The README with every block's table from plots/out; the blocks changed."""
    changed: list[str] = []

    def fill(match: re.Match[str]) -> str:
        name = match.group("name")
        table = style.OUT / f"{name}.md"
        if not table.is_file():
            raise SystemExit(f"table block '{name}': {table} does not exist (make publish)")
        body = table.read_text()
        if body != match.group("body"):
            changed.append(name)
        return match.group(1) + body + match.group(4)

    return BLOCK.sub(fill, text), changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m publish.tables")
    parser.add_argument("--check", action="store_true", help="report stale blocks only")
    args = parser.parse_args(argv)
    stale = False
    for document in DOCUMENTS:
        text, changed = refreshed(document.read_text())
        where = document.relative_to(style.REPO_ROOT)
        stale = stale or bool(changed)
        if args.check:
            for name in changed:
                print(f"{where}: table '{name}' differs from plots/out/{name}.md")
            continue
        if changed:
            document.write_text(text)
        print(f"{where}: {len(changed)} table(s) refreshed" + (f": {', '.join(changed)}"
                                                               if changed else ""))
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
