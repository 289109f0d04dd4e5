"""canasta-net: Canasta across a LAN, dealt fairly, every move recorded and auditable.

The package gives the rules engine at its top level, in python-chess's manner::

    import random
    import canasta_net as cn

    rules = cn.preset("classic")
    order = list(range(rules.deck_size))
    random.shuffle(order)
    hand = cn.HandState(rules, order, dealer=0)
    hand.apply(cn.parse_action("draw"))
    print(hand.legal_actions()[:5], cn.seat_view(hand, 0)["hand"])

``HandState`` is one hand (``legal_actions``, ``is_legal``, ``apply`` raising ``IllegalAction``
with a reason code, ``copy``); ``Match`` strings hands into a match; positions are read and written
as plain dictionaries (``docs/position.md``); ``make_bot`` gives the bots (``random``, ``greedy``,
``heuristic``, ``search``), ``choose_for(bot, hand)`` asks one for a move and ``suggest(hand)``
gives the searching bot's hint. The table, the deal, the log and the network live in
the subpackages (``docs/architecture.md``).
"""

from .canasta.actions import (
    Action,
    AddToMeld,
    Answer,
    AskGoOut,
    Discard,
    Draw,
    Meld,
    MergeMelds,
    TakePile,
    TakeTop,
    parse_action,
)
from .canasta.bots import Bot, GreedyBot, RandomBot, choose_for, make_bot
from .canasta.heuristic import HeuristicBot
from .canasta.match import Match, MatchOver, MatchResult
from .canasta.position import position_from_dict, position_to_dict, seat_view
from .canasta.rules import PRESETS, RuleSet, RuleSetError, preset
from .canasta.scoring import TeamScore, score_hand
from .canasta.state import EndReason, HandState, Phase
from .cards import Deck, face_text, parse_face, parse_faces
from .errors import IllegalAction, PositionError
from .hint import Suggestion, suggest
from .search import SearchBot

__version__ = "0.1.0"

__all__ = [
    "PRESETS",
    "Action",
    "AddToMeld",
    "Answer",
    "AskGoOut",
    "Bot",
    "Deck",
    "Discard",
    "Draw",
    "EndReason",
    "GreedyBot",
    "HandState",
    "HeuristicBot",
    "IllegalAction",
    "Match",
    "MatchOver",
    "MatchResult",
    "Meld",
    "MergeMelds",
    "Phase",
    "PositionError",
    "RandomBot",
    "RuleSet",
    "RuleSetError",
    "SearchBot",
    "Suggestion",
    "TakePile",
    "TakeTop",
    "TeamScore",
    "choose_for",
    "face_text",
    "make_bot",
    "parse_action",
    "parse_face",
    "parse_faces",
    "position_from_dict",
    "position_to_dict",
    "preset",
    "score_hand",
    "seat_view",
    "suggest",
]
