"""canasta-replay audit: real all-bot logs pass, every kind of tampering is caught and named."""

from __future__ import annotations

import io
import json
import random
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from canasta_net.canasta.rules import preset
from canasta_net.i18n import set_language
from canasta_net.identity import Identity
from canasta_net.log import LogWriter, StoredRecord, iter_records, redact_for_seat
from canasta_net.log import records as R
from canasta_net.table.local import bot_identity, recorded_match
from replay.audit import audit_source
from replay.cli import main
from replay.timeline import load_timeline

SEED = 5


@cache
def host_log(hands: int | None = 1, seed: int = SEED, variant: str = "classic") -> bytes:
    buffer = io.BytesIO()
    recorded_match(preset(variant), buffer, seed=seed).play(max_hands=hands)
    return buffer.getvalue()


def seat_copy(data: bytes, seat: int) -> bytes:
    return b"".join(redact_for_seat(record, seat) for record in iter_records(data))


def stored_records(data: bytes) -> list[bytes]:
    return [data[r.offset : r.offset + r.size] for r in iter_records(data)]


Edit = Callable[[StoredRecord, dict[str, Any], dict[int, bytes]], None]


def rebuild(data: bytes, edit: Edit, seed: int = SEED) -> bytes:
    """Re-sign every record with the host's real key (a fresh writer), after ``edit``."""
    out = io.BytesIO()
    now = [0]  # each record keeps its time (format 2)
    writer = LogWriter(out, bot_identity(seed, 0), fsync=False, clock=lambda: now[0] / 1000)
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
        private = dict(record.private)
        edit(record, fields, private)
        writer.append(record.kind, fields, private)
    return out.getvalue()


def first(data: bytes, kind: str, after: int = 0) -> StoredRecord:
    return next(r for r in iter_records(data) if r.kind == kind and r.index > after)


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def write(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


# --------------------------------------------------------------------------- good logs


def test_rebuilding_without_changes_gives_the_same_bytes() -> None:
    # the tampering helper must change only what an edit changes
    assert rebuild(host_log(), lambda record, fields, private: None) == host_log()


def test_a_finished_match_is_valid(tmp_path: Path) -> None:
    path = write(tmp_path, "match.cnlog", host_log(None))
    result = run("audit", "--json", path)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["format"] == "canasta-replay/audit/1" and data["exit_code"] == 0
    report = data["files"][0]
    assert report["verdict"] == "valid"
    assert report["match"]["finished"] and report["match"]["result"]["winner"] in (0, 1)
    assert max(report["match"]["result"]["totals"]) >= 5000
    assert report["copy"] == {"kind": "host", "payload_seats": [0, 1, 2, 3]}
    assert all(hand["checkpoint_signers"] == [0, 1, 2, 3] for hand in report["hands"])
    assert report["records"] == sum(report["kinds"].values())
    assert report["warnings"] and "insecure" in report["warnings"][0]
    assert report["failure"] is None and report["incomplete"] is None
    assert len(report["log"]["seats"]) == 4 and report["log"]["header_hash"]


@pytest.mark.parametrize("seat", [0, 1, 2, 3])
def test_every_seats_own_copy_is_valid(seat: int) -> None:
    report = audit_source(seat_copy(host_log(None), seat))
    assert report.verdict == "valid", report.summary
    assert report.copy == {"kind": "seat", "payload_seats": [seat]}
    assert report.match["result"] == host_match_result()


@cache  # the host's copy, audited once for the four seats' tests
def host_match_result() -> Any:
    return audit_source(host_log(None)).match["result"]


def test_other_variants_audit_too() -> None:
    report = audit_source(host_log(1, 3, "classic-2p"))
    assert report.verdict == "incomplete" and report.failure is None
    assert report.hands[0]["checkpoint_signers"] == [0, 1]


def test_a_log_that_stops_between_hands_is_incomplete_but_exits_0(tmp_path: Path) -> None:
    path = write(tmp_path, "one.cnlog", host_log())
    result = run("audit", path)
    assert result.exit_code == 0
    # hands count from 1 in words; the JSON keeps the log's number (from 0)
    assert "INCOMPLETE" in result.stdout
    assert "after hand 1's checkpoint, before hand 2." in result.stdout
    incomplete = json.loads(run("audit", "--json", path).stdout)["files"][0]["incomplete"]
    assert incomplete["hand"] == 1 and incomplete["stage"] == "between-hands"
    assert run("audit", "--require-complete", path).exit_code == 1


def test_a_log_that_stops_mid_hand(tmp_path: Path) -> None:
    records = stored_records(host_log())
    middle = len(records) - 30
    report = audit_source(b"".join(records[:middle]))
    assert report.verdict == "incomplete"
    assert report.incomplete is not None and report.incomplete["stage"] == "playing"
    assert report.incomplete["unverified_records"] == 0
    assert report.incomplete["hand"] == 0
    turn = load_timeline(b"".join(records[:middle])).steps[-1].turn
    assert turn is not None
    assert f"stops during hand 1, at turn {turn + 1}." in report.summary
    # a seat's copy cannot check the hand's records until the seeds are published
    seat_report = audit_source(seat_copy(b"".join(records[:middle]), 2))
    assert seat_report.verdict == "incomplete"
    deal = first(host_log(), R.DEAL).index
    assert seat_report.incomplete is not None
    assert seat_report.incomplete["unverified_records"] == middle - deal
    assert "cannot be checked in this copy" in seat_report.summary


def test_a_truncated_log_is_reported(tmp_path: Path) -> None:
    data = host_log()
    records = stored_records(data)
    cut = data[: len(data) - len(records[-1]) + 10]  # half of the last record is missing
    path = write(tmp_path, "cut.cnlog", cut)
    result = run("audit", "--json", path)
    report = json.loads(result.stdout)["files"][0]
    assert result.exit_code == 0 and report["verdict"] == "incomplete"
    assert report["truncated"] == {
        "record": len(records) - 1,
        "offset": len(data) - len(records[-1]),
        "length": 10,
    }
    assert "ends inside record" in report["summary"]


# --------------------------------------------------------------------------- tampering


def audit_json(tmp_path: Path, data: bytes) -> tuple[int, dict[str, Any]]:
    result = run("audit", "--json", write(tmp_path, "bad.cnlog", data))
    return result.exit_code, json.loads(result.stdout)["files"][0]


def test_sampled_byte_flips_are_all_caught() -> None:
    data = host_log()
    records = list(iter_records(data))
    rng = random.Random(1)
    start, end = records[1].offset, records[-1].offset  # the last record could read as truncated
    for position in rng.sample(range(start, end), 60):
        flipped = bytearray(data)
        flipped[position] ^= 1 << rng.randrange(8)
        report = audit_source(bytes(flipped))
        assert report.verdict == "invalid", (position, report.summary)
        assert report.failure is not None
        owner = max(r.index for r in records if r.offset <= position)
        assert report.failure.record <= owner + 1, (position, report.failure)
    for position in rng.sample(range(records[1].offset), 10):  # the header
        flipped = bytearray(data)
        flipped[position] ^= 0x01
        assert audit_source(bytes(flipped)).exit_code in (1, 2), position


@pytest.mark.parametrize(
    "how, code, record",
    [
        ("drop", "bad-seq", 20),
        ("duplicate", "bad-seq", 21),
        ("reorder", "bad-seq", 20),
    ],
)
def test_dropped_duplicated_and_reordered_records(
    tmp_path: Path, how: str, code: str, record: int
) -> None:
    records = stored_records(host_log())
    if how == "drop":
        del records[20]
    elif how == "duplicate":
        records.insert(21, records[20])
    else:
        records[20], records[21] = records[21], records[20]
    status, report = audit_json(tmp_path, b"".join(records))
    assert status == 1 and report["verdict"] == "invalid"
    failure = report["failure"]
    assert (failure["code"], failure["record"]) == (code, record)
    assert failure["blame"] is None and "No seat can be blamed" in failure["responsibility"]


def test_swapped_host_signatures(tmp_path: Path) -> None:
    records = list(iter_records(host_log()))
    import msgpack

    def stored(record: StoredRecord, signature: bytes) -> bytes:
        packed: bytes = msgpack.packb([record.body, signature, record.private], use_bin_type=True)
        return packed

    out = [stored(r, r.host_sig) for r in records]
    out[30] = stored(records[30], records[31].host_sig)
    out[31] = stored(records[31], records[30].host_sig)
    status, report = audit_json(tmp_path, b"".join(out))
    assert status == 1
    assert (report["failure"]["code"], report["failure"]["record"]) == ("bad-host-signature", 30)
    assert report["failure"]["blame"] is None


def test_swapped_author_signatures_blame_the_host_not_the_author(tmp_path: Path) -> None:
    data = host_log()
    actions = [r for r in iter_records(data) if r.kind == R.ACTION][:2]
    signatures = {
        actions[0].index: actions[1].fields["asig"],
        actions[1].index: actions[0].fields["asig"],
    }

    def swap(record: StoredRecord, fields: dict[str, Any], private: dict[int, bytes]) -> None:
        if record.index in signatures:
            fields["asig"] = signatures[record.index]

    status, report = audit_json(tmp_path, rebuild(data, swap))
    failure = report["failure"]
    assert status == 1
    assert (failure["code"], failure["record"]) == ("bad-author-signature", actions[0].index)
    author = actions[0].action["seat"] if actions[0].action else None
    assert failure["seat"] == author and failure["blame"] == 0  # the host accepted it
    assert "proves nothing against" in failure["responsibility"]


def wrong_seed(data: bytes) -> bytes:
    def edit(record: StoredRecord, fields: dict[str, Any], private: dict[int, bytes]) -> None:
        if record.kind == R.SEEDS:
            fields["seeds"] = list(fields["seeds"])
            fields["seeds"][1] = bytes(32)

    return rebuild(data, edit)


def test_a_wrong_seed_in_the_host_log(tmp_path: Path) -> None:
    status, report = audit_json(tmp_path, wrong_seed(host_log()))
    failure = report["failure"]
    assert status == 1 and failure["code"] == "bad-seeds"
    assert failure["record"] == first(host_log(), R.SEEDS).index
    assert failure["blame"] == 0 and failure["stage"] == "game"


def test_a_wrong_seed_in_a_seats_copy() -> None:
    report = audit_source(seat_copy(wrong_seed(host_log()), 2))
    assert report.failure is not None
    assert report.failure.code == "reveal-mismatch" and report.failure.seat == 1
    assert report.failure.blame == 0  # the host published it


def test_an_illegal_action_signed_by_a_real_key_blames_its_author(tmp_path: Path) -> None:
    data = host_log()
    target = first(data, R.ACTION)  # the first player's draw: a discard is illegal then
    assert target.action is not None
    act = target.action
    seat = act["seat"]

    def edit(record: StoredRecord, fields: dict[str, Any], private: dict[int, bytes]) -> None:
        if record.index == target.index:
            signed = R.make_act(
                act["table"],
                act["hand"],
                seat,
                act["aseq"],
                act["head"],
                "action",
                action="discard JK",
            )
            fields["act"] = signed
            fields["asig"] = bot_identity(SEED, seat).sign("seat-action", signed)
            private.clear()

    status, report = audit_json(tmp_path, rebuild(data, edit))
    failure = report["failure"]
    assert status == 1
    assert (failure["code"], failure["record"]) == ("illegal-action", target.index)
    assert failure["seat"] == seat and failure["blame"] == seat
    assert "wrong-phase" in failure["reason"] and "should have refused" in failure["responsibility"]


def test_an_action_signed_by_an_outsider_blames_the_host(tmp_path: Path) -> None:
    data = host_log()
    target = first(data, R.ACTION)

    def edit(record: StoredRecord, fields: dict[str, Any], private: dict[int, bytes]) -> None:
        if record.index == target.index:
            fields["asig"] = Identity.from_seed(b"outsider").sign("seat-action", fields["act"])

    status, report = audit_json(tmp_path, rebuild(data, edit))
    assert status == 1 and report["failure"]["code"] == "bad-author-signature"
    assert report["failure"]["blame"] == 0


def test_a_wrong_score(tmp_path: Path) -> None:
    def edit(record: StoredRecord, fields: dict[str, Any], private: dict[int, bytes]) -> None:
        if record.kind == R.HAND_END:
            fields["totals"] = [fields["totals"][0] + 100, fields["totals"][1]]

    status, report = audit_json(tmp_path, rebuild(host_log(), edit))
    failure = report["failure"]
    assert status == 1 and failure["code"] == "wrong-score"
    assert failure["record"] == first(host_log(), R.HAND_END).index and failure["blame"] == 0


def test_a_checkpoint_without_every_signature(tmp_path: Path) -> None:
    def edit(record: StoredRecord, fields: dict[str, Any], private: dict[int, bytes]) -> None:
        if record.kind == R.CHECKPOINT:
            fields["sigs"] = {s: sig for s, sig in fields["sigs"].items() if s != 3}

    status, report = audit_json(tmp_path, rebuild(host_log(), edit))
    failure = report["failure"]
    assert status == 1 and failure["code"] == "unsigned-checkpoint"
    assert failure["seat"] == 3 and failure["blame"] == 0 and failure["stage"] == "audit"
    assert failure["reason"].startswith("The checkpoint of hand 1 is not signed by every seat")
    assert "closed hand 1 without every seat's signature" in failure["responsibility"]


def test_the_text_verdict_names_record_seat_and_responsibility(tmp_path: Path) -> None:
    _, report = audit_json(tmp_path, wrong_seed(host_log()))
    result = run("audit", str(tmp_path / "bad.cnlog"))
    assert result.exit_code == 1
    assert f"INVALID. Invalid at record {report['failure']['record']} [bad-seeds]" in result.stdout
    assert "Responsibility: The host, seat 0 (bot-0)" in result.stdout


# --------------------------------------------------------------------------- unreadable files


def test_unreadable_files_exit_2(tmp_path: Path) -> None:
    header = stored_records(host_log())[0]
    cases = {
        "empty.cnlog": b"",
        "text.cnlog": b"this is not a log\n",
        "header-only-part.cnlog": header[:20],
    }
    for name, data in cases.items():
        result = run("audit", write(tmp_path, name, data))
        assert result.exit_code == 2, (name, result.output)
        assert "UNREADABLE" in result.stdout
    missing = run("audit", "--json", str(tmp_path / "nope.cnlog"))
    assert missing.exit_code == 2
    assert json.loads(missing.stdout)["files"][0]["failure"]["code"] == "io-error"


def test_a_newer_format_is_unsupported(tmp_path: Path) -> None:
    import msgpack

    identity = bot_identity(SEED, 0)
    body = msgpack.packb(
        {"seq": 0, "prev": bytes(32), "kind": "header", "format": 3}, use_bin_type=True
    )
    stored = msgpack.packb([body, identity.sign("log-record", body), {}], use_bin_type=True)
    status, report = audit_json(tmp_path, stored)
    assert status == 2 and report["verdict"] == "unsupported"
    assert report["failure"]["code"] == "bad-version"


# --------------------------------------------------------------------------- many files


def test_many_files_in_parallel_keep_their_order_and_the_worst_status(tmp_path: Path) -> None:
    good = write(tmp_path, "good.cnlog", host_log())
    seat = write(tmp_path, "seat.cnlog", seat_copy(host_log(), 1))
    bad = write(tmp_path, "bad.cnlog", wrong_seed(host_log()))
    result = run("audit", "--json", "--jobs", "2", good, bad, seat)
    data = json.loads(result.stdout)
    assert result.exit_code == 1 and data["exit_code"] == 1
    assert [f["file"] for f in data["files"]] == [good, bad, seat]
    assert [f["verdict"] for f in data["files"]] == ["incomplete", "invalid", "incomplete"]
    worst = run("audit", "-j", "2", good, str(tmp_path / "missing.cnlog"))
    assert worst.exit_code == 2


# --------------------------------------------------------------------------- the reader's language

ENGLISH_WORDS = re.compile(
    r"\b(the|The|record|seat|signed|host|Responsibility|Warning|Invalid|Per|moves|thinking)\b"
)


def unsigned_checkpoint_log() -> bytes:
    def edit(record: StoredRecord, fields: dict[str, Any], private: dict[int, bytes]) -> None:
        if record.kind == R.CHECKPOINT:
            fields["sigs"] = {s: sig for s, sig in fields["sigs"].items() if s != 3}

    return rebuild(host_log(), edit)


@pytest.mark.parametrize("lang", ["ru", "bg", "pl"])
@pytest.mark.parametrize("tamper", [wrong_seed, unsigned_checkpoint_log], ids=["seed", "unsigned"])
def test_the_verdict_of_a_tampered_log_reads_in_each_language(
    tmp_path: Path, lang: str, tamper: Callable[..., bytes]
) -> None:
    data = tamper(host_log()) if tamper is wrong_seed else tamper()
    path = write(tmp_path, "bad.cnlog", data)
    english = run("audit", path)
    try:
        worded = run("--lang", lang, "audit", path)
        as_json = run("--lang", lang, "audit", "--json", path)
    finally:
        set_language("en")
    assert worded.exit_code == english.exit_code == 1
    lines = worded.stdout.splitlines()
    assert len(lines) == len(english.stdout.splitlines())
    code = json.loads(as_json.stdout)["files"][0]["failure"]["code"]
    assert f"[{code}]" in lines[0]  # the code stays as it is
    for line in lines:
        text = line.replace(path, "").replace(f"[{code}]", "")
        assert not ENGLISH_WORDS.search(text), line
        if lang != "pl":  # a Cyrillic reader: no Latin word but the names and the header's own
            words = re.findall(r"[A-Za-z]{3,}", re.sub(r"bot-\d", "", text))
            assert set(words) <= {"insecure"}, line
    # the JSON report is the same in every language: codes, and the English sentences
    worded_json, english_json = (
        json.loads(r.stdout) for r in (as_json, run("audit", "--json", path))
    )
    for report in (worded_json, english_json):
        del report["files"][0]["seconds"]  # how long the audit took
    assert worded_json == english_json


def test_the_help_reads_in_the_readers_language() -> None:
    try:
        result = run("--lang", "bg", "audit", "--help")
    finally:
        set_language("en")
    assert result.exit_code == 0
    assert "Проверява отново цели игри" in result.stdout
    assert "Отпечатва отчетите в JSON." in result.stdout
    assert "Re-check whole games" in run("audit", "--help").stdout


@pytest.mark.parametrize("lang", ["ru", "bg", "pl"])
@pytest.mark.parametrize("hands", [None, 1], ids=["valid", "incomplete"])
def test_the_verdict_of_a_good_log_reads_in_each_language(
    tmp_path: Path, lang: str, hands: int | None
) -> None:
    path = write(tmp_path, "good.cnlog", host_log(hands))
    english = run("audit", path)
    try:
        worded = run("--lang", lang, "audit", path)
    finally:
        set_language("en")
    assert worded.exit_code == english.exit_code == 0
    lines = worded.stdout.splitlines()
    assert len(lines) == len(english.stdout.splitlines())
    for line in lines:
        text = line.replace(path, "").replace("classic", "")  # the header's variant code
        assert not ENGLISH_WORDS.search(text), line
        assert not re.search(r"\b(wins|after|hands?|closed|copy|stops)\b", text), line
        if lang != "pl":
            words = re.findall(r"[A-Za-z]{3,}", re.sub(r"bot-\d", "", text))
            assert set(words) <= {"insecure"}, line


def test_the_replay_command_starts_without_twisted_or_the_network() -> None:
    """``canasta-replay`` reads files only: it starts without importing Twisted and the table's
    network code (half its start-up), though it shares ``--lang`` with ``canasta``."""
    import subprocess
    import sys

    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, replay.cli; print(*sorted(sys.modules))"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.split()
    assert "click" in loaded and "canasta_net.log" in loaded
    assert not [
        m for m in loaded if m == "twisted" or m.startswith(("twisted.", "canasta_net.net"))
    ]
