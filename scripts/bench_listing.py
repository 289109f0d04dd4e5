#!/usr/bin/env python3
"""Benchmark: ``legal_actions()`` on a fixed set of positions, per variant.

The positions come from random-legal self-play with a fixed seed (every fifth decision, up to
``--positions`` of them). A change to the engine may change what is legal, and so which games
random play makes: write the positions once with ``--save FILE`` (from one checkout) and time
every checkout on the same ones with ``--load FILE``::

    PYTHONPATH=/work/main python scripts/bench_listing.py --save /tmp/positions.json
    PYTHONPATH=. python scripts/bench_listing.py --load /tmp/positions.json

Each round lists every position once, on a fresh copy (the listing keeps nothing between
copies); the best of ``--rounds`` rounds is printed, in µs per listing, as JSON. Figures from a
busy machine are only comparable when the runs alternate; for instruction counts, run
``--rounds 1`` with and without ``--no-listing`` under ``valgrind --tool=callgrind`` and
subtract.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path
from typing import Any

from canasta_net.canasta.position import position_from_dict, position_to_dict
from canasta_net.canasta.rules import preset
from canasta_net.canasta.state import HandState


def positions(variant: str, count: int, seed: int) -> list[dict[str, Any]]:
    """``count`` positions of random-legal self-play (every fifth decision)."""
    rules = preset(variant)
    rng = random.Random(f"{variant}-{seed}")
    out: list[dict[str, Any]] = []
    decisions = 0
    while len(out) < count:
        order = list(range(rules.deck_size))
        rng.shuffle(order)
        state = HandState(rules, order, dealer=0)
        while not state.is_over and len(out) < count:
            state.apply(rng.choice(state.legal_actions()))
            decisions += 1
            if decisions % 5 == 0 and not state.is_over:
                out.append(position_to_dict(state))
    return out


def time_listing(states: list[HandState], rounds: int, listing: bool = True) -> float:
    """The best round's mean µs per ``legal_actions()`` (``listing`` false: the rounds without
    the listing, for the baseline of an instruction count)."""
    best = float("inf")
    for _ in range(rounds):
        copies = [s.copy() for s in states]
        start = time.perf_counter()
        for state in copies:
            if listing:
                state.legal_actions()
        best = min(best, (time.perf_counter() - start) / len(copies) * 1e6)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default="samba,classic")
    parser.add_argument("--positions", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--save", type=Path)
    parser.add_argument("--load", type=Path)
    parser.add_argument(
        "--no-listing",
        action="store_true",
        help="everything but the listing: run under valgrind --tool=callgrind and subtract it "
        "from a run with the listing for an instruction count a loaded machine does not change",
    )
    args = parser.parse_args()
    variants = args.variants.split(",")
    if args.load:
        data = json.loads(args.load.read_text())
    else:
        data = {v: positions(v, args.positions, args.seed) for v in variants}
    if args.save:
        args.save.write_text(json.dumps(data))
    result = {}
    for variant in variants:
        states = [position_from_dict(p) for p in data[variant]]
        result[variant] = round(time_listing(states, args.rounds, not args.no_listing), 2)
    print(json.dumps({"us_per_listing": result, "positions": args.positions}))


if __name__ == "__main__":
    main()
