"""The searching bot's hint in the clients (``canasta_net.hint.suggest_from_view``): the
terminal's ``suggest`` and the page's ``POST /suggest``. A hint is searched from the seat's own
view only, so cards hidden from the seat cannot change it; it says why there is none when nothing
is the seat's to play; the page's server answers other requests while the search runs."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from test_bot_pool import _position
from test_web_page import Actions, request, static_dir
from twisted.internet import reactor, threads
from twisted.internet.defer import Deferred, succeed

from canasta_net import mayi
from canasta_net.canasta.position import position_from_dict, position_to_dict
from canasta_net.games import game_for
from canasta_net.hint import (
    NO_SUGGESTION,
    NOTHING_TO_SUGGEST,
    Suggestion,
    suggest,
    suggest_from_view,
)
from canasta_net.ui.players import TerminalPlayer
from canasta_net.ui.table_model import TableModel
from canasta_net.web.player import WebPlayer, hand_cards_of
from canasta_net.web.server import PageServer, cookie_name

VARIANTS = ["classic", "classic-2p", "may-i"]


class InProcessPool:
    """The worker pool's part a client uses, searching here with a fixed seed and two sampled
    deals (the real pool's search is the same, in a worker: ``test_bot_pool``); it keeps the
    states it was asked about. ``hold`` keeps the answer until ``release``."""

    def __init__(self, hold: bool = False) -> None:
        self.states: list[Any] = []
        self.hold = hold
        self.held: list[tuple[Deferred[Suggestion], Suggestion]] = []

    def suggest_later(
        self,
        state: Any,
        budget: float = 0.5,
        simulations: int | None = None,
        rng: random.Random | None = None,
    ) -> Deferred[Suggestion]:
        self.states.append(state)
        hint = suggest(state, simulations=2, rng=random.Random(7))
        if not self.hold:
            return succeed(hint)
        d: Deferred[Suggestion] = Deferred()
        self.held.append((d, hint))
        return d

    def release(self) -> None:
        for d, hint in self.held:
            d.callback(hint)
        self.held.clear()


def _hidden_permuted(state: Any, seat: int, rng: random.Random) -> Any:
    """``state`` with every card hidden from ``seat`` (the other hands, the stock) dealt anew."""
    if isinstance(state, mayi.DealState):
        position = mayi.position_to_dict(state)
        rebuild: Any = mayi.position_from_dict
    else:
        position = position_to_dict(state)
        rebuild = position_from_dict
    position.pop("shown", None)  # the cards a hand took from the pile: a view does not list them
    places: list[tuple[str, int | None]] = [
        ("hands", s) for s in range(len(position["hands"])) if s != seat
    ]
    places.append(("stock", None))
    cards = [c for key, s in places for c in (position[key] if s is None else position[key][s])]
    rng.shuffle(cards)
    for key, s in places:
        size = len(position[key] if s is None else position[key][s])
        part, cards = cards[:size], cards[size:]
        if s is None:
            position[key] = part
        else:
            position[key][s] = part
    return rebuild(position)


def _hint_from_view(state: Any, variant: str) -> tuple[Any, InProcessPool]:
    game = game_for(variant)
    seat = state.to_move
    view = game.seat_view(state, seat)
    legal = [str(a) for a in state.legal_actions()]
    pool = InProcessPool()
    asked = suggest_from_view(view, game.rules, legal, pool, rng=random.Random(1))
    assert isinstance(asked, Deferred)
    got: list[Any] = []
    asked.addCallback(got.append)
    return got[0], pool


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_hint_comes_from_the_seats_view_alone(variant: str) -> None:
    state = _position(variant, 3, 9)
    seat = state.to_move
    hint, pool = _hint_from_view(state, variant)
    assert isinstance(hint, Suggestion) and state.is_legal(hint.action) and hint.reason
    searched = pool.states[0]
    assert searched is not state and searched.to_move == seat
    own = json.loads(position_text(searched))["hands"][seat]
    assert sorted(own) == sorted(json.loads(position_text(state))["hands"][seat])
    # every card hidden from the seat dealt anew, three times: the same position searched, the
    # same hint (the search's seed is fixed)
    for k in range(3):
        other = _hidden_permuted(state, seat, random.Random(100 + k))
        assert [len(h) for h in other.hands] == [len(h) for h in state.hands]
        again, again_pool = _hint_from_view(other, variant)
        assert str(again.action) == str(hint.action) and again.reason == hint.reason
        assert position_text(again_pool.states[0]) == position_text(searched)


def position_text(state: Any) -> str:
    if isinstance(state, mayi.DealState):
        return json.dumps(mayi.position_to_dict(state), sort_keys=True)
    return json.dumps(position_to_dict(state), sort_keys=True)


def test_no_hint_when_the_move_is_not_the_seats() -> None:
    state = _position("classic", 3, 9)
    game = game_for("classic")
    other = (state.to_move + 1) % state.players
    view = game.seat_view(state, other)
    assert suggest_from_view(view, game.rules, [], InProcessPool()) == NOTHING_TO_SUGGEST
    assert (
        suggest_from_view({"seat": 0, "to_move": 0}, game.rules, ["draw"], InProcessPool())
        == NO_SUGGESTION
    )


def test_a_hint_not_among_the_offered_moves_is_not_given() -> None:
    state = _position("classic-2p", 3, 9)
    game = game_for("classic-2p")
    view = game.seat_view(state, state.to_move)
    legal = [str(a) for a in state.legal_actions()]
    hint, _pool = _hint_from_view(state, "classic-2p")
    offered = [t for t in legal if t != str(hint.action)]
    asked = suggest_from_view(view, game.rules, offered, InProcessPool(), rng=random.Random(1))
    assert isinstance(asked, Deferred)
    got: list[Any] = []
    asked.addCallback(got.append)
    assert got == [NO_SUGGESTION]


def test_a_hint_names_the_hand_cards_it_plays() -> None:
    assert hand_cards_of("meld KH KS 2C") == ["KH", "KS", "2C"]
    assert hand_cards_of("add 0 KH JK") == ["KH", "JK"]
    assert hand_cards_of("add 2.0 8C") == ["8C"]
    assert hand_cards_of("meld 7C 7D 7S | 4C 5C 6C 7C") == [
        "7C",
        "7D",
        "7S",
        "4C",
        "5C",
        "6C",
        "7C",
    ]
    assert hand_cards_of("take-pile QS QD") == ["QS", "QD"]
    assert hand_cards_of("take-discard 9D") == [] and hand_cards_of("draw") == []


# --------------------------------------------------------------------------- the terminal
@pytest.mark.parametrize("variant", ["classic", "may-i"])
def test_the_terminal_suggests_a_move_and_keeps_hint_listing(variant: str) -> None:
    state = _position(variant, 4, 9)
    game = game_for(variant)
    out = io.StringIO()
    terminal = TerminalPlayer(out=out, colour=False, game=lambda: game)
    terminal.hint_pool = pool = InProcessPool(hold=True)
    terminal.handle_line("suggest")
    assert "It is not your move: there is nothing to suggest now." in out.getvalue()
    legal = [str(a) for a in state.legal_actions()]
    chosen: list[str] = []
    view = {"state": game.seat_view(state, state.to_move)}
    terminal.choose(legal, view).addCallback(chosen.append)
    terminal.handle_line("suggest")
    assert "Thinking about a suggestion..." in out.getvalue() and "Suggested:" not in out.getvalue()
    pool.release()
    said = out.getvalue().split("Suggested: ")[-1]
    hint = suggest(pool.states[0], simulations=2, rng=random.Random(7))
    assert said.startswith(f"{hint.action} ({hint.reason})")
    assert chosen == []  # a hint plays nothing
    terminal.handle_line("hint")
    assert f"{len(legal)} legal: type a number" in out.getvalue()
    # the answer that comes after the move was made is not printed
    terminal.handle_line("suggest")
    terminal.handle_line(legal[0])
    before = out.getvalue()
    pool.release()
    assert out.getvalue() == before and chosen == [legal[0]]
    terminal.handle_line("help")
    assert "suggest: the move the searching bot would play" in out.getvalue()


def test_the_terminal_says_the_hint_in_its_language() -> None:
    state = _position("classic", 4, 9)
    game = game_for("classic")
    out = io.StringIO()
    terminal = TerminalPlayer(out=out, colour=False, game=lambda: game, lang="ru")
    terminal.hint_pool = InProcessPool()
    terminal.handle_line("suggest")
    assert "Сейчас не ваш ход: подсказывать нечего." in out.getvalue()
    legal = [str(a) for a in state.legal_actions()]
    terminal.choose(legal, {"state": game.seat_view(state, state.to_move)})
    terminal.handle_line("suggest")
    said = out.getvalue()
    assert "Подсказка: " in said and "Suggested" not in said and "sampled deals" not in said


# --------------------------------------------------------------------------- the page
@pytest.fixture
def page_for_a_hint(tmp_path: Path) -> Any:
    game = game_for("classic-2p")
    model = TableModel()
    model.welcome(game, 0, ["you", "bot"])
    player = WebPlayer(model, game=lambda: game)
    player.hint_pool = InProcessPool(hold=True)
    actions = HintActions(player)
    server = PageServer(player.model, actions, reactor=reactor, static=static_dir(tmp_path))
    server.listen()
    yield server, player, game
    server.stop()


class HintActions(Actions):
    def suggest(self) -> Deferred[dict[str, Any] | str] | str:
        return self.player.suggest()


@pytest_twisted.ensureDeferred
async def test_the_page_asks_for_a_hint_and_the_server_serves_meanwhile(
    page_for_a_hint: Any,
) -> None:
    server, player, game = page_for_a_hint
    port, token = server.port, server.token
    headers = {
        "Cookie": f"{cookie_name(port)}={token}",
        "Origin": f"http://127.0.0.1:{port}",
        "Content-Type": "application/json",
    }

    def post(path: str, with_headers: dict[str, str]) -> tuple[int, Any]:
        status, _, data = request(port, "POST", path, body=b"{}", headers=with_headers)
        return status, json.loads(data) if status != 403 else data

    # the same checks as /act: no token, another site's page, no Origin
    for bad in (
        {k: v for k, v in headers.items() if k != "Cookie"},
        {**headers, "Origin": "http://evil.example"},
        {k: v for k, v in headers.items() if k != "Origin"},
    ):
        status, _ = await threads.deferToThread(post, "/suggest", bad)
        assert status == 403
    status, data = await threads.deferToThread(post, "/suggest", headers)
    assert status == 400 and data == {"ok": False, "error": NOTHING_TO_SUGGEST}

    state = _position("classic-2p", 5, 9)
    seat = state.to_move
    legal = [str(a) for a in state.legal_actions()]
    player.model.seat = seat
    player.choose(legal, {"state": game.seat_view(state, seat)})
    asked = threads.deferToThread(post, "/suggest", headers)
    pool = player.hint_pool
    while not pool.held:  # the request reached the page's server, the search is asked
        await _tick()
    # the search is running: the page's server answers other requests meanwhile
    status, _, _ = await threads.deferToThread(
        request, port, "GET", "/i18n.json", headers={"Cookie": headers["Cookie"]}
    )
    assert status == 200 and not asked.called
    pool.release()
    status, data = await asked
    hint = suggest(pool.states[0], simulations=2, rng=random.Random(7))
    assert status == 200 and data["ok"] and data["action"] == str(hint.action)
    assert data["action"] in legal and data["reason"] == hint.reason
    assert data["cards"] == hand_cards_of(str(hint.action))
    assert player.pending is not None and not player.pending.called  # nothing was played


async def _tick() -> None:
    d: Deferred[None] = Deferred()
    reactor.callLater(0.01, d.callback, None)
    await d
