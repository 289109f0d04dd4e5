"""The seat lifecycle, sans-io: who holds each seat, and what happens when a player goes.

Each seat is one small explicit machine (:class:`SeatLife`); the Twisted host only moves frames
and arms the timers these machines ask for. Time is passed in (``now``, in seconds), never read.

::

    OPEN --take--> SEATED                       (before the match: a person takes a free seat)
    SEATED --release--> OPEN                    (before the match: the person's connection went)
    SEATED --leave--> AWAY                      (during the match: held for ``hold`` seconds)
    AWAY --come_back--> SEATED
    AWAY --expire--> STAND_IN                   (a bot plays the seat for its player)
    AWAY --expire--> LEFT                       (the player held a secret of the hand: forfeit)
    STAND_IN --come_back--> RECLAIMING          (the player is back; the stand-in may still hold
                                                 the hand's secrets and plays it out first)
    RECLAIMING --reclaimed--> SEATED            (between hands: the player's key signs again)
    RECLAIMING --leave--> STAND_IN              (gone again before the reclaim)

Seats the host plays itself (its bots, its own key when a bot plays for the host) are SEATED for
the whole match. An illegal transition raises :class:`LifecycleError`: a bug, never a peer's doing.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

SeatKind = Literal["host", "player", "bot"]


class SeatState(StrEnum):
    OPEN = "open"
    SEATED = "seated"
    AWAY = "away"
    STAND_IN = "stand-in"
    RECLAIMING = "reclaiming"
    LEFT = "left"


class LifecycleError(RuntimeError):
    """A transition the seat's state does not allow."""


STAND_IN_SUFFIX = " (bot stand-in)"


@dataclass
class SeatLife:
    """One seat: its state, the key of whoever owns it, and why its player went away."""

    seat: int
    kind: SeatKind
    name: str = ""
    owner: bytes | None = None  # the key of the person (or the host) who owns the seat
    state: SeatState = SeatState.OPEN
    stand_ins: int = 0  # how many stand-ins have held the seat (each signs with its own key)
    left: str | None = None  # why the player went (the others are told); None: here
    held_until: float | None = None  # while AWAY: when the hold runs out

    def _move(self, allowed: tuple[SeatState, ...], to: SeatState, what: str) -> None:
        if self.state not in allowed:
            raise LifecycleError(f"seat {self.seat} cannot {what} while {self.state.value}")
        self.state = to

    # ------------------------------------------------------------------ before the match
    def take(self, key: bytes, name: str) -> None:
        self._move((SeatState.OPEN,), SeatState.SEATED, "be taken")
        self.owner, self.name, self.left = key, name, None

    def release(self) -> None:
        self._move((SeatState.SEATED,), SeatState.OPEN, "be released")
        self.owner, self.name, self.left = None, "", None

    # ------------------------------------------------------------------ during the match
    def leave(self, reason: str, now: float, hold: float) -> None:
        """The player went (its connection dropped, or it said ``bye``)."""
        if self.state is SeatState.RECLAIMING:
            self._move((SeatState.RECLAIMING,), SeatState.STAND_IN, "leave")
        else:
            self._move((SeatState.SEATED,), SeatState.AWAY, "leave")
            self.held_until = now + hold
        self.left = reason

    def come_back(self) -> bool:
        """The player is back; True if a stand-in holds the seat until it can be reclaimed."""
        if self.state is SeatState.STAND_IN:
            self._move((SeatState.STAND_IN,), SeatState.RECLAIMING, "come back")
            self.left = None
            return True
        if self.state is SeatState.LEFT:
            return False  # it forfeited: the match is over, the player may read the log
        self._move((SeatState.SEATED, SeatState.AWAY, SeatState.RECLAIMING), self.state, "return")
        if self.state is SeatState.AWAY:
            self.state = SeatState.SEATED
        self.held_until, self.left = None, None
        return self.state is SeatState.RECLAIMING

    def expire(self, holds_secret: bool) -> Literal["stand-in", "forfeit"]:
        """The hold ran out: a stand-in takes the seat, or, where the player left holding a
        secret of the hand that no stand-in can give, the player forfeits."""
        self.held_until = None
        if holds_secret:
            self._move((SeatState.AWAY,), SeatState.LEFT, "forfeit")
            return "forfeit"
        self._move((SeatState.AWAY,), SeatState.STAND_IN, "be stood in for")
        self.stand_ins += 1
        self.name = self.name.removesuffix(STAND_IN_SUFFIX) + STAND_IN_SUFFIX
        return "stand-in"

    def reclaimed(self) -> None:
        self._move((SeatState.RECLAIMING,), SeatState.SEATED, "be reclaimed")
        self.name = self.name.removesuffix(STAND_IN_SUFFIX)

    def resumed_with_stand_in(self, stand_ins: int) -> None:
        """A resumed host found a stand-in holding the seat when it stopped."""
        self._move((SeatState.SEATED,), SeatState.STAND_IN, "resume with a stand-in")
        self.stand_ins = stand_ins
        self.left = self.left or "away when the host stopped"

    # ------------------------------------------------------------------ what others see
    @property
    def taken(self) -> bool:
        return self.owner is not None

    @property
    def played_by_host(self) -> bool:
        """Whether the host plays the seat now (its own bot, or a stand-in)."""
        return self.kind == "bot" or self.state in (SeatState.STAND_IN, SeatState.RECLAIMING)

    def summary(self, connected: bool, now: float) -> dict[str, object]:
        """The seat as the host's ``seats`` message describes it (``docs/wire-protocol.md``)."""
        entry: dict[str, object] = {
            "seat": self.seat,
            "name": self.name or "(open)",
            "bot": self.played_by_host,
            "connected": connected,
            "taken": self.taken,
        }
        if self.left is not None:
            entry["left"] = self.left
        if self.held_until is not None:
            entry["stand_in_in"] = max(0, int(-(-(self.held_until - now) // 1)))
        return entry


__all__ = ["STAND_IN_SUFFIX", "LifecycleError", "SeatLife", "SeatState"]
