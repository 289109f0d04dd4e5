"""A blind-v2 seat's part of a hand worked out before the hand begins (``BlindSeat.work_before``,
``stages.work_before``): its secrets, its proofs' starts and seat 0's whole first stage, taken up
by the hand it was made for, with the seed it was made with, and by no other."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from test_table_protocol import HOST, Harness, _eager, _stages_sent, config, stopped, turn_for

from canasta_net.canasta.rules import preset
from canasta_net.deal.blind.hand import BlindHand
from canasta_net.deal.blind.proofs import stages as proof_stages
from canasta_net.games import game_for
from canasta_net.hand.protocol import HandContext
from canasta_net.log import iter_records
from canasta_net.log import records as R
from canasta_net.table import blind_seat
from canasta_net.table.blind_seat import BlindSeat

TABLE = bytes(range(16))


class Keeper:
    """A seed keeper holding what it is given (and what a test puts in it beforehand)."""

    def __init__(self) -> None:
        self.seeds: dict[int, bytes] = {}

    def put(self, hand: int, seed: bytes) -> None:
        self.seeds[hand] = seed

    def get(self, hand: int) -> bytes | None:
        return self.seeds.get(hand)

    def forget(self, hand: int) -> None:
        self.seeds.pop(hand, None)


def _seat(seat: int = 1, keeper: Keeper | None = None) -> BlindSeat:
    game = game_for("classic-2p")
    keys = [HOST.public_key, HOST.public_key]
    return BlindSeat(
        HOST,
        seat,
        game,
        TABLE,
        lambda: HandContext(0, [50, 50], keys),
        random.Random(seat).randbytes,
        seed_keeper=keeper,
        version=2,
    )


def _runner(made: list[Any]) -> Callable[[Callable[[], Any]], Callable[[], Any]]:
    def run(work: Callable[[], Any]) -> Callable[[], Any]:
        result = work()
        made.append(result)
        return lambda: result

    return run


def test_the_hand_takes_up_the_work_made_for_it_and_announces_its_seed() -> None:
    made: list[Any] = []
    seat = _seat()
    seat.work_before(0, _runner(made))
    (work,) = made
    assert isinstance(work, proof_stages.WorkBefore)
    answer = seat.answer(0, "announce")
    assert answer is not None and seat.hand is not None
    # the hand's secrets are the work's very ones, and the seed announced is the work's
    assert seat.hand.secrets2 is work.secrets
    assert seat.hand.secrets is not None and seat.hand.secrets.seed == work.seed
    keys = work.secrets.public_keys()  # (the work's secrets hold their public keys)
    assert answer[1]["keys"] == keys.encode()
    # its proofs' starts were taken (none is begun again while the seat waits)
    assert "start1" in seat.hand._prepared and "start2" in seat.hand._prepared
    started = seat.hand._prepared["start1"]
    seat.hand.prepare()
    assert seat.hand._prepared["start1"] is started


def test_work_for_a_later_hand_waits_for_it_and_work_for_a_skipped_hand_is_dropped() -> None:
    made: list[Any] = []
    seat = _seat()
    seat.work_before(1, _runner(made))
    seat.answer(0, "announce")  # hand 0 first: the work is hand 1's, and kept for it
    assert seat.hand is not None and seat.hand.secrets2 is not made[0].secrets
    seat.answer(1, "announce")
    assert seat.hand.hand_no == 1 and seat.hand.secrets2 is made[0].secrets
    # work for hand 2, then hand 3 begins (a stand-in played hand 2): never announced for 3
    seat.work_before(2, _runner(made))
    seat.answer(3, "announce")
    assert seat.hand.hand_no == 3 and seat.hand.secrets is not None
    assert seat.hand.secrets.seed != made[1].seed and seat.hand.secrets2 is not made[1].secrets
    seat.answer(2, "announce")  # (never, at a real table) and nothing is left of it
    assert seat.hand.secrets is not None and seat.hand.secrets.seed != made[1].seed


def test_a_seed_read_back_from_the_keeper_is_never_paired_with_the_work() -> None:
    """A restarted seat whose keeper holds a seed for the hand: its hand is rebuilt from that seed
    (to follow the log), so the work, made with another seed, is not taken; and the seed the seat
    then announces is a fresh one, never the work's, which is dropped."""
    keeper = Keeper()
    keeper.put(0, bytes(32))
    made: list[Any] = []
    seat = _seat(keeper=keeper)
    seat.work_before(0, _runner(made))
    seat.answer(0, "announce")
    assert seat.hand is not None and seat.hand.secrets is not None
    assert seat.hand.secrets2 is not made[0].secrets
    assert seat.hand.secrets.seed not in (bytes(32), made[0].seed)
    assert keeper.seeds[0] == seat.hand.secrets.seed


def test_work_that_failed_leaves_the_hand_to_do_it_itself() -> None:
    def failing(work: Callable[[], Any]) -> Callable[[], Any]:
        def result() -> Any:
            raise RuntimeError("the thread died")

        return result

    seat = _seat()
    seat.work_before(0, failing)
    answer = seat.answer(0, "announce")
    assert answer is not None and seat.hand is not None and seat.hand.secrets2 is not None


def test_work_made_for_other_inputs_does_not_fit_the_hand() -> None:
    """The hand checks the work against its own table, number, seat, seed and deck size."""
    rules = preset("classic-2p")
    labels = tuple(BlindHand(rules, TABLE, 0, 0, [50, 50], [b"k", b"k"], version=2).labels)
    work = proof_stages.work_before(TABLE, 0, 1, bytes(32), labels)
    assert work.fits(TABLE, 0, 1, bytes(32), len(labels))
    for other in (
        (bytes(16), 0, 1, bytes(32), len(labels)),
        (TABLE, 1, 1, bytes(32), len(labels)),
        (TABLE, 0, 0, bytes(32), len(labels)),
        (TABLE, 0, 1, bytes(31) + b"\x01", len(labels)),
        (TABLE, 0, 1, bytes(32), len(labels) + 1),
    ):
        assert not work.fits(*other)


def test_the_host_works_out_its_seat_0s_first_stage_before_anyone_sits_down() -> None:
    """A new blind-v2 table: the seat the host plays begins its part of the first hand as the
    host starts (seat 0's stage 1 on the initial deck among it), and its agent, made when the
    match starts, takes it up: seat 0 computes no stage 1 during the deal."""
    at_host: list[str] = []
    cfg = config(deal="blind-v2", rules=preset("classic-2p").with_changes(target=1500), players=2)
    h = Harness(cfg, background=_eager(at_host))
    assert at_host == ["work_before"]  # before any seat joined
    alice = h.remote("alice", connect=False)
    started: list[str] = []
    alice.session.background = _eager(started)
    alice.connect()
    stopped(h.run(turn_for("act")))
    assert at_host == ["work_before", "stage2"]
    assert started == ["work_before", "stage1", "stage2"]
    assert _stages_sent(alice) == [1, 2]
    assert any(r.kind == R.DEAL for r in iter_records(h.log_bytes()))


def test_each_next_hand_is_begun_when_the_one_before_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After each hand (at the checkpoint, while the seats sign), every blind-v2 seat begins its
    part of the next: the host's seats and a remote one alike, and the next hand takes it up."""
    taken: list[tuple[int | None, int]] = []
    honest = BlindHand._take_before

    def take(self: BlindHand, before: Any, secrets: Any) -> None:
        honest(self, before, secrets)
        if self.secrets2 is before.secrets:
            taken.append((self.viewer, self.hand_no))

    monkeypatch.setattr(BlindHand, "_take_before", take)
    at_host: list[str] = []
    cfg = config(deal="blind-v2", rules=preset("classic-2p"), players=2, max_hands=2)
    h = Harness(cfg, background=_eager(at_host))
    alice = h.remote("alice", connect=False)
    started: list[str] = []
    alice.session.background = _eager(started)
    alice.connect()
    h.run_to_end()
    assert started.count("work_before") == 2 and at_host.count("work_before") == 2
    assert sorted(taken) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert h.table.match.hands_played == 2
    # the leftover: nothing was begun for a third hand the table will not deal
    assert not blind_seat._begun
