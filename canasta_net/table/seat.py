"""One seat's driver, sans-io: the same for a remote peer, the host's own seats and bots, and
the local table.

A :class:`SeatAgent` holds what only the seat holds: its key and message numbering
(:class:`~canasta_net.seat.SeatSigner`), its secrets for each hand and where they are kept, and
its own view of the hand. It follows every record of the log as it comes (:meth:`observe`) and
answers what the table needs from it (:meth:`reply`): a signed message ready to send, or a
:class:`Decision` for whoever plays the seat (a person, a bot), which :meth:`act` then signs.

The part of a seat that depends on the deal mode is one :class:`SeatPart` per mode:
:class:`CommitRevealPart` (commit to a seed, reveal it once the host's signed list holds the
commitment) and :class:`BlindPart` (the host-blind deal, ``docs/blind-deal.md``: the seat's own
secrets and cards). Nobody outside this module branches on the deal mode.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..deal.blind.errors import BlindError
from ..deal.blind.hand import BlindRefused
from ..hand import HandContext
from ..hand.blind import MESSAGE_TYPES
from ..identity import Identity
from ..log import RecordInfo
from ..log import records as R
from ..log.seed_store import SeedStoreError
from .blind_seat import Background, BlindSeat
from .signer import SeatSigner, SeedKeeper, SeedLost

Message = dict[str, Any]  # a wire message from the seat to the host (``docs/wire-protocol.md``)


class SeatProblem(Exception):
    """The seat cannot go on at this table: ``host_fault`` when the host broke the protocol
    (nothing it sends can be trusted), otherwise the seat itself cannot play (a lost secret)."""

    def __init__(self, text: str, *, host_fault: bool) -> None:
        super().__init__(text)
        self.text = text
        self.host_fault = host_fault


@dataclass(frozen=True)
class Decision:
    """The seat must choose an action: the legal ones in canonical text, the seat's own view of
    the table where it has one (else the host's view applies), and the engine's state as the seat
    sees it, for a bot that reads it directly (None where the seat has none)."""

    hand: int
    legal: list[str]
    view: dict[str, Any] | None
    state: Any


class ObservedRecord(Protocol):
    """A record a seat follows: a verified ``StoredRecord`` at a remote seat, a
    :class:`WrittenRecord` at a seat the host plays (decoded only if a seat looks inside)."""

    @property
    def kind(self) -> str: ...

    @property
    def fields(self) -> dict[str, Any]: ...

    @property
    def action(self) -> dict[str, Any] | None: ...

    @property
    def hash(self) -> bytes: ...


class SeatPart(Protocol):
    """What a seat does that depends on the deal mode."""

    def observe(self, record: ObservedRecord) -> None:
        """A record of the log (its public fields, its signed message if any)."""
        ...

    def answer(self, need: str, hand: int) -> tuple[str, dict[str, Any], bytes | None] | None:
        """The message (type, fields, secret sent beside it) for a deal step, or None if the
        seat's view of the hand is not there yet (the host prompts again). Raises SeatProblem."""
        ...

    def decision(self, hand: int, prompt: Mapping[str, Any]) -> Decision | None: ...

    def wire_type(self, type_: str) -> str:
        """The wire message (``docs/wire-protocol.md``) that carries a signed message of
        ``type_``."""
        ...

    def action_fields(self, hand: int, text: str) -> dict[str, Any]:
        """The signed fields of the action ``text`` (raises ValueError or IllegalAction where the
        seat itself can tell that the action is not legal)."""
        ...

    def view(self) -> dict[str, Any] | None:
        """The seat's own view of the hand, where the host cannot give it."""
        ...

    def stop_keeping_seeds(self) -> None:
        """The seed store failed: keep this hand's secret in memory only."""
        ...

    def exposure(self) -> tuple[str, int, dict[str, Any]] | None:
        """Once, a message the seat must send unprompted (type, hand, fields): at a ``blind-v2``
        table, the exposure proving that a key sealed to it is wrong."""
        ...

    def work_ahead(self, kind: str, action: dict[str, Any] | None, run: Background) -> None:
        """A record (or a seat's message) about to be checked, its kind and signed message:
        start, with ``run``, work the seat will need once it is (a ``blind-v2`` seat's next
        stage)."""
        ...

    def work_before(self, hand: int, run: Background) -> None:
        """The next hand the seat will be dealt is ``hand``: start, with ``run``, the part of it
        that needs nobody's message (a ``blind-v2`` seat's secrets and proof starts, and seat
        0's first stage)."""
        ...


class CommitRevealPart:
    """A seat at a commit-reveal table: its seed per hand, committed to, revealed to the host once
    the host's signed list of commitments holds it. The host knows the cards and lists the legal
    actions; ``state`` gives a bot inside the host the engine's state to read its own hand."""

    def __init__(self, signer: SeatSigner, state: Callable[[], Any] | None = None) -> None:
        self.signer = signer
        self.state = state
        self.listed: dict[int, list[bytes]] = {}  # each hand's signed list of commitments

    def observe(self, record: ObservedRecord) -> None:
        if record.kind == R.COMMITMENTS:
            hand, listed = record.fields.get("hand"), record.fields.get("commitments")
            if isinstance(hand, int) and isinstance(listed, list):
                self.listed = {hand: listed}

    def answer(self, need: str, hand: int) -> tuple[str, dict[str, Any], bytes | None] | None:
        if need == "commit":
            return "commit", {"commitment": self.signer.secret(hand).commitment}, None
        if need != "reveal":
            return None
        try:
            secret = self.signer.known_secret(hand)
        except SeedStoreError:
            secret = None
        if secret is None:
            raise SeatProblem(
                f"cannot reveal: {SeedLost(hand)}; the table records a forfeit", host_fault=False
            )
        if not secret.is_published_in(self.listed.get(hand, [])):
            raise SeatProblem(
                "asked to reveal before the signed list holds my commitment", host_fault=True
            )
        return "reveal", {"commitment": secret.commitment}, secret.seed

    def wire_type(self, type_: str) -> str:
        return type_  # ``commit`` and ``reveal`` have wire messages of their own

    @classmethod
    def for_seat(cls, setup: SeatSetup) -> CommitRevealPart:
        return cls(setup.signer, setup.state)

    def decision(self, hand: int, prompt: Mapping[str, Any]) -> Decision:
        legal = [str(text) for text in prompt.get("legal", [])]
        return Decision(hand, legal, None, None if self.state is None else self.state())

    def action_fields(self, hand: int, text: str) -> dict[str, Any]:
        return {"action": text}  # the host checks it against the engine

    def view(self) -> dict[str, Any] | None:
        return None

    def stop_keeping_seeds(self) -> None:
        self.signer.seed_keeper = None

    def exposure(self) -> tuple[str, int, dict[str, Any]] | None:
        return None

    def work_ahead(self, kind: str, action: dict[str, Any] | None, run: Background) -> None:
        pass

    def work_before(self, hand: int, run: Background) -> None:
        pass


class BlindPart:
    """A seat at a blind-dealt table: its own secrets and cards (:class:`BlindSeat`)."""

    def __init__(self, seat: BlindSeat) -> None:
        self.seat = seat

    @classmethod
    def for_seat(cls, setup: SeatSetup, version: int = 1) -> BlindPart:
        signer = setup.signer
        return cls(
            BlindSeat(
                setup.identity,
                setup.seat,
                setup.game,
                setup.table_id,
                setup.context,
                setup.random_bytes,
                seed_keeper=signer.seed_keeper,
                seed_source=signer.seed_source,
                version=version,
            )
        )

    @classmethod
    def for_seat_v2(cls, setup: SeatSetup) -> BlindPart:
        """A seat at a table dealing with the blind deal's version 2 (``docs/blind-proofs.md``)."""
        return cls.for_seat(setup, version=2)

    def wire_type(self, type_: str) -> str:
        return "act"  # every blind-deal message travels as a signed ``act``

    def observe(self, record: ObservedRecord) -> None:
        if record.kind not in MESSAGE_TYPES:
            return  # the seat follows the hand's signed messages only
        try:
            self.seat.observe(record.kind, record.action)
        except (BlindRefused, BlindError) as e:
            raise SeatProblem(str(e), host_fault=True) from None

    def _require_secrets(self, hand: int) -> None:
        if self.seat.lost_secrets(hand):
            raise SeatProblem(
                f"cannot play hand {R.shown_number(hand)}: this seat's secrets for it are lost "
                "(the process that drew them ended and no seed store kept them); the table "
                "records a forfeit",
                host_fault=False,
            )

    def answer(self, need: str, hand: int) -> tuple[str, dict[str, Any], bytes | None] | None:
        self._require_secrets(hand)
        answer = self.seat.answer(hand, need)
        return None if answer is None else (answer[0], answer[1], None)

    def decision(self, hand: int, prompt: Mapping[str, Any]) -> Decision | None:
        self._require_secrets(hand)
        legal = self.seat.legal_actions(hand)
        if not legal:
            return None  # the seat's view of the hand is not there yet: the host prompts again
        state = self.seat.hand.state if self.seat.hand is not None else None
        return Decision(hand, [str(a) for a in legal], self.seat.view(), state)

    def action_fields(self, hand: int, text: str) -> dict[str, Any]:
        return self.seat.action_fields(self.seat.resolve(text))

    def view(self) -> dict[str, Any] | None:
        return self.seat.view()

    def stop_keeping_seeds(self) -> None:
        self.seat.seed_keeper = None

    def work_ahead(self, kind: str, action: dict[str, Any] | None, run: Background) -> None:
        if kind in ("stage", "announce"):
            self.seat.work_ahead(kind, action, run)

    def work_before(self, hand: int, run: Background) -> None:
        self.seat.work_before(hand, run)

    def exposure(self) -> tuple[str, int, dict[str, Any]] | None:
        found = self.seat.exposure()
        return None if found is None else (R.EXPOSE, found[0], found[1])


class WrittenRecord:
    """A record as the host's writer wrote it, for every seat the host plays: its body is decoded
    once, and only when a seat looks inside it."""

    def __init__(self, info: RecordInfo) -> None:
        self.kind = info.kind
        self.hash = info.hash
        self._body = info.body

    @functools.cached_property
    def fields(self) -> dict[str, Any]:
        return R.unpack_map(self._body, "record", limit=1 << 20)

    @functools.cached_property
    def action(self) -> dict[str, Any] | None:
        raw = self.fields.get("act")
        return R.unpack_map(raw, "signed message") if isinstance(raw, bytes) else None


@dataclass(frozen=True)
class SeatSetup:
    """What a seat part is made from."""

    identity: Identity
    seat: int
    game: Any
    table_id: bytes
    context: Callable[[], HandContext]
    random_bytes: Callable[[int], bytes]
    signer: SeatSigner
    state: Callable[[], Any] | None


SEAT_PARTS: dict[str, Callable[[SeatSetup], SeatPart]] = {
    "commit-reveal": CommitRevealPart.for_seat,
    "blind": BlindPart.for_seat,
    "blind-v2": BlindPart.for_seat_v2,
}


class SeatAgent:
    """One seat's side of the table protocol: follows the log, answers the table's needs."""

    def __init__(
        self,
        identity: Identity,
        seat: int,
        game: Any,
        table_id: bytes,
        head: bytes,
        deal_mode: str,
        context: Callable[[], HandContext],
        *,
        aseq: int = 0,
        random_bytes: Callable[[int], bytes] = os.urandom,
        insecure_seed_value: int | str | None = None,
        seed_source: Callable[[int], bytes] | None = None,
        seed_keeper: SeedKeeper | None = None,
        state: Callable[[], Any] | None = None,
        checkpoint_check: Callable[[bytes, int], str | None] | None = None,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self.seat = seat
        self.deal_mode = deal_mode
        self.signer = SeatSigner(
            identity,
            seat,
            table_id,
            head,
            random_bytes=random_bytes,
            insecure_seed_value=insecure_seed_value,
            aseq=aseq,
            seed_source=seed_source,
            seed_keeper=seed_keeper,
        )
        self.checkpoint_check = checkpoint_check  # why not to sign a checkpoint, or None
        self.warn = warn or (lambda text: None)
        try:
            make_part = SEAT_PARTS[deal_mode]
        except KeyError:
            raise ValueError(f"unknown deal mode {deal_mode!r}") from None
        self.part: SeatPart = make_part(
            SeatSetup(identity, seat, game, table_id, context, random_bytes, self.signer, state)
        )

    @property
    def aseq(self) -> int:
        return self.signer.aseq

    @aseq.setter
    def aseq(self, value: int) -> None:
        self.signer.aseq = value  # the host numbers what it has taken from this seat

    def observe(self, record: ObservedRecord) -> None:
        """A record of the log, verified by the seat's owner (or written by its own host).
        Raises SeatProblem if the record contradicts the seat's own view of the hand."""
        self.signer.observe(record.hash)
        self.part.observe(record)

    def reply(self, need: str, hand: int, prompt: Mapping[str, Any]) -> Message | Decision | None:
        """What the seat answers to the table's need: a message to send, a decision for whoever
        plays the seat, or None when the seat's view is not there yet. Raises SeatProblem."""
        exposure = self.exposure()
        if exposure is not None:
            return exposure
        if need == "wait":
            return None
        if need == "checkpoint":
            msg = prompt.get("msg", b"")
            problem = self.checkpoint_check(msg, hand) if self.checkpoint_check else None
            if problem:
                raise SeatProblem(
                    f"refusing to sign hand {R.shown_number(hand)}: {problem}", host_fault=True
                )
            return {"t": "checkpoint", "hand": hand, "sig": self.signer.sign_checkpoint(msg)}
        if need == "act":
            return self.part.decision(hand, prompt)
        try:
            answer = self.part.answer(need, hand)
        except SeedStoreError as e:
            self.warn(f"warning: {e}; this hand's seed is kept in memory only")
            self.part.stop_keeping_seeds()
            answer = self.part.answer(need, hand)
        if answer is None:
            return None
        type_, fields, secret = answer
        act, asig = self.signer.sign(hand, type_, **fields)
        message: Message = {"t": self.part.wire_type(type_), "act": act, "asig": asig}
        if secret is not None:
            message["seed"] = secret  # the commit-reveal deal's seed, beside its reveal
        return message

    def work_ahead(self, kind: str, action: dict[str, Any] | None, run: Background) -> None:
        """A record about to be checked (by the seat's owner; or, at the host, a seat's message
        about to be taken), its kind and signed message: start, with ``run`` (in another
        thread), work the seat will need once it has checked: a ``blind-v2`` seat's own next
        stage, when the message is its input. Nothing is sent before the record has checked
        and the table asks for it."""
        self.part.work_ahead(kind, action, run)

    def work_before(self, hand: int, run: Background) -> None:
        """The next hand this seat will be dealt is ``hand`` (its previous one is over, or the
        seat has just taken its place before the first): start, with ``run``, the part of that
        hand the seat can work out before it begins (a ``blind-v2`` seat's secrets, its proofs'
        starts, and seat 0's whole first stage, on the initial deck). Nothing is sent before the
        table asks for it."""
        self.part.work_before(hand, run)

    def exposure(self) -> Message | None:
        """Once, the signed message the seat must send now, unprompted (a ``blind-v2`` seat's
        exposure of a wrong key sealed to it: ``docs/blind-proofs.md`` section 10); None
        otherwise. Asked after each record the seat observes."""
        found = self.part.exposure()
        if found is None:
            return None
        type_, hand, fields = found
        act, asig = self.signer.sign(hand, type_, **fields)
        return {"t": "act", "act": act, "asig": asig}

    def act(self, hand: int, text: str) -> Message:
        """Sign the action chosen for a decision (raises ValueError or IllegalAction where the
        seat can tell it is not legal: the chooser is asked again)."""
        act, asig = self.signer.sign(hand, "action", **self.part.action_fields(hand, text))
        return {"t": "act", "act": act, "asig": asig}

    def chat(self, hand: int, text: str) -> Message:
        act, asig = self.signer.chat(hand, text)
        return {"t": "act", "act": act, "asig": asig}

    def view(self) -> dict[str, Any] | None:
        return self.part.view()


__all__ = [
    "BlindPart",
    "CommitRevealPart",
    "Decision",
    "SeatAgent",
    "SeatPart",
    "SeatProblem",
    "WrittenRecord",
]
