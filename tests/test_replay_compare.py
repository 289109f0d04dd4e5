"""canasta-replay audit with several copies of one table's log: they are compared, and a host
that signed two histories is caught naming the sequence number (docs/log-format.md, "Copies
compared")."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from english_text import english_sentences
from test_replay_audit import SEED, host_log, rebuild, run, seat_copy, write

from canasta_net.i18n import set_language, translator
from canasta_net.log import LogWriter, StoredRecord, iter_records
from canasta_net.table.local import bot_identity
from replay.compare import compare_copies, read_copy

FORK_AT = 9  # a reveal record, before the first deal


def forked(data: bytes) -> bytes:
    """The same log with record FORK_AT changed, every record signed with the host's real key:
    what a host that sent one seat another history would leave in that seat's copy."""

    def edit(record: StoredRecord, fields: dict[str, Any], private: dict[int, bytes]) -> None:
        if record.index == FORK_AT:
            fields["note"] = "another history"

    return rebuild(data, edit)


def cut(data: bytes, records: int) -> bytes:
    return data[: list(iter_records(data))[records].offset]


def test_a_host_equivocation_between_the_host_and_a_seat_copy_is_caught() -> None:
    host = read_copy(host_log(), "host.cnlog")
    seat = read_copy(seat_copy(forked(host_log()), 2), "seat2.cnlog")
    comparison = compare_copies([host, seat])
    assert comparison.verdict == "invalid" and comparison.exit_code == 1
    equivocation = comparison.equivocation
    assert equivocation is not None and equivocation["seq"] == FORK_AT
    assert equivocation["blame"] == 0 and equivocation["blame_name"] == "bot-0"
    assert [v["files"] for v in equivocation["versions"]] == [["host.cnlog"], ["seat2.cnlog"]]
    assert f"sequence number {FORK_AT}" in comparison.summary
    assert not comparison.altered


def test_copies_that_are_prefixes_of_each_other_agree() -> None:
    data = host_log()
    copies = [
        read_copy(cut(data, 20), "host.cnlog"),
        read_copy(seat_copy(data, 2), "seat2.cnlog"),
        read_copy(seat_copy(data, 1)[:-5], "seat1.cnlog"),  # a truncated tail
    ]
    comparison = compare_copies(copies)
    assert comparison.verdict == "valid" and comparison.exit_code == 0, comparison.summary
    assert comparison.longest == "seat2.cnlog" and comparison.equivocation is None
    records = len(list(iter_records(data)))
    assert [c["records"] for c in comparison.copies] == [20, records, records - 1]
    assert [c["kind"] for c in comparison.copies] == ["host", "seat", "seat"]
    assert len(comparison.notes) == 1 and "host dropped records" in comparison.notes[0]


def test_the_same_copy_twice_agrees_without_notes() -> None:
    comparison = compare_copies([read_copy(host_log(), "a"), read_copy(seat_copy(host_log(), 3))])
    assert comparison.verdict == "valid" and not comparison.notes and not comparison.altered


def test_logs_of_different_tables_are_refused() -> None:
    comparison = compare_copies(
        [read_copy(host_log(1, 5), "five.cnlog"), read_copy(host_log(1, 6), "six.cnlog")]
    )
    assert comparison.verdict == "refused" and comparison.exit_code == 2
    assert "different tables" in comparison.summary and comparison.equivocation is None


def test_an_altered_copy_is_blamed_on_that_copy_not_the_host() -> None:
    data = seat_copy(host_log(), 1)
    target = list(iter_records(data))[15]
    body_at = data.index(target.body, target.offset)
    altered = bytearray(data)
    altered[body_at + len(target.body) - 1] ^= 0x01  # one bit of the body: the signature fails
    comparison = compare_copies([read_copy(host_log(), "host"), read_copy(bytes(altered), "s1")])
    assert comparison.verdict == "invalid" and comparison.equivocation is None
    assert [(a["file"], a["record"], a["code"]) for a in comparison.altered] == [
        ("s1", 15, "bad-host-signature")
    ]
    assert "proves nothing against the host" in comparison.altered[0]["reason"]


def test_the_cli_compares_copies_among_the_files(tmp_path: Path) -> None:
    host = write(tmp_path, "host.cnlog", host_log())
    seat = write(tmp_path, "seat2.cnlog", seat_copy(forked(host_log()), 2))
    other = write(tmp_path, "other.cnlog", host_log(1, 6))
    result = run("audit", "--json", host, seat, other)
    data = json.loads(result.stdout)
    assert result.exit_code == 1 and data["exit_code"] == 1
    [comparison] = data["comparisons"]  # the other table's log is audited, not compared
    assert comparison["files"] == [host, seat] and comparison["verdict"] == "invalid"
    assert comparison["equivocation"]["seq"] == FORK_AT
    text = run("audit", host, seat)
    assert f"INVALID. Host equivocation at sequence number {FORK_AT}" in text.output
    agreed = run("audit", host, write(tmp_path, "seat1.cnlog", seat_copy(host_log(), 1)))
    assert agreed.exit_code == 0 and "VALID. The copies agree" in agreed.output
    refused = run("audit", "--copies", host, other)
    assert refused.exit_code == 2 and "different tables" in refused.output


def test_two_headers_for_one_table_signed_by_its_host_are_an_equivocation_at_0() -> None:
    out = io.BytesIO()
    writer = LogWriter(out, bot_identity(SEED, 0), fsync=False)
    header = next(iter_records(host_log()))
    fields = {k: v for k, v in header.fields.items() if k not in ("seq", "prev", "kind")}
    del fields["format"]
    writer.write_header(fields | {"software": "another history"})  # same table, same host key
    comparison = compare_copies([read_copy(host_log(), "a"), read_copy(out.getvalue(), "b")])
    assert comparison.verdict == "invalid"
    assert comparison.equivocation is not None and comparison.equivocation["seq"] == 0


@pytest.mark.parametrize("lang", ["ru", "bg", "pl"])
def test_the_comparison_reads_in_each_language(tmp_path: Path, lang: str) -> None:
    host = write(tmp_path, "host.cnlog", host_log())
    forked_seat = write(tmp_path, "seat2.cnlog", seat_copy(forked(host_log()), 2))
    seat = write(tmp_path, "seat1.cnlog", seat_copy(host_log(), 1))
    short = write(tmp_path, "short.cnlog", cut(host_log(), 20))
    data = seat_copy(host_log(), 3)
    target = list(iter_records(data))[15]
    body_at = data.index(target.body, target.offset)
    altered = bytearray(data)
    altered[body_at + len(target.body) - 1] ^= 0x01
    damaged = write(tmp_path, "seat3.cnlog", bytes(altered))
    try:
        said = [
            run("--lang", lang, "audit", "--copies", host, forked_seat).output,
            run("--lang", lang, "audit", "--copies", short, seat, damaged).output,
        ]
    finally:
        set_language("en")
    text = re.sub(r"\S+\.cnlog|\bbot-\d\b", "", "\n".join(said))
    _ = translator(lang).gettext
    for head in ("Copies of table {table}: {verdict}.", "Altered copy: {reason}", "Note: {note}"):
        assert _(head).split("{")[0] in text, text
    assert english_sentences(text) == [], text
