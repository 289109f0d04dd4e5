"""Players at a seat across the network: a bot, and a person at a terminal."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from typing import Any, TextIO

from twisted.internet.defer import Deferred
from twisted.protocols.basic import LineReceiver

from ..bot_pool import bot_pool
from ..canasta.actions import VERBS, parse_action
from ..canasta.position import position_from_dict, position_from_view
from ..cards import parse_face
from ..errors import PositionError
from ..games import CANASTA, Game
from ..mayi.actions import VERBS as MAY_I_VERBS
from ..safe_text import safe_lines, safe_text
from ..search import SearchBot
from .terminal_view import HELP, MAY_I_HELP, render_view


class BotPlayer:
    """A bot at a remote seat: chooses from the legal list the host sends with each prompt.

    The bot is made once the seat knows which game it plays (the host's welcome says).
    """

    def __init__(
        self,
        kind: str,
        rng: random.Random,
        game: Callable[[], Game | None],
        out: TextIO | None = None,
    ) -> None:
        self.kind = kind
        self.rng = rng
        self.game = game
        self.out = out
        self.bot: Any = None
        self.finished_reason: str | None = None

    def show(self, view: dict[str, Any]) -> None:
        pass

    def event(self, text: str) -> None:
        if self.out is not None:
            print(safe_text(text), file=self.out, flush=True)

    def choose(self, legal: list[str], view: dict[str, Any]) -> str | Deferred[str]:
        game = self.game()
        assert game is not None, "prompted before the welcome"
        if self.bot is None:
            self.bot = game.make_bot(self.kind, self.rng)
        seat_view = view.get("state") or {}
        hand = [parse_face(c) for c in seat_view.get("hand", [])]
        actions = [game.parse_action(t) for t in legal]

        def policy() -> str:
            return str(self.bot.choose(actions, hand, game.rules))

        if isinstance(self.bot, SearchBot) and game.kind == CANASTA:
            searched = search_from_view(self.bot, seat_view, game.rules, self.rng)
            if searched is not None:
                return searched.addCallback(lambda a: str(a) if str(a) in legal else policy())
        return policy()

    def finished(self, reason: str) -> None:
        self.finished_reason = reason
        self.event(f"finished: {reason}")


def search_from_view(
    bot: SearchBot, seat_view: dict[str, Any], rules: Any, rng: random.Random
) -> Deferred[Any] | None:
    """A remote seat's search, in the reactor's worker pool (``canasta_net.bot_pool``), from the
    position its own view gives (``position_from_view``: the pile below its top is not in a
    view, so it is guessed); None where the view gives no position to search."""
    from twisted.internet import reactor

    if seat_view.get("to_move") != seat_view.get("seat"):
        return None
    try:
        state = position_from_dict(position_from_view(seat_view, rules, rng))
    except (PositionError, KeyError, TypeError, ValueError):
        return None
    if state.to_move != seat_view.get("seat"):
        return None
    return bot_pool(reactor).choose(bot, state)


class TerminalPlayer(LineReceiver):
    """A person typing actions in their canonical text form (``help`` lists them)."""

    delimiter = b"\n"

    def __init__(
        self,
        out: TextIO = sys.stdout,
        on_chat: Callable[[str], None] | None = None,
        on_quit: Callable[[], None] | None = None,
        game: Callable[[], Game | None] = lambda: None,
    ) -> None:
        self.out = out
        self.game = game
        self.on_chat = on_chat
        self.on_quit = on_quit
        self.view: dict[str, Any] = {}
        self.pending: Deferred[str] | None = None
        self.legal: list[str] = []
        self.finished_reason: str | None = None

    def say(self, text: str) -> None:
        """Print lines this program wrote; what came from others in them is escaped already, and
        this escapes anything that slipped through (keeping the line breaks)."""
        print(safe_lines(text), file=self.out, flush=True)

    # Player
    def show(self, view: dict[str, Any]) -> None:
        self.view = view

    def event(self, text: str) -> None:
        self.say(f"* {safe_text(text)}")

    def choose(self, legal: list[str], view: dict[str, Any]) -> Deferred[str]:
        self.legal = legal
        self.view = view
        self.say(render_view(view))
        self.say(f"Your move ({len(legal)} legal; 'hint' lists them, 'help' explains) >")
        self.pending = Deferred()
        return self.pending

    def finished(self, reason: str) -> None:
        self.finished_reason = reason
        self.say(f"* {safe_text(reason)}")
        if self.on_quit is not None:
            self.on_quit()

    # LineReceiver
    def lineReceived(self, line: bytes) -> None:  # Twisted's name
        self.handle_line(line.decode("utf-8", "replace").strip())

    def handle_line(self, text: str) -> None:
        if not text:
            return
        word = text.split()[0].lower()
        if word in ("help", "?"):
            game = self.game()
            self.say(MAY_I_HELP if game is not None and game.kind == "may-i" else HELP)
        elif word == "hint":
            legal = ", ".join(self.legal) if self.pending else "(not your turn)"
            self.say(safe_text(f"legal: {legal}"))
        elif word in ("view", "table"):
            self.say(render_view(self.view))
        elif word == "say":
            if self.on_chat is not None:
                self.on_chat(text[3:].strip())
        elif word in ("quit", "exit"):
            if self.on_quit is not None:
                self.on_quit()
        elif word in VERBS or word in MAY_I_VERBS:
            if self.pending is None:
                self.say("It is not your turn.")
                return
            game = self.game()
            try:
                action = game.parse_action(text) if game is not None else parse_action(text)
            except ValueError as e:
                self.say(f"? {e}")
                return
            pending, self.pending = self.pending, None
            pending.callback(str(action))
        else:
            self.say(f"? unknown command {word!r}; type 'help'")
