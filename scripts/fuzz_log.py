#!/usr/bin/env python3
"""Fuzz ``canasta-replay audit`` with damaged logs: can damage pass as a crash? (issue 13)

Builds a few real logs through the table protocol (all-bot tables, ``classic-2p``: one hand dealt
by commit-reveal, the start of a hand dealt blind, and a whole match to 500 points, to its
``match-end``), then makes
mutants of them: bit flips, inserted and deleted bytes, huge length prefixes at record starts and
inside records, partial records appended at the end, and truncations at every kind of point. Each
mutant is audited by ``replay.audit.audit_source``, the function ``canasta-replay audit`` runs.

Each outcome is one of: ``valid`` (exit 0), ``incomplete`` (exit 0, the log stops at a record
boundary), ``truncated`` (exit 0, the log ends inside a record, read as a crash), ``invalid``
(exit 1), ``unreadable`` (exit 2), or ``crash`` (the audit raised: a bug).

The rule checked: no mutant audits with exit 0 unless it is a true truncation, that is a prefix of
the original file (cut inside one record, so its tail is within one record's size, or at a record
boundary, which no file can show). One kind of exit 0 is counted apart: a few bytes appended that
stop before the first whole field of a record's body (``93 c5 01``), which are byte for byte what
a crash leaves while writing the next record, so no reader can tell them from one. Every other
exit 0 is a violation and is listed; so is a verdict with Python's error text in it, an audit
that raises, and one that takes over 5 seconds.

    python scripts/fuzz_log.py --count 4000 --seed 1 [--json out.json]
"""

from __future__ import annotations

import argparse
import io
import json
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from canasta_net.canasta.rules import preset
from canasta_net.log import MAX_RECORD_SIZE, iter_records
from canasta_net.log.scan import BadBytes, check_tail, whole_entries
from canasta_net.table.local import recorded_match
from replay.audit import AuditReport, audit_source

#: Python's own words, which must never reach a verdict (issue 13).
PYTHON_TEXT = re.compile(
    r"Error\b|Exception|Traceback|unhashable|NoneType|'dict'|'list'|'bytes'|\bobject\b"
    r"|codec can't|:\.$|: \.|^\W*$"
)
SLOW_SECONDS = 5.0
OUTCOMES = ("valid", "incomplete", "truncated", "invalid", "unreadable", "crash")


@dataclass(frozen=True)
class BaseLog:
    """A real log to damage, with where each of its records lies."""

    name: str
    data: bytes
    records: tuple[tuple[int, int], ...]  # (offset, size) of each record


@dataclass(frozen=True)
class Mutant:
    base: str
    kind: str
    detail: str
    data: bytes
    is_prefix: bool  # a true truncation: a prefix of the original file
    crash_like: bool  # bytes appended that a crash could leave: nothing whole in them to check


def crash_like(original: bytes, data: bytes) -> bool:
    """True if ``data`` is ``original`` and a few more bytes that begin a record so early that
    nothing in them can be checked (``93 c5 01``: the array, the body's length, no whole field
    of the body): exactly what a crash while writing the next record leaves."""
    if len(data) <= len(original) or not data.startswith(original):
        return False
    try:
        parts = check_tail(data[len(original) :], MAX_RECORD_SIZE)
    except BadBytes:
        return False
    if parts.body is not None:
        return False
    return parts.body_prefix is None or not list(whole_entries(parts.body_prefix[1]))


def make_log(
    deal: str, hands: int | None, keep: int | None = None, seed: int = 3, target: int = 5000
) -> bytes:
    """A real all-bot ``classic-2p`` log; ``keep``: only its first records; ``target``: the
    match's target score (500 ends it after a hand, with a ``match-end``)."""
    buffer = io.BytesIO()
    rules = replace(preset("classic-2p"), target=target)
    recorded_match(rules, buffer, seed=seed, deal=deal).play(max_hands=hands)
    data = buffer.getvalue()
    if keep is not None:
        records = list(iter_records(data))[:keep]
        data = data[: records[-1].offset + records[-1].size]
    return data


def base_log(name: str, data: bytes) -> BaseLog:
    return BaseLog(name, data, tuple((r.offset, r.size) for r in iter_records(data)))


def base_logs(quick: bool = False) -> list[BaseLog]:
    """The logs to damage: small ones for a quick run (a test), else three of 120 records or so,
    each about 40 KB: one hand dealt by commit-reveal (it ends at the hand's checkpoint), the
    start of a blind deal's hand, and a whole match to 500 points (it ends with ``match-end``)."""
    if quick:
        return [
            base_log("commit-reveal, first 25 records", make_log("commit-reveal", 1, keep=25)),
            base_log("blind, first 16 records", make_log("blind", 1, keep=16)),
        ]
    return [
        base_log("commit-reveal, one hand", make_log("commit-reveal", 1)),
        base_log("blind, first 100 records", make_log("blind", 1, keep=100)),
        base_log("commit-reveal, match to 500", make_log("commit-reveal", None, target=500)),
    ]


# --------------------------------------------------------------------------- mutations

Mutation = Callable[[random.Random, BaseLog], tuple[str, bytes]]


def _huge(rng: random.Random) -> int:
    """A 32-bit length: mostly past the 1 MiB record limit, some just under it."""
    return rng.choice([rng.randrange(1 << 20, 1 << 32), rng.randrange(1 << 16, 1 << 20)])


def _length_prefix(rng: random.Random) -> bytes:
    """A 32-bit bin, str, array or map header with a large length."""
    type_byte = rng.choice([0xC6, 0xDB, 0xDD, 0xDF])
    return bytes([type_byte]) + _huge(rng).to_bytes(4, "big")


def bit_flip(rng: random.Random, log: BaseLog) -> tuple[str, bytes]:
    pos, bit = rng.randrange(len(log.data)), rng.randrange(8)
    data = bytearray(log.data)
    data[pos] ^= 1 << bit
    return f"bit {bit} of byte {pos}", bytes(data)


def insert_byte(rng: random.Random, log: BaseLog) -> tuple[str, bytes]:
    pos = rng.randrange(len(log.data) + 1)
    value = rng.randrange(256)
    return f"0x{value:02x} inserted at {pos}", log.data[:pos] + bytes([value]) + log.data[pos:]


def delete_byte(rng: random.Random, log: BaseLog) -> tuple[str, bytes]:
    pos = rng.randrange(len(log.data))
    return f"byte {pos} deleted", log.data[:pos] + log.data[pos + 1 :]


def huge_length_at_record(rng: random.Random, log: BaseLog) -> tuple[str, bytes]:
    """A huge length prefix where a record, or its body bin, begins."""
    number = rng.randrange(1, len(log.records))
    offset, _ = log.records[number]
    data = log.data
    prefix = _length_prefix(rng)
    where = rng.choice(["replaces the array header", "replaces the body header", "inserted"])
    if where == "inserted":
        mutated = data[:offset] + prefix + data[offset:]
    elif where == "replaces the array header":
        mutated = data[:offset] + prefix + data[offset + 1 :]
    else:  # the body bin header after a fixarray: c4 L, c5 LL or c6 LLLL
        body = offset + 1
        size = {0xC4: 2, 0xC5: 3, 0xC6: 5}.get(data[body], 1)
        mutated = data[:body] + bytes([0xC6]) + _huge(rng).to_bytes(4, "big") + data[body + size :]
    return f"{prefix[:1].hex()} length {where} at record {number}", mutated


def huge_length_inside(rng: random.Random, log: BaseLog) -> tuple[str, bytes]:
    number = rng.randrange(1, len(log.records))
    offset, size = log.records[number]
    pos = offset + rng.randrange(1, size)
    prefix = _length_prefix(rng)
    mode = rng.choice(["overwrites", "inserted"])
    end = pos + len(prefix) if mode == "overwrites" else pos
    return (
        f"{prefix[:1].hex()} length {mode} at {pos} in record {number}",
        log.data[:pos] + prefix + log.data[end:],
    )


def append_partial(rng: random.Random, log: BaseLog) -> tuple[str, bytes]:
    """A partial record appended: a cut copy of one of the log's records, perhaps damaged, or
    random bytes that begin like a record."""
    mode = rng.choice(["copy", "damaged copy", "random"])
    if mode == "random":
        extra = b"\x93" + rng.randbytes(rng.randrange(1, 400))
    else:
        offset, size = log.records[rng.randrange(1, len(log.records))]
        extra = bytearray(log.data[offset : offset + size])
        if mode == "damaged copy":
            extra[rng.randrange(size)] ^= 1 << rng.randrange(8)
        extra = extra[: rng.randrange(1, size)]
    return f"{len(extra)} bytes appended ({mode})", log.data + bytes(extra)


def truncate(rng: random.Random, log: BaseLog) -> tuple[str, bytes]:
    """A cut: anywhere, at a record boundary, inside the last record, or just before the end."""
    mode = rng.choice(["anywhere", "at a record boundary", "in the last record", "last bytes"])
    last_offset, last_size = log.records[-1]
    if mode == "anywhere":
        cut = rng.randrange(1, len(log.data))
    elif mode == "at a record boundary":
        cut = log.records[rng.randrange(1, len(log.records))][0]
    elif mode == "in the last record":
        cut = last_offset + rng.randrange(1, last_size)
    else:
        cut = len(log.data) - rng.randrange(1, 4)
    return f"cut at {cut} ({mode})", log.data[:cut]


MUTATIONS: dict[str, Mutation] = {
    "bit-flip": bit_flip,
    "insert-byte": insert_byte,
    "delete-byte": delete_byte,
    "huge-length-at-record": huge_length_at_record,
    "huge-length-inside": huge_length_inside,
    "append-partial": append_partial,
    "truncate": truncate,
}


def mutants(logs: list[BaseLog], count: int, seed: int) -> Iterator[Mutant]:
    rng = random.Random(seed)
    kinds = list(MUTATIONS)
    for n in range(count):
        log = logs[n % len(logs)]
        kind = kinds[rng.randrange(len(kinds))]
        detail, data = MUTATIONS[kind](rng, log)
        if data == log.data:
            continue  # no damage at all (cannot happen with these mutations, but be sure)
        prefix = log.data.startswith(data)
        yield Mutant(log.name, kind, detail, data, prefix, crash_like(log.data, data))


# --------------------------------------------------------------------------- auditing


def outcome_of(report: AuditReport) -> str:
    if report.exit_code == 0:
        return "truncated" if report.truncated is not None else report.verdict
    return "invalid" if report.exit_code == 1 else "unreadable"


def python_text(report: AuditReport) -> str | None:
    """The first piece of the verdict that reads like Python's error text, if any."""
    texts = [report.summary]
    if report.failure is not None:
        texts += [report.failure.reason, report.failure.responsibility]
    for text in texts:
        if text and PYTHON_TEXT.search(text):
            return text
    return None


@dataclass
class Tally:
    """The figures of a run."""

    count: int = 0
    seconds: float = 0.0
    slowest: float = 0.0
    outcomes: Counter[str] | None = None
    by_kind: dict[str, Counter[str]] | None = None
    codes: Counter[str] | None = None
    violations: list[dict[str, Any]] | None = None
    crash_like: int = 0  # exit 0 for appended bytes that a crash could leave

    def __post_init__(self) -> None:
        self.outcomes, self.by_kind, self.codes, self.violations = Counter(), {}, Counter(), []


def audit_mutant(mutant: Mutant, tally: Tally) -> None:
    assert tally.outcomes is not None and tally.by_kind is not None
    assert tally.codes is not None and tally.violations is not None
    start = time.perf_counter()
    problem = None
    try:
        report = audit_source(mutant.data, mutant.kind)
    except Exception as e:  # a bug: the audit must never raise for a bad log
        outcome, problem = "crash", f"the audit raised {type(e).__name__}: {e}"
        report = None
    seconds = time.perf_counter() - start
    if report is not None:
        outcome = outcome_of(report)
        if report.failure is not None:
            tally.codes[report.failure.code] += 1
        if report.exit_code == 0 and mutant.crash_like:
            tally.crash_like += 1
        elif report.exit_code == 0 and not mutant.is_prefix:
            problem = f"exit 0 ({outcome}) for damage that is no truncation: {report.summary}"
        elif (text := python_text(report)) is not None:
            problem = f"Python error text in the verdict: {text}"
    if seconds > SLOW_SECONDS:
        problem = f"the audit took {seconds:.1f} s"
    tally.count += 1
    tally.seconds += seconds
    tally.slowest = max(tally.slowest, seconds)
    tally.outcomes[outcome] += 1
    tally.by_kind.setdefault(mutant.kind, Counter())[outcome] += 1
    if problem is not None:
        tally.violations.append(
            {"base": mutant.base, "kind": mutant.kind, "detail": mutant.detail, "problem": problem}
        )


def run(count: int, seed: int, quick: bool = False, progress: bool = False) -> Tally:
    logs = base_logs(quick)
    tally = Tally()
    for n, mutant in enumerate(mutants(logs, count, seed), 1):
        audit_mutant(mutant, tally)
        if progress and (n % 50 == 0 or n == count):
            bad = len(tally.violations or [])
            print(f"\r{n}/{count} mutants audited, {bad} violations", end="", file=sys.stderr)
    if progress:
        print(file=sys.stderr)
    return tally


def table(tally: Tally) -> str:
    assert tally.outcomes is not None and tally.by_kind is not None and tally.codes is not None
    width = max(len(kind) for kind in [*tally.by_kind, "mutation"]) + 2
    lines = ["mutation".ljust(width) + "".join(o.rjust(12) for o in OUTCOMES) + "total".rjust(8)]
    rows = [*sorted(tally.by_kind.items()), ("all", tally.outcomes)]
    for kind, counts in rows:
        cells = "".join(str(counts.get(o, 0)).rjust(12) for o in OUTCOMES)
        lines.append(kind.ljust(width) + cells + str(sum(counts.values())).rjust(8))
    lines.append("")
    lines.append("failure codes: " + ", ".join(f"{c} {n}" for c, n in tally.codes.most_common()))
    mean = tally.seconds / max(tally.count, 1)
    lines.append(f"audit time: mean {mean * 1000:.1f} ms, slowest {tally.slowest:.2f} s")
    lines.append(
        f"exit 0 for appended bytes a crash could leave (nothing whole in them to check): "
        f"{tally.crash_like}"
    )
    lines.append(f"violations: {len(tally.violations or [])}")
    lines.extend(f"  {v['base']} / {v['detail']}: {v['problem']}" for v in tally.violations or [])
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=3000, help="how many mutants (3000)")
    parser.add_argument("--seed", type=int, default=1, help="the random seed (1)")
    parser.add_argument("--quick", action="store_true", help="small base logs (a fast run)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()
    tally = run(args.count, args.seed, args.quick, progress=True)
    print(table(tally))
    if args.json:
        figures = {
            "count": tally.count,
            "seed": args.seed,
            "outcomes": dict(tally.outcomes or {}),
            "by_mutation": {k: dict(v) for k, v in (tally.by_kind or {}).items()},
            "failure_codes": dict(tally.codes or {}),
            "mean_seconds": tally.seconds / max(tally.count, 1),
            "slowest_seconds": tally.slowest,
            "crash_like_appended": tally.crash_like,
            "violations": tally.violations,
        }
        with open(args.json, "w") as out:
            json.dump(figures, out, indent=2)
    return 1 if tally.violations else 0


if __name__ == "__main__":
    sys.exit(main())
