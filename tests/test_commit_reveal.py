"""The commit-reveal protocol state: what is accepted when, who is blamed, what never happens."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from canasta_net.deal import commit_reveal
from canasta_net.deal.commit_reveal import (
    AlreadyRevealed,
    BadCommitmentSize,
    BadDealParameters,
    DealError,
    DealPhase,
    DealRound,
    DuplicateCommitment,
    HandNumberReused,
    HandNumbers,
    RevealMismatch,
    SeatSecret,
    SeedSize,
    UnknownSeat,
    WrongPhase,
    verify_deal,
)
from canasta_net.deal.shuffle import derive_deck

TABLE = b"\x01" * 16
HAND = 12
SEATS = 4


def fake_random(label: bytes) -> Callable[[int], bytes]:
    """A deterministic stand-in for os.urandom: distinct bytes on every call."""
    counter = itertools.count()

    def random_bytes(size: int) -> bytes:
        return hashlib.shake_256(label + next(counter).to_bytes(8, "big")).digest(size)

    return random_bytes


def secrets_for(hand_no: int = HAND, seats: int = SEATS) -> list[SeatSecret]:
    random_bytes = fake_random(b"secrets")
    return [SeatSecret.create(TABLE, hand_no, seat, random_bytes) for seat in range(seats)]


def committed_round(secrets: list[SeatSecret]) -> DealRound:
    deal_round = DealRound(TABLE, HAND, len(secrets))
    for secret in secrets:
        deal_round.add_commitment(secret.seat, secret.commitment)
    return deal_round


def phase(deal_round: DealRound) -> DealPhase:
    """The round's phase, read through a call so that mypy does not assume it never changes."""
    return deal_round.phase


def snapshot(deal_round: DealRound) -> tuple[Any, ...]:
    """Everything observable about a round, to check that a refused input changed nothing."""
    return (
        deal_round.phase,
        deal_round.missing_commitments(),
        deal_round.missing_reveals(),
        deal_round.forfeited_seats,
        deal_round.commitment_list() if deal_round.commitments_complete else None,
        repr(deal_round),
    )


def test_error_codes_are_stable_and_distinct() -> None:
    classes = [
        value
        for value in vars(commit_reveal).values()
        if isinstance(value, type) and issubclass(value, DealError)
    ]
    codes = {cls.code for cls in classes}
    assert len(codes) == len(classes)
    assert {
        "wrong-phase",
        "unknown-seat",
        "duplicate-commitment",
        "bad-commitment-size",
        "reveal-mismatch",
        "seed-size",
        "hand-number-reused",
        "already-revealed",
        "bad-parameters",
    } <= codes
    assert all(issubclass(cls, ValueError) for cls in classes)


def test_seat_secret_draws_from_the_injected_source() -> None:
    calls: list[int] = []

    def random_bytes(size: int) -> bytes:
        calls.append(size)
        return b"\x07" * size

    secret = SeatSecret.create(TABLE, HAND, 2, random_bytes)
    assert calls == [32]
    assert secret.seed == b"\x07" * 32
    assert len(secret.commitment) == 32
    assert "07070707" not in repr(secret)
    assert secret.is_published_in([b"x" * 32, b"y" * 32, secret.commitment])
    assert not secret.is_published_in([secret.commitment, b"y" * 32, b"z" * 32])
    assert not secret.is_published_in([secret.commitment])


def test_seat_secret_refuses_a_short_seed() -> None:
    with pytest.raises(SeedSize) as caught:
        SeatSecret.create(TABLE, HAND, 1, lambda size: b"\x00" * (size - 1))
    assert caught.value.code == "seed-size"
    assert caught.value.seat == 1


def test_a_complete_deal() -> None:
    secrets = secrets_for()
    deal_round = DealRound(TABLE, HAND, SEATS)
    assert phase(deal_round) is DealPhase.COLLECTING_COMMITMENTS
    for secret in reversed(secrets):  # arrival order does not matter
        assert not deal_round.commitments_complete
        deal_round.add_commitment(secret.seat, secret.commitment)
    assert deal_round.commitments_complete
    assert phase(deal_round) is DealPhase.COMMITTED
    published = deal_round.commitment_list()
    assert published == [secret.commitment for secret in secrets]
    assert all(secret.is_published_in(published) for secret in secrets)

    deal_round.add_reveal(2, secrets[2].seed)
    assert phase(deal_round) is DealPhase.COLLECTING_REVEALS
    assert deal_round.missing_reveals() == [0, 1, 3]
    for seat in (0, 3, 1):
        deal_round.add_reveal(seat, secrets[seat].seed)
    assert phase(deal_round) is DealPhase.DEALT
    assert deal_round.missing_reveals() == []

    seeds = [secret.seed for secret in secrets]
    assert deal_round.seed_list() == seeds
    deck = deal_round.deck(108)
    assert deck == derive_deck(TABLE, HAND, seeds, 108)
    assert sorted(deck) == list(range(108))
    assert verify_deal(TABLE, HAND, published, seeds, 108) == deck
    assert sorted(deal_round.deck(162)) == list(range(162))


def test_no_reveal_before_every_commitment_is_fixed() -> None:
    secrets = secrets_for()
    deal_round = DealRound(TABLE, HAND, SEATS)
    for secret in secrets[:3]:
        deal_round.add_commitment(secret.seat, secret.commitment)
    before = snapshot(deal_round)
    with pytest.raises(WrongPhase) as caught:
        deal_round.add_reveal(0, secrets[0].seed)
    assert caught.value.code == "wrong-phase"
    assert "commitment" in str(caught.value)
    assert snapshot(deal_round) == before
    with pytest.raises(WrongPhase):
        deal_round.commitment_list()
    with pytest.raises(WrongPhase):
        deal_round.deck(108)


def test_a_wrong_reveal_is_blamed_on_its_seat() -> None:
    secrets = secrets_for()
    deal_round = committed_round(secrets)
    deal_round.add_reveal(0, secrets[0].seed)
    before = snapshot(deal_round)
    with pytest.raises(RevealMismatch) as caught:
        deal_round.add_reveal(2, secrets[3].seed)  # seat 3's seed, sent as seat 2's
    assert caught.value.code == "reveal-mismatch"
    assert caught.value.seat == 2
    assert "seat 2" in str(caught.value)
    assert snapshot(deal_round) == before
    with pytest.raises(RevealMismatch):
        deal_round.add_reveal(2, bytes(32))
    assert snapshot(deal_round) == before
    deal_round.add_reveal(2, secrets[2].seed)  # the right seed is still accepted
    assert deal_round.missing_reveals() == [1, 3]


def test_a_commitment_from_another_hand_does_not_match() -> None:
    secrets = secrets_for()
    replayed = SeatSecret(TABLE, HAND - 1, 1, secrets[1].seed)  # same seed, earlier hand
    deal_round = DealRound(TABLE, HAND, SEATS)
    for secret in secrets:
        commitment = replayed.commitment if secret.seat == 1 else secret.commitment
        deal_round.add_commitment(secret.seat, commitment)
    with pytest.raises(RevealMismatch) as caught:
        deal_round.add_reveal(1, secrets[1].seed)
    assert caught.value.seat == 1


def test_duplicate_commitment_is_refused_and_the_first_stands() -> None:
    secrets = secrets_for()
    deal_round = DealRound(TABLE, HAND, SEATS)
    deal_round.add_commitment(1, secrets[1].commitment)
    before = snapshot(deal_round)
    with pytest.raises(DuplicateCommitment) as caught:
        deal_round.add_commitment(1, secrets[2].commitment)
    assert caught.value.code == "duplicate-commitment"
    assert caught.value.seat == 1
    assert snapshot(deal_round) == before
    for secret in secrets:
        if secret.seat != 1:
            deal_round.add_commitment(secret.seat, secret.commitment)
    assert deal_round.commitment_list()[1] == secrets[1].commitment
    with pytest.raises(DuplicateCommitment):
        deal_round.add_commitment(3, secrets[3].commitment)


def test_malformed_inputs_are_refused() -> None:
    secrets = secrets_for()
    deal_round = DealRound(TABLE, HAND, SEATS)
    with pytest.raises(BadCommitmentSize) as size_error:
        deal_round.add_commitment(0, b"\x00" * 31)
    assert size_error.value.code == "bad-commitment-size"
    with pytest.raises(UnknownSeat) as seat_error:
        deal_round.add_commitment(4, secrets[0].commitment)
    assert seat_error.value.code == "unknown-seat"
    with pytest.raises(UnknownSeat):
        deal_round.add_commitment(-1, secrets[0].commitment)
    assert deal_round.missing_commitments() == [0, 1, 2, 3]

    deal_round = committed_round(secrets)
    with pytest.raises(SeedSize):
        deal_round.add_reveal(0, secrets[0].seed + b"\x00")
    with pytest.raises(UnknownSeat):
        deal_round.add_reveal(7, secrets[0].seed)
    assert phase(deal_round) is DealPhase.COMMITTED


def test_a_seed_is_revealed_once() -> None:
    secrets = secrets_for()
    deal_round = committed_round(secrets)
    deal_round.add_reveal(0, secrets[0].seed)
    with pytest.raises(AlreadyRevealed) as caught:
        deal_round.add_reveal(0, secrets[0].seed)
    assert caught.value.code == "already-revealed"


def test_a_withheld_seed_forfeits_and_deals_nothing() -> None:
    secrets = secrets_for()
    deal_round = committed_round(secrets)
    for seat in (0, 2):
        deal_round.add_reveal(seat, secrets[seat].seed)
    with pytest.raises(AlreadyRevealed):
        deal_round.forfeit(0)  # seat 0 did reveal: it cannot be blamed
    deal_round.forfeit(3)
    assert phase(deal_round) is DealPhase.FORFEITED
    assert list(deal_round.forfeited_seats) == [3]
    for seat in deal_round.missing_reveals():
        deal_round.forfeit(seat)
    assert deal_round.forfeited_seats == (1, 3)
    before = snapshot(deal_round)
    with pytest.raises(WrongPhase) as caught:
        deal_round.deck(108)
    # the hand named as people count it: the log's (and the commitments') number plus one
    assert f"the deal of hand {HAND + 1} was forfeited by seats 1, 3" in str(caught.value)
    with pytest.raises(WrongPhase):
        deal_round.add_reveal(3, secrets[3].seed)  # too late: no deal for this hand
    with pytest.raises(WrongPhase):
        deal_round.seed_list()
    with pytest.raises(WrongPhase):
        deal_round.deck_seed()
    assert snapshot(deal_round) == before


def test_a_withheld_commitment_forfeits_too() -> None:
    secrets = secrets_for()
    deal_round = DealRound(TABLE, HAND, SEATS)
    deal_round.add_commitment(0, secrets[0].commitment)
    deal_round.forfeit(1)
    assert phase(deal_round) is DealPhase.FORFEITED
    with pytest.raises(WrongPhase):
        deal_round.add_commitment(2, secrets[2].commitment)


def test_hand_numbers_are_never_reused() -> None:
    hands = HandNumbers(TABLE)
    first = hands.start_round(1, SEATS)
    first.forfeit(2)
    with pytest.raises(HandNumberReused) as caught:
        hands.start_round(1, SEATS)  # not even after a forfeit
    assert caught.value.code == "hand-number-reused"
    assert caught.value.hand_no == 1
    assert str(caught.value) == "hand 2 has already been dealt at this table"  # counted from 1
    second = hands.start_round(2, SEATS)
    assert (second.table_id, second.hand_no, second.seats) == (TABLE, 2, SEATS)
    assert hands.used == {1, 2}


def test_hand_numbers_resume_from_a_log() -> None:
    hands = HandNumbers(TABLE, used=[1, 2, 3])
    assert hands.is_used(2)
    with pytest.raises(HandNumberReused):
        hands.start_round(3, SEATS)
    hands.start_round(4, SEATS)


def test_refused_parameters_do_not_use_a_hand_number() -> None:
    hands = HandNumbers(TABLE)
    with pytest.raises(BadDealParameters):
        hands.start_round(5, 0)
    with pytest.raises(BadDealParameters):
        hands.start_round(-1, SEATS)
    assert not hands.is_used(5)
    hands.start_round(5, SEATS)


def test_verify_deal_catches_a_swapped_seed() -> None:
    secrets = secrets_for()
    commitments = [secret.commitment for secret in secrets]
    seeds = [secret.seed for secret in secrets]
    assert verify_deal(TABLE, HAND, commitments, seeds, 108) == derive_deck(TABLE, HAND, seeds, 108)
    swapped = [seeds[0], seeds[2], seeds[1], seeds[3]]
    with pytest.raises(RevealMismatch) as caught:
        verify_deal(TABLE, HAND, commitments, swapped, 108)
    assert caught.value.seat == 1  # the first bad seat in seat order
    with pytest.raises(RevealMismatch):
        verify_deal(TABLE, HAND + 1, commitments, seeds, 108)  # commitments bind the hand
    with pytest.raises(BadDealParameters):
        verify_deal(TABLE, HAND, commitments, seeds[:3], 108)
    with pytest.raises(BadDealParameters):
        verify_deal(TABLE, HAND, commitments, seeds, 0)


OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(["commit", "commit-wrong-size", "reveal", "reveal-wrong", "forfeit"]),
        st.integers(-1, SEATS),
    ),
    max_size=25,
)


@given(operations=OPERATIONS)
def test_any_refused_input_changes_nothing(operations: list[tuple[str, int]]) -> None:
    secrets = secrets_for()
    deal_round = DealRound(TABLE, HAND, SEATS)
    for kind, seat in operations:
        real = secrets[seat] if 0 <= seat < SEATS else secrets[0]
        before = snapshot(deal_round)
        try:
            if kind == "commit":
                deal_round.add_commitment(seat, real.commitment)
            elif kind == "commit-wrong-size":
                deal_round.add_commitment(seat, real.commitment[:-1])
            elif kind == "reveal":
                deal_round.add_reveal(seat, real.seed)
            elif kind == "reveal-wrong":
                deal_round.add_reveal(seat, hashlib.sha256(real.seed).digest())
            else:
                deal_round.forfeit(seat)
        except DealError:
            assert snapshot(deal_round) == before
        if deal_round.phase is DealPhase.DEALT:
            assert deal_round.forfeited_seats == ()
            assert deal_round.deck(108) == derive_deck(
                TABLE, HAND, [secret.seed for secret in secrets], 108
            )
        if deal_round.forfeited_seats:
            assert phase(deal_round) is DealPhase.FORFEITED
