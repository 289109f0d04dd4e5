"""The client's model of the table (``canasta_net.ui.table_model``), fed by a real seat session
at an in-memory table: what a person's page or terminal shows comes from the log and the views,
and never holds a card the seat may not see."""

from __future__ import annotations

import io
import json
from typing import Any

from test_table_protocol import Harness, Remote, classic, config
from twisted.internet.defer import Deferred

from canasta_net.cards import parse_face
from canasta_net.games import game_for
from canasta_net.log import iter_records
from canasta_net.log import records as R
from canasta_net.log.format import StoredRecord
from canasta_net.ui.table_model import TableModel, actions_by_verb, prompt_kind, rank_group

Message = dict[str, Any]


class ModelBot:
    """A greedy bot whose session also feeds a TableModel, as a person's client would."""

    def __init__(self, peer: Remote, model: TableModel) -> None:
        self.inner = peer.session.player
        self.model = model
        self.snapshots: list[dict[str, Any]] = []
        self.prompts: list[list[str]] = []

    def show(self, view: dict[str, Any]) -> None:
        self.model.show(view)
        self.snapshots.append(self.model.snapshot())

    def event(self, text: str) -> None:
        self.model.event(text)

    def choose(self, legal: list[str], view: dict[str, Any]) -> Any:
        self.model.prompt(legal, view)
        self.snapshots.append(self.model.snapshot())
        self.prompts.append(list(legal))
        text = self.inner.choose(legal, view)
        self.model.acted(str(text))
        return text

    def finished(self, reason: str) -> None:
        self.model.finish(reason)


def seat_with_model(h: Harness, name: str) -> tuple[Remote, TableModel, ModelBot]:
    peer = h.remote(name, connect=False)
    model = TableModel()
    player = ModelBot(peer, model)
    peer.session.player = player
    peer.session.observer = model
    peer.connect()
    return peer, model, player


def test_the_model_follows_a_whole_match_from_the_seats_session() -> None:
    h = Harness(config(classic(target=1500), players=2))
    peer, model, player = seat_with_model(h, "ada")
    h.run_to_end()
    hand_ends = [r for r in iter_records(io.BytesIO(peer.log.getvalue())) if r.kind == R.HAND_END]
    assert hand_ends and model.history == [r.fields["totals"] for r in hand_ends]
    sheet = model.hand_end
    assert sheet is not None and sheet["totals"] == hand_ends[-1].fields["totals"]
    for side, score in zip(sheet["sides"], hand_ends[-1].fields["scores"], strict=True):
        # the sheet's parts are the log's, and they add up to the hand's total
        parts = {p["key"]: p["value"] for p in side["parts"]}
        assert parts["total"] == score["total"] == side["total"]
        counted = ("melds", "canasta_bonus", "red_threes", "going_out")
        assert sum(parts[k] for k in counted) - parts["cards_in_hand"] == score["total"]
        assert side["names"]
    assert model.match_end is not None and model.match_end["kind"] == R.MATCH_END
    assert model.finished == "the match is over"
    json.dumps(model.snapshot())  # what a page is sent is plain JSON

    prompted = [s for s in player.snapshots if s["legal"]]
    assert prompted and all(s["prompt"] is not None for s in prompted)
    for snap in player.snapshots:
        state = snap["state"] or {}
        hand = [c["card"] for c in snap["hand"]]
        assert hand == list(state.get("hand") or [])
        # the cards shown as new are cards in the hand
        new = [c["card"] for c in snap["hand"] if c["new"]]
        assert sorted(new) == sorted(snap["drawn"])
        for side in snap["sides"]:
            for meld in side["melds"]:
                rules = classic()
                assert meld["points"] == sum(rules.card_value(parse_face(c)) for c in meld["cards"])
            assert side["meld_points"] == sum(m["points"] + m["bonus"] for m in side["melds"])
        if state and state.get("turn") != 1:
            assert snap["drawn"] == []


def test_a_draw_is_named_and_a_pile_take_counts_its_cards() -> None:
    h = Harness(config(classic(target=1500), players=2))
    _peer, _model, player = seat_with_model(h, "ada")
    h.run_to_end()
    # after each of this seat's draws, the model names the new cards: one card from the stock
    # (more with red threes), the pile's cards after a take
    draws = 0
    for before, after in zip(player.snapshots, player.snapshots[1:], strict=False):
        move = after["last_move"]
        if move is None or move["seat"] != 1 or before["last_move"] == move:
            continue
        if move["action"] == "draw":
            draws += 1
            assert len(after["drawn"]) >= 1
        if move["action"].startswith("take-pile"):
            assert move["cards"] == before["pile"]["size"]
    assert draws > 0


def test_prompts_and_groups_are_read_off_the_legal_list() -> None:
    assert prompt_kind([]) is None
    assert prompt_kind(["answer yes", "answer no"]) == "answer-go-out"
    assert prompt_kind(["may-i 9D", "pass"]) == "may-i-buy"
    assert prompt_kind(["allow", "deny 9D"]) == "may-i-permission"
    assert prompt_kind(["draw", "take-pile"]) == "turn"
    assert actions_by_verb(["meld 8D 8H 2H", "draw", "meld KS KD JK"]) == {
        "meld": ["meld 8D 8H 2H", "meld KS KD JK"],
        "draw": ["draw"],
    }
    assert [rank_group(c) for c in ("10S", "2C", "JK", "3H", "AD")] == [
        "10",
        "wild",
        "wild",
        "3",
        "A",
    ]


def test_a_refusal_is_kept_with_what_was_tried_until_the_seat_moves() -> None:
    model = TableModel()
    model.acted("meld 8D 8H")
    model.refused("meld-too-small", "a meld needs at least three cards")
    snap = model.snapshot()
    assert snap["refusal"] == {
        "tried": "meld 8D 8H",
        "code": "meld-too-small",
        "message": "a meld needs at least three cards",
    }
    assert snap["legal"] == []


def test_the_frozen_pile_says_why() -> None:
    model = TableModel()
    model.seat = 0
    state = {
        "turn": 0,
        "teams": [0, 1],
        "opened": [False, True],
        "pile_frozen": False,
        "pile_frozen_for": [True, False],
        "pile_always_frozen": False,
        "pile_top": "7D",
        "pile_size": 5,
        "stock_size": 50,
        "hand": [],
    }
    model.show({"state": state})
    pile = model.snapshot()["pile"]
    assert pile["frozen_for_you"] and pile["frozen_reasons"] == ["your side has not opened yet"]
    model.seat = 1
    model.show({"state": state})
    assert model.snapshot()["pile"]["frozen_reasons"] == []


def test_the_next_hand_waits_until_the_person_is_ready() -> None:
    h = Harness(config(classic(target=3000), players=2, max_hands=2))
    peer = h.remote("ada", connect=False)
    asked: list[int] = []
    gate: Deferred[None] = Deferred()

    def hand_gate(hand: int) -> Deferred[None]:
        asked.append(hand)
        return gate

    peer.session.hand_gate = hand_gate
    peer.connect()
    assert h.run() is None
    # the first hand was played; the second is held at this seat's first step
    assert asked == [1]
    assert h.table.hand_no == 1 and not h.service.finished
    # the harness hands a session a fresh outbox per pass; a real connection's send stays
    held = peer.session._held
    assert held is not None and held[0]["hand"] == 1
    peer.session._held = (held[0], peer.send)
    gate.callback(None)
    h.run_to_end()
    assert h.table.match.hands_played == 2


def test_a_bot_seat_with_no_gate_plays_on() -> None:
    h = Harness(config(classic(target=3000), players=2, max_hands=2))
    h.remote("ada")
    h.run_to_end()
    assert h.table.match.hands_played == 2


def test_no_card_is_new_before_the_seat_draws_even_on_a_hands_first_turn() -> None:
    """May I?: seat 1 moves first in the first deal, so its first view of a hand is already its
    turn; the hand as dealt is not "drawn"."""
    h = Harness(config(game_for("may-i").rules, players=2, max_hands=1))
    _peer, _model, player = seat_with_model(h, "ada")
    h.run_to_end()
    before_draw = [
        s
        for s in player.snapshots
        if s["state"] and s["state"]["turn"] == 1 and s["state"]["phase"] == "draw"
    ]
    assert before_draw
    for snap in before_draw:
        assert snap["drawn"] == [] and not any(c["new"] for c in snap["hand"])
    drew = [
        s
        for s in player.snapshots
        if s["last_move"] is not None
        and s["last_move"]["seat"] == 1
        and s["last_move"]["action"] == "draw"
    ]
    assert drew and all(len(s["drawn"]) == 1 for s in drew)


def test_red_threes_laid_this_turn_are_named_and_their_replacements_are_new() -> None:
    model = TableModel()
    model.seat = 0
    state: dict[str, Any] = {
        "game": "canasta",
        "turn": 0,
        "phase": "draw",
        "hand": ["5C", "9D"],
        "red_threes": [["3D"], []],
        "hand_sizes": [2, 11],
    }
    model.show({"state": state})
    model.show(
        {
            "state": {
                **state,
                "phase": "play",
                "hand": ["5C", "9D", "KS"],
                "red_threes": [["3D", "3H"], []],
            }
        }
    )
    snap = model.snapshot()
    assert snap["red_threes_laid"] == ["3H"] and snap["drawn"] == ["KS"]
    model.show({"state": {**state, "turn": 1, "hand": ["5C", "9D"]}})
    assert model.snapshot()["red_threes_laid"] == []


def test_cards_that_come_outside_the_seats_turn_are_named_until_its_next_move() -> None:
    model = TableModel()
    model.seat = 1
    state: dict[str, Any] = {"game": "may-i", "turn": 0, "phase": "play", "hand": ["5C", "9D"]}
    model.show({"state": state})  # a hand's first view: what it holds was dealt
    assert model.snapshot()["received"] == []
    model.show({"state": {**state, "hand": ["5C", "9D", "KS", "2H"]}})  # a buy and its penalty
    snap = model.snapshot()
    assert snap["received"] == ["KS", "2H"] and snap["drawn"] == []
    assert [c["card"] for c in snap["hand"] if c["received"]] == ["KS", "2H"]
    model.show({"state": {**state, "turn": 1, "phase": "draw", "hand": ["5C", "9D", "KS", "2H"]}})
    assert model.snapshot()["received"] == ["KS", "2H"]  # still news when the turn comes
    model.record(moved(1, "draw"))  # the seat's own move: old news now
    assert model.snapshot()["received"] == []


def test_red_threes_laid_at_the_deal_are_named_until_the_seats_first_move() -> None:
    model = TableModel()
    model.seat = 0
    state: dict[str, Any] = {
        "game": "canasta",
        "turn": 1,
        "phase": "draw",
        "hand": ["5C", "9D"],
        "red_threes": [["3D"], []],
    }
    model.show({"state": state})
    assert model.snapshot()["deal_red_threes"] == ["3D"]
    model.record(moved(1, "draw"))  # another seat's move: still this seat's news
    assert model.snapshot()["deal_red_threes"] == ["3D"]
    model.record(moved(0, "draw"))
    assert model.snapshot()["deal_red_threes"] == []


def moved(seat: int, action: str) -> StoredRecord:
    """A verified action record of ``seat``, as the model reads one."""
    return StoredRecord(
        index=0,
        offset=0,
        size=0,
        body=b"",
        fields={"kind": R.ACTION, "seq": 0},
        host_sig=b"",
        private={},
        hash=b"",
        action={"seat": seat, "action": action},
        checkpoint=None,
    )


def test_scores_are_named_by_the_rules_teams_even_when_a_lone_hand_joins_two_seats() -> None:
    h = Harness(config(game_for("classic-3p-lone").rules, players=2, max_hands=1))
    _peer, model, _player = seat_with_model(h, "ada")
    h.run_to_end()
    snap = model.snapshot()
    names = [[s["name"]] for s in snap["seats"]]
    assert snap["score_names"] == names and len(snap["scores"]) == 3
    sheet = snap["hand_end"]
    assert [side["names"] for side in sheet["sides"]] == names
    # the hand's own teams (who played together) may differ: two of the three joined
    four = TableModel()
    four.welcome(game_for("classic"), 1, ["a", "b", "c", "d"])
    assert four.snapshot()["score_names"] == [["a", "c"], ["b", "d"]]
