"""Blind deal, the protocol: a full deal opened seat by seat, and every cheat detected and named."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pytest

from canasta_net.deal.blind import (
    BadDeck,
    BadKeySignature,
    BadStageSignature,
    CardIndex,
    DuplicateCiphertext,
    InvalidCiphertext,
    KeyMessage,
    KeyRelease,
    NotACard,
    SealedKeyError,
    SeatSecrets,
    StageOutput,
    WrongCard,
    WrongDeckSize,
    card_labels,
    card_points,
    check_deck,
    deal_schedule,
    initial_deck,
    make_key_message,
    multiply,
    open_position,
    open_public,
    open_sealed,
    producer_of_input,
    receive_key_message,
    seal_key,
    stage1,
    stage2,
)
from canasta_net.deal.blind.errors import BadParameters, BadReleaseSignature
from canasta_net.deal.blind.local import LocalDeal, run_local_deal, run_stages
from canasta_net.deal.blind.points import N, P, curve_rhs, product, scalar_to_bytes
from canasta_net.identity import Identity

TABLE = b"blind-table"
HAND = 3
SMALL = [f"c{i}" for i in range(8)]


def seeds_for(seats: int, salt: int = 0) -> list[bytes]:
    return [bytes([(17 * (seat + 1) + salt) % 256]) * 32 for seat in range(seats)]


def identities_for(seats: int) -> list[Identity]:
    return [Identity.from_seed(b"seat-%d" % seat) for seat in range(seats)]


def secrets_for(seeds: Sequence[bytes], size: int) -> list[SeatSecrets]:
    return [SeatSecrets.derive(TABLE, HAND, s, seed, size) for s, seed in enumerate(seeds)]


def reference_order(secrets: Sequence[SeatSecrets]) -> list[int]:
    """The plaintext deal: stage-1 permutations composed (out[i] = in[perm[i]], seat by seat)."""
    order = list(range(secrets[0].deck_size))
    for seat_secrets in secrets:
        order = [order[i] for i in seat_secrets.permutation]
    return order


def non_curve_x() -> bytes:
    x = 1
    while pow(curve_rhs(x), (P - 1) // 2, P) == 1:
        x += 1
    return x.to_bytes(32, "big")


@pytest.fixture(scope="module")
def full_deal() -> tuple[LocalDeal, list[str]]:
    labels = list(card_labels(2, 2))
    deal = run_local_deal(
        TABLE, HAND, labels, seeds_for(4), identities_for(4), deal_schedule(4, 11, 2, 108)
    )
    return deal, labels


# ------------------------------------------------------------------------- the honest deal
def test_full_deal_every_seat_opens_its_own_hand(full_deal: tuple[LocalDeal, list[str]]) -> None:
    deal, _ = full_deal
    schedule = deal_schedule(4, 11, 2, 108)
    order = reference_order(deal.secrets)
    assert sorted(order) == list(range(108))
    for seat in range(4):
        expected = [order[position] for position in schedule.hands[seat]]
        assert deal.hands[seat] == expected
        assert len(deal.hands[seat]) == 11
    # 3 sealed keys from the other seats for each of the 44 dealt positions.
    assert len(deal.key_messages) == 4 * 11 * 3
    assert {(m.sender, m.recipient) for m in deal.key_messages} == {
        (a, b) for a in range(4) for b in range(4) if a != b
    }


def test_final_deck_is_every_position_key_on_the_card(
    full_deal: tuple[LocalDeal, list[str]],
) -> None:
    deal, labels = full_deal
    order = reference_order(deal.secrets)
    pts = card_points(labels)
    for position in (0, 43, 44, 107):
        keys = [s.position_key(position) for s in deal.secrets]
        assert deal.final_deck[position] == multiply(product(keys), pts[order[position]])
        assert open_position(deal.final_deck[position], keys) == pts[order[position]]
    # Stage 1 leaves one key for the whole deck: the product of the deck keys.
    stage1_final = deal.stage_outputs[3].deck
    deck_key = product(s.deck_key for s in deal.secrets)
    assert stage1_final[5] == multiply(deck_key, pts[reference_order(deal.secrets)[5]])
    # Nothing in the final deck is a card point: the host, holding it, sees nothing.
    assert not set(deal.final_deck) & set(pts)


def test_upcard_is_opened_publicly(full_deal: tuple[LocalDeal, list[str]]) -> None:
    deal, labels = full_deal
    identities = identities_for(4)
    upcard = deal_schedule(4, 11, 2, 108).upcard
    releases = {
        seat: KeyRelease.make(identities[seat], deal.secrets[seat], upcard) for seat in range(4)
    }
    card = open_public(
        deal.final_deck, upcard, releases, [i.public_key for i in identities], CardIndex(labels)
    )
    assert card == reference_order(deal.secrets)[upcard]
    body, signature = releases[1].body(), releases[1].signature
    assert KeyRelease.decode(body, signature) == releases[1]


def test_stage_outputs_are_signed_and_round_trip(full_deal: tuple[LocalDeal, list[str]]) -> None:
    deal, _ = full_deal
    identities = identities_for(4)
    for output in deal.stage_outputs:
        output.check(identities[output.seat].public_key, TABLE, HAND, 108)
        assert StageOutput.decode(output.body(), output.signature) == output
    forged = dataclasses.replace(deal.stage_outputs[1], signature=deal.stage_outputs[0].signature)
    with pytest.raises(BadStageSignature):
        forged.verify(identities[1].public_key)
    message = deal.key_messages[0]
    assert KeyMessage.decode(message.body(), message.signature) == message


def test_a_seat_can_prove_a_played_card(full_deal: tuple[LocalDeal, list[str]]) -> None:
    from canasta_net.deal.blind import verify_play

    deal, labels = full_deal
    cards = CardIndex(labels)
    schedule = deal_schedule(4, 11, 2, 108)
    position = schedule.hands[0][4]
    card = deal.hands[0][4]
    keys = [s.position_key(position) for s in deal.secrets]
    verify_play(deal.final_deck, position, keys, card, cards, player=0)
    with pytest.raises(WrongCard) as info:
        verify_play(deal.final_deck, position, keys, (card + 1) % 108, cards, player=0)
    assert info.value.culprit == 0


def test_decks_of_162_cards() -> None:
    labels = list(card_labels(3, 2))
    deal = run_local_deal(
        TABLE, HAND, labels, seeds_for(2), identities_for(2), deal_schedule(2, 15, 0, 162)
    )
    order = reference_order(deal.secrets)
    schedule = deal_schedule(2, 15, 0, 162)
    for seat in range(2):
        assert deal.hands[seat] == [order[p] for p in schedule.hands[seat]]


def test_the_deal_depends_on_every_seed() -> None:
    base = reference_order(secrets_for(seeds_for(3), 8))
    orders = {tuple(reference_order(secrets_for(seeds_for(3, salt), 8))) for salt in range(6)}
    assert tuple(base) in orders and len(orders) > 1


# ------------------------------------------------------------------------- small decks: cheats
def small_stage1(seats: int = 3) -> tuple[list[SeatSecrets], list[list[bytes]]]:
    secrets = secrets_for(seeds_for(seats), len(SMALL))
    decks = []
    incoming = initial_deck(SMALL)
    for seat in range(seats):
        incoming = stage1(secrets[seat], incoming, seats)
        decks.append(incoming)
    return secrets, decks


def test_producer_naming() -> None:
    assert producer_of_input(1, 0, 4) == (0, None)
    assert producer_of_input(1, 2, 4) == (1, 1)
    assert producer_of_input(2, 0, 4) == (1, 3)
    assert producer_of_input(2, 3, 4) == (2, 2)
    with pytest.raises(BadParameters):
        producer_of_input(3, 0, 4)


def test_duplicate_ciphertext_is_named() -> None:
    secrets, decks = small_stage1()
    bad = list(decks[1])
    bad[5] = bad[2]
    with pytest.raises(DuplicateCiphertext) as info:
        stage1(secrets[2], bad, 3)
    assert (info.value.stage, info.value.culprit, info.value.checked_by) == (1, 1, 2)
    assert info.value.indexes == (2, 5)
    # The host finds the same thing when the signed output arrives.
    identity = identities_for(3)[1]
    output = StageOutput.make(identity, secrets[1], 1, bad)
    with pytest.raises(DuplicateCiphertext) as host_info:
        output.check(identity.public_key, TABLE, HAND, len(SMALL))
    assert host_info.value.culprit == 1 and host_info.value.checked_by is None


def test_non_curve_ciphertext_is_named() -> None:
    secrets, decks = small_stage1()
    for bad_x in (non_curve_x(), b"\xff" * 32, b"\x00" * 31):
        bad = list(decks[0])
        bad[3] = bad_x
        with pytest.raises(InvalidCiphertext) as info:
            stage1(secrets[1], bad, 3)
        assert (info.value.stage, info.value.culprit, info.value.index) == (1, 0, 3)


def test_wrong_deck_size_is_named_in_both_stages() -> None:
    secrets, decks = small_stage1()
    with pytest.raises(WrongDeckSize) as info:
        stage1(secrets[2], decks[1][:-1], 3)
    assert (info.value.stage, info.value.culprit) == (1, 1)
    # Seat 0's stage-2 input is the last seat's stage-1 output.
    with pytest.raises(WrongDeckSize) as info:
        stage2(secrets[0], [*decks[2], decks[2][0]], 3)
    assert (info.value.stage, info.value.culprit) == (1, 2)
    stage2_0 = stage2(secrets[0], decks[2], 3)
    with pytest.raises(BadDeck) as info2:
        stage2(secrets[1], stage2_0[:4], 3)
    assert (info2.value.stage, info2.value.culprit, info2.value.checked_by) == (2, 0, 1)
    with pytest.raises(WrongDeckSize):
        check_deck(initial_deck(SMALL)[:7], 8, 0, None)


def finish_small_deal(
    secrets: Sequence[SeatSecrets], decks: list[list[bytes]], cheat: dict[int, SeatSecrets]
) -> list[list[bytes]]:
    """Stage 2 after ``decks`` (the stage-1 outputs), with some seats using other secrets."""
    seats = len(secrets)
    incoming = decks[-1]
    for seat in range(seats):
        incoming = stage2(cheat.get(seat, secrets[seat]), incoming, seats)
        decks.append(incoming)
    return decks


def test_wrong_stage2_key_is_caught_at_open() -> None:
    secrets, decks = small_stage1()
    liar = dataclasses.replace(
        secrets[2],
        position_keys=(*secrets[2].position_keys[:4], 12345, *secrets[2].position_keys[5:]),
    )
    decks = finish_small_deal(secrets, decks, {2: liar})
    cards = CardIndex(SMALL)
    honest_keys = [s.position_key(4) for s in secrets]
    with pytest.raises(NotACard) as info:
        cards.open(decks[-1][4], honest_keys, 4)
    assert info.value.position == 4
    # Every other position still opens.
    order = reference_order(secrets)
    assert cards.open(decks[-1][3], [s.position_key(3) for s in secrets], 3) == order[3]


def test_sealed_keys_round_trip_and_bind_their_context() -> None:
    a, b = secrets_for(seeds_for(2), len(SMALL))
    key = scalar_to_bytes(a.position_key(6))
    sealed = seal_key(a.x25519_private, b.x25519_public, TABLE, HAND, 6, 0, 1, key)
    assert len(sealed) == 48
    assert open_sealed(b.x25519_private, a.x25519_public, TABLE, HAND, 6, 0, 1, sealed) == key
    for table, hand, position, sender, recipient in (
        (b"other", HAND, 6, 0, 1),
        (TABLE, HAND + 1, 6, 0, 1),
        (TABLE, HAND, 7, 0, 1),
        (TABLE, HAND, 6, 1, 0),
    ):
        with pytest.raises(SealedKeyError):
            open_sealed(
                b.x25519_private, a.x25519_public, table, hand, position, sender, recipient, sealed
            )


def test_tampered_sealed_key_is_refused() -> None:
    secrets = secrets_for(seeds_for(3), len(SMALL))
    identities = identities_for(3)
    message = make_key_message(identities[0], secrets[0], 5, 2, secrets[2].x25519_public)
    assert receive_key_message(
        message, secrets[2], identities[0].public_key, secrets[0].x25519_public
    ) == secrets[0].position_key(5)
    flipped = bytes([message.ciphertext[0] ^ 1]) + message.ciphertext[1:]
    tampered = dataclasses.replace(message, ciphertext=flipped)
    # In transit: the sender's signature no longer covers it (whoever changed it is unknown).
    with pytest.raises(BadKeySignature) as info:
        receive_key_message(
            tampered, secrets[2], identities[0].public_key, secrets[0].x25519_public
        )
    assert info.value.culprit is None and info.value.claimed_sender == 0
    # The AEAD itself refuses it too.
    with pytest.raises(SealedKeyError):
        open_sealed(
            secrets[2].x25519_private, secrets[0].x25519_public, TABLE, HAND, 5, 0, 2, flipped
        )
    # Signed garbage is the signer's fault.
    signed_garbage = dataclasses.replace(
        tampered, signature=identities[0].sign("blind-key", tampered.body())
    )
    with pytest.raises(SealedKeyError) as info2:
        receive_key_message(
            signed_garbage, secrets[2], identities[0].public_key, secrets[0].x25519_public
        )
    assert info2.value.culprit == 0


def test_key_signed_by_the_wrong_seat_is_refused() -> None:
    secrets = secrets_for(seeds_for(3), len(SMALL))
    identities = identities_for(3)
    # Seat 1 forges a key message claiming to come from seat 0.
    forged = make_key_message(identities[1], secrets[0], 5, 2, secrets[2].x25519_public)
    with pytest.raises(BadKeySignature):
        receive_key_message(forged, secrets[2], identities[0].public_key, secrets[0].x25519_public)
    # Seat 1 re-sends seat 0's ciphertext as its own: the AEAD binds the sender.
    genuine = make_key_message(identities[0], secrets[0], 5, 2, secrets[2].x25519_public)
    replayed = KeyMessage(TABLE, HAND, 5, 1, 2, genuine.ciphertext)
    replayed = dataclasses.replace(
        replayed, signature=identities[1].sign("blind-key", replayed.body())
    )
    with pytest.raises(SealedKeyError) as info:
        receive_key_message(
            replayed, secrets[2], identities[1].public_key, secrets[1].x25519_public
        )
    assert info.value.culprit == 1
    # A message for another seat is refused by the wrong recipient.
    with pytest.raises(BadParameters):
        receive_key_message(genuine, secrets[1], identities[0].public_key, secrets[0].x25519_public)


def test_wrong_published_key_fails_the_public_open() -> None:
    secrets, decks = small_stage1()
    decks = finish_small_deal(secrets, decks, {})
    identities = identities_for(3)
    public_keys = [i.public_key for i in identities]
    releases = {s: KeyRelease.make(identities[s], secrets[s], 7) for s in range(3)}
    cards = CardIndex(SMALL)
    assert open_public(decks[-1], 7, releases, public_keys, cards) == reference_order(secrets)[7]
    lie = KeyRelease(TABLE, HAND, 7, 1, secrets[1].position_key(6))
    releases[1] = dataclasses.replace(
        lie, signature=identities[1].sign("blind-release", lie.body())
    )
    with pytest.raises(NotACard):
        open_public(decks[-1], 7, releases, public_keys, cards)
    releases[1] = dataclasses.replace(releases[1], signature=releases[0].signature)
    with pytest.raises(BadReleaseSignature):
        open_public(decks[-1], 7, releases, public_keys, cards)


def test_stage_runner_runs_in_protocol_order() -> None:
    secrets = secrets_for(seeds_for(2), len(SMALL))
    outputs = run_stages(secrets, identities_for(2), SMALL)
    assert [(o.stage, o.seat) for o in outputs] == [(1, 0), (1, 1), (2, 0), (2, 1)]
    assert outputs[-1].deck == tuple(stage2(secrets[1], outputs[2].deck, 2))


def test_keys_are_in_range_and_the_seed_is_not_shown() -> None:
    s = secrets_for(seeds_for(1), len(SMALL))[0]
    assert 1 <= s.deck_key < N and all(1 <= k < N for k in s.position_keys)
    assert sorted(s.permutation) == list(range(len(SMALL)))
    assert s.seed.hex() not in repr(s) and str(s.deck_key) not in repr(s)
    other = SeatSecrets.derive(TABLE, HAND + 1, 0, s.seed, len(SMALL))
    assert other.deck_key != s.deck_key and other.x25519_public != s.x25519_public


def test_the_keys_sealed_between_two_seats_share_one_x25519_agreement(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every key sealed between the same two seats in a hand uses the same X25519 secret: it is
    worked out once for the pair (sealing and opening alike), not once a key; the sealed bytes
    and what opens them are unchanged (the test vectors hold them)."""
    from canasta_net.deal.blind import protocol

    alice, bob = secrets_for(seeds_for(2, salt=99), 8)
    decoded: list[bytes] = []  # each X25519 public key taken for an agreement
    honest = protocol._x25519_public

    def counting(data: bytes) -> object:
        decoded.append(bytes(data))
        return honest(data)

    monkeypatch.setattr(protocol, "_x25519_public", counting)
    sealed = []
    for position in range(8):
        key = scalar_to_bytes(bob.position_key(position))
        args = (TABLE, HAND, position, 1, 0)
        sealed.append(seal_key(bob.x25519_private, alice.x25519_public, *args, key))
    for position, ciphertext in enumerate(sealed):
        opened = open_sealed(
            alice.x25519_private, bob.x25519_public, TABLE, HAND, position, 1, 0, ciphertext
        )
        assert opened == scalar_to_bytes(bob.position_key(position))
    assert decoded == [alice.x25519_public, bob.x25519_public]


def test_key_messages_signed_here_are_known_exactly_and_the_oldest_go_first() -> None:
    """``SignedHere`` knows a key message only by its exact key, body and signature, and keeps
    at most its limit of them, forgetting the oldest first."""
    from canasta_net.deal.blind.protocol import SignedHere

    signed = SignedHere(limit=3)
    for n in range(4):
        signed.add(b"key", b"body%d" % n, b"sig%d" % n)
    assert (b"key", b"body0", b"sig0") not in signed  # the oldest, past the limit
    assert all((b"key", b"body%d" % n, b"sig%d" % n) in signed for n in (1, 2, 3))
    assert (b"key", b"body1", b"sig2") not in signed
    assert (b"other", b"body1", b"sig1") not in signed
    signed.add(b"key", b"body1", b"sig1")  # again: still one entry, kept in its place
    signed.add(b"key", b"body4", b"sig4")
    assert (b"key", b"body1", b"sig1") not in signed
    assert (b"key", b"body2", b"sig2") in signed
