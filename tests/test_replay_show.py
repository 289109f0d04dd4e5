"""canasta-replay show: stepping through a game, and never showing a seat another seat's cards."""

from __future__ import annotations

import io
import json
import re
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
from replay.locate import locate
from replay.render import render_step
from replay.stepper import Stepper
from replay.timeline import Timeline, load_timeline
from replay.views import ALL, PUBLIC, SEAT, Perspective

SEED = 11
CARD = re.compile(r"(?<![0-9A-Za-z])(?:10|[2-9AJQK])[CDHS](?![0-9A-Za-z])|(?<![0-9A-Za-z])JK\b")


@cache
def host_log(hands: int | None = 1) -> bytes:
    buffer = io.BytesIO()
    recorded_match(preset("classic"), buffer, seed=SEED).play(max_hands=hands)
    return buffer.getvalue()


@cache
def timeline() -> Timeline:
    return load_timeline(host_log())


def seat_copy(data: bytes, seat: int) -> bytes:
    return b"".join(redact_for_seat(record, seat) for record in iter_records(data))


def secret_cards(seat: int | None) -> set[str]:
    """Cards other seats held in hand 0 that ``seat`` (None: a spectator) never sees in it."""
    hidden: set[str] = set()
    visible: set[str] = set()
    for step in timeline().steps:
        if step.action:
            visible.update(CARD.findall(step.action))
        state = step.state
        if state is None:
            continue
        view = seat_view(state, 0 if seat is None else seat)
        if seat is None:
            del view["hand"]
        visible.update(CARD.findall(json.dumps(view)))
        for other in range(state.players):
            if other != seat:
                hidden.update(state.faces_text(state.hands[other]))
    return hidden - visible


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


@pytest.fixture()
def log_path(tmp_path: Path) -> str:
    path = tmp_path / "game.cnlog"
    path.write_bytes(host_log())
    return str(path)


# --------------------------------------------------------------------------- the stepper


def test_the_stepper_moves_without_a_terminal() -> None:
    stepper = Stepper(timeline(), Perspective(PUBLIC))
    assert stepper.position == 0 and "The table opens" in stepper.render()
    stepper.execute("n")
    assert stepper.position == 1
    stepper.execute("")  # an empty line steps forward too
    stepper.execute("next 5")
    assert stepper.position == 7
    stepper.execute("p 2")
    assert stepper.position == 5
    stepper.execute("prev 100")
    assert stepper.position == 0
    stepper.execute("end")
    assert stepper.position == timeline().last_record
    stepper.execute("n")
    assert stepper.position == timeline().last_record  # stays at the end
    stepper.execute("home")
    assert stepper.position == 0
    deal = timeline().hands[0].deal_record
    assert deal is not None
    stepper.execute("h 1")  # hands count from 1: the first hand
    assert stepper.position == deal
    reply = stepper.execute("t 5")  # turns too: the engine's turn_no 4
    assert timeline().steps[stepper.position].turn == 4
    assert timeline().steps[stepper.position - 1].turn == 3
    assert "hand 1, turn 5" in reply.text
    stepper.execute("j 40")
    assert stepper.position == 40
    stepper.execute("jump hand:1/turn:1")  # the first turn begins after the deal
    assert stepper.position == deal
    stepper.execute("jump hand:1/turn:3")
    assert timeline().steps[stepper.position].turn == 2
    assert stepper.execute("q").quit
    assert "Commands" in stepper.execute("?").text


def test_the_stepper_explains_bad_commands_and_stays_put() -> None:
    stepper = Stepper(timeline(), Perspective(PUBLIC), start=30)
    for command, words in [
        ("j 99999", "There is no record 99999"),
        ("h 7", "Hand 7 was never dealt in this log (it has only hand 1)"),
        ("h 0", "Hands count from 1: the first is hand:1."),
        ("t 0", "Turns count from 1: the first is hand:1/turn:1."),
        ("t 9999", "Hand 1 has no turn 9999 (its turns are 1 to "),
        ("j somewhere", "is not a position"),
        ("x", "Unknown command"),
        ("n lots", "is not a number"),
    ]:
        reply = stepper.execute(command)
        assert words in reply.text and not reply.quit
        assert stepper.position == 30
    stepper.execute("home")
    assert "No hand is being played here" in stepper.execute("t 2").text


def test_each_action_says_who_did_what() -> None:
    stepper = Stepper(timeline(), Perspective(ALL))
    for step in timeline().steps:
        if step.kind == R.ACTION:
            stepper.execute(f"j {step.record}")
            text = stepper.render()
            name = timeline().header.seats[step.author or 0].name
            assert f"Seat {step.author} ({name}): {step.action}" in text
            break
    draws = [s for s in timeline().steps if s.action == "draw" and s.author == 1]
    seat_view_text = render_step(timeline(), draws[0], Perspective(SEAT, 1))
    assert re.search(r"\(drew [0-9AJQK]+[CDHS]", seat_view_text)
    other_view_text = render_step(timeline(), draws[0], Perspective(SEAT, 2))
    assert "(drew a card" in other_view_text


# --------------------------------------------------------------------------- hidden cards


@pytest.mark.parametrize("seat", [0, 1, 2, 3, None])
def test_a_view_never_shows_another_seats_hidden_cards(seat: int | None) -> None:
    secret = secret_cards(seat)
    assert secret, "the test needs cards that stay hidden"
    perspective = Perspective(PUBLIC) if seat is None else Perspective(SEAT, seat)
    for step in timeline().steps:
        shown = set(CARD.findall(render_step(timeline(), step, perspective)))
        assert not shown & secret, (step.record, shown & secret)


def test_the_face_up_view_does_show_them() -> None:
    secret = secret_cards(0)
    last = timeline().steps[timeline().hands[0].deal_record or 0]
    shown = set(CARD.findall(render_step(timeline(), last, Perspective(ALL))))
    assert shown & secret


def test_show_seat_on_a_host_log_hides_the_others(log_path: str) -> None:
    secret = secret_cards(3)
    for record in range(10, 40, 3):
        result = run("show", log_path, "--seat", "3", "--at", str(record))
        assert result.exit_code == 0, result.output
        assert "seat 3 (bot-3)'s view" in result.stdout
        assert not set(CARD.findall(result.stdout)) & secret


# --------------------------------------------------------------------------- the command


def test_show_at_positions(log_path: str) -> None:
    result = run("show", log_path, "--at", "hand:1/turn:4", "--all")
    assert result.exit_code == 0
    assert "hand 1, turn 4" in result.stdout and "stock, next card last:" in result.stdout
    assert timeline().steps[locate(timeline(), "hand:1/turn:4")].turn == 3  # the engine's number
    deal = run("show", log_path, "--at", "hand:1", "--public")  # the first hand
    assert f"Record {timeline().hands[0].deal_record} of" in deal.stdout
    assert "· hand 1, turn 1 ·" in deal.stdout
    assert "Hand 1 is dealt" in deal.stdout and "(you)" not in deal.stdout


def test_show_refuses_positions_it_cannot_find(log_path: str) -> None:
    result = run("show", log_path, "--at", "hand:2")
    assert result.exit_code == 2 and "Hand 2 was never dealt" in result.stderr
    result = run("show", log_path, "--at", "hand:0")
    assert result.exit_code == 2 and "Hands count from 1: the first is hand:1." in result.stderr
    result = run("show", log_path, "--at", "turn 5")
    assert result.exit_code == 2 and "is not a position" in result.stderr
    result = run("show", log_path, "--seat", "7", "--at", "3")
    assert result.exit_code == 2
    result = run("show", log_path, "--seat", "1", "--public", "--at", "3")
    assert result.exit_code == 2 and "Choose one of" in result.output


def test_without_a_terminal_show_prints_the_last_position(log_path: str) -> None:
    result = run("show", log_path)
    assert result.exit_code == 0
    assert f"Record {timeline().last_record} of {timeline().last_record}" in result.stdout


def test_a_seats_copy_is_shown_through_its_eyes(tmp_path: Path) -> None:
    path = tmp_path / "seat2.cnlog"
    path.write_bytes(seat_copy(host_log(), 2))
    result = run("show", str(path), "--at", "40")
    assert result.exit_code == 0 and "seat 2 (bot-2)'s view" in result.stdout
    assert "(you)" in result.stdout


def test_a_seats_copy_of_an_unfinished_hand_cannot_be_shown(tmp_path: Path) -> None:
    records = list(iter_records(host_log()))
    hand_end = next(r.index for r in records if r.kind == R.HAND_END)
    cut = records[hand_end - 2].offset  # mid-hand: the seeds are not published yet
    path = tmp_path / "seat1.cnlog"
    path.write_bytes(seat_copy(host_log()[:cut], 1))
    result = run("show", str(path), "--at", str(hand_end - 4))
    assert result.exit_code == 0
    assert "cannot show this hand" in result.stdout
    assert run("show", str(path), "--at", "hand:1/turn:2").exit_code == 2


def test_a_bad_log_is_shown_up_to_its_failure(tmp_path: Path) -> None:
    records = [host_log()[r.offset : r.offset + r.size] for r in iter_records(host_log())]
    del records[50]
    path = tmp_path / "bad.cnlog"
    path.write_bytes(b"".join(records))
    result = run("show", str(path), "--at", "49")
    assert result.exit_code == 0
    assert "the log fails at record 50 [bad-seq]" in result.stderr
    assert "There is no record 60" in run("show", str(path), "--at", "60").stderr
    garbage = tmp_path / "garbage.cnlog"
    garbage.write_bytes(b"\x00" * 100)
    result = run("show", str(garbage))
    assert result.exit_code == 2 and "not a canasta-net log" in result.stderr
