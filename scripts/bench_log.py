#!/usr/bin/env python3
"""Benchmark: the event log's write and verify speed, and how big real game logs are, on one core.

Prints JSON (and writes it with --out):

- ``write``: records/s appended by ``LogWriter`` to a real file, with fsync off and (on a smaller
  sample) with fsync on. The records are those of a recorded classic match, written again in a loop
  (each one encoded, schema-checked, signed, written, flushed).
- ``verify``: records/s checked by ``verify_log`` on whole recorded match logs, against the rate of
  bare Ed25519 verification of the same signatures (the host's on every record and the author's
  where there is one, with the public keys already built and the signed bytes already assembled),
  and the ratio of the two times. Goal: ``verify_log`` within 1.6x of bare verification.
  ``verify_log`` also checks the checkpoint signatures; the bare figure leaves them out (as the
  goal is stated) and ``ratio_counting_checkpoint_signatures`` puts them in.
- ``records``: mean stored bytes per record kind (host's copy and a seat's redacted copy).
- ``match_logs``: the size of full 5000-point classic match logs between greedy bots, one per
  seed: min, mean and max bytes (goal: under 300 KB).
"""

from __future__ import annotations

import argparse
import io
import json
import platform
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from canasta_net.canasta.rules import preset
from canasta_net.identity import signing_input
from canasta_net.log import (
    LogWriter,
    StoredRecord,
    iter_records,
    open_log_for_writing,
    redact_for_seat,
    verify_log,
)
from canasta_net.table.local import bot_identity, recorded_match

WRITER_FIELDS = frozenset({"seq", "prev", "kind", "priv", "format", "time"})
SIZE_GOAL = 300_000
RATIO_GOAL = 1.6


def record_match(variant: str, seed: int) -> tuple[bytes, int]:
    """A full match between greedy bots, recorded; its log and the number of hands."""
    buf = io.BytesIO()
    match = recorded_match(preset(variant), buf, seed=seed, bot_kinds=("greedy",))
    match.play()
    return buf.getvalue(), match.host.match.hands_played


def best_time(run: Callable[[], object], repeat: int) -> float:
    """The fastest of ``repeat`` runs, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


# --------------------------------------------------------------------------- writing


def write_rate(
    log: bytes, seed: int, count: int, fsync: bool, directory: Path | None
) -> dict[str, Any]:
    """Append ``count`` records (the match's records again and again) to a new file."""
    records = list(iter_records(log))
    header = {k: v for k, v in records[0].fields.items() if k not in WRITER_FIELDS}
    items = [
        (r.kind, {k: v for k, v in r.fields.items() if k not in WRITER_FIELDS}, r.private)
        for r in records[1:]
    ]
    identity = bot_identity(seed, header["host"])
    with tempfile.TemporaryDirectory(dir=directory) as where:
        path = Path(where) / "bench.cnlog"
        with open_log_for_writing(path) as file:
            writer = LogWriter(file, identity, fsync=fsync)
            writer.write_header(header)
            start = time.perf_counter()
            for i in range(count):
                kind, fields, private = items[i % len(items)]
                writer.append(kind, fields, private)
            seconds = time.perf_counter() - start
        size = path.stat().st_size
    return {
        "fsync": fsync,
        "records": count,
        "seconds": round(seconds, 4),
        "records_per_second": round(count / seconds, 1),
        "bytes_written": size,
    }


# --------------------------------------------------------------------------- verifying


def signature_jobs(
    log: bytes,
) -> tuple[
    list[tuple[Ed25519PublicKey, bytes, bytes]], list[tuple[Ed25519PublicKey, bytes, bytes]]
]:
    """(key, signature, signed bytes) for every host and author signature, and separately every
    checkpoint signature, with keys built once and signing inputs assembled in advance."""
    records = list(iter_records(log))
    header = records[0].fields
    keys = [Ed25519PublicKey.from_public_bytes(seat["key"]) for seat in header["seats"]]
    host = keys[header["host"]]
    main: list[tuple[Ed25519PublicKey, bytes, bytes]] = []
    checkpoints: list[tuple[Ed25519PublicKey, bytes, bytes]] = []
    for record in records:
        main.append((host, record.host_sig, signing_input("log-record", record.body)))
        if record.action is not None:
            author = keys[record.action["seat"]]
            act, asig = record.fields["act"], record.fields["asig"]
            main.append((author, asig, signing_input("seat-action", act)))
        if record.checkpoint is not None:
            for seat, sig in record.fields["sigs"].items():
                checkpoints.append(
                    (keys[seat], sig, signing_input("checkpoint", record.fields["msg"]))
                )
    return main, checkpoints


def bare_verify(jobs: list[tuple[Ed25519PublicKey, bytes, bytes]]) -> None:
    for key, signature, data in jobs:
        key.verify(signature, data)


def verify_rate(logs: list[bytes], repeat: int) -> dict[str, Any]:
    records = sum(verify_log(log).records for log in logs)
    jobs = [signature_jobs(log) for log in logs]
    main = [job for pair in jobs for job in pair[0]]
    checkpoints = [job for pair in jobs for job in pair[1]]

    def run_verify_log() -> None:
        for log in logs:
            verify_log(log)

    verify_seconds = best_time(run_verify_log, repeat)
    bare_seconds = best_time(lambda: bare_verify(main), repeat)
    checkpoint_seconds = best_time(lambda: bare_verify(checkpoints), repeat)
    ratio = verify_seconds / bare_seconds
    return {
        "logs": len(logs),
        "records": records,
        "host_and_author_signatures": len(main),
        "checkpoint_signatures": len(checkpoints),
        "repeat": repeat,
        "verify_log_seconds": round(verify_seconds, 4),
        "verify_log_records_per_second": round(records / verify_seconds, 1),
        "bare_ed25519_seconds": round(bare_seconds, 4),
        "bare_ed25519_records_per_second": round(records / bare_seconds, 1),
        "bare_ed25519_signatures_per_second": round(len(main) / bare_seconds, 1),
        "ratio": round(ratio, 3),
        "ratio_counting_checkpoint_signatures": round(
            verify_seconds / (bare_seconds + checkpoint_seconds), 3
        ),
        "goal_ratio": RATIO_GOAL,
        "meets_goal": ratio <= RATIO_GOAL,
    }


# --------------------------------------------------------------------------- sizes


def record_sizes(logs: list[bytes]) -> dict[str, Any]:
    """Mean stored bytes per kind: the host's copy, and seat 1's redacted copy."""
    host: defaultdict[str, list[int]] = defaultdict(list)
    seat: defaultdict[str, list[int]] = defaultdict(list)
    body: defaultdict[str, list[int]] = defaultdict(list)
    for log in logs:
        record: StoredRecord
        for record in iter_records(log):
            host[record.kind].append(record.size)
            seat[record.kind].append(len(redact_for_seat(record, 1)))
            body[record.kind].append(len(record.body))
    return {
        "action_mean_bytes": round(statistics.fmean(host["action"]), 1),
        "action_mean_bytes_seat_copy": round(statistics.fmean(seat["action"]), 1),
        "action_mean_body_bytes": round(statistics.fmean(body["action"]), 1),
        "per_kind_mean_bytes": {k: round(statistics.fmean(v), 1) for k, v in sorted(host.items())},
        "per_kind_count": {k: len(v) for k, v in sorted(host.items())},
    }


def match_sizes(logs: list[tuple[int, bytes, int]]) -> dict[str, Any]:
    sizes = [len(log) for _, log, _ in logs]
    seat_sizes = [sum(len(redact_for_seat(r, 1)) for r in iter_records(log)) for _, log, _ in logs]
    return {
        "variant": "classic",
        "bots": "greedy",
        "seeds": [seed for seed, _, _ in logs],
        "hands": [hands for _, _, hands in logs],
        "bytes": sizes,
        "min_bytes": min(sizes),
        "mean_bytes": round(statistics.fmean(sizes), 1),
        "max_bytes": max(sizes),
        "mean_bytes_per_hand": round(sum(sizes) / sum(h for _, _, h in logs), 1),
        "seat_copy_mean_bytes": round(statistics.fmean(seat_sizes), 1),
        "goal_bytes": SIZE_GOAL,
        "meets_goal": max(sizes) < SIZE_GOAL,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=8, help="full classic matches to record")
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--write-records", type=int, default=20000, help="records, fsync off")
    parser.add_argument("--fsync-records", type=int, default=300, help="records, fsync on")
    parser.add_argument("--repeat", type=int, default=5, help="verification runs (best is kept)")
    parser.add_argument("--dir", type=Path, help="where to write (default: the temp directory)")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()

    start = time.perf_counter()
    matches = []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        log, hands = record_match("classic", seed)
        matches.append((seed, log, hands))
    record_seconds = time.perf_counter() - start
    logs = [log for _, log, _ in matches]
    print(f"recorded {len(logs)} matches in {record_seconds:.2f}s", file=sys.stderr)

    first_seed, first_log, _ = matches[0]
    write = [
        write_rate(first_log, first_seed, args.write_records, False, args.dir),
        write_rate(first_log, first_seed, args.fsync_records, True, args.dir),
    ]
    print(f"write: {write}", file=sys.stderr)
    verify = verify_rate(logs, args.repeat)
    print(f"verify: {verify}", file=sys.stderr)

    data = {
        "benchmark": "event-log",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cryptography": version("cryptography"),
        "msgpack": version("msgpack"),
        "write": write,
        "verify": verify,
        "records": record_sizes(logs),
        "match_logs": match_sizes(matches),
    }
    text = json.dumps(data, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
