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
from ..cards import action_label, canonical_action, parse_face
from ..errors import PositionError
from ..games import Game
from ..hint import (
    NO_SUGGESTION,
    NOTHING_TO_SUGGEST,
    Suggestion,
    SuggestionPool,
    state_from_view,
    suggest_from_view,
)
from ..i18n import translator
from ..mayi.actions import VERBS as MAY_I_VERBS
from ..reasons import parse_error_sentence
from ..safe_text import safe_lines, safe_text
from ..search import SearchBot
from .table_model import TableModel, host_sentence
from .terminal_view import (
    Line,
    help_text,
    hint_lines,
    match_end_lines,
    numbered_options,
    paint,
    prompt_lines,
    render_view,
    sheet_lines,
    short_answers,
    table_lines,
    turn_update_lines,
    use_colour,
)


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

        if isinstance(self.bot, SearchBot):
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
    position its own view gives (``hint.state_from_view``, either game: in Canasta the pile below
    its top is not in a view, so it is guessed); None where the view gives no position to
    search."""
    from twisted.internet import reactor

    if seat_view.get("to_move") != seat_view.get("seat"):
        return None
    try:
        state = state_from_view(seat_view, rules, rng)
    except (PositionError, KeyError, TypeError, ValueError, IndexError):
        return None
    if state.to_move != seat_view.get("seat"):
        return None
    return bot_pool(reactor).choose(bot, state)


class TerminalPlayer(LineReceiver):
    """A person typing actions in their canonical text form (``help`` lists them).

    It owns the client's model of the table (:class:`TableModel`), which the seat's session
    also feeds as its ``observer`` (records, refusals, seats), and draws from its snapshot:
    the table when the seat is asked to move, the score sheet when a hand ends, the winner
    when the match ends. It holds the next hand until its person presses Enter (``hand_gate``).
    """

    delimiter = b"\n"

    def __init__(
        self,
        out: TextIO = sys.stdout,
        on_chat: Callable[[str], None] | None = None,
        on_quit: Callable[[], None] | None = None,
        game: Callable[[], Game | None] = lambda: None,
        colour: bool | None = None,
        lang: str = "en",
    ) -> None:
        self.out = out
        self.tr = translator(lang)  # this person's language (docs/i18n.md)
        self.game = game
        self.on_chat = on_chat
        self.on_quit = on_quit
        self.colour = use_colour(out) if colour is None else colour
        self.model = TableModel(tr=self.tr)
        self.view: dict[str, Any] = {}
        self.pending: Deferred[str] | None = None
        self.legal: list[str] = []
        self.finished_reason: str | None = None
        self._drawn_state: Any = None  # the position the table was last drawn for
        self._drawn_turn: Any = None  # and whose turn of which hand it was
        self._sheet_shown: dict[str, Any] | None = None  # the score sheet printed last
        self._match_end_shown = False
        self._ready_early = False  # Enter pressed after a sheet, before the next hand asked
        self._gate: Deferred[None] | None = None  # the next hand, held until Enter
        self.hint_pool: SuggestionPool | None = None  # where 'suggest' searches (None: the
        # reactor's worker pool, canasta_net.bot_pool)

    def say(self, text: str) -> None:
        """Print lines this program wrote; what came from others in them is escaped already, and
        this escapes anything that slipped through (keeping the line breaks)."""
        print(safe_lines(text), file=self.out, flush=True)

    def draw(self, lines: list[Line]) -> None:
        """Print lines of spans: each span's text is escaped (``paint``), colour added after."""
        if lines:
            print(paint(lines, self.colour), file=self.out, flush=True)

    def _game(self) -> Game | None:
        return self.model.game or self.game()

    # Player
    def show(self, view: dict[str, Any]) -> None:
        self.view = view
        self.model.show(view)
        self._catch_up()

    def event(self, text: str) -> None:
        self.model.event(text)
        self.say(f"* {safe_text(host_sentence(text, self.tr))}")
        self._catch_up()

    def choose(self, legal: list[str], view: dict[str, Any]) -> Deferred[str]:
        self.legal = legal
        self.view = view
        self.model.prompt(legal, view)
        snap = self.model.snapshot()
        state = snap.get("state") or {}
        turn = (snap.get("hand_no"), state.get("turn"))
        move = snap.get("last_move") or {}
        if state == self._drawn_state and snap.get("refusal") is not None:
            pass  # asked again after a refusal, the position unchanged: the prompt only
        elif (snap.get("prompt") or {}).get("kind") not in (None, "turn") or (
            turn == self._drawn_turn and move.get("seat") == snap.get("seat")
        ):
            # a question (a partner's ask, a buy) between turns, or the own turn going on: what
            # changed, not the whole table again ('view' draws it)
            self.draw(turn_update_lines(snap))
        else:
            self.draw(table_lines(snap))
        self._drawn_state, self._drawn_turn = state, turn
        self.draw(prompt_lines(snap))
        self.pending = Deferred()
        return self.pending

    def finished(self, reason: str) -> None:
        self.finished_reason = reason
        self.model.finish(reason)
        self.say(f"* {safe_text(host_sentence(reason, self.tr))}")
        self._catch_up()
        if self.on_quit is not None:
            self.on_quit()

    def _catch_up(self) -> None:
        """Print what the model learned that the person has not seen: a hand's score sheet,
        the match's end."""
        model = self.model
        if model.hand_end is not None and model.hand_end is not self._sheet_shown:
            self._sheet_shown = model.hand_end
            self._ready_early = False
            self.draw(sheet_lines(model.snapshot()))
        if model.match_end is not None and not self._match_end_shown:
            self._match_end_shown = True
            self.draw(match_end_lines(model.snapshot()))

    def hand_gate(self, hand: int) -> Deferred[None] | None:
        """The session asks before this seat's first step in hand ``hand`` (after a hand it
        played): hold it until the person presses Enter, unless they already did after the
        score sheet."""
        if self._ready_early or self._sheet_shown is None:
            self._ready_early = False
            return None
        self._gate = Deferred()
        self.draw([[(self.tr.gettext("press Enter for the next hand"), "ask")]])
        return self._gate

    @property
    def holding_next_hand(self) -> bool:
        """Whether the next hand waits for this person's Enter."""
        return self._gate is not None

    def show_outcome(self, **outcome: Any) -> None:
        """What the match left (``log``: its path): kept in the model, printed at the end."""
        self.model.set_outcome(**outcome)

    # LineReceiver
    def lineReceived(self, line: bytes) -> None:  # Twisted's name
        self.handle_line(line.decode("utf-8", "replace").strip())

    def handle_line(self, text: str) -> None:
        _ = self.tr.gettext
        if not text:
            self._enter()
            return
        word = text.split()[0].lower()
        if self._gate is not None and word not in ("say", "quit", "exit", "help", "?"):
            self._enter()  # any line goes on to the next hand; it is not a move of that hand
            return
        if word.isdigit() or (word == "hint" and len(text.split()) == 2):
            self._play_number(text.split()[-1])
        elif word in ("y", "yes", "n", "no"):
            self._short_answer(word.startswith("y"))
        elif word in ("help", "?"):
            game = self._game()
            self.say(help_text(self.tr.lang, game is not None and game.kind == "may-i"))
        elif word == "hint":
            not_yours = [[(_("(not your turn)"), "")]]
            self.draw(hint_lines(self.legal, self.tr.lang) if self.pending else not_yours)
        elif word == "suggest":
            self._suggest()
        elif word in ("view", "table"):
            snap = self.model.snapshot()
            self.draw(table_lines(snap) + prompt_lines(snap))
        elif word == "say":
            if self.on_chat is not None:
                self.on_chat(text[3:].strip())
        elif word in ("quit", "exit"):
            if self.on_quit is not None:
                self.on_quit()
        elif word in VERBS or word in MAY_I_VERBS:
            self._play(self._complete(text))
        else:
            self.say("? " + _("unknown command {word!r}; type 'help'").format(word=safe_text(word)))

    def _suggest(self) -> None:
        """Ask the searching bot for this seat's move, from this seat's view only; its answer is
        printed when the search (in a worker process) comes back, if the prompt is still open."""
        _ = self.tr.gettext
        game = self._game()
        pending = self.pending
        if pending is None or game is None:
            self.say(_(NOTHING_TO_SUGGEST))
            return
        pool = self.hint_pool
        if pool is None:
            from twisted.internet import reactor

            pool = bot_pool(reactor)
        answer = suggest_from_view(self.view.get("state") or {}, game.rules, self.legal, pool)
        if isinstance(answer, str):
            self.say(_(answer))
            return
        self.say(_("Thinking about a suggestion..."))

        def show(hint: Suggestion | str) -> None:
            if self.pending is not pending:
                return  # the move was made (or the prompt ended) meanwhile
            if isinstance(hint, str):
                self.say(_(hint))
                return
            move = action_label(str(hint.action), self.tr.lang)
            said = _("Suggested: {move} ({reason})")
            self.say(said.format(move=move, reason=hint.reason_in(self.tr.lang)))

        answer.addCallback(show).addErrback(lambda _f: show(NO_SUGGESTION))

    def _enter(self) -> None:
        """Enter: the person is ready for the next hand (now, or when it is asked)."""
        gate, self._gate = self._gate, None
        if gate is not None:
            gate.callback(None)
        elif self._sheet_shown is not None:
            self._ready_early = True

    def _play_number(self, number: str) -> None:
        _ = self.tr.gettext
        options = numbered_options(self.legal) if self.pending else []
        if not options:
            self.say(_("It is not your turn."))
            return
        if not number.isdigit() or not 1 <= int(number) <= len(options):
            self.say(
                "? " + _("choose a number from 1 to {n} ('hint' lists them)").format(n=len(options))
            )
            return
        self._play(options[int(number) - 1])

    def _short_answer(self, yes: bool) -> None:
        _ = self.tr.gettext
        if self.pending is None:
            self.say(_("Nothing is asked of you now."))
            return
        answer = short_answers(self.legal)[0 if yes else 1]
        if answer is None:
            self.say("? " + _("y and n answer a question; now it is your move ('hint' lists them)"))
            return
        self._play(answer)

    def _complete(self, text: str) -> str:
        """A bare ``may-i``, ``deny`` or ``take-discard`` means the one card it can name."""
        verb = text.lower()
        if verb in ("may-i", "deny", "take-discard"):
            matches = [t for t in self.legal if t.split()[0] == verb]
            if len(matches) == 1:
                return matches[0]
        return text

    def _play(self, text: str) -> None:
        _ = self.tr.gettext
        if self.pending is None:
            self.say(_("It is not your turn."))
            return
        game = self._game()
        typed = text
        # cards as this person writes them (КЧ, WP, К♥) go out in the canonical notation
        text = canonical_action(text, self.tr.lang)
        try:
            action = game.parse_action(text) if game is not None else parse_action(text)
        except ValueError as e:  # the parser's reason, in this person's words
            said = parse_error_sentence(e, self.tr.gettext, self.tr.lang, typed)
            self.say(f"? {safe_text(said)}")
            return
        pending, self.pending = self.pending, None
        self.model.acted(str(action))
        pending.callback(str(action))


class TerminalWatcher:
    """A person watching a table at a terminal: the public table each time it changes, and a
    line for each thing that happens (a ``Spectator`` of ``net.spectator``)."""

    def __init__(
        self,
        out: TextIO = sys.stdout,
        on_finished: Callable[[], None] | None = None,
        lang: str = "en",
    ):
        self.out = out
        self.lang = lang
        self.tr = translator(lang)  # this watcher's language (the session's lines use it)
        self.on_finished = on_finished
        self.shown = ""  # the table as last printed: an unchanged view is not printed again
        self.finished_reason: str | None = None

    def say(self, text: str) -> None:
        print(safe_lines(text), file=self.out, flush=True)

    def show(self, view: dict[str, Any]) -> None:
        table = render_view(view, self.lang)
        if table != self.shown:
            self.shown = table
            self.say(table)

    def event(self, text: str) -> None:
        self.say(f"* {safe_text(text)}")

    def finished(self, reason: str) -> None:
        self.finished_reason = reason
        self.say(f"* {safe_text(host_sentence(reason, self.tr))}")
        if self.on_finished is not None:
            self.on_finished()
