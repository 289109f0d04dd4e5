"""canasta-replay export: text, JSON, a self-contained HTML page; per-seat exports keep secrets."""

from __future__ import annotations

import html
import io
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from headless import MISSING, chromium, dump_dom

from canasta_net.canasta.position import seat_view
from canasta_net.canasta.rules import preset
from canasta_net.log import iter_records, redact_for_seat
from canasta_net.log import records as R
from canasta_net.table.local import recorded_match
from replay.annotations import sidecar_path
from replay.cli import main
from replay.describe import describe_step
from replay.export_html import embed_json
from replay.timeline import Timeline, load_timeline
from replay.views import SEAT, Perspective

SEED = 11
CARD = re.compile(r"(?<![0-9A-Za-z])(?:10|[2-9AJQK])[CDHS](?![0-9A-Za-z])|(?<![0-9A-Za-z])JK\b")
DATA = re.compile(r'<script type="application/json" id="game-data">(.*?)</script>', re.S)


@cache
def host_log(hands: int | None = 1) -> bytes:
    buffer = io.BytesIO()
    recorded_match(preset("classic"), buffer, seed=SEED).play(max_hands=hands)
    return buffer.getvalue()


@cache
def timeline() -> Timeline:
    return load_timeline(host_log())


def secret_cards(seat: int) -> set[str]:
    """Cards other seats held in hand 0 that ``seat`` never sees in it."""
    hidden: set[str] = set()
    visible: set[str] = set()
    for step in timeline().steps:
        if step.action:
            visible.update(CARD.findall(step.action))
        if step.state is not None:
            visible.update(CARD.findall(json.dumps(seat_view(step.state, seat))))
            for other in range(step.state.players):
                if other != seat:
                    hidden.update(step.state.faces_text(step.state.hands[other]))
    return hidden - visible


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


@pytest.fixture()
def log_path(tmp_path: Path) -> Path:
    path = tmp_path / "game.cnlog"
    path.write_bytes(host_log())
    return path


@pytest.fixture()
def match_path(tmp_path: Path) -> Path:
    path = tmp_path / "match.cnlog"
    path.write_bytes(host_log(None))
    return path


# --------------------------------------------------------------------------- text and json


def test_text_export_is_a_hand_history_with_a_score_sheet(match_path: Path) -> None:
    result = run("export", str(match_path), "--format", "text")
    assert result.exit_code == 0, result.output
    text = result.stdout
    data = json.loads(run("export", str(match_path), "--format", "json").stdout)
    finished = [h for h in data["hands"] if h["scores"]]
    assert text.count("\n== Hand ") == len(data["hands"]) == len(finished)
    assert "Score sheet" in text and f"Result: {data['result']['text']}." in text
    last = finished[-1]
    assert f"= {last['totals'][0]:>10d}" in text or str(last["totals"][0]) in text
    assert "Validity: valid." in text
    # protocol records stay out of a hand history; actions are in
    assert "commits to its seed" not in text and ": draw" in text
    # hands and turns are counted as players count them, from 1 (the data keeps the log's 0)
    assert data["hands"][0]["hand"] == 0
    assert "\n== Hand 1 · dealer " in text and "\n== Hand 0 " not in text
    assert re.search(r"\] Hand 1 is dealt: ", text)
    first_action = next(s for s in data["steps"] if s["kind"] == R.ACTION)
    assert first_action["action_turn"] == 0
    assert f"[{first_action['record']:>5}] turn   1 " in text
    rows = re.findall(r"^ +(\d+) \| ", text, re.M)
    assert rows == [str(n) for n in range(1, len(finished) + 1)]


def test_json_export_structure(log_path: Path) -> None:
    data = json.loads(run("export", str(log_path), "--format", "json", "--seat", "1").stdout)
    assert data["format"] == "canasta-replay/export/1"
    assert data["perspective"] == {"kind": "seat", "seat": 1}
    assert data["log"]["header_hash"] == timeline().header_hash.hex()
    assert len(data["steps"]) == data["log"]["records"] == len(list(iter_records(host_log())))
    assert data["validity"]["verdict"] == "incomplete"
    assert [t["seats"] for t in data["teams"]] == [[0, 2], [1, 3]]
    views = [s["view"] for s in data["steps"] if s["view"] is not None]
    assert views and all(v["seat"] == 1 and "hand" in v and "hands" not in v for v in views)
    action = next(s for s in data["steps"] if s["kind"] == R.ACTION)
    assert action["action"] and action["seat"] is not None and action["action_turn"] == 0
    # the machine fields keep the log's and the engine's numbers; the sentences count from 1
    deal = next(s for s in data["steps"] if s["kind"] == R.DEAL)
    assert (deal["hand"], deal["turn"]) == (0, 0) and deal["text"].startswith("Hand 1 is dealt")
    hand = data["hands"][0]
    assert hand["checkpoint_signers"] == [0, 1, 2, 3] and hand["end"]["reason"]
    public = json.loads(run("export", str(log_path), "--format", "json", "--public").stdout)
    assert all(
        "hand" not in s["view"] and "hands" not in s["view"] for s in public["steps"] if s["view"]
    )
    face_up = json.loads(run("export", str(log_path), "--format", "json").stdout)
    assert face_up["perspective"]["kind"] == "all"
    assert all(len(s["view"]["hands"]) == 4 for s in face_up["steps"] if s["view"])


def test_a_seats_copy_exports_as_that_seat_would(tmp_path: Path) -> None:
    copy = tmp_path / "seat0.cnlog"
    copy.write_bytes(b"".join(redact_for_seat(r, 0) for r in iter_records(host_log())))
    result = run("export", str(copy), "--format", "json", "--seat", "0")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    host = json.loads(run_export_for(host_log(), tmp_path, "--seat", "0"))
    assert [s["text"] for s in data["steps"]] == [s["text"] for s in host["steps"]]
    assert [s["view"] for s in data["steps"]] == [s["view"] for s in host["steps"]]


def run_export_for(data: bytes, tmp_path: Path, *options: str) -> str:
    path = tmp_path / "x.cnlog"
    path.write_bytes(data)
    return str(run("export", str(path), "--format", "json", *options).stdout)


# --------------------------------------------------------------------------- hidden cards


@pytest.mark.parametrize("seat", [0, 1, 2, 3])
@pytest.mark.parametrize("fmt", ["text", "json", "html"])
def test_a_per_seat_export_never_holds_another_seats_hidden_cards(
    log_path: Path, seat: int, fmt: str
) -> None:
    secret = secret_cards(seat)
    assert secret, "the test needs cards that stay hidden"
    result = run("export", str(log_path), "--format", fmt, "--seat", str(seat))
    assert result.exit_code == 0
    output = result.stdout
    if fmt == "html":
        match = DATA.search(output)
        assert match is not None
        output = match.group(1)
    assert CARD.findall(output), "the scan must see cards at all"
    leaked = set(CARD.findall(output)) & secret
    assert not leaked
    face_up = run("export", str(log_path), "--format", fmt).stdout
    assert set(CARD.findall(face_up)) & secret  # the scan does find them where they are shown


def test_annotations_on_an_unfinished_hand_are_withheld_from_seat_exports(tmp_path: Path) -> None:
    records = list(iter_records(host_log()))
    hand_end = next(r.index for r in records if r.kind == R.HAND_END)
    path = tmp_path / "live.cnlog"
    path.write_bytes(host_log()[: records[hand_end - 1].offset])
    assert (
        run(
            "annotate",
            str(path),
            "--at",
            "20",
            "--comment",
            "seat 2 holds the KH",
            "--author",
            "host",
        ).exit_code
        == 0
    )
    seat = json.loads(run("export", str(path), "--format", "json", "--seat", "1").stdout)
    assert seat["annotations"] == [] and seat["withheld_annotations"] == 1
    assert "seat 2 holds" not in run("export", str(path), "--format", "text", "--seat", "1").stdout
    face_up = json.loads(run("export", str(path), "--format", "json").stdout)
    assert len(face_up["annotations"]) == 1 and face_up["withheld_annotations"] == 0
    # once the hand is over (its seeds public) the annotation is shown to everyone
    done = tmp_path / "done.cnlog"
    done.write_bytes(host_log())
    sidecar_path(done).write_text(sidecar_path(path).read_text())
    seat = json.loads(run("export", str(done), "--format", "json", "--seat", "1").stdout)
    assert len(seat["annotations"]) == 1


# --------------------------------------------------------------------------- html


def test_the_html_page_is_self_contained_and_carries_the_game(log_path: Path) -> None:
    run(
        "annotate",
        str(log_path),
        "--at",
        "30",
        "--comment",
        "Look </script> here",
        "--cards",
        "KH",
        "--author",
        "eve <b>",
    )
    out = log_path.with_suffix(".html")
    result = run("export", str(log_path), "--format", "html", "-o", str(out))
    assert result.exit_code == 0 and "Wrote" in result.stderr
    page = out.read_text()
    for forbidden in ("http:", "https:", "//cdn", " src=", "@import", "url("):
        assert forbidden not in page, forbidden
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    match = DATA.search(page)
    assert match is not None
    data = json.loads(match.group(1))
    expected = json.loads(run("export", str(log_path), "--format", "json").stdout)
    assert data == expected
    assert data["annotations"][0]["comment"] == "Look </script> here"
    assert page.count("</script>") == 2  # the comment cannot close the data element
    assert "ArrowLeft" in page and "ArrowRight" in page and "Home" in page and "End" in page
    assert "<" not in embed_json({"x": "</script><!--"})


@pytest.mark.skipif(
    chromium() is None,
    reason=MISSING,
)
def test_the_html_page_renders_the_table_in_headless_chromium(
    log_path: Path, tmp_path: Path
) -> None:
    record = next(s.record for s in timeline().steps if s.kind == R.ACTION and s.record > 40)
    run(
        "annotate",
        str(log_path),
        "--at",
        str(record),
        "--comment",
        "Rendered note",
        "--glyph",
        "!?",
        "--author",
        "ann",
    )
    out = tmp_path / "game.html"
    assert (
        run("export", str(log_path), "--format", "html", "--seat", "2", "-o", str(out)).exit_code
        == 0
    )
    completed = dump_dom(f"{out.as_uri()}#record={record}", tmp_path / "profile")
    dom = completed.stdout
    assert completed.returncode == 0 and '<div id="table"' in dom, completed.stderr[-2000:]
    table = dom[dom.index('<div id="table"') :]
    assert f"Record {record} of {timeline().last_record}" in dom
    text = describe_step(timeline(), timeline().steps[record], Perspective(SEAT, 2))
    assert f'<div id="description" aria-live="polite">{html.escape(text, quote=False)}<' in dom
    for seat in range(4):
        assert f'data-seat="{seat}"' in table and f"seat {seat} (bot-{seat})" in table
    assert "(you)" in table and 'class="card back"' in table  # seat 2's view: others face down
    assert "Rendered note" in dom and "!?" in dom
    assert "Score sheet" in dom and "<td>1</td>" in dom and "<td>0</td>" not in dom
    step = timeline().steps[record]
    assert step.hand == 0 and step.turn is not None
    assert f"Record {record} of {timeline().last_record} · hand 1 · turn {step.turn + 1}" in dom
    assert f"Hand 1 · turn {step.turn + 1} · dealer" in table
