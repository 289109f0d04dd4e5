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

``--games FILE`` keeps every game played as a line of JSON (JSON Lines) and plays only the games
of the asked seeds that the file does not hold yet, so a long run can be stopped and carried on
(another day, another session) and its figures cover every game in the file: a run of ``--seed S
--matches N`` reports the N pairs from S, played now or before. A game counts only if it was
played by the same code: each line carries a fingerprint of the source of every ``canasta_net``
module the benchmark loaded (``code``); lines of other code, or of other settings, stay in the
file and are not counted (``games_other_code`` says how many). A search with a fixed number of
sampled deals (``--simulations``) plays the same games on any machine and at any load.

    PYTHONPATH=. python scripts/bench_bots.py heuristic greedy --matches 200 --jobs 2
    PYTHONPATH=. python scripts/bench_bots.py search:0.5 heuristic --unit hand --matches 20
    PYTHONPATH=. python scripts/bench_bots.py search heuristic --simulations 6 --matches 200 \
        --variants classic-2p --seed 3000 --games scripts/results/search6-heuristic-2p.jsonl
    PYTHONPATH=. python scripts/bench_bots.py heuristic-pile5 heuristic --variants classic \
        --matches 500 --jobs 2 --seed 50000

The kind ``heuristic-pileN`` is the heuristic taking a pile from N cards in every variant (its
least pile; docs/bots.md, "How big a pile the heuristic takes").

Goals (issue 15): heuristic >= 65 % of matches against greedy, search >= 60 % against heuristic,
in 2- and 4-player classic, the search at <= 0.5 s a move on one core.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import multiprocessing
import platform
import random
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from canasta_net.canasta.bots import make_bot, search_bot
from canasta_net.canasta.heuristic import HeuristicBot
from canasta_net.canasta.match import Match
from canasta_net.canasta.rules import preset
from canasta_net.canasta.scoring import score_hand
from canasta_net.canasta.state import HandState
from canasta_net.search import search_budget
from canasta_net.selfplay import choose_for

MAX_HANDS = 60  # a match that runs longer is scored where it stands (a draw if level)

# variant, unit, kind A, kind B, seed, A's seat parity, sampled deals a move, CPU-time budget
Task = tuple[str, str, str, str, int, int, int | None, bool]


@dataclass
class Game:
    """One game of a duplicate pair: A's result and the time each kind thought."""

    points: float  # 1 a win for A, 0.5 a draw, 0 a loss
    diff: int  # A's score minus B's
    moves: list[int] = field(default_factory=lambda: [0, 0])
    seconds: list[float] = field(default_factory=lambda: [0.0, 0.0])  # CPU, this process
    wall: list[float] = field(default_factory=lambda: [0.0, 0.0])
    deals: list[int] = field(default_factory=lambda: [0, 0])  # sampled by a searching bot


PILE_KIND = "heuristic-pile"  # heuristic-pileN: the heuristic taking piles from N cards


def _bot(kind: str, rng: random.Random, simulations: int | None, cpu_time: bool = True) -> Any:
    budget = search_budget(kind)
    if budget is not None:
        return search_bot(rng, budget, simulations, cpu_time)
    if kind.startswith(PILE_KIND):
        least = kind.removeprefix(PILE_KIND)
        if not least.isdigit() or int(least) < 1:
            raise ValueError(f"{kind!r}: {PILE_KIND}N takes a whole number of cards N, 1 or more")
        bot = HeuristicBot(rng)
        bot.least_pile = int(least)  # the smallest pile it takes, whatever the variant draws
        return bot
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


def play_game(task: Task) -> Game:
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


def code_fingerprint() -> str:
    """A digest of the source of every ``canasta_net`` module loaded: the code that plays."""
    digest = hashlib.sha256()
    for name in sorted(sys.modules):
        if name != "canasta_net" and not name.startswith("canasta_net."):
            continue
        source = getattr(sys.modules[name], "__file__", None)
        if source is not None:
            digest.update(name.encode() + b"\0" + Path(source).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def task_key(task: Task) -> str:
    variant, unit, kind_a, kind_b, seed, a_parity, simulations, cpu_time = task
    return json.dumps(
        {
            "variant": variant,
            "unit": unit,
            "a": kind_a,
            "b": kind_b,
            "seed": seed,
            "a_parity": a_parity,
            "simulations": simulations,
            "clock": "cpu" if cpu_time else "wall",
        },
        sort_keys=True,
    )


class GamesLog:
    """The games already played, one JSON line each (``--games``), and the file they go to."""

    def __init__(self, path: Path, code: str) -> None:
        self.path = path
        self.code = code
        self.games: dict[str, Game] = {}  # this code's games, by task_key
        self.other_code: set[str] = set()  # task keys played by other code
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            return
        text = path.read_text()
        if text and not text.endswith("\n"):  # a run stopped mid-line: drop the partial line
            kept = text[: text.rfind("\n") + 1]
            print(f"{path}: dropped an unfinished last line", file=sys.stderr)
            path.write_text(kept)
            text = kept
        for number, line in enumerate(text.splitlines(), 1):
            try:
                entry = json.loads(line)
                key = json.dumps(entry["task"], sort_keys=True)
                game = Game(**entry["game"])
                code_of_line = entry["code"]
            except (ValueError, KeyError, TypeError) as e:
                raise SystemExit(f"{path}:{number}: not a game of this benchmark ({e})") from None
            if code_of_line == code:
                self.games[key] = game
            else:
                self.other_code.add(key)

    def add(self, task: Task, game: Game) -> None:
        key = task_key(task)
        self.games[key] = game
        line = {"task": json.loads(key), "code": self.code, "game": asdict(game)}
        with self.path.open("a") as out:
            out.write(json.dumps(line, sort_keys=True) + "\n")


def bench(args: argparse.Namespace, variant: str, log: GamesLog | None) -> dict[str, Any]:
    tasks: list[Task] = [
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
    done = log.games if log is not None else {}
    from_file = sum(1 for task in tasks if task_key(task) in done)
    pending = [task for task in tasks if task_key(task) not in done]
    played: dict[str, Game] = {}
    started = time.perf_counter()
    if from_file:
        print(f"{variant}: {from_file} games from {args.games}", file=sys.stderr, flush=True)
    with multiprocessing.Pool(args.jobs) as pool:
        for task, game in zip(pending, pool.imap(play_game, pending), strict=True):
            played[task_key(task)] = game
            if log is not None:
                log.add(task, game)
            if len(played) % 2 == 0:
                points = sum(g.points for g in played.values())
                print(
                    f"{variant}: {len(played) // 2}/{len(pending) // 2} pairs to play, "
                    f"{args.a} {points:.1f}/{len(played)}",
                    file=sys.stderr,
                    flush=True,
                )
    games = [played.get(task_key(task)) or done[task_key(task)] for task in tasks]
    other_code = log.other_code if log is not None else set()
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
        "games_played_now": len(played),
        "games_from_file": from_file,
        "games_other_code": sum(1 for task in tasks if task_key(task) in other_code),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "a", help="bot kind A (random, greedy, heuristic, heuristic-pileN, search, search:S)"
    )
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
    parser.add_argument(
        "--games",
        type=Path,
        help="keep every game in this JSON Lines file and play only those it does not hold",
    )
    args = parser.parse_args()
    if args.budget is not None:
        args.a = f"search:{args.budget}" if args.a == "search" else args.a
        args.b = f"search:{args.budget}" if args.b == "search" else args.b
    for kind in (args.a, args.b):
        try:
            _bot(kind, random.Random(0), None)
        except ValueError as e:
            parser.error(str(e))
    code = code_fingerprint()
    log = GamesLog(args.games, code) if args.games is not None else None
    results = [bench(args, variant, log) for variant in args.variants.split(",")]
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
        "code": code,
        "results": results,
    }
    text = json.dumps(data, indent=2)
    print(text)
    if args.json_path:
        args.json_path.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
