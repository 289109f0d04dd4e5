"""Blind deal, the hand-end audit: replay every stage from the seeds and name whoever deviated."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pytest

from canasta_net.deal.blind import (
    ANNOUNCE_SIGNATURE_KIND,
    BadParameters,
    CardIndex,
    RevealMismatch,
    SealedKeyError,
    SeatSecrets,
    StageMismatch,
    WrongPublishedKey,
    attribute_failed_open,
    audit_key_message,
    card_labels,
    check_open,
    check_reveal,
    commitment,
    deal_schedule,
    decode_final_deck,
    initial_deck,
    make_key_message,
    replay_deal,
    replay_deal_ids,
    stage1,
    stage2,
)
from canasta_net.deal.blind.local import run_local_deal
from canasta_net.identity import Identity, verify

TABLE = b"audit-table"
HAND = 11
SMALL = [f"card-{i}" for i in range(8)]


def seeds_for(seats: int) -> list[bytes]:
    return [bytes([0x21 * (seat + 1)]) * 32 for seat in range(seats)]


def identities_for(seats: int) -> list[Identity]:
    return [Identity.from_seed(b"audit-seat-%d" % seat) for seat in range(seats)]


def small_deal(
    seeds: Sequence[bytes], cheats: dict[tuple[int, int], SeatSecrets] | None = None
) -> tuple[list[SeatSecrets], list[list[bytes]]]:
    """The 2·S stage outputs of a small deal, some seats using other secrets at some stage."""
    cheats = cheats or {}
    seats = len(seeds)
    secrets = [SeatSecrets.derive(TABLE, HAND, s, seed, len(SMALL)) for s, seed in enumerate(seeds)]
    outputs: list[list[bytes]] = []
    incoming = initial_deck(SMALL)
    for stage, function in ((1, stage1), (2, stage2)):
        for seat in range(seats):
            incoming = function(cheats.get((stage, seat), secrets[seat]), incoming, seats)
            outputs.append(incoming)
    return secrets, outputs


def test_full_deal_replays_to_the_dealt_hands() -> None:
    labels = list(card_labels(2, 2))
    seeds = seeds_for(4)
    schedule = deal_schedule(4, 11, 0, 108)
    deal = run_local_deal(TABLE, HAND, labels, seeds, identities_for(4), schedule)
    commitments = [s.commitment for s in deal.secrets]
    by_position = replay_deal(TABLE, HAND, labels, seeds, deal.stage_decks(), commitments)
    assert sorted(by_position) == sorted(labels)
    for seat in range(4):
        assert [labels[c] for c in deal.hands[seat]] == [
            by_position[p] for p in schedule.hands[seat]
        ]
    # Opening every position through the curve agrees with the permutations.
    ids = decode_final_deck(deal.final_deck, TABLE, HAND, seeds, CardIndex(labels))
    assert [labels[c] for c in ids] == by_position
    # Every routed key message checks out once the seeds are public.
    identities = identities_for(4)
    for message in deal.key_messages[::7]:
        audit_key_message(
            message,
            seeds[message.sender],
            seeds[message.recipient],
            identities[message.sender].public_key,
        )


def test_honest_small_deal_replays() -> None:
    seeds = seeds_for(3)
    secrets, outputs = small_deal(seeds)
    ids = replay_deal_ids(TABLE, HAND, SMALL, seeds, outputs)
    order = list(range(8))
    for s in secrets:
        order = [order[i] for i in s.permutation]
    assert ids == order


@pytest.mark.parametrize("stage", [1, 2])
@pytest.mark.parametrize("seat", [0, 1, 2])
def test_first_deviating_seat_is_named(stage: int, seat: int) -> None:
    seeds = seeds_for(3)
    honest = SeatSecrets.derive(TABLE, HAND, seat, seeds[seat], len(SMALL))
    if stage == 1:  # a stacked permutation: a valid deck, but not the seed's
        cheat = dataclasses.replace(honest, permutation=tuple(range(len(SMALL))))
    else:  # a wrong key at position 4
        keys = list(honest.position_keys)
        keys[4] = 987654321
        cheat = dataclasses.replace(honest, position_keys=tuple(keys))
    _, outputs = small_deal(seeds, {(stage, seat): cheat})
    with pytest.raises(StageMismatch) as info:
        replay_deal(TABLE, HAND, SMALL, seeds, outputs)
    assert (info.value.stage, info.value.culprit) == (stage, seat)
    if stage == 2:
        assert info.value.first_position == 4


def test_a_seat_skipping_its_encryption_is_named() -> None:
    seeds = seeds_for(3)
    _, outputs = small_deal(seeds)
    outputs[1] = list(outputs[0])  # seat 1 forwards seat 0's deck untouched
    with pytest.raises(StageMismatch) as info:
        replay_deal(TABLE, HAND, SMALL, seeds, outputs)
    assert (info.value.stage, info.value.culprit, info.value.first_position) == (1, 1, 0)
    _, outputs = small_deal(seeds)
    outputs[4] = outputs[4][:-1]
    with pytest.raises(StageMismatch) as info:
        replay_deal(TABLE, HAND, SMALL, seeds, outputs)
    assert (info.value.stage, info.value.culprit, info.value.first_position) == (2, 1, None)
    with pytest.raises(BadParameters):
        replay_deal(TABLE, HAND, SMALL, seeds, outputs[:5])


def test_revealed_seeds_must_match_commitments_and_announcements() -> None:
    seeds = seeds_for(3)
    secrets, outputs = small_deal(seeds)
    commitments = [s.commitment for s in secrets]
    lying = list(seeds)
    lying[2] = bytes(32)
    with pytest.raises(RevealMismatch) as info:
        replay_deal(TABLE, HAND, SMALL, lying, outputs, commitments)
    assert info.value.culprit == 2
    check_reveal(TABLE, HAND, 1, seeds[1], commitments[1], secrets[1].x25519_public)
    with pytest.raises(RevealMismatch) as info:
        check_reveal(TABLE, HAND, 1, seeds[1], commitments[1], secrets[0].x25519_public)
    assert info.value.culprit == 1
    assert commitment(TABLE, HAND, 1, seeds[1]) != commitment(TABLE, HAND, 2, seeds[1])
    # The hand-start announcement binds commitment and X25519 key under the seat's signature.
    identity = identities_for(3)[1]
    verify(
        identity.public_key,
        ANNOUNCE_SIGNATURE_KIND,
        secrets[1].announcement(),
        identity.sign(ANNOUNCE_SIGNATURE_KIND, secrets[1].announcement()),
    )


def test_published_keys_are_checked_against_the_seed() -> None:
    seeds = seeds_for(3)
    secrets, _ = small_deal(seeds)
    check_open(TABLE, HAND, 1, seeds[1], 6, secrets[1].position_key(6))
    with pytest.raises(WrongPublishedKey) as info:
        check_open(TABLE, HAND, 1, seeds[1], 6, secrets[1].position_key(5))
    assert (info.value.culprit, info.value.position) == (1, 6)
    used = [s.position_key(6) for s in secrets]
    used[2] += 1
    assert attribute_failed_open(TABLE, HAND, 6, used, seeds) == [2]


def test_sealed_keys_are_audited() -> None:
    seeds = seeds_for(3)
    secrets, _ = small_deal(seeds)
    identities = identities_for(3)
    good = make_key_message(identities[0], secrets[0], 2, 1, secrets[1].x25519_public)
    audit_key_message(good, seeds[0], seeds[1], identities[0].public_key)
    # Seat 0 seals the wrong key (its key for another position): named at hand end.
    liar = dataclasses.replace(
        secrets[0], position_keys=(secrets[0].position_keys[3],) * len(SMALL)
    )
    wrong = make_key_message(identities[0], liar, 2, 1, secrets[1].x25519_public)
    with pytest.raises(WrongPublishedKey) as info:
        audit_key_message(wrong, seeds[0], seeds[1], identities[0].public_key)
    assert info.value.culprit == 0
    # Seat 0 signs a ciphertext that does not decrypt: named too.
    garbage = dataclasses.replace(good, ciphertext=bytes(48))
    garbage = dataclasses.replace(
        garbage, signature=identities[0].sign("blind-key", garbage.body())
    )
    with pytest.raises(SealedKeyError) as info2:
        audit_key_message(garbage, seeds[0], seeds[1], identities[0].public_key)
    assert info2.value.culprit == 0
