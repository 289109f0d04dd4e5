"""The proof-carrying stages of the blind deal, version 2 (``docs/blind-proofs.md``), sans-io.

The stages are those of version 1 (``docs/blind-deal.md`` section 5) on secp256k1, and every
output carries a proof, checked by everyone who receives it before anything else happens:

- **stage 1** of a seat: ``out[i] = [k] in[perm[i]]``, with the seat's deck public key
  ``K = [k]G`` and a shuffle proof (:mod:`.shuffle`) that the output is the input permuted and
  raised to ``log_G K``;
- **stage 2**: ``out[j] = [k_j · k⁻¹] in[j]``, with every position public key ``K_j = [k_j]G``
  and, per position, a Chaum–Pedersen proof (:mod:`.dleq`) that ``log_{in[j]} out[j] =
  log_K K_j``.

So the final deck holds at position j ``[Π_s k_{s,j}] card_point(σ(j))`` for a permutation σ,
and a key a seat releases or seals for position j is right exactly when ``[key]G = K_j``: anyone
checks a released key at once, and a recipient checks a sealed one the moment it opens it.

A failure names the producing seat (:class:`BadStageProof`, or a :class:`BadDeck` for a deck of
the wrong form) before any key is released.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Final

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from .._encoding import MAX_SEATS, fields, hand_fields, u8, u32
from ..errors import (
    BadParameters,
    BadStageProof,
    DuplicateCiphertext,
    SealedKeyError,
    WrongDeckSize,
    WrongPublishedKey,
)
from ..keys import derive_permutation, x25519_public_bytes
from ..protocol import KeptHere, KeyMessage, open_sealed
from . import dleq, group, shuffle
from .group import Random

CARD_POINT_DOMAIN: Final = b"canasta-net/blind/card-point/v2"
SCALAR_DOMAIN: Final = b"canasta-net/blind/scalar/v2"
STAGE_PROOF_DOMAIN: Final = b"canasta-net/blind/stage-proof/v2"
DECK_KEY_PURPOSE: Final = b"deck"
POSITION_KEY_PURPOSE: Final = b"position"


@lru_cache(maxsize=16)
def card_points(labels: tuple[str, ...]) -> tuple[bytes, ...]:
    """The card points of ``labels`` (33 bytes each, in label order): the initial deck."""
    if len(set(labels)) != len(labels) or not all(labels):
        raise BadParameters("card labels must be distinct and not empty")
    points = tuple(group.hash_to_point(CARD_POINT_DOMAIN, label.encode()) for label in labels)
    if len(set(points)) != len(points):
        raise AssertionError("two labels hash to one point")  # a SHA-256 collision
    return points


def stage_context(table_id: bytes, hand_no: int, stage: int, seat: int) -> bytes:
    """The ``ctx`` bound into a stage's proofs: nothing proved for one table, hand, stage or seat
    verifies for another."""
    if stage not in (1, 2) or not 0 <= seat < MAX_SEATS:
        raise BadParameters("no such stage or seat")
    return fields(STAGE_PROOF_DOMAIN) + hand_fields(table_id, hand_no) + fields(u8(stage), u8(seat))


def derive_scalar(
    table_id: bytes, hand_no: int, seat: int, seed: bytes, purpose: bytes, index: int
) -> int:
    """A scalar in 1 .. Q-1: the first ``SHA256(field(domain) || hand || field(u8(seat)) ||
    field(seed) || field(purpose) || field(u32(index)) || field(u32(c)))`` in range."""
    prefix = (
        fields(SCALAR_DOMAIN)
        + hand_fields(table_id, hand_no)
        + fields(u8(seat), bytes(seed), purpose, u32(index))
    )
    counter = 0
    while True:
        value = int.from_bytes(hashlib.sha256(prefix + fields(u32(counter))).digest(), "big")
        if 1 <= value < group.Q:
            return value
        counter += 1


@dataclass(frozen=True)
class StageSecrets:
    """A seat's stage secrets for one hand (version 2), derived from its 32-byte seed."""

    table_id: bytes
    hand_no: int
    seat: int
    deck_key: int = field(repr=False)
    permutation: tuple[int, ...] = field(repr=False)
    position_keys: tuple[int, ...] = field(repr=False)

    @classmethod
    def derive(
        cls, table_id: bytes, hand_no: int, seat: int, seed: bytes, deck_size: int
    ) -> StageSecrets:
        if len(seed) != 32:
            raise BadParameters("a seed is 32 bytes")
        return cls(
            bytes(table_id),
            hand_no,
            seat,
            derive_scalar(table_id, hand_no, seat, seed, DECK_KEY_PURPOSE, 0),
            derive_permutation(table_id, hand_no, seat, seed, deck_size),
            tuple(
                derive_scalar(table_id, hand_no, seat, seed, POSITION_KEY_PURPOSE, j)
                for j in range(deck_size)
            ),
        )

    def public_keys(self) -> PublicKeys:
        """``K`` and every ``K_j``: the seat announces them with its commitment (computed once:
        m + 1 base-point multiplications, which stage 2 needs again)."""
        return self._public_keys

    @cached_property
    def _public_keys(self) -> PublicKeys:
        return PublicKeys(
            group.encode(group.base(self.deck_key)),
            tuple(group.encode(group.base(k)) for k in self.position_keys),
        )


# ----------------------------------------------------------------------------- public keys
@dataclass(frozen=True)
class PublicKeys:
    """What a seat commits to in its announcement, before it sees any deck: its deck public key
    ``K = [k]G`` and every position public key ``K_j = [k_j]G``. Bytes: ``K || u32(m) || K_0 ..
    K_{m-1}`` (33 bytes each)."""

    deck_key: bytes
    position_keys: tuple[bytes, ...]

    def encode(self) -> bytes:
        return self.deck_key + u32(len(self.position_keys)) + b"".join(self.position_keys)

    @classmethod
    def decode(cls, data: bytes) -> PublicKeys:
        """The keys, every point checked; :class:`group.GroupError` if malformed."""
        size = group.POINT_SIZE
        if len(data) < size + 4:
            raise group.GroupError("truncated public keys")
        m = int.from_bytes(data[size : size + 4], "big")
        if len(data) != size + 4 + m * size:
            raise group.GroupError("public keys of the wrong length")
        keys = tuple(data[size + 4 + size * j : size + 4 + size * (j + 1)] for j in range(m))
        group.decode_all((data[:size], *keys))
        return cls(bytes(data[:size]), keys)


# ----------------------------------------------------------------------------- own work
class ProvenStages(KeptHere[bytes]):
    """The stage outputs this process proved or checked itself, which it need not check again.

    A seat's log follower takes the seat's own stage outputs back from the host, and a host takes
    the stage outputs of the seats it plays: checking those proofs again is a third of a deal's
    checking work (``docs/blind-proofs.md`` section 9). An honest prover's proof always verifies
    (completeness), so an output this process computed with :func:`stage1` or :func:`stage2`
    holds; it is remembered by a digest of everything its check reads (the stage's context,
    input, output, proof and the public keys it was proved under), and a check of exactly
    those bytes against exactly those keys may skip the proof (the form is checked still).
    Anything else, a byte changed, another input, keys other than the announced ones, is
    checked in full. A check that passes adds its output too (a seat checks a stage output
    the host passes on before its record, wire ``ahead``, and then takes the record without a
    second check). Only the followers that ask for it (a seat's copy of the log, the host's
    table) consult it; the audit and ``replay_log`` check every proof."""

    def __init__(self, limit: int = 64) -> None:
        super().__init__(limit)

    def add(self, digest: bytes) -> None:
        self._keep(digest)


PROVED_HERE: Final = ProvenStages()
"""The stage outputs this process proved (:func:`stage1`, :func:`stage2` add theirs)."""


def statement_digest(
    ctx: bytes, incoming: Sequence[bytes], outgoing: Sequence[bytes], keys: bytes, proof: bytes
) -> bytes:
    """SHA-256 of everything a stage's check reads: context, input, output, keys, proof."""
    h = hashlib.sha256(fields(b"canasta-net/blind/proven-here", ctx, keys, proof))
    h.update(u32(len(incoming)))
    for entry in incoming:
        h.update(entry)
    h.update(u32(len(outgoing)))
    for entry in outgoing:
        h.update(entry)
    return h.digest()


# ----------------------------------------------------------------------------- a seat's stages
class ProverStart:
    """A stage proof's input-independent part, worked out before the input arrives (while the
    seat waits: ``BlindHand.prepare``), so that less of the proof is left for when the input is
    there (``docs/blind-proofs.md`` section 9). For one proof of one stage only: :meth:`take`
    hands it out once (its nonces must never mask two proofs)."""

    def __init__(self, stage: int, secrets: StageSecrets, part: object) -> None:
        self.stage = stage
        self._secrets = secrets
        self._part: object | None = part

    def take(self, stage: int, secrets: StageSecrets) -> object | None:
        """The start, once (the hand hands each start to one piece of work only), if it was made
        for that stage and those secrets; None otherwise."""
        part, self._part = self._part, None
        return part if stage == self.stage and secrets == self._secrets else None

    # a stage's work is a call that pickles (``BlindHand.stage_work``): points go as bytes
    def __getstate__(self) -> dict[str, object]:
        part = self._part
        if isinstance(part, list):
            part = [(w, group.encode(t)) for w, t in part]
        return {"stage": self.stage, "secrets": self._secrets, "part": part}

    def __setstate__(self, state: dict[str, object]) -> None:
        part = state["part"]
        if isinstance(part, list):
            part = [(w, group.decode(t)) for w, t in part]
        stage, secrets = state["stage"], state["secrets"]
        assert isinstance(stage, int) and isinstance(secrets, StageSecrets)
        self.stage, self._secrets, self._part = stage, secrets, part


def start_stage(stage: int, secrets: StageSecrets) -> ProverStart:
    """Stage 1: every random value of the shuffle proof, the permutation commitments and the
    Schnorr commitments that need no deck (``shuffle.start``). Stage 2: each position's nonce
    ``w_j`` and ``[w_j]K``. About a fifth (stage 1) and a third (stage 2) of the proof's
    multiplications."""
    if stage == 1:
        return ProverStart(1, secrets, shuffle.start(secrets.deck_key, secrets.permutation))
    k_point = group.decode(secrets.public_keys().deck_key)
    nonces = []
    for _ in secrets.position_keys:
        w = group.random_scalar()
        nonces.append((w, group.mul(k_point, w)))
    return ProverStart(2, secrets, nonces)


@dataclass(frozen=True)
class WorkBefore:
    """A seat's part of a hand that needs nobody's message, worked out before the hand begins
    (while the previous one is played, or as the seat takes its place): the seat's secrets for
    the hand from its fresh seed, with its public keys; the input-independent starts of its stage
    proofs; and, for seat 0, whose stage 1 takes the initial deck that every seat computes
    itself, that whole stage with its proof (``docs/blind-proofs.md`` section 9). Made for one
    hand and one seed (:meth:`fits`), used once: nothing of it leaves the seat before the table
    asks for it, in the hand's order."""

    seed: bytes = field(repr=False)
    secrets: StageSecrets = field(repr=False)
    starts: tuple[ProverStart, ...] = field(repr=False)
    initial: tuple[bytes, ...] = field(repr=False)
    first_stage: tuple[list[bytes], bytes] | None = field(repr=False)

    def fits(self, table_id: bytes, hand_no: int, seat: int, seed: bytes, size: int) -> bool:
        """Whether this was worked out for exactly that hand, seat and seed."""
        s = self.secrets
        return (s.table_id, s.hand_no, s.seat, len(s.permutation), self.seed) == (
            bytes(table_id),
            hand_no,
            seat,
            size,
            bytes(seed),
        )


def work_before(
    table_id: bytes, hand_no: int, seat: int, seed: bytes, labels: tuple[str, ...]
) -> WorkBefore:
    """Seat ``seat``'s :class:`WorkBefore` for hand ``hand_no`` with ``seed`` (a call that
    pickles: it may run in another thread or process). About 20 ms of multiplications at 108
    cards, and seat 0's stage 1 (about 50 ms) besides."""
    secrets = StageSecrets.derive(table_id, hand_no, seat, seed, len(labels))
    secrets.public_keys()  # computed once, kept by the secrets
    initial = card_points(labels)
    first_stage = stage1(secrets, initial) if seat == 0 else None
    firsts = () if first_stage is not None else (start_stage(1, secrets),)
    return WorkBefore(
        bytes(seed), secrets, (*firsts, start_stage(2, secrets)), initial, first_stage
    )


def stage1(
    secrets: StageSecrets,
    incoming: Sequence[bytes],
    rng: Random = os.urandom,
    begun: ProverStart | None = None,
) -> tuple[list[bytes], bytes]:
    """The seat's stage 1 and its proof (bytes). ``incoming`` was checked on arrival. ``begun``:
    the proof's start, worked out ahead (:func:`start_stage`), used once."""
    xs = group.decode_all(incoming)
    # the deck key multiplies every entry: in constant time (group.py)
    out = [group.encode(group.mul_secret(xs[p], secrets.deck_key)) for p in secrets.permutation]
    ctx = stage_context(secrets.table_id, secrets.hand_no, 1, secrets.seat)
    part = None if begun is None else begun.take(1, secrets)
    ready = part if isinstance(part, shuffle.ProverStart) else None
    proof = shuffle.prove(ctx, incoming, out, secrets.deck_key, secrets.permutation, rng, ready)
    encoded = proof.encode()
    keys = secrets.public_keys().deck_key
    PROVED_HERE.add(statement_digest(ctx, incoming, out, keys, encoded))
    return out, encoded


def stage2(
    secrets: StageSecrets,
    incoming: Sequence[bytes],
    rng: Random = os.urandom,
    begun: ProverStart | None = None,
) -> tuple[list[bytes], bytes]:
    """The seat's stage 2 and its proof (bytes). ``begun`` as for :func:`stage1`."""
    part = None if begun is None else begun.take(2, secrets)
    nonces = part if isinstance(part, list) and len(part) == len(incoming) else None
    xs = group.decode_all(incoming)
    k = secrets.deck_key
    public = secrets.public_keys()
    k_point = group.decode(public.deck_key)
    k_inverse = pow(k, -1, group.Q)
    ctx = stage_context(secrets.table_id, secrets.hand_no, 2, secrets.seat)
    out, proofs = [], []
    for j, x_j in enumerate(xs):
        exponent = secrets.position_keys[j] * k_inverse % group.Q
        y_j = group.mul(x_j, exponent)
        key_j = group.decode(public.position_keys[j])  # announced already: no multiplication
        y_bytes = group.encode(y_j)
        out.append(y_bytes)
        begun_j = None if nonces is None else nonces[j]
        statement = (public.deck_key, public.position_keys[j], bytes(incoming[j]), y_bytes)
        proofs.append(
            dleq.prove(
                ctx + fields(u32(j)), k_point, key_j, x_j, y_j, exponent, rng, begun_j, statement
            )
        )
    encoded = u32(len(proofs)) + b"".join(proofs)
    PROVED_HERE.add(statement_digest(ctx, incoming, out, public.encode(), encoded))
    return out, encoded


# ----------------------------------------------------------------------------- checks
def check_form(
    deck: Sequence[bytes], size: int, stage: int, seat: int, checked_by: int | None = None
) -> None:
    """A stage output's form: ``size`` entries, each a point, all distinct."""
    if len(deck) != size:
        raise WrongDeckSize(stage, seat, f"it has {len(deck)} entries, not {size}", checked_by)
    seen: dict[bytes, int] = {}
    for index, entry in enumerate(deck):
        try:
            group.decode(entry)
        except group.GroupError:
            raise BadStageProof(stage, seat, f"entry {index} is not a point", checked_by) from None
        first = seen.setdefault(bytes(entry), index)
        if first != index:
            raise DuplicateCiphertext(stage, seat, first, index, checked_by)


def check_stage1(
    table_id: bytes,
    hand_no: int,
    seat: int,
    incoming: Sequence[bytes],
    outgoing: Sequence[bytes],
    keys: PublicKeys,
    proof: bytes,
    checked_by: int | None = None,
    proven: ProvenStages | None = None,
) -> None:
    """Check seat ``seat``'s stage-1 output against its (already checked) input and its announced
    deck public key. :class:`BadStageProof` (or a :class:`BadDeck`) names the seat. ``proven``:
    outputs this process proved or checked itself, whose proof need not be checked again (an
    output checked here is added to it)."""
    check_form(outgoing, len(incoming), 1, seat, checked_by)
    ctx = stage_context(table_id, hand_no, 1, seat)
    digest = None
    if proven is not None:
        digest = statement_digest(ctx, incoming, outgoing, keys.deck_key, proof)
        if digest in proven:
            return
    try:
        decoded = shuffle.ShuffleProof.decode(proof)
    except group.GroupError as e:
        raise BadStageProof(1, seat, f"its proof is malformed: {e}", checked_by) from None
    if not shuffle.verify(ctx, incoming, outgoing, keys.deck_key, decoded):
        raise BadStageProof(
            1,
            seat,
            "its shuffle proof does not verify: the output is not its input permuted and "
            "raised to its announced deck key",
            checked_by,
        )
    if proven is not None and digest is not None:
        proven.add(digest)  # checked here: the same bytes need no second check


def check_stage2(
    table_id: bytes,
    hand_no: int,
    seat: int,
    incoming: Sequence[bytes],
    outgoing: Sequence[bytes],
    keys: PublicKeys,
    proof: bytes,
    checked_by: int | None = None,
    proven: ProvenStages | None = None,
) -> None:
    """Check seat ``seat``'s stage-2 output against its input and its announced keys: at every
    position j, ``log_{in[j]} out[j] = log_K K_j``. ``proven`` as for :func:`check_stage1`."""
    m = len(incoming)
    check_form(outgoing, m, 2, seat, checked_by)
    ctx = stage_context(table_id, hand_no, 2, seat)
    digest = None
    if proven is not None:
        digest = statement_digest(ctx, incoming, outgoing, keys.encode(), proof)
        if digest in proven:
            return
    if len(proof) != 4 + m * dleq.PROOF_SIZE or int.from_bytes(proof[:4], "big") != m:
        raise BadStageProof(2, seat, "its proof is malformed", checked_by)
    if len(keys.position_keys) != m:
        raise BadStageProof(2, seat, "it announced keys for another deck size", checked_by)
    try:
        k_point = group.decode(keys.deck_key)
        position_points = group.decode_all(keys.position_keys)
    except group.GroupError:
        raise BadStageProof(2, seat, "its announced keys are not points", checked_by) from None
    for j, (x_j, y_j) in enumerate(zip(incoming, outgoing, strict=True)):
        statement = (k_point, position_points[j], group.decode(x_j), group.decode(y_j))
        encoded = (keys.deck_key, keys.position_keys[j], bytes(x_j), bytes(y_j))
        part = proof[4 + 64 * j : 4 + 64 * (j + 1)]
        if not dleq.verify(ctx + fields(u32(j)), *statement, part, encoded):
            raise BadStageProof(
                2,
                seat,
                f"its proof for position {j} does not verify: the entry is not its input raised "
                "to its announced position key over its deck key",
                checked_by,
            )
    if proven is not None and digest is not None:
        proven.add(digest)


def key_matches(position_key: bytes, key: int) -> bool:
    """Whether ``key`` (released, or opened from a sealed message) is the one the seat committed
    to for the position in its stage 2: ``[key]G == K_j``."""
    return 0 < key < group.Q and group.encode(group.base(key)) == bytes(position_key)


def check_exposed_key(
    message: KeyMessage,
    recipient_x25519_private: bytes,
    recipient_x25519_public: bytes,
    sender_x25519_public: bytes,
    sender_position_key: bytes,
) -> None:
    """Anyone's check of a sealed key its recipient says is wrong, once the recipient exposes its
    per-hand X25519 private key (``docs/blind-proofs.md`` section 10, "A wrong sealed key").

    No Chaum–Pedersen proof can show what an AES-GCM ciphertext holds, but the recipient's X25519
    key for the hand (32 bytes, derived from its seed, its public half announced) lets anyone
    recompute the message's one-time AES key and open it. Raises :class:`WrongPublishedKey` (the
    sender sealed a key that is not its announced ``K_j``) or :class:`SealedKeyError` naming the
    sender (what it sealed is no key) when the sender deviated; returns quietly when the sealed
    key is right (the accusation is false); :class:`BadParameters` when the exposed key is not
    the recipient's announced one (it proves nothing)."""
    try:
        private = X25519PrivateKey.from_private_bytes(bytes(recipient_x25519_private))
    except ValueError:
        raise BadParameters("an X25519 private key is 32 bytes") from None
    if x25519_public_bytes(private) != bytes(recipient_x25519_public):
        raise BadParameters("the exposed X25519 key is not the recipient's announced one")
    sender, position = message.sender, message.position
    try:
        plain = open_sealed(
            private,
            sender_x25519_public,
            message.table_id,
            message.hand_no,
            position,
            sender,
            message.recipient,
            message.ciphertext,
        )
    except SealedKeyError:  # AES-GCM refuses it: the sender signed what it sealed
        raise SealedKeyError(
            sender, message.recipient, position, sender, "it does not decrypt"
        ) from None
    sealed_key(message, plain, sender_position_key)


def sealed_key(message: KeyMessage, plain: bytes, sender_position_key: bytes) -> int:
    """The key ``message`` sealed (``plain``, opened), if it is the sender's announced one for
    the position (``sender_position_key``, ``K_j``): :class:`SealedKeyError` naming the sender
    when the bytes are no key, :class:`WrongPublishedKey` when it is another key."""
    sender, position = message.sender, message.position
    try:
        key = group.scalar_from(plain)
    except group.GroupError:
        raise SealedKeyError(
            sender, message.recipient, position, sender, "the sealed bytes are not a key"
        ) from None
    if not key_matches(sender_position_key, key):
        raise WrongPublishedKey(sender, position)
    return key


def open_position(final_entry: bytes, keys: Iterable[int]) -> bytes:
    """``[(Π keys)⁻¹] final_entry``: the card point, if every key is right."""
    product = 1
    for k in keys:
        product = product * k % group.Q
    return group.encode(group.mul(group.decode(final_entry), pow(product, -1, group.Q)))
