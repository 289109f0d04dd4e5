#!/usr/bin/env python3
"""Benchmark: dealing a hand over TLS on loopback, in both deal modes (issue 6).

The host (a ``TableService`` in this process, seat 0 played by its bot) and three seats, each a
separate ``canasta join --bot greedy`` process, all on 127.0.0.1. Each run plays one hand
(``max_hands=1``); the figures are taken from the host's records as they are journaled:

- ``deal_ms``: from the hand's first deal message (``commit`` or ``announce``) until the ``deal``
  record: every round trip of the deal over TLS loopback (blind: announcements, 2 × 4 sequential
  stage outputs, the sealed keys, the upcard's released keys and the red-three reports, each
  journaled before the next prompt).
- ``host_cpu_ms``: this process's CPU over the same span (the host and its bot seat 0).
- ``seat_process_cpu_ms``: each seat process's whole CPU (start-up, the deal and one hand of
  play), from ``wait4``: an upper bound for a seat's share of the deal.

Goal (issue 6): a blind deal of 108 cards to 4 seats under 250 ms. The in-process figures (every
seat in turn, CPU per seat) are ``scripts/bench_deal.py``'s. Prints JSON (and writes it with
--out). Talks to 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from twisted.internet import defer, task

from canasta_net.canasta.rules import preset
from canasta_net.identity import Identity
from canasta_net.log import RecordInfo
from canasta_net.net.host import ServiceEvents, TableConfig
from canasta_net.table.host import HostTable
from canasta_net.ui.app import start_host

GOAL_MS = 250.0


def _seat(port: int, fingerprint: str, work: Path, name: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "canasta_net",
            "join",
            f"127.0.0.1:{port}",
            "--fingerprint",
            fingerprint,
            "--bot",
            "greedy",
            "--name",
            name,
            "--identity",
            str(work / f"{name}.pem"),
            "--known-hosts",
            str(work / "known_hosts"),
            "--log",
            str(work / f"{name}.cnlog"),
        ],
        stdout=(work / f"{name}.out").open("wb"),
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )


async def one_deal(reactor: Any, mode: str, variant: str, work: Path) -> dict[str, Any]:
    marks: dict[str, tuple[float, float]] = {}
    trace: list[tuple[str, float]] = []
    finished: defer.Deferred[None] = defer.Deferred()

    def on_record(info: RecordInfo) -> None:
        now = (time.perf_counter(), time.process_time())
        if "deal" not in marks:
            trace.append((info.kind, now[0]))
        if info.kind in ("commit", "announce") and "start" not in marks:
            marks["start"] = now
        if info.kind == "deal" and "deal" not in marks:
            marks["deal"] = now

    def on_finished(_: HostTable) -> None:
        if not finished.called:
            finished.callback(None)

    rules = preset(variant)
    config = TableConfig.simple(
        "bench", rules, rules.players, host_plays=False, max_hands=1, deal=mode, hold_seconds=30
    )
    identity = Identity.generate()
    hosted = await start_host(
        reactor,
        config,
        identity,
        bind="127.0.0.1",
        port=0,
        log_path=work / f"host-{mode}.cnlog",
        events=ServiceEvents(on_record=on_record, on_finished=on_finished),
        fsync=False,
    )
    _, port = hosted.address
    seats = [
        _seat(port, identity.fingerprint, work, f"{mode}-seat{s}") for s in range(1, rules.players)
    ]
    try:
        await defer.gatherResults([finished]).addTimeout(120, reactor)
        cpu = []
        for proc in seats:  # each seat exits once the host's "bye" reaches it
            while True:
                pid, _, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                await task.deferLater(reactor, 0.02, lambda: None)
            proc.returncode = 0
            cpu.append(round(1000 * (usage.ru_utime + usage.ru_stime), 1))
    finally:
        for proc in seats:
            if proc.poll() is None:
                proc.kill()
        await hosted.port.stopListening()
        hosted.log_file.close()
    (start_wall, start_cpu), (deal_wall, deal_cpu) = marks["start"], marks["deal"]
    if os.environ.get("BENCH_TRACE"):
        steps = [(k, round(1000 * (t - start_wall), 1)) for k, t in trace]
        print(steps, file=sys.stderr)
    return {
        "deal_ms": round(1000 * (deal_wall - start_wall), 1),
        "host_cpu_ms": round(1000 * (deal_cpu - start_cpu), 1),
        "seat_process_cpu_ms": cpu,
    }


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    deals = [r["deal_ms"] for r in runs]
    return {
        "runs": runs,
        "deal_ms_best": min(deals),
        "deal_ms_median": statistics.median(deals),
        "host_cpu_ms_median": statistics.median(r["host_cpu_ms"] for r in runs),
    }


async def run(reactor: Any, args: argparse.Namespace) -> None:
    result: dict[str, Any] = {"benchmark": "deal-loopback", "variant": args.variant}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in args.modes.split(","):
            runs = []
            for i in range(args.repeat):
                work = Path(tmp) / f"{mode}-{i}"
                work.mkdir()
                runs.append(await one_deal(reactor, mode, args.variant, work))
                print(f"{mode} run {i}: {runs[-1]}", file=sys.stderr)
            result[mode] = summary(runs)
    best = result["blind"]["deal_ms_best"] if "blind" in result else None
    result |= {
        "goal_ms": GOAL_MS,
        "meets_goal": None if best is None else best < GOAL_MS,
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3, help="hands dealt in each mode")
    parser.add_argument("--variant", default="classic", help="a Canasta preset (4 seats)")
    parser.add_argument("--modes", default="commit-reveal,blind", help="deal modes to measure")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    task.react(lambda reactor: defer.ensureDeferred(run(reactor, args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
