"""Check the numbers the docs state against the results they come from.

``publish/claims.toml`` lists each stated number: the page that states it
(``docs/results/<topic>.md``, ``docs/history.md``), the words there that hold
it, the results file and row(s) it comes from, how it is computed from them
and how far the stated (rounded) number may be from the computed one.
``python -m publish.claims`` (and ``make test``) fails on a claim whose page is
missing, whose text is no longer on its page, whose text does not print its
number, whose rows are not in the results, or whose number no longer matches
them.

The number a claim checks is the one its text prints: ``value`` written in
digits (its sign may be in words: "one cycle less"), or in the words of
``NUMBER_WORDS`` ("four serializing writes"); for a bound ("within 0.5 ns",
``bound = true``) the printed number is the ``tolerance`` around ``value``.
``stated`` names the words that print it when the text holds other numbers
too.
"""

from __future__ import annotations

import argparse
import ast
import operator
import re
import statistics
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from plots import style

CLAIMS = Path(__file__).resolve().parent / "claims.toml"
AGGREGATES = ("one", "median", "sum", "count")
# Numbers the docs write in words; longer phrases first, so "three quarters"
# is not read as three.
NUMBER_WORDS: dict[str, float] = {
    "three quarters": 0.75, "none": 0, "no": 0, "one": 1, "both": 2, "two": 2, "three": 3,
    "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
}
DIGITS = re.compile(r"(?<![\w.])[-−]?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d])"
                    r"|(?<![\w.])[-−]?\d+(?:\.\d+)?(?![\d])")
OPERATORS: dict[type, Callable[[float, float], float]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}
COMPARISONS: dict[type, Callable[[float, float], bool]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
}
# Functions an expression may call, e.g. the median over layout samples of a
# per-sample ratio (the tables pair each arm with its own sample's baseline).
FUNCTIONS: dict[str, Callable[..., float]] = {
    "median": lambda *values: float(statistics.median(values)),
    "min": lambda *values: min(values), "max": lambda *values: max(values),
    "abs": lambda value: abs(value),
}


class BadClaim(ValueError):
    """A claim the data or its page no longer supports."""


@dataclass(frozen=True)
class Claim:
    id: str
    text: str
    results: str
    rows: dict[str, dict[str, str]]
    expression: str
    value: float
    tolerance: float
    # "one": each rows entry selects exactly one row; "median": the median of
    # the rows it selects (e.g. over layout samples), "sum": their sum (e.g. a
    # trace's rows of one kind); at least one; "count": how many rows it
    # selects, none included (e.g. the boots whose verdict is "fail").
    aggregate: str = "one"
    # The document that states it, relative to the repository.
    page: str = ""
    # The words of ``text`` that print the number (default: all of it).
    stated: str = ""
    # The text prints a bound: ``tolerance`` around ``value``.
    bound: bool = False


def read(path: Path = CLAIMS) -> list[Claim]:
    data = tomllib.loads(path.read_text())
    claims = []
    for entry in data.get("claim", []):
        unknown = set(entry) - {"id", "page", "text", "results", "where", "rows", "expression",
                                "value", "tolerance", "aggregate", "stated", "bound"}
        if unknown:
            raise BadClaim(f"{path}: claim {entry.get('id')}: unknown keys {sorted(unknown)}")
        if not entry.get("page"):
            raise BadClaim(f"{path}: claim {entry.get('id')}: no page (the document that "
                           "states it)")
        rows = entry.get("rows") or {"x": entry.get("where")}
        if not all(isinstance(where, dict) for where in rows.values()):
            raise BadClaim(f"{path}: claim {entry.get('id')}: each of where/rows must be a "
                           "table of column = value")
        aggregate = entry.get("aggregate", "one")
        if aggregate not in AGGREGATES:
            raise BadClaim(f"{path}: claim {entry.get('id')}: aggregate '{aggregate}' "
                           f"(valid: {', '.join(AGGREGATES)})")
        claims.append(Claim(entry["id"], entry["text"], entry["results"], rows,
                            entry.get("expression", "x"), float(entry["value"]),
                            float(entry["tolerance"]), aggregate, entry["page"],
                            entry.get("stated", ""), bool(entry.get("bound", False))))
    return claims


def printed_numbers(words: str) -> set[float]:
    """The numbers ``words`` prints, in digits (1,234 and -0.3 included) or
    in NUMBER_WORDS, each also without its sign."""
    numbers = {float(match.replace(",", "").replace("\u2212", "-"))
               for match in DIGITS.findall(words)}
    lowered = " ".join(words.lower().split())
    for phrase, number in NUMBER_WORDS.items():
        if re.search(rf"\b{phrase}\b", lowered):
            numbers.add(number)
            lowered = re.sub(rf"\b{phrase}\b", " ", lowered)
    return numbers | {abs(number) for number in numbers}


def check_printed(claim: Claim) -> None:
    """Raises unless ``claim``'s text prints the number it checks."""
    stated = claim.stated or claim.text
    if stated not in claim.text:
        raise BadClaim(f"claim {claim.id}: stated '{stated}' is not in its text "
                       f"'{claim.text}'")
    printed = claim.tolerance if claim.bound else claim.value
    if not any(abs(number - abs(printed)) <= 1e-9 * max(1.0, abs(printed))
               for number in printed_numbers(stated)):
        raise BadClaim(f"claim {claim.id}: '{stated}' does not print "
                       f"{'its bound ' if claim.bound else ''}{printed:g}")


def evaluate(expression: str, names: dict[str, float]) -> float:
    """Arithmetic on named rows' values: + - * /, numbers, parentheses and
    the FUNCTIONS; comparisons (< <= > >=) and and/or/not, which give 1 or 0."""
    def walk(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
            return OPERATORS[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -walk(node.operand)
        # Comparisons and and/or/not give 1 or 0: a verdict's rule is one.
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return float(not walk(node.operand))
        if isinstance(node, ast.BoolOp):
            values = [walk(value) for value in node.values]
            return float(all(values) if isinstance(node.op, ast.And) else any(values))
        if isinstance(node, ast.Compare) and all(type(op) in COMPARISONS for op in node.ops):
            left, holds = walk(node.left), True
            for op, comparator in zip(node.ops, node.comparators):
                right = walk(comparator)
                holds = holds and COMPARISONS[type(op)](left, right)
                left = right
            return float(holds)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return float(node.value)
        if isinstance(node, ast.Name) and node.id in names:
            return names[node.id]
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in FUNCTIONS and node.args and not node.keywords):
            return float(FUNCTIONS[node.func.id](*(walk(arg) for arg in node.args)))
        raise BadClaim(f"expression '{expression}': cannot evaluate {ast.dump(node)}")
    try:
        return walk(ast.parse(expression, mode="eval"))
    except (SyntaxError, ArithmeticError, TypeError) as err:
        raise BadClaim(f"expression '{expression}': {err}") from err


def row_value(frame: pd.DataFrame, where: dict[str, str], claim: str,
              aggregate: str = "one") -> float:
    # "value" last: a count may select no row, but its rows must exist, so a
    # misspelt selector fails instead of counting zero.
    selected = frame
    for key, wanted in sorted(where.items(), key=lambda item: item[0] == "value"):
        if key not in frame.columns:
            raise BadClaim(f"claim {claim}: the results have no column '{key}'")
        if key == "value" and not len(selected):
            raise BadClaim(f"claim {claim}: {where} without 'value' matches no row")
        selected = selected[selected[key].astype(str) == str(wanted)]
    if aggregate == "count":
        return float(len(selected))
    if aggregate == "median" and len(selected):
        return float(selected["value"].astype(float).median())
    if aggregate == "sum" and len(selected):
        return float(selected["value"].astype(float).sum())
    if len(selected) != 1:
        raise BadClaim(f"claim {claim}: {where} matches {len(selected)} rows, not one")
    return float(selected["value"].iloc[0])


def page_text(claim: Claim, root: Path = style.REPO_ROOT) -> str:
    """The text of the page that states ``claim``."""
    page = root / claim.page
    if not page.is_file():
        raise BadClaim(f"claim {claim.id}: its page {claim.page} does not exist")
    return page.read_text()


def value_of(claim: Claim, frame: Callable[[str], pd.DataFrame]) -> float:
    """The claim's expression over the rows it reads, each from ``frame(name)``
    (a results file's rows by its name)."""
    # A row may come from another results file (its own "results" key), e.g.
    # a check's re-run beside the committed result.
    names = {name: row_value(frame(where.get("results", claim.results)),
                             {k: v for k, v in where.items() if k != "results"},
                             claim.id, claim.aggregate)
             for name, where in claim.rows.items()}
    return evaluate(claim.expression, names)


def check(claim: Claim, page: str, results: Path = style.RESULTS) -> float:
    """The value the results give for ``claim``, stated on ``page`` (its text);
    raises if anything disagrees."""
    if claim.text not in page:
        raise BadClaim(f"claim {claim.id}: {claim.page or 'its page'} no longer says "
                       f"'{claim.text}'")
    check_printed(claim)
    frames: dict[str, pd.DataFrame] = {}

    def frame(name: str) -> pd.DataFrame:
        if name not in frames:
            path = results / f"{name}.csv"
            if not path.is_file():
                raise BadClaim(f"claim {claim.id}: {path} does not exist")
            frames[name] = pd.read_csv(path, keep_default_na=False)
        return frames[name]

    computed = value_of(claim, frame)
    if abs(computed - claim.value) > claim.tolerance:
        raise BadClaim(f"claim {claim.id}: {claim.page or 'its page'} says {claim.value:g} "
                       f"('{claim.text}'), "
                       f"the results give {computed:.4g} (tolerance {claim.tolerance:g})")
    return computed


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(
        prog="python -m publish.claims",
        description="Check every number the docs state (publish/claims.toml) against the "
        "committed results; print each claim with the value the results give, exit 1 "
        "on any that no longer matches.").parse_args(argv)
    failures = []
    claims = read()
    for claim in claims:
        try:
            computed = check(claim, page_text(claim))
            print(f"ok   {claim.id}: {claim.value:g} (results: {computed:.4g})")
        except BadClaim as err:
            failures.append(str(err))
            print(f"FAIL {err}")
    print(f"{len(claims) - len(failures)} of {len(claims)} claims in the docs match their "
          "results")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
