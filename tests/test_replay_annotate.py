"""Annotations: bound to their game and record, several annotators, what-if lines by the engine."""

from __future__ import annotations

import io
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from canasta_net.canasta.rules import preset
from canasta_net.log import iter_records, redact_for_seat
from canasta_net.log import records as R
from canasta_net.table.local import recorded_match
from replay.annotations import (
    GLYPHS,
    annotation_set_from_dict,
    load_annotations,
    parse_glyph,
    sidecar_path,
)
from replay.cli import main
from replay.errors import AnnotationError, PositionUnknown, WhatIfError
from replay.timeline import Timeline, load_timeline
from replay.whatif import play_line, split_line

SEED = 21


@cache
def host_log(seed: int = SEED) -> bytes:
    buffer = io.BytesIO()
    recorded_match(preset("classic"), buffer, seed=seed).play(max_hands=1)
    return buffer.getvalue()


@cache
def timeline() -> Timeline:
    return load_timeline(host_log())


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


@pytest.fixture()
def log_path(tmp_path: Path) -> Path:
    path = tmp_path / "game.cnlog"
    path.write_bytes(host_log())
    return path


def sidecar(path: Path) -> dict[str, Any]:
    return json.loads(sidecar_path(path).read_text())  # type: ignore[no-any-return]


def first_action_record() -> int:
    return next(s.record for s in timeline().steps if s.kind == R.ACTION)


# --------------------------------------------------------------------------- the file


def test_annotate_writes_a_sidecar_bound_to_the_log(log_path: Path) -> None:
    record = first_action_record()
    result = run(
        "annotate",
        str(log_path),
        "--at",
        str(record),
        "--comment",
        "A slow start.",
        "--glyph",
        "?!",
        "--cards",
        "kh 10s jk",
        "--author",
        "alice",
    )
    assert result.exit_code == 0, result.output
    assert f"to record {record}" in result.stdout
    data = sidecar(log_path)
    assert data["format"] == "canasta-replay/annotations/1"
    assert data["log"]["header_hash"] == timeline().header_hash.hex()
    assert data["log"]["table"] == timeline().header.table.hex()
    (note,) = data["annotations"]
    assert note["record"] == record
    assert note["record_hash"] == timeline().steps[record].hash.hex()
    assert (note["glyph"], note["nag"]) == ("?!", 6)
    assert note["cards"] == ["KH", "10S", "JK"]
    assert (note["author"], note["comment"], note["line"]) == ("alice", "A slow start.", None)


def test_annotations_survive_a_round_trip(log_path: Path) -> None:
    run("annotate", str(log_path), "--at", "hand:1/turn:3", "--comment", "one", "--author", "a")
    run(
        "annotate",
        str(log_path),
        "--at",
        "hand:1/turn:3",
        "--glyph",
        "!!",
        "--author",
        "b",
        "--line",
        "draw",
    )
    data = sidecar(log_path)
    loaded = load_annotations(sidecar_path(log_path), timeline())
    assert loaded.to_dict() == data
    assert annotation_set_from_dict(loaded.to_dict(), "memory").to_dict() == data
    listing = run("annotations", str(log_path))
    assert listing.exit_code == 0
    assert listing.stdout.count("hand 1 turn 3") == 1 and "a: one" in listing.stdout
    (record,) = {a["record"] for a in data["annotations"]}
    assert timeline().steps[record].turn == 2  # the engine's third turn
    assert "!! b:" in listing.stdout and "what-if: draw" in listing.stdout
    as_json = run("annotations", str(log_path), "--json")
    assert json.loads(as_json.stdout) == data
    export = json.loads(run("export", str(log_path), "--format", "json").stdout)
    assert [a["id"] for a in export["annotations"]] == [a["id"] for a in data["annotations"]]


def test_several_annotators_and_removal(log_path: Path) -> None:
    record = str(first_action_record())
    for author in ("alice", "bob", "carol"):
        assert (
            run(
                "annotate",
                str(log_path),
                "--at",
                record,
                "--comment",
                f"by {author}",
                "--author",
                author,
            ).exit_code
            == 0
        )
    notes = sidecar(log_path)["annotations"]
    assert [n["author"] for n in notes] == ["alice", "bob", "carol"]
    assert len({n["id"] for n in notes}) == 3
    removed = run("annotate", str(log_path), "--remove", notes[1]["id"][:6])
    assert removed.exit_code == 0 and notes[1]["id"] in removed.stdout
    assert [n["author"] for n in sidecar(log_path)["annotations"]] == ["alice", "carol"]
    missing = run("annotate", str(log_path), "--remove", "ffffffffff")
    assert missing.exit_code == 1 and "There is no annotation" in missing.stderr


def test_annotations_refuse_another_game(log_path: Path, tmp_path: Path) -> None:
    run("annotate", str(log_path), "--at", "12", "--comment", "mine", "--author", "a")
    other = tmp_path / "other.cnlog"
    other.write_bytes(host_log(SEED + 1))
    sidecar_path(other).write_text(sidecar_path(log_path).read_text())
    for command in (["annotations"], ["show", "--at", "12"], ["export", "--format", "text"]):
        result = run(command[0], str(other), *command[1:])
        assert result.exit_code == 1, command
        assert "belong to another game" in result.stderr and "Refusing" in result.stderr
    explicit = run("annotations", str(other), "--annotations", str(sidecar_path(log_path)))
    assert explicit.exit_code == 1 and "belong to another game" in explicit.stderr


def test_an_annotation_cannot_move_to_another_record(log_path: Path) -> None:
    run("annotate", str(log_path), "--at", "12", "--comment", "here", "--author", "a")
    data = sidecar(log_path)
    data["annotations"][0]["record"] = 13
    sidecar_path(log_path).write_text(json.dumps(data))
    result = run("annotations", str(log_path))
    assert result.exit_code == 1
    assert "is bound to record 13 with hash" in result.stderr
    data["annotations"][0]["record"] = 100000
    sidecar_path(log_path).write_text(json.dumps(data))
    assert "which this log does not hold" in run("annotations", str(log_path)).stderr


def test_a_seats_copy_of_the_same_game_takes_the_same_annotations(
    log_path: Path, tmp_path: Path
) -> None:
    run("annotate", str(log_path), "--at", "12", "--comment", "shared", "--author", "a")
    copy = tmp_path / "seat3.cnlog"
    copy.write_bytes(b"".join(redact_for_seat(r, 3) for r in iter_records(host_log())))
    result = run("annotations", str(copy), "--annotations", str(sidecar_path(log_path)))
    assert result.exit_code == 0 and "a: shared" in result.stdout


def test_malformed_annotation_files_and_options(log_path: Path) -> None:
    sidecar_path(log_path).write_text("{not json")
    result = run("annotations", str(log_path))
    assert result.exit_code == 1 and "is not valid JSON" in result.stderr
    sidecar_path(log_path).write_text(json.dumps({"format": "canasta-replay/annotations/9"}))
    assert "is malformed" in run("annotations", str(log_path)).stderr
    sidecar_path(log_path).unlink()
    bad_glyph = run("annotate", str(log_path), "--at", "12", "--glyph", "?!?")
    assert bad_glyph.exit_code == 1 and "is not a glyph" in bad_glyph.stderr
    bad_cards = run("annotate", str(log_path), "--at", "12", "--cards", "KX")
    assert bad_cards.exit_code == 1 and "cannot be read" in bad_cards.stderr
    empty = run("annotate", str(log_path), "--at", "12", "--author", "a")
    assert empty.exit_code == 1 and "needs a comment" in empty.stderr
    no_place = run("annotate", str(log_path), "--comment", "where?")
    assert no_place.exit_code == 2 and "--at" in no_place.output


def test_glyphs_and_their_nags() -> None:
    assert GLYPHS == {"!": 1, "?": 2, "!!": 3, "??": 4, "!?": 5, "?!": 6}
    assert parse_glyph("$4") == "??" and parse_glyph("5") == "!?" and parse_glyph(" ! ") == "!"
    with pytest.raises(AnnotationError):
        parse_glyph("$7")


# --------------------------------------------------------------------------- what-if lines


def test_the_actual_continuation_as_a_what_if_line_reaches_the_logged_scores() -> None:
    steps = timeline().steps
    end = timeline().hands[0].end_record
    assert end is not None
    start = end - 5
    line = [s.action for s in steps[start + 1 : end] if s.action is not None]
    assert len(line) == 4
    what_if = play_line(timeline(), start, line)
    outcome = what_if.outcome
    assert outcome["ends_hand"] and outcome["end"]["reason"] == steps[end].info["reason"]
    assert outcome["scores"] == steps[end].info["scores"]
    assert outcome["totals"] == steps[end].info["totals"]
    assert "hands" not in outcome["position"] and "hand" not in outcome["position"]
    # the recorded game is untouched
    assert not steps[start].state.is_over


def test_a_what_if_line_is_stored_in_canonical_form(log_path: Path) -> None:
    deal = timeline().hands[0].deal_record
    result = run(
        "annotate", str(log_path), "--at", str(deal), "--line", " DRAW ;  ", "--author", "a"
    )
    assert result.exit_code == 0, result.output
    line = sidecar(log_path)["annotations"][0]["line"]
    assert line["actions"] == ["draw"] and line["outcome"]["ends_hand"] is False
    # the engine's turn number, and the sentence counting turns as players do
    assert line["outcome"]["turn"] == 0 and line["outcome"]["counts_from"] == 1
    assert "the hand goes on: turn 1, " in line["outcome"]["summary"]
    assert split_line("draw; meld KH KS KD\ndiscard 7C") == ["draw", "meld KH KS KD", "discard 7C"]


def test_an_annotation_file_written_when_turns_counted_from_0_reads_as_today(
    log_path: Path,
) -> None:
    deal = timeline().hands[0].deal_record
    run("annotate", str(log_path), "--at", str(deal), "--line", "draw", "--author", "a")
    data = sidecar(log_path)
    outcome = data["annotations"][0]["line"]["outcome"]
    new_summary = outcome["summary"]
    # as such a file was written: no counts_from, and the summary names the engine's turn_no
    del outcome["counts_from"]
    outcome["summary"] = new_summary.replace(" goes on: turn 1, ", " goes on: turn 0, ")
    sidecar_path(log_path).write_text(json.dumps(data))
    loaded = load_annotations(sidecar_path(log_path), timeline())
    (annotation,) = loaded.annotations
    assert annotation.line is not None and annotation.line.outcome["summary"] == new_summary
    assert annotation.line.outcome["counts_from"] == 1 and annotation.line.outcome["turn"] == 0
    shown = run("show", str(log_path), "--at", str(deal), "--all")
    assert "-> After 1 action the hand goes on: turn 1, " in shown.stdout
    # read again after being written back: renumbered once only
    again = annotation_set_from_dict(loaded.to_dict(), "memory")
    assert again.annotations[0].line is not None
    assert again.annotations[0].line.outcome["summary"] == new_summary
    outcome["counts_from"] = 7
    sidecar_path(log_path).write_text(json.dumps(data))
    unknown = run("annotations", str(log_path))
    assert unknown.exit_code == 1 and "'counts_from' must be 0 or 1" in unknown.stderr


def test_illegal_what_if_lines_are_refused_with_the_engines_reason(log_path: Path) -> None:
    deal = str(timeline().hands[0].deal_record)
    result = run(
        "annotate", str(log_path), "--at", deal, "--line", "draw; discard JK; draw", "--author", "a"
    )
    assert result.exit_code == 1
    assert "illegal at action" in result.stderr
    assert not sidecar_path(log_path).exists()
    wrong_phase = run("annotate", str(log_path), "--at", deal, "--line", "discard 4H")
    assert wrong_phase.exit_code == 1 and "[wrong-phase]" in wrong_phase.stderr
    with pytest.raises(WhatIfError) as error:
        play_line(timeline(), int(deal), ["draw", "fold"])
    assert (error.value.index, error.value.code) == (1, "bad-action")
    with pytest.raises(WhatIfError) as error:
        play_line(timeline(), int(deal), ["draw", "meld KH"])
    assert error.value.code in ("too-few-cards", "card-not-in-hand")
    with pytest.raises(PositionUnknown):
        play_line(timeline(), 2, ["draw"])  # a commit record: no hand on the table
    end = timeline().hands[0].end_record
    with pytest.raises(WhatIfError) as error:
        play_line(timeline(), end or 0, ["draw"])
    assert error.value.code == "hand-over"
