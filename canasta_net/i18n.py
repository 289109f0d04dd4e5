"""The message catalogue: every sentence a person reads, in that person's language.

The catalogue is gettext's (``canasta_net/locale/<lang>/LC_MESSAGES/canasta.po``, compiled to
``.mo`` beside it and committed, so that an install needs no build step); Babel extracts the
messages and compiles them (``scripts/update_catalogs.py``), the standard library's ``gettext``
reads them at run time.  ``docs/i18n.md`` says how to add a language.

A language belongs to a person, not to the process: a :class:`Translator` is made for each client
(a seat's terminal, its page) and the texts that client reads are produced through it, so two
seats of one table may read two languages.  In one process there is one person (the web page and
the terminal of one ``canasta play`` share a language), whose translator the CLI sets with
:func:`set_language`; :func:`_` and :func:`ngettext` translate through that one.

Placeholders are ``str.format`` names (``{name}``), the same in every language; the code fills
them after translating: ``_("{who} asks: may I go out?").format(who=name)``.
"""

from __future__ import annotations

import gettext as _gettext
import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Final

DOMAIN: Final = "canasta"
LOCALE_DIR: Final = Path(__file__).parent / "locale"
LANGUAGES: Final = ("en", "ru", "bg", "pl")
"""The languages whose catalogues are complete; English is the source language."""
DEFAULT_LANGUAGE: Final = "en"
LANGUAGE_NAMES: Final = {"en": "English", "ru": "Русский", "bg": "Български", "pl": "Polski"}
"""Each language's name in itself (the page's language switch)."""
# The environment variables that name a locale, in gettext's order of precedence.
LOCALE_VARIABLES: Final = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


def N_(message: str) -> str:
    """Mark ``message`` for the catalogue without translating it (it is translated later, where
    the reader's language is known: a table of labels, a click help string)."""
    return message


def language_of(locale_name: str | None) -> str | None:
    """The supported language a locale name names (``ru_RU.UTF-8`` -> ``ru``), or None."""
    if not locale_name:
        return None
    code = locale_name.split(".")[0].split("@")[0].replace("-", "_").split("_")[0].lower()
    return code if code in LANGUAGES else None


def system_language(environ: Mapping[str, str] | None = None) -> str:
    """The language the system locale asks for, as gettext reads it: the first variable of
    LANGUAGE (a colon-separated list), LC_ALL, LC_MESSAGES, LANG that is set decides; English
    when it names no supported language (``C``, ``POSIX``, another language)."""
    env = os.environ if environ is None else environ
    for variable in LOCALE_VARIABLES:
        value = env.get(variable)
        if not value:
            continue
        for name in value.split(":"):
            found = language_of(name)
            if found is not None:
                return found
        if variable != "LANGUAGE":
            return DEFAULT_LANGUAGE  # LC_ALL=C and the like: the first one set decides
    return DEFAULT_LANGUAGE


def choose_language(option: str | None, environ: Mapping[str, str] | None = None) -> str:
    """``--lang`` when given (``ru``, ``ru_RU.UTF-8``), else the system locale's language.

    Raises ValueError with one sentence for a language that has no catalogue.
    """
    if option:
        found = language_of(option)
        if found is None:
            raise ValueError(
                f"no catalogue for language {option!r}: choose one of {', '.join(LANGUAGES)}"
            )
        return found
    return system_language(environ)


class Translator:
    """One reader's language: ``gettext``/``ngettext`` through that language's catalogue."""

    __slots__ = ("_translations", "lang")

    def __init__(self, lang: str = DEFAULT_LANGUAGE) -> None:
        if lang not in LANGUAGES:
            raise ValueError(f"no catalogue for language {lang!r}")
        self.lang = lang
        self._translations = _catalogue(lang)

    def gettext(self, message: str) -> str:
        return self._translations.gettext(message)

    __call__ = gettext

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        return self._translations.ngettext(singular, plural, n)

    def messages(self) -> dict[str, str]:
        """Every singular message of this language's catalogue, msgid to msgstr (the page's
        catalogue, ``GET /i18n.json``); empty for English, the source language."""
        catalog: dict[object, str] = getattr(self._translations, "_catalog", {})
        return {k: v for k, v in catalog.items() if isinstance(k, str) and k and v}

    def __repr__(self) -> str:
        return f"Translator({self.lang!r})"


@cache
def _catalogue(lang: str) -> _gettext.NullTranslations:
    if lang == DEFAULT_LANGUAGE:
        return _gettext.NullTranslations()
    return _gettext.translation(DOMAIN, LOCALE_DIR, languages=[lang], fallback=True)


@cache
def translator(lang: str) -> Translator:
    """The (shared, immutable) translator of ``lang``."""
    return Translator(lang)


_process = translator(DEFAULT_LANGUAGE)


def set_language(lang: str) -> Translator:
    """Set the process's person's language (the CLI does, from ``--lang`` or the locale)."""
    global _process
    _process = translator(lang)
    return _process


def current() -> Translator:
    """The process's person's translator."""
    return _process


def _(message: str) -> str:
    """``message`` in the process's person's language."""
    return _process.gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    return _process.ngettext(singular, plural, n)


__all__ = [
    "DEFAULT_LANGUAGE",
    "DOMAIN",
    "LANGUAGES",
    "LANGUAGE_NAMES",
    "LOCALE_DIR",
    "N_",
    "Translator",
    "_",
    "choose_language",
    "current",
    "language_of",
    "ngettext",
    "set_language",
    "system_language",
    "translator",
]
