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
from typing import Protocol

from cryptography.hazmat.primitives import serialization

from ..deal.commit_reveal import SeatSecret
from ..deal.shuffle import insecure_seed
from ..identity import Identity
from ..log import records as R

ACTION_KIND = "seat-action"
CHECKPOINT_KIND = "checkpoint"


class SeedKeeper(Protocol):
    """Where a seat keeps its seeds until they are public (``seed_store.TableSeeds``)."""

    def get(self, hand: int) -> bytes | None: ...

    def put(self, hand: int, seed: bytes) -> None: ...


class SeedLost(Exception):
    """The seat committed to a seed for this hand and no longer has it."""

    def __init__(self, hand: int) -> None:
        super().__init__(
            f"the seed this seat committed to for hand {R.shown_number(hand)} is lost "
            "(the process that drew it ended and no seed store kept it)"
        )
        self.hand = hand


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
        seed_keeper: SeedKeeper | None = None,
    ) -> None:
        self.identity = identity
        self.seat = seat
        self.table_id = table_id
        self.head = head
        self.aseq = aseq
        self.random_bytes = random_bytes
        self.insecure_seed_value = insecure_seed_value
        self.seed_source = seed_source
        self.seed_keeper = seed_keeper
        self.secrets: dict[int, SeatSecret] = {}

    def observe(self, record_hash: bytes) -> None:
        """The seat has seen (and verified) a record with this hash: it is the new head."""
        self.head = record_hash

    def _sign(self, hand: int, type_: str, **fields: object) -> tuple[bytes, bytes]:
        act = R.make_act(self.table_id, hand, self.seat, self.aseq, self.head, type_, **fields)
        self.aseq += 1
        return act, self.identity.sign(ACTION_KIND, act)

    def secret(self, hand: int) -> SeatSecret:
        """The secret to commit to for this hand: drawn (and kept) the first time it is asked.

        A fresh seed is written to the seed keeper before it is returned, so its commitment is
        never sent for a seed that a crash could lose. A kept seed is never committed to again:
        after a restart, a new commitment means a new seed (see ``known_secret``)."""
        if hand not in self.secrets:
            if self.insecure_seed_value is not None:
                seed = insecure_seed(self.insecure_seed_value, self.table_id, hand, self.seat)
                self.secrets[hand] = SeatSecret(self.table_id, hand, self.seat, seed)
            elif self.seed_source is not None:
                seed = self.seed_source(hand)
                self.secrets[hand] = SeatSecret(self.table_id, hand, self.seat, seed)
            else:
                fresh = SeatSecret.create(self.table_id, hand, self.seat, self.random_bytes)
                if self.seed_keeper is not None:
                    self.seed_keeper.put(hand, fresh.seed)
                self.secrets[hand] = fresh
        return self.secrets[hand]

    def known_secret(self, hand: int) -> SeatSecret | None:
        """The secret this seat committed to for the hand, if it still has it: in memory,
        re-derived (keyed or test seeds), or read back from the seed keeper after a restart."""
        if hand in self.secrets or self.insecure_seed_value is not None or self.seed_source:
            return self.secret(hand)
        seed = self.seed_keeper.get(hand) if self.seed_keeper is not None else None
        if seed is None:
            return None
        self.secrets[hand] = SeatSecret(self.table_id, hand, self.seat, seed)
        return self.secrets[hand]

    def sign(self, hand: int, type_: str, **fields: object) -> tuple[bytes, bytes]:
        """Sign any message (the blind deal's ``stage``, ``keys``...) with the next sequence."""
        return self._sign(hand, type_, **fields)

    def commit(self, hand: int) -> tuple[bytes, bytes]:
        return self._sign(hand, "commit", commitment=self.secret(hand).commitment)

    def reveal(self, hand: int) -> tuple[bytes, bytes, bytes]:
        """Sign the reveal of the seed committed to; raises ``SeedLost`` if it is gone."""
        secret = self.known_secret(hand)
        if secret is None:
            raise SeedLost(hand)
        act, sig = self._sign(hand, "reveal", commitment=secret.commitment)
        return act, sig, secret.seed

    def action(self, hand: int, text: str) -> tuple[bytes, bytes]:
        return self._sign(hand, "action", action=text)

    def chat(self, hand: int, text: str) -> tuple[bytes, bytes]:
        return self._sign(hand, "chat", text=text)

    def sign_checkpoint(self, msg: bytes) -> bytes:
        return self.identity.sign(CHECKPOINT_KIND, msg)
