"""A watcher's side of the table protocol: follow a table, public view only, no seat (sans-io).

``SpectatorSession`` says ``hello`` with ``watch``, and then checks everything the host sends as
a seat does, with the same code (``log_copy.LogCopy``): each record in order, its host signature,
its chain, its authors' signatures, and the game itself as each hand's seeds are published. Its
copy of the log holds no private payload: it is the log as anyone may see it. It keeps what a
user interface needs (the latest public view, the seats' names, who else watches) and tells its
``Spectator`` (``show``, ``event``, ``finished``). The Twisted layer is the seat's own
(``peer.SeatClient``, ``connect_with_retry``): the same reconnection with backoff.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, BinaryIO, Protocol

from ..safe_text import safe_text
from ..timing import NO_TIMING, Timing
from . import wire
from .log_copy import HostFault, LogCopy, LostRecord
from .peer import comings_and_goings, describe_record, reader_translator, watchers_coming_and_going

# The host's refusals of a watcher's ``hello`` that asking again cannot change.
FINAL_WATCH_REFUSALS = frozenset(
    {"version-mismatch", "bad-password", "locked-out", "too-many-watchers"}
)


class Spectator(Protocol):
    """Who watches: a person at a terminal, or a page (a seat's ``Player`` without choices)."""

    def show(self, view: dict[str, Any]) -> None: ...

    def event(self, text: str) -> None: ...

    def finished(self, reason: str) -> None: ...


class SpectatorSession:
    """One watcher's side of one table (no I/O)."""

    def __init__(
        self,
        spectator: Spectator,
        *,
        name: str = "",
        password: str | None = None,
        log_file: BinaryIO | None = None,
        timing: Timing = NO_TIMING,
    ) -> None:
        self.spectator = spectator
        self.name = name
        self.password = password
        self.timing = timing
        self.copy = LogCopy(log_file)  # the public copy of the host's log, checked
        self.table: dict[str, Any] | None = None  # the table as the host describes it
        self.view: dict[str, Any] = {}  # the latest public view (no hand in it)
        self.names: list[str] = []  # the seats' names
        self.seats: list[dict[str, Any]] = []  # the host's latest seat summary
        self.watchers: list[str] = []  # who watches, this watcher included
        self.done = False
        self.problem: str | None = None  # set when the host was caught misbehaving

    @property
    def player(self) -> Spectator:
        """The audience the connection layer tells of lost connections (``HostSession``)."""
        return self.spectator

    @property
    def last_seq(self) -> int:
        return self.copy.last_seq

    # ------------------------------------------------------------------ outgoing
    def hello(self) -> dict[str, Any]:
        message: dict[str, Any] = {
            "t": "hello",
            "min": wire.PROTOCOL_MIN,
            "max": wire.PROTOCOL_MAX,
            "name": self.name[: wire.MAX_NAME],
            "bot": False,
            "watch": True,
            "resume": self.last_seq,
        }
        if self.password is not None:
            message["password"] = self.password
        return message

    def quit(self, reason: str) -> dict[str, Any] | None:
        """The watcher stops watching: the ``bye`` to send (None if the session had ended)."""
        if self.done:
            return None
        self.done = True
        return {"t": "bye", "reason": reason[: wire.MAX_TEXT]}

    # ------------------------------------------------------------------ incoming
    def handle(self, message: dict[str, Any], send: Callable[[dict[str, Any]], None]) -> None:
        if self.problem is not None:
            return  # the watcher has left: nothing the host says is taken any more
        try:
            wire.validate(message)
        except wire.WireError as e:
            self._misbehaving(f"a malformed message: {e}")
            return
        t = message["t"]
        if t == "welcome":
            # an older host, which knows no watchers, gave this watcher a seat: give it back
            send({"t": "bye", "reason": "watching only"})
            self._leave("the host does not know watchers (an older version): it offered a seat")
            return
        if t not in wire.HOST_TO_WATCHER:
            self._misbehaving(f"it sent a watcher {t!r}, which only a seat is sent")
            return
        if t == "watching":
            self._watching(message)
        elif t == "record":
            self._record(message)
        elif t == "view":
            self.view = message["view"]
            self.spectator.show(self.view)
        elif t == "seats":
            self.names = [s["name"] for s in message["seats"]]
            for line in comings_and_goings(
                self.seats, message["seats"], None, reader_translator(self.spectator)
            ):
                self.spectator.event(line)
            watchers = message.get("watchers", [])
            for line in watchers_coming_and_going(
                self.watchers, watchers, reader_translator(self.spectator)
            ):
                self.spectator.event(line)
            self.seats, self.watchers = message["seats"], watchers
        elif t == "ping":
            send({"t": "pong"})
        elif t == "error":
            refusal = safe_text(f"refused ({message['code']}): {message['message']}")
            self.spectator.event(refusal)
            if message["code"] in FINAL_WATCH_REFUSALS:
                self._leave(f"the host {refusal}")
        elif t == "bye":
            self.done = True
            self.spectator.finished(message["reason"])

    def _watching(self, message: dict[str, Any]) -> None:
        lost = self.copy.lost_since(message["head"])
        if lost is not None:
            self._leave(
                f"the host's log has lost record {lost}, which the host signed and sent this "
                f"watcher (its copy holds records 0 to {self.last_seq}): keep this copy"
            )
            return
        table = message["table"]
        self.table = table
        self.names = [s["name"] for s in table["seats"]]
        self.seats = table["seats"]
        self.spectator.event(
            safe_text(f"watching {table['name']!r} ({table['variant']}, {table['deal']} deal)")
        )

    def _record(self, message: dict[str, Any]) -> None:
        deal = None if self.table is None else str(self.table["deal"])
        try:
            record = self.copy.take(message["seq"], message["data"], deal)
        except LostRecord as e:
            self._leave(f"the host's log now contradicts record {e.seq} it sent this watcher")
            return
        except HostFault as e:
            self._misbehaving(e.text)
            return
        if record is None:
            return  # a resend of a record held already
        if record.private:
            # a host that sends a watcher a private payload leaks a hidden card: say so and go
            self._misbehaving(f"record {record.index} holds a seat's private payload")
            return
        if record.index == 0:
            self.names = self.copy.names
        try:
            self.copy.replay(record)
        except HostFault as e:
            self._misbehaving(e.text)
            return
        line = describe_record(record, self.names, reader_translator(self.spectator))
        if line:
            self.spectator.event(line)

    def _misbehaving(self, text: str) -> None:
        self._leave(f"the host misbehaved: {text}")

    def _leave(self, text: str) -> None:
        """Stop watching for a reason the person must hear; the command exits with an error."""
        if self.problem is None:
            self.problem = text
        if self.done:
            return
        self.done = True
        self.spectator.event(text)
        self.spectator.finished(f"stopped watching: {text}")


__all__ = ["FINAL_WATCH_REFUSALS", "Spectator", "SpectatorSession"]
