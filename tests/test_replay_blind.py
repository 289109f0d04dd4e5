"""canasta-replay show and export on blind-dealt logs: every position of a hand is shown once the
hand's end check has known every card, through every seat's eyes and face up."""

from __future__ import annotations

import io
import json
import re
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from canasta_net.canasta.position import seat_view
from canasta_net.canasta.rules import preset
from canasta_net.log import iter_records, redact_for_seat
from canasta_net.log import records as R
from canasta_net.table.local import recorded_match
from replay.cli import main
from replay.timeline import Timeline, load_timeline

CARD = re.compile(r"(?<![0-9A-Za-z])(?:10|[2-9AJQK])[CDHS](?![0-9A-Za-z])|(?<![0-9A-Za-z])JK\b")


@cache
def blind_log() -> bytes:
    buffer = io.BytesIO()
    recorded_match(preset("classic"), buffer, seed=5, deal="blind").play(max_hands=1)
    return buffer.getvalue()


@cache
def timeline() -> Timeline:
    return load_timeline(blind_log())


def seat_copy(seat: int) -> bytes:
    return b"".join(redact_for_seat(record, seat) for record in iter_records(blind_log()))


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


@cache  # of the one cached log: each seat's test asks it of every seat
def hidden_from(seat: int) -> frozenset[str]:
    """Cards another seat held at some point of the hand that ``seat``'s view never shows."""
    hidden: set[str] = set()
    visible: set[str] = set()
    for step in timeline().steps:
        if step.action:
            visible.update(CARD.findall(step.action))
        if step.state is None:
            continue
        visible.update(CARD.findall(json.dumps(seat_view(step.state, seat))))
        for other in range(step.state.players):
            if other != seat:
                hidden.update(step.state.faces_text(step.state.hands[other]))
    return frozenset(hidden - visible)


def test_every_deal_and_action_of_a_blind_hand_has_its_position() -> None:
    steps = timeline().steps
    actions = [s for s in steps if s.kind == R.ACTION]
    assert actions, "the hand has actions"
    assert all(s.state is not None and not s.pending for s in actions)
    deal = next(s for s in steps if s.kind == R.DEAL)
    assert deal.state is not None and deal.state.turn_no == 0
    end = next(s for s in steps if s.kind == R.HAND_END)
    assert end.state is not None and end.state.is_over
    # each action's position follows from the one before it by that very action
    for step in actions:
        assert step.before is not None and step.action is not None
        replayed = step.before.copy()
        replayed.apply(timeline().game.parse_action(step.action), step.author)
        assert replayed.hands == step.state.hands and replayed.pile == step.state.pile


def test_the_timeline_says_nothing_false_about_the_seeds(tmp_path: Path) -> None:
    path = tmp_path / "blind.cnlog"
    path.write_bytes(blind_log())
    middle = next(s for s in timeline().steps if s.kind == R.ACTION and s.state.turn_no > 3)
    for view in ("--all", "--public", "--seat=2"):
        result = run("show", str(path), "--at", str(middle.record), view)
        assert result.exit_code == 0, result.output
        assert "cannot show this hand" not in result.stdout
        assert "stock" in result.stdout or "pile" in result.stdout


@pytest.mark.parametrize("seat", [0, 1, 2, 3])
def test_a_seats_view_of_a_blind_log_hides_the_others_cards(seat: int) -> None:
    secret = hidden_from(seat)
    assert any(hidden_from(s) for s in range(4)), "the test needs cards that stay hidden"
    data = json.loads(host_export(seat))
    views = [s["view"] for s in data["steps"] if s["view"] is not None]
    assert len(views) >= len([s for s in timeline().steps if s.kind == R.ACTION])
    assert all(v["seat"] == seat and "hands" not in v for v in views)
    assert not set(CARD.findall(json.dumps(data))) & secret
    own = [s.state.faces_text(s.state.hands[seat]) for s in timeline().steps if s.state]
    assert [sorted(v["hand"]) for v in views] == [sorted(h) for h in own]
    assert set(CARD.findall(face_up_export())) >= secret  # the face-up view does show them


@cache  # the same for every seat's test: exported once
def face_up_export() -> str:
    return host_export(None)


@cache  # a seat's view of the host's copy: its own test and the seat-copy test read it
def host_export(seat: int | None) -> str:
    """The JSON export of the host's copy of the blind log, as ``seat`` sees it (None: face up)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "blind.cnlog"
        path.write_bytes(blind_log())
        as_seat = () if seat is None else ("--seat", str(seat))
        result = run("export", str(path), "--format", "json", *as_seat)
        assert result.exit_code == 0, result.output
        return str(result.stdout)


def test_a_seats_copy_of_a_blind_log_shows_what_the_host_copy_shows(tmp_path: Path) -> None:
    own = tmp_path / "seat1.cnlog"
    own.write_bytes(seat_copy(1))
    mine = json.loads(run("export", str(own), "--format", "json", "--seat", "1").stdout)
    hosts = json.loads(host_export(1))
    assert [s["view"] for s in mine["steps"]] == [s["view"] for s in hosts["steps"]]
    assert any(s["view"] for s in mine["steps"])
