"""The blind deal's stages, opening, key transport and signed messages, sans-io.

Every function here is pure: no I/O, no clock, no randomness (the seeds come in through
:class:`~canasta_net.blind.keys.SeatSecrets`). The host, a seat and an auditor all call the same
functions, so they check exactly the same things. ``docs/blind-deal.md`` specifies the bytes.

The deck after every seat's stage 1 and stage 2 holds, at position j, the x coordinate of
``[Π_s k_{s,j}] card_point(σ(j))`` where σ is the composition of the seats' permutations; nobody
learns σ unless every seat colludes, and position j can only be read with every seat's k_{s,j}.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final, Generic, TypeVar

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from canasta_net.identity import BadSignature, Identity, verify

from . import points
from ._encoding import (
    KEY_MESSAGE_DOMAIN,
    MAX_SEATS,
    RELEASE_DOMAIN,
    SEAL_AD_DOMAIN,
    SEAL_KEY_DOMAIN,
    STAGE_DOMAIN,
    fields,
    hand_fields,
    u8,
    u32,
)
from .errors import (
    BadKeySignature,
    BadParameters,
    BadReleaseSignature,
    BadScalar,
    BadStageSignature,
    DuplicateCiphertext,
    InvalidCiphertext,
    InvalidPoint,
    NotACard,
    SealedKeyError,
    WrongCard,
    WrongDeckSize,
)
from .keys import X25519_PUBLIC_SIZE, SeatSecrets, x25519_public_bytes

ANNOUNCE_SIGNATURE_KIND: Final = "blind-announce"
"""Signature kind of a seat's hand-start announcement (commitment + X25519 public key)."""
STAGE_SIGNATURE_KIND: Final = "blind-stage"
"""Signature kind of a stage output."""
KEY_SIGNATURE_KIND: Final = "blind-key"
"""Signature kind of a sealed key message."""
RELEASE_SIGNATURE_KIND: Final = "blind-release"
"""Signature kind of a key published in the clear (a public open or a played card)."""

SEALED_KEY_SIZE: Final = points.SCALAR_SIZE + 16
"""A sealed key: 32 bytes of AES-GCM ciphertext and a 16-byte tag."""
_NONCE: Final = bytes(12)
"""Each AES-GCM key seals exactly one message (it is derived for one sender, recipient, hand and
position), so a fixed nonce is safe and makes sealing deterministic and replayable by the audit."""

Deck = list[bytes]
"""A deck on the wire: one 32-byte x coordinate per position."""


# ----------------------------------------------------------------------------------- decks
def initial_deck(labels: Sequence[str]) -> Deck:
    """The card points in label order: the input of seat 0's stage 1 (every seat computes it)."""
    return list(points.card_points(labels))


def producer_of_input(stage: int, seat: int, seats: int) -> tuple[int, int | None]:
    """Which output a seat's ``stage`` input is: ``(stage, seat)`` of its producer.

    Stage 1 of seat s takes seat s-1's stage-1 output (seat 0 takes the initial deck,
    ``(0, None)``); stage 2 of seat s takes seat s-1's stage-2 output (seat 0 takes the last
    seat's stage-1 output).
    """
    _check_seats(seat, seats)
    if stage not in (1, 2):
        raise BadParameters(f"there is no stage {stage}")
    if seat > 0:
        return stage, seat - 1
    return (0, None) if stage == 1 else (1, seats - 1)


def check_deck(
    deck: Sequence[bytes],
    size: int,
    stage: int,
    culprit: int | None,
    checked_by: int | None = None,
) -> list[ec.EllipticCurvePublicKey]:
    """Check a deck produced by ``culprit`` at ``stage``; return its entries as validated points.

    Right size, every entry a valid P-256 x coordinate, all entries distinct: otherwise a
    :class:`BadDeck` naming the stage and the producing seat.
    """
    if len(deck) != size:
        raise WrongDeckSize(
            stage, culprit, f"it has {len(deck)} entries, not {size}", checked_by=checked_by
        )
    key = b"".join(deck)
    cached = _checked_decks.get(key)
    if cached is not None:  # the same deck passed these checks in this process a moment ago
        return list(cached)
    validated = []
    seen: dict[bytes, int] = {}
    for index, x in enumerate(deck):
        try:
            validated.append(points.point_from_x(x))
        except InvalidPoint:
            raise InvalidCiphertext(stage, culprit, index, checked_by=checked_by) from None
        first = seen.setdefault(bytes(x), index)
        if first != index:
            raise DuplicateCiphertext(stage, culprit, first, index, checked_by=checked_by)
    if len(_checked_decks) >= 4:
        _checked_decks.pop(next(iter(_checked_decks)))
    _checked_decks[key] = tuple(validated)
    return validated


# the last few decks that passed check_deck (a seat checks the deck it receives when it arrives
# in its log, then again as its stage's input): the entries as validated points
_checked_decks: dict[bytes, tuple[ec.EllipticCurvePublicKey, ...]] = {}


def stage1(secrets: SeatSecrets, incoming: Sequence[bytes], seats: int) -> Deck:
    """Seat ``secrets.seat``'s stage 1: check the incoming deck, encrypt every entry with the deck
    key, permute: ``out[i] = x([k] in[perm[i]])``.

    Seat 0's ``incoming`` is :func:`initial_deck`, which it computes itself.
    """
    stage, culprit = producer_of_input(1, secrets.seat, seats)
    checked = check_deck(incoming, secrets.deck_size, stage, culprit, checked_by=secrets.seat)
    encrypt = points.Multiplier(secrets.deck_key)
    return [encrypt.point(checked[i]) for i in secrets.permutation]


def stage2_multipliers(secrets: SeatSecrets) -> list[points.Multiplier]:
    """The seat's stage-2 multiplications, ``k_j · k⁻¹`` for every position j (a seat may build
    them ahead, while it waits for its turn)."""
    k_inverse = points.inverse(secrets.deck_key)
    return [points.Multiplier(k_j * k_inverse % points.N) for k_j in secrets.position_keys]


def stage2(
    secrets: SeatSecrets,
    incoming: Sequence[bytes],
    seats: int,
    multipliers: Sequence[points.Multiplier] | None = None,
) -> Deck:
    """Seat ``secrets.seat``'s stage 2: check the incoming deck, then at every position j replace
    the deck key by the position key: ``out[j] = x([k_j · k⁻¹] in[j])``. ``multipliers``: those
    of :func:`stage2_multipliers` for the same secrets, if already built."""
    stage, culprit = producer_of_input(2, secrets.seat, seats)
    checked = check_deck(incoming, secrets.deck_size, stage, culprit, checked_by=secrets.seat)
    each = multipliers if multipliers is not None else stage2_multipliers(secrets)
    return [m.point(point) for m, point in zip(each, checked, strict=True)]


def encode_deck(deck: Sequence[bytes]) -> bytes:
    """A deck's bytes: its x coordinates concatenated, position 0 first."""
    for x in deck:
        if len(x) != points.X_SIZE:
            raise BadParameters(f"a deck entry is {points.X_SIZE} bytes, not {len(x)}")
    return b"".join(deck)


def decode_deck(data: bytes) -> Deck:
    if len(data) % points.X_SIZE:
        raise BadParameters(f"a deck's bytes are a multiple of {points.X_SIZE}")
    return [data[i : i + points.X_SIZE] for i in range(0, len(data), points.X_SIZE)]


# ----------------------------------------------------------------------------------- messages
class _Reader:
    """Reads a concatenation of length-prefixed fields, refusing anything malformed."""

    def __init__(self, data: bytes) -> None:
        self._data = bytes(data)
        self._at = 0

    def field(self, size: int | None = None) -> bytes:
        if self._at + 4 > len(self._data):
            raise BadParameters("truncated message")
        length = int.from_bytes(self._data[self._at : self._at + 4], "big")
        start = self._at + 4
        if start + length > len(self._data):
            raise BadParameters("truncated message")
        if size is not None and length != size:
            raise BadParameters(f"a field of {length} bytes where {size} are expected")
        self._at = start + length
        return self._data[start : self._at]

    def integer(self, size: int) -> int:
        return int.from_bytes(self.field(size), "big")

    def expect(self, domain: bytes) -> None:
        if self.field() != domain:
            raise BadParameters("not a message of this kind or version")

    def end(self) -> None:
        if self._at != len(self._data):
            raise BadParameters("trailing bytes after the message")


def _check_seats(seat: int, seats: int) -> None:
    if not 1 <= seats <= MAX_SEATS:
        raise BadParameters(f"a deal has 1..{MAX_SEATS} seats, not {seats}")
    if not 0 <= seat < seats:
        raise BadParameters(f"seat {seat} is outside 0..{seats - 1}")


@dataclass(frozen=True)
class StageOutput:
    """A seat's signed stage output: what it sends to the host, the host logs and forwards."""

    table_id: bytes
    hand_no: int
    stage: int
    seat: int
    deck: tuple[bytes, ...]
    signature: bytes = b""

    def body(self) -> bytes:
        """The signed bytes (kind ``blind-stage``)."""
        return (
            fields(STAGE_DOMAIN)
            + hand_fields(self.table_id, self.hand_no)
            + fields(u8(self.stage), u8(self.seat), u32(len(self.deck)), encode_deck(self.deck))
        )

    def digest(self) -> bytes:
        """SHA-256 of :meth:`body`: what a log may record in place of the whole deck."""
        return hashlib.sha256(self.body()).digest()

    @classmethod
    def make(
        cls,
        identity: Identity,
        secrets: SeatSecrets,
        stage: int,
        deck: Sequence[bytes],
    ) -> StageOutput:
        unsigned = cls(secrets.table_id, secrets.hand_no, stage, secrets.seat, tuple(deck))
        return unsigned.signed(identity)

    def signed(self, identity: Identity) -> StageOutput:
        return replace(self, signature=identity.sign(STAGE_SIGNATURE_KIND, self.body()))

    @classmethod
    def decode(cls, body: bytes, signature: bytes) -> StageOutput:
        reader = _Reader(body)
        reader.expect(STAGE_DOMAIN)
        table_id = reader.field()
        hand_no = reader.integer(8)
        stage, seat, size = reader.integer(1), reader.integer(1), reader.integer(4)
        deck = decode_deck(reader.field(size * points.X_SIZE))
        reader.end()
        return cls(table_id, hand_no, stage, seat, tuple(deck), bytes(signature))

    def verify(self, identity_public_key: bytes) -> None:
        """Raise :class:`BadStageSignature` unless the seat's identity key signed this output."""
        try:
            verify(identity_public_key, STAGE_SIGNATURE_KIND, self.body(), self.signature)
        except BadSignature:
            raise BadStageSignature(self.stage, self.seat) from None

    def check(
        self,
        identity_public_key: bytes,
        table_id: bytes,
        hand_no: int,
        deck_size: int,
        checked_by: int | None = None,
    ) -> None:
        """What the host (and the next seat) checks on receipt: the right hand, the seat's
        signature, and a well-formed deck (:class:`BadDeck` naming this seat otherwise)."""
        if (self.table_id, self.hand_no) != (table_id, hand_no) or self.stage not in (1, 2):
            raise BadParameters("a stage output for another table, hand or stage")
        self.verify(identity_public_key)
        check_deck(self.deck, deck_size, self.stage, self.seat, checked_by=checked_by)


# ----------------------------------------------------------------------------------- opening
def position_key(secrets: SeatSecrets, position: int) -> int:
    """The seat's key k_j for ``position``: what it sends (sealed) to the position's owner, or
    publishes for a public open."""
    return secrets.position_key(position)


def open_position(final_x: bytes, keys: Iterable[int]) -> bytes:
    """The x coordinate under every seat's key for a position: ``x([Π k⁻¹] final)``.

    Multiplying by each inverse in turn is multiplying by the inverse of the product, which is
    what this does (one scalar multiplication). The result is a card point only if every key is
    right; see :meth:`CardIndex.open`.
    """
    return points.multiply(points.inverse(points.product(keys)), final_x)


class CardIndex:
    """The card points of a deck, and back: x coordinate → card id (index in the label list)."""

    def __init__(self, labels: Sequence[str]) -> None:
        self.labels: tuple[str, ...] = tuple(labels)
        self.points: tuple[bytes, ...] = points.card_points(self.labels)
        self._ids: dict[bytes, int] = {x: i for i, x in enumerate(self.points)}

    def __len__(self) -> int:
        return len(self.labels)

    def card_id(self, x: bytes, position: int) -> int:
        """The card whose point is ``x``; :class:`NotACard` (for ``position``) if none."""
        card = self._ids.get(bytes(x))
        if card is None:
            raise NotACard(position)
        return card

    def label(self, x: bytes, position: int) -> str:
        return self.labels[self.card_id(x, position)]

    def open(self, final_x: bytes, keys: Iterable[int], position: int) -> int:
        """The card id at ``position`` given every seat's key for it (in any order)."""
        try:
            opened = open_position(final_x, keys)
        except (InvalidPoint, BadScalar):
            raise NotACard(position) from None
        return self.card_id(opened, position)


# ----------------------------------------------------------------------------------- sealing
def _x25519_public(data: bytes) -> X25519PublicKey:
    if len(data) != X25519_PUBLIC_SIZE:
        raise BadParameters(f"an X25519 public key is {X25519_PUBLIC_SIZE} bytes")
    return X25519PublicKey.from_public_bytes(data)


def sealing_context(
    table_id: bytes, hand_no: int, position: int, sender: int, recipient: int
) -> bytes:
    """The AES-GCM associated data of a sealed key."""
    return (
        fields(SEAL_AD_DOMAIN)
        + hand_fields(table_id, hand_no)
        + fields(u32(position), u8(sender), u8(recipient))
    )


def _sealing_key(
    shared: bytes,
    table_id: bytes,
    hand_no: int,
    position: int,
    sender: int,
    recipient: int,
    sender_public: bytes,
    recipient_public: bytes,
) -> AESGCM:
    info = (
        fields(SEAL_KEY_DOMAIN)
        + hand_fields(table_id, hand_no)
        + fields(u32(position), u8(sender), u8(recipient), sender_public, recipient_public)
    )
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(shared)
    return AESGCM(key)


@functools.lru_cache(maxsize=64)
def _agreement(own: X25519PrivateKey, other_public: bytes) -> tuple[bytes, bytes]:
    """``own``'s public key and its X25519 secret with ``other_public``: the same for every key
    sealed between two seats in a hand (11 to 54 each way a deal), so worked out once a pair
    instead of twice a key (deriving the public key is an X25519 multiplication too). Keyed by
    the key object, which the cache keeps alive (a hand's few keys; they are derived from the
    seeds every seat reveals at hand end). ValueError (not kept) for an unusable public key."""
    return x25519_public_bytes(own), own.exchange(_x25519_public(other_public))


def seal_key(
    sender_x25519: X25519PrivateKey,
    recipient_x25519_public: bytes,
    table_id: bytes,
    hand_no: int,
    position: int,
    sender: int,
    recipient: int,
    key: bytes,
    check_key: Callable[[bytes], object] = points.scalar_from_bytes,
) -> bytes:
    """Encrypt a 32-byte position key from ``sender`` to ``recipient`` (48 bytes out).

    X25519 between the two seats' per-hand keys, HKDF-SHA256 down to a one-message AES-256-GCM key
    (bound to table, hand, position, both seats and both public keys), AES-GCM with the
    :func:`sealing_context` as associated data. ``check_key`` refuses a key outside the deal's
    scalar range (version 1's P-256 scalars by default; version 2 passes its own).
    """
    check_key(key)
    try:
        sender_public, shared = _agreement(sender_x25519, bytes(recipient_x25519_public))
    except ValueError:
        raise SealedKeyError(
            sender, recipient, position, recipient, "the recipient's X25519 key is unusable"
        ) from None
    aead = _sealing_key(
        shared,
        table_id,
        hand_no,
        position,
        sender,
        recipient,
        sender_public,
        bytes(recipient_x25519_public),
    )
    context = sealing_context(table_id, hand_no, position, sender, recipient)
    return aead.encrypt(_NONCE, bytes(key), context)


def open_sealed(
    recipient_x25519: X25519PrivateKey,
    sender_x25519_public: bytes,
    table_id: bytes,
    hand_no: int,
    position: int,
    sender: int,
    recipient: int,
    ciphertext: bytes,
) -> bytes:
    """Decrypt a sealed key; :class:`SealedKeyError` (no culprit yet) if AES-GCM refuses it."""
    try:
        recipient_public, shared = _agreement(recipient_x25519, bytes(sender_x25519_public))
    except ValueError:
        raise SealedKeyError(
            sender, recipient, position, sender, "the sender's X25519 key is unusable"
        ) from None
    aead = _sealing_key(
        shared,
        table_id,
        hand_no,
        position,
        sender,
        recipient,
        bytes(sender_x25519_public),
        recipient_public,
    )
    context = sealing_context(table_id, hand_no, position, sender, recipient)
    try:
        return aead.decrypt(_NONCE, bytes(ciphertext), context)
    except InvalidTag:
        raise SealedKeyError(
            sender, recipient, position, None, "AES-GCM authentication failed"
        ) from None


@dataclass(frozen=True)
class KeyMessage:
    """A position key sealed from one seat to another, signed by the sender (encrypt-then-sign).

    The host routes it without being able to read it and logs :meth:`digest`.
    """

    table_id: bytes
    hand_no: int
    position: int
    sender: int
    recipient: int
    ciphertext: bytes
    signature: bytes = b""

    def body(self) -> bytes:
        """The signed bytes (kind ``blind-key``)."""
        return (
            fields(KEY_MESSAGE_DOMAIN)
            + hand_fields(self.table_id, self.hand_no)
            + fields(u32(self.position), u8(self.sender), u8(self.recipient), self.ciphertext)
        )

    def digest(self) -> bytes:
        return hashlib.sha256(self.body()).digest()

    @classmethod
    def decode(cls, body: bytes, signature: bytes) -> KeyMessage:
        reader = _Reader(body)
        reader.expect(KEY_MESSAGE_DOMAIN)
        table_id = reader.field()
        hand_no = reader.integer(8)
        position, sender, recipient = reader.integer(4), reader.integer(1), reader.integer(1)
        ciphertext = reader.field(SEALED_KEY_SIZE)
        reader.end()
        return cls(table_id, hand_no, position, sender, recipient, ciphertext, bytes(signature))

    def verify(self, sender_identity_public_key: bytes, body: bytes | None = None) -> None:
        """Raise :class:`BadKeySignature` unless the sender signed it. ``body``: its
        :meth:`body`, if the caller has it."""
        body = self.body() if body is None else body
        try:
            verify(sender_identity_public_key, KEY_SIGNATURE_KIND, body, self.signature)
        except BadSignature:
            raise BadKeySignature(self.sender, self.position) from None


T = TypeVar("T")


class KeptHere(Generic[T]):
    """What this process made or checked itself, which its own followers need not check again
    (:class:`SignedHere`, ``stages.ProvenStages``): exact membership, at most ``limit`` items,
    the oldest (by first addition) forgotten first; added to from more than one thread (stages
    are worked out ahead in another)."""

    def __init__(self, limit: int) -> None:
        # in the order first added (a dict keeps it): the oldest go first past ``limit``
        self._known: dict[T, None] = {}
        self._limit = limit
        self._lock = threading.Lock()

    def _keep(self, item: T) -> None:
        with self._lock:
            self._known[item] = None  # one already known keeps its place
            while len(self._known) > self._limit:
                del self._known[next(iter(self._known))]

    def __contains__(self, item: object) -> bool:
        return item in self._known


class SignedHere(KeptHere[tuple[bytes, bytes, bytes]]):
    """Key messages this process signed itself (the sender's key, the signed body, the
    signature), which its own followers need not verify again.

    A seat's copy of the log takes its own ``keys`` messages back, and a host the keys of the
    seats it plays: checking their signatures again is a quarter of a follower's Ed25519 work
    in a deal (33 of 132 key messages at 108 cards and 4 seats; each verification costs about
    three secp256k1 multiplications). An Ed25519 signature verifies, under the key that made
    it, over the bytes it was made on; exactly those three byte strings may be taken as
    verified, as the log verifier does for the acts a seat signed itself
    (``LogVerifier.signed_here``). Anything else is verified as always. Only the followers that
    trust their own work consult it (a seat's copy of the log, the host's table); the audit and
    ``replay_log`` verify every signature."""

    def __init__(self, limit: int = 1024) -> None:
        super().__init__(limit)

    def add(self, key: bytes, body: bytes, signature: bytes) -> None:
        self._keep((bytes(key), bytes(body), bytes(signature)))


KEYS_SIGNED_HERE: Final = SignedHere()
"""The key messages this process signed (:func:`sign_key_message` adds each)."""


def sign_key_message(identity: Identity, unsigned: KeyMessage) -> KeyMessage:
    """``unsigned`` signed by ``identity`` (kind ``blind-key``), remembered as signed here."""
    body = unsigned.body()
    signature = identity.sign(KEY_SIGNATURE_KIND, body)
    KEYS_SIGNED_HERE.add(identity.public_key, body, signature)
    return replace(unsigned, signature=signature)


def make_key_message(
    identity: Identity,
    secrets: SeatSecrets,
    position: int,
    recipient: int,
    recipient_x25519_public: bytes,
) -> KeyMessage:
    """Seal the seat's key for ``position`` to ``recipient`` and sign the result."""
    ciphertext = seal_key(
        secrets.x25519_private,
        recipient_x25519_public,
        secrets.table_id,
        secrets.hand_no,
        position,
        secrets.seat,
        recipient,
        points.scalar_to_bytes(secrets.position_key(position)),
    )
    unsigned = KeyMessage(
        secrets.table_id, secrets.hand_no, position, secrets.seat, recipient, ciphertext
    )
    return sign_key_message(identity, unsigned)


def receive_key_message(
    message: KeyMessage,
    recipient_secrets: SeatSecrets,
    sender_identity_public_key: bytes,
    sender_x25519_public: bytes,
) -> int:
    """The key in a key message addressed to this seat, after every check.

    The sender's signature first (:class:`BadKeySignature`, not attributable), then the message's
    table, hand and recipient, then AES-GCM and the key's range (:class:`SealedKeyError` naming the
    sender, who signed what it sent).
    """
    message.verify(sender_identity_public_key)
    if (message.table_id, message.hand_no, message.recipient) != (
        recipient_secrets.table_id,
        recipient_secrets.hand_no,
        recipient_secrets.seat,
    ):
        raise BadParameters("a key message for another table, hand or seat")
    try:
        plain = open_sealed(
            recipient_secrets.x25519_private,
            sender_x25519_public,
            message.table_id,
            message.hand_no,
            message.position,
            message.sender,
            message.recipient,
            message.ciphertext,
        )
        return points.scalar_from_bytes(plain)
    except SealedKeyError as e:
        raise SealedKeyError(
            message.sender, message.recipient, message.position, message.sender, e.args[0]
        ) from None
    except BadScalar:
        raise SealedKeyError(
            message.sender,
            message.recipient,
            message.position,
            message.sender,
            "the sealed bytes are not a key",
        ) from None


@dataclass(frozen=True)
class KeyRelease:
    """A position key published in the clear and signed: a public open (the upcard, a drawn card
    shown, a meld) or a seat's own key for a card it plays."""

    table_id: bytes
    hand_no: int
    position: int
    seat: int
    key: int
    signature: bytes = b""

    def body(self) -> bytes:
        """The signed bytes (kind ``blind-release``)."""
        return (
            fields(RELEASE_DOMAIN)
            + hand_fields(self.table_id, self.hand_no)
            + fields(u32(self.position), u8(self.seat), points.scalar_to_bytes(self.key))
        )

    @classmethod
    def make(cls, identity: Identity, secrets: SeatSecrets, position: int) -> KeyRelease:
        unsigned = cls(
            secrets.table_id,
            secrets.hand_no,
            position,
            secrets.seat,
            secrets.position_key(position),
        )
        return replace(unsigned, signature=identity.sign(RELEASE_SIGNATURE_KIND, unsigned.body()))

    @classmethod
    def decode(cls, body: bytes, signature: bytes) -> KeyRelease:
        reader = _Reader(body)
        reader.expect(RELEASE_DOMAIN)
        table_id = reader.field()
        hand_no = reader.integer(8)
        position, seat = reader.integer(4), reader.integer(1)
        key = points.scalar_from_bytes(reader.field(points.SCALAR_SIZE))
        reader.end()
        return cls(table_id, hand_no, position, seat, key, bytes(signature))

    def verify(self, identity_public_key: bytes) -> None:
        try:
            verify(identity_public_key, RELEASE_SIGNATURE_KIND, self.body(), self.signature)
        except BadSignature:
            raise BadReleaseSignature(self.seat, self.position) from None


def open_public(
    final_deck: Sequence[bytes],
    position: int,
    releases: Mapping[int, KeyRelease],
    identity_keys: Sequence[bytes],
    cards: CardIndex,
) -> int:
    """A public open: every seat's signed :class:`KeyRelease` for ``position`` → the card id.

    ``releases`` maps each seat to its release; every signature is checked. A wrong key gives
    :class:`NotACard`; which seat lied is settled at hand end by :func:`audit.check_open`.
    """
    seats = len(identity_keys)
    if sorted(releases) != list(range(seats)):
        raise BadParameters("a public open needs one release from every seat")
    for seat, release in releases.items():
        if (release.seat, release.position) != (seat, position):
            raise BadParameters(f"seat {seat}'s release is not its key for position {position}")
        release.verify(identity_keys[seat])
    return cards.open(final_deck[position], (r.key for r in releases.values()), position)


def verify_play(
    final_deck: Sequence[bytes],
    position: int,
    keys: Iterable[int],
    card_id: int,
    cards: CardIndex,
    player: int,
) -> None:
    """Check a played card: the keys ``player`` published for ``position`` open it to
    ``card_id``. :class:`NotACard` if they open it to no card (a key is wrong: settled at hand
    end), :class:`WrongCard` naming the player if they open it to another card (the player held
    every key, so it knew)."""
    if not 0 <= position < len(final_deck):
        raise BadParameters(f"position {position} is not in the deck")
    opened = cards.open(final_deck[position], keys, position)
    if opened != card_id:
        raise WrongCard(player, position, cards.labels[card_id], cards.labels[opened])
