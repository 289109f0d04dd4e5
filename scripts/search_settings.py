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

``docs/bots.md`` (The search) gives the table it printed.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from canasta_net.canasta.bots import choose_for, make_bot, search_bot
from canasta_net.canasta.rules import preset
from canasta_net.canasta.state import HandState


def collect(args: argparse.Namespace) -> None:
    rules = preset(args.variant)
    with args.out.open("a") as out:
        for seed in range(args.seed, args.seed + args.positions):
            order = list(range(rules.deck_size))
            random.Random(seed).shuffle(order)
            state = HandState(rules, order, dealer=seed % rules.players)
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
    args = parser.parse_args()
    if args.command == "collect":
        collect(args)
    else:
        analyse(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
