"""Click's own sentences (``Usage:``, ``Options``, ``Error: …``) in the reader's language.

Click marks its sentences with the standard library's ``gettext`` (the global ``messages``
domain, which no package fills); :func:`localize_click` points click's modules at the catalogue
of the process's person instead (``canasta_net.i18n``), and :data:`CLICK_TEXTS` puts the
sentences a ``canasta`` user meets into that catalogue, word for word as click writes them
(``tests/test_i18n_clients.py`` checks that click still does).
"""

from __future__ import annotations

import importlib
from typing import Final

from ..i18n import N_, current

CLICK_TEXTS: Final = (
    N_("Usage:"),
    N_("Options"),
    N_("Commands"),
    N_("Show this message and exit."),
    N_("Show the version and exit."),
    N_("default: {default}"),
    N_("Error: {message}"),
    N_("Try '{command} {option}' for help."),
    N_("Invalid value for {param_hint}: {message}"),
    N_("Invalid value: {message}"),
    N_("Missing argument"),
    N_("Missing option"),
    N_("Missing parameter"),
    N_("No such command {name!r}."),
    N_("No such option {name!r}."),
    N_("Aborted!"),
    # a path option's value (click.Path), the kind of path named first
    N_("file"),
    N_("directory"),
    N_("path"),
    N_("{name} {filename!r} does not exist."),
    N_("{name} {filename!r} is a file."),
    N_("{name} {filename!r} is a directory."),
    N_("{name} {filename!r} is not readable."),
    N_("{name} {filename!r} is not writable."),
)

# The modules of click whose sentences go through their module-level ``_``.
_CLICK_MODULES: Final = (
    "click.core",
    "click.formatting",
    "click.exceptions",
    "click.decorators",
    "click.parser",
    "click.types",
    "click.termui",
)


def _translate(message: str) -> str:
    return current().gettext(message)


def localize_click() -> None:
    """Click's sentences through the process's person's catalogue (safe to call again)."""
    for name in _CLICK_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:  # another click version: that module's sentences stay English
            continue
        if callable(getattr(module, "_", None)):
            setattr(module, "_", _translate)  # noqa: B010 (click's module global)


__all__ = ["CLICK_TEXTS", "localize_click"]
