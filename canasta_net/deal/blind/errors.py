"""Errors of the blind deal. Each has a stable ``code`` and, when the fault can be pinned on one
seat, ``culprit``: the seat to name (``None`` when the input cannot be attributed to a seat, for
example a message whose signature does not verify and that may have been altered on the way).
"""

from __future__ import annotations

from typing import ClassVar


class BlindError(ValueError):
    """The blind deal refused an input."""

    code: ClassVar[str] = "blind-error"
    culprit: int | None = None


class BadParameters(BlindError):
    """A table id, hand number, seat, position, deck size or label list is out of range."""

    code = "bad-parameters"


class InvalidPoint(BlindError):
    """A 32-byte value is not the x coordinate of a point on P-256."""

    code = "invalid-point"


class BadScalar(BlindError):
    """A key is not 32 bytes holding an integer in 1 .. n-1."""

    code = "bad-scalar"


def _stage_name(stage: int, seat: int | None) -> str:
    if seat is None:
        return "the initial deck"
    return f"seat {seat}'s stage-{stage} output"


class BadDeck(BlindError):
    """A deck handed to a stage is malformed: the seat that produced it (``culprit``) is at fault.

    ``stage`` and ``culprit`` name the faulty output: ``(1, s)`` is seat s's stage-1 output,
    ``(2, s)`` its stage-2 output, and ``(0, None)`` the initial deck (which every seat computes
    itself, so it is never anyone's fault but a bug's). ``checked_by`` is the seat that found it
    (``None`` for the host or an auditor).
    """

    code = "bad-deck"

    def __init__(
        self, stage: int, culprit: int | None, reason: str, checked_by: int | None = None
    ) -> None:
        by = "" if checked_by is None else f" (found by seat {checked_by})"
        super().__init__(f"{_stage_name(stage, culprit)} is bad: {reason}{by}")
        self.stage = stage
        self.culprit = culprit
        self.reason = reason
        self.checked_by = checked_by


class WrongDeckSize(BadDeck):
    code = "wrong-deck-size"


class InvalidCiphertext(BadDeck):
    """One entry of the deck is not a valid P-256 x coordinate; ``index`` says which."""

    code = "invalid-ciphertext"

    def __init__(
        self, stage: int, culprit: int | None, index: int, checked_by: int | None = None
    ) -> None:
        super().__init__(stage, culprit, f"entry {index} is not a point on P-256", checked_by)
        self.index = index


class DuplicateCiphertext(BadDeck):
    """Two entries of the deck are equal: a card was copied over another."""

    code = "duplicate-ciphertext"

    def __init__(
        self,
        stage: int,
        culprit: int | None,
        first: int,
        second: int,
        checked_by: int | None = None,
    ) -> None:
        super().__init__(stage, culprit, f"entries {first} and {second} are equal", checked_by)
        self.indexes = (first, second)


class NotACard(BlindError):
    """Opening a position with the given keys gave a point that is no card: some key was wrong.

    Which seat's key was wrong is settled by the hand-end audit (:func:`check_open`), since a
    single key cannot be checked before the seeds are revealed.
    """

    code = "not-a-card"

    def __init__(self, position: int) -> None:
        super().__init__(f"the keys for position {position} do not open it to a card")
        self.position = position


class BadKeySignature(BlindError):
    """A key message's signature does not verify under its claimed sender's identity key.

    Not attributable: whoever altered the message is unknown (the router logged the hash of what
    it received, signed by the sender, so a router that altered it is caught by the log).
    """

    code = "bad-key-signature"

    def __init__(self, claimed_sender: int, position: int) -> None:
        super().__init__(
            f"the key message for position {position} claimed to be from seat {claimed_sender} "
            "is not signed by that seat"
        )
        self.claimed_sender = claimed_sender
        self.position = position


class SealedKeyError(BlindError):
    """A sealed key does not decrypt (AES-GCM authentication failed) or holds no valid key.

    When the message was signed by its sender, the sender is the culprit: at hand end anyone can
    re-derive both seats' X25519 keys from the revealed seeds and confirm.
    """

    code = "sealed-key-error"

    def __init__(
        self, sender: int, recipient: int, position: int, culprit: int | None, reason: str
    ) -> None:
        super().__init__(
            f"the key sealed by seat {sender} for seat {recipient}, position {position}: {reason}"
        )
        self.sender = sender
        self.recipient = recipient
        self.position = position
        self.culprit = culprit


class BadStageSignature(BlindError):
    """A stage output's signature does not verify under its seat's identity key."""

    code = "bad-stage-signature"

    def __init__(self, stage: int, seat: int) -> None:
        super().__init__(f"seat {seat}'s stage-{stage} output is not signed by seat {seat}")
        self.stage = stage
        self.seat = seat


class BadReleaseSignature(BlindError):
    """A published key's signature does not verify under its seat's identity key."""

    code = "bad-release-signature"

    def __init__(self, seat: int, position: int) -> None:
        super().__init__(f"the key published for position {position} is not signed by seat {seat}")
        self.seat = seat
        self.position = position


class RevealMismatch(BlindError):
    """A revealed seed does not match the seat's commitment (or announced X25519 key)."""

    code = "reveal-mismatch"

    def __init__(self, seat: int, what: str = "commitment") -> None:
        super().__init__(f"seat {seat}'s revealed seed does not match its {what}")
        self.culprit = seat


class StageMismatch(BlindError):
    """The audit: a published stage output differs from the one its seat's seed gives."""

    code = "stage-mismatch"

    def __init__(self, stage: int, seat: int, first_position: int | None) -> None:
        where = "" if first_position is None else f" (first at position {first_position})"
        super().__init__(
            f"seat {seat}'s published stage-{stage} output differs from the one its seed "
            f"gives{where}"
        )
        self.stage = stage
        self.culprit = seat
        self.first_position = first_position


class WrongPublishedKey(BlindError):
    """The audit: a key a seat published or sealed for a position is not the key its seed gives."""

    code = "wrong-key"

    def __init__(self, seat: int, position: int) -> None:
        super().__init__(f"seat {seat}'s key for position {position} is not the one its seed gives")
        self.culprit = seat
        self.position = position


class WrongCard(BlindError):
    """A played card's keys open its position to another card than the one the player named."""

    code = "wrong-card"

    def __init__(self, player: int, position: int, claimed: str, actual: str) -> None:
        super().__init__(
            f"seat {player} played {claimed} from position {position}, which holds {actual}"
        )
        self.culprit = player
        self.position = position


class BadStageProof(BlindError):
    """A stage output whose proof does not verify (deal version 2): the seat that produced it is
    named at once, before any key is released. ``checked_by`` is the seat that found it (``None``
    for the host or an auditor)."""

    code = "bad-stage-proof"

    def __init__(
        self, stage: int, culprit: int, reason: str, checked_by: int | None = None
    ) -> None:
        by = "" if checked_by is None else f" (found by seat {checked_by})"
        super().__init__(f"seat {culprit}'s stage-{stage} output is refused: {reason}{by}")
        self.stage = stage
        self.culprit = culprit
        self.reason = reason
        self.checked_by = checked_by
