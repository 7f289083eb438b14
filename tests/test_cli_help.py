"""Every command line's --help prints: argparse formats help strings with %,
so a stray percent sign breaks --help and nothing else notices."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

import builders.__main__ as builders_cli
import experiments.__main__ as experiments_cli
import publish.claims as claims_cli
import publish.remade as remade_cli
import publish.tables as tables_cli
import publish.verdicts as verdicts_cli

MAINS: dict[str, Callable[[list[str]], int]] = {
    "experiments": experiments_cli.main, "builders": builders_cli.main,
    "publish.claims": claims_cli.main, "publish.remade": remade_cli.main,
    "publish.tables": tables_cli.main, "publish.verdicts": verdicts_cli.main}


def _help(main: Callable[[list[str]], int], argv: list[str],
          capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--help"])
    assert stop.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("name", sorted(MAINS))
def test_help_of_every_command_and_subcommand(name: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    main = MAINS[name]
    text = _help(main, [], capsys)
    choices = re.search(r"\{([a-z0-9,-]+)\}", text)
    for command in choices.group(1).split(",") if choices else []:
        assert "usage:" in _help(main, [command], capsys)
