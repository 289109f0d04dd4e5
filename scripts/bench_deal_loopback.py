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
- ``deal_cpu_ms``: the deal's CPU in every process, from the log's header (the hand begins) to
  the ``deal`` record: ``host`` (this process), ``seats`` (each seat process, from ``/proc``, to
  10 ms) and their ``total``, the figure that a CPU-bound deal on shared cores follows.
- ``seat_process_cpu_ms``: each seat process's whole CPU (start-up, the deal and one hand of
  play), from ``wait4``: an upper bound for a seat's share of the deal.
- ``hops``: the deal hop by hop, one entry per seat message the deal waited for (in order), from
  the host's timing hook (``canasta_net.timing``): ``seats_ms`` (from the host sending the
  previous records until this message reached the host: loopback both ways and the seat's own
  work; the seats are other processes, so the two are not told apart here), ``host_ms`` (the
  host's handling: checks, the hand's work, signing; ``host.handle``) and ``disk_ms`` (from the
  end of that handling until its records went out: the log's sync, on the writer thread, and the
  way back to the reactor). ``hop_totals_ms`` sums each column over the deal (seats that answer
  at the same time overlap, so the sums can exceed ``deal_ms``); ``syncs`` counts the writer's
  syncs (``log.sync``), the records they carried and their time.

``--fsync on`` syncs the host's log as a real host does (the default is off, as in earlier runs).
Goal (issue 16): a blind deal of 108 cards to 4 seats under 200 ms, in every run
(``meets_goal``). The in-process figures (every seat in turn, CPU per seat) are
``scripts/bench_deal.py``'s. ``--modes blind,blind-v2`` measures the blind deal's version 2
(``docs/blind-proofs.md``) beside version 1: there a stage hop's ``seats_ms`` holds the seat's
proof and its log follower's check of the previous proofs, ``host_ms`` the host's check of the
proof (``scripts/bench_blind_proofs.py`` gives proving and checking apart, per stage). For
``blind-v2`` each run also has ``stage_timeline`` (each stage output's arrival at the host,
the end of the host's check, its record's sending) and ``stage_breakdown``: the stage phase,
stage by stage, split into what lay on its critical path: ``proving_ms`` (the seat's proof,
calibrated in this process), ``verifying_ms`` (what the checks of its input, the seat's own
and the host's, which run beside the proof since wire version 3's ``ahead``, took beyond the
proof) and ``transport_ms`` (the rest: loopback, sync, prompts, waiting for a core), with
totals adding up to the phase's wall time (``stages_ms``), printed to standard error for each
run too (``stage_breakdown``'s docstring gives the model);
``goal_v2_ms`` is issue 19's goal (1 s for 108 cards, 1.5 s for 162). Every run has
``audit_ms``: ``replay_log`` of the host's one-hand log, every signature and proof checked
again. ``--callgrind DIR`` runs seat 1 under valgrind's callgrind with collection switched on
(``callgrind_control``) as the hand's header is journaled and off at its deal record: the seat's
deal counted by instructions, deterministic on a loaded machine (``callgrind_annotate``; one
deal per file, so use it with ``--repeat 1``). Prints JSON (and writes it with --out). Talks
to 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgpack
from twisted.internet import defer, task

from canasta_net.canasta.rules import preset
from canasta_net.identity import Identity
from canasta_net.log import RecordInfo
from canasta_net.net.host import ServiceEvents, TableConfig
from canasta_net.table.host import HostTable
from canasta_net.ui.app import start_host

GOAL_MS = 200.0


class HopTiming:
    """The host's timing hook for one deal: each handled seat message and each sync."""

    def __init__(self) -> None:
        self.handled: list[tuple[str, float, float]] = []  # message type, start, end
        # a stage act's seat, its start and end (the host's check): ``stage_breakdown``
        self.stages: list[tuple[int, float, float]] = []
        self.syncs: list[tuple[int, float, float]] = []  # records, start, end
        self._lock = threading.Lock()  # ``log.sync`` is reported from the writer thread

    @contextlib.contextmanager
    def _timed(self, done: Callable[[float, float], None]) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            done(start, time.perf_counter())

    def span(self, name: str, **details: Any) -> contextlib.AbstractContextManager[object]:
        if name == "host.handle":
            kind = str(details.get("t"))
            act = details.get("act")
            seat = -1
            if kind == "act" and isinstance(act, bytes):  # the signed message's own type
                with contextlib.suppress(Exception):
                    fields = msgpack.unpackb(act, raw=False)
                    kind = str(fields.get("type", kind))
                    seat = int(fields.get("seat", -1))

            def handled(a: float, b: float) -> None:
                self.handled.append((kind, a, b))
                if kind == "stage":
                    self.stages.append((seat, a, b))

            return self._timed(handled)
        if name == "log.sync":
            count = int(details.get("records", 1))

            def synced(a: float, b: float) -> None:
                with self._lock:
                    self.syncs.append((count, a, b))

            return self._timed(synced)
        return contextlib.nullcontext()

    def mark(self, name: str, **details: Any) -> None:
        return None


def hops(
    sent: list[tuple[str, float]], timing: HopTiming, start: float, end: float
) -> list[dict[str, Any]]:
    """The deal's seat messages in order: seats and loopback, host, disk (see the docstring)."""
    out = []
    for kind, a, b in timing.handled:
        if not start - 0.5 <= a <= end or kind in ("hello", "chat"):
            continue
        before = [t for _, t in sent if t <= a]
        # its records: those that went out once its handling began (unsynced records go out
        # within the handling itself: then nothing is left for the disk)
        after = [t for _, t in sent if t >= a]
        if not before or not after:
            continue
        out.append(
            {
                "message": kind,
                "seats_ms": round(1000 * (a - before[-1]), 2),
                "host_ms": round(1000 * (b - a), 2),
                "disk_ms": round(1000 * max(0.0, after[0] - b), 2),
            }
        )
    return out


def _seat(
    port: int, fingerprint: str, work: Path, name: str, wrapper: list[str] | None = None
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            *(wrapper or []),
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


def _callgrind(out: Path) -> list[str]:
    """Run a seat under callgrind with collection off until the deal begins (``_count``)."""
    return [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={out}",
    ]


def _count(pid: int, on: bool) -> None:
    """Switch a callgrind seat's collection on (the hand's header) or off (its deal record)."""
    command = ["callgrind_control", "-i", "on" if on else "off", str(pid)]
    subprocess.run(command, check=False, capture_output=True)  # stdout is the JSON's


async def one_deal(
    reactor: Any, mode: str, variant: str, work: Path, fsync: bool, callgrind: Path | None = None
) -> dict[str, Any]:
    marks: dict[str, tuple[float, float]] = {}
    trace: list[tuple[str, float]] = []
    finished: defer.Deferred[None] = defer.Deferred()

    sent: list[tuple[str, float]] = []  # each record as it goes out (after its sync)
    timing = HopTiming()

    seat_pids: list[int] = []
    # every process's CPU (this one, each seat's) when the hand's header went out and at the deal
    cpu_marks: dict[str, list[float]] = {}

    def on_record(info: RecordInfo) -> None:
        now = (time.perf_counter(), time.process_time())
        sent.append((info.kind, now[0]))
        if "deal" not in marks:
            trace.append((info.kind, now[0]))
        if info.kind in ("header", "deal") and info.kind not in cpu_marks:
            cpu_marks[info.kind] = [now[1], *(process_cpu(pid) for pid in seat_pids)]
            if callgrind is not None:
                _count(seat_pids[0], info.kind == "header")
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
        fsync=fsync,
        timing=timing,
    )
    _, port = hosted.address
    seats = [
        _seat(
            port,
            identity.fingerprint,
            work,
            f"{mode}-seat{s}",
            _callgrind(callgrind / f"{mode}-seat1.callgrind") if callgrind and s == 1 else None,
        )
        for s in range(1, rules.players)
    ]
    seat_pids.extend(proc.pid for proc in seats)
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
        # the host leaves as ``canasta host`` does (its writer thread drains, the byes go out):
        # a seat killed after a hand that never finished then writes nothing to a closed log
        await hosted.close("the benchmark's run is over")
        hosted.log_file.close()
    (start_wall, start_cpu), (deal_wall, deal_cpu) = marks["start"], marks["deal"]
    if os.environ.get("BENCH_TRACE"):
        steps = [(k, round(1000 * (t - start_wall), 1)) for k, t in trace]
        print(steps, file=sys.stderr)
    # the hop that began the deal (its first message) counts from the previous records' sending
    deal_hops = hops(sent, timing, start_wall, deal_wall)
    in_deal = [s for s in timing.syncs if start_wall - 0.5 <= s[1] <= deal_wall]
    timeline = stage_timeline(sent, timing, start_wall, deal_wall, rules.players)
    cpu_spent = [
        1000 * (b - a) for a, b in zip(cpu_marks["header"], cpu_marks["deal"], strict=True)
    ]
    return {
        "stage_timeline": timeline,
        "deal_ms": round(1000 * (deal_wall - start_wall), 1),
        "host_cpu_ms": round(1000 * (deal_cpu - start_cpu), 1),
        "deal_cpu_ms": {
            "total": round(sum(cpu_spent), 1),
            "host": round(cpu_spent[0], 1),
            "seats": [round(c, 1) for c in cpu_spent[1:]],
        },
        "seat_process_cpu_ms": cpu,
        "hop_totals_ms": {
            column: round(sum(h[column] for h in deal_hops), 1)
            for column in ("seats_ms", "host_ms", "disk_ms")
        },
        "syncs": {
            "count": len(in_deal),
            "records": sum(s[0] for s in in_deal),
            "ms": round(1000 * sum(s[2] - s[1] for s in in_deal), 1),
        },
        "hops": deal_hops,
    }


def process_cpu(pid: int) -> float:
    """A process's CPU so far (user + system, every thread, in seconds; Linux's ``/proc``, in
    clock ticks: 10 ms)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proof_times(variant: str, repeat: int = 3) -> dict[str, float]:
    """Version 2's work per stage in this process, while nothing else of the benchmark runs
    (wall time, median of ``repeat`` deals): a seat's stage with its proof and one check of it,
    stage 1 and stage 2 apart."""
    from canasta_net.deal.blind.proofs import stages
    from canasta_net.deal.blind.schedule import labels_for_rules

    labels = tuple(labels_for_rules(preset(variant)))
    table, m = b"bench-calibrate!", len(labels)
    seats = preset(variant).players
    times: dict[str, list[float]] = {"prove_1": [], "check_1": [], "prove_2": [], "check_2": []}
    for hand in range(repeat):
        secrets = [
            stages.StageSecrets.derive(table, hand, s, os.urandom(32), m) for s in range(seats)
        ]
        deck = list(stages.card_points(labels))
        for stage in (1, 2):
            make = stages.stage1 if stage == 1 else stages.stage2
            check = stages.check_stage1 if stage == 1 else stages.check_stage2
            for s, mine in enumerate(secrets):
                a = time.perf_counter()
                out, proof = make(mine, deck)
                b = time.perf_counter()
                check(table, hand, s, deck, out, mine.public_keys(), proof)
                c = time.perf_counter()
                times[f"prove_{stage}"].append(1000 * (b - a))
                times[f"check_{stage}"].append(1000 * (c - b))
                deck = out
    return {k: round(statistics.median(v), 1) for k, v in times.items()}


def stage_timeline(
    sent: list[tuple[str, float]], timing: HopTiming, start: float, end: float, seats: int
) -> list[dict[str, Any]] | None:
    """The deal's stage outputs in order (ms from the deal's start): each one's ``seat`` and
    ``stage``; for a remote seat's, when it reached the host (``arrived_ms``: the host passes it
    on as ``ahead`` then, and the next seat starts its own stage on it) and when the host's
    check of it ended (``checked_ms``); for every one, when its record went out (``sent_ms``);
    and, first, when the last announcement's record went out (``announced_ms``: seat 0's stage 1
    may start). None if the deal's records are not all there."""
    records = [t for kind, t in sent if start - 0.5 <= t <= end]
    kinds = [kind for kind, t in sent if start - 0.5 <= t <= end]
    stage_sent = [t for kind, t in zip(kinds, records, strict=True) if kind == "stage"]
    announced = [t for kind, t in zip(kinds, records, strict=True) if kind == "announce"]
    remote = [(s, a, b) for s, a, b in timing.stages if start - 0.5 <= a <= end]
    if len(stage_sent) != 2 * seats or not announced:
        return None
    rows: list[dict[str, Any]] = [{"announced_ms": round(1000 * (announced[-1] - start), 2)}]
    for step, when in enumerate(stage_sent):
        seat = step % seats
        row: dict[str, Any] = {"stage": 1 + step // seats, "seat": seat}
        arrived = [(a, b) for s, a, b in remote if s == seat and a <= when]
        if arrived:  # a remote seat's: the last of its acts before this record went out
            a, b = arrived[-1]
            remote = [r for r in remote if r[1] > a]
            row |= {"arrived_ms": round(1000 * (a - start), 2)}
            row |= {"checked_ms": round(1000 * (b - start), 2)}
        row["sent_ms"] = round(1000 * (when - start), 2)
        rows.append(row)
    return rows


def stage_breakdown(
    timeline: list[dict[str, Any]], calibrated: dict[str, float], seats: int
) -> dict[str, Any]:
    """The stage phase of a version-2 deal, stage output by stage output, split into what lay on
    its critical path: ``proving_ms``, ``verifying_ms`` and ``transport_ms``.

    A stage's window runs from the moment its seat could start on its input to the moment its
    output could be used: from the previous output's arrival at the host (the host passes it on
    as ``ahead`` at once, and the seat starts its stage on it in a thread while it checks it),
    or, after a stage of the seat the host plays, from that stage's record going out (the seat
    starts on the record), until this output reached the host (a remote seat's) or its record
    went out (the host's seat's). Within it the seat proves (this process's calibrated time,
    ``proof_times``) beside the checks of its input: its own (calibrated; the host's seat has
    none of its own, the host's check is its check) and the host's (measured: its handling of
    the input, before it journals it; none for the host's own seat's output, proved here). So
    ``proving_ms`` is the proof, ``verifying_ms`` what the longer of those checks took beyond the
    proof, and ``transport_ms`` the rest: loopback, the sync, the prompt, and waiting for a core
    (the other seats check the same output meanwhile, on the same two cores), which also makes
    the real proofs and checks longer than calibrated. Seat 0's stage 1 (the first row) starts
    at its own announcement, on the initial deck, while the others announce: its window, from
    the last announcement, holds only what is left of its proof then. The last row is the
    host's check of the last stage output and its record going out. The rows add up to the
    stage phase's wall time (``stages_ms``)."""
    rows = []
    ready = timeline[0]["announced_ms"]
    previous: dict[str, Any] | None = None
    for row in timeline[1:]:
        stage, seat = row["stage"], row["seat"]
        done = row.get("arrived_ms", row["sent_ms"])
        window = max(0.0, done - ready)
        prove = calibrated[f"prove_{stage}"]
        host_check = 0.0
        if previous is not None and "arrived_ms" in previous:
            host_check = previous["checked_ms"] - previous["arrived_ms"]
        own_check = 0.0
        if previous is not None and "arrived_ms" in row:  # a remote seat checks its input
            own_check = calibrated[f"check_{previous['stage']}"]
        proving = min(prove, window)
        verifying = min(window - proving, max(0.0, max(host_check, own_check) - prove))
        rows.append(
            {
                "stage": stage,
                "seat": seat,
                "window_ms": round(window, 1),
                "proving_ms": round(proving, 1),
                "verifying_ms": round(verifying, 1),
                "transport_ms": round(window - proving - verifying, 1),
            }
        )
        previous = row
        ready = done
    if previous is not None and "arrived_ms" in previous:  # the host checks the last output
        check = previous["checked_ms"] - previous["arrived_ms"]
        window = previous["sent_ms"] - previous["arrived_ms"]
        rows.append(
            {
                "stage": previous["stage"],
                "seat": "host's check",
                "window_ms": round(window, 1),
                "proving_ms": 0.0,
                "verifying_ms": round(min(check, window), 1),
                "transport_ms": round(max(0.0, window - check), 1),
            }
        )
    totals = {
        key: round(sum(r[key] for r in rows), 1)
        for key in ("proving_ms", "verifying_ms", "transport_ms")
    }
    return {"stages": rows, "totals": totals, "stages_ms": round(sum(totals.values()), 1)}


def audit_ms(path: Path) -> float:
    """Wall time of ``replay_log`` on a whole log (every signature and proof checked again)."""
    from canasta_net.log.replay import replay_log

    data = path.read_bytes()
    start = time.perf_counter()
    replay_log(data)
    return round(1000 * (time.perf_counter() - start), 1)


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    deals = [r["deal_ms"] for r in runs]
    return {
        "runs": runs,
        "deal_ms_best": min(deals),
        "deal_ms_worst": max(deals),
        "deal_ms_median": statistics.median(deals),
        "host_cpu_ms_median": statistics.median(r["host_cpu_ms"] for r in runs),
        "deal_cpu_ms_median": statistics.median(r["deal_cpu_ms"]["total"] for r in runs),
        "audit_ms_median": statistics.median(r["audit_ms"] for r in runs),
        "load_average": os.getloadavg(),
    }


async def run(reactor: Any, args: argparse.Namespace) -> None:
    result: dict[str, Any] = {"benchmark": "deal-loopback", "variant": args.variant}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in args.modes.split(","):
            runs = []
            for i in range(args.repeat):
                work = Path(tmp) / f"{mode}-{i}"
                work.mkdir()
                fsync = args.fsync == "on"
                runs.append(
                    await one_deal(reactor, mode, args.variant, work, fsync, args.callgrind)
                )
                runs[-1]["audit_ms"] = audit_ms(work / f"host-{mode}.cnlog")
                if mode == "blind-v2":
                    calibrated = proof_times(args.variant)
                    runs[-1]["proof_times_ms"] = calibrated
                    seats = preset(args.variant).players
                    timeline = runs[-1]["stage_timeline"]
                    if timeline is not None:
                        breakdown = stage_breakdown(timeline, calibrated, seats)
                        runs[-1]["stage_breakdown"] = breakdown
                hidden = ("hops", "stage_breakdown", "stage_timeline")
                brief = {k: v for k, v in runs[-1].items() if k not in hidden}
                print(f"{mode} run {i}: {brief}", file=sys.stderr)
                if "stage_breakdown" in runs[-1]:
                    totals = runs[-1]["stage_breakdown"]["totals"]
                    stages_ms = runs[-1]["stage_breakdown"]["stages_ms"]
                    print(f"{mode} run {i}: stages {stages_ms} ms: {totals}", file=sys.stderr)
            result[mode] = summary(runs)
    worst = max(r["deal_ms"] for r in result["blind"]["runs"]) if "blind" in result else None
    result |= {
        "fsync": args.fsync == "on",
        "goal_ms": GOAL_MS,
        "goal_v2_ms": 1000.0 if preset(args.variant).deck_size <= 108 else 1500.0,
        "meets_goal": None if worst is None else worst < GOAL_MS,  # in every run
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
    parser.add_argument(
        "--fsync", default="off", choices=["on", "off"], help="sync the host's log (as a host does)"
    )
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    parser.add_argument(
        "--callgrind",
        type=Path,
        help="run seat 1 under valgrind's callgrind, counting from the hand's header to its deal "
        "record, into DIR/MODE-seat1.callgrind (the wall figures are then meaningless)",
        metavar="DIR",
    )
    args = parser.parse_args()
    task.react(lambda reactor: defer.ensureDeferred(run(reactor, args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
