"""A seat's side of the table protocol, sans-io: its secrets, its signatures, its sequence.

``SeatSigner`` makes every message a seat sends: commitments and seeds for each hand's deal,
signed actions and chat, and checkpoint signatures. It numbers the seat's messages (``aseq``) and
names the latest log record the seat has seen (``head``), which the host checks.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Callable

from cryptography.hazmat.primitives import serialization

from . import records as R
from .commit_reveal import SeatSecret
from .identity import Identity
from .shuffle import insecure_seed

ACTION_KIND = "seat-action"
CHECKPOINT_KIND = "checkpoint"


def keyed_seeds(identity: Identity, table_id: bytes) -> Callable[[int], bytes]:
    """Per-hand seeds derived from a seat's private key: secret to everyone else until they are
    revealed, and the same again after a crash, so a resumed host's bots can reveal what they
    committed to before it."""
    secret = identity.private_key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )

    def seed(hand: int) -> bytes:
        message = b"canasta-net seat seed\x00" + table_id + hand.to_bytes(8, "big")
        return hmac.new(secret, message, hashlib.sha256).digest()

    return seed


class SeatSigner:
    def __init__(
        self,
        identity: Identity,
        seat: int,
        table_id: bytes,
        head: bytes,
        *,
        random_bytes: Callable[[int], bytes] = os.urandom,
        insecure_seed_value: int | str | None = None,
        aseq: int = 0,
        seed_source: Callable[[int], bytes] | None = None,
    ) -> None:
        self.identity = identity
        self.seat = seat
        self.table_id = table_id
        self.head = head
        self.aseq = aseq
        self.random_bytes = random_bytes
        self.insecure_seed_value = insecure_seed_value
        self.seed_source = seed_source
        self.secrets: dict[int, SeatSecret] = {}

    def observe(self, record_hash: bytes) -> None:
        """The seat has seen (and verified) a record with this hash: it is the new head."""
        self.head = record_hash

    def _sign(self, hand: int, type_: str, **fields: object) -> tuple[bytes, bytes]:
        act = R.make_act(self.table_id, hand, self.seat, self.aseq, self.head, type_, **fields)
        self.aseq += 1
        return act, self.identity.sign(ACTION_KIND, act)

    def secret(self, hand: int) -> SeatSecret:
        if hand not in self.secrets:
            if self.insecure_seed_value is not None:
                seed = insecure_seed(self.insecure_seed_value, self.table_id, hand, self.seat)
                self.secrets[hand] = SeatSecret(self.table_id, hand, self.seat, seed)
            elif self.seed_source is not None:
                seed = self.seed_source(hand)
                self.secrets[hand] = SeatSecret(self.table_id, hand, self.seat, seed)
            else:
                self.secrets[hand] = SeatSecret.create(
                    self.table_id, hand, self.seat, self.random_bytes
                )
        return self.secrets[hand]

    def sign(self, hand: int, type_: str, **fields: object) -> tuple[bytes, bytes]:
        """Sign any message (the blind deal's ``stage``, ``keys``...) with the next sequence."""
        return self._sign(hand, type_, **fields)

    def commit(self, hand: int) -> tuple[bytes, bytes]:
        return self._sign(hand, "commit", commitment=self.secret(hand).commitment)

    def reveal(self, hand: int) -> tuple[bytes, bytes, bytes]:
        secret = self.secret(hand)
        act, sig = self._sign(hand, "reveal", commitment=secret.commitment)
        return act, sig, secret.seed

    def action(self, hand: int, text: str) -> tuple[bytes, bytes]:
        return self._sign(hand, "action", action=text)

    def chat(self, hand: int, text: str) -> tuple[bytes, bytes]:
        return self._sign(hand, "chat", text=text)

    def sign_checkpoint(self, msg: bytes) -> bytes:
        return self.identity.sign(CHECKPOINT_KIND, msg)
