"""The message catalogue: complete in every language, compiled, and the language chosen right."""

from __future__ import annotations

import pytest
from catalog_check import catalogue_problems, placeholders

from canasta_net import i18n


def test_every_catalogue_is_complete_and_compiled() -> None:
    # every marked message translated, none fuzzy, the same placeholders, the .mo up to date
    assert catalogue_problems() == []


def test_placeholders_are_read_by_name() -> None:
    assert placeholders("{who} asks: may I go out? {n:d}") == {"who", "n"}


@pytest.mark.parametrize(
    ("environ", "lang"),
    [
        ({}, "en"),
        ({"LANG": "ru_RU.UTF-8"}, "ru"),
        ({"LANG": "ru_RU.UTF-8", "LC_ALL": "C"}, "en"),  # LC_ALL comes first
        ({"LANGUAGE": "de:pl", "LANG": "ru_RU.UTF-8"}, "pl"),  # a list: the first we have
        ({"LC_MESSAGES": "bg_BG.utf8", "LANG": "en_US.UTF-8"}, "bg"),
        ({"LANG": "de_DE.UTF-8"}, "en"),
    ],
)
def test_the_system_locale_chooses_the_language(environ: dict[str, str], lang: str) -> None:
    assert i18n.system_language(environ) == lang


def test_lang_option_wins_and_a_missing_language_is_one_sentence() -> None:
    assert i18n.choose_language("pl", {"LANG": "ru_RU.UTF-8"}) == "pl"
    assert i18n.choose_language("ru_RU.UTF-8") == "ru"
    with pytest.raises(ValueError, match="no catalogue for language 'xx'"):
        i18n.choose_language("xx")


def test_two_translators_in_one_process_keep_their_own_language() -> None:
    ru, en = i18n.Translator("ru"), i18n.Translator("en")
    assert en.gettext("Your turn.") == "Your turn."
    assert ru.gettext("Your turn.") != "Your turn."
    assert i18n.current().lang == "en"  # making a translator sets no process language
