"""The sentences of refused moves: one English template per reason, and its translation.

The engine refuses a move with :func:`refuse`, which formats the template of a reason key with the
move's parameters; the English sentence is the refusal's ``message`` (the log and the host's
``error`` carry it for old clients), and the wire's ``error`` also carries the code, the key's
variant and the parameters, so that each seat's client words the refusal in its own language
(:func:`reason_sentence`). A key is the stable reason code, or ``code.variant`` where one code
is refused for different causes that deserve different advice. Every code has a bare template:
a client shows it for a variant it does not know.

The parameters are language-neutral: numbers, canonical card text (``KH``), rank and suit
letters, phase names (which :data:`PHASE_WORDS` words for the reader).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from string import Formatter
from typing import Final

from .errors import IllegalAction
from .i18n import N_

ReasonArg = str | int

REASON_TEMPLATES: Final[dict[str, str]] = {
    # ---------------------------------------------------------------- whose turn, which step
    "hand-over": N_("The hand is over."),
    "deal-over": N_("The deal is over."),
    "not-your-turn": N_("It is seat {to_move}'s turn, not {seat}'s."),
    "wrong-phase": N_("That is not possible at this step of the turn ({phase})."),
    "wrong-phase.unknown-action": N_("Unknown action: {action}."),
    "nothing-to-answer": N_("Nobody has asked to go out."),
    "not-in-this-game": N_("That action does not exist in this game."),
    "not-in-this-game.take-top": N_("Only the whole pile may be taken here."),
    "not-in-this-game.merge": N_("Groups are not merged in this game."),
    # ---------------------------------------------------------------- cards in the hand
    "card-not-in-hand": N_("{card} is not in your hand."),
    "cannot-discard-three": N_("Red threes cannot be discarded."),
    # ---------------------------------------------------------------- melds (canasta)
    "too-few-cards": N_("A meld needs at least three cards."),
    "too-few-cards.add": N_("Add at least one card."),
    "not-meldable": N_("Red threes are never melded."),
    "not-meldable.black-threes": N_(
        "Black threes can only be melded together, with no other card."
    ),
    "mixed-ranks": N_("All natural cards of a meld must have the same rank."),
    "wild-only-meld": N_("Wild cards cannot form a meld on their own."),
    "too-few-naturals": N_("A meld needs at least {minimum} natural cards."),
    "too-many-wilds": N_(
        "A meld with {naturals} natural cards may hold at most {limit} wild cards."
    ),
    "meld-too-large": N_("No meld may hold more than {limit} cards."),
    "meld-too-large.sequence": N_("A sequence holds at most {limit} cards."),
    "meld-too-large.black-threes": N_("A meld of black threes holds three or four."),
    "meld-too-large.merge": N_("The merged meld would be too large."),
    "not-a-sequence": N_("A sequence is natural cards of one suit in a row, from 4 up to the ace."),
    "not-a-sequence.extend": N_("Only cards that continue the sequence at either end go on it."),
    "not-a-sequence.top-card": N_("The top card alone extends only a sequence."),
    "not-a-sequence.may-i": N_(
        "A sequence is consecutive cards of one suit, each rank once, without wrapping around "
        "the ace."
    ),
    "black-threes-only-going-out": N_(
        "Black threes may be melded only when going out in the same turn."
    ),
    "black-three-meld-closed": N_("Nothing may be added to black threes."),
    "meld-rank-exists": N_("Your team already has a meld of {rank}s: add to it instead."),
    "no-such-meld": N_("Your team has no meld number {meld}."),
    "no-such-meld.merge-same": N_("Name two different groups to merge."),
    "no-such-meld.may-i": N_("There is no meld {owner}.{meld}."),
    "wrong-rank": N_("Only {rank}s and wild cards go on that meld."),
    "wrong-rank.wilds": N_("Only wild cards go on a meld of wild cards."),
    "wrong-rank.merge": N_("Only two groups of the same rank merge."),
    "wrong-rank.onto": N_("{card} does not go on your meld {meld}."),
    "meld-closed": N_("That meld is closed: nothing more goes on."),
    "meld-closed.merge": N_("A closed meld cannot be merged."),
    "wild-on-canasta": N_("Wild cards may not be added to a canasta."),
    # ---------------------------------------------------------------- the initial meld
    "initial-meld-too-low": N_(
        "The initial meld must be worth at least {minimum}; laid so far this turn: {laid}."
    ),
    "initial-meld-too-low.pile": N_(
        "Taking the pile for an initial meld needs {minimum} from the top card and your hand; "
        "you can reach at most {reachable}."
    ),
    "initial-meld-too-low.first": N_("Make the initial meld first."),
    "initial-meld-too-low.merge": N_("Merge groups once the team has opened."),
    "initial-meld-pending": N_("Finish the initial meld before picking up the pile."),
    "initial-meld-unreachable": N_(
        "Your hand cannot reach the initial meld of {minimum} this turn."
    ),
    "initial-meld-unreachable.after": N_(
        "After that lay the initial meld could no longer reach {minimum}."
    ),
    # ---------------------------------------------------------------- the pile
    "pile-empty": N_("The discard pile is empty."),
    "pile-blocked": N_("The pile cannot be taken with {card} on top."),
    "pile-blocked.canasta": N_("{card} would go on your completed canasta: blocked."),
    "pile-frozen": N_("The pile is frozen: take it with two natural {rank}s from your hand."),
    "pile-take-cards": N_(
        "Take the pile with two {rank}s, or one and a wild card, from your hand."
    ),
    "pile-take-cards.no-meld": N_(
        "Your team has no meld of {rank}s to put it on: name two cards to meld with it."
    ),
    "pile-take-cards.no-meld-or-onto": N_(
        "Your team has no meld of {rank}s to put it on: name two cards to meld with it, "
        "or the meld ('onto N')."
    ),
    "pile-take-cards.pair": N_("Take the pile with a natural pair."),
    "pile-take-cards.which-meld": N_(
        "Your team has {count} melds {card} could go on: name one ('take-pile onto N')."
    ),
    "one-card-pile": N_("Holding one card you may not take a one-card pile."),
    "must-take-pile": N_("The stock is empty and your team can use the top card: take it."),
    # ---------------------------------------------------------------- going out
    "must-keep-a-card": N_(
        "That would leave you with one card or none and no canasta to go out with."
    ),
    "no-canasta-to-go-out": N_("Going out needs a canasta."),
    "no-canasta-to-go-out.many": N_("Going out needs {count} canastas."),
    "no-going-out": N_("Nobody goes out in this game: keep two cards to discard one."),
    "no-going-out.discard": N_("Nobody goes out in this game: you may not discard your last card."),
    "ask-not-allowed": N_("You cannot go out this turn, so do not ask."),
    "ask-not-allowed.no-partner": N_("There is no partner to ask."),
    "ask-not-allowed.when": N_(
        "Ask only after drawing from the stock and before melding, once a turn."
    ),
    "ask-not-allowed.one-card": N_(
        "With one card you go out or not by yourself: there is nothing to ask."
    ),
    "must-go-out": N_("Your partner said yes: you must go out this turn."),
    "must-go-out.black-threes": N_("You laid black threes: you must go out this turn."),
    "may-not-go-out": N_("Your partner said no: keep two cards."),
    "may-not-go-out.discard": N_("Your partner said no: you may not go out."),
    # ---------------------------------------------------------------- May I?: buying
    "no-buy-window": N_("No discard is being offered for sale now."),
    "own-discard": N_("You may not buy your own discard."),
    "own-turn": N_("You drew from the stock instead of taking that discard."),
    "buy-limit": N_("You have bought as many discards as a deal allows."),
    "not-top-discard": N_("The top discard is {top}, not {card}."),
    # ---------------------------------------------------------------- May I?: melds
    "not-a-meld": N_(
        "A meld is a set (one rank) or a sequence (one suit): these cards are neither."
    ),
    "not-a-meld.empty": N_("A meld needs cards."),
    "set-too-small": N_("A set needs at least {minimum} cards of one rank."),
    "set-too-large": N_("A set holds at most {limit} cards."),
    "sequence-too-short": N_("A sequence needs at least {minimum} consecutive cards of one suit."),
    "sequence-too-long": N_("A sequence holds at most {limit} cards."),
    "contract-not-met": N_(
        "The contract of this deal is sets: {sets}, sequences: {sequences}; "
        "these melds are sets: {laid_sets}, sequences: {laid_sequences}."
    ),
    "contract-not-met.count": N_(
        "The contract of this deal is sets: {sets}, sequences: {sequences}: "
        "lay exactly {melds} melds."
    ),
    "contract-duplicate-rank": N_("The sets of a contract must be of different ranks."),
    "contract-duplicate-suit": N_("The sequences of a contract must be in different suits."),
    "already-down": N_("Your contract is down: add cards to melds on the table instead."),
    "contract-first": N_("Lay your contract before adding to melds."),
    "does-not-fit": N_("The card must extend the sequence at one of its ends."),
    "does-not-fit.set": N_("Only {rank}s can be added to that set."),
    "does-not-fit.suit": N_("Only cards of suit {suit} can extend that sequence."),
    "meld-full": N_("A set holds at most {limit} cards."),
    "meld-full.sequence": N_("A sequence holds at most {limit} cards."),
    "must-meld-last-card": N_("In this deal the last card must be melded, not discarded."),
    "must-meld-last-card.stranded": N_(
        "In this deal the last card must be melded: {card} would be left with nowhere to go."
    ),
}

# The phases a ``wrong-phase`` refusal names, worded for the reader.
PHASE_WORDS: Final[dict[str, str]] = {
    "draw": N_("drawing"),
    "play": N_("melding and discarding"),
    "pile-pending": N_("the initial meld after taking the pile"),
    "asked": N_("waiting for the partner's answer"),
    "over": N_("the hand is over"),
    "buy-offer": N_("a discard offered for sale"),
    "buy-permission": N_("a buy waiting for permission"),
}

# The sentences of a typed move that cannot be read (``ActionParseError.key``): the client says
# them before anything goes to the table. ``{typed}`` is the text as the person typed it.
PARSE_TEMPLATES: Final[dict[str, str]] = {
    "empty": N_("Type a move ('help' lists them)."),
    "not-a-card": N_("'{card}' is not a card: write one as {examples}."),
    "unknown-action": N_("'{verb}' is not a move of this game; its moves: {verbs}."),
    "unreadable": N_("'{typed}' cannot be read: 'help' shows how to write '{verb}'."),
    "empty-group": N_("Separate the melds with '|', and leave none of them empty."),
}
UNREADABLE: Final = N_("That move cannot be read.")
# The cards a "not a card" sentence gives as examples, shown as the reader writes them.
EXAMPLE_CARDS: Final = ("KH", "10S", "JK")

# Bounds of the parameters a host may send (the wire's ``error.args``).
MAX_ARGS: Final = 8
MAX_ARG_TEXT: Final = 64


def template_fields(template: str) -> frozenset[str]:
    """The names of the placeholders of ``template``."""
    return frozenset(name for _, name, _, _ in Formatter().parse(template) if name)


def reason_key(code: str, variant: str | None) -> str:
    return f"{code}.{variant}" if variant else code


def _fill(template: str, args: Mapping[str, ReasonArg], word: Callable[[str], str]) -> str:
    values = {name: str(value) for name, value in args.items()}
    phase = values.get("phase")
    if phase in PHASE_WORDS:
        values["phase"] = word(PHASE_WORDS[phase])
    return template.format_map(values)


def refuse(key: str, **args: ReasonArg) -> IllegalAction:
    """The refusal of reason ``key`` (``code`` or ``code.variant``) with its parameters; its
    message is the English sentence."""
    code, _, variant = key.partition(".")
    message = _fill(REASON_TEMPLATES[key], args, str)
    return IllegalAction(code, message, params=args, variant=variant or None)


def reason_sentence(
    code: str,
    args: Mapping[str, ReasonArg] | None,
    variant: str | None = None,
    translate: Callable[[str], str] = str,
) -> str | None:
    """The refusal ``code`` worded by ``translate`` (a catalogue's gettext) from its parameters,
    or None when it cannot be (a host that sent no parameters, an unknown code, parameters that
    do not fill the template): the caller then shows the sentence the host sent."""
    if args is None:
        return None
    template = REASON_TEMPLATES.get(reason_key(code, variant)) or REASON_TEMPLATES.get(code)
    if template is None:
        return None
    if not template_fields(template) <= set(args):
        return None
    try:
        return _fill(translate(template), args, translate)
    except (KeyError, IndexError, ValueError):  # a translation that names other placeholders
        return _fill(template, args, str)


def parse_error_sentence(
    error: ValueError,
    translate: Callable[[str], str] = str,
    lang: str | None = None,
    typed: str = "",
) -> str:
    """Why a typed move cannot be read (an ``ActionParseError`` of either game's parser, or any
    ValueError it let through), worded by ``translate``; its card examples as ``lang`` writes
    cards, ``typed`` (what the person typed) quoted where the sentence quotes the move."""
    from .cards import card_label  # here: the cards module (through the engine) imports this one

    key = getattr(error, "key", None)
    params = dict(getattr(error, "params", None) or {})
    template = PARSE_TEMPLATES.get(key) if isinstance(key, str) else None
    if template is None:
        return translate(UNREADABLE)
    params.setdefault("typed", typed or params.get("text", ""))
    params["examples"] = ", ".join(card_label(c, lang) for c in EXAMPLE_CARDS)
    if not template_fields(template) <= set(params):
        return translate(UNREADABLE)
    try:
        return translate(template).format_map(params)
    except (KeyError, IndexError, ValueError):  # a translation that names other placeholders
        return template.format_map(params)


def wire_args(args: Mapping[str, ReasonArg]) -> dict[str, str]:
    """The parameters as the wire carries them: text values, within the wire's bounds."""
    items = list(args.items())[:MAX_ARGS]
    return {name[:MAX_ARG_TEXT]: str(value)[:MAX_ARG_TEXT] for name, value in items}
