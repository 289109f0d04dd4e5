"""Cards as players of each language write and read them; the canonical text stays the wire's."""

from __future__ import annotations

import pytest

from canasta_net.cards import (
    JOKER,
    NUM_FACES,
    CardParseError,
    action_label,
    canonical_action,
    face_label,
    face_text,
    parse_face,
)

LANGS = ("en", "ru", "bg", "pl")


@pytest.mark.parametrize("lang", LANGS)
def test_every_face_shown_in_a_language_reads_back(lang: str) -> None:
    for face in range(NUM_FACES):
        assert parse_face(face_label(face, lang), lang) == face
        assert parse_face(face_label(face, lang).upper(), lang) == face
        assert parse_face(face_text(face), lang) == face  # the canonical text too


@pytest.mark.parametrize(
    ("lang", "written", "canonical"),
    [
        ("ru", "ТП", "AS"),  # туз пик
        ("ru", "дч", "QH"),  # дама черви
        ("ru", "Вб", "JD"),  # валет бубны
        ("ru", "Кт", "KC"),  # король треф
        ("ru", "10♠", "10S"),
        ("ru", "дж", "JK"),
        ("bg", "ПКУ", "KH"),  # поп купа
        ("bg", "АКА", "AD"),  # асо каро
        ("bg", "вс", "JC"),  # вале спатия
        ("bg", "Дп", "QS"),  # дама пика
        ("bg", "ж", "JK"),
        ("pl", "WP", "JS"),  # walet pik
        ("pl", "DK", "QH"),  # dama kier
        ("pl", "At", "AC"),  # as trefl
        ("pl", "K♦", "KD"),
        ("pl", "KH", "KH"),  # the canonical letters too
    ],
)
def test_a_language_s_letters(lang: str, written: str, canonical: str) -> None:
    assert face_text(parse_face(written, lang)) == canonical


def test_without_a_language_only_the_canonical_text_is_read() -> None:
    with pytest.raises(CardParseError):
        parse_face("ТП")
    with pytest.raises(CardParseError):
        parse_face("K♥")
    assert parse_face("KC") == parse_face("KC", "en")


def test_polish_karo_is_a_lower_case_c_and_the_canonical_c_stays_clubs() -> None:
    assert face_text(parse_face("Kc", "pl")) == "KD"  # król karo
    assert face_text(parse_face("10c", "pl")) == "10D"
    assert face_text(parse_face("KC", "pl")) == "KC"  # as the hints print it: clubs
    assert canonical_action("discard Wc", "pl") == "discard JD"
    assert canonical_action("discard 4C", "pl") == "discard 4C"


def test_moves_typed_in_a_language_go_out_canonical() -> None:
    assert canonical_action("meld КЧ кп 2т", "ru") == "meld KH KS 2C"
    assert canonical_action("add 1 ДЖ", "ru") == "add 1 JK"
    assert canonical_action("add 1.2 WP", "pl") == "add 1.2 JS"
    assert canonical_action("answer yes", "ru") == "answer yes"
    assert canonical_action("meld KH KS | 5D 5C 5S", "bg") == "meld KH KS | 5D 5C 5S"
    assert action_label("meld KH KS 2C", "ru") == "meld К♥ К♠ 2♣"
    assert action_label("add 2 JK", "bg") == "add 2 Ж"
    assert action_label("meld KH", "en") == "meld KH"
    assert face_label(JOKER, "ru") == "Дж"
