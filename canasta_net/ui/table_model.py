"""What a person's client shows of the table, built from what the seat's session sees (sans-io).

The terminal client and the browser page show the same table: whose turn, the hand grouped, the
cards just drawn, the last move, the pile and why it is frozen, the melds with their values, the
initial-meld requirement, the prompt (a partner's "may I go out?", a May I? buy), the refusal of
what was tried, and between hands the score sheet. :class:`TableModel` follows the seat's
session (its views, records, prompts and refusals) and gives all of it as one JSON-ready map,
:meth:`TableModel.snapshot`, documented field by field in ``docs/ui-model.md``.

Everything in it that another party wrote (names, chats, reasons, refusals) is kept as it came;
a terminal makes it safe with ``safe_text`` when it prints, a page with ``textContent``.
Nothing here decides a rule: values, frozen states and legal moves come from the engine's seat
view and the host's prompt.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..cards import JOKER, card_label, parse_face
from ..games import Game
from ..i18n import N_, Translator, translator
from ..log import StoredRecord
from ..log import records as R
from ..reasons import reason_sentence

# Version of the snapshot's layout (``docs/ui-model.md``).
MODEL_VERSION = 1

# How many event lines a client keeps to show.
EVENTS_KEPT = 60

# Labels of a Canasta hand's score parts, in the order a score sheet lists them.
SCORE_PARTS = (
    ("melds", N_("cards in melds")),
    ("canasta_bonus", N_("canasta bonuses")),
    ("natural_canastas", N_("natural canastas")),
    ("mixed_canastas", N_("mixed canastas")),
    ("red_threes", N_("red threes")),
    ("going_out", N_("going out")),
    ("cards_in_hand", N_("cards left in hand")),
    ("total", N_("hand total")),
)

# What a host says when it ends a seat's session (``bye``): words of another party, shown as
# they came, except these known sentences, which each reader reads in their language.
HOST_SENTENCES = frozenset(
    {
        N_("the match is over"),
        N_("the host quit"),
        N_("the host could not listen"),
    }
)


def host_sentence(text: str, tr: Translator) -> str:
    """A host's sentence in the reader's language if it is one the catalogue knows, else as it
    came (its words are another party's)."""
    return tr.gettext(text) if text in HOST_SENTENCES else text


# The verbs whose prompt asks a question of this seat, not for its turn's move.
_ANSWER_VERBS = frozenset({"answer"})
_BUY_VERBS = frozenset({"may-i", "pass"})
_PERMISSION_VERBS = frozenset({"allow", "deny"})


@dataclass(frozen=True)
class Refusal:
    """A move this seat tried that the engine (at the seat or at the host) refused.

    ``message`` is the sentence that came with it (the engine's English); ``args`` and
    ``variant``, where the engine's parameters came too, let :meth:`to_dict` word it in the
    reader's language (``canasta_net/reasons.py``)."""

    tried: str
    code: str
    message: str
    args: Mapping[str, str | int] | None = None
    variant: str | None = None

    def sentence(self, translate: Callable[[str], str] = str) -> str:
        """The refusal in the reader's language, or the sentence that came with it."""
        worded = reason_sentence(self.code, self.args, self.variant, translate)
        return self.message if worded is None else worded

    def to_dict(self, translate: Callable[[str], str] = str) -> dict[str, str]:
        return {"tried": self.tried, "code": self.code, "message": self.sentence(translate)}


def _multiset_new(before: list[str], after: list[str]) -> list[str]:
    """The cards of ``after`` that ``before`` did not hold (as many of each as are new)."""
    new = Counter(after) - Counter(before)
    out = []
    for card in after:
        if new[card] > 0:
            out.append(card)
            new[card] -= 1
    return out


def rank_group(card: str) -> str:
    """The group a Canasta hand shows a card in: its rank, or ``wild`` for jokers and twos."""
    try:
        face = parse_face(card)
    except ValueError:
        return "?"
    if face == JOKER or card[:-1] == "2":
        return "wild"
    return card[:-1]


def suit_group(card: str) -> str:
    """The group a May I? hand shows a card in: its suit."""
    return card[-1:] if card != "JK" else "wild"


def contract_words(contract: str, tr: Translator) -> str:
    """A May I? contract (``2 sets + 1 sequence``, the engine's text) in the reader's language;
    as it came if it is not in that form."""
    parts = []
    for part in contract.split(" + "):
        number, _sep, kind = part.partition(" ")
        if not number.isdigit():
            return contract
        n = int(number)
        if kind.startswith("set"):
            parts.append(tr.ngettext("{n} set", "{n} sets", n).format(n=n))
        elif kind.startswith("sequence"):
            parts.append(tr.ngettext("{n} sequence", "{n} sequences", n).format(n=n))
        else:
            return contract
    return " + ".join(parts)


def prompt_kind(legal: list[str]) -> str | None:
    """What the seat is asked (``turn``, ``answer-go-out``, ``may-i-buy``, ``may-i-permission``),
    read off the verbs of the legal actions; None when nothing is asked."""
    if not legal:
        return None
    verbs = {text.split()[0] for text in legal}
    if verbs <= _ANSWER_VERBS:
        return "answer-go-out"
    if verbs <= _BUY_VERBS:
        return "may-i-buy"
    if verbs <= _PERMISSION_VERBS:
        return "may-i-permission"
    return "turn"


def actions_by_verb(legal: list[str]) -> dict[str, list[str]]:
    """The legal actions grouped by their verb, in the order the host listed them."""
    out: dict[str, list[str]] = {}
    for text in legal:
        out.setdefault(text.split()[0], []).append(text)
    return out


class TableModel:
    """The table as one seat (or a watcher) sees it, kept up to date from its session."""

    def __init__(self, *, role: str = "player", tr: Translator | None = None) -> None:
        self.role = role  # "player" or "spectator"
        # the reader's language: every sentence of the snapshot is in it (docs/i18n.md)
        self.tr = tr if tr is not None else translator("en")
        self.game: Game | None = None
        self.seat: int | None = None
        self.view: dict[str, Any] = {}
        self.names: list[str] = []
        self.seats: list[dict[str, Any]] = []
        self.watchers: list[str] = []
        self.legal: list[str] = []
        self.refusal: Refusal | None = None
        self.tried: str | None = None  # the last move sent, until the next prompt or record
        self.drawn: list[str] = []  # cards new in this seat's hand since its turn began
        self.red_threes_laid: list[str] = []  # this seat's red threes laid since then
        # cards that came into the hand outside this seat's turn (a May I? buy: the discard and
        # its penalty card), until this seat's next move
        self.received: list[str] = []
        self.deal_red_threes: list[str] = []  # laid at the deal (and replaced), until then too
        self.last_move: dict[str, Any] | None = None
        self.hand_end: dict[str, Any] | None = None
        self.match_end: dict[str, Any] | None = None
        self.history: list[list[int]] = []  # the totals after each hand
        self.events: deque[str] = deque(maxlen=EVENTS_KEPT)
        self.finished: str | None = None
        self.outcome: dict[str, Any] = {}  # the log's path, its verdict, the replay's link
        self.host_fingerprint: str | None = None  # the table's (its host's) fingerprint
        self.watch_command: str | None = None  # how others watch this table (the host's page)
        self.lobby: dict[str, Any] | None = None  # a joiner's questions before its seat
        self.ready_asked = False  # the table waits for this person to be ready for a new hand
        self.version = 0  # grows with every change: a client redraws when it has grown
        self._listeners: list[Callable[[], None]] = []
        self._hand: list[str] = []
        self._turn_start: list[str] | None = None
        self._reds: list[str] = []  # this seat's red threes as last shown
        self._turn_start_reds: list[str] = []
        self._pile_size = 0
        self._new_deal = True  # the next view is a hand's first: nothing in it was "received"
        self._sent_version = -1  # the version ``acted`` made

    # ------------------------------------------------------------------ inputs
    def changed(self) -> None:
        self.version += 1
        for listener in self._listeners:
            listener()

    def set_language(self, lang: str) -> None:
        """The reader now reads ``lang``: the next snapshot's sentences are in it."""
        self.tr = translator(lang)
        self.changed()

    def add_listener(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` after every change (a page server pushes the new snapshot)."""
        self._listeners.append(listener)

    def welcome(self, game: Game, seat: int | None, names: list[str]) -> None:
        self.game, self.seat = game, seat
        self.names = list(names)
        self.changed()

    def show(self, view: dict[str, Any]) -> None:
        """A new view of the table (the host's, or the seat's own at a blind table)."""
        self.view = view
        state = view.get("state") or {}
        hand = [str(c) for c in state.get("hand") or []]
        reds = self._own_red_threes(state)
        my_turn = self.seat is not None and state.get("turn") == self.seat
        if not my_turn:
            self._turn_start = None
        elif self._turn_start is None:
            # the hand as the turn began: this view's, if the seat has not drawn yet (the
            # first view of a hand may already be the seat's turn), else the last one shown
            before_draw = state.get("phase") == "draw"
            self._turn_start = hand if before_draw else self._hand
            self._turn_start_reds = reds if before_draw else self._reds
        if self._new_deal and hand:
            self._new_deal = False
            self.deal_red_threes = reds  # a hand's first view: its red threes came with the deal
        elif not my_turn and self._hand:
            received = _multiset_new(self._hand, hand)
            if received:
                self.received = received
        if self._turn_start is not None:
            self.drawn = _multiset_new(self._turn_start, hand)
            self.red_threes_laid = _multiset_new(self._turn_start_reds, reds)
        elif state.get("hand_sizes") is not None:
            self.drawn = []
            self.red_threes_laid = []
        self._hand = hand
        self._reds = reds
        self._pile_size = int(state.get("pile_size") or len(state.get("pile") or []))
        if isinstance(view.get("seats"), list):
            self.seats = view["seats"]
        self.changed()

    def _own_red_threes(self, state: dict[str, Any]) -> list[str]:
        reds = state.get("red_threes")
        seat = self.seat
        if not isinstance(reds, list) or seat is None or not 0 <= seat < len(reds):
            return []
        return [str(c) for c in reds[seat] or []]

    def record(self, record: StoredRecord) -> None:
        """A verified record of the log: the last move, a hand's end, the match's end."""
        kind, fields, act = record.kind, record.fields, record.action
        if kind == R.ACTION and act is not None:
            seat = int(act.get("seat", -1))
            text = str(act.get("action", ""))
            move: dict[str, Any] = {"seat": seat, "name": self._name(seat), "action": text}
            verb = text.split()[0] if text else ""
            if verb in ("take-pile", "take-discard"):
                move["cards"] = self._pile_size if verb == "take-pile" else 1
            self.last_move = move
            if seat == self.seat:
                self.tried = None
                self.refusal = None
                self.received = []
                self.deal_red_threes = []
        elif kind == R.DEAL:
            self.hand_end = None
            self.last_move = None
            self.drawn = []
            self.red_threes_laid = []
            self._turn_start = None
            self._hand, self._reds = [], []  # the last hand's cards are not this one's
            self.received, self.deal_red_threes = [], []
            self._new_deal = True
        elif kind == R.HAND_END:
            self.hand_end = self._hand_end(fields)
            totals = fields.get("totals")
            if isinstance(totals, list):
                self.history.append([int(t) for t in totals])
        elif kind in (R.MATCH_END, R.MATCH_STOP, R.FORFEIT):
            self.match_end = {
                "kind": kind,
                "winner": fields.get("winner"),
                "totals": fields.get("totals"),
                "reason": fields.get("reason"),
                "seat": fields.get("seat"),
            }
        else:
            return
        self.changed()

    def _hand_end(self, fields: dict[str, Any]) -> dict[str, Any]:
        went = fields.get("went_out")
        scores = fields.get("scores") if isinstance(fields.get("scores"), list) else []
        sides = []
        for index, score in enumerate(scores or []):
            if not isinstance(score, dict):
                continue
            parts = [
                {"key": key, "label": label, "value": score[key]}
                for key, label in SCORE_PARTS
                if key in score
            ]  # labels in English here: the snapshot translates them for its reader
            sides.append(
                {
                    "side": index,
                    "names": self._side_names(index),
                    "parts": parts,
                    "total": score.get("total"),
                }
            )
        return {
            "hand": fields.get("hand"),
            "shown_hand": R.shown_number(int(fields.get("hand") or 0)),
            "reason": fields.get("reason"),
            "went_out": went,
            "went_out_name": self._name(went) if isinstance(went, int) else None,
            "sides": sides,
            "totals": fields.get("totals"),
        }

    def _side_names(self, side: int) -> list[str]:
        """The names of the seats a score belongs to (May I?: the seat's own name)."""
        names = self.score_names()
        return names[side] if 0 <= side < len(names) else [self._name(side)]

    def score_names(self) -> list[list[str]]:
        """For each entry of the scores, the names of the seats it counts for: a partnership's
        two seats, or one seat. The rules' teams, not the hand's: at a lone-hand table the two
        who play together in a hand keep their own scores."""
        game = self.game
        seats = range(len(self.names))
        if game is None or game.kind == "may-i" or not hasattr(game.rules, "team_of"):
            return [[self._name(s)] for s in seats]
        rules: Any = game.rules  # a Canasta RuleSet: teams and team_of
        return [[self._name(s) for s in seats if rules.team_of(s) == t] for t in range(rules.teams)]

    def _name(self, seat: int) -> str:
        if 0 <= seat < len(self.names):
            return self.names[seat]
        return self.tr.gettext("seat {seat}").format(seat=seat)

    def prompt(self, legal: list[str], view: dict[str, Any]) -> None:
        """The seat is asked to choose one of ``legal``."""
        self.legal = list(legal)
        self.show(view)

    def acted(self, text: str) -> None:
        """The seat sent ``text`` as its move: nothing more is asked until the next prompt."""
        self.tried = text
        self.legal = []
        self._sent_version = self.version + 1  # this change's (its listeners ask)
        self.changed()

    @property
    def move_in_flight(self) -> bool:
        """The last change is the seat's move sent (``acted``): nothing came since, neither the
        table's answer nor anything else. A page server holds the snapshot that says only this
        ("Sent ...") a moment, since the table's answer usually comes first."""
        return self.tried is not None and self.version == self._sent_version

    def refused(
        self,
        code: str,
        message: str,
        tried: str | None = None,
        args: Mapping[str, str | int] | None = None,
        variant: str | None = None,
    ) -> None:
        """The engine (at the seat or the host) refused the seat's last move; with its
        parameters (``args``, ``variant``) the snapshot words it in this reader's language."""
        self.refusal = Refusal(tried or self.tried or "", code, message, args, variant)
        self.changed()

    def event(self, text: str) -> None:
        self.events.append(text)
        self.changed()

    def seat_summary(self, seats: list[dict[str, Any]], watchers: list[str] | None = None) -> None:
        self.seats = seats
        self.names = [str(s.get("name", "")) for s in seats] or self.names
        if watchers is not None:
            self.watchers = list(watchers)
        self.changed()

    def finish(self, reason: str) -> None:
        self.finished = reason
        self.legal = []
        self.changed()

    def set_outcome(self, **outcome: Any) -> None:
        """What the match left behind: ``log`` (its path), ``verdict``, ``replay`` (a link)."""
        self.outcome.update(outcome)
        self.changed()

    def set_host_fingerprint(self, fingerprint: str) -> None:
        """The table's fingerprint (its host's key), as this client checked or pinned it."""
        self.host_fingerprint = fingerprint
        self.changed()

    def set_watch_command(self, command: str) -> None:
        """The command that watches this table (``canasta watch HOST:PORT --fingerprint FP``),
        which the host's page shows in its lobby."""
        self.watch_command = command
        self.changed()

    def set_lobby(self, lobby: dict[str, Any] | None) -> None:
        """What a joiner's page asks before the seat's session starts: ``trust`` (a host's
        fingerprint to accept or refuse) or ``tables`` (the tables heard on the LAN, to pick
        one); None once answered."""
        self.lobby = lobby
        self.changed()

    def ask_ready(self, asked: bool) -> None:
        """Whether the table now waits for this person to be ready for the next hand."""
        if asked != self.ready_asked:
            self.ready_asked = asked
            self.changed()

    # ------------------------------------------------------------------ the snapshot
    def snapshot(self) -> dict[str, Any]:
        """The whole table as a client shows it (``docs/ui-model.md``)."""
        view = self.view
        state = view.get("state")
        game = self.game
        kind = game.kind if game is not None else (state or {}).get("game")
        return {
            "v": MODEL_VERSION,
            "version": self.version,
            "lang": self.tr.lang,
            "role": self.role,
            "game": kind,
            "variant": None if game is None else game.rules.name,
            "contract": self._contract(state),
            "table": view.get("table"),
            "table_phase": view.get("phase"),
            "host_fingerprint": self.host_fingerprint,
            "watch_command": self.watch_command,
            "lobby": self.lobby,
            "hand_no": R.shown_number(int(view.get("hand_no") or 0)),
            "seat": self.seat,
            "seats": self._seat_rows(state),
            "watchers": list(self.watchers),
            "scores": list(view.get("scores") or []),
            "score_names": self.score_names(),
            "target": self._target(),
            "history": [list(h) for h in self.history],
            "hand": self._hand_cards(state, kind),
            "drawn": list(self.drawn),
            "red_threes_laid": list(self.red_threes_laid),
            "received": list(self.received),
            "deal_red_threes": list(self.deal_red_threes),
            "state": state,
            "sides": self._sides(state) if kind != "may-i" else [],
            "pile": self._pile(state),
            "prompt": self._prompt(state),
            "legal": list(self.legal),
            "actions": actions_by_verb(self.legal),
            "tried": self.tried,
            "refusal": None if self.refusal is None else self.refusal.to_dict(self.tr),
            "last_move": self.last_move,
            "hand_end": self._translated_sheet(),
            "ready_asked": self.ready_asked,
            "match_end": self.match_end,
            "finished": self.finished,
            "outcome": dict(self.outcome),
            "events": list(self.events),
        }

    def _contract(self, state: dict[str, Any] | None) -> str | None:
        """May I?: this deal's contract in the reader's words (``state.contract`` is the
        engine's)."""
        contract = (state or {}).get("contract")
        return None if not contract else contract_words(str(contract), self.tr)

    def _translated_sheet(self) -> dict[str, Any] | None:
        """The score sheet with its part labels in the reader's language."""
        sheet = self.hand_end
        if sheet is None or self.tr.lang == "en":
            return sheet
        _ = self.tr.gettext
        sides = [
            dict(side, parts=[dict(p, label=_(str(p["label"]))) for p in side.get("parts", [])])
            for side in sheet.get("sides", [])
        ]
        return dict(sheet, sides=sides)

    def _target(self) -> int | None:
        game = self.game
        target = None if game is None else getattr(game.rules, "target", None)
        return target if isinstance(target, int) and target > 0 else None

    def _seat_rows(self, state: dict[str, Any] | None) -> list[dict[str, Any]]:
        state = state or {}
        sizes = state.get("hand_sizes") or []
        teams = state.get("teams") or []
        rows = []
        for index, info in enumerate(self.seats or [{"name": n} for n in self.names]):
            rows.append(
                {
                    "seat": index,
                    "name": info.get("name", self._name(index)),
                    "bot": bool(info.get("bot")),
                    "taken": bool(info.get("taken", True)),
                    "connected": bool(info.get("connected", True)),
                    "left": info.get("left"),
                    "you": index == self.seat,
                    "team": teams[index] if index < len(teams) else None,
                    "to_move": state.get("to_move") == index,
                    "dealer": state.get("dealer") == index,
                    "cards": sizes[index] if index < len(sizes) else None,
                }
            )
        return rows

    def _hand_cards(self, state: dict[str, Any] | None, kind: str | None) -> list[dict[str, Any]]:
        if not state:
            return []
        group = suit_group if kind == "may-i" else rank_group
        fresh, came = Counter(self.drawn), Counter(self.received)
        cards = []
        for card in state.get("hand") or []:
            new, received = fresh[card] > 0, came[card] > 0
            if new:
                fresh[card] -= 1
            elif received:
                came[card] -= 1
            cards.append(
                {"card": card, "group": group(card), "new": new, "received": received and not new}
            )
        return cards

    def _sides(self, state: dict[str, Any] | None) -> list[dict[str, Any]]:
        """Each team's melds with their values, red threes, and the initial meld's progress."""
        if not state:
            return []
        teams = state.get("teams") or []
        me = self.seat
        my_team = teams[me] if me is not None and me < len(teams) else None
        turn_state = state.get("turn_state") or {}
        sides = []
        for team, melds in enumerate(state.get("melds") or []):
            seats = [s for s, t in enumerate(teams) if t == team]
            if teams and not seats:
                continue  # a lone-hand partner whose melds joined his partner's
            opened = bool((state.get("opened") or [False])[team])
            laid = turn_state.get("initial_points") if state.get("turn") in seats else None
            red = [c for s in seats for c in (state.get("red_threes") or [[]] * 8)[s]]
            sides.append(
                {
                    "team": team,
                    "seats": seats,
                    "names": [self._name(s) for s in seats],
                    "yours": team == my_team,
                    "opened": opened,
                    "needs": None if opened else (state.get("minimums") or [0])[team],
                    "laid_this_turn": laid or 0,
                    "red_threes": red,
                    "melds": [dict(m, index=i) for i, m in enumerate(melds)],
                    "meld_points": sum(
                        int(m.get("points", 0)) + int(m.get("bonus", 0)) for m in melds
                    ),
                    "canastas": sum(1 for m in melds if m.get("canasta")),
                }
            )
        return sides

    def _pile(self, state: dict[str, Any] | None) -> dict[str, Any]:
        state = state or {}
        size = state.get("pile_size")
        if size is None:
            size = len(state.get("pile") or [])
        teams = state.get("teams") or []
        me = self.seat
        team = teams[me] if me is not None and me < len(teams) else None
        frozen_for = state.get("pile_frozen_for") or []
        _ = self.tr.gettext
        reasons = []
        if state.get("pile_frozen"):
            reasons.append(_("a wild card or red three is in the pile"))
        if state.get("pile_always_frozen"):
            reasons.append(_("this variant always freezes the pile"))
        opened = state.get("opened") or []
        if team is not None and team < len(opened) and not opened[team]:
            reasons.append(_("your side has not opened yet"))
        frozen_for_you = (
            bool(frozen_for[team])
            if team is not None and team < len(frozen_for)
            else bool(state.get("pile_frozen"))
        )
        return {
            "top": state.get("pile_top"),
            "size": size,
            "frozen": bool(state.get("pile_frozen")),
            "frozen_for_you": frozen_for_you,
            "frozen_reasons": reasons if frozen_for_you else [],
            "stock": state.get("stock_size"),
        }

    def _prompt(self, state: dict[str, Any] | None) -> dict[str, Any] | None:
        kind = prompt_kind(self.legal)
        if kind is None:
            return None
        state = state or {}
        _ = self.tr.gettext
        top = card_label(str(state.get("pile_top")), self.tr.lang)
        if kind == "answer-go-out":
            asker = state.get("turn")
            if isinstance(asker, int):
                text = _("{who} asks: may I go out?").format(who=self._name(asker))
            else:
                text = _("Your partner asks: may I go out?")
        elif kind == "may-i-buy":
            text = _("May I? The discard {card} is for sale: buy it or pass.").format(card=top)
        elif kind == "may-i-permission":
            asker = (state.get("window") or {}).get("asker")
            who = self._name(asker) if isinstance(asker, int) else _("A player")
            text = _("{who} asks to buy {card}: allow it, or take it yourself.").format(
                who=who, card=top
            )
        else:
            phase = state.get("phase")
            if phase == "draw" and state.get("game") == "may-i":
                text = _("Your turn: draw from the stock or take the discard.")
            elif phase == "draw":
                text = _("Your turn: draw from the stock or take the pile.")
            elif phase == "play":
                text = _("Meld if you like, then discard.")
            elif phase == "pile-pending":
                text = _("Lay more melds to reach your initial meld.")
            else:
                text = _("Your turn.")
        return {"kind": kind, "text": text}


__all__ = [
    "EVENTS_KEPT",
    "HOST_SENTENCES",
    "MODEL_VERSION",
    "Refusal",
    "TableModel",
    "actions_by_verb",
    "contract_words",
    "host_sentence",
    "prompt_kind",
    "rank_group",
    "suit_group",
]
