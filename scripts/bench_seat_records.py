#!/usr/bin/env python3
"""Benchmark: a seat's record path, deterministic, in one process (no sockets, no other seats).

Records ``--matches`` all-bot matches (``table.local.recorded_match``, seeds ``--seed``,
``--seed`` + 1, ...; ``--hands`` hands each), and feeds each seat's redacted copy of each log
through a fresh ``PeerSession`` exactly as the host's frames would come: a ``welcome``, then every
record as a ``record`` frame (encoded and decoded by ``net/wire.py``), handled by
``PeerSession.handle``. With ``--slices`` the session checks a hand's held records in slices, as
over a connection (``PeerProtocol``), and the script calls ``work`` in place of the reactor.

Prints JSON: ``records`` fed, Python ``calls`` (cProfile, one pass) and ``calls_per_record``;
``cpu_us_per_record`` (the best of ``--repeat`` passes, process CPU time); and the CPU time of the
longest single step (a frame's handling, or a slice: one reactor turn of a real seat), best and
worst over the passes, in ms. The same logs each run: the figures compare two versions of the code
on the same machine (the Ed25519 verifications, two a record, are most of the CPU).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import sys
import time
from pathlib import Path

from canasta_net.canasta.rules import preset
from canasta_net.identity import Identity
from canasta_net.log import iter_records
from canasta_net.log.redact import redact_for_seat
from canasta_net.net import peer, wire
from canasta_net.net.peer import PeerSession
from canasta_net.table.local import recorded_match

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from seat_feed import Quiet, welcome_for  # shared with the tests

# None in code from before the slices (to compare with): it checks a hand's records at once
CHECK_SLICE: float | None = getattr(peer, "CHECK_SLICE", None)


def seat_frames(log: bytes, seat: int) -> list[bytes]:
    """The frames a host sends ``seat`` for ``log``: a welcome, then the seat's copy of each
    record."""
    records = list(iter_records(log))
    frames = [wire.encode(welcome_for(records[0].fields, seat, "bench"))]
    for record in records:
        data = redact_for_seat(record, seat)
        frames.append(wire.encode({"t": "record", "seq": record.index, "data": data}))
    return frames


def follow_all(copies: list[list[bytes]], slices: bool) -> float:
    """Feed every copy to its own seat session; the CPU time of the longest step (seconds)."""
    longest = 0.0
    for frames in copies:
        session = PeerSession(Identity.generate(), Quiet(), bot=True)
        if slices and CHECK_SLICE is not None:
            session.spread_checks(CHECK_SLICE)  # as a connection does (``PeerProtocol``)
        for frame in frames:
            start = time.thread_time()
            session.handle(wire.decode(frame), lambda message: None)
            longest = max(longest, time.thread_time() - start)
            while getattr(session, "busy", False):  # (an older session has no slices)
                start = time.thread_time()
                session.work()
                longest = max(longest, time.thread_time() - start)
        if session.problem is not None:
            raise SystemExit(f"the seat refused its copy: {session.problem}")
    return longest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=3)
    parser.add_argument("--hands", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--variant", default="classic")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--slices", action="store_true", help="check held records in slices")
    parser.add_argument("--profile", help="write the profiled pass's raw data here")
    args = parser.parse_args()
    if args.slices and CHECK_SLICE is None:
        parser.error("this version of the code checks a hand's records at once (no --slices)")
    copies: list[list[bytes]] = []
    for n in range(args.matches):
        log = io.BytesIO()
        recorded_match(preset(args.variant), log, seed=args.seed + n).play(max_hands=args.hands)
        players = len(next(iter_records(log.getvalue())).fields["seats"])
        copies += [seat_frames(log.getvalue(), seat) for seat in range(players)]
    records = sum(len(frames) - 1 for frames in copies)
    profile = cProfile.Profile()
    profile.runcall(follow_all, copies, args.slices)
    if args.profile:
        profile.dump_stats(args.profile)
    calls = pstats.Stats(profile).total_calls  # type: ignore[attr-defined]
    cpu, longest = [], []
    for _ in range(args.repeat):
        start = time.process_time()
        longest.append(follow_all(copies, args.slices))
        cpu.append(time.process_time() - start)
    result = {
        "seats": len(copies),
        "records": records,
        "slices": args.slices,
        "calls": calls,
        "calls_per_record": round(calls / records, 1),
        "cpu_us_per_record": round(min(cpu) / records * 1e6, 1),
        "longest_step_ms": {
            "best": round(min(longest) * 1e3, 2),
            "worst": round(max(longest) * 1e3, 2),
        },
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
