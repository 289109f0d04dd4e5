#!/usr/bin/env python3
"""How the searching bot's settings were chosen: its gain a move over the heuristic, per setting.

``collect`` plays heuristic self-play hands of a Canasta variant, stops each at a random move with
a choice, and rolls the heuristic's best different moves (``--candidates``) out in the same
``--deals`` sampled deals, as the searching bot does (one JSON line a position: each candidate's
value in each deal). ``analyse`` reads those lines back: half of the deals give each candidate's
"true" value, the other half are the deals a search of N deals sees (drawn ``--draws`` times), and
it prints, for N deals × K candidates, with the margin alone and with half a standard error,
the mean gain a move over the heuristic's first choice (the true value of the move the rule
picks minus the first choice's) and how often the rule changes the heuristic's move.

    PYTHONPATH=. python scripts/search_settings.py collect classic --positions 100 --out 4p.jsonl
    PYTHONPATH=. python scripts/search_settings.py analyse 4p.jsonl
    PYTHONPATH=. python scripts/search_settings.py allocate 4p.jsonl

``judge`` plays whole hands with the search (``--deals`` a move) on seat 0's side and the heuristic
at the other seats and, at every move where the search plays another move than the heuristic's first
choice, rolls both out again in ``--judge-deals`` fresh deals of the same information set (one
JSON line a changed move); it then prints the judged gain of those changes by phase and by the
kinds of the two moves (the file is appended to: a second run adds hands; ``--report`` only
prints). Over many changes, the judged gain a hand says what the search's changes are worth as
the heuristic at every seat would play them on.

    PYTHONPATH=. python scripts/search_settings.py judge classic --hands 30 --out judged-4p.jsonl

``seats`` plays each deal of a variant three times, the heuristic at every seat, then the search at
seat 0 alone, then at every seat of seat 0's side, and prints what the search gains a hand: the
mean change of that side's hand score difference over the all-heuristic hand, with its standard
error (no judging: the hands as played).

    PYTHONPATH=. python scripts/search_settings.py seats classic --hands 400 --out seats-4p.jsonl

``allocate`` compares, for a search of R rollouts, the decision rules (margin, standard errors)
and successive halving (a few deals on every candidate, the rest on the leaders) against trying
every candidate in the same deals.

``docs/bots.md`` (The search) gives the table it printed.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from canasta_net.canasta.bots import CANASTA_SEARCH, choose_for, make_bot, search_bot
from canasta_net.canasta.rules import RuleSet, preset
from canasta_net.canasta.state import HandState
from canasta_net.search import SearchBot


def deal(rules: RuleSet, seed: int) -> HandState:
    """The hand dealt from ``seed`` (the same deal for every setting compared)."""
    order = list(range(rules.deck_size))
    random.Random(seed).shuffle(order)
    return HandState(rules, order, dealer=seed % rules.players)


def collect(args: argparse.Namespace) -> None:
    rules = preset(args.variant)
    with args.out.open("a") as out:
        for seed in range(args.seed, args.seed + args.positions):
            state = deal(rules, seed)
            bots = [make_bot("heuristic", random.Random(s)) for s in range(rules.players)]
            bot = search_bot(random.Random(1), simulations=1)
            bot.candidates = args.candidates
            moves = random.Random(seed).randrange(90)
            for _ in range(moves):
                if state.is_over:
                    break
                state.apply(choose_for(bots[state.to_move], state))
            while not state.is_over and len(bot.candidates_in(state)) < 2:
                state.apply(choose_for(bots[state.to_move], state))
            if state.is_over:
                continue
            tried = bot.candidates_in(state)
            bot.simulations = args.deals
            values = bot.evaluate(state, tried)
            line = {
                "variant": args.variant,
                "seed": seed,
                "candidates": [str(a) for a, _ in values],
                "values": bot.deal_values(),
            }
            out.write(json.dumps(line) + "\n")
            print(f"{seed}: {len(tried)} candidates", file=sys.stderr, flush=True)


def gain(
    positions: Sequence[dict[str, Any]], deals: int, k: int, confidence: float, draws: int
) -> tuple[float, float]:
    """The mean true gain a move of the rule over the heuristic's first choice, and how often
    it changes that choice."""
    rng = random.Random(0)
    total = changed = count = 0.0
    for p in positions:
        values = p["values"][:k]
        half = len(values[0]) // 2
        truth = [sum(v[:half]) / half for v in values]
        pool = range(half, len(values[0]))
        for _ in range(draws):
            seen = rng.sample(pool, min(deals, len(pool)))
            means = [sum(v[d] for d in seen) / len(seen) for v in values]
            best = max(range(len(values)), key=lambda i: means[i])
            gains = [values[best][d] - values[0][d] for d in seen]
            mean = sum(gains) / len(gains)
            spread = math.sqrt(sum((g - mean) ** 2 for g in gains) / max(1, len(gains) - 1))
            change = best != 0 and mean >= 30 and mean >= confidence * spread / math.sqrt(len(seen))
            total += truth[best if change else 0] - truth[0]
            changed += change
            count += 1
    return total / count, changed / count


def analyse(args: argparse.Namespace) -> None:
    positions = [json.loads(line) for path in args.files for line in path.open()]
    print(f"{len(positions)} positions")
    for deals in args.n:
        for k in args.k:
            cells = []
            for confidence in (0.0, 0.5, 1.0):
                g, c = gain(positions, deals, k, confidence, args.draws)
                cells.append(f"z {confidence}: {g:+6.1f} ({c:.2f} changed)")
            print(f"{deals:2d} deals x {k} candidates: " + " | ".join(cells), flush=True)


def _chosen(
    values: list[list[int]], seen: Sequence[int], best: int, margin: float, z: float
) -> int:
    """The candidate a rule plays: ``best`` if its gain over the first choice in the deals
    ``seen`` is positive, at least ``margin`` and ``z`` standard errors; else the first."""
    gains = [values[best][d] - values[0][d] for d in seen]
    n = len(gains)
    if best == 0 or n < 2:
        return 0
    mean = sum(gains) / n
    spread = math.sqrt(sum((g - mean) ** 2 for g in gains) / (n - 1))
    return best if mean > 0 and mean >= margin and mean >= z * spread / math.sqrt(n) else 0


def allocation_gain(
    positions: Sequence[dict[str, Any]],
    rollouts: int,
    plan: tuple[int, int] | None,
    rule: tuple[float, float],
    truth_deals: int,
    draws: int,
) -> float:
    """The mean true gain a move over the heuristic's first choice of a search of ``rollouts``
    rollouts: every candidate in the same deals (``plan`` None), or successive halving (``plan``
    (n, keep): n deals on every candidate, then the rest on the first choice and the ``keep``
    best others), deciding by ``rule`` (margin, standard errors). The first ``truth_deals`` of
    each position give the true values, the others the deals the search sees."""
    rng = random.Random(1)
    total, count = 0.0, 0
    for p in positions:
        values = p["values"][:5]
        k = len(values)
        truth = [sum(v[:truth_deals]) / truth_deals for v in values]
        pool = list(range(truth_deals, len(values[0])))
        for _ in range(draws):
            order = rng.sample(pool, len(pool))
            if plan is None or k <= plan[1] + 1:
                seen = order[: max(1, rollouts // k)]
                kept = list(range(k))
            else:
                first, keep = plan
                early = [sum(v[d] for d in order[:first]) / first for v in values]
                kept = [0, *sorted(range(1, k), key=lambda i: -early[i])[:keep]]
                seen = order[: first + max(0, rollouts - first * k) // len(kept)]
            means = {i: sum(values[i][d] for d in seen) / len(seen) for i in kept}
            best = max(kept, key=lambda i: means[i])
            total += truth[_chosen(values, seen, best, *rule)] - truth[0]
            count += 1
    return total / count


def allocate(args: argparse.Namespace) -> None:
    positions = [json.loads(line) for path in args.files for line in path.open()]
    positions = [p for p in positions if len(p["values"]) >= 2]
    print(f"{len(positions)} positions, true values from {args.truth} deals")
    for rollouts in args.rollouts:
        cells = []
        for rule in ((30.0, 0.5), (0.0, 0.0), (30.0, 1.0)):
            for plan in (None, (3, 1), (4, 2)):
                g = allocation_gain(positions, rollouts, plan, rule, args.truth, args.draws)
                name = "same deals" if plan is None else f"halving {plan[0]},{plan[1]}"
                cells.append(f"m{rule[0]:.0f} z{rule[1]} {name}: {g:+5.1f}")
        print(f"{rollouts:3d} rollouts: " + " | ".join(cells), flush=True)


def side_of_seat_0(state: HandState) -> set[int]:
    """The seats of seat 0's side: its team (seat 0 alone where every seat scores for itself)."""
    return {s for s in range(state.players) if state.team_of(s) == state.team_of(0)}


def seated(state: HandState, seed: int, searching: set[int], deals: int) -> list[Any]:
    """The hand's bots: the search (``deals`` a move) at ``searching``, the heuristic elsewhere."""
    return [
        search_bot(random.Random(seed * 10 + s), simulations=deals)
        if s in searching
        else make_bot("heuristic", random.Random(seed * 10 + s))
        for s in range(state.players)
    ]


def variant_lines(path: Path, variant: str) -> list[dict[str, Any]]:
    """The JSON lines of ``path`` (none if it does not exist) for ``variant``."""
    if not path.exists():
        return []
    return [line for line in map(json.loads, path.open()) if line["variant"] == variant]


def mean_and_error(values: Sequence[float]) -> tuple[float, float]:
    """The mean of ``values`` and its standard error (0 with one value)."""
    mean = sum(values) / len(values)
    spread = math.sqrt(sum((v - mean) ** 2 for v in values) / max(1, len(values) - 1))
    return mean, spread / math.sqrt(len(values))


def judge(args: argparse.Namespace) -> None:
    if not args.report:
        rules = preset(args.variant)
        referee = search_bot(random.Random(args.seed - 1), simulations=args.judge_deals)
        done = {line["seed"] for line in variant_lines(args.out, args.variant) if "moves" in line}
        with args.out.open("a") as out:
            for seed in range(args.seed, args.seed + args.hands):
                if seed in done:
                    continue  # judged by an earlier run
                state = deal(rules, seed)
                bots = seated(state, seed, side_of_seat_0(state), args.deals)
                moves = changes = 0
                while not state.is_over:
                    seat, phase = state.to_move, state.phase.value
                    bot = bots[seat]
                    action = choose_for(bot, state)
                    first = bot.last[0][0] if isinstance(bot, SearchBot) and bot.last else action
                    if action != first:
                        (_, before), (_, after) = referee.evaluate(state, [first, action])
                        line = {
                            "variant": args.variant,
                            "seed": seed,
                            "move": moves,
                            "phase": phase,
                            "first": str(first),
                            "played": str(action),
                            "judged": [before, after],
                        }
                        out.write(json.dumps(line) + "\n")
                        changes += 1
                    state.apply(action, seat)
                    moves += 1
                out.write(
                    json.dumps({"variant": args.variant, "seed": seed, "moves": moves}) + "\n"
                )
                out.flush()
                print(f"{seed}: {moves} moves, {changes} changed", file=sys.stderr, flush=True)
    if not args.out.exists():
        raise SystemExit(f"{args.out}: no such file (judge some hands first)")
    print(judged_report(variant_lines(args.out, args.variant)))


def judged_report(lines: Sequence[dict[str, Any]]) -> str:
    """The judged gain of the search's changed moves, a hand and by phase and kinds of move."""
    hands = {(line["variant"], line["seed"]) for line in lines if "moves" in line}
    # a hand cut short and played again wrote its first changes twice: the last line counts
    latest = {
        (line["variant"], line["seed"], line["move"]): line for line in lines if "judged" in line
    }
    changes = [line for key, line in latest.items() if key[:2] in hands]
    if not hands:
        return "no whole hand judged yet"
    groups: defaultdict[str, list[float]] = defaultdict(list)
    for line in changes:
        before, after = line["judged"]
        kinds = f"{line['first'].split()[0]} -> {line['played'].split()[0]}"
        groups["all"].append(after - before)
        groups[f"phase {line['phase']}"].append(after - before)
        groups[f"{line['phase']}: {kinds}"].append(after - before)
    rows = [f"{len(hands)} hands, {len(changes)} changed moves"]
    for name, gains in sorted(groups.items(), key=lambda item: (item[0] != "all", -len(item[1]))):
        mean, error = mean_and_error(gains)
        rows.append(
            f"{name:32s} {len(gains):5d} changes  {mean:+7.1f} a change"
            f" (s.e. {error:5.1f})  {sum(gains) / len(hands):+7.1f} a hand"
        )
    return "\n".join(rows)


SEATINGS = ("none", "seat 0", "side 0")  # where the search sits in ``seats``


def seats_hand(variant: str, seed: int, seating: str, deals: int) -> int:
    """One hand of ``seats``: side 0's hand score minus the best other side's."""
    state = deal(preset(variant), seed)
    searching = {"none": set(), "seat 0": {0}, "side 0": side_of_seat_0(state)}[seating]
    bots = seated(state, seed, searching, deals)
    while not state.is_over:
        state.apply(choose_for(bots[state.to_move], state), state.to_move)
    return int(CANASTA_SEARCH.side_value(state, 0))


def seats(args: argparse.Namespace) -> None:
    done = {(line["seed"], line["seating"]) for line in variant_lines(args.out, args.variant)}
    with args.out.open("a") as out:
        for seed in range(args.seed, args.seed + args.hands):
            for seating in SEATINGS:
                if (seed, seating) not in done:
                    diff = seats_hand(args.variant, seed, seating, args.deals)
                    line = {"variant": args.variant, "seed": seed, "seating": seating}
                    out.write(json.dumps({**line, "diff": diff}) + "\n")
                    out.flush()
            print(f"{seed}", file=sys.stderr, flush=True)
    print(seats_report(variant_lines(args.out, args.variant)))


def seats_report(lines: Sequence[dict[str, Any]]) -> str:
    """The search's gain a hand at seat 0 and on side 0, over the deals played all three ways."""
    by_deal: defaultdict[int, dict[str, int]] = defaultdict(dict)
    for line in lines:
        by_deal[line["seed"]][line["seating"]] = line["diff"]
    whole = [d for d in by_deal.values() if len(d) == len(SEATINGS)]
    rows = [f"{len(whole)} deals"]
    for seating in SEATINGS[1:]:
        gains = [d[seating] - d["none"] for d in whole]
        if len(gains) < 2:
            continue
        mean, error = mean_and_error(gains)
        rows.append(f"search at {seating}: {mean:+7.1f} a hand (s.e. {error:5.1f})")
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    c = commands.add_parser("collect")
    c.add_argument("variant", help="a Canasta variant: classic, classic-2p, ...")
    c.add_argument("--positions", type=int, default=100)
    c.add_argument("--deals", type=int, default=40)
    c.add_argument("--candidates", type=int, default=8)
    c.add_argument("--seed", type=int, default=1)
    c.add_argument("--out", type=Path, required=True, help="JSON lines, appended")
    a = commands.add_parser("analyse")
    a.add_argument("files", type=Path, nargs="+")
    a.add_argument("--n", type=int, nargs="+", default=[4, 6, 12], help="deals a search sees")
    a.add_argument("--k", type=int, nargs="+", default=[4, 5, 6, 8], help="candidates")
    a.add_argument("--draws", type=int, default=100)
    r = commands.add_parser("allocate")
    r.add_argument("files", type=Path, nargs="+")
    r.add_argument("--rollouts", type=int, nargs="+", default=[30, 60, 120])
    r.add_argument("--truth", type=int, default=14, help="deals that give the true values")
    r.add_argument("--draws", type=int, default=40)
    j = commands.add_parser("judge")
    j.add_argument("variant", help="a Canasta variant: classic, classic-2p, ...")
    j.add_argument("--hands", type=int, default=30)
    j.add_argument("--deals", type=int, default=6, help="the search's deals a move")
    j.add_argument("--judge-deals", type=int, default=60, help="deals that judge a change")
    j.add_argument("--seed", type=int, default=8000)
    j.add_argument("--out", type=Path, required=True, help="JSON lines, appended")
    j.add_argument("--report", action="store_true", help="only print the file's report")
    t = commands.add_parser("seats")
    t.add_argument("variant", help="a Canasta variant: classic, classic-2p, ...")
    t.add_argument("--hands", type=int, default=100)
    t.add_argument("--deals", type=int, default=6, help="the search's deals a move")
    t.add_argument("--seed", type=int, default=20000)
    t.add_argument("--out", type=Path, required=True, help="JSON lines, appended")
    args = parser.parse_args()
    if args.command == "judge":
        judge(args)
    elif args.command == "seats":
        seats(args)
    elif args.command == "collect":
        collect(args)
    elif args.command == "allocate":
        allocate(args)
    else:
        analyse(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
