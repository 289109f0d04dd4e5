"""Samba's going out against a brute force (RULES.md section 4: groups of one rank, several of a
rank that may be merged, at most two wild cards in a group, none added to a canasta; sequences
of 3 to 7 cards; two canastas to go out; black threes only when going out).

The reference below knows nothing of the engine's planner: from a position it tries every lay
(a new group, sequence or meld of black threes, cards added to a group or a sequence) and every
merge, in every order, until the hand holds at most the discard and the team two canastas. The
engine must agree on "may I go out?" (``can_go_out`` and the listing of ``ask-go-out``), on every
lay that leaves at most one card or binds the player to go out (black threes, the partner's
yes), and on every ``take-top`` and ``take-pile`` that leaves the player one card or none.
"""

from __future__ import annotations

import functools
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from rulecases import short_position
from test_rules_audit_variants import RUN_S, _two_king_groups, cards

from canasta_net.canasta.actions import (
    Action,
    AddToMeld,
    AskGoOut,
    Discard,
    Draw,
    Meld,
    MergeMelds,
    TakePile,
    TakeTop,
    parse_action,
)
from canasta_net.canasta.bots import GreedyBot, choose_for
from canasta_net.canasta.state import HandState
from canasta_net.cards import JOKER, face_text, is_black_three, parse_face

CANASTA = 7
MOST_WILDS = 2
NEEDED = 2

Group = tuple[int, int, int]  # rank, naturals, wild cards
Run = tuple[int, int, int]  # suit, lowest and highest run position (4 .. ace: 0 .. 10)
Hand = tuple[tuple[int, ...], int, int]  # natural faces (sorted), wild cards, black threes


def _position(face: int) -> int:
    rank = face % 13
    return 10 if rank == 0 else rank - 3 if rank > 2 else -1


def _face_at(suit: int, position: int) -> int:
    return suit * 13 + (0 if position == 10 else position + 3)


def _canastas(groups: tuple[Group, ...], sequences: tuple[Run, ...]) -> int:
    return sum(1 for _, n, w in groups if n + w >= CANASTA) + sum(
        1 for _, low, high in sequences if high - low + 1 >= CANASTA
    )


def _without(naturals: tuple[int, ...], faces: Counter[int]) -> tuple[int, ...]:
    rest = Counter(naturals)
    rest.subtract(faces)
    return tuple(sorted(rest.elements()))


def _merge_allowed(a: Group, b: Group) -> bool:
    """Two groups of one rank may be merged: within the wild-card limit, and no wild card comes
    to a canasta (``wild-on-canasta``)."""
    if a[2] + b[2] > MOST_WILDS:
        return False
    return not ((a[1] + a[2] >= CANASTA and b[2]) or (b[1] + b[2] >= CANASTA and a[2]))


def _moves(
    hand: Hand, groups: tuple[Group, ...], sequences: tuple[Run, ...]
) -> Iterator[tuple[tuple[Any, ...], Hand, tuple[Group, ...], tuple[Run, ...]]]:
    """Every lay and merge from a position, as (what it is, the hand, groups and sequences
    after). What it is: ("group", rank, naturals, wilds), ("add", index, naturals, wilds),
    ("sequence", suit, low, high), ("extend", index, low, high), ("threes", count),
    ("merge", first, second)."""
    naturals, wilds, threes = hand
    by_rank = Counter(f % 13 for f in naturals)
    held = {(f // 13, _position(f)) for f in naturals}

    def take(counts: Counter[int], used_wilds: int, used_threes: int = 0) -> Hand:
        return (_without(naturals, counts), wilds - used_wilds, threes - used_threes)

    def of_rank(rank: int, k: int) -> Counter[int]:
        return Counter([f for f in naturals if f % 13 == rank][:k])

    for i, (rank, n, w) in enumerate(groups):  # cards added to a group
        canasta = n + w >= CANASTA
        for k in range(by_rank[rank] + 1):
            for m in range((0 if canasta else min(wilds, MOST_WILDS - w)) + 1):
                if k + m:
                    after = (*groups[:i], (rank, n + k, w + m), *groups[i + 1 :])
                    yield ("add", i, k, m), take(of_rank(rank, k), m), after, sequences
    for rank, count in by_rank.items():  # new groups
        for k in range(2, count + 1):
            for m in range(min(wilds, MOST_WILDS) + 1):
                if k + m >= 3:
                    after = (*groups, (rank, k, m))
                    yield ("group", rank, k, m), take(of_rank(rank, k), m), after, sequences
    for i, (suit, low, high) in enumerate(sequences):  # cards added to a sequence
        if high - low + 1 >= CANASTA:
            continue
        below = 0
        while low - below - 1 >= 0 and (suit, low - below - 1) in held:
            below += 1
        above = 0
        while high + above + 1 <= 10 and (suit, high + above + 1) in held:
            above += 1
        for a in range(below + 1):
            for b in range(above + 1):
                if a + b > 0 and high - low + 1 + a + b <= CANASTA:
                    new_low, new_high = low - a, high + b
                    used = Counter(
                        _face_at(suit, p)
                        for p in [*range(new_low, low), *range(high + 1, new_high + 1)]
                    )
                    after_s = (*sequences[:i], (suit, new_low, new_high), *sequences[i + 1 :])
                    yield ("extend", i, new_low, new_high), take(used, 0), groups, after_s
    for suit, low in sorted(held):  # new sequences
        high = low
        while high - low + 1 < CANASTA and (suit, high + 1) in held:
            high += 1
            if high - low + 1 >= 3:
                used = Counter(_face_at(suit, p) for p in range(low, high + 1))
                yield (
                    ("sequence", suit, low, high),
                    take(used, 0),
                    groups,
                    (*sequences, (suit, low, high)),
                )
    for count in (3, 4):  # black threes
        if threes >= count:
            yield ("threes", count), take(Counter(), 0, count), groups, sequences
    for i, first in enumerate(groups):  # merges
        for j, second in enumerate(groups):
            if i != j and first[0] == second[0] and _merge_allowed(first, second):
                rest = [g for k, g in enumerate(groups) if k not in (i, j)]
                after = (*rest, (first[0], first[1] + second[1], first[2] + second[2]))
                yield ("merge", i, j), hand, after, sequences


@functools.cache
def goes_out(hand: Hand, groups: tuple[Group, ...], sequences: tuple[Run, ...]) -> bool:
    """Whether some order of lays and merges leaves at most the discard in the hand with two
    canastas on the table (a lay that empties the hand goes out at once)."""
    size = len(hand[0]) + hand[1] + hand[2]
    if size <= 1 and _canastas(groups, sequences) >= NEEDED:
        return True
    if size == 0:
        return False
    for _, after, after_groups, after_sequences in _moves(hand, groups, sequences):
        if goes_out(after, tuple(sorted(after_groups)), tuple(sorted(after_sequences))):
            return True
    return False


# ================================================================= positions and the engine
RANKS = ["9", "Q", "K"]
SUITS = "CDHS"
SAMBAS = [
    [f"{r}S" for r in ("4", "5", "6", "7", "8", "9", "10")],
    [f"{r}C" for r in ("4", "5", "6", "7", "8", "9", "10")],
]

OPEN_HEARTS = [
    "9H 10H JH",
    "9H 10H JH QH KH",
    "9H 10H JH QH KH AH",
    "4H 5H 6H",
    "4H 5H 6H 7H",
    "6H 7H 8H 9H",
]


class _Cards:
    """Faces dealt so far, at most three of each (three decks) and six jokers."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: Counter[str] = Counter()

    def take(self, text: str) -> str:
        self.used[text] += 1
        assert self.used[text] <= (6 if text == "JK" else 3), text
        return text

    def left(self, rank: str) -> int:
        return sum(3 - self.used[rank + s] for s in SUITS)

    def natural(self, rank: str) -> str:
        suits = [s for s in SUITS if self.used[rank + s] < 3]
        return self.take(rank + self.rng.choice(suits))

    def pick(self, options: list[str]) -> str:
        return self.take(self.rng.choice([c for c in options if self.used[c] < 3]))

    def wild(self) -> str:
        options = [w for w in ("JK", "2C", "2D", "2H") if self.used[w] < (6 if w == "JK" else 3)]
        return self.take(self.rng.choice(options))


def _random_table(cards: _Cards) -> list[list[str]]:
    rng = cards.rng
    table = [[cards.take(c) for c in run] for run in SAMBAS[: rng.choice([0, 1, 1, 1, 2])]]
    if rng.random() < 0.4:  # an open sequence that the hand's hearts (5H-8H) may extend
        table.append([cards.take(c) for c in rng.choice(OPEN_HEARTS).split()])
    for rank in rng.sample(RANKS, rng.choice([1, 1, 2])):
        for _ in range(rng.choice([1, 2, 2, 3])):
            if len(table) >= 5:
                break
            canasta = rng.random() < 0.15
            naturals = rng.randint(5, 7) if canasta else rng.randint(2, 5)
            wilds = rng.randint(0, 2)
            if naturals + wilds < 3:
                wilds = 1
            if canasta and naturals + wilds < CANASTA:
                wilds = CANASTA - naturals
            if cards.left(rank) < naturals + 3:  # some left for the hand
                break
            table.append([cards.natural(rank) for _ in range(naturals)])
            table[-1] += [cards.wild() for _ in range(wilds)]
    return table


def _random_hand(cards: _Cards, size: int) -> list[str]:
    rng = cards.rng
    hand: list[str] = []
    threes = rng.choice([0, 0, 0, 0, 1, 3, 4])
    hand += [cards.pick(["3C", "3S"]) for _ in range(min(threes, size))]
    while len(hand) < size:
        kind = rng.random()
        ranks = [r for r in RANKS if cards.left(r)]
        if kind < 0.6 and ranks:
            hand.append(cards.natural(rng.choice(ranks)))
        elif kind < 0.85:
            hand.append(cards.wild())
        else:  # hearts that may run
            hand.append(cards.pick(["5H", "6H", "7H", "8H"]))
    return hand


def _reference_of(state: HandState, seat: int = 0) -> tuple[Hand, list[Group], list[Run]]:
    """The position as the reference sees it: the hand of ``seat``, and its team's groups and
    sequences in the engine's order."""
    face = state.deck.face
    hand = [face[c] for c in state.hands[seat]]
    naturals = tuple(sorted(f for f in hand if f != JOKER and f % 13 not in (1, 2)))
    wilds = sum(1 for f in hand if f == JOKER or f % 13 == 1)
    threes = sum(1 for f in hand if is_black_three(f))
    assert len(naturals) + wilds + threes == len(hand)  # no red three is ever held
    groups: list[Group] = []
    sequences: list[Run] = []
    for m in state.melds[state.team_map[seat]]:
        if m.kind.value == "group":
            groups.append((m.rank, m.naturals, m.wilds))
        elif m.kind.value == "sequence":
            sequences.append((m.suit, m.low, m.high))
    return (naturals, wilds, threes), groups, sequences


def _goes_out(hand: Hand, groups: Sequence[Group], sequences: Sequence[Run]) -> bool:
    return goes_out(hand, tuple(sorted(groups)), tuple(sorted(sequences)))


def _action_of(state: HandState, move: tuple[Any, ...]) -> Action:
    """The engine's action for a first move of the reference in ``state`` (whose groups and
    sequences are those of ``_reference_of``, in the same order)."""
    face = state.deck.face
    hand = sorted(face[c] for c in state.hands[state.turn])
    wild_faces = [f for f in hand if f == JOKER or f % 13 == 1]
    team = state.melds[state.team_map[state.turn]]
    groups = [i for i, m in enumerate(team) if m.kind.value == "group"]
    runs = [i for i, m in enumerate(team) if m.kind.value == "sequence"]

    def of_rank(rank: int, k: int) -> list[int]:
        return [f for f in hand if f != JOKER and f % 13 == rank][:k]

    kind = move[0]
    if kind == "group":
        _, rank, k, m = move
        return Meld((*of_rank(rank, k), *wild_faces[:m]))
    if kind == "add":
        _, i, k, m = move
        return AddToMeld(groups[i], (*of_rank(team[groups[i]].rank, k), *wild_faces[:m]))
    if kind == "sequence":
        _, suit, low, high = move
        return Meld(tuple(_face_at(suit, p) for p in range(low, high + 1)))
    if kind == "extend":
        _, i, low, high = move
        m_ = team[runs[i]]
        positions = [*range(low, m_.low), *range(m_.high + 1, high + 1)]
        return AddToMeld(runs[i], tuple(_face_at(m_.suit, p) for p in positions))
    if kind == "threes":
        return Meld(tuple([f for f in hand if is_black_three(f)][: move[1]]))
    _, i, j = move
    return MergeMelds(groups[i], groups[j])


def _listed(state: HandState, action: Action) -> bool:
    def key(a: Action) -> object:
        if isinstance(a, Meld):
            return ("meld", tuple(sorted(a.cards)))
        if isinstance(a, AddToMeld):
            return ("add", a.meld, tuple(sorted(a.cards)))
        if isinstance(a, TakePile):
            return ("take-pile", tuple(sorted(a.cards)), a.meld)
        return a

    return key(state.normalize(action)) in {key(a) for a in state.legal_actions()}


def _describe(state: HandState) -> str:
    face = state.deck.face
    team = state.melds[state.team_map[state.turn]]
    hand = " ".join(face_text(face[c]) for c in sorted(state.hands[state.turn]))
    melds = " | ".join(" ".join(face_text(f) for f in m.faces) for m in team)
    return f"hand {hand}; melds {melds}; phase {state.phase.value}; turn {state.t}"


def _play_position(rng: random.Random, permission: bool | None) -> HandState:
    cards = _Cards(rng)
    table = _random_table(cards)
    if not table:
        table = [[cards.natural("K") for _ in range(3)]]
    hand = _random_hand(cards, rng.choice([2, 2, 3, 3, 4, 5, 6, 7]))
    return short_position(
        "samba",
        hands={0: hand, 2: ["4D", "5D"]},
        melds={0: table},
        stock=["4C", "5C"],
        has_melded=[True, False, True, False],
        turn_state={"drew": "stock", "permission": permission},
    )


def _check_play(state: HandState) -> int:
    """The engine's answers in a play position against the reference's; how many it judged."""
    hand, groups, sequences = _reference_of(state)
    size = len(hand[0]) + hand[1] + hand[2]
    expected = _goes_out(hand, groups, sequences)
    where = _describe(state)
    assert state.can_go_out() is expected, where
    legal = state.legal_actions()
    if state.t.permission is None:
        assert (AskGoOut() in legal) is (expected and size >= 2), where
    bound = state.t.permission is True
    judged = 1
    seen: set[Action] = set()
    for move, after, after_groups, after_sequences in _moves(hand, (*groups,), (*sequences,)):
        left = len(after[0]) + after[1] + after[2]
        if not (bound or left <= 1 or move[0] == "threes"):
            continue  # the lay leaves two cards or more and binds to nothing: always legal
        action = _action_of(state, move)
        if action in seen:
            continue
        seen.add(action)
        allowed = _goes_out(after, after_groups, after_sequences)
        assert state.is_legal(action) is allowed, (where, str(action))
        assert _listed(state, action) is allowed, (where, str(action), "listing")
        judged += 1
    if bound:
        canastas = _canastas(tuple(groups), tuple(sequences))
        for c in state.hands[0]:
            discard = Discard(state.deck.face[c])
            assert state.is_legal(discard) is (size == 1 and canastas >= NEEDED), where
    return judged


def _draw_position(rng: random.Random) -> HandState:
    """A draw with a short hand: the top card may go on the team's open sequence (4-6D) or
    be taken with a natural pair."""
    cards = _Cards(rng)
    table = _random_table(cards)
    table.append([cards.take(c) for c in ("4D", "5D", "6D")])
    hand = _random_hand(cards, rng.choice([1, 1, 2, 2, 3]))
    naturals = [c for c in hand if c[:-1] in RANKS]
    rank = rng.choice(["7", *(c[:-1] for c in naturals if cards.left(c[:-1]))])
    top = cards.take("7D") if rank == "7" else cards.natural(rank)
    pile = [top] if rng.random() < 0.7 else [cards.natural("8"), top]
    return short_position(
        "samba",
        phase="draw",
        hands={0: hand, 2: ["4D", "5D"]},
        melds={0: table},
        pile=pile,
        stock=["4C", "5C"],
        has_melded=[True, False, True, False],
    )


def _check_draw(state: HandState) -> int:
    """``take-top`` and ``take-pile`` that leave one card or none, against the reference."""
    face = state.deck.face
    hand, groups, sequences = _reference_of(state)
    top = face[state.pile[-1]]
    rest = [face[c] for c in state.pile[:-1]]
    team = state.melds[0]
    where = _describe(state)
    judged = 0
    legal = state.legal_actions()
    size = len(hand[0]) + hand[1] + hand[2]
    runs = [i for i, m in enumerate(team) if m.kind.value == "sequence"]
    for k, i in enumerate(runs):
        action: Action = TakeTop(i)
        suit, low, high = sequences[k]
        position = _position(top)
        fits = top // 13 == suit and position in (low - 1, high + 1) and high - low < CANASTA - 1
        if fits and size <= 1:
            grown = (suit, min(low, position), max(high, position))
            allowed = _goes_out(hand, groups, [*sequences[:k], grown, *sequences[k + 1 :]])
        else:
            allowed = fits
        assert state.is_legal(action) is allowed, (where, str(action))
        assert (action in legal) is allowed, (where, str(action), "listing")
        judged += 1
    rank = top % 13
    pair = [f for f in hand[0] if f % 13 == rank][:2]
    if len(pair) == 2 and top != JOKER and rank not in (1, 2):
        targets: list[int | None] = [None]
        targets += [i for i, m in enumerate(team) if m.kind.value == "group" and m.rank == rank]
        for target in targets:
            action = TakePile(tuple(pair), target)
            rest_hand: Hand = (
                tuple(sorted([*_without(hand[0], Counter(pair)), *rest])),
                hand[1],
                hand[2],
            )
            if target is None:
                after_groups = [*groups, (rank, 3, 0)]
            else:
                index = [i for i, m in enumerate(team) if m.kind.value == "group"].index(target)
                r, n, w = groups[index]
                after_groups = [*groups[:index], (r, n + 3, w), *groups[index + 1 :]]
            left = len(rest_hand[0]) + rest_hand[1] + rest_hand[2]
            if left == 0:
                allowed = _canastas(tuple(after_groups), tuple(sequences)) >= NEEDED
            elif left == 1:
                allowed = _goes_out(rest_hand, after_groups, sequences)
            else:
                allowed = True
            assert state.is_legal(action) is allowed, (where, str(action))
            assert _listed(state, action) is allowed, (where, str(action), "listing")
            judged += 1
    return judged


def test_samba_going_out_agrees_with_every_order_of_lays_and_merges() -> None:
    """About a thousand random Samba positions (a fixed seed): "may I go out?", the lays that
    leave at most the discard or bind the player to go out, and the pile takes that leave one
    card or none are allowed exactly when the brute force finds a way out."""
    rng = random.Random("samba-going-out")
    judged = Counter[str]()
    for _ in range(700):
        judged["play"] += _check_play(_play_position(rng, None))
    for _ in range(150):
        judged["bound"] += _check_play(_play_position(rng, True))
    for _ in range(250):
        judged["draw"] += _check_draw(_draw_position(rng))
    assert min(judged.values()) >= 100, judged


# ================================================================= the examples
def test_reference_knows_the_shapes() -> None:
    """The reference itself, on positions worked out by hand."""
    K = parse_face("KC") % 13
    # two groups of kings merge (3 + 3 + the hand's king): the second canasta
    assert _goes_out(
        ((parse_face("KC"), parse_face("9C")), 0, 0), [(K, 2, 1), (K, 2, 1)], [(3, 0, 6)]
    )
    # four wild cards need two groups: one makes a canasta with 3 + 2 + 2, the other holds two
    hand = (tuple(parse_face(c) for c in cards("KC KD KH KS")), 4, 0)
    assert _goes_out((hand[0] + (parse_face("9C"),), 4, 0), [(K, 3, 0)], [(3, 0, 6)])
    assert not _goes_out(hand, [(K, 3, 0)], [])


def test_greedy_bot_bound_to_go_out_merges_when_no_discard_is_listed() -> None:
    """After the partner's yes the greedy bot lays its queens and is left with 9C: no discard is
    legal until the kings are merged into the second canasta. It chose among the discards
    only, and failed (``min()`` of an empty sequence)."""
    state = _two_king_groups(["QH", "QD"], phase="draw", stock=["QS", "9C"])
    bot = GreedyBot()
    moves: list[str] = []
    while state.end is None and len(moves) < 10:
        action = choose_for(bot, state)
        moves.append(str(action))
        state.apply(action)
    assert moves == [
        "draw",
        "ask-go-out",
        "answer yes",
        "meld QD QH QS",
        "merge 1 2",
        "discard 9C",
    ], moves
    assert state.end is not None and state.end.went_out == 0


def test_going_out_with_a_second_group_of_a_rank_making_the_second_canasta() -> None:
    """RULES.md section 4: "a team may hold several groups of the same rank". A samba and three
    kings on the table; four kings, four wild cards and 9C in hand: the kings on the table with
    two more and two wild cards make the second canasta, the other two kings start a new group
    with the other two wild cards, 9C is discarded. The engine put every king on the group,
    found two wild cards to spare and said going out was impossible."""
    state = short_position(
        "samba",
        phase="draw",
        hands={0: cards("KC KD KH KS 2C 2D JK"), 2: ["4D", "5D"]},
        melds={0: [RUN_S, cards("KC KD KH")]},
        stock=["9C", "JK"],
        has_melded=[True, False, True, False],
    )
    state.apply(Draw())
    assert state.can_go_out()
    assert AskGoOut() in state.legal_actions()
    for text in ("ask-go-out", "answer yes", "add 1 KC KD 2C 2D", "meld KH KS JK JK"):
        state.apply(parse_action(text))
    assert state.canastas(0) == 2
    state.apply(parse_action("discard 9C"))
    assert state.end is not None and state.end.went_out == 0


def test_going_out_through_a_merge_that_the_hand_completes() -> None:
    """Two groups of kings of three cards each (one wild card each) merge into six; the hand's
    king makes the second canasta. The engine counted only merges that made a canasta by
    themselves, so it refused the lay of the queens that leaves the king and 9C."""
    state = short_position(
        "samba",
        hands={0: cards("QH QD QS KC 9C"), 2: ["4D", "5D"]},
        melds={0: [RUN_S, cards("KH KD 2C"), cards("KS KD 2D")]},
        has_melded=[True, False, True, False],
    )
    assert state.can_go_out()
    state.apply(parse_action("meld QH QD QS"))
    assert state.is_legal(parse_action("add 1 KC"))
    state.apply(parse_action("merge 1 2"))
    state.apply(parse_action("add 1 KC"))  # one card left: a legal lay, the canastas made
    state.apply(parse_action("discard 9C"))
    assert state.end is not None and state.end.went_out == 0


def test_black_threes_as_the_last_lay_count_a_merge() -> None:
    """Black threes go down only when going out: with 9C left after them, two groups of kings
    (4 and 3) merge into the second canasta, and 9C is discarded. The engine counted the
    canastas on the table only, and refused the threes."""
    state = _two_king_groups(["3C", "3S", "3S", "9C"])
    action = parse_action("meld 3C 3S 3S")
    assert state.is_legal(action) and _listed(state, action)
    state.apply(action)
    assert not state.is_legal(parse_action("discard 9C"))  # bound to go out: merge first
    state.apply(parse_action("merge 1 2"))
    state.apply(parse_action("discard 9C"))
    assert state.end is not None and state.end.went_out == 0


def test_take_top_with_one_card_counts_a_merge() -> None:
    """``take-top`` with one card in hand: the team must be able to go out. Two groups of
    kings merge into the second canasta; the engine counted the canastas on the table only
    (``must-keep-a-card``)."""
    position = short_position(
        "samba",
        phase="draw",
        hands={0: ["9C"], 2: ["4D", "5D"]},
        melds={0: [RUN_S, cards("KH KD KS KC"), cards("KH KD KS"), cards("4D 5D 6D")]},
        pile=["4H", "7D"],
        stock=["5C"],
    )
    action = TakeTop(3)
    assert position.is_legal(action) and action in position.legal_actions()
    position.apply(action)
    position.apply(parse_action("merge 1 2"))
    position.apply(parse_action("discard 9C"))
    assert position.end is not None and position.end.went_out == 0


def test_take_pile_leaving_one_card_counts_a_merge_or_the_last_card_laid() -> None:
    """A pile of one king taken with a natural pair as a new group leaves 9C: the new group of
    three merged with the team's four kings is the second canasta. Taken with the pair from a
    hand of KC KD JK, the joker left completes the team's six queens."""
    merge = short_position(
        "samba",
        phase="draw",
        hands={0: ["KC", "KD", "9C"], 2: ["4D", "5D"]},
        melds={0: [RUN_S, cards("KH KD KS KC")]},
        pile=["KS"],
        stock=["5C"],
    )
    action = TakePile((parse_face("KC"), parse_face("KD")))
    assert merge.is_legal(action) and _listed(merge, action)
    merge.apply(action)
    merge.apply(parse_action("merge 1 2"))
    merge.apply(parse_action("discard 9C"))
    assert merge.end is not None and merge.end.went_out == 0
    last = short_position(
        "samba",
        phase="draw",
        hands={0: ["KC", "KD", "JK"], 2: ["4D", "5D"]},
        melds={0: [RUN_S, cards("QH QH QS QD QC 2C")]},
        pile=["KS"],
        stock=["5C"],
    )
    assert last.is_legal(action) and _listed(last, action)
    last.apply(action)
    last.apply(parse_action("add 1 JK"))
    assert last.end is not None and last.end.went_out == 0


def test_classic_take_pile_leaving_a_last_card_that_makes_the_canasta() -> None:
    """The rule is the lays' (docs/rules.md, Going out): a pile of one king taken with a pair
    from KC KD 9C leaves 9C, which completes the team's six nines; the player goes out by
    laying it. The engine refused the take (``must-keep-a-card``) before counting the last
    card."""
    state = short_position(
        "classic",
        phase="draw",
        hands={0: cards("KC KD 9C"), 2: ["4D", "5D"]},
        melds={0: [cards("9D 9D 9H 9H 9S 9S")]},
        pile=["KS"],
        stock=["5C"],
    )
    action = TakePile((parse_face("KC"), parse_face("KD")))
    assert state.is_legal(action) and _listed(state, action)
    state.apply(action)
    state.apply(parse_action("add 0 9C"))
    assert state.end is not None and state.end.went_out == 0
    alone = short_position(  # no nines to complete: refused as before
        "classic",
        phase="draw",
        hands={0: cards("KC KD 9C")},
        melds={0: [cards("9D 9D 9H 9S 9S")]},
        pile=["KS"],
        stock=["5C"],
    )
    assert not alone.is_legal(action)


def test_going_out_by_extending_a_sequence_on_the_table_into_the_second_samba() -> None:
    """A samba and 4H-9H on the table; QH QD QS 10H in hand: the queens go down, 10H makes
    4H-9H a samba, the second canasta, and the hand is empty. The going-out check knew nothing
    of the sequences on the table, said going out was impossible and refused the queens."""
    state = short_position(
        "samba",
        hands={0: cards("QH QD QS 10H"), 2: ["4D", "5D"]},
        melds={0: [RUN_S, cards("4H 5H 6H 7H 8H 9H")]},
        stock=["4C", "5C"],
        has_melded=[True, False, True, False],
        turn_state={"drew": "stock"},
    )
    assert state.can_go_out()
    assert AskGoOut() in state.legal_actions()
    lay = parse_action("meld QH QD QS")
    assert state.is_legal(lay)
    assert _listed(state, lay)
    state.apply(lay)
    state.apply(parse_action("add 1 10H"))
    assert state.end is not None and state.end.went_out == 0
