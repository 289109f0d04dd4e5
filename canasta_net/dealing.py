"""How a hand's deck comes to be at the table: the seam where a deal mode plugs in.

:class:`HostTable` knows only :class:`HandDealer`: what the deal waits for from each seat, how it
takes a seat's signed deal message (validating it and saying what the log records), when the deck
is ready, and what is published at the hand's end. ``commit-reveal`` is the mode built today
(:class:`CommitRevealDealer`); the host-blind mode (``docs/blind-deal.md``) will be a second
implementation of the same protocol.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from . import records as R
from .commit_reveal import DealError, DealRound
from .shuffle import SEED_SIZE
from .shuffle import commitment as make_commitment

COMMITTING = "committing"
REVEALING = "revealing"
DEALT = "dealt"


class DealRefused(ValueError):
    """A seat's deal message is refused; ``code`` is stable."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class DealStep:
    """What one accepted deal message makes the table journal: a private payload for the
    author's own record, and further host records (e.g. the fixed list of commitments)."""

    private: dict[int, bytes] | None = None
    follow: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


class HandDealer(Protocol):
    """One hand's deal, as the table drives it."""

    mode: str

    @property
    def stage(self) -> str:
        """``committing``, ``revealing`` (the table's dealing phases) or ``dealt``."""
        ...

    def needs(self, seat: int) -> str:
        """What the deal waits for from ``seat``: a message type (``commit``...) or ``wait``."""
        ...

    def accept(
        self,
        seat: int,
        type_: str,
        fields: dict[str, Any],
        seed: bytes | None,
        salt: Callable[[], bytes],
    ) -> DealStep:
        """Take a seat's verified, in-sequence deal message, or raise DealRefused (no change).
        ``salt()`` gives a fresh salt for a private payload."""
        ...

    def deck(self, size: int) -> list[int]:
        """The deck order, once ``stage`` is ``dealt``."""
        ...

    def end_of_hand(self) -> tuple[str, dict[str, Any]]:
        """The record that opens the hand's secrets for every auditor."""
        ...

    def forfeit(self, seat: int) -> None: ...


class CommitRevealDealer:
    """Every seat commits to a seed, the host fixes the list, the seeds are revealed to it."""

    mode = "commit-reveal"

    def __init__(
        self,
        round_: DealRound,
        table_id: bytes,
        hand_no: int,
        list_fields: Callable[[], dict[str, Any]],
    ) -> None:
        self.round = round_
        self.table_id = table_id
        self.hand_no = hand_no
        self.list_fields = list_fields  # dealer and minimums, written with the commitments

    @property
    def stage(self) -> str:
        if not self.round.commitments_complete:
            return COMMITTING
        return REVEALING if self.round.missing_reveals() else DEALT

    def needs(self, seat: int) -> str:
        if self.stage == COMMITTING:
            return "commit" if seat in self.round.missing_commitments() else "wait"
        if self.stage == REVEALING:
            return "reveal" if seat in self.round.missing_reveals() else "wait"
        return "wait"

    def _require(self, stage: str) -> None:
        if self.stage != stage:
            raise DealRefused("wrong-phase", f"the table is {self.stage}, not {stage}")

    def accept(
        self,
        seat: int,
        type_: str,
        fields: dict[str, Any],
        seed: bytes | None,
        salt: Callable[[], bytes],
    ) -> DealStep:
        try:
            if type_ == "commit":
                return self._commit(seat, fields)
            if type_ == "reveal":
                return self._reveal(seat, fields, seed, salt)
        except DealError as e:
            raise DealRefused(e.code, str(e)) from None
        raise DealRefused("bad-message", f"{type_!r} is not a deal message")

    def _commit(self, seat: int, fields: dict[str, Any]) -> DealStep:
        self._require(COMMITTING)
        self.round.add_commitment(seat, R.typed(fields, "commitment", bytes, "commit"))
        step = DealStep()
        if self.round.commitments_complete:
            step.follow.append(self.commitments_record())
        return step

    def commitments_record(self) -> tuple[str, dict[str, Any]]:
        """The host's fixed list of commitments, written before any seed is released."""
        return R.COMMITMENTS, {
            "hand": self.hand_no,
            **self.list_fields(),
            "commitments": self.round.commitment_list(),
        }

    def _reveal(
        self, seat: int, fields: dict[str, Any], seed: bytes | None, salt: Callable[[], bytes]
    ) -> DealStep:
        self._require(REVEALING)
        if not isinstance(seed, bytes) or len(seed) != SEED_SIZE:
            raise DealRefused("seed-size", "a reveal carries the 32-byte seed")
        if R.typed(fields, "commitment", bytes, "reveal") != make_commitment(
            self.table_id, self.hand_no, seat, seed
        ):
            raise DealRefused("reveal-mismatch", f"seat {seat}'s seed does not match")
        self.round.add_reveal(seat, seed)
        return DealStep(private={seat: R.private_payload(salt(), seed=seed)})

    def deck(self, size: int) -> list[int]:
        return self.round.deck(size)

    def end_of_hand(self) -> tuple[str, dict[str, Any]]:
        return R.SEEDS, {"hand": self.hand_no, "seeds": self.round.seed_list()}

    def forfeit(self, seat: int) -> None:
        self.round.forfeit(seat)
