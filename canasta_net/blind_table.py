"""The host's table for blind-dealt hands (``--deal blind``; ``docs/blind-deal.md``), sans-io.

:class:`BlindHostTable` is :class:`~canasta_net.host_table.HostTable` with the deal and the play
of each hand driven by a :class:`~canasta_net.blind.hand.BlindHand` that knows only public cards:
the host routes and journals the seats' announcements, stage outputs, sealed keys, released keys
and red-three reports, validates every play against the engine on stand-in cards, and at the
hand's end, once every seed is revealed, replays the hand with every card known to score it, or
to name the seat that broke a rule (it forfeits the match).
"""

from __future__ import annotations

from typing import Any

from . import records as R
from .blind.hand import BlindHand, BlindRefused, HandPhase, Violation
from .blind_seat import feed_blind
from .effects import public_deal_fields
from .eventlog import RecordInfo
from .host_table import HostTable, TableError, TablePhase
from .rules import RuleSet

_DEALING = (HandPhase.STAGES, HandPhase.DEAL_KEYS, HandPhase.UPCARD, HandPhase.DEAL_REDS)


class BlindHostTable(HostTable):
    """The authoritative table of a blind-dealt match: it never holds a hidden card."""

    blind: BlindHand

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["deal_mode"] = "blind"
        super().__init__(*args, **kwargs)

    def _start_hand(self) -> None:
        if not isinstance(self.game.rules, RuleSet):
            raise ValueError(f"{self.game.name} cannot be dealt blind (Canasta games only)")
        self.hand_no += 1
        self.dealer = None
        self.state = None
        self.blind = BlindHand(
            self.game.rules,
            self.table_id,
            self.hand_no,
            self.match.dealer,
            self.match.minimums(),
            [s.key for s in self.seats],
        )
        self.phase = TablePhase.COMMITTING

    def needs(self, seat: int) -> str:
        if self.phase in (TablePhase.CHECKPOINTING, TablePhase.OVER):
            return super().needs(seat)
        return self.blind.needs(seat).kind

    def between_hands(self, seat: int) -> bool:
        """Whether ``seat`` holds no secret of a hand in play: the hand is over (its result being
        signed), or the seat has not announced itself in the hand just begun. Only then may
        another key (a stand-in, or the player reclaiming) take the seat."""
        if self.phase in (TablePhase.CHECKPOINTING, TablePhase.OVER):
            return True
        return self.blind.phase is HandPhase.ANNOUNCE and seat not in self.blind.commitments

    def rekey(self, seat: int, key: bytes) -> list[RecordInfo]:
        out = super().rekey(seat, key)
        if self.phase is not TablePhase.CHECKPOINTING:
            self.blind.keys[seat] = key  # the hand just begun: the new key signs its part
        return out

    def _dispatch(
        self,
        seat: int,
        type_: str,
        fields: dict[str, Any],
        act: bytes,
        asig: bytes,
        seed: bytes | None,
    ) -> list[RecordInfo]:
        if type_ == "chat":
            return self._chat(seat, fields, act, asig)
        if type_ == "commit":
            raise TableError("bad-message", "a blind-dealt table takes no commit", seat)
        if self.phase not in (TablePhase.COMMITTING, TablePhase.REVEALING, TablePhase.PLAYING):
            raise TableError("wrong-phase", f"the table is {self.phase.value}", seat)
        try:
            feed_blind(self.blind, seat, type_, fields, self.game)
        except BlindRefused as e:
            raise TableError(e.code, str(e), seat) from None
        self._accept(seat)
        out = [self._append(type_, {"act": act, "asig": asig})]
        blind = self.blind
        if blind.state is not None and self.state is None:  # the deal is complete
            out.append(
                self._append(R.DEAL, {"hand": self.hand_no, **public_deal_fields(blind.state)})
            )
        self.state = blind.state
        if blind.phase is HandPhase.ANNOUNCE:
            self.phase = TablePhase.COMMITTING
        elif blind.phase in _DEALING:
            self.phase = TablePhase.REVEALING
        elif blind.phase is HandPhase.DONE:
            out.extend(self._end_blind_hand())
        else:
            self.phase = TablePhase.PLAYING
        return out

    def _end_blind_hand(self) -> list[RecordInfo]:
        blind = self.blind
        try:
            final = blind.verify()
        except Violation as v:
            return self._violation(v)
        self.state = final
        seeds = [blind.seeds[s] for s in range(self.game.players)]
        return self._close_hand(final, (R.SEEDS, {"hand": self.hand_no, "seeds": seeds}))

    def _violation(self, v: Violation) -> list[RecordInfo]:
        """The hand-end replay caught a seat: it forfeits the match (the hand is not scored)."""
        return self._forfeit_records(v.seat, f"violation: {v.code}: {v.reason}")

    def forfeit(self, seat: int, reason: str) -> list[RecordInfo]:
        """``seat`` withheld its part of the hand (a stage, a key, its seed): the match ends."""
        if self.phase not in (TablePhase.COMMITTING, TablePhase.REVEALING, TablePhase.PLAYING):
            raise TableError("wrong-phase", "nothing is waited for from the seat", seat)
        return self._forfeit_records(seat, reason)


__all__ = ["BlindHostTable"]
