#!/usr/bin/env python3
"""Benchmark: random-legal self-play speed of the rules engine, per variant, on one core.

Prints JSON (and writes it with --out): hands/s and actions/s per variant. Goal (issue 2): at least
40,000 actions/s and 150 full 4-player classic hands/s.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path

from canasta_net.games import all_variants, game_for
from canasta_net.simulate import simulate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=300, help="hands per variant")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--variants", default=",".join(name for name, _ in all_variants()))
    parser.add_argument("--bots", default="random", help="random or greedy")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    results = {}
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
