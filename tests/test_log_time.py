"""Log format 2: the host's clock on every record, connection events, and what the audit makes of
them (per seat: moves, thinking time, disconnections, stand-in moves). Format-1 logs still read,
verify and audit. Every clock here is fake, so every time is known."""

from __future__ import annotations

import io
import itertools
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
import pytest

from canasta_net.canasta.rules import preset
from canasta_net.log import (
    LogFormatError,
    LogVerificationError,
    StoredRecord,
    iter_records,
    open_log_for_writing,
    verify_log,
)
from canasta_net.log import records as R
from canasta_net.log.replay import replay_log
from canasta_net.table.host import HostTable
from canasta_net.table.local import LocalMatch, bot_identity, recorded_match
from replay.activity import activity_lines
from replay.audit import audit_source
from replay.cli import _audit_text

SEED = 5
EXAMPLE_LOG = Path(__file__).parent / "data" / "example.cnlog"  # format 1, seed 2


def pack(value: Any) -> bytes:
    return msgpack.packb(value, use_bin_type=True)  # type: ignore[no-any-return]


class StepClock:
    """A fake clock: each reading is ``step`` seconds after the one before."""

    def __init__(self, start: float = 1_700_000_000.0, step: float = 1.5) -> None:
        self.now, self.step = start, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def timed_match(clock: Callable[[], float], hands: int = 1) -> tuple[LocalMatch, bytes]:
    buf = io.BytesIO()
    match = recorded_match(preset("classic-2p"), buf, seed=SEED, clock=clock)
    match.play(max_hands=hands)
    return match, buf.getvalue()


def times(data: bytes) -> list[int]:
    return [r.fields["time"] for r in iter_records(data) if r.index]


def test_every_record_after_the_header_carries_the_writers_clock_in_ms() -> None:
    _, data = timed_match(StepClock(step=1.5))
    records = list(iter_records(data))
    assert records[0].fields["format"] == 2 and "time" not in records[0].fields
    stamps = times(data)
    assert stamps[0] == 1_700_000_001_500
    assert all(b - a == 1500 for a, b in itertools.pairwise(stamps))
    assert verify_log(data).last_time == stamps[-1]


def test_a_clock_stepped_back_never_dates_a_record_before_the_last() -> None:
    readings = iter([100.0, 50.0, 50.0] + [200.0] * 10_000)
    _, data = timed_match(lambda: next(readings))
    stamps = times(data)
    assert stamps[:4] == [100_000, 100_000, 100_000, 200_000]
    verify_log(data)


def test_the_simulation_clock_keeps_a_seed_reproducible() -> None:
    first, second = io.BytesIO(), io.BytesIO()
    recorded_match(preset("classic-2p"), first, seed=SEED).play(max_hands=1)
    recorded_match(preset("classic-2p"), second, seed=SEED).play(max_hands=1)
    assert first.getvalue() == second.getvalue() and set(times(first.getvalue())) == {0}


def test_the_writer_fills_in_time_itself() -> None:
    match, _ = timed_match(StepClock())
    with pytest.raises(ValueError, match="fills in"):
        match.host.writer.append("chat-note", {"time": 5})


def _signed(data: bytes, kind: str, fields: dict[str, Any], time_ms: int | None) -> bytes:
    """``data`` with one more record signed by its host (seed SEED), with ``time_ms``."""
    records = list(iter_records(data))
    body: dict[str, Any] = {"seq": len(records), "prev": records[-1].hash, "kind": kind}
    if time_ms is not None:
        body["time"] = time_ms
    packed = pack(body | fields)
    signature = bot_identity(SEED, 0).sign("log-record", packed)
    return data + pack([packed, signature, {}])


def _last_time(data: bytes) -> int:
    return times(data)[-1]


def test_a_record_dated_before_the_one_it_follows_is_refused() -> None:
    _, data = timed_match(StepClock())
    event = {"seat": 1, "event": "lost"}
    verify_log(_signed(data, R.SEAT_EVENT, event, _last_time(data)))  # the same ms is fine
    with pytest.raises(LogVerificationError) as info:
        verify_log(_signed(data, R.SEAT_EVENT, event, _last_time(data) - 1))
    assert info.value.code == "bad-time" and info.value.seat == 0
    report = audit_source(_signed(data, R.SEAT_EVENT, event, _last_time(data) - 1))
    assert report.verdict == "invalid" and report.failure is not None
    assert report.failure.code == "bad-time" and report.failure.blame == 0


@pytest.mark.parametrize(
    ("fields", "time_ms", "what"),
    [
        ({"seat": 1, "event": "lost"}, None, "time"),  # format 2: time is required
        ({"seat": 1, "event": "lost"}, -1, "time"),
        ({"seat": 1, "event": "vanished"}, 0, "unknown seat event"),
        ({"seat": 2, "event": "lost"}, 0, "seat"),  # classic-2p has seats 0 and 1
        ({"seat": 1, "event": "lost", "reason": 7}, 0, "reason"),
        ({"event": "lost"}, 0, "seat"),
    ],
)
def test_malformed_times_and_seat_events_are_refused(
    fields: dict[str, Any], time_ms: int | None, what: str
) -> None:
    _, data = timed_match(StepClock())
    stamp = None if time_ms is None else max(time_ms, _last_time(data))
    if time_ms == -1:
        stamp = -1
    with pytest.raises(LogFormatError, match=what) as info:
        verify_log(_signed(data, R.SEAT_EVENT, fields, stamp))
    assert info.value.code == "bad-field"


def test_connection_events_mid_hand_leave_the_hand_alone() -> None:
    """Seat events written between the records of a hand (as a host writes them when a
    connection drops) replay, keep the seats in step, and are listed as the host's word."""
    match, _ = timed_match(StepClock(), hands=0)
    host = match.host
    written = []
    for step in range(60):
        match.step()
        if step in (10, 30):
            infos = host.seat_event(1, "lost", "connection lost") + host.seat_event(
                1, "held", hold=30
            )
            match._broadcast(infos)
            written += infos
        if step == 31:
            infos = host.seat_event(1, "connected")
            match._broadcast(infos)
            written += infos
    match.play(max_hands=1)
    data = host.writer._file.getvalue()  # type: ignore[attr-defined]
    result = replay_log(data)
    assert result.hands and result.hands[0].checkpoint_signers == frozenset({0, 1})
    report = audit_source(data)
    assert report.verdict in ("valid", "incomplete") and report.failure is None
    activity = report.activity
    assert activity is not None and activity["timed"]
    assert [(e["record"], e["event"]) for e in activity["events"]] == [
        (info.seq, event)
        for info, event in zip(written, ["lost", "held"] * 2 + ["connected"], strict=True)
    ]
    assert activity["events"][1]["hold_ms"] == 30_000
    seat1 = activity["seats"][1]
    assert seat1["disconnections"] == 2 and seat1["stand_in_moves"] == 0
    # thinking time: from the last game record before each move (not a seat event) to the move
    moves = activity["seats"][0]["moves"] + seat1["moves"]
    assert moves == result.hands[0].actions
    assert seat1["thinking_ms"]["median"] >= 1500 and seat1["thinking_ms"]["max"] >= 1500
    assert all(e["claimed_by"] == "host" for e in activity["events"])
    text = _audit_text(report)
    assert "seat 1 (bot-1): " in text and "2 disconnections" in text
    assert "thinking time median" in text


def test_thinking_time_is_measured_from_the_record_that_gave_the_turn() -> None:
    """Each move's record time minus the time of the game record before it; a seat event in
    between does not restart the count."""
    match, _ = timed_match(StepClock(step=1.0), hands=0)
    host = match.host
    while not any(info.kind == R.ACTION for info in host.history):
        match.step()
    [mover] = [seat for seat in (0, 1) if host.needs(seat) == "act"]
    match._broadcast(host.seat_event(mover, "lost"))  # 1 s after the turn was given
    match.step()  # the move: 2 s after the record that gave the turn
    data = host.writer._file.getvalue()  # type: ignore[attr-defined]
    records = list(iter_records(data))
    move = records[-1]
    assert move.kind == R.ACTION
    given = [r for r in records[:-1] if r.kind != R.SEAT_EVENT][-1]
    assert move.fields["time"] - given.fields["time"] == 2000
    activity = audit_source(data).activity
    assert activity is not None
    assert activity["seats"][mover]["thinking_ms"]["max"] >= 2000


def test_a_format_1_log_audits_and_says_time_is_not_recorded() -> None:
    report = audit_source(EXAMPLE_LOG.read_bytes())
    assert report.log is not None and report.log["format"] == 1
    assert report.verdict == "incomplete" and report.failure is None
    activity = report.activity
    assert activity is not None and not activity["timed"] and activity["events"] == []
    assert [s["disconnections"] for s in activity["seats"]] == [None, None]
    assert [s["thinking_ms"] for s in activity["seats"]] == [None, None]
    assert sum(s["moves"] for s in activity["seats"]) == 54
    lines = activity_lines(activity, ["bot-0", "bot-1"])
    assert "times and connections are not recorded" in lines[0]
    assert "disconnection" not in "\n".join(lines)


def test_a_resumed_format_1_log_stays_format_1(tmp_path: Path) -> None:
    path = tmp_path / "example.cnlog"
    shutil.copy(EXAMPLE_LOG, path)
    log = open_log_for_writing(path, resume=True)
    table = HostTable.resume(log, bot_identity(2, 0), fsync=False, clock=lambda: 99.0)
    assert table.seat_event(1, "lost") == []  # no connection events in a format-1 log
    table.writer.append(R.CHAT + "-note", {"text": "x"})
    log.close()
    last: StoredRecord = list(iter_records(path.read_bytes()))[-1]
    assert "time" not in last.fields
    verify_log(path.read_bytes())


def test_resuming_a_format_2_log_keeps_its_clock_from_running_back(tmp_path: Path) -> None:
    path = tmp_path / "host.cnlog"
    with open_log_for_writing(path) as file:
        match = recorded_match(preset("classic-2p"), file, seed=SEED, clock=StepClock())
        match.play(max_hands=1)
    before = _last_time(path.read_bytes())
    log = open_log_for_writing(path, resume=True)
    table = HostTable.resume(log, bot_identity(SEED, 0), fsync=False, clock=lambda: 1.0)
    [info] = table.seat_event(0, "resumed")
    log.close()
    data = path.read_bytes()
    assert _last_time(data) == before and list(iter_records(data))[-1].hash == info.hash
    verify_log(data)
    replay_log(data)
