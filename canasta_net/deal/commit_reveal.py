"""The commit-reveal deal, sans-io: which inputs are accepted when, and what they prove.

For each hand every seat draws a fresh secret seed and sends a commitment to it. Only once every
seat's commitment is fixed (and the host has signed and published the list) are seeds revealed;
the deck then depends on all seeds, so no seat can steer it unless every seat colludes. A seat that
withholds its seed forfeits, and the hand is never re-dealt: otherwise a seat could abort every
deal it disliked. ``docs/deal-commit-reveal.md`` specifies the bytes.

Nothing here does I/O, reads a clock or draws randomness by itself: randomness comes in through a
``random_bytes`` callable chosen by the caller (``os.urandom`` in real play). Every refused input
raises a :class:`DealError` with a stable ``code`` and leaves the round unchanged.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from canasta_net.deal import shuffle
from canasta_net.deal.shuffle import COMMITMENT_SIZE, MAX_SEATS, SEED_SIZE
from canasta_net.log.records import shown_number


class DealPhase(enum.Enum):
    """Where a :class:`DealRound` stands. DEALT and FORFEITED are final."""

    COLLECTING_COMMITMENTS = "collecting-commitments"
    COMMITTED = "committed"
    """Every commitment is fixed and no seed has been revealed yet."""
    COLLECTING_REVEALS = "collecting-reveals"
    DEALT = "dealt"
    FORFEITED = "forfeited"


class DealError(ValueError):
    """The deal protocol refused an input; nothing was changed."""

    code: ClassVar[str] = "deal-error"


class BadDealParameters(DealError):
    """A table id, hand number, seat count or deck size is out of range."""

    code = "bad-parameters"


class WrongPhase(DealError):
    """The input is not allowed at this point of the deal."""

    code = "wrong-phase"

    def __init__(self, phase: DealPhase, message: str) -> None:
        super().__init__(message)
        self.phase = phase


class UnknownSeat(DealError):
    """The seat number is not one of this table's seats."""

    code = "unknown-seat"

    def __init__(self, seat: int, seats: int) -> None:
        super().__init__(f"there is no seat {seat}: this deal has seats 0 to {seats - 1}")
        self.seat = seat


class DuplicateCommitment(DealError):
    """A seat sent a second commitment: the first one stands."""

    code = "duplicate-commitment"

    def __init__(self, seat: int) -> None:
        super().__init__(f"seat {seat} has already committed to a seed for this hand")
        self.seat = seat


class BadCommitmentSize(DealError):
    """A commitment is not a 32-byte SHA-256 digest."""

    code = "bad-commitment-size"

    def __init__(self, seat: int, size: int) -> None:
        super().__init__(
            f"seat {seat}'s commitment is {size} bytes; a commitment is {COMMITMENT_SIZE} bytes"
        )
        self.seat = seat


class SeedSize(DealError):
    """A seed is not exactly 32 bytes."""

    code = "seed-size"

    def __init__(self, seat: int, size: int) -> None:
        super().__init__(f"seat {seat}'s seed is {size} bytes; a seed is {SEED_SIZE} bytes")
        self.seat = seat


class RevealMismatch(DealError):
    """A revealed seed does not match the commitment its seat made: that seat is at fault."""

    code = "reveal-mismatch"

    def __init__(self, seat: int) -> None:
        super().__init__(f"seat {seat}'s revealed seed does not match its commitment")
        self.seat = seat


class AlreadyRevealed(DealError):
    """A seat that has already revealed its seed cannot reveal again or forfeit."""

    code = "already-revealed"

    def __init__(self, seat: int) -> None:
        super().__init__(f"seat {seat} has already revealed its seed for this hand")
        self.seat = seat


class HandNumberReused(DealError):
    """A hand number was already used at this table; hands are never re-dealt."""

    code = "hand-number-reused"

    def __init__(self, hand_no: int) -> None:
        super().__init__(f"hand {shown_number(hand_no)} has already been dealt at this table")
        self.hand_no = hand_no


def _check_hand_no(hand_no: int) -> None:
    if not 0 <= hand_no < 1 << 64:
        raise BadDealParameters(f"hand number {hand_no} is outside 0..2**64-1")


@dataclass(frozen=True)
class SeatSecret:
    """One seat's secret seed for one hand, and the commitment it publishes first.

    The seed is left out of ``repr`` so that it cannot leak into a log line by accident.
    """

    table_id: bytes
    hand_no: int
    seat: int
    seed: bytes = field(repr=False)

    def __post_init__(self) -> None:
        _check_hand_no(self.hand_no)
        if not 0 <= self.seat < MAX_SEATS:
            raise BadDealParameters(f"seat {self.seat} is outside 0..{MAX_SEATS - 1}")
        if len(self.seed) != SEED_SIZE:
            raise SeedSize(self.seat, len(self.seed))

    @classmethod
    def create(
        cls, table_id: bytes, hand_no: int, seat: int, random_bytes: Callable[[int], bytes]
    ) -> SeatSecret:
        """Draw a fresh seed from ``random_bytes`` (``os.urandom`` outside tests)."""
        return cls(table_id, hand_no, seat, bytes(random_bytes(SEED_SIZE)))

    @property
    def commitment(self) -> bytes:
        return shuffle.commitment(self.table_id, self.hand_no, self.seat, self.seed)

    def is_published_in(self, commitments: Sequence[bytes]) -> bool:
        """Whether the host's published list holds this seat's commitment at this seat.

        A peer reveals its seed only after this holds for the complete, signed list.
        """
        return self.seat < len(commitments) and commitments[self.seat] == self.commitment


class DealRound:
    """The commit-reveal deal of one hand at one table: the host's (and an auditor's) view.

    Seats are numbered ``0 .. seats-1``. Phases move forward only::

        COLLECTING_COMMITMENTS --(last commitment)--> COMMITTED --(first reveal)-->
        COLLECTING_REVEALS --(last reveal)--> DEALT

    and ``forfeit`` moves any unfinished round to FORFEITED. Every refused input raises a
    :class:`DealError` and leaves the round exactly as it was.
    """

    def __init__(self, table_id: bytes, hand_no: int, seats: int) -> None:
        _check_hand_no(hand_no)
        if not 1 <= seats <= MAX_SEATS:
            raise BadDealParameters(f"a deal needs 1 to {MAX_SEATS} seats, not {seats}")
        self.table_id = bytes(table_id)
        self.hand_no = hand_no
        self.seats = seats
        self._phase = DealPhase.COLLECTING_COMMITMENTS
        self._commitments: dict[int, bytes] = {}
        self._seeds: dict[int, bytes] = {}
        self._forfeited: set[int] = set()

    def __repr__(self) -> str:
        return (
            f"<DealRound hand {self.hand_no} of {self.seats} seats: {self._phase.value}, "
            f"{len(self._commitments)} committed, {len(self._seeds)} revealed>"
        )

    @property
    def phase(self) -> DealPhase:
        return self._phase

    @property
    def commitments_complete(self) -> bool:
        return len(self._commitments) == self.seats

    @property
    def forfeited_seats(self) -> tuple[int, ...]:
        """The seats that withheld their commitment or seed, in seat order."""
        return tuple(sorted(self._forfeited))

    def missing_commitments(self) -> list[int]:
        return [seat for seat in range(self.seats) if seat not in self._commitments]

    def missing_reveals(self) -> list[int]:
        """The seats whose seed has not been revealed (forfeited seats included)."""
        return [seat for seat in range(self.seats) if seat not in self._seeds]

    def _check_seat(self, seat: int) -> None:
        if not 0 <= seat < self.seats:
            raise UnknownSeat(seat, self.seats)

    def _refuse_if_forfeited(self) -> None:
        if self._phase is DealPhase.FORFEITED:
            seats = ", ".join(str(seat) for seat in self.forfeited_seats)
            noun = "seat" if len(self._forfeited) == 1 else "seats"
            raise WrongPhase(
                self._phase,
                f"the deal of hand {shown_number(self.hand_no)} was forfeited by {noun} {seats}",
            )

    def add_commitment(self, seat: int, commitment: bytes) -> None:
        """Record ``seat``'s commitment; the last one moves the round to COMMITTED."""
        self._check_seat(seat)
        if seat in self._commitments:
            raise DuplicateCommitment(seat)
        self._refuse_if_forfeited()
        if len(commitment) != COMMITMENT_SIZE:
            raise BadCommitmentSize(seat, len(commitment))
        self._commitments[seat] = bytes(commitment)
        if self.commitments_complete:
            self._phase = DealPhase.COMMITTED

    def commitment_of(self, seat: int) -> bytes | None:
        """``seat``'s commitment, if it has committed."""
        return self._commitments.get(seat)

    def commitment_list(self) -> list[bytes]:
        """All commitments in seat order: what the host signs and publishes before any reveal."""
        if not self.commitments_complete:
            raise WrongPhase(
                self._phase,
                f"the commitment list is not complete: seats {self.missing_commitments()} "
                "have not committed",
            )
        return [self._commitments[seat] for seat in range(self.seats)]

    def add_reveal(self, seat: int, seed: bytes) -> None:
        """Check ``seat``'s seed against its commitment and record it.

        Refused until every commitment is fixed: a seed seen early would let a later seat choose
        its own seed to steer the deck. A mismatch raises :class:`RevealMismatch` naming the seat.
        """
        self._check_seat(seat)
        if seat in self._seeds:
            raise AlreadyRevealed(seat)
        self._refuse_if_forfeited()
        if not self.commitments_complete:
            raise WrongPhase(
                self._phase, "no seed may be revealed before every seat's commitment is fixed"
            )
        if len(seed) != SEED_SIZE:
            raise SeedSize(seat, len(seed))
        seed = bytes(seed)
        if shuffle.commitment(self.table_id, self.hand_no, seat, seed) != self._commitments[seat]:
            raise RevealMismatch(seat)
        self._seeds[seat] = seed
        if len(self._seeds) == self.seats:
            self._phase = DealPhase.DEALT
        else:
            self._phase = DealPhase.COLLECTING_REVEALS

    def forfeit(self, seat: int) -> None:
        """Record that ``seat`` withheld its commitment or seed: the round ends FORFEITED.

        There is no deck and no re-deal of this hand number. Several seats may forfeit the same
        round; forfeiting a seat twice changes nothing.
        """
        self._check_seat(seat)
        if seat in self._seeds:
            raise AlreadyRevealed(seat)
        # A seat that has not revealed means the round cannot be DEALT here.
        self._forfeited.add(seat)
        self._phase = DealPhase.FORFEITED

    def seed_list(self) -> list[bytes]:
        """All seeds in seat order, published at hand end so that every peer can audit."""
        self._require_dealt("the seeds are not all revealed")
        return [self._seeds[seat] for seat in range(self.seats)]

    def deck_seed(self) -> bytes:
        self._require_dealt("the deck seed needs every seat's seed")
        return shuffle.deck_seed(self.table_id, self.hand_no, self.seed_list())

    def deck(self, n: int) -> list[int]:
        """The order of an ``n``-card deck: position p holds card ``deck[p]``."""
        self._require_dealt("there is no deck until every seat's seed is revealed")
        if n < 1:
            raise BadDealParameters(f"a deck needs at least one card, not {n}")
        return shuffle.shuffled_order(self.deck_seed(), n)

    def _require_dealt(self, reason: str) -> None:
        self._refuse_if_forfeited()
        if self._phase is not DealPhase.DEALT:
            raise WrongPhase(self._phase, f"{reason}: seats {self.missing_reveals()} are missing")


class HandNumbers:
    """The hand numbers used at one table, so that no hand is ever dealt twice.

    A forfeited hand's number stays used: re-dealing it would reward the seat that withheld.
    Built from the event log when a host resumes.
    """

    def __init__(self, table_id: bytes, used: Iterable[int] = ()) -> None:
        self.table_id = bytes(table_id)
        self._used = set(used)

    @property
    def used(self) -> frozenset[int]:
        return frozenset(self._used)

    def is_used(self, hand_no: int) -> bool:
        return hand_no in self._used

    def start_round(self, hand_no: int, seats: int) -> DealRound:
        """A new :class:`DealRound`; raises :class:`HandNumberReused` for a number already used."""
        if hand_no in self._used:
            raise HandNumberReused(hand_no)
        deal_round = DealRound(self.table_id, hand_no, seats)
        self._used.add(hand_no)
        return deal_round


def verify_deal(
    table_id: bytes,
    hand_no: int,
    commitments: Sequence[bytes],
    seeds: Sequence[bytes],
    n: int,
) -> list[int]:
    """The deck an auditor recomputes from published commitments and seeds, after checking them.

    Runs the same :class:`DealRound` the host runs, so it checks exactly the same things. Raises
    :class:`RevealMismatch` naming the first seat (in seat order) whose seed does not match.
    """
    if len(commitments) != len(seeds):
        raise BadDealParameters(
            f"{len(commitments)} commitments but {len(seeds)} seeds: one of each per seat"
        )
    deal_round = DealRound(table_id, hand_no, len(commitments))
    for seat, seat_commitment in enumerate(commitments):
        deal_round.add_commitment(seat, seat_commitment)
    for seat, seed in enumerate(seeds):
        deal_round.add_reveal(seat, seed)
    return deal_round.deck(n)
