"""The clients in the seeds' languages: a whole hand at the terminal in Russian (and Bulgarian,
Polish) with no English sentence, moves typed in a language's card notation, the page's
catalogue and its language switch, ``--lang`` on the command line."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner
from english_text import english_sentences, english_words
from test_table_protocol import Harness, Remote, classic, config
from test_terminal_client import Person, play, seat_with_terminal

from canasta_net import i18n
from canasta_net.cards import card_label
from canasta_net.games import game_for
from canasta_net.ui import cli
from canasta_net.ui.players import TerminalPlayer
from canasta_net.variant_names import variant_name

NAMES = ("host (bot)", "bot-2", "bot-3", "ada", "hal", "test table")


# What a person types wrong in a hand: a card that is none, a move without its cards, a verb of
# the other game, an empty meld group, a number out of range, a y at a turn, a word that is no
# command. Each is typed at the person's turn, before the move it means.
MISTAKES = (
    "meld XX YY",
    "discard",
    "draw 5",
    "answer maybe",
    "take-pile onto",
    "meld 5H 5H |",
    "add 9",
    "99",
    "n",
    "frobnicate",
)


class MistakenPerson(Person):
    """A person who types each of :data:`MISTAKES` once, at a turn, before the right move."""

    def __init__(self, peer: Remote, terminal: TerminalPlayer) -> None:
        super().__init__(peer, terminal)
        self.mistakes = list(MISTAKES)

    def line(self) -> str:
        kind = (self.terminal.model.snapshot()["prompt"] or {}).get("kind")
        if self.mistakes and kind == "turn":
            self.terminal.handle_line(self.mistakes.pop(0))
        return super().line()


def whole_hand(variant: str, lang: str) -> tuple[str, Harness, MistakenPerson]:
    """A whole hand (May I?: a deal) at the terminal in ``lang``, with help, hints, mistakes,
    the questions between turns (a partner's "may I go out?", buys) and the score sheet: all
    the terminal printed."""
    rules = game_for(variant).rules if variant == "may-i" else classic(target=1500)
    h = Harness(config(rules, players=2, max_hands=1, bot_kind="greedy"))
    # with these seeds greedy bot-3, hal's partner, asks "may I go out?" in the hand
    peer, terminal, out = seat_with_terminal(h, "hal", lang)
    person = MistakenPerson(peer, terminal)
    terminal.handle_line("help")  # before the welcome: the classic help
    play(h, person)
    terminal.handle_line("help")  # after it: the game's own
    terminal.handle_line("hint")
    return out.getvalue(), h, person


@pytest.mark.parametrize("variant", ["classic", "may-i"])
@pytest.mark.parametrize("lang", ["ru", "bg", "pl"])
def test_a_whole_hand_at_the_terminal_shows_no_english_sentence(variant: str, lang: str) -> None:
    shown, h, person = whole_hand(variant, lang)
    assert h.service.finished
    assert person.mistakes == [], "not every mistake was typed"
    assert english_sentences(shown, NAMES) == []
    assert english_words(shown, NAMES) == []  # not even a common English word
    _ = i18n.translator(lang).gettext
    assert _("Your move") in shown and _("match total") in shown
    unreadable = _("'{typed}' cannot be read: 'help' shows how to write '{verb}'.")
    assert unreadable.format(typed="draw 5", verb="draw") in shown
    if variant == "may-i":
        assert variant_name("may-i", lang) in shown and _("penalty points") in shown
        assert "y = may-i " in shown  # a buy asked
        assert _("Separate the melds with '|', and leave none of them empty.") in shown
    else:
        assert _("hand total") in shown and _("cards in melds") in shown
        assert _("y = answer yes, n = answer no >") in shown  # the partner's question


def test_the_english_detector_finds_the_english_hand() -> None:
    """The detector can fail: the same hand in English is found English, line by line."""
    shown, _h, _person = whole_hand("may-i", "en")
    found = "\n".join(english_sentences(shown, NAMES))
    for sentence in ("is not a card", "Your move", "cannot be read", "for sale", "lowest total"):
        assert sentence in found, sentence
    assert english_sentences("* ada: meld 7C 7D 7S | 4C 5C 6C 7C (max-hands)", NAMES) == []
    assert english_sentences("Nie da się odczytać 'draw 5': 'help' pokaże, jak zapisać.") == []
    assert english_sentences("Twoja tura: the pile is frozen") != []  # outside the catalogue


def test_russian_cards_are_shown_and_typed_in_russian_notation() -> None:
    h = Harness(config(classic(target=3000), players=2, max_hands=1))
    _peer, terminal, out = seat_with_terminal(h, "ada", "ru")
    while terminal.pending is None:
        h.run()
    snap = terminal.model.snapshot()
    assert snap["lang"] == "ru" and snap["prompt"]["text"].startswith("Ваш ход")
    hand = [c["card"] for c in snap["hand"]]
    shown = out.getvalue()
    assert "ваши карты (11):" in shown
    assert card_label(hand[0], "ru") in shown and hand[0] not in shown.split("ваши карты")[1]
    terminal.handle_line("draw")
    while terminal.pending is None:
        h.run()
    discard = next(t for t in terminal.legal if t.startswith("discard "))
    card = discard.split()[1]
    # the card as a Russian writes it (В/Д/К/Т, п/т/ч/б): the move goes out canonical
    typed = card_label(card, "ru").replace("♠", "п").replace("♣", "т").replace("♥", "ч")
    terminal.handle_line("discard " + typed.replace("♦", "б").lower())
    assert terminal.model.tried == discard


def test_lang_on_the_command_line_and_from_the_locale() -> None:
    runner = CliRunner()
    result = runner.invoke(cli.main, ["variants", "--lang", "ru"])
    assert result.exit_code == 0, result.output
    assert "«Можно?»" in result.output and "самба" in result.output.lower()
    assert "эскалеры и боливии" in result.output
    result = runner.invoke(cli.main, ["--lang", "pl", "variants"])
    assert "Kanasta klasyczna" in result.output
    result = runner.invoke(cli.main, ["variants"], env={"LANG": "bg_BG.UTF-8", "LANGUAGE": ""})
    assert "Класическа канаста" in result.output
    result = runner.invoke(cli.main, ["play", "--help", "--lang", "ru"])
    assert "Играть за локальным столом" in result.output and "Ваше имя за столом" in result.output
    # click's own words too
    assert "Использование:" in result.output and "Показать эту справку и выйти." in result.output
    result = runner.invoke(cli.main, ["--lang", "pl", "play", "--variant", "nope"])
    assert result.exit_code == 2 and "Błąd: Nieprawidłowa wartość --variant" in result.output
    assert "nieznany wariant 'nope'; znane: bolivia, classic" in result.output  # the whole line
    result = runner.invoke(cli.main, ["variants", "--lang", "xx"])
    assert result.exit_code == 2 and "no catalogue for language 'xx'" in result.output
    assert "Traceback" not in result.output
    result = runner.invoke(cli.main, ["variants", "--lang", "en"])
    assert "Classic Canasta, 4 players" in result.output


def test_the_page_gets_its_catalogue_and_switches_language() -> None:
    from twisted.internet.task import Clock

    from canasta_net.ui.table_model import TableModel
    from canasta_net.web.server import PageServer

    class Nothing:
        def act(self, text: str) -> None: ...
        def ready(self) -> None: ...
        def chat(self, text: str) -> None: ...
        def quit(self) -> None: ...
        def suggest(self) -> str:
            return "no hints here"

    model = TableModel(tr=i18n.translator("ru"))
    server: Any = PageServer(model, Nothing(), reactor=Clock())
    data = server.catalogue()
    assert data["lang"] == "ru" and data["ranks"]["K"] == "К" and data["joker"] == "Дж"
    assert data["messages"]["Draw"] == "Взять из колоды"
    assert set(data["languages"]) == {"en", "ru", "bg", "pl"}
    assert server.catalogue("pl")["messages"]["Pass"] == "Pas"
    json.dumps(data)  # JSON-ready
    version = model.version
    assert server.set_language("bg") is None
    assert model.version > version and model.snapshot()["lang"] == "bg"
    assert server.set_language("xx") is not None and model.tr.lang == "bg"
    # the session writes its event lines in the page's language, as it is now
    from canasta_net.net.peer import reader_translator
    from canasta_net.web.player import WebPlayer

    assert reader_translator(WebPlayer(model)).lang == "bg"


def test_click_still_says_the_sentences_the_catalogue_translates() -> None:
    import importlib.util
    from pathlib import Path

    from canasta_net.ui.click_texts import CLICK_TEXTS

    spec = importlib.util.find_spec("click")
    assert spec is not None and spec.origin is not None
    source = "".join(p.read_text() for p in Path(spec.origin).parent.glob("*.py"))
    for text in CLICK_TEXTS:
        assert f'_("{text}")' in source or f"_('{text}')" in source, text


def test_help_in_one_language_then_another_in_the_same_process() -> None:
    """click keeps the --help option it made: the second language must not get the first's."""
    runner = CliRunner()
    try:
        first = runner.invoke(cli.main, ["play", "--help"]).output
        second = runner.invoke(cli.main, ["--lang", "ru", "play", "--help"]).output
        third = runner.invoke(cli.main, ["play", "--help", "--lang", "en"]).output
    finally:
        i18n.set_language("en")
    assert "Show this message and exit." in first and "Show this message and exit." in third
    assert "Показать эту справку и выйти." in second
    assert "Show this message and exit." not in second
