"""The clients in the seeds' languages: a whole hand at the terminal in Russian (and Bulgarian,
Polish) with no English sentence, moves typed in a language's card notation, the page's
catalogue and its language switch, ``--lang`` on the command line."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest
from click.testing import CliRunner
from test_table_protocol import Harness, Remote, classic, config
from test_terminal_client import Person, play

from canasta_net import i18n
from canasta_net.cards import card_label
from canasta_net.games import game_for
from canasta_net.ui import cli
from canasta_net.ui.players import TerminalPlayer

# Common English words of the clients' sentences: none may be in a Russian, Bulgarian or Polish
# client's output, apart from card notation, names, reason codes and the canonical move verbs.
ENGLISH = {
    "the",
    "your",
    "you",
    "and",
    "with",
    "from",
    "turn",
    "hand",
    "pile",
    "stock",
    "cards",
    "card",
    "meld",
    "melds",
    "discard",
    "draw",
    "drew",
    "took",
    "team",
    "seat",
    "score",
    "scores",
    "total",
    "target",
    "press",
    "enter",
    "next",
    "over",
    "went",
    "out",
    "frozen",
    "legal",
    "move",
    "last",
    "red",
    "threes",
    "canasta",
    "canastas",
    "bonuses",
    "left",
    "going",
    "match",
    "stopped",
    "won",
    "asks",
    "may",
    "yes",
    "not",
    "new",
    "laid",
    "needs",
    "open",
    "melding",
    "added",
    "dealer",
    "in",
    "of",
    "is",
    "or",
    "for",
    "it",
    "type",
    "number",
    "play",
    "just",
    "drawn",
}  # not "a", "to", "bot": Polish words too
# What may stay as it is: the move verbs and codes, names, cards, "hint"/"help" commands
ALLOWED = {"draw", "meld", "discard", "take-pile", "add", "ask-go-out", "answer", "yes", "no"}
NAMES = ("host (bot)", "bot-2", "bot-3", "ada", "test table")


def seat_in(h: Harness, name: str, lang: str) -> tuple[Remote, TerminalPlayer, io.StringIO]:
    peer = h.remote(name, connect=False)
    out = io.StringIO()
    terminal = TerminalPlayer(out=out, game=lambda: peer.session.game, colour=False, lang=lang)
    session = peer.session
    session.player = terminal
    session.bot = False
    session.observer = terminal.model
    session.hand_gate = terminal.hand_gate
    handle = session.handle
    session.handle = lambda message, send: handle(message, peer.send)  # type: ignore[method-assign]
    peer.connect()
    return peer, terminal, out


def english_words(text: str) -> list[str]:
    """The English words of ``text``, line by line (the people's names taken out first)."""
    found = []
    for line in text.splitlines():
        bare = line
        for name in NAMES:
            bare = bare.replace(name, "")
        bare = re.sub(r"(10|[2-9A-Z])[♠♣♥♦]", "", bare)  # cards in the reader's notation
        for word in re.findall(r"[A-Za-z][A-Za-z'-]*", bare):
            low = word.lower()
            if low in ENGLISH and low not in ALLOWED:
                found.append(f"{word!r} in {line!r}")
    return found


@pytest.mark.parametrize(
    ("variant", "lang"), [("classic", "ru"), ("classic", "bg"), ("classic", "pl"), ("may-i", "ru")]
)
def test_a_whole_hand_at_the_terminal_shows_no_english_sentence(variant: str, lang: str) -> None:
    rules = game_for(variant).rules if variant == "may-i" else classic(target=3000)
    h = Harness(config(rules, players=2, max_hands=1))
    peer, terminal, out = seat_in(h, "ada", lang)
    person = Person(peer, terminal)
    # the person asks for help and hints too, as a person does
    terminal.handle_line("help")
    play(h, person)
    terminal.handle_line("hint")
    terminal.handle_line("frobnicate")
    shown = out.getvalue()
    assert h.service.finished
    assert english_words(shown) == []
    _ = i18n.translator(lang).gettext
    assert _("Your move") in shown and _("match total") in shown
    if variant == "may-i":
        assert "«Можно?»" in shown and _("penalty points") in shown
    else:
        assert _("hand total") in shown and _("cards in melds") in shown


def test_russian_cards_are_shown_and_typed_in_russian_notation() -> None:
    h = Harness(config(classic(target=3000), players=2, max_hands=1))
    _peer, terminal, out = seat_in(h, "ada", "ru")
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
