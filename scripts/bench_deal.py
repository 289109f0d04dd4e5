#!/usr/bin/env python3
"""Benchmark: the time to deal one hand in each deal mode (issue 6).

Measured in one process on one core (every seat and the host run in turn, so the wall time is the
sum of all seats' work; ``scripts/bench_deal_loopback.py`` measures the deal at a real table over
TLS loopback, each seat in its own process):

- ``blind``: each seat's secrets from a fresh seed, stage 1 and stage 2 for every seat (each seat
  checking its input deck and the previous seat's signature, then signing its output), and the
  deal itself: every seat seals, signs and sends its key for every position of every other seat's
  hand, and every owner verifies, decrypts and opens its whole hand. For 108 cards and 4 seats
  (classic) and 162 cards and 4 seats (samba); CPU per seat; the hand-end audit replay.
- ``commit-reveal``: 4 commitments, 4 reveals checked against them and the deck derived
  (``canasta_net.deal.commit_reveal.DealRound``).
- one scalar multiplication on P-256 through the ECDH API, and its neighbours.

Goal (issue 6): a blind deal of 108 cards to 4 seats under 250 ms. ``meets_goal`` compares the
best wall time; the CPU times, measured per thread, are the figures to trust on a busy machine.
Prints JSON (and writes it with --out).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from canasta_net.canasta.rules import preset
from canasta_net.deal import commit_reveal, shuffle
from canasta_net.deal.blind import (
    CardIndex,
    SeatSecrets,
    deal_schedule,
    hash_to_x,
    initial_deck,
    labels_for_rules,
    replay_deal,
)
from canasta_net.deal.blind.local import deal_hands, run_stages
from canasta_net.deal.blind.points import CURVE, Multiplier, point_from_x
from canasta_net.identity import Identity

GOAL_SECONDS = 0.25
TABLE = b"bench-table"


def _stats(values: list[float]) -> dict[str, float]:
    return {
        "best_ms": round(1000 * min(values), 2),
        "median_ms": round(1000 * statistics.median(values), 2),
    }


def blind_deal(variant: str, repeat: int) -> dict[str, Any]:
    rules = preset(variant)
    labels = labels_for_rules(rules)
    seats = rules.players
    identities = [Identity.generate() for _ in range(seats)]
    schedule = deal_schedule(seats, rules.hand_size, 0, len(labels))
    start = time.perf_counter()
    initial_deck(labels)  # hash-to-curve once per process; cached afterwards
    hash_to_curve = time.perf_counter() - start
    cards = CardIndex(labels)
    totals, secrets_t, stages_t, dealing_t, audits = [], [], [], [], []
    cpu_runs: list[list[float]] = []
    for hand_no in range(repeat):
        cpu = [0.0] * seats
        seeds = [os.urandom(32) for _ in range(seats)]
        t0 = time.perf_counter()
        secrets = []
        for seat, seed in enumerate(seeds):
            c0 = time.thread_time()
            secrets.append(SeatSecrets.derive(TABLE, hand_no, seat, seed, len(labels)))
            cpu[seat] += time.thread_time() - c0
        t1 = time.perf_counter()
        outputs = run_stages(secrets, identities, labels, cpu)
        t2 = time.perf_counter()
        _, hands = deal_hands(secrets, identities, outputs[-1].deck, schedule, cards, cpu)
        t3 = time.perf_counter()
        totals.append(t3 - t0)
        secrets_t.append(t1 - t0)
        stages_t.append(t2 - t1)
        dealing_t.append(t3 - t2)
        cpu_runs.append(cpu)
        assert all(len(hands[seat]) == rules.hand_size for seat in range(seats))
        a0 = time.perf_counter()
        replay_deal(TABLE, hand_no, labels, seeds, [list(o.deck) for o in outputs])
        audits.append(time.perf_counter() - a0)
    per_seat = [statistics.median(run[seat] for run in cpu_runs) for seat in range(seats)]
    return {
        "variant": variant,
        "cards": len(labels),
        "seats": seats,
        "hand_size": rules.hand_size,
        "sealed_keys": seats * rules.hand_size * (seats - 1),
        "total": _stats(totals),
        "phases_median_ms": {
            "derive_secrets": round(1000 * statistics.median(secrets_t), 2),
            "stage1_and_stage2_all_seats": round(1000 * statistics.median(stages_t), 2),
            "deal_keys_seal_sign_verify_open": round(1000 * statistics.median(dealing_t), 2),
        },
        "cpu_ms_per_seat_median": [round(1000 * c, 2) for c in per_seat],
        "cpu_ms_all_seats_median": round(1000 * statistics.median(sum(run) for run in cpu_runs), 2),
        "hash_to_curve_once_ms": round(1000 * hash_to_curve, 2),
        "audit_replay": _stats(audits),
    }


def commit_reveal_deal(repeat: int) -> dict[str, Any]:
    times = []
    for hand_no in range(repeat * 20):
        seeds = [os.urandom(32) for _ in range(4)]
        start = time.perf_counter()
        deal_round = commit_reveal.DealRound(TABLE, hand_no, 4)
        for seat, seed in enumerate(seeds):
            deal_round.add_commitment(seat, shuffle.commitment(TABLE, hand_no, seat, seed))
        for seat, seed in enumerate(seeds):
            deal_round.add_reveal(seat, seed)
        deal_round.deck(108)
        times.append(time.perf_counter() - start)
    return {"cards": 108, "seats": 4, "total": _stats(times)}


def per_call(function: Callable[[], object], count: int = 2000) -> float:
    """Microseconds per call, best of five batches."""
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(count):
            function()
        best = min(best, (time.perf_counter() - start) / count)
    return round(1e6 * best, 2)


def micro() -> dict[str, float]:
    x = hash_to_x("d0:KH")
    point = point_from_x(x)
    multiplier = Multiplier(0x1234567890ABCDEF)
    key = ec.derive_private_key(0x1234567890ABCDEF, CURVE)
    a, b = X25519PrivateKey.generate(), X25519PrivateKey.generate().public_key()
    identity = Identity.generate()
    signature = identity.sign("bench", b"x" * 200)
    public = identity.private_key.public_key()
    from canasta_net.identity import signing_input

    signed = signing_input("bench", b"x" * 200)
    return {
        "scalar_mult_exchange_us": per_call(lambda: key.exchange(ec.ECDH(), point)),
        "scalar_mult_with_point_decode_us": per_call(lambda: multiplier(x)),
        "derive_private_key_us": per_call(lambda: ec.derive_private_key(987654321, CURVE)),
        "point_decode_and_validate_us": per_call(lambda: point_from_x(x)),
        "hash_to_curve_us": per_call(lambda: hash_to_x("d0:KH"), 200),
        "x25519_exchange_us": per_call(lambda: a.exchange(b)),
        "ed25519_sign_us": per_call(lambda: identity.sign("bench", b"x" * 200)),
        "ed25519_verify_us": per_call(lambda: public.verify(signature, signed)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7, help="timed deals of each kind")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    classic = blind_deal("classic", args.repeat)
    samba = blind_deal("samba", args.repeat)
    best = classic["total"]["best_ms"] / 1000
    result = {
        "benchmark": "deal",
        "measured": "in-process, one core, every seat in turn (see bench_deal_loopback.py)",
        "blind_108": classic,
        "blind_162": samba,
        "commit_reveal_108": commit_reveal_deal(args.repeat),
        "micro": micro(),
        "goal_ms": 1000 * GOAL_SECONDS,
        "meets_goal": best < GOAL_SECONDS,
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
