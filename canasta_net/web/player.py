"""A person playing in their browser page: the seat's ``Player``, fed by the page's requests.

``WebPlayer`` keeps a :class:`~canasta_net.ui.table_model.TableModel` up to date from the seat's
session (views, events, prompts, the end) and turns what the page posts into the session's
answers: a move for the open prompt (``choose``'s Deferred), ready for the next hand (the
session's ``hand_gate``), a chat line, leaving the table. It decides no rule: a move is only
parsed here (a typo is refused at once, with the parser's sentence); whether it is legal is the
engine's word, at the seat or at the host, which reaches the model through the session.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from twisted.internet.defer import Deferred

from ..canasta.actions import parse_action
from ..cards import action_label, canonical_action, parse_face
from ..games import Game
from ..hint import NOTHING_TO_SUGGEST, Suggestion, SuggestionPool, suggest_from_view
from ..i18n import N_, Translator
from ..log import records as R
from ..reasons import parse_error_sentence
from ..ui.table_model import TableModel

# Sentences the page shows when it asks for what cannot be done now.
# (English here; each is said in the client's language: ``self.model.tr``)
NOT_YOUR_TURN = N_("It is not your turn: nothing is asked of you now.")
NOTHING_TO_BE_READY_FOR = N_("No hand waits for you: there is nothing to be ready for.")


class WebPlayer:
    """The seat's player in the page (the ``Player`` protocol of ``net.peer``)."""

    def __init__(
        self,
        model: TableModel | None = None,
        *,
        game: Callable[[], Game | None] = lambda: None,
        on_chat: Callable[[str], None] | None = None,
        on_quit: Callable[[], None] | None = None,
    ) -> None:
        self.model = model if model is not None else TableModel()
        self.game = game
        self.on_chat = on_chat
        self.on_quit = on_quit
        self.pending: Deferred[str] | None = None  # the open prompt's answer
        self.gate: Deferred[None] | None = None  # the next hand, held until /ready
        self._ready_after: int | None = None  # /ready came for the hand after this one
        self.finished_reason: str | None = None
        self.view: dict[str, Any] = {}  # the view of the open prompt
        self.hint_pool: SuggestionPool | None = None  # where /suggest searches (None: the
        # reactor's worker pool, canasta_net.bot_pool)

    @property
    def tr(self) -> Translator:
        """The person's language, the page's (``POST /lang`` changes it): the session writes its
        event lines through it (``net.peer.reader_translator``)."""
        return self.model.tr

    # ------------------------------------------------------------------ Player
    def show(self, view: dict[str, Any]) -> None:
        self.model.show(view)

    def event(self, text: str) -> None:
        self.model.event(text)

    def choose(self, legal: list[str], view: dict[str, Any]) -> Deferred[str]:
        self.pending = Deferred()
        self.view = view
        self.model.prompt(legal, view)
        return self.pending

    def finished(self, reason: str) -> None:
        self.finished_reason = reason
        self.pending = None
        self.model.finish(reason)
        self.model.ask_ready(False)
        if self.on_quit is not None:
            self.on_quit()

    # ------------------------------------------------------------------ the session's gate
    def hand_gate(self, hand: int) -> Deferred[None] | None:
        """Hold the seat's first step of hand ``hand`` until the person says they are ready
        (the page's POST ``/ready``), or go on at once if they said so already. With no page
        open the gate still waits: it is the person's seat."""
        early, self._ready_after = self._ready_after, None
        if early is not None and early == hand - 1:
            return None
        self.gate = Deferred()
        self.model.ask_ready(True)
        return self.gate

    # ------------------------------------------------------------------ what the page posts
    def act(self, text: str) -> str | None:
        """A move from the page: None if it goes to the table, else why not (a sentence, also
        shown in the snapshot's ``refusal``)."""
        _ = self.model.tr.gettext
        text = " ".join(text.split())
        pending = self.pending
        if pending is None:
            self.model.refused("not-your-turn", _(NOT_YOUR_TURN), text)
            return _(NOT_YOUR_TURN)
        game = self.game()
        typed = text
        try:
            # cards typed as the reader writes them go out in the canonical notation
            text = canonical_action(text, self.model.tr.lang)
            action = game.parse_action(text) if game is not None else parse_action(text)
        except ValueError as e:  # the parser's reason, in the reader's words
            sentence = parse_error_sentence(e, _, self.model.tr.lang, typed)
            self.model.refused("bad-action", sentence, text)
            return sentence
        self.pending = None
        canonical = str(action)
        self.model.acted(canonical)
        pending.callback(canonical)
        return None

    def suggest(self) -> Deferred[dict[str, Any] | str] | str:
        """The page's Suggest: the searching bot's move for the open prompt, searched from this
        seat's view only in a worker process (the reactor goes on meanwhile). The Deferred fires
        with the suggestion for the page (``action``, its ``label`` in the reader's notation, the
        ``reason``, the hand's ``cards`` it plays) or a sentence why there is none; a sentence
        at once when nothing is the seat's to play."""
        _ = self.model.tr.gettext
        game = self.game()
        if self.pending is None or game is None:
            return _(NOTHING_TO_SUGGEST)
        pool = self.hint_pool
        if pool is None:
            from twisted.internet import reactor

            from ..bot_pool import bot_pool

            pool = self.hint_pool = bot_pool(reactor)
        asked = suggest_from_view(self.view.get("state") or {}, game.rules, self.model.legal, pool)
        if isinstance(asked, str):
            return _(asked)

        def for_the_page(hint: Suggestion | str) -> dict[str, Any] | str:
            if isinstance(hint, str):
                return _(hint)
            lang = self.model.tr.lang
            action = str(hint.action)
            return {
                "action": action,
                "label": action_label(action, lang),
                "reason": hint.reason_in(lang),
                "cards": hand_cards_of(action),
            }

        return asked.addCallback(for_the_page)

    def ready(self) -> str | None:
        """The person is ready for the next hand (the score sheet read)."""
        gate, self.gate = self.gate, None
        if gate is not None:
            self.model.ask_ready(False)
            gate.callback(None)
            return None
        shown = self.model.hand_end
        if (
            shown is not None
            and isinstance(shown.get("hand"), int)
            and self.model.match_end is None
        ):
            self._ready_after = shown["hand"]  # the session asks the gate a moment later
            return None
        return self.model.tr.gettext(NOTHING_TO_BE_READY_FOR)

    def chat(self, text: str) -> str | None:
        """A chat line for the table, as the terminal's ``say``."""
        _ = self.model.tr.gettext
        text = text.strip()[: R.MAX_CHAT_LENGTH]
        if not text:
            return _("Write something to say.")
        if self.on_chat is None:
            return _("There is nobody to talk to here.")
        self.on_chat(text)
        return None

    def quit(self) -> str | None:
        """Leave the table, as the terminal's ``quit``."""
        if self.on_quit is not None:
            self.on_quit()
        return None


# the verbs whose cards come from the mover's hand (take-discard, may-i, deny name the discard)
HAND_VERBS = frozenset({"meld", "add", "discard", "take-pile"})


def hand_cards_of(action: str) -> list[str]:
    """The cards of the mover's hand a canonical ``action`` plays (the page highlights them)."""
    verb, *words = action.split()
    if verb not in HAND_VERBS:
        return []
    cards = []
    for word in words:
        try:
            parse_face(word)
        except ValueError:
            continue  # a meld's number, 'onto', '|'
        cards.append(word)
    return cards


__all__ = ["NOTHING_TO_BE_READY_FOR", "NOT_YOUR_TURN", "WebPlayer", "hand_cards_of"]
