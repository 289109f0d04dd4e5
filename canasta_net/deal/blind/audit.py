"""The hand-end audit: once every seed is revealed, anyone recomputes every step of the deal.

All of it is deterministic: from the revealed seeds an auditor derives every seat's deck key,
permutation, position keys and X25519 key, replays stage 1 and stage 2 byte for byte against the
published (signed) outputs, and checks every published or sealed key. The first deviation is
attributed to the seat whose signed output or key it is.
"""

from __future__ import annotations

from collections.abc import Sequence

from ... import memo
from . import points
from .errors import (
    BadParameters,
    BadScalar,
    RevealMismatch,
    SealedKeyError,
    StageMismatch,
    WrongPublishedKey,
)
from .keys import SeatSecrets, commitment, derive_position_key, derive_x25519, x25519_public_bytes
from .protocol import CardIndex, KeyMessage, initial_deck, open_sealed, stage1, stage2


def check_reveal(
    table_id: bytes,
    hand_no: int,
    seat: int,
    seed: bytes,
    seed_commitment: bytes,
    x25519_public: bytes | None = None,
) -> None:
    """A revealed seed must match the seat's commitment (and the X25519 public key it announced
    at hand start): :class:`RevealMismatch` naming the seat otherwise."""
    if commitment(table_id, hand_no, seat, seed) != bytes(seed_commitment):
        raise RevealMismatch(seat)
    if x25519_public is not None:
        derived = x25519_public_bytes(derive_x25519(table_id, hand_no, seat, seed))
        if derived != bytes(x25519_public):
            raise RevealMismatch(seat, "announced X25519 key")


def _first_difference(published: Sequence[bytes], expected: Sequence[bytes]) -> int | None:
    for position, (a, b) in enumerate(zip(published, expected, strict=False)):
        if bytes(a) != b:
            return position
    return None


@memo.pure
def replay_deal_ids(
    table_id: bytes,
    hand_no: int,
    labels: Sequence[str],
    seeds: Sequence[bytes],
    stage_outputs: Sequence[Sequence[bytes]],
    commitments: Sequence[bytes] | None = None,
) -> list[int]:
    """Like :func:`replay_deal`, but the card id (index in ``labels``) at every final position."""
    seats, size = len(seeds), len(labels)
    if not 1 <= seats <= 256:
        raise BadParameters(f"a deal has 1..256 seats, not {seats}")
    if len(stage_outputs) != 2 * seats:
        raise BadParameters(f"{seats} seats publish {2 * seats} stage outputs")
    if commitments is not None:
        if len(commitments) != seats:
            raise BadParameters("one commitment per seat")
        for seat in range(seats):
            check_reveal(table_id, hand_no, seat, seeds[seat], commitments[seat])
    secrets = [
        SeatSecrets.derive(table_id, hand_no, seat, seed, size) for seat, seed in enumerate(seeds)
    ]
    previous: Sequence[bytes] = initial_deck(labels)
    for step, published in enumerate(stage_outputs):
        stage, seat = 1 + step // seats, step % seats
        function = stage1 if stage == 1 else stage2
        # ``previous`` is a published output already shown to be honest (or the initial deck),
        # so the stage's own input checks cannot fail here.
        expected = function(secrets[seat], previous, seats)
        if len(published) != size or any(
            bytes(a) != b for a, b in zip(published, expected, strict=True)
        ):
            raise StageMismatch(stage, seat, _first_difference(published, expected))
        previous = published
    order = list(range(size))
    for seat_secrets in secrets:
        order = [order[i] for i in seat_secrets.permutation]
    return order


def replay_deal(
    table_id: bytes,
    hand_no: int,
    labels: Sequence[str],
    seeds: Sequence[bytes],
    stage_outputs: Sequence[Sequence[bytes]],
    commitments: Sequence[bytes] | None = None,
) -> list[str]:
    """Replay the whole deal from the revealed seeds; the card label at every final position.

    ``seeds`` in seat order; ``stage_outputs`` are the 2·S published decks in protocol order:
    seat 0's stage-1 output ... seat S-1's stage-1 output, then seat 0's stage-2 output ... seat
    S-1's (the last one is the final deck). Each is recomputed from its seat's seed applied to
    the previous published deck and compared byte for byte; the first that differs raises
    :class:`StageMismatch` naming its stage and seat. With ``commitments``, every seed is first
    checked against its commitment (:class:`RevealMismatch`).

    Position j of the final deck then holds ``card_point(labels[σ(j)])`` under every seat's
    position key, where σ composes the seats' permutations; the result is ``labels[σ(j)]``.
    """
    ids = replay_deal_ids(table_id, hand_no, labels, seeds, stage_outputs, commitments)
    return [labels[card] for card in ids]


def check_open(
    table_id: bytes, hand_no: int, seat: int, seed: bytes, position: int, key: int
) -> None:
    """A key ``seat`` published or sealed for ``position`` must be its derived k_j:
    :class:`WrongPublishedKey` naming the seat otherwise."""
    if derive_position_key(table_id, hand_no, seat, seed, position) != key:
        raise WrongPublishedKey(seat, position)


@memo.pure
def audit_key_message(
    message: KeyMessage, sender_seed: bytes, recipient_seed: bytes, sender_identity_key: bytes
) -> None:
    """Check a routed key message once both seats' seeds are public: the sender signed it, it
    decrypts (with the recipient's X25519 key re-derived from its seed), and it holds the sender's
    derived key for the position. Any failure after the signature names the sender."""
    message.verify(sender_identity_key)
    table_id, hand_no = message.table_id, message.hand_no
    sender_x = derive_x25519(table_id, hand_no, message.sender, sender_seed)
    recipient_x = derive_x25519(table_id, hand_no, message.recipient, recipient_seed)
    try:
        plain = open_sealed(
            recipient_x,
            x25519_public_bytes(sender_x),
            table_id,
            hand_no,
            message.position,
            message.sender,
            message.recipient,
            message.ciphertext,
        )
        key = points.scalar_from_bytes(plain)
    except (SealedKeyError, BadScalar) as e:
        raise SealedKeyError(
            message.sender, message.recipient, message.position, message.sender, str(e)
        ) from None
    check_open(table_id, hand_no, message.sender, sender_seed, message.position, key)


def attribute_failed_open(
    table_id: bytes,
    hand_no: int,
    position: int,
    keys_by_seat: Sequence[int],
    seeds: Sequence[bytes],
) -> list[int]:
    """The seats (in seat order) whose key among those used for ``position`` was wrong."""
    wrong = []
    for seat, (key, seed) in enumerate(zip(keys_by_seat, seeds, strict=True)):
        try:
            check_open(table_id, hand_no, seat, seed, position, key)
        except WrongPublishedKey:
            wrong.append(seat)
    return wrong


def decode_final_deck(
    final_deck: Sequence[bytes],
    table_id: bytes,
    hand_no: int,
    seeds: Sequence[bytes],
    cards: CardIndex,
) -> list[int]:
    """Open every final position with every seat's derived key: the card ids, position by
    position (a cross-check of :func:`replay_deal_ids` through the curve itself)."""
    result = []
    for position, x in enumerate(final_deck):
        keys = [
            derive_position_key(table_id, hand_no, seat, seed, position)
            for seat, seed in enumerate(seeds)
        ]
        result.append(cards.open(x, keys, position))
    return result
