"""A checked game as a list of steps, one per record, each with the table after it.

``load_timeline`` reads a log through :class:`~replay.checking.LogCheck` and keeps a copy of the
hand's state after every record, as the engine's ``log.replay.Replayer`` reports it through its
public ``observe`` hook (no rule is repeated here): each deal, action and hand-end record, whether
it is checked at once (the host's log) or when the hand's seeds arrive (a seat's copy, and every
copy of a blind-dealt hand, whose cards are known only at its end).

A step's ``state`` is the table after its record, or None when no hand is on the table (the header,
a hand being dealt) or when this copy of the log cannot replay it (a seat's copy of a hand whose
seeds were never published). Steps are indexed by record number.

The timeline works for every game the table hosts (``canasta_net.games``): a state is the game's
hand state (a Canasta ``HandState``, a May I? ``DealState``), and ``timeline.game`` is what the
other modules ask for views, action parsing, scoring and words.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from canasta_net.games import Game
from canasta_net.log import Header, LogSource, StoredRecord, Truncation
from canasta_net.log import records as R
from canasta_net.log.replay import Replayer

from .checking import LogCheck
from .errors import UnreadableLog
from .findings import STAGE_FORMAT, Failure

_HAND_RECORDS = frozenset({R.DEAL, R.ACTION, R.HAND_END})
_NEW_HAND_RECORDS = frozenset({R.COMMIT, R.COMMITMENTS, R.REVEAL, R.FORFEIT})


@dataclass(frozen=True)
class Step:
    """One record and the table after it."""

    record: int
    hash: bytes
    kind: str
    hand: int | None
    author: int | None  # the seat that signed the record's message, if it carries one
    action: str | None  # an action record's action, in canonical text
    info: dict[str, Any]  # the record's public game fields (never a private payload)
    state: Any  # the game's hand state after the record, or None
    before: Any  # an action record's table before the action, or None
    pending: bool  # a hand record this copy of the log cannot replay
    totals: tuple[int, ...]  # the match totals after this record

    @property
    def turn(self) -> int | None:
        """The turn number of the table after this record (a discard starts the next turn)."""
        return None if self.state is None else self.state.turn_no

    @property
    def action_turn(self) -> int | None:
        """For an action record, the turn the action was made in."""
        return None if self.before is None else self.before.turn_no


@dataclass
class HandInfo:
    """One hand of the match as the log shows it."""

    hand: int
    dealer: int
    minimums: list[int]
    deal_record: int | None = None
    end_record: int | None = None
    seeds_record: int | None = None
    checkpoint_record: int | None = None
    end: dict[str, Any] | None = None
    scores: list[Any] = field(default_factory=list)  # per side: ``total`` and ``to_dict()``
    totals: list[int] | None = None
    checkpoint_signers: list[int] = field(default_factory=list)
    replayed: bool = False

    @property
    def seeds_public(self) -> bool:
        """Whether every card of this hand is public: its seeds record is in the log."""
        return self.seeds_record is not None


@dataclass
class Timeline:
    header: Header
    header_hash: bytes
    game: Game
    rules: Any  # the game's rule set (``game.rules``)
    steps: list[Step]
    hands: list[HandInfo]
    result: Any  # the match result (``winner``, ``scores``, ``hands``), or None
    forfeit: tuple[int, str] | None
    over: bool
    truncated: Truncation | None
    failure: Failure | None
    payload_seats: frozenset[int]

    def hand(self, hand_no: int) -> HandInfo | None:
        for info in self.hands:
            if info.hand == hand_no:
                return info
        return None

    @property
    def last_record(self) -> int:
        return len(self.steps) - 1


def _public_info(record: StoredRecord) -> dict[str, Any]:
    """The fields of a record a tool may show to anyone: never ``priv`` or a payload."""
    kind, f = record.kind, record.fields
    if kind == R.COMMITMENTS:
        return {"dealer": f.get("dealer"), "minimums": f.get("minimums")}
    if kind == R.DEAL:
        return {"stock": f.get("stock"), "pile": len(f.get("pile") or [])}
    if kind == R.HAND_END:
        return {
            "reason": f.get("reason"),
            "went_out": f.get("went_out"),
            "scores": f.get("scores"),
            "totals": f.get("totals"),
        }
    if kind == R.CHECKPOINT:
        return {"signers": sorted(f.get("sigs") or {})}
    if kind == R.MATCH_END:
        return {"winner": f.get("winner"), "totals": f.get("totals"), "hands": f.get("hands")}
    if kind == R.FORFEIT:
        return {"seat": f.get("seat"), "reason": f.get("reason")}
    if kind == R.MATCH_STOP:
        return {
            "reason": f.get("reason"),
            "hands": f.get("hands"),
            "totals": f.get("totals"),
            "mid_hand": f.get("mid_hand"),
        }
    if kind == R.CHAT and record.action is not None:
        return {"text": record.action.get("text")}
    return {}


def load_timeline(source: LogSource) -> Timeline:
    """Check a log and lay it out step by step; raise :class:`UnreadableLog` if it cannot be read.

    A log that fails part-way is not an error here: the timeline stops before the failing record
    and ``failure`` says where and why.
    """
    snapshots: dict[int, Any] = {}

    def keep(record: StoredRecord, state: Any) -> None:
        snapshots[record.index] = state.copy()

    check = LogCheck(source, keep)
    raw: list[tuple[StoredRecord, int]] = []
    for item in check:
        record = item.record
        # keep the record without its private payloads: nothing downstream may read them
        raw.append((_without_payloads(record), item.hand))
    header = check.header
    if header is None or check.replayer is None or (check.failure and check.failure.unreadable):
        failure = check.failure
        reason = failure.reason if failure is not None else "The log is empty."
        if failure is not None and failure.stage == STAGE_FORMAT:
            reason = f"This is not a canasta-net log that this program can read: {reason}"
        raise UnreadableLog(reason)
    replayer = check.replayer
    hands = _hand_infos(replayer, raw)
    steps = _steps(replayer, snapshots, raw, hands)
    return Timeline(
        header=header,
        header_hash=check.header_hash,
        game=replayer.game,
        rules=replayer.rules,
        steps=steps,
        hands=hands,
        result=replayer.result,
        forfeit=replayer.forfeit,
        over=replayer.over,
        truncated=check.truncated,
        failure=check.failure,
        payload_seats=check.payload_seats,
    )


def _without_payloads(record: StoredRecord) -> StoredRecord:
    return StoredRecord(
        index=record.index,
        offset=record.offset,
        size=record.size,
        body=b"",
        fields=record.fields,
        host_sig=b"",
        private={},
        hash=record.hash,
        action=record.action,
        checkpoint=record.checkpoint,
    )


def _hand_infos(replayer: Replayer, raw: list[tuple[StoredRecord, int]]) -> list[HandInfo]:
    infos: dict[int, HandInfo] = {}
    for replayed in replayer.hands:
        infos[replayed.hand_no] = HandInfo(
            replayed.hand_no,
            replayed.dealer,
            [],
            scores=list(replayed.scores),
            checkpoint_signers=sorted(replayed.checkpoint_signers),
            replayed=replayed.state is not None,
        )
        if replayed.state is not None and replayed.state.end is not None:
            end = replayed.state.end
            infos[replayed.hand_no].end = {"reason": end.reason.value, "went_out": end.went_out}
    totals = [0] * replayer.game.teams
    for hand_info in sorted(infos.values(), key=lambda i: i.hand):
        if hand_info.scores:
            totals = [t + s.total for t, s in zip(totals, hand_info.scores, strict=True)]
            hand_info.totals = list(totals)
    for record, hand in raw:
        info = infos.get(hand)
        if info is None:
            continue
        if record.kind == R.COMMITMENTS:
            info.minimums = list(record.fields.get("minimums") or [])
        elif record.kind == R.DEAL:
            info.deal_record = record.index
        elif record.kind == R.HAND_END:
            info.end_record = record.index
        elif record.kind == R.SEEDS:
            info.seeds_record = record.index
        elif record.kind == R.CHECKPOINT:
            info.checkpoint_record = record.index
    return [infos[h] for h in sorted(infos)]


def _steps(
    replayer: Replayer,
    snapshots: dict[int, Any],
    raw: list[tuple[StoredRecord, int]],
    hands: list[HandInfo],
) -> list[Step]:
    hand_totals = {h.hand: tuple(h.totals) for h in hands if h.totals is not None}
    totals: tuple[int, ...] = (0,) * replayer.game.teams
    current: Any = None
    steps: list[Step] = []
    for record, hand in raw:
        kind = record.kind
        before: Any = None
        pending = False
        if kind in _HAND_RECORDS:
            state = snapshots.get(record.index)
            if state is None:
                pending = True
            elif kind == R.ACTION:
                before = current
            current = state
        elif kind in _NEW_HAND_RECORDS:
            current = state = None
        else:
            state = current
        if kind == R.HAND_END and hand in hand_totals:
            totals = hand_totals[hand]
        action = record.action
        steps.append(
            Step(
                record=record.index,
                hash=record.hash,
                kind=kind,
                hand=None if kind in (R.MATCH_END, R.MATCH_STOP) or record.index == 0 else hand,
                author=None if action is None else cast(int, action["seat"]),
                action=cast(str, action.get("action")) if kind == R.ACTION and action else None,
                info=_public_info(record),
                state=state,
                before=before,
                pending=pending,
                totals=totals,
            )
        )
    return steps
