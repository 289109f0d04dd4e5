#!/usr/bin/env python3
"""Benchmark: how fast ``canasta-replay audit`` checks a log, against bare signature checking.

Plays one full match to the target (greedy bots, classic, 5000 points) through the table protocol
into a real ``.cnlog``, then measures on one core:

- the audit (``replay.audit``): container verification, the engine's replay of every deal, card,
  action and score, and the audit-level checks, in records (events) per second;
- bare signature verification of the same log: the host's signature on every record and the
  author's signature on every signed action, with the verifying keys built once and the records
  parsed beforehand (only the Ed25519 checks are timed), in records per second;
- their ratio (goal, issue 5: at least 0.6), and the wall time to audit the whole match log from
  disk.

Prints JSON (and writes it with --out).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

from canasta_net.canasta.rules import preset
from canasta_net.identity import signing_input
from canasta_net.log import (
    ACTION_SIGNATURE_KIND,
    RECORD_SIGNATURE_KIND,
    StoredRecord,
    iter_records,
    open_log_for_writing,
    parse_header,
)
from canasta_net.table.local import recorded_match
from replay.audit import audit_path, audit_source

GOAL_RATIO = 0.6


def play_match(path: Path, seed: int, variant: str) -> None:
    with open_log_for_writing(path) as log_file:
        recorded_match(preset(variant), log_file, seed=seed, bot_kinds=("greedy",)).play()


def bare_verification(records: list[StoredRecord]) -> tuple[float, int]:
    """Seconds to check every host and author signature; and how many signatures that is."""
    header = parse_header(records[0])
    keys = header.verifying_keys
    host_key = keys[header.host]
    record_prefix = signing_input(RECORD_SIGNATURE_KIND, b"")
    action_prefix = signing_input(ACTION_SIGNATURE_KIND, b"")
    work = [
        (
            record.host_sig,
            record_prefix + record.body,
            None if record.action is None else keys[record.action["seat"]],
            record.fields.get("asig"),
            None if record.action is None else action_prefix + record.fields["act"],
        )
        for record in records
    ]
    signatures = len(work) + sum(1 for item in work if item[2] is not None)
    start = time.perf_counter()
    for host_sig, signed_body, author_key, asig, signed_act in work:
        host_key.verify(host_sig, signed_body)
        if author_key is not None:
            author_key.verify(asig, signed_act)
    return time.perf_counter() - start, signatures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--variant", default="classic")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs of each measurement")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "match.cnlog"
        play_match(path, args.seed, args.variant)
        data = path.read_bytes()
        records = list(iter_records(data))
        first = audit_path(str(path))  # the whole match, from disk, as the command does it
        if first.verdict != "valid":
            print(f"the benchmark log does not audit as valid: {first.summary}", file=sys.stderr)
            return 1
        audit_times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            audit_source(data)
            audit_times.append(time.perf_counter() - start)
        bare = [bare_verification(records) for _ in range(args.repeat)]
        bare_times = [seconds for seconds, _ in bare]
        from_disk = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            audit_path(str(path))
            from_disk.append(time.perf_counter() - start)
    events = len(records)
    audit_best, bare_best = min(audit_times), min(bare_times)
    audit_rate, bare_rate = events / audit_best, events / bare_best
    result = {
        "benchmark": "audit-vs-signatures",
        "variant": args.variant,
        "bots": "greedy",
        "seed": args.seed,
        "match": {
            "hands": len(first.hands),
            "records": events,
            "bytes": len(data),
            "actions": first.kinds.get("action", 0),
            "result": first.match["result"]["text"] if first.match.get("result") else None,
        },
        "audit": {
            "seconds_best": round(audit_best, 4),
            "seconds_median": round(statistics.median(audit_times), 4),
            "events_per_second": round(audit_rate, 1),
        },
        "bare_signatures": {
            "signatures": bare[0][1],
            "seconds_best": round(bare_best, 4),
            "seconds_median": round(statistics.median(bare_times), 4),
            "events_per_second": round(bare_rate, 1),
        },
        "ratio": round(audit_rate / bare_rate, 3),
        "goal_ratio": GOAL_RATIO,
        "meets_goal": audit_rate / bare_rate >= GOAL_RATIO,
        "full_match_audit_seconds": {
            "best": round(min(from_disk), 4),
            "median": round(statistics.median(from_disk), 4),
        },
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
