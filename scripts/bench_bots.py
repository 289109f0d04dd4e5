#!/usr/bin/env python3
"""Benchmark: how strong one bot kind is against another, by duplicate play.

Each deal sequence is played twice with the bots' seats swapped (bot A on the even seats, then on
the odd ones; in 2- and 4-player Canasta the teams are the seats' parity), so the cards cannot
favour either bot. ``--unit match`` plays whole matches (to the target score, deals rotating);
``--unit hand`` plays single hands and counts the higher hand score (for the searching bot, whose
matches are long). Prints JSON: A's win rate over the games (a draw counts half) with a 95 %
Wilson interval, the duplicate pairs A won both, split or lost both, the mean score difference,
and each kind's mean seconds a move (CPU and wall). A search's budget counts the CPU time of its
thread (``--clock cpu``, the default), so that other jobs on the machine do not weaken it; ``--clock
wall`` counts wall seconds, as a host does. Progress goes to stderr.

    PYTHONPATH=. python scripts/bench_bots.py heuristic greedy --matches 200 --jobs 2
    PYTHONPATH=. python scripts/bench_bots.py search:0.5 heuristic --unit hand --matches 20

Goals (issue 15): heuristic >= 65 % of matches against greedy, search >= 60 % against heuristic,
in 2- and 4-player classic, the search at <= 0.5 s a move on one core.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import platform
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from canasta_net.canasta.bots import make_bot, search_bot
from canasta_net.canasta.match import Match
from canasta_net.canasta.rules import preset
from canasta_net.canasta.scoring import score_hand
from canasta_net.canasta.state import HandState
from canasta_net.search import search_budget
from canasta_net.selfplay import choose_for

MAX_HANDS = 60  # a match that runs longer is scored where it stands (a draw if level)


@dataclass
class Game:
    """One game of a duplicate pair: A's result and the time each kind thought."""

    points: float  # 1 a win for A, 0.5 a draw, 0 a loss
    diff: int  # A's score minus B's
    moves: list[int] = field(default_factory=lambda: [0, 0])
    seconds: list[float] = field(default_factory=lambda: [0.0, 0.0])  # CPU, this process
    wall: list[float] = field(default_factory=lambda: [0.0, 0.0])
    deals: list[int] = field(default_factory=lambda: [0, 0])  # sampled by a searching bot


def _bot(kind: str, rng: random.Random, simulations: int | None, cpu_time: bool = True) -> Any:
    budget = search_budget(kind)
    if budget is not None:
        return search_bot(rng, budget, simulations, cpu_time)
    return make_bot(kind, rng)


def _order(seed: int, deck_size: int) -> list[int]:
    order = list(range(deck_size))
    random.Random(seed).shuffle(order)
    return order


def _play_hand(state: HandState, bots: list[Any], a_parity: int, game: Game) -> None:
    while not state.is_over:
        seat = state.to_move
        side = 0 if seat % 2 == a_parity else 1
        started, cpu = time.perf_counter(), time.process_time()
        action = choose_for(bots[seat], state)
        game.seconds[side] += time.process_time() - cpu
        game.wall[side] += time.perf_counter() - started
        game.moves[side] += 1
        game.deals[side] += getattr(bots[seat], "deals_tried", 0)
        state.apply(action, seat)


def play_game(task: tuple[str, str, str, str, int, int, int | None, bool]) -> Game:
    """One game: bot A on the seats of parity ``a_parity`` (a plain function for the pool)."""
    variant, unit, kind_a, kind_b, seed, a_parity, simulations, cpu_time = task
    rules = preset(variant)
    bots = [
        _bot(
            kind_a if seat % 2 == a_parity else kind_b,
            random.Random(seed * 100 + seat),
            simulations,
            cpu_time,
        )
        for seat in range(rules.players)
    ]
    game = Game(0.0, 0)
    if unit == "hand":
        state = HandState(rules, _order(seed, rules.deck_size), dealer=seed % rules.players)
        _play_hand(state, bots, a_parity, game)
        totals = [score.total for score in score_hand(state)]
    else:
        match = Match(rules, first_dealer=seed % rules.players)
        while match.result is None and match.hands_played < MAX_HANDS:
            deal_seed = seed * 1000 + match.hands_played  # the same deals in both games
            state = match.new_hand(_order(deal_seed, rules.deck_size))
            _play_hand(state, bots, a_parity, game)
            match.record_hand(state)
        totals = list(match.scores)
    a_total, b_total = totals[a_parity], totals[1 - a_parity]
    game.diff = a_total - b_total
    game.points = 1.0 if a_total > b_total else 0.5 if a_total == b_total else 0.0
    return game


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson score interval of a proportion."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def bench(args: argparse.Namespace, variant: str) -> dict[str, Any]:
    tasks = [
        (
            variant,
            args.unit,
            args.a,
            args.b,
            args.seed + i,
            parity,
            args.simulations,
            args.clock == "cpu",
        )
        for i in range(args.matches)
        for parity in (0, 1)
    ]
    games: list[Game] = []
    started = time.perf_counter()
    with multiprocessing.Pool(args.jobs) as pool:
        for game in pool.imap(play_game, tasks):
            games.append(game)
            if len(games) % 2 == 0:
                points = sum(g.points for g in games)
                print(
                    f"{variant}: {len(games) // 2}/{args.matches} pairs, "
                    f"{args.a} {points:.1f}/{len(games)}",
                    file=sys.stderr,
                    flush=True,
                )
    pairs = [games[i].points + games[i + 1].points for i in range(0, len(games), 2)]
    points = sum(g.points for g in games)
    low, high = wilson(points, len(games))
    moves = [sum(g.moves[s] for g in games) for s in (0, 1)]
    seconds = [sum(g.seconds[s] for g in games) for s in (0, 1)]
    wall = [sum(g.wall[s] for g in games) for s in (0, 1)]
    return {
        "variant": variant,
        "players": preset(variant).players,
        "games": len(games),
        "win_rate": round(points / len(games), 4),
        "ci95": [round(low, 4), round(high, 4)],
        "pairs": {
            "won_both": sum(1 for p in pairs if p == 2),
            "split": sum(1 for p in pairs if 0 < p < 2),
            "lost_both": sum(1 for p in pairs if p == 0),
        },
        "mean_score_diff": round(sum(g.diff for g in games) / len(games), 1),
        "seconds_per_move": {  # CPU seconds of the benchmark's process
            args.a: round(seconds[0] / max(1, moves[0]), 5),
            args.b: round(seconds[1] / max(1, moves[1]), 5),
        },
        "wall_seconds_per_move": {
            args.a: round(wall[0] / max(1, moves[0]), 5),
            args.b: round(wall[1] / max(1, moves[1]), 5),
        },
        "sampled_deals_per_move": {
            args.a: round(sum(g.deals[0] for g in games) / max(1, moves[0]), 2),
            args.b: round(sum(g.deals[1] for g in games) / max(1, moves[1]), 2),
        },
        "wall_seconds": round(time.perf_counter() - started, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("a", help="bot kind A (random, greedy, heuristic, search, search:S)")
    parser.add_argument("b", help="bot kind B")
    parser.add_argument("--variants", default="classic-2p,classic")
    parser.add_argument("--matches", type=int, default=100, help="duplicate pairs per variant")
    parser.add_argument("--unit", choices=("match", "hand"), default="match")
    parser.add_argument("--budget", type=float, help="seconds a move for a plain 'search' kind")
    parser.add_argument(
        "--simulations", type=int, help="sampled deals a move for the search (not timed)"
    )
    parser.add_argument(
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="what a search budget counts: CPU seconds of the searching thread (the default: "
        "a busy machine does not weaken the search) or wall seconds (as a host plays)",
    )
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", dest="json_path", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    if args.budget is not None:
        args.a = f"search:{args.budget}" if args.a == "search" else args.a
        args.b = f"search:{args.budget}" if args.b == "search" else args.b
    for kind in (args.a, args.b):
        try:
            _bot(kind, random.Random(0), None)
        except ValueError as e:
            parser.error(str(e))
    results = [bench(args, variant) for variant in args.variants.split(",")]
    data = {
        "benchmark": "bots-duplicate",
        "a": args.a,
        "b": args.b,
        "unit": args.unit,
        "simulations": args.simulations,
        "clock": args.clock,
        "seed": args.seed,
        "jobs": args.jobs,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "command": "scripts/bench_bots.py " + " ".join(sys.argv[1:]),
        "results": results,
    }
    text = json.dumps(data, indent=2)
    print(text)
    if args.json_path:
        args.json_path.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
