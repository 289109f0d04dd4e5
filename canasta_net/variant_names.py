"""The rule presets' names and one-line summaries as each language's players call them.

The Russian rules call the contract rummy «Можно?» and name самба, боливия, эскалера; the Polish
say kanasta; the Bulgarian канаста and самба-канаста (``shared/seeds``). The English summary of
each preset is its rules' own ``description`` (``tests/test_i18n.py`` checks they agree), so
that the catalogue's msgid changes when the rules' summary does.
"""

from __future__ import annotations

from typing import Final

from .i18n import N_, translator

VARIANT_TEXTS: Final = {
    "bolivia": (
        N_("Bolivia"),
        N_("Bolivia: 162 cards, escaleras and bolivias, no going out, a match of 4 hands"),
    ),
    "classic": (
        N_("Classic Canasta"),
        N_("Classic Canasta, 4 players in two partnerships, 108 cards, game to 5000"),
    ),
    "classic-2p": (
        N_("Classic Canasta for 2"),
        N_("Classic Canasta for 2: 15 cards, draw two, two canastas to go out"),
    ),
    "classic-3p": (
        N_("Classic Canasta for 3"),
        N_("Classic Canasta for 3, each for himself: 13 cards, otherwise as classic"),
    ),
    "classic-3p-lone": (
        N_("Canasta for 3, lone hand"),
        N_("Canasta for 3, lone hand: the first to take the pile plays alone against two"),
    ),
    "may-i": (
        N_("May I?"),
        N_("May I?: contract rummy for 3 to 5, five deals, lowest total wins"),
    ),
    "samba": (
        N_("Samba"),
        N_("Samba: 162 cards, draw two, sequences (a samba: 1500), two canastas to go out"),
    ),
    "samba-2p": (N_("Samba for 2"), N_("Samba for 2, each for himself")),
    "samba-3p": (N_("Samba for 3"), N_("Samba for 3, each for himself")),
    "vienna": (
        N_("Vienna Canasta"),
        N_("Vienna (Austrian) Canasta: red threes need a canasta, hand canasta 1000"),
    ),
}


def variant_name(preset: str, lang: str = "en") -> str:
    """A preset's name as players of ``lang`` say it; the preset's own name in English, and for
    a preset without a translated name (a custom one)."""
    texts = VARIANT_TEXTS.get(preset)
    if texts is None or lang == "en":
        return preset
    return translator(lang).gettext(texts[0])


def variant_summary(preset: str, description: str, lang: str = "en") -> str:
    """A preset's one-line summary in ``lang``; its rules' own description where the catalogue
    has no translation of that exact sentence."""
    texts = VARIANT_TEXTS.get(preset)
    if texts is None or texts[1] != description:
        return description
    return translator(lang).gettext(texts[1])


__all__ = ["VARIANT_TEXTS", "variant_name", "variant_summary"]
