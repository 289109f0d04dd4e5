"""The README is what a newcomer runs first: its commands and its code must stay true."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from canasta_net.ui.cli import main

README = Path(__file__).resolve().parent.parent / "README.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_the_readme_python_example_runs() -> None:
    (example,) = _blocks("python")
    namespace: dict[str, object] = {}
    exec(compile(example, "README.md", "exec"), namespace)
    assert "hand" in namespace


def test_the_quick_start_is_two_commands_install_and_play_then_install_and_test() -> None:
    play, tests = _blocks("sh")[:2]
    assert "pip install -e ." in play and play.strip().endswith("canasta play")
    assert "pip install -e '.[test]'" in tests and tests.strip().endswith("python -m pytest")


def test_every_command_flag_the_readme_names_for_host_exists() -> None:
    text = README.read_text(encoding="utf-8")
    help_text = CliRunner().invoke(main, ["host", "--help"]).output
    for flag in ("--bind", "--no-announce", "--players", "--resume", "--deal", "--password"):
        assert flag in text
        assert flag in help_text, flag
