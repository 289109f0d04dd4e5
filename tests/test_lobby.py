"""The seat lifecycle machine (table/lobby.py): every transition, and the illegal ones."""

from __future__ import annotations

import pytest

from canasta_net.table.lobby import STAND_IN_SUFFIX, LifecycleError, SeatLife, SeatState

KEY = b"k" * 32


def seated() -> SeatLife:
    life = SeatLife(1, "player")
    life.take(KEY, "ada")
    return life


def test_a_seat_is_taken_and_released_before_the_match() -> None:
    life = SeatLife(1, "player")
    assert life.state is SeatState.OPEN and not life.taken
    life.take(KEY, "ada")
    assert life.state is SeatState.SEATED and life.owner == KEY and life.name == "ada"
    with pytest.raises(LifecycleError):
        life.take(b"x" * 32, "eve")  # a taken seat is not taken again
    life.release()
    assert life.state is SeatState.OPEN and life.owner is None and life.name == ""


def test_a_player_who_leaves_is_held_and_told_about() -> None:
    life = seated()
    life.leave("quit", now=100.0, hold=60.0)
    assert life.state is SeatState.AWAY
    summary = life.summary(connected=False, now=130.5)
    assert summary["left"] == "quit" and summary["stand_in_in"] == 30
    assert life.come_back() is False
    assert life.state is SeatState.SEATED and "left" not in life.summary(True, 131.0)


def test_a_stand_in_takes_the_seat_and_the_player_reclaims_it() -> None:
    life = seated()
    life.leave("connection lost", now=0.0, hold=60.0)
    assert life.expire(holds_secret=False) == "stand-in"
    assert life.state is SeatState.STAND_IN and life.stand_ins == 1
    assert life.name == "ada" + STAND_IN_SUFFIX and life.played_by_host
    assert life.come_back() is True  # a stand-in holds the seat until it can hand it back
    assert life.state is SeatState.RECLAIMING and life.played_by_host
    life.leave("connection lost", now=5.0, hold=60.0)  # gone again before the reclaim
    assert life.state is SeatState.STAND_IN and life.held_until is None
    life.come_back()
    life.reclaimed()
    assert life.state is SeatState.SEATED and life.name == "ada" and not life.played_by_host
    life.leave("quit", now=10.0, hold=60.0)
    assert life.expire(holds_secret=False) == "stand-in" and life.stand_ins == 2


def test_a_player_who_left_holding_a_secret_forfeits() -> None:
    life = seated()
    life.leave("connection lost", now=0.0, hold=60.0)
    assert life.expire(holds_secret=True) == "forfeit"
    assert life.state is SeatState.LEFT
    assert life.come_back() is False and life.state is SeatState.LEFT


@pytest.mark.parametrize(
    "transition",
    [
        lambda life: life.release(),
        lambda life: life.reclaimed(),
        lambda life: life.expire(holds_secret=False),
    ],
)
def test_illegal_transitions_raise(transition: object) -> None:
    life = SeatLife(2, "player")
    with pytest.raises(LifecycleError):
        transition(life)  # type: ignore[operator]
    life.take(KEY, "ada")
    if transition is not None:
        with pytest.raises(LifecycleError):
            life.reclaimed()
        with pytest.raises(LifecycleError):
            life.expire(holds_secret=False)  # not away: nothing to expire


def test_a_resumed_host_finds_a_stand_in_in_the_seat() -> None:
    life = seated()
    life.resumed_with_stand_in(3)
    assert life.state is SeatState.STAND_IN and life.stand_ins == 3 and life.left
