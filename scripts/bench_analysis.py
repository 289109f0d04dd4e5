#!/usr/bin/env python3
"""Benchmark: how many decisions ``canasta-replay analyze`` rates a second on one core.

Plays one hand of classic Canasta (greedy and random seats, as the issue's note does) into a log,
then analyses every decision of every seat in this process, one after the other, at the default
number of sampled deals (``replay.analysis.DEFAULT_SIMULATIONS``, or ``--simulations``), and
prints the decisions analysed per second per core, the mean and slowest seconds a decision, and
the mean number of moves tried. On a machine shared with other jobs the figures are pessimistic.
"""

from __future__ import annotations

import argparse
import io
import json
import platform
import statistics
import time

from canasta_net.canasta.rules import preset
from canasta_net.table.local import recorded_match
from replay.analysis import DEFAULT_SIMULATIONS, analyse, decision_tasks
from replay.timeline import load_timeline


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=5, help="the hand's seed")
    parser.add_argument("--simulations", type=int, default=DEFAULT_SIMULATIONS)
    parser.add_argument("--limit", type=int, default=None, help="analyse at most this many")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    log = io.BytesIO()
    kinds = ["greedy", "random", "greedy", "greedy"]
    recorded_match(preset("classic"), log, seed=args.seed, bot_kinds=kinds).play(max_hands=1)
    timeline = load_timeline(io.BytesIO(log.getvalue()))
    tasks = decision_tasks(
        timeline, None, seed=args.seed, simulations=args.simulations, budget=0.0
    )[: args.limit]
    seconds: list[float] = []
    tried: list[int] = []
    started = time.process_time()
    for task in tasks:
        before = time.process_time()
        result = analyse(task)
        seconds.append(time.process_time() - before)
        tried.append(len(result.candidates))
    total = time.process_time() - started
    report = {
        "benchmark": "canasta-replay analyze",
        "variant": "classic",
        "simulations": args.simulations,
        "decisions": len(tasks),
        "cpu_seconds": round(total, 2),
        "decisions_per_second_per_core": round(len(tasks) / total, 2) if total else None,
        "mean_seconds_a_decision": round(statistics.mean(seconds), 3) if seconds else None,
        "max_seconds_a_decision": round(max(seconds), 3) if seconds else None,
        "mean_moves_tried": round(statistics.mean(tried), 2) if tried else None,
        "python": platform.python_version(),
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(
        f"{report['decisions']} decisions of a classic hand at {args.simulations} sampled deals: "
        f"{report['decisions_per_second_per_core']} decisions a second per core "
        f"(CPU time; mean {report['mean_seconds_a_decision']} s, slowest "
        f"{report['max_seconds_a_decision']} s, {report['mean_moves_tried']} moves tried)"
    )


if __name__ == "__main__":
    main()
