#!/usr/bin/env python3
"""Benchmark: random-legal self-play speed of the rules engine, per variant, on one core.

Prints JSON (and writes it with --out) per variant:

- ``pick``: the random bot's self-play (it draws a move without listing them all): hands/s and
  actions/s. Goal (issue 2): at least 40,000 actions/s and 150 full 4-player classic hands/s.
- ``listing``: what a search does and what other engines measure: list every legal action, pick
  one, apply it (decisions/s), and the cost of ``copy()`` and of ``apply()`` in µs, timed on
  positions sampled from the same games.

Run the same command on two checkouts (``PYTHONPATH=...``) to compare them; figures from a busy
machine are only comparable when the runs alternate. ``--count N`` only lists and picks N
decisions per variant (seed ``--seed``; May I? too, deal after deal), untimed: run it under
``valgrind --tool=callgrind`` and subtract a run with ``--count 0`` (the imports) for an
instruction count that a loaded machine does not change.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from canasta_net import mayi
from canasta_net.canasta.rules import RuleSet
from canasta_net.canasta.state import HandState
from canasta_net.games import all_variants, game_for
from canasta_net.simulate import simulate


def listing(rules: RuleSet, hands: int, seed: int) -> dict[str, Any]:
    """List-and-pick self-play over ``hands`` hands, and copy/apply costs on sampled positions."""
    rng = random.Random(seed)
    decisions, seconds = 0, 0.0
    samples: list[HandState] = []
    for _ in range(hands):
        order = list(range(rules.deck_size))
        rng.shuffle(order)
        state = HandState(rules, order, dealer=0)
        while not state.is_over:
            start = time.perf_counter()
            action = rng.choice(state.legal_actions())
            state.apply(action)
            seconds += time.perf_counter() - start
            decisions += 1
            if decisions % 5 == 0 and len(samples) < 400:
                samples.append(state.copy())
    start = time.perf_counter()
    for _ in range(20):
        for sample in samples:
            sample.copy()
    copy_us = (time.perf_counter() - start) / (20 * len(samples)) * 1e6
    apply_seconds, applied = 0.0, 0
    for sample in samples:
        legal = sample.legal_actions()
        if not legal:
            continue
        trial = sample.copy()
        start = time.perf_counter()
        trial.apply(legal[0])
        apply_seconds += time.perf_counter() - start
        applied += 1
    return {
        "decisions": decisions,
        "decisions_per_second": round(decisions / seconds, 1),
        "copy_us": round(copy_us, 2),
        "apply_us": round(apply_seconds / max(1, applied) * 1e6, 2),
    }


def count_decisions(rules: RuleSet | mayi.MayIRules, decisions: int, seed: int) -> None:
    """``decisions`` list-and-pick decisions, hand after hand (May I?: deal after deal, each
    contract in turn), for instruction counts."""
    rng = random.Random(seed)
    done = 0
    while done < decisions:
        for state in _fresh_states(rules, rng):
            while not state.is_over and done < decisions:
                state.apply(rng.choice(state.legal_actions()))  # type: ignore[arg-type]
                done += 1


def _fresh_states(
    rules: RuleSet | mayi.MayIRules, rng: random.Random
) -> Iterator[HandState | mayi.DealState]:
    """A new hand (May I?: a game's deals, each dealt when the one before is over), dealt from
    shuffles of ``rng``."""
    if isinstance(rules, RuleSet):
        order = list(range(rules.deck_size))
        rng.shuffle(order)
        yield HandState(rules, order, dealer=0)
        return
    size = mayi.DealState.blank(rules).deck.size
    for deal in range(rules.deals):
        order = list(range(size))
        rng.shuffle(order)
        yield mayi.DealState(rules, order, 0, deal)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=300, help="hands per variant")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--variants", default=",".join(name for name, _ in all_variants()))
    parser.add_argument("--bots", default="random", help="random or greedy")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    parser.add_argument(
        "--listing-hands", type=int, default=100, help="hands per variant in the listing mode"
    )
    parser.add_argument(
        "--count", type=int, help="only N list-and-pick decisions a variant, untimed (callgrind)"
    )
    args = parser.parse_args()
    if args.count is not None:
        for name in args.variants.split(","):
            rules = game_for(name).rules
            assert isinstance(rules, RuleSet | mayi.MayIRules)
            count_decisions(rules, args.count, args.seed)
        return 0
    results: dict[str, dict[str, Any]] = {}
    for name in args.variants.split(","):
        report = simulate(game_for(name).rules, args.hands, args.seed, [args.bots])
        results[name] = {
            "hands": report.hands,
            "actions": report.actions,
            "seconds": round(report.seconds, 3),
            "hands_per_second": round(report.hands_per_second, 1),
            "actions_per_second": round(report.actions_per_second, 1),
            "actions_per_hand": round(report.actions / max(1, report.hands), 1),
            "stalls": report.stalls,
            "errors": report.errors,
        }
        rules = game_for(name).rules
        if isinstance(rules, RuleSet):  # the listing mode drives the Canasta engine's HandState
            results[name]["listing"] = listing(rules, args.listing_hands, args.seed)
        print(f"{name}: {results[name]}", file=sys.stderr)
    data = {
        "benchmark": "engine-self-play",
        "bots": args.bots,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "variants": results,
    }
    text = json.dumps(data, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
