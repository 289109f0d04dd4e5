"""One hand of a match as a protocol: the same object for the host, every seat and the auditor.

A deal mode is one class behind :class:`HandProtocol` (h11's rule: one set of transition rules,
whoever drives them). The host *takes* each seat's verified signed message and journals the
records the hand says to write; a seat or an auditor *follows* the host's log record by record,
and the same hand checks that every record the host wrote is the one it would have written.
Callers never branch on the deal mode: they ask the hand.

``commit-reveal`` (:mod:`.commit_reveal`): every seat commits to a seed, the host fixes the list,
the seeds are revealed to the host, which deals. ``blind`` (:mod:`.blind`): the host-blind deal
of ``docs/blind-deal.md``, where the host never holds a hidden card.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from ..games import AnyGameState, Game, GameMatch
from ..log import StoredRecord


class HandRefused(ValueError):
    """A seat's message is refused by the hand; ``code`` is stable and nothing changed.
    ``params`` and ``variant`` are the engine's (see :class:`~canasta_net.errors.IllegalAction`):
    None where the refusal is not the engine's. ``proves``: the signed message itself shows that
    a seat deviated from the deal (a stage whose proof fails, a key that is not the seat's), so
    the host ends the match against that seat at once, with the message as evidence: the
    message's own seat, or ``culprit`` where the message shows another seat's deviation (a
    recipient's exposure of a wrong sealed key names its sender)."""

    def __init__(
        self,
        code: str,
        message: str,
        params: Mapping[str, str | int] | None = None,
        variant: str | None = None,
        *,
        proves: bool = False,
        culprit: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.params = params
        self.variant = variant
        self.proves = proves
        self.culprit = culprit


class HandFault(ValueError):
    """A record of the host's log is not what the hand would have written; ``seat`` names the
    seat to blame where one can be named (None: the host), ``index`` the false record where it
    is not the one being followed (a record held until the hand's secrets were published)."""

    def __init__(
        self, code: str, reason: str, seat: int | None = None, index: int | None = None
    ) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason
        self.seat = seat
        self.index = index


class Violation(Exception):
    """The hand-end check caught a seat breaking the protocol or a rule (-1: no seat named)."""

    def __init__(self, seat: int, code: str, reason: str) -> None:
        super().__init__(f"seat {seat}: {code}: {reason}")
        self.seat = seat
        self.code = code
        self.reason = reason


@dataclass
class Entry:
    """A record the hand asks the host to write: its kind, its public fields, and private data
    for some seats (salted and packed by the host, one payload per seat)."""

    kind: str
    fields: dict[str, Any]
    private: dict[int, dict[str, Any]] = field(default_factory=dict)


@dataclass
class Step:
    """What taking one seat's message makes the host write: public fields and private data on
    the message's own record, then further records (the fixed list of commitments, the deal)."""

    fields: dict[str, Any] = field(default_factory=dict)
    private: dict[int, dict[str, Any]] = field(default_factory=dict)
    follow: list[Entry] = field(default_factory=list)


Applied = Callable[[StoredRecord, AnyGameState], None]
"""Told each hand record once its game content is checked, with the hand's state just after it
(a deal, an action, the hand's end). A seat's copy of a hand may be checked only when the hand's
secrets are published, so records can be reported late, but always in order."""


class HandProtocol(Protocol):
    """One hand, driven identically by the host (``take``) and by a follower (``follow``)."""

    mode: ClassVar[str]
    kinds: ClassVar[frozenset[str]]  # the record kinds the hand follows (hand-end among them)
    # the seats' messages the host passes on to the other seats before its own check (wire
    # ``ahead``), which the followers check beside the host (``check_ahead``)
    ahead_kinds: ClassVar[frozenset[str]]
    host_sees_cards: ClassVar[bool]  # whether the host's state holds the real cards
    hand_no: int
    dealer: int

    @staticmethod
    def check_game(game: Game) -> None:
        """Raise ValueError (one sentence) if this deal mode cannot deal ``game``."""
        ...

    @property
    def state(self) -> AnyGameState | None:
        """The engine's state the host validates plays with (None before the deal)."""
        ...

    @property
    def begun(self) -> bool:
        """Whether the hand is under way in the log (its deal has started)."""
        ...

    @property
    def play_over(self) -> bool:
        """Whether the play is over and the hand only waits to be finished."""
        ...

    @property
    def dealing(self) -> bool:
        """Whether the deal is still under way (no card is in play yet)."""
        ...

    @property
    def published(self) -> bool:
        """Whether the hand's secrets record has been written or followed."""
        ...

    def needs(self, seat: int) -> str:
        """What the hand waits for from ``seat``: a message type (``commit``, ``act``...) or
        ``wait``."""
        ...

    def prompt_fields(self, seat: int, need: str) -> dict[str, Any]:
        """Extra fields for the host's prompt (the legal actions, where the host can list them)."""
        ...

    def take(self, seat: int, type_: str, fields: dict[str, Any], secret: bytes | None) -> Step:
        """Take a seat's verified, in-sequence message, or raise :class:`HandRefused`."""
        ...

    def finish(self) -> tuple[AnyGameState, Entry]:
        """The final state to score and the record publishing the hand's secrets, or raise
        :class:`Violation` naming the seat that broke the protocol."""
        ...

    def follow(self, record: StoredRecord, applied: Applied) -> None:
        """Check one hand record of the host's log; raise :class:`HandFault` if it is false."""
        ...

    def stage(self) -> tuple[str, str]:
        """Where the hand stands, for a log that stops in it: ``not-started``, ``dealing``,
        ``revealing`` (the seeds the deal waits for), ``playing`` or ``over``, and a phrase
        saying how far the deal has come (``3 of 4 commitments``)."""
        ...

    def unwritten(self) -> list[Entry]:
        """For a host resuming from its own log: the records the hand asked for that the log
        does not hold (the host crashed after a seat's record, before its own)."""
        ...

    def pending(self) -> int:
        """Records followed whose check waits for the hand's secrets."""
        ...

    def catch_up(self, more: Callable[[], bool] | None = None) -> bool:
        """Check the records that waited for the hand's secrets, once the record publishing
        them was followed (:meth:`follow` only checks the secrets themselves); raise
        :class:`HandFault` at a false one. ``more`` is asked after each record whether to go
        on now (None: always): False stops there, and a later call goes on. True once every
        held record is checked (at once where nothing waits)."""
        ...

    def holds_secret(self, seat: int) -> bool:
        """Whether ``seat`` holds a secret of this hand that only it can give: then no other key
        (a stand-in, the player reclaiming) may take the seat before the hand is finished."""
        ...

    def forfeitable(self, seat: int) -> bool:
        """Whether ``seat`` withholding its part now ends the match against it."""
        ...

    def forfeit(self, seat: int) -> None: ...

    def rekey(self, seat: int, key: bytes) -> None:
        """From now on ``seat`` signs this hand's messages with ``key``."""
        ...

    def violation(self) -> Violation | None:
        """After the hand's secrets are all in: the violation its end check finds, if any."""
        ...

    def proven_deviation(self, seat: int, type_: str, fields: dict[str, Any]) -> HandRefused | None:
        """A follower checks a forfeit's evidence, ``seat``'s signed message: the refusal that
        proves a seat deviated (``proves`` set; ``culprit``, where it is not ``seat``), or None
        if the message proves nothing. The hand may have taken the message when it proves
        nothing (the forfeit is then false)."""
        ...

    def check_ahead(self, seat: int, type_: str, fields: dict[str, Any]) -> bool:
        """A follower that trusts its own work checks ``seat``'s message the hand will wait
        for, before its record comes (a blind-v2 stage output the host passed on: wire
        ``ahead``), so that the record with exactly these bytes needs no second check. Changes
        nothing in the hand; whether it checked (a failure, or anything else, is left to the
        record)."""
        ...


@dataclass(frozen=True)
class HandSetup:
    """What every hand of a match starts from."""

    game: Game
    match: GameMatch
    table_id: bytes
    hand_no: int
    keys: Sequence[bytes]  # each seat's signing key now
    # the follower may skip re-checking what this very process produced and checked as it did
    # (a seat's own blind-v2 stage outputs coming back in its copy of the log, or the stages of
    # the seats a host plays); the audit and ``replay_log`` leave it off and check everything
    trust_own_work: bool = False


@dataclass(frozen=True)
class HandContext:
    """What a seat's view of a new hand starts from: the dealer, the initial-meld minimums and
    each seat's signing key now (a stand-in's, while one holds a seat)."""

    dealer: int
    minimums: Sequence[int]
    keys: Sequence[bytes]
