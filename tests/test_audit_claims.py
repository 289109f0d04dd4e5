"""What a log proves and what it only claims: forged and unproven forfeits, a match stopped by
agreement (``match-stop``) against one cut short, and a final checkpoint standing for a lost
``match-end``."""

from __future__ import annotations

import io
import json
import random
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from twisted.internet.task import Clock

from canasta_net.canasta.rules import preset
from canasta_net.identity import Identity
from canasta_net.log import LogWriter, StoredRecord, iter_records, parse_header, redact_for_seat
from canasta_net.log import records as R
from canasta_net.log.replay import Replayer, ReplayError
from canasta_net.net.host import TableConfig, TableService
from canasta_net.net.peer import describe_record
from canasta_net.table.local import bot_identity, recorded_match
from replay.audit import audit_source
from replay.cli import main
from replay.timeline import load_timeline

SEED = 5
HOST = Identity.from_seed(b"audit claims test host")


@cache
def host_log(hands: int | None = 1, target: int = 5000) -> bytes:
    buffer = io.BytesIO()
    rules = preset("classic").with_changes(target=target)
    recorded_match(rules, buffer, seed=SEED).play(max_hands=hands)
    return buffer.getvalue()


Extra = list[tuple[str, dict[str, Any]]]


def resign(
    data: bytes,
    keep: Callable[[StoredRecord], bool],
    extra: Extra,
    identity: Identity | None = None,
) -> bytes:
    """The records ``keep`` selects (up to the first it refuses), then ``extra``, every record
    signed again with the host's real key: what a lying host could write."""
    out = io.BytesIO()
    now = [0]  # each record keeps its time (format 2); the extra ones take the last
    writer = LogWriter(
        out, identity or bot_identity(SEED, 0), fsync=False, clock=lambda: now[0] / 1000
    )
    for record in iter_records(data):
        fields = {
            k: v
            for k, v in record.fields.items()
            if k not in ("seq", "prev", "kind", "priv", "time")
        }
        now[0] = record.fields.get("time", 0)
        if record.index == 0:
            del fields["format"]
            writer.write_header(fields)
            continue
        if not keep(record):
            break
        writer.append(record.kind, fields, dict(record.private))
    for kind, fields in extra:
        writer.append(kind, fields)
    return out.getvalue()


def forfeit_of(seat: int) -> Extra:
    return [
        (R.FORFEIT, {"hand": 0, "seat": seat, "reason": "the player left holding its secrets"}),
        (R.MATCH_END, {"winner": 0 if seat % 2 else 1, "totals": [0, 0], "hands": 0}),
    ]


def first_reveal(data: bytes) -> StoredRecord:
    return next(r for r in iter_records(data) if r.kind == R.REVEAL)


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def write(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


# --------------------------------------------------------------------------- forfeits


def test_a_forged_forfeit_after_the_seats_own_reveal_is_invalid_and_blames_the_host(
    tmp_path: Path,
) -> None:
    reveal = first_reveal(host_log())
    assert reveal.action is not None
    accused = reveal.action["seat"]
    forged = resign(host_log(), lambda r: r.index <= reveal.index, forfeit_of(accused))
    for copy in (forged, b"".join(redact_for_seat(r, 3 - accused) for r in iter_records(forged))):
        report = audit_source(copy)
        assert report.verdict == "invalid", report.summary
        assert report.failure is not None and report.failure.code == "contradicted-claim"
        assert report.failure.record == reveal.index + 1
        assert report.failure.blame == 0  # the host signed the lie
        assert f"record {reveal.index} holds that seat's own signed reveal" in report.summary
    assert run("audit", write(tmp_path, "forged.cnlog", forged)).exit_code == 1


def test_a_forfeit_no_record_contradicts_is_an_unproven_claim(tmp_path: Path) -> None:
    reveal = first_reveal(host_log())
    assert reveal.action is not None
    silent = next(s for s in range(4) if s != reveal.action["seat"])
    log = resign(host_log(), lambda r: r.index <= reveal.index, forfeit_of(silent))
    report = audit_source(log)
    assert report.verdict == "valid" and report.ending == "finished"
    assert report.claims == [
        {
            "record": reveal.index + 1,
            "kind": "forfeit",
            "claimant": 0,
            "claimant_name": report.claims[0]["claimant_name"],
            "claim": f"seat {silent} withheld its part of hand 1 "
            "(the player left holding its secrets)",
            "countersigned": [],
        }
    ]
    assert "cannot prove 1 claim" in report.summary and "countersigned by no seat" in report.summary
    path = write(tmp_path, "forfeit.cnlog", log)
    assert run("audit", path).exit_code == 0
    strict = run("audit", "--strict", path)
    assert strict.exit_code == 1
    assert strict.stderr.count("\n") == 1 and "--strict" in strict.stderr
    assert json.loads(run("audit", "--json", path).stdout)["files"][0]["claims"][0]["record"]


def test_a_seat_refuses_a_forged_forfeit_it_can_disprove() -> None:
    reveal = first_reveal(host_log())
    assert reveal.action is not None
    forged = resign(
        host_log(), lambda r: r.index <= reveal.index, forfeit_of(reveal.action["seat"])
    )
    records = list(iter_records(forged))
    replayer = Replayer(parse_header(records[0]))
    for record in records[1:-2]:
        replayer.feed(record)
    with pytest.raises(ReplayError) as caught:
        replayer.feed(records[-2])
    assert caught.value.code == "contradicted-claim" and caught.value.seat == 0


# --------------------------------------------------------------------------- stopped vs cut


def serve(
    hands: int | None, deal: str = "commit-reveal", delay: float = 0.0
) -> tuple[TableService, Clock, io.BytesIO]:
    """A match as ``canasta play --bots 4 --hands N`` plays it: the host's TableService with
    bots in every seat (its own library path), on a test clock (a bot moves ``delay`` seconds
    after the last move: with none, one step of the clock plays the whole match)."""
    config = TableConfig.simple(
        "local table",
        preset("classic"),
        1,
        host_plays=False,
        bot_delay=delay,
        max_hands=hands,
        deal=deal,
        insecure_seed=SEED,
    )
    clock, log = Clock(), io.BytesIO()
    service = TableService(
        config, HOST, clock, log, fsync=False, random_bytes=random.Random(SEED).randbytes
    )
    return service, clock, log


@cache
def stopped_log() -> bytes:
    service, clock, log = serve(2)
    for _ in range(100_000):
        if service.finished:
            break
        clock.advance(0)
    assert service.finished
    return log.getvalue()


def test_a_match_stopped_at_the_tables_limit_is_stopped_by_agreement(tmp_path: Path) -> None:
    data = stopped_log()
    records = list(iter_records(data))
    assert records[-1].kind == R.MATCH_STOP and records[-2].kind == R.CHECKPOINT
    assert records[-1].fields["reason"] == "max-hands" and records[-1].fields["hands"] == 2
    report = audit_source(data)
    assert report.verdict == "valid" and report.ending == "stopped", report.summary
    assert report.claims == []
    assert report.match["stopped"]["proven"] and not report.match["finished"]
    assert "stopped by agreement after 2 hands" in report.summary
    path = write(tmp_path, "stopped.cnlog", data)
    assert run("audit", "--require-complete", "--strict", path).exit_code == 0
    # every seat's own copy says the same, and the seat side shows the record
    seat_copy = b"".join(redact_for_seat(r, 2) for r in iter_records(data))
    assert audit_source(seat_copy).ending == "stopped"
    names = [s.name for s in parse_header(records[0]).seats]
    assert "stopped (max-hands) after 2 hands" in (describe_record(records[-1], names) or "")


@pytest.mark.parametrize("deal", ["commit-reveal", "blind"])
def test_the_host_quitting_mid_deal_is_a_stop_on_its_word(deal: str) -> None:
    service, clock, log = serve(None, deal, delay=1.0)
    for _ in range(6):
        clock.advance(1.0)
    service.stop_match(R.STOP_HOST_QUIT)
    assert service.table is not None and service.table.phase.value == "over"
    service.stop_match(R.STOP_HOST_QUIT)  # once only
    records = list(iter_records(log.getvalue()))
    assert [r.kind for r in records].count(R.MATCH_STOP) == 1
    assert records[-1].fields["mid_hand"] is True
    report = audit_source(log.getvalue())
    assert report.verdict == "valid" and report.ending == "stopped", report.summary
    assert [c["kind"] for c in report.claims] == ["match-stop"]
    assert "during hand 1" in report.summary


def test_the_same_log_cut_short_is_not_complete(tmp_path: Path) -> None:
    records = [stopped_log()[r.offset : r.offset + r.size] for r in iter_records(stopped_log())]
    cut = b"".join(records[:-5])
    report = audit_source(cut)
    assert report.verdict == "incomplete" and report.ending == "cut"
    path = write(tmp_path, "cut.cnlog", cut)
    assert run("audit", path).exit_code == 0
    assert run("audit", "--require-complete", path).exit_code == 1


def test_a_stop_the_log_cannot_prove_is_the_hosts_claim(tmp_path: Path) -> None:
    """The host quitting: a stop by agreement on the host's word (no limit in the header)."""
    data = host_log(1)
    stop = (
        R.MATCH_STOP,
        {
            "reason": "host-quit",
            "hand": 1,
            "hands": 1,
            "totals": audit_totals(data),
            "mid_hand": False,
        },
    )
    log = resign(data, lambda r: True, [stop])
    report = audit_source(log)
    assert report.verdict == "valid" and report.ending == "stopped", report.summary
    assert [c["kind"] for c in report.claims] == ["match-stop"]
    assert report.claims[0]["countersigned"] == [0, 1, 2, 3]  # the last checkpoint's signers
    path = write(tmp_path, "quit.cnlog", log)
    assert run("audit", "--require-complete", path).exit_code == 0
    assert run("audit", "--strict", path).exit_code == 1
    # a stop whose totals are not the engine's is the host's false record
    lie = resign(data, lambda r: True, [(stop[0], stop[1] | {"totals": [9999, 0]})])
    assert audit_source(lie).failure.code == "bad-match-stop"  # type: ignore[union-attr]
    # show and export still read the log
    timeline = load_timeline(log)
    assert timeline.steps[-1].kind == R.MATCH_STOP
    assert run("export", "--format", "json", write(tmp_path, "q2.cnlog", log)).exit_code == 0


def audit_totals(data: bytes) -> list[int]:
    return list(audit_source(data).match["totals"])


def test_a_lost_match_end_after_a_final_checkpoint_reports_the_proven_result() -> None:
    data = host_log(None, target=1500)
    records = list(iter_records(data))
    assert records[-1].kind == R.MATCH_END and records[-2].kind == R.CHECKPOINT
    report = audit_source(data[: records[-1].offset])
    assert report.verdict == "valid" and report.ending == "finished", report.summary
    whole = audit_source(data)
    assert report.match["result"]["totals"] == whole.match["result"]["totals"]
    assert "checkpoint, signed by every seat, proves" in report.summary
    assert "stops before" not in report.summary


def test_a_simulation_logged_to_its_hand_limit_is_stopped_by_agreement(tmp_path: Path) -> None:
    from canasta_net.ui.cli import main as canasta

    path = tmp_path / "sim.cnlog"
    result = CliRunner().invoke(canasta, ["simulate", "--hands", "1", "--log", str(path)])
    assert result.exit_code == 0, result.output
    report = audit_source(path.read_bytes())
    assert report.ending == "stopped" and report.claims == [], report.summary
