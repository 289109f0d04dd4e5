"""The engine's fast paths agree with its full checks.

Listing legal actions skips the checks that a candidate passes by construction, and builds its
candidates with shortcuts. These tests list every position reached by random self-play, for every
preset, both that way and the slow way (the straightforward candidates below, each through the
full check of ``apply``), and require the same list in the same order.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rulecases import short_position

from canasta_net.canasta import state as state_module
from canasta_net.canasta.actions import (
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
)
from canasta_net.canasta.bots import choose_for, make_bot
from canasta_net.canasta.melds import MeldKind, TableMeld, is_wild, rank_at, run_position
from canasta_net.canasta.planner import HandCounts, MeldCounts, best_lay_value
from canasta_net.canasta.position import position_from_dict, position_from_view, seat_view
from canasta_net.canasta.rules import PRESETS, RuleSet, preset
from canasta_net.canasta.state import HandState, Phase
from canasta_net.cards import (
    JOKER,
    KING,
    THREE,
    is_black_three,
    is_red_three,
    is_three,
    parse_face,
    rank_of,
    sort_key,
)
from canasta_net.simulate import simulate

VARIANTS = sorted(PRESETS)


# ---------------------------------------------------------------- the slow, reference listing
def _wild_sets(twos: list[int], jokers: int, least: int, most: int) -> Iterator[tuple[int, ...]]:
    for j in range(jokers + 1):
        for t in range(len(twos) + 1):
            if least <= j + t <= most:
                yield (*twos[:t], *([JOKER] * j))


def _runs(hand: list[int]) -> list[dict[int, int]]:
    runs: list[dict[int, int]] = [{}, {}, {}, {}]
    for f in hand:
        if f != JOKER and run_position(f % 13) >= 0:
            runs[f // 13][run_position(f % 13)] = f
    return runs


def _new_sequences(state: HandState, hand: list[int]) -> Iterator[tuple[int, ...]]:
    rules = state.rules
    for suit_runs in _runs(hand):
        for low in range(11):
            if low not in suit_runs:
                continue
            high = low
            while high + 1 in suit_runs and high + 1 - low < rules.sequence_max:
                high += 1
                if high - low + 1 >= rules.sequence_min:
                    yield tuple(suit_runs[p] for p in range(low, high + 1))


def _sequence_extensions(
    state: HandState, meld: TableMeld, hand: list[int]
) -> Iterator[tuple[int, ...]]:
    rules = state.rules
    suit_runs = _runs(hand)[meld.suit]
    below: list[int] = []
    p = meld.low - 1
    while p >= 0 and p in suit_runs:
        below.append(suit_runs[p])
        p -= 1
    above: list[int] = []
    p = meld.high + 1
    while p <= 10 and p in suit_runs:
        above.append(suit_runs[p])
        p += 1
    room = rules.sequence_max - meld.size
    if rules.max_meld_size:
        room = min(room, rules.max_meld_size - meld.size)
    for a in range(len(below) + 1):
        for b in range(len(above) + 1):
            if 0 < a + b <= room:
                yield (*below[:a][::-1], *above[:b])


def _draw_candidates(state: HandState) -> Iterator[Action]:
    yield Draw()
    top = state.pile_top
    if top is None or is_wild(top) or is_three(top):
        return
    rules, team = state.rules, state.team_of(state.turn)
    hand = state.hand_faces(state.turn)
    rank = rank_of(top)
    targets: list[int | None] = [None]
    if not rules.one_group_per_rank:
        targets += [
            i
            for i, m in enumerate(state.melds[team])
            if (m.kind is MeldKind.GROUP and m.rank == rank)
            or (m.kind is MeldKind.SEQUENCE and rules.pile_onto_sequence)
        ]
    nat = sorted(f for f in hand if f != JOKER and rank_of(f) == rank)
    twos = sorted(f for f in hand if f != JOKER and f % 13 == 1)
    for target in targets:
        if target is not None and state.melds[team][target].kind is MeldKind.SEQUENCE:
            yield TakePile((), target)  # Bolivia: the top card alone onto a sequence
            continue
        if target is not None or rules.one_group_per_rank:
            yield TakePile((), target)
        if len(nat) >= 2:
            yield TakePile((nat[0], nat[1]), target)
        if nat:
            if JOKER in hand:
                yield TakePile((nat[0], JOKER), target)
            if twos:
                yield TakePile((nat[0], twos[0]), target)
    if rules.take_top_to_sequence:
        for i, m in enumerate(state.melds[team]):
            if m.kind is MeldKind.SEQUENCE:
                yield TakeTop(i)


def _play_candidates(state: HandState) -> Iterator[Action]:
    rules, seat = state.rules, state.turn
    team = state.team_of(seat)
    hand = state.hand_faces(seat)
    by_rank: dict[int, list[int]] = {}
    twos: list[int] = []
    for f in sorted(hand):
        if f == JOKER:
            continue
        if f % 13 == 1:
            twos.append(f)
        else:
            by_rank.setdefault(f % 13, []).append(f)
    jokers = hand.count(JOKER)
    max_w = rules.max_wilds_in_group
    wild_choices = [
        (j, t, (*twos[:t], *([JOKER] * j)))
        for j in range(min(jokers, max_w) + 1)
        for t in range(min(len(twos), max_w - j) + 1)
    ]
    cap = rules.max_meld_size or 1 << 20
    for i, m in enumerate(state.melds[team]):
        if m.is_closed(rules) or (not state.opened[team] and m.laid_turn != state.turn_no):
            continue
        room = cap - m.size
        if m.kind is MeldKind.GROUP:
            nat = by_rank.get(m.rank, [])
            wilds_allowed = rules.wilds_on_canasta or not m.is_canasta(rules)
            for n in range(min(len(nat), room) + 1):
                wild_room = rules.max_wilds(m.naturals + n) - m.wilds if wilds_allowed else 0
                for j, t, wild_faces in wild_choices:
                    used = n + j + t
                    if used and j + t <= wild_room and used <= room:
                        yield AddToMeld(i, (*nat[:n], *wild_faces))
        elif m.kind is MeldKind.SEQUENCE:
            for faces in _sequence_extensions(state, m, hand):
                yield AddToMeld(i, faces)
        elif m.kind is MeldKind.WILDS:
            for faces in _wild_sets(twos, jokers, 1, room):
                yield AddToMeld(i, faces)
    for r, nat in by_rank.items():
        if len(nat) < 2 or r == THREE:
            continue
        if rules.one_group_per_rank and state.team_meld_of_rank(team, r) is not None:
            continue
        for n in range(max(2, rules.min_naturals_in_group), min(len(nat), cap) + 1):
            for j, t, wild_faces in wild_choices:
                used = n + j + t
                if used >= 3 and j + t <= rules.max_wilds(n) and used <= cap:
                    yield Meld((*nat[:n], *wild_faces))
    if rules.sequences:
        for faces in _new_sequences(state, hand):
            yield Meld(faces)
    if rules.wild_melds:
        for faces in _wild_sets(twos, jokers, 3, cap):
            yield Meld(faces)
    b3 = sorted(f for f in hand if is_black_three(f))
    for n in range(3, min(len(b3), 4) + 1):
        yield Meld(tuple(b3[:n]))
    if state.phase is Phase.PLAY and rules.merge_groups:
        groups = [
            (i, m.rank)
            for i, m in enumerate(state.melds[team])
            if m.kind is MeldKind.GROUP and not m.is_closed(rules)
        ]
        for i, rank in groups:
            for j, other in groups:
                if other == rank and i != j:
                    yield MergeMelds(i, j)
    if state.phase is Phase.PLAY:
        for f in sorted(set(hand), key=sort_key):
            yield Discard(f)
        yield AskGoOut()


def reference_legal_actions(state: HandState) -> list[Action]:
    """The legal list the slow way: plain candidates, each through the full check."""
    if state.phase is Phase.OVER:
        return []
    if state.phase is Phase.ASKED:
        candidates: list[Action] = [Answer(True), Answer(False)]
    elif state.phase is Phase.DRAW:
        candidates = list(_draw_candidates(state))
    else:
        candidates = list(_play_candidates(state))
    return [a for a in candidates if state.is_legal(a)]


# ---------------------------------------------------------------- the tests
def _freezes(rules: RuleSet, face: int) -> bool:
    return (
        is_wild(face)
        or is_red_three(face)
        or (rules.black_three_freezes_pile and is_black_three(face))
    )


class _ScriptedPick:
    """A stand-in for ``randrange``: the first draw returns ``first``, later ones cycle."""

    def __init__(self, first: int) -> None:
        self.first = first
        self.sizes: list[int] = []

    def __call__(self, n: int) -> int:
        self.sizes.append(n)
        index = self.first if len(self.sizes) == 1 else (self.first + len(self.sizes)) % n
        assert 0 <= index < n
        return index


def _check_random_pick(state: HandState, legal: list[Action]) -> None:
    """``random_legal_action`` gives exactly the legal actions: whichever candidate its first
    draw hits, it returns that one if legal, some legal one if not, and None only when none is.
    (Each draw being uniform over what is left, its choice is then uniform over the legal list.)
    """
    outcomes: set[Action] = set()
    first = 0
    while True:
        pick = _ScriptedPick(first)
        action = state.random_legal_action(pick)
        if action is None:
            assert legal == []
            return
        assert action in legal
        outcomes.add(action)
        first += 1
        if first >= pick.sizes[0]:
            break
    assert outcomes == set(legal)


def _play_and_compare(variant: str, seed: int, max_steps: int = 2000) -> int:
    """Play one hand at random, comparing the fast and the slow listing at every step; return
    the number of steps."""
    rules = preset(variant)
    rng = random.Random(seed)
    order = list(range(rules.deck_size))
    rng.shuffle(order)
    state = HandState(rules, order, dealer=rng.randrange(rules.players))
    steps = 0
    while not state.is_over and steps < max_steps:
        legal = state.legal_actions()
        assert legal == reference_legal_actions(state), f"step {steps}, {state.phase}"
        assert state.pile_frozen == any(_freezes(rules, f) for f in state.faces(state.pile))
        _check_random_pick(state, legal)
        state.apply(rng.choice(legal))
        steps += 1
    assert state.legal_actions() == reference_legal_actions(state)
    _check_random_pick(state, state.legal_actions())
    return steps


@pytest.mark.parametrize("variant", VARIANTS)
def test_fast_listing_agrees_with_full_check(variant: str) -> None:
    for seed in range(4):
        assert _play_and_compare(variant, seed) > 0


# whole random hands on top of the four seeds per variant above: 15 are plenty
@settings(max_examples=15, deadline=None)
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 2**32 - 1))
def test_fast_listing_agrees_with_full_check_anywhere(variant: str, seed: int) -> None:
    _play_and_compare(variant, seed)


@pytest.mark.parametrize("variant", ["classic", "samba", "bolivia"])
def test_seeded_self_play_is_deterministic(variant: str) -> None:
    """The random bot's fast path keeps seeded self-play reproducible (and error-free)."""
    first = simulate(preset(variant), 4, seed=7)
    second = simulate(preset(variant), 4, seed=7)
    assert (first.actions, first.end_reasons) == (second.actions, second.end_reasons)
    assert first.errors == first.stalls == 0


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_seat_views_drawn_from_kept_melds_match_fresh_drawing(name: str) -> None:
    """``seat_view`` keeps each meld's drawing on the meld (a host draws a view after every
    record): every view of a random hand equals the view of a deep copy drawn from nothing, and
    a view's meld may be changed by its reader without changing the next view."""
    import copy

    from canasta_net.canasta.position import seat_view

    rules = preset(name)
    rng = random.Random(f"views-{name}")
    order = list(range(rules.deck_size))
    rng.shuffle(order)
    state = HandState(rules, order, dealer=0)
    steps = 0
    while not state.is_over and steps < 400:
        view = seat_view(state, 0)
        fresh = copy.deepcopy(state)
        for team in fresh.melds:
            for meld in team:
                meld.drawn = None
        assert view == seat_view(fresh, 0)
        for team in view["melds"]:
            for meld_view in team:
                meld_view["cards"].append("XX")
                meld_view["label"] = "scribbled"
        assert seat_view(state, 0) == seat_view(fresh, 0)
        state.apply(rng.choice(state.legal_actions()))
        steps += 1
    assert any(state.melds), "the hand laid no meld: the test saw nothing kept"


BOT_KINDS = ["random", "greedy", "heuristic"]


@settings(max_examples=25, deadline=None)
@given(
    variant=st.sampled_from(VARIANTS),
    seed=st.integers(0, 2**32 - 1),
    kinds=st.lists(st.sampled_from(BOT_KINDS), min_size=4, max_size=4),
    steps=st.integers(1, 300),
)
def test_the_listing_agrees_with_the_slow_reference_in_random_positions(
    variant: str, seed: int, kinds: list[str], steps: int
) -> None:
    """Positions that random self-play rarely reaches: hands played by a mix of bots (the
    greedy and the heuristic open, meld, ask to go out and go out), and, every few steps, a
    random position the seat to move could be in (its view, every card hidden from it dealt
    anew, the pile below its top guessed): the listing equals the slow reference (each
    straightforward candidate through ``apply``'s full check), in the same order."""
    rules = preset(variant)
    rng = random.Random(seed)
    order = list(range(rules.deck_size))
    rng.shuffle(order)
    state = HandState(rules, order, dealer=rng.randrange(rules.players))
    bots = [make_bot(kinds[s % len(kinds)], random.Random(seed + s)) for s in range(rules.players)]
    for step in range(steps):
        if state.is_over:
            break
        assert state.legal_actions() == reference_legal_actions(state), f"step {step}"
        if step % 5 == 0:
            view = seat_view(state, state.to_move)
            other = position_from_dict(position_from_view(view, rules, rng))
            assert other.legal_actions() == reference_legal_actions(other), f"step {step}, view"
        state.apply(choose_for(bots[state.to_move], state))


# ---------------------------------------------------------------- the per-position facts, at edges
def test_a_pair_take_that_leaves_one_card_is_checked_not_trusted() -> None:
    """A natural pair takes the pile legally by construction only from four cards up: from three,
    with nothing under the top card, one card would stay without a canasta to go out with."""
    for hand, legal in ((["QS", "QD", "5C"], False), (["QS", "QD", "5C", "7H"], True)):
        state = short_position(
            "classic",
            hands={0: hand},
            melds={0: [["KH", "KS", "KD"]]},
            pile=["QH"],
            stock=["4C", "4D"],
            phase="draw",
        )
        take = TakePile((parse_face("QD"), parse_face("QS")))
        assert state.legal_actions() == reference_legal_actions(state)
        assert (take in state.legal_actions()) is legal and state.is_legal(take) is legal


@pytest.mark.parametrize(
    ("hand", "wilds"),
    [(["4C", "4D", "9S", "9H"], []), (["4C", "4D", "9S", "9H"], ["JK", "2C", "2D"])],
)
def test_may_i_go_out_when_no_canasta_can_be_made_is_refused_without_the_planner(
    hand: list[str], wilds: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a stock draw, asking needs a hand that could go out: without a canasta, three
    fours on the table and two in hand make none (refused at once); with three wild cards they
    could, and the planner decides. Either way the listing agrees with the full check."""
    state = short_position(
        "classic",
        hands={0: hand + wilds},
        melds={0: [["4H", "4S", "4C"]]},
        stock=["5C", "6C"],
        turn_state={"drew": "stock"},
    )
    assert state.legal_actions() == reference_legal_actions(state)
    if not wilds:
        listed = state.legal_actions()

        def planner(*args: object) -> bool:
            raise AssertionError("the planner was asked")

        monkeypatch.setattr(state_module, "can_lay_out", planner)
        assert state.legal_actions() == listed and AskGoOut() not in listed


@pytest.mark.parametrize("wilds", [["JK"], ["JK", "2C"]])
def test_may_i_go_out_with_more_pairs_than_wild_cards_is_refused_without_the_planner(
    wilds: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each pair of a rank the team has no group of needs a wild card to go out: with two pairs
    and one wild card asking is refused at once; with two wild cards the planner decides.
    Either way the listing agrees with the full check."""
    state = short_position(
        "classic",
        hands={0: ["5C", "5D", "9H", "9S", "KC", "KD", "KH", *wilds]},
        melds={0: [["4H", "4S", "4C", "4D", "4C", "4H", "4S"]]},
        stock=["5C", "6C"],
        turn_state={"drew": "stock"},
    )
    assert state.legal_actions() == reference_legal_actions(state)
    if len(wilds) == 1:
        listed = state.legal_actions()

        def planner(*args: object) -> bool:
            raise AssertionError("the planner was asked")

        monkeypatch.setattr(state_module, "can_lay_out", planner)
        assert state.legal_actions() == listed and AskGoOut() not in listed


def _snapshot(state: HandState) -> tuple[object, ...]:
    """Everything a move may change, as values (a meld by every field)."""
    melds = tuple(
        tuple(
            (m.kind, m.rank, tuple(m.cards), tuple(m.faces), m.naturals, m.wilds, m.laid_turn)
            for m in team
        )
        + tuple((m.laid_by, m.suit, m.low, m.high) for m in team)
        for team in state.melds
    )
    t = state.t
    return (
        melds,
        tuple(map(tuple, state.hands)),
        tuple(map(tuple, state.red_threes)),
        tuple(state.pile),
        tuple(state.stock),
        tuple(state.opened),
        tuple(state.has_melded),
        tuple(state.team_map),
        (state.turn, state.turn_no, state.phase, state.lone, state.end, state.shown),
        (t.drew, t.initial_points, t.laid, t.added_to_old, t.permission, t.black_threes),
        tuple(t.pending_pile),
    )


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_move_in_a_copy_leaves_the_original_as_it_was(variant: str) -> None:
    """``copy()`` shares the melds (marked shared: a state about to add to one, merge or pool it
    changes a clone of its own): every legal move of every position of a hand, made in a copy,
    leaves the original unchanged, and the original then plays on as if no copy was made."""
    rules = preset(variant)
    rng = random.Random(f"copies-{variant}")
    order = list(range(rules.deck_size))
    rng.shuffle(order)
    state = HandState(rules, order, dealer=0)
    twin = HandState(rules, order, dealer=0)  # the same hand, never copied
    additions = 0
    while not state.is_over:
        before = _snapshot(state)
        legal = state.legal_actions()
        for action in legal:
            trial = state.copy()
            trial.apply(action)
            additions += isinstance(action, AddToMeld | MergeMelds | TakePile)
        assert _snapshot(state) == before
        action = rng.choice(legal)
        state.apply(action)
        twin.apply(action)
        assert _snapshot(state) == _snapshot(twin)
    assert additions, "no move added to a meld: the test saw nothing shared"


@settings(max_examples=60, deadline=None)
@given(
    variant=st.sampled_from(VARIANTS),
    seed=st.integers(0, 2**32 - 1),
    before=st.integers(0, 120),
    steps=st.lists(st.tuples(st.integers(0, 3), st.booleans()), min_size=1, max_size=150),
)
def test_copies_and_their_originals_play_on_apart(
    variant: str, seed: int, before: int, steps: list[tuple[int, bool]]
) -> None:
    """``copy()`` shares what the engine replaces rather than changes (red threes, the opened
    and has-melded flags, the team map, the teams' meld lists until one changes, the melds until
    one changes): copies of copies and their originals, playing random moves in any order, each
    end where a state that was never copied ends after the same moves."""
    rules = preset(variant)
    rng = random.Random(seed)
    order = list(range(rules.deck_size))
    rng.shuffle(order)
    first = HandState(rules, order, dealer=0)
    opening: list[Action] = []
    while len(opening) < before and not first.is_over:
        opening.append(rng.choice(first.legal_actions()))
        first.apply(opening[-1])
    states, histories = [first], [list(opening)]
    for which, copy in steps:
        index = which % len(states)
        state = states[index]
        if copy and len(states) < 4:
            states.append(state.copy())
            histories.append(list(histories[index]))
        elif not state.is_over:
            histories[index].append(rng.choice(state.legal_actions()))
            state.apply(histories[index][-1])
    for state, history in zip(states, histories, strict=True):
        never_copied = HandState(rules, order, dealer=0)
        for action in history:
            never_copied.apply(action)
        assert _snapshot(state) == _snapshot(never_copied)
        assert state.legal_actions() == never_copied.legal_actions()


@pytest.mark.parametrize("variant", ["classic", "samba"])
def test_an_answer_in_a_copy_or_its_original_leaves_the_other_as_it_was(variant: str) -> None:
    """The partner's answer to "may I go out?" changes the turn's state, which a copy shares
    until either state changes it: answered in a copy, or in the original, the other state
    stays as it was (three positions asking, found by seeded random play)."""
    rules = preset(variant)
    rng = random.Random(f"asked-{variant}")
    asked = 0
    while asked < 3:
        order = list(range(rules.deck_size))
        rng.shuffle(order)
        state = HandState(rules, order, dealer=0)
        while not state.is_over:
            state.apply(rng.choice(state.legal_actions()))
            if state.phase is not Phase.ASKED:
                continue
            asked += 1
            before, legal = _snapshot(state), state.legal_actions()
            for answer in legal:
                state.copy().apply(answer)
                assert _snapshot(state) == before and state.legal_actions() == legal
            copy = state.copy()
            state.apply(legal[-1])
            assert _snapshot(copy) == before and copy.legal_actions() == legal


@settings(max_examples=150, deadline=None)
@given(
    variant=st.sampled_from(["classic", "samba", "bolivia"]),
    hand=st.lists(st.integers(0, JOKER), min_size=3, max_size=12),
    run=st.tuples(st.integers(0, 3), st.integers(0, 10), st.integers(0, 8)),
    keep=st.integers(0, 2),
    sequences=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 8)), max_size=2),
    enough=st.integers(-20, 400),
)
def test_a_look_ahead_that_stops_at_enough_answers_the_comparison_as_the_full_one(
    variant: str,
    hand: list[int],
    run: tuple[int, int, int],
    keep: int,
    sequences: list[tuple[int, int]],
    enough: int,
) -> None:
    """``best_lay_value(..., enough)`` stops at the first plan worth ``enough``: compared with
    ``enough`` it answers as the full look-ahead does, and below it gives the same value (the
    hand holds a run of one suit, from run position ``low``, for the sequences' plans)."""
    rules = preset(variant)
    suit, low, length = run
    hand = hand + [suit * 13 + rank_at(p) for p in range(low, min(low + length, 11))]
    counts = HandCounts.of(rules, hand)
    runs = [(suit, low, low + 2) for suit, low in sequences] if rules.sequences else []
    melds = {KING: MeldCounts(KING, 3, 1)}
    full = best_lay_value(rules, counts, melds, keep, runs)
    stopped = best_lay_value(rules, counts, melds, keep, runs, enough)
    assert (stopped >= enough) == (full >= enough)
    if full < enough:
        assert stopped == full


CANASTAS = (["KH", "KS", "KD", "KC", "KH", "KS", "KD"], ["QH", "QS", "QD", "QC", "QH", "QS", "QD"])


@pytest.mark.parametrize(
    ("canastas", "hand", "asks"),
    [
        # two canastas: five, six, seven of hearts go out as a sequence, the nine discarded
        (2, ["5H", "6H", "7H", "9C"], True),
        (2, ["5H", "6H", "8H", "9C"], False),  # no run of three: three cards no meld takes
        # one canasta: a run of seven of hearts lays out as the second one
        (1, ["4H", "5H", "6H", "7H", "8H", "9H", "TH", "9C"], True),
        (1, ["4H", "5H", "6H", "7H", "8H", "9H", "9C", "9D"], False),  # six: no second canasta
    ],
)
def test_samba_may_i_go_out_counts_the_hands_runs(
    canastas: int, hand: list[str], asks: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In Samba a single natural may go out in a sequence, and a run of seven is a canasta:
    asking is listed where the planner finds the way out, and refused without the planner where
    no run could help."""
    state = short_position(
        "samba",
        hands={0: hand},
        melds={0: [*CANASTAS[:canastas], ["JH", "JS", "JD"]]},
        stock=["5C", "6C"],
        turn_state={"drew": "stock"},
    )
    assert state.legal_actions() == reference_legal_actions(state)
    assert (AskGoOut() in state.legal_actions()) is asks
    if not asks:
        listed = state.legal_actions()

        def planner(*args: object) -> bool:
            raise AssertionError("the planner was asked")

        monkeypatch.setattr(state_module, "can_lay_out", planner)
        assert state.legal_actions() == listed


@settings(max_examples=60, deadline=None)
@given(
    variant=st.sampled_from(["samba", "bolivia"]),
    hand=st.lists(st.integers(0, JOKER), max_size=22),
)
def test_new_sequences_by_stretches_are_every_sequence_in_the_hand(
    variant: str, hand: list[int]
) -> None:
    """The listing's new sequences, found from the stretches of run positions the hand holds
    in a row, are the straightforward walk's (every lowest card, every length), in its order."""
    state = HandState.blank(preset(variant))
    assert state._new_sequences(state._runs_in_hand(hand)) == list(_new_sequences(state, hand))


@settings(max_examples=8, deadline=None)
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 2**32 - 1))
def test_canastas_counts_each_meld_that_is_a_canasta(variant: str, seed: int) -> None:
    """``canastas`` (a count without a call a meld) counts the melds ``is_canasta`` says are
    canastas, in positions of random self-play."""
    rules = preset(variant)
    rng = random.Random(seed)
    order = list(range(rules.deck_size))
    rng.shuffle(order)
    state = HandState(rules, order)
    while not state.is_over:
        for team, melds in enumerate(state.melds):
            assert state.canastas(team) == sum(1 for m in melds if m.is_canasta(rules))
        state.apply(rng.choice(state.legal_actions()))
