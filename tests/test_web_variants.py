"""Every variant plays in the page: one hand (May I?: one deal) of each, the person's seat played
through a real ``WebPlayer`` at an in-memory table (the harness of ``test_table_protocol``), each
move chosen by the greedy bot from the snapshot's ``legal`` and sent as the page sends it
(``WebPlayer.act``, the server's ``POST /act``). Every snapshot the page would be sent must be
coherent: plain JSON; when something is asked, the legal moves offered (each one readable by the
game, in its canonical text), a prompt of the right kind with its sentence, the moves grouped by
verb; never a hand but this seat's; and at the end the score sheet."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from test_table_protocol import Harness, Remote, config

from canasta_net.cards import parse_face
from canasta_net.games import game_for
from canasta_net.ui.table_model import TableModel, actions_by_verb, prompt_kind
from canasta_net.web.player import WebPlayer
from canasta_net.web.server import snapshot_event

# (variant, people at the table: seat 0 the host's bot, seat 1 the page's person)
VARIANTS = [
    ("classic", 2),
    ("classic-2p", 2),
    ("classic-3p", 2),
    ("classic-3p-lone", 2),
    ("vienna", 2),
    ("samba", 2),
    ("samba-2p", 2),
    ("samba-3p", 2),
    ("bolivia", 2),
    ("may-i", 2),
]
PERSON = 1


def seat_a_page(h: Harness) -> tuple[Remote, WebPlayer]:
    """Seat 1 played through the page's player: its session feeds the page's model."""
    # not handled by the harness's loop: the page's answers come later, through peer.send
    peer = h.remote("ada", connect=False, auto=False)
    model = TableModel()
    player = WebPlayer(model, game=lambda: peer.session.game)
    peer.session.player = player
    peer.session.observer = model
    peer.session.hand_gate = player.hand_gate
    peer.connect()
    return peer, player


def settle(h: Harness, peer: Remote) -> None:
    """Deliver everything both ways until nothing moves (the page's seat handled here, its
    later answers sent straight to the host)."""
    while True:
        h.run(hold=(peer,))  # what the host sends the page's seat waits for it here
        arrived = peer.replies()
        if not arrived:
            return
        for message in arrived:
            peer.session.handle(message, peer.send)


def check_asked(snap: dict[str, Any], game: Any) -> None:
    """A snapshot that asks for a move: what the page needs to offer it."""
    legal = snap["legal"]
    assert snap["role"] == "player" and snap["seat"] == PERSON
    assert snap["prompt"] is not None and snap["prompt"]["text"]
    assert snap["prompt"]["kind"] == prompt_kind(legal)
    assert snap["actions"] == actions_by_verb(legal)
    assert sum(len(v) for v in snap["actions"].values()) == len(legal)
    for text in legal:
        assert str(game.parse_action(text)) == text  # canonical: the page sends it as listed
    state = snap["state"] or {}
    assert [c["card"] for c in snap["hand"]] == list(state.get("hand") or [])
    assert state.get("seat") == PERSON


@pytest.mark.parametrize(("variant", "people"), VARIANTS)
def test_a_hand_of_every_variant_plays_through_the_page(variant: str, people: int) -> None:
    game = game_for(variant)
    h = Harness(config(game.rules, people, max_hands=1))
    peer, player = seat_a_page(h)
    bot = game.make_bot("greedy", random.Random(11))
    moves = 0
    kinds: set[str] = set()
    for _ in range(2000):
        settle(h, peer)
        snap = json.loads(snapshot_event(player.model.snapshot()).split(b"data: ", 1)[1])
        if player.gate is not None:
            assert snap["ready_asked"] and snap["hand_end"] is not None
            assert player.ready() is None
            continue
        if player.pending is None:
            break
        check_asked(snap, game)
        kinds.add(snap["prompt"]["kind"])
        hand = [parse_face(c["card"]) for c in snap["hand"]]
        actions = [game.parse_action(text) for text in snap["legal"]]
        move = str(bot.choose(actions, hand, game.rules))
        assert move in snap["legal"]
        assert player.act(move) is None
        moves += 1
    else:
        raise AssertionError("the hand did not end")
    assert h.service.finished and peer.session.problem is None, peer.session.problem
    assert moves > 0 and "turn" in kinds
    if variant == "may-i":
        assert "may-i-buy" in kinds  # another seat's discard offered to buy, in the page
    snap = player.model.snapshot()
    sheet = snap["hand_end"]
    assert sheet is not None and sheet["sides"] and sheet["totals"] is not None
    assert all(side["parts"] and side["total"] is not None for side in sheet["sides"])
    assert snap["match_end"] is not None and snap["legal"] == [] and snap["prompt"] is None
    assert snap["history"] and snap["finished"]
