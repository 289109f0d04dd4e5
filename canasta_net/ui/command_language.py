"""The language of a command line (``canasta`` and ``canasta-replay``): ``--lang``, and the help
texts and click's own messages put into it before click reads the command line.

Kept apart from the commands so that ``canasta-replay``, which shares it, starts without
importing what only the table's commands need (Twisted, the network, the web page).
"""

from __future__ import annotations

import sys
from typing import Any

import click

from ..i18n import N_, choose_language, current, set_language, system_language
from .click_texts import localize_click


def lang_in(argv: list[str]) -> str | None:
    """The ``--lang`` given anywhere on the command line (the last one), before click parses."""
    found = None
    for index, arg in enumerate(argv):
        if arg == "--lang" and index + 1 < len(argv):
            found = argv[index + 1]
        elif arg.startswith("--lang="):
            found = arg.split("=", 1)[1]
    return found


def check_lang(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--lang``: a language with a catalogue; it was set before parsing (``LocalizedGroup``)."""
    if value is None:
        return None
    try:
        set_language(choose_language(value))
    except ValueError as e:
        raise click.BadParameter(str(e), ctx=ctx, param=param) from None
    return value


def lang_option(function: Any) -> Any:
    return click.option(
        "--lang",
        default=None,
        metavar="LANG",
        expose_value=False,
        is_eager=True,
        callback=check_lang,
        help=N_("Your language: en, ru, bg or pl (default: the system locale's)."),
    )(function)


# Values put into help texts after translating them (a translation keeps the names); each
# command module adds its own.
HELP_VALUES: dict[str, str] = {}


def localize_command(command: click.Command) -> None:
    """Put the help texts of ``command`` and its subcommands into the process's language.

    Help strings are marked with ``N_`` where they are written (click keeps them as given) and
    translated here, when the command line is about to be read and the language is known: the
    English originals are kept on the objects, so it can be done again in another language."""
    tr = current()

    def translated(obj: Any, attr: str) -> None:
        original = obj.__dict__.setdefault(f"_msgid_{attr}", getattr(obj, attr))
        if original:
            text = tr.gettext(original)
            setattr(obj, attr, text.format(**HELP_VALUES) if "{" in text else text)

    translated(command, "help")
    translated(command, "short_help")
    if getattr(command, "_help_option", None) is not None:
        # click (8.1.8+) keeps the --help option it made, its text in the language of that
        # time: let it make the option again, in this language
        command._help_option = None
    for param in command.params:
        if isinstance(param, click.Option):
            translated(param, "help")
        if isinstance(param.type, click.Path):
            # click names the kind of path in its sentences ("File '…' does not exist."), with
            # the word it chose when the option was made: the catalogue's (click_texts)
            translated(param.type, "name")
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            localize_command(sub)


class LocalizedGroup(click.Group):
    """The ``canasta`` group: sets the process's language (``--lang`` anywhere on the command
    line, else the system locale) before click reads the command line, so that ``--help`` and
    click's own messages are in it too."""

    def main(self, args: Any = None, *rest: Any, **kwargs: Any) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        try:
            lang = choose_language(lang_in(argv))
        except ValueError:
            lang = system_language()  # the option's check says why, in one line
        set_language(lang)
        localize_click()
        localize_command(self)
        return super().main(argv, *rest, **kwargs)
