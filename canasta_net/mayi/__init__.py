""" "May I?" (preset ``may-i``): a contract rummy for 3 to 5 players, as its own sans-io game.

It shares the card notation and error types of the Canasta engine and nothing else; see
``docs/may-i.md`` for the rules as implemented, the turn and buy-window state machine, the action
texts and the reason codes.
"""

from __future__ import annotations

from .actions import (
    AddToMeld,
    Allow,
    Deny,
    Discard,
    Draw,
    MayI,
    MayIAction,
    Meld,
    Pass,
    TakeDiscard,
    parse_action,
)
from .bots import GreedyMayIBot, MayIBot, NoLegalAction, RandomMayIBot, choose_for, make_bot
from .match import MatchOver, MatchResult, MayIMatch
from .position import (
    position_from_dict,
    position_from_view,
    position_to_dict,
    public_view,
    seat_view,
)
from .reasons import REASONS
from .rules import MAY_I, PRESETS, Contract, MayIRules, MayIRulesError, preset
from .scoring import deal_scores, hand_value
from .simulate import benchmark, play_deal, play_match
from .state import DealEnd, DealState, EndReason, Phase

__all__ = [
    "MAY_I",
    "PRESETS",
    "REASONS",
    "AddToMeld",
    "Allow",
    "Contract",
    "DealEnd",
    "DealState",
    "Deny",
    "Discard",
    "Draw",
    "EndReason",
    "GreedyMayIBot",
    "MatchOver",
    "MatchResult",
    "MayI",
    "MayIAction",
    "MayIBot",
    "MayIMatch",
    "MayIRules",
    "MayIRulesError",
    "Meld",
    "NoLegalAction",
    "Pass",
    "Phase",
    "RandomMayIBot",
    "TakeDiscard",
    "benchmark",
    "choose_for",
    "deal_scores",
    "hand_value",
    "make_bot",
    "parse_action",
    "play_deal",
    "play_match",
    "position_from_dict",
    "position_from_view",
    "position_to_dict",
    "preset",
    "public_view",
    "seat_view",
]
