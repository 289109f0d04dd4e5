"""The terminal client (``ui.players.TerminalPlayer``, ``ui.terminal_view``): the table drawn
from the client's model, the prompts and their short answers, the score sheet between hands and
the hand gate, ``hint`` numbered; played through a real seat session at an in-memory table."""

from __future__ import annotations

import contextlib
import io
import random
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_e2e_table import _no_stray_processes, _start, _wait_for  # noqa: F401 (a fixture)
from test_table_protocol import Harness, Remote, classic, config

from canasta_net.games import game_for
from canasta_net.log import iter_records
from canasta_net.log import records as R
from canasta_net.ui import cli
from canasta_net.ui.players import BotPlayer, TerminalPlayer
from canasta_net.ui.table_model import TableModel
from canasta_net.ui.terminal_view import move_text, render_sheet, render_table, use_colour


class Person:
    """Types into a terminal what the greedy bot would play, and ``y`` to every question."""

    def __init__(self, peer: Remote, terminal: TerminalPlayer, answer: str = "y") -> None:
        self.bot = BotPlayer("greedy", random.Random(5), lambda: peer.session.game)
        self.peer = peer
        self.terminal = terminal
        self.answer = answer
        self.typed: list[str] = []

    def line(self) -> str:
        kind = (self.terminal.model.snapshot()["prompt"] or {}).get("kind")
        if kind not in (None, "turn"):
            return self.answer
        move = self.bot.choose(self.terminal.legal, self.terminal.view)
        assert isinstance(move, str), "the greedy bot answers at once"
        return move


def seat_with_terminal(
    h: Harness, name: str, lang: str = "en"
) -> tuple[Remote, TerminalPlayer, io.StringIO]:
    """A seat of ``h`` played by a person at the terminal client, in ``lang``."""
    peer = h.remote(name, connect=False)
    out = io.StringIO()
    terminal = TerminalPlayer(out=out, game=lambda: peer.session.game, colour=False, lang=lang)
    session = peer.session
    session.player = terminal
    session.bot = False
    session.observer = terminal.model
    session.hand_gate = terminal.hand_gate
    handle = session.handle

    def handle_with_a_lasting_send(message: dict[str, Any], send: Any) -> None:
        # the harness hands a session a fresh outbox per pass; a person answers later, through
        # the connection, as a real one does
        handle(message, peer.send)

    session.handle = handle_with_a_lasting_send  # type: ignore[method-assign]
    peer.connect()
    return peer, terminal, out


def play(h: Harness, person: Person, *, enter: bool = True, limit: int = 3000) -> None:
    terminal = person.terminal
    peer = person.peer
    for _ in range(limit):
        sent = len(peer.sent)
        assert h.run() is None
        if h.service.finished:
            return
        if terminal.pending is not None:
            text = person.line()
            person.typed.append(text)
            terminal.handle_line(text)
        elif terminal.holding_next_hand and enter:
            person.typed.append("")
            terminal.handle_line("")
        elif len(peer.sent) == sent:
            return  # nothing moves: the table waits (for the hand gate, when not entered)
    raise AssertionError("the match never ended")


def actions_of(peer: Remote, seat: int) -> list[str]:
    records = iter_records(io.BytesIO(peer.log.getvalue()))
    return [
        str(r.action["action"])
        for r in records
        if r.kind == R.ACTION and r.action is not None and r.action["seat"] == seat
    ]


# --------------------------------------------------------------------------- whole hands


def test_a_hand_played_at_the_terminal_ends_with_the_sheet_and_waits_for_enter() -> None:
    h = Harness(config(classic(target=3000), players=2, max_hands=2))
    peer, terminal, out = seat_with_terminal(h, "ada")
    person = Person(peer, terminal)
    play(h, person, enter=False)
    # the first hand is over; the second waits for this seat's first step, held by the gate
    assert not h.service.finished and h.table.hand_no == 1
    assert terminal.holding_next_hand
    shown = out.getvalue()
    for needle in (
        "Your move (",
        "  your hand (",
        "  last move: ",
        "  you drew ",
        "== hand 1 over: ",
        "  cards in melds ",
        "  canasta bonuses ",
        "  red threes ",
        "  cards left in hand ",
        "  hand total ",
        "  match total ",
        "  target: 3000",
    ):
        assert needle in shown, needle
    assert shown.rstrip().endswith("press Enter for the next hand")
    assert "totals [" in shown  # the event line stays; the sheet is printed after it
    sheet = shown[shown.index("== hand 1 over: ") :]
    assert "ada & bot-3" in sheet.splitlines()[1] and "host (bot) & bot-2" in sheet.splitlines()[1]
    h.run()
    assert h.table.hand_no == 1 and not h.service.finished  # still held
    terminal.handle_line("")  # Enter
    play(h, person)
    assert h.service.finished and h.table.match.hands_played == 2
    assert "== match stopped (max-hands) ==" in out.getvalue()
    assert "\x1b" not in out.getvalue()  # not a terminal: no colour


def test_the_partners_question_is_asked_and_y_answers_it() -> None:
    # with these seeds greedy bot-3, hal's partner, asks "may I go out?" in the first hand
    h = Harness(config(classic(target=1500), players=2, max_hands=1, bot_kind="greedy"))
    peer, terminal, out = seat_with_terminal(h, "hal")
    person = Person(peer, terminal, answer="y")
    play(h, person)
    assert h.service.finished
    assert "bot-3 asks: may I go out?  y = answer yes, n = answer no >" in out.getvalue()
    assert "y" in person.typed and "answer yes" in actions_of(peer, 1)


def test_may_i_buys_are_asked_and_answered_with_y() -> None:
    h = Harness(config(game_for("may-i").rules, players=2, max_hands=1))
    peer, terminal, out = seat_with_terminal(h, "ada")
    play(h, Person(peer, terminal, answer="y"))
    assert h.service.finished
    shown = out.getvalue()
    assert "is for sale: buy it or pass.  y = may-i " in shown and ", n = pass >" in shown
    # a question between turns shows what changed, not the whole table
    question = shown.index("is for sale")
    assert "  your hand (" in shown[question - 300 : question]
    assert "  seat 0 " not in shown[question - 300 : question]
    assert any(a.startswith("may-i ") for a in actions_of(peer, 1))
    assert "== deal 1 over: " in shown and "  penalty points " in shown
    assert "lowest total" in shown


# --------------------------------------------------------------------------- the renderer

HOSTILE = "ev\x1b]0;pwned\x07il"


def canasta_model() -> TableModel:
    """Seat 1 (ada) on its turn, just after drawing; its side has not opened."""
    model = TableModel()
    model.welcome(game_for("classic"), 1, ["host", "ada", "bot-2", HOSTILE])
    state: dict[str, Any] = {
        "game": "canasta",
        "seat": 1,
        "turn": 1,
        "to_move": 1,
        "dealer": 0,
        "phase": "draw",
        "hand": ["5C", "5D", "7H", "JK"],
        "hand_sizes": [9, 4, 11, 11],
        "teams": [0, 1, 0, 1],
        "stock_size": 40,
        "pile_top": "9S",
        "pile_size": 7,
        "pile_frozen": False,
        "pile_frozen_for": [False, True],
        "pile_always_frozen": False,
        "melds": [
            [
                {
                    "cards": ["KH", "KH", "KS", "KS", "KC", "KD", "KD"],
                    "label": "Ks",
                    "canasta": "natural",
                    "points": 70,
                    "bonus": 500,
                }
            ],
            [],
        ],
        "red_threes": [["3H"], [], [], []],
        "opened": [True, False],
        "minimums": [50, 90],
        "turn_state": {"initial_points": 0, "permission": None},
    }
    view = {"table": "den", "hand_no": 2, "scores": [1200, 400], "state": state}
    model.show(view)
    model.show(
        {
            **view,
            "state": {
                **state,
                "phase": "play",
                "hand": [*state["hand"], "9D"],
                "hand_sizes": [9, 5, 11, 11],
                "turn_state": {"initial_points": 30, "permission": None},
            },
        }
    )
    model.last_move = {"seat": 2, "name": "bot-2", "action": "take-pile", "cards": 7}
    return model


def test_the_table_is_drawn_from_the_snapshot() -> None:
    snap = canasta_model().snapshot()
    text = render_table(snap)
    assert text.startswith("== den == hand 3 (classic)")
    assert "scores: host & bot-2: 1200" in text
    assert "  seat 1 ada [you] (team 1): 5 cards  <- to move" in text
    assert "  host & bot-2: 570 in melds, 1 canasta, red threes 3H" in text
    assert "    0: KH KH KS KS KC KD KD   70 +500  [natural canasta]" in text
    assert "needs 90 to open (laid this turn: 30)" in text
    assert "  pile: 9S (7 cards)  FROZEN: your side has not opened yet   stock: 40" in text
    assert "  last move: bot-2 took the pile (7 cards)" in text
    assert "  you drew 9D*" in text
    # grouped by rank, wild cards apart, the new card marked
    assert "  your hand (5):  5C 5D  7H  JK  9D*   (* just drawn)" in text
    assert "\\x1b]0;pwned" in text and "\x1b" not in text  # a name from others, escaped


def test_colour_only_on_a_terminal_and_never_from_what_others_wrote() -> None:
    snap = canasta_model().snapshot()
    coloured = render_table(snap, colour=True)
    assert "\x1b[31m7H\x1b[0m" in coloured  # hearts red
    assert "\x1b[31;1;4m9D*\x1b[0m" in coloured  # a red card just drawn: highlighted too
    assert "\x1b[1;33mada [you] (team 1)\x1b[0m" in coloured  # the seat to move
    assert "\\x1b]0;pwned" in coloured  # the hostile name is still escaped
    own_codes = re.sub(r"\x1b\[[0-9;]*m", "", coloured)
    assert "\x1b" not in own_codes

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert use_colour(Tty(), {}) and not use_colour(io.StringIO(), {})
    assert not use_colour(Tty(), {"NO_COLOR": "1"}) and not use_colour(Tty(), {"TERM": "dumb"})
    assert use_colour(Tty(), {"NO_COLOR": ""})


def test_a_move_is_put_in_words() -> None:
    assert move_text({"seat": 2, "name": "bot-2", "action": "take-pile", "cards": 7}, 1) == (
        "bot-2 took the pile (7 cards)"
    )
    assert move_text({"seat": 1, "name": "ada", "action": "add 0 KH KD"}, 1) == (
        "you added KH KD to meld 0"
    )
    assert move_text({"seat": 0, "name": "x", "action": "discard 7D"}, 1) == "x discarded 7D"
    assert move_text({"seat": 0, "name": "x", "action": "may-i 9D"}, 1) == (
        "x asked to buy 9D (May I?)"
    )
    assert move_text({"seat": 1, "name": "x", "action": "take-discard 9D"}, 1) == (
        "you took the discard 9D"
    )
    assert move_text({"seat": 0, "name": "x", "action": "take-pile QS QD", "cards": 3}, 1) == (
        "x took the pile (3 cards), melding its top with QS QD"
    )


def test_the_score_sheet_is_a_table_per_side() -> None:
    model = canasta_model()
    model.hand_end = {
        "hand": 2,
        "shown_hand": 3,
        "reason": "went-out",
        "went_out": 1,
        "went_out_name": "ada",
        "sides": [
            {
                "side": 0,
                "names": ["host", "bot-2"],
                "parts": [
                    {"key": k, "label": k, "value": v}
                    for k, v in (
                        ("melds", 230),
                        ("canasta_bonus", 500),
                        ("natural_canastas", 1),
                        ("mixed_canastas", 0),
                        ("red_threes", 100),
                        ("going_out", 0),
                        ("cards_in_hand", 60),
                        ("total", 770),
                    )
                ],
                "total": 770,
            },
            {
                "side": 1,
                "names": ["ada", "bob"],
                "parts": [
                    {"key": k, "label": k, "value": v}
                    for k, v in (
                        ("melds", 100),
                        ("canasta_bonus", 0),
                        ("natural_canastas", 0),
                        ("mixed_canastas", 0),
                        ("red_threes", 0),
                        ("going_out", 100),
                        ("cards_in_hand", 0),
                        ("total", 200),
                    )
                ],
                "total": 200,
            },
        ],
        "totals": [1970, 600],
    }
    model.game = game_for("classic")
    lines = render_sheet(model.snapshot()).splitlines()
    assert lines[0] == "== hand 3 over: ada went out =="
    assert lines[1].split() == ["host", "&", "bot-2", "ada", "&", "bob"]
    rows = {line[:26].strip(): line[26:].split() for line in lines[2:]}
    assert rows["cards in melds"] == ["230", "100"]
    assert rows["canasta bonuses"] == ["500", "0"]
    assert rows["canastas natural/mixed"] == ["1/0", "0/0"]
    assert rows["cards left in hand"] == ["-60", "0"]
    assert rows["hand total"] == ["770", "200"]
    assert rows["match total"] == ["1970", "600"]
    assert lines[-1] == "  target: 5000"


# --------------------------------------------------------------------------- input


def prompted(
    legal: list[str], game: str = "classic"
) -> tuple[TerminalPlayer, io.StringIO, list[str]]:
    out = io.StringIO()
    terminal = TerminalPlayer(out=out, colour=False, game=lambda: game_for(game))
    terminal.model.seat = 1
    terminal.model.names = ["bob", "ada"]
    chosen: list[str] = []
    terminal.choose(legal, {"state": {"turn": 0, "hand": []}}).addCallback(chosen.append)
    return terminal, out, chosen


LEGAL = [
    "draw",
    "take-pile",
    "take-pile QS QD",
    *(f"meld {m}" for m in ("8D 8H 2H", "KS KD JK", "QS QD QH")),
    *(f"discard {c}" for c in ("4C", "5D", "8D", "8H", "9S", "10H", "JC", "QS", "QD")),
    "ask-go-out",
]


def test_hint_numbers_the_moves_by_verb_and_a_number_plays_one() -> None:
    terminal, out, chosen = prompted(LEGAL)
    terminal.handle_line("hint")
    hint = out.getvalue().split("Your move")[-1].splitlines()[1:]
    assert hint[0].startswith("16 legal: type a number")
    assert hint[1].split() == ["draw:", "1)", "draw"]
    assert hint[2].split() == ["take-pile:", "2)", "take-pile", "3)", "QS", "QD"]
    assert hint[3] == "  meld:         4) 8D 8H 2H   5) KS KD JK   6) QS QD QH"
    assert "discard:" in hint[4] and "7) 4C" in hint[4] and "15) QD" in hint[4]
    assert len(hint) == 6 and all(len(line) <= 100 for line in hint)
    terminal.handle_line("hint 99")
    assert "choose a number from 1 to 16" in out.getvalue() and chosen == []
    terminal.handle_line("5")
    assert chosen == ["meld KS KD JK"]
    terminal, _out, chosen = prompted(LEGAL)
    terminal.handle_line("hint 3")
    assert chosen == ["take-pile QS QD"]


def test_y_and_n_answer_the_question_asked() -> None:
    terminal, out, chosen = prompted(["answer yes", "answer no"])
    assert "bob asks: may I go out?  y = answer yes, n = answer no >" in out.getvalue()
    terminal.handle_line("y")
    assert chosen == ["answer yes"]
    terminal, out, chosen = prompted(["answer yes", "answer no"])
    terminal.handle_line("answer no")
    assert chosen == ["answer no"]
    terminal, out, chosen = prompted(["may-i 9D", "pass"], "may-i")
    assert "y = may-i 9D, n = pass >" in out.getvalue()
    terminal.handle_line("n")
    assert chosen == ["pass"]
    terminal, out, chosen = prompted(["allow", "deny KH"], "may-i")
    terminal.handle_line("deny")  # the one card it can name
    assert chosen == ["deny KH"]
    terminal, out, chosen = prompted(["draw", "take-pile"])
    terminal.handle_line("y")
    assert chosen == [] and "y and n answer a question" in out.getvalue()


def test_the_hand_gate_holds_until_enter_and_an_early_enter_counts() -> None:
    out = io.StringIO()
    terminal = TerminalPlayer(out=out, colour=False)
    assert terminal.hand_gate(1) is None  # no sheet shown: nothing to wait for
    terminal.model.hand_end = {"shown_hand": 1, "went_out_name": "ada", "sides": []}
    terminal.event("hand 1 over")  # the sheet is printed
    gate = terminal.hand_gate(1)
    assert gate is not None and not gate.called
    assert out.getvalue().rstrip().endswith("press Enter for the next hand")
    terminal.handle_line("draw")  # any line goes on, and is not taken as a move
    assert gate.called and terminal.pending is None
    terminal.model.hand_end = {"shown_hand": 2, "went_out_name": "ada", "sides": []}
    terminal.event("hand 2 over")
    terminal.handle_line("")  # Enter before the next hand asks
    assert terminal.hand_gate(2) is None


# --------------------------------------------------------------------------- the host's bots


@pytest.mark.parametrize(
    ("flags", "delay"),
    [
        ([], 0.3),
        (["--host-bot"], 0.0),
        (["--delay", "1.5"], 1.5),
        (["--host-bot", "--delay", "0.2"], 0.2),
    ],
)
def test_the_hosts_bots_move_at_a_pace_a_person_can_follow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: list[str], delay: float
) -> None:
    served: list[Any] = []

    async def fake_serve(reactor: Any, config: Any, identity: Any, **kw: Any) -> int:
        served.append(config)
        return 0

    def run(main: Any) -> None:
        with contextlib.suppress(StopIteration):
            main(None).send(None)  # no reactor: the fake serve does not wait

    monkeypatch.setattr(cli, "_serve", fake_serve)
    monkeypatch.setattr(cli, "_run", run)
    base = ["host", "--bind", "127.0.0.1", "--no-announce", "--identity", str(tmp_path / "h.pem")]
    result = CliRunner().invoke(cli.main, [*base, *flags])
    assert result.exit_code == 0, result.output
    assert served[0].bot_delay == delay


# --------------------------------------------------------------------------- a real process


def test_canasta_play_at_a_terminal_numbers_hints_and_plays_a_number(tmp_path: Path) -> None:
    """``canasta play`` as a person runs it (stdin and stdout not a terminal: no colour)."""
    out = tmp_path / "play.out"
    args = ["play", "--variant", "classic-2p", "--delay", "0", "--name", "ada"]
    args += ["--identity", str(tmp_path / "id.pem"), "--log", str(tmp_path / "play.cnlog")]
    proc = _start(args, out, stdin=subprocess.PIPE)
    assert proc.stdin is not None

    def type_line(text: str) -> None:
        assert proc.stdin is not None
        proc.stdin.write(text.encode() + b"\n")
        proc.stdin.flush()

    _wait_for(out, r"Your move \(", proc)
    type_line("hint")
    number = _wait_for(out, r"(\d+)\) draw\b", proc).split(")")[0]
    type_line(number)
    _wait_for(out, r"  you drew \S+\*", proc)
    type_line("quit")
    assert proc.wait(30) == 0, out.read_text()
    shown = out.read_text()
    assert "\x1b[" not in shown and "  your hand (" in shown and "  last move: you drew" in shown


def test_cards_that_came_outside_the_seats_turn_are_named_at_the_terminal() -> None:
    # Before: only the page said which cards a May I? buy or the deal's red threes brought.
    snap = canasta_model().snapshot()
    snap["received"], snap["deal_red_threes"] = ["KS", "2H"], ["3D"]
    text = render_table(snap)
    assert "  You received KS 2H." in text
    assert "  Your red threes from the deal, laid and replaced from the stock: 3D." in text
    snap["lang"] = "ru"
    russian = render_table(snap)
    assert "  Вы получили: К♠ 2♥." in russian
    assert "  Ваши красные тройки из раздачи выложены и заменены картами из колоды: 3♦." in russian
