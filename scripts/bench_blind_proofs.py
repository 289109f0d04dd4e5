#!/usr/bin/env python3
"""Benchmark: the proof-carrying stages of the blind deal, version 2 (issue 19), beside version 1.

Measured in one process (every seat in turn), for 108 cards (classic) and 162 (samba), 4 seats:

- per stage and seat, version 2: ``prove_ms`` (the stage with its proof) and ``verify_ms`` (one
  check of it by a receiver: form and proof), and the proof's size;
- version 1's stages for the same deck (``stage1``/``stage2`` with their input check), run in
  alternation with version 2 so that both meet the same load;
- ``critical_path_ms``: the eight stages in turn, each proved and then checked by the next seat
  before it proceeds (what a seat that checks every proof before going on waits for; transport
  and signatures not included), and ``pipelined_ms``: the same if seats went on at once and
  checked every proof before releasing any key (all provers in turn, then one last check);
- the announcement's public keys (m + 1 base-point multiplications per seat);
- ``multiplication_us``: one multiplication of a point, by a multiplier of 1, one below 2⁶⁴
  and a random one, through the group's public multiplication (``mul``: its time follows the
  multiplier) and its constant-time one (``mul_secret``, for a seat's secret deck key: the same
  time for all three);
- with ``--audit``: the replay of a whole one-hand log of each deal mode (``blind`` and
  ``blind-v2``, classic-2p, bots), every proof checked again (wall time: the figures there
  include the hand's play replayed through the engine).

Figures are CPU time of this thread (``time.thread_time``), the median over ``--repeat`` deals:
on a busy machine they are the ones to trust. Prints JSON (and writes it with --out).

Measured on the 2-core development machine with five other jobs running (load average 5, so
indicative; CPU medians of 3 deals): 108 cards: a stage-1 proof 37–46 ms and its check 34–58 ms,
a stage-2 proof 16–28 ms and its check 22–36 ms (version 1's stages with their input check:
12 ms and 17 ms); the critical path 547 ms (version 1's eight stages: 120 ms), pipelined 301 ms.
162 cards: 728 ms and 395 ms (version 1: 177 ms). A proof is 14.2 kB (stage 1) and 6.9 kB
(stage 2) for 108 cards.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from canasta_net.canasta.rules import preset
from canasta_net.deal.blind import SeatSecrets, initial_deck, labels_for_rules
from canasta_net.deal.blind import stage1 as v1_stage1
from canasta_net.deal.blind import stage2 as v1_stage2
from canasta_net.deal.blind.proofs import group, stages

TABLE = b"bench-proofs"
SEATS = 4


def _ms(seconds: float) -> float:
    return round(1000 * seconds, 1)


def _cpu(function: Any, *args: Any) -> tuple[Any, float]:
    start = time.thread_time()
    result = function(*args)
    return result, time.thread_time() - start


def one_deal(labels: tuple[str, ...], hand_no: int) -> dict[str, Any]:
    m = len(labels)
    seeds = [os.urandom(32) for _ in range(SEATS)]
    secrets = [stages.StageSecrets.derive(TABLE, hand_no, s, seeds[s], m) for s in range(SEATS)]
    keys, keys_cpu = [], []
    for s in secrets:
        public, spent = _cpu(s.public_keys)
        keys.append(public)
        keys_cpu.append(spent)
    deck = list(stages.card_points(labels))
    rows = []
    for stage in (1, 2):
        make = stages.stage1 if stage == 1 else stages.stage2
        check = stages.check_stage1 if stage == 1 else stages.check_stage2
        for seat in range(SEATS):
            (out, proof), proving = _cpu(make, secrets[seat], deck)
            _, verifying = _cpu(check, TABLE, hand_no, seat, deck, out, keys[seat], proof)
            rows.append((stage, seat, proving, verifying, len(proof)))
            deck = out
    v1 = [SeatSecrets.derive(TABLE, hand_no, s, seeds[s], m) for s in range(SEATS)]
    v1_deck = initial_deck(list(labels))
    v1_rows = []
    for stage in (1, 2):
        for seat in range(SEATS):
            make1 = v1_stage1 if stage == 1 else v1_stage2
            v1_deck, spent = _cpu(make1, v1[seat], v1_deck, SEATS)
            v1_rows.append(spent)
    return {"rows": rows, "keys": keys_cpu, "v1": v1_rows}


def bench(variant: str, repeat: int) -> dict[str, Any]:
    labels = tuple(labels_for_rules(preset(variant)))
    start = time.thread_time()
    stages.card_points(labels)
    card_points = time.thread_time() - start
    runs = [one_deal(labels, hand_no) for hand_no in range(repeat)]
    per_stage = []
    for index, (stage, seat, _, _, size) in enumerate(runs[0]["rows"]):
        per_stage.append(
            {
                "stage": stage,
                "seat": seat,
                "prove_ms": _ms(statistics.median(r["rows"][index][2] for r in runs)),
                "verify_ms": _ms(statistics.median(r["rows"][index][3] for r in runs)),
                "proof_bytes": size,
                "v1_stage_ms": _ms(statistics.median(r["v1"][index] for r in runs)),
            }
        )
    critical = [sum(p + v for _, _, p, v, _ in r["rows"]) for r in runs]
    pipelined = [sum(p for _, _, p, _, _ in r["rows"]) + r["rows"][-1][3] for r in runs]
    v1_total = [sum(r["v1"]) for r in runs]
    return {
        "variant": variant,
        "cards": len(labels),
        "seats": SEATS,
        "per_stage_median": per_stage,
        "critical_path_ms": _ms(statistics.median(critical)),
        "pipelined_ms": _ms(statistics.median(pipelined)),
        "v1_stages_total_ms": _ms(statistics.median(v1_total)),
        "public_keys_per_seat_ms": _ms(statistics.median(k for r in runs for k in r["keys"])),
        "card_points_once_ms": _ms(card_points),
        "verify_all_eight_stages_ms": _ms(
            statistics.median(sum(v for _, _, _, v, _ in r["rows"]) for r in runs)
        ),
    }


def audit_figures() -> dict[str, float]:
    """Wall time of ``replay_log`` over a one-hand log of each blind mode."""
    import io

    from canasta_net.log.replay import replay_log
    from canasta_net.table.local import recorded_match

    figures = {}
    for mode in ("blind", "blind-v2"):
        buf = io.BytesIO()
        recorded_match(preset("classic-2p"), buf, seed=1, deal=mode).play(max_hands=1)
        start = time.perf_counter()
        replay_log(buf.getvalue())
        figures[f"{mode}_replay_ms"] = _ms(time.perf_counter() - start)
        figures[f"{mode}_log_bytes"] = len(buf.getvalue())
    return figures


def multiplication_figures(reps: int = 2000) -> dict[str, dict[str, float]]:
    """µs of CPU per multiplication, the least of three runs, for three multipliers."""
    point = group.base(0xC0FFEE)
    multipliers = {
        "one": 1,
        "below_2_64": 2**64 - 1,
        "random": int.from_bytes(os.urandom(32)) % group.Q,
    }
    figures: dict[str, dict[str, float]] = {}
    for name, function in (("mul", group.mul), ("mul_secret", group.mul_secret)):
        figures[name] = {}
        for label, s in multipliers.items():
            runs = []
            for _ in range(3):
                start = time.thread_time()
                for _ in range(reps):
                    function(point, s)
                runs.append((time.thread_time() - start) / reps)
            figures[name][label] = round(1e6 * min(runs), 1)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3, help="timed deals of each size")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    parser.add_argument("--audit", action="store_true", help="also time a whole log's replay")
    args = parser.parse_args()
    result = {
        "benchmark": "blind-proofs",
        "measured": "in-process CPU of one thread, every seat in turn; no transport, no signatures",
        "blind_v2_108": bench("classic", args.repeat),
        "blind_v2_162": bench("samba", args.repeat),
        "multiplication_us": multiplication_figures(),
        "audit": audit_figures() if args.audit else None,
        "load_average": os.getloadavg(),
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    text = json.dumps(result, indent=1)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
