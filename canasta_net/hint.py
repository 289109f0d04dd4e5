"""A suggested move with a short reason, for any client: the searching bot's choice.

``suggest(state)`` asks the searching bot what the seat to move should play and says why in one
sentence. It reads only what that seat may see (``docs/bots.md``), so a client may call it with
the state it holds for its own seat.

A client at a table holds no state, only its seat's view: ``suggest_from_view`` rebuilds a
position from that view alone (the cards the seat cannot see dealt from those it has not seen)
and searches it in a worker pool (``canasta_net.bot_pool``), so the client's reactor goes on
while the bot thinks. The terminal's ``suggest`` and the page's Suggest button use it.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from . import mayi
from .canasta.bots import search_bot as canasta_search_bot
from .canasta.position import position_from_dict, position_from_view
from .canasta.state import HandState
from .cards import action_label
from .errors import PositionError
from .i18n import N_, translator
from .search import SearchBot

if TYPE_CHECKING:  # the package's API needs no Twisted: only a client's hint returns a Deferred
    from twisted.internet.defer import Deferred

HINT_BUDGET = 0.5  # seconds a client's hint searches: short, the person waits for it


# The reasons, English here; ``Suggestion.reason_in`` says them in a reader's language.
NOT_SEARCHED = N_("the usual play (there was no time to search it)")
ONLY_MOVE = N_("the only move worth considering here")
USUAL_PLAY = N_(
    "the usual play; in {deals} sampled deals '{runner}' did not do better by enough to prefer it"
)
BEST_OF = N_(
    "best of {n} candidates over {deals} sampled deals: {gain} points a deal over '{runner}'"
)
TIED = N_("as good as any of {n} candidates over {deals} sampled deals; '{runner}' did as well")


@dataclass(frozen=True)
class Suggestion:
    action: Any
    message: str  # one of the reasons above (a catalogue's message)
    args: Mapping[str, Any] = field(default_factory=dict)  # its placeholders ('runner': a move)

    @property
    def reason(self) -> str:
        """The reason in English."""
        return self.reason_in("en")

    def reason_in(self, lang: str) -> str:
        """The reason in ``lang``, the moves it names in that language's card notation."""
        args = dict(self.args)
        if "runner" in args:
            args["runner"] = action_label(str(args["runner"]), lang)
        return translator(lang).gettext(self.message).format(**args)

    def __str__(self) -> str:
        return f"{self.action}: {self.reason}"


def search_bot_for(
    state: Any, rng: random.Random, budget: float = 0.5, simulations: int | None = None
) -> SearchBot:
    """The searching bot of ``state``'s game."""
    if isinstance(state, HandState):
        return canasta_search_bot(rng, budget, simulations)
    if isinstance(state, mayi.DealState):
        return mayi.bots.search_bot(rng, budget, simulations)
    raise TypeError(f"no game's state: {type(state).__name__}")


def suggest(
    state: Any,
    budget: float = 0.5,
    simulations: int | None = None,
    rng: random.Random | None = None,
) -> Suggestion:
    """The move the searching bot would play for the seat to move in ``state``, and why (in
    this thread: a reactor uses ``canasta_net.bot_pool.BotPool.suggest_later``)."""
    bot = search_bot_for(state, rng or random.Random(), budget, simulations)
    action = bot.choose_in(state)
    return suggestion_of(action, bot.last, bot.deals_tried)


def suggestion_of(action: Any, tried: Sequence[tuple[Any, float]], deals: int) -> Suggestion:
    """A searched ``action`` with its reason: ``tried`` are the candidates' mean values over
    ``deals`` sampled deals (empty: the search did not run, the heuristic chose)."""
    if not tried:
        return Suggestion(action, NOT_SEARCHED)
    if len(tried) <= 1:
        return Suggestion(action, ONLY_MOVE)
    value = dict((str(a), v) for a, v in tried)[str(action)]
    others = [(str(a), v) for a, v in tried if str(a) != str(action)]
    runner, runner_value = max(others, key=lambda t: t[1])
    if value < runner_value:
        return Suggestion(action, USUAL_PLAY, {"deals": deals, "runner": runner})
    gain = f"{value - runner_value:+.0f}"
    if gain in ("+0", "-0"):  # "+0 points a deal over" reads as a gain that is not there
        return Suggestion(action, TIED, {"n": len(tried), "deals": deals, "runner": runner})
    return Suggestion(
        action, BEST_OF, {"n": len(tried), "deals": deals, "gain": gain, "runner": runner}
    )


# --------------------------------------------------------------------------- from a seat's view
NOTHING_TO_SUGGEST = N_("It is not your move: there is nothing to suggest now.")
NO_SUGGESTION = N_("No suggestion here: this position cannot be searched from what you see.")


class SuggestionPool(Protocol):
    """Where a client's search runs (``canasta_net.bot_pool.BotPool``: worker processes)."""

    def suggest_later(
        self,
        state: Any,
        budget: float = ...,
        simulations: int | None = ...,
        rng: random.Random | None = ...,
    ) -> Deferred[Suggestion]: ...


def state_from_view(seat_view: Mapping[str, Any], rules: Any, rng: random.Random) -> Any:
    """The position a seat may search from its own view alone (its information set, the cards
    it cannot see dealt with ``rng`` from those it has not seen): never another seat's cards.
    Raises PositionError (or KeyError, TypeError, ValueError) when the view gives none."""
    if isinstance(rules, mayi.MayIRules):
        return mayi.position_from_dict(mayi.position_from_view(seat_view, rules, rng))
    return position_from_dict(position_from_view(seat_view, rules, rng))


def suggest_from_view(
    seat_view: Mapping[str, Any],
    rules: Any,
    legal: Sequence[str],
    pool: SuggestionPool,
    *,
    budget: float = HINT_BUDGET,
    simulations: int | None = None,
    rng: random.Random | None = None,
) -> Deferred[Suggestion | str] | str:
    """A client's hint: the searching bot's move among ``legal`` (the moves the seat was
    offered) for the seat whose ``seat_view`` this is, searched from that view only in ``pool``
    (so the caller's reactor never waits). The Deferred fires with the suggestion, or with
    ``NO_SUGGESTION`` when the search's move is not among ``legal``. Or, at once, why there is
    none (an English catalogue message): ``NOTHING_TO_SUGGEST`` when nothing is the seat's to
    play, ``NO_SUGGESTION`` when the view gives no position to search."""
    rng = rng or random.Random()
    if not legal or seat_view.get("to_move") != seat_view.get("seat"):
        return NOTHING_TO_SUGGEST
    try:
        state = state_from_view(seat_view, rules, rng)
    except (PositionError, KeyError, TypeError, ValueError, IndexError):
        return NO_SUGGESTION
    if state.to_move != seat_view.get("seat") or not state.legal_actions():
        return NO_SUGGESTION
    offered = set(legal)

    def offered_only(hint: Suggestion) -> Suggestion | str:
        # the rebuilt position may allow a move the table does not (the pile below its top is
        # guessed): a move the seat was not offered is never suggested
        return hint if str(hint.action) in offered else NO_SUGGESTION

    asked = pool.suggest_later(state, budget=budget, simulations=simulations, rng=rng)
    answer: Deferred[Suggestion | str] = asked.addCallback(offered_only)
    return answer
