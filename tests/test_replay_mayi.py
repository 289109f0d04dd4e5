"""canasta-replay on "May I?" logs: audit, show, annotate (what-if lines) and export, and never a
seat another seat's hidden cards (May I?'s discard pile is public; its stock and hands are not)."""

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

from canasta_net import mayi
from canasta_net.cards import face_text
from canasta_net.games import MAY_I
from canasta_net.log import iter_records, redact_for_seat
from canasta_net.log import records as R
from canasta_net.table.local import recorded_match
from replay.audit import audit_source
from replay.cli import main
from replay.describe import describe_step
from replay.errors import PositionUnknown, WhatIfError
from replay.export_json import build_export
from replay.render import render_step
from replay.stepper import Stepper
from replay.timeline import Step, Timeline, load_timeline
from replay.views import ALL, PUBLIC, SEAT, Perspective
from replay.whatif import play_line

# Seed 3: the first deal is short (many cards stay hidden from each seat), and the two deals hold
# buys by permission (``allow``), refusals (``deny``), a pile turned over and a stock run out.
SEED = 3
CARD = re.compile(r"(?<![0-9A-Za-z])(?:10|[2-9AJQK])[CDHS](?![0-9A-Za-z])")
DATA = re.compile(r'<script type="application/json" id="game-data">(.*?)</script>', re.S)
SEATS = 4


@cache
def mayi_log(deals: int | None = 2, seed: int = SEED, players: int = SEATS) -> bytes:
    buffer = io.BytesIO()
    recorded_match(mayi.preset("may-i", players), buffer, seed=seed).play(max_hands=deals)
    return buffer.getvalue()


@cache
def timeline(deals: int | None = 2) -> Timeline:
    return load_timeline(mayi_log(deals))


def seat_copy(data: bytes, seat: int) -> bytes:
    return b"".join(redact_for_seat(record, seat) for record in iter_records(data))


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def texts(state: Any, cards: list[int]) -> list[str]:
    return [face_text(f) for f in state.faces(cards)]


def view_of(tl: Timeline, state: Any, seat: int | None) -> dict[str, Any]:
    """The engine's own view for ``seat`` (None: a spectator's, without any hand)."""
    view = mayi.seat_view(state, 0 if seat is None else seat)
    if seat is None:
        del view["hand"]
    return view


def secret_cards(tl: Timeline, seat: int | None) -> set[str]:
    """Faces held in other seats' hands or in the stock that ``seat`` never sees in the log."""
    hidden: set[str] = set()
    visible: set[str] = set()
    for step in tl.steps:
        if step.action:
            visible.update(CARD.findall(step.action))
        state = step.state
        if state is None:
            continue
        visible.update(CARD.findall(json.dumps(view_of(tl, state, seat))))
        hidden.update(texts(state, state.stock))
        for other in range(state.players):
            if other != seat:
                hidden.update(texts(state, state.hands[other]))
    return hidden - visible


def hidden_at(tl: Timeline, step: Step, seat: int | None) -> set[str]:
    """Faces that are only in hidden places (others' hands, the stock) around ``step`` as
    ``seat`` sees it: no copy of them is visible to it before or after the record."""
    hidden: set[str] = set()
    visible: set[str] = set(CARD.findall(step.action or ""))
    for state in (step.before, step.state):
        if state is None:
            continue
        visible.update(CARD.findall(json.dumps(view_of(tl, state, seat))))
        hidden.update(texts(state, state.stock))
        for other in range(state.players):
            if other != seat:
                hidden.update(texts(state, state.hands[other]))
    return hidden - visible


def perspective_for(seat: int | None) -> Perspective:
    return Perspective(PUBLIC) if seat is None else Perspective(SEAT, seat)


def buys(tl: Timeline) -> list[tuple[Step, int]]:
    """Every action after which a seat had bought a discard, with the buyer."""
    found = []
    for step in tl.steps:
        if step.kind == R.ACTION and step.before is not None and step.state is not None:
            for seat in range(SEATS):
                if step.state.buys[seat] > step.before.buys[seat]:
                    found.append((step, seat))
    return found


# --------------------------------------------------------------------------- audit


def test_a_mayi_match_audits_valid_and_the_lowest_total_wins(tmp_path: Path) -> None:
    path = write(tmp_path, "match.cnlog", mayi_log(None))
    result = run("audit", str(path))
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "VALID" in text and "wins with the lowest total after 5 deals" in text
    assert "team" not in text.lower()
    assert "5 deals closed" in text
    data = json.loads(run("audit", "--json", str(path)).stdout)
    report = data["files"][0]
    assert report["log"]["game"] == MAY_I and report["log"]["variant"] == "may-i"
    result_ = report["match"]["result"]
    totals = result_["totals"]
    assert result_["winner"] == totals.index(min(totals)) and totals.count(min(totals)) == 1
    assert "team" not in result_["text"] and "lowest total" in result_["text"]
    assert len(report["hands"]) == 5
    assert all(
        hand["scores"] == [{"total": s["total"]} for s in hand["scores"]]
        for hand in report["hands"]
    )
    assert all(hand["checkpoint_signers"] == [0, 1, 2, 3] for hand in report["hands"])


@pytest.mark.parametrize("seat", [0, 2])
def test_a_seats_own_copy_of_a_mayi_log_is_valid(seat: int) -> None:
    report = audit_source(seat_copy(mayi_log(None), seat))
    assert report.verdict == "valid", report.summary
    assert report.copy == {"kind": "seat", "payload_seats": [seat]}
    assert report.match["result"] == audit_source(mayi_log(None)).match["result"]


def test_an_unfinished_mayi_log_is_incomplete_in_deals(tmp_path: Path) -> None:
    path = write(tmp_path, "two.cnlog", mayi_log())
    result = run("audit", str(path))
    assert result.exit_code == 0
    assert (
        "INCOMPLETE" in result.stdout
        and "after deal 2's checkpoint, before deal 3" in result.stdout
    )
    assert "2 deals closed" in result.stdout


def test_three_and_five_player_games_audit_and_export() -> None:
    for players in (3, 5):
        data = mayi_log(1, 4, players)
        report = audit_source(data)
        assert report.verdict == "incomplete" and report.failure is None, report.summary
        assert report.hands[0]["checkpoint_signers"] == list(range(players))
        tl = load_timeline(data)
        export = build_export(tl, Perspective(ALL))
        assert [t["seats"] for t in export["teams"]] == [[s] for s in range(players)]
        views = [s["view"] for s in export["steps"] if s["view"] is not None]
        assert views and all(len(v["hands"]) == len(v["melds"]) == players for v in views)


# --------------------------------------------------------------------------- show


def test_show_draws_the_mayi_table_for_each_perspective(tmp_path: Path) -> None:
    path = str(write(tmp_path, "game.cnlog", mayi_log()))
    tl = timeline()
    deal = tl.hands[1].deal_record
    seat = run("show", path, "--at", "hand:2", "--seat", "2")  # the second deal
    assert seat.exit_code == 0, seat.output
    out = seat.stdout
    assert f"Record {deal} of {tl.last_record} (deal) · deal 2, turn 1" in out
    # counted as docs/may-i.md counts the contracts: deal 2 is one set and one sequence
    assert "Deal 2 is dealt" in out and "the contract is 1 set + 1 sequence" in out
    assert "Deal 2 · contract 1 set + 1 sequence" in out
    assert "Your hand:" in out and "(you)" in out and "stock, next card last" not in out
    assert "pile, bottom to top:" in out  # the discard pile is public in May I?
    assert "of 3 buys" in out and "not down" in out
    assert "Totals (penalty points, the lowest wins): seat 0 (bot-0) " in out
    assert "team" not in out
    public = run("show", path, "--at", "deal:2", "--public").stdout
    assert f"Record {deal} of" in public
    assert "(you)" not in public and "Your hand" not in public
    face_up = run("show", path, "--at", "hand:2/turn:3", "--all").stdout
    assert "deal 2, turn 3" in face_up and "stock, next card last:" in face_up
    every_hand = re.compile(r"^[ >] seat \d \(bot-\d\): \d+ cards? · .* buys: [0-9AJQK]", re.M)
    assert len(every_hand.findall(face_up)) == SEATS


def test_show_a_buy_window_melds_and_the_deal_end(tmp_path: Path) -> None:
    tl = timeline()
    asked = next(
        s for s in tl.steps if s.state is not None and s.state.phase is mayi.Phase.BUY_PERMISSION
    )
    text = render_step(tl, asked, Perspective(PUBLIC))
    assert "asks to buy" in text and "to allow or deny:" in text
    assert "is asked for permission first" in text
    down = next(s for s in tl.steps if s.action and s.action.startswith("meld "))
    text = render_step(tl, down, Perspective(PUBLIC))
    owner = down.author
    assert f"seat {owner} (bot-{owner})'s melds:" in text and f"  {owner}.0: " in text
    end = tl.steps[tl.hands[0].end_record or 0]
    text = render_step(tl, end, Perspective(PUBLIC))
    assert "Deal 1 ends" in text and "penalty points (total" in text and "team" not in text


def test_the_stepper_moves_through_a_mayi_game() -> None:
    tl = timeline()
    stepper = Stepper(tl, Perspective(SEAT, 1))
    assert "Record 0 of" in stepper.render()
    stepper.execute("h 2")
    assert stepper.position == tl.hands[1].deal_record
    stepper.execute("t 4")
    assert tl.steps[stepper.position].turn == 3 and tl.steps[stepper.position].hand == 1
    stepper.execute("j deal:1")
    assert stepper.position == tl.hands[0].deal_record
    reply = stepper.execute("n 2")
    assert "seat 1 (bot-1)'s view" in reply.text
    stepper.execute("home")
    assert "No deal is being played here" in stepper.execute("t 2").text
    assert "Deal 9 was never dealt" in stepper.execute("h 9").text
    assert "Deals count from 1: the first is deal:1." in stepper.execute("h 0").text


def test_a_seat_sees_its_own_draws_and_penalty_cards_only() -> None:
    tl = timeline()
    draw = next(s for s in tl.steps if s.action == "draw" and s.author == 1)
    assert re.search(
        r"\(drew (?:10|[2-9AJQK])[CDHS]", describe_step(tl, draw, Perspective(SEAT, 1))
    )
    assert "(drew a card" in describe_step(tl, draw, Perspective(SEAT, 2))
    step, buyer = next((s, b) for s, b in buys(tl) if s.author != b)  # a buy by permission
    other = next(s for s in range(SEATS) if s != buyer)
    mine = describe_step(tl, step, Perspective(SEAT, buyer))
    theirs = describe_step(tl, step, Perspective(SEAT, other))
    assert f"seat {buyer} (bot-{buyer}) bought" in theirs
    assert re.search(r"with the penalty card (?:10|[2-9AJQK])[CDHS]", mine)
    assert "with a penalty card" in theirs


@pytest.mark.parametrize("seat", [0, 1, 2, 3, None])
def test_no_step_shows_a_seat_a_card_hidden_from_it(seat: int | None) -> None:
    tl = timeline()
    perspective = perspective_for(seat)
    export = build_export(tl, perspective)
    checked = 0
    for step, exported in zip(tl.steps, export["steps"], strict=True):
        if step.state is None:
            continue
        secret = hidden_at(tl, step, seat)
        shown = set(CARD.findall(render_step(tl, step, perspective)))
        shown |= set(CARD.findall(exported["text"] + json.dumps(exported["view"])))
        assert not shown & secret, (step.record, step.action, shown & secret)
        view = exported["view"]
        assert "hands" not in view and "stock" not in view
        assert ("hand" in view) == (seat is not None)
        checked += bool(secret)
    assert checked > 50


def test_a_seats_copy_of_a_mayi_log_is_shown_through_its_eyes(tmp_path: Path) -> None:
    path = str(write(tmp_path, "seat2.cnlog", seat_copy(mayi_log(), 2)))
    result = run("show", path, "--at", "40")
    assert result.exit_code == 0 and "seat 2 (bot-2)'s view" in result.stdout
    assert "(you)" in result.stdout
    records = list(iter_records(mayi_log()))
    hand_end = next(r.index for r in records if r.kind == R.HAND_END)
    cut = write(tmp_path, "seat1.cnlog", seat_copy(mayi_log()[: records[hand_end - 2].offset], 1))
    unfinished = run("show", str(cut), "--at", str(hand_end - 4))
    assert unfinished.exit_code == 0 and "cannot show this deal" in unfinished.stdout


# --------------------------------------------------------------------------- annotate


def first_discard_to_take(tl: Timeline) -> int:
    """The first record of the first deal after which the player to move may take a discard
    (the preset deals no upcard: the first discard starts the pile)."""
    deal, end = tl.hands[0].deal_record, tl.hands[0].end_record
    assert deal is not None and end is not None
    return next(
        index
        for index in range(deal, end)
        if (state := tl.steps[index].state) is not None
        and state.phase.value == "draw"
        and state.pile_top is not None
    )


def test_a_mayi_what_if_line_is_played_by_the_mayi_engine(tmp_path: Path) -> None:
    tl = timeline()
    path = write(tmp_path, "game.cnlog", mayi_log())
    deal = first_discard_to_take(tl)
    top = tl.steps[deal].state.pile_top
    result = run(
        "annotate",
        str(path),
        "--at",
        str(deal),
        "--line",
        f" TAKE-DISCARD {face_text(top)} ;",
        "--comment",
        "Take it",
        "--glyph",
        "!",
        "--author",
        "ann",
    )
    assert result.exit_code == 0, result.output
    assert "the deal goes on" in result.stdout
    sidecar = json.loads((tmp_path / "game.cnlog.annotations.json").read_text())
    line = sidecar["annotations"][0]["line"]
    assert line["actions"] == [f"take-discard {face_text(top)}"]
    position = line["outcome"]["position"]
    assert position["game"] == MAY_I and position["phase"] == "play"
    assert "hand" not in position and "hands" not in position and "stock" not in position
    listed = run("annotations", str(path)).stdout
    assert f"record {deal}, deal 1 turn 2" in listed and "Take it" in listed
    shown = run("show", str(path), "--at", str(deal)).stdout
    assert "what-if: take-discard" in shown


def test_the_actual_continuation_of_a_mayi_deal_reaches_the_logged_scores() -> None:
    tl = timeline()
    steps = tl.steps
    end = tl.hands[0].end_record
    assert end is not None
    start = end - 6
    line = [s.action for s in steps[start + 1 : end] if s.action is not None]
    assert len(line) == 5
    outcome = play_line(tl, start, line).outcome
    assert outcome["ends_hand"] and outcome["end"]["reason"] == steps[end].info["reason"]
    assert outcome["end"]["went_out"] == steps[end].info["went_out"]
    assert "going_out_bonus" not in outcome["end"]
    assert outcome["scores"] == steps[end].info["scores"]
    assert outcome["totals"] == steps[end].info["totals"]
    assert "wins" not in outcome["summary"] and "penalty points (total" in outcome["summary"]
    assert "team" not in outcome["summary"]
    assert not steps[start].state.is_over  # the game is untouched


def test_illegal_mayi_what_if_lines_are_refused_with_the_engines_reason(tmp_path: Path) -> None:
    tl = timeline()
    deal = tl.hands[0].deal_record
    assert deal is not None
    path = write(tmp_path, "game.cnlog", mayi_log())
    refused = run("annotate", str(path), "--at", str(deal), "--line", "draw; draw")
    assert refused.exit_code == 1 and "[wrong-phase]" in refused.stderr
    assert not (tmp_path / "game.cnlog.annotations.json").exists()
    nothing = f"take-discard {face_text(0)}"  # no upcard: nothing to take on the first turn
    with pytest.raises(WhatIfError) as error:
        play_line(tl, deal, [nothing])
    assert (error.value.index, error.value.code) == (0, "pile-empty")
    deal = first_discard_to_take(tl)
    state = tl.steps[deal].state
    assert state is not None
    take = f"take-discard {face_text(state.pile_top)}"
    held = [face_text(f) for f in state.hand_faces(state.to_move)]
    absent = next(face_text(f) for f in range(52) if face_text(f) not in held)
    cases = [
        (["take-pile 9C 9D"], 0, "bad-action"),  # a Canasta action is not a May I? action
        (["pass"], 0, "no-buy-window"),
        (["draw", "discard 9Z"], 1, "bad-action"),
        ([take, f"discard {absent}"], 1, "card-not-in-hand"),
        ([take, "meld " + " ".join(held[:3])], 1, "contract-not-met"),
    ]
    for actions, index, code in cases:
        with pytest.raises(WhatIfError) as error:
            play_line(tl, deal, actions)
        assert (error.value.index, error.value.code) == (index, code), actions
    with pytest.raises(PositionUnknown):
        play_line(tl, 2, ["draw"])  # a commit record: no deal on the table
    with pytest.raises(WhatIfError) as error:
        play_line(tl, tl.hands[0].end_record or 0, ["draw"])
    assert error.value.code == "deal-over"


# --------------------------------------------------------------------------- export


def test_the_text_export_of_a_mayi_match(tmp_path: Path) -> None:
    path = write(tmp_path, "match.cnlog", mayi_log(None))
    text = run("export", str(path), "--format", "text").stdout
    data = json.loads(run("export", str(path), "--format", "json").stdout)
    assert (
        text.count("\n== Deal ") == 5
        and "== Deal 1 · dealer seat 0 (bot-0) · contract 2 sets" in text
    )
    assert "== Deal 5 · dealer" in text and "contract 2 sets + 1 sequence" in text  # the fifth
    assert "penalty points add up, the lowest total wins" in text
    assert "Score sheet (penalty points: the lowest total wins)" in text
    assert f"Result: {data['result']['text']}." in text and "with the lowest total" in text
    assert "Teams:" not in text and "team " not in text and "minimums" not in text
    assert re.search(r"\n {8}seat \d \(bot-\d\): \d+ penalty points?\n", text)
    assert "commits to its seed" not in text and ": draw" in text


def test_the_json_export_of_a_mayi_game(tmp_path: Path) -> None:
    path = write(tmp_path, "game.cnlog", mayi_log())
    data = json.loads(run("export", str(path), "--format", "json", "--seat", "1").stdout)
    assert data["log"]["game"] == MAY_I and data["log"]["lowest_wins"] is True
    assert [t["name"] for t in data["teams"]] == [f"seat {s} (bot-{s})" for s in range(SEATS)]
    assert [s["team"] for s in data["seats"]] == list(range(SEATS))
    views = [s["view"] for s in data["steps"] if s["view"] is not None]
    assert views and all(v["seat"] == 1 and "hands" not in v and "stock" not in v for v in views)
    assert all(len(v["melds"]) == SEATS and "contract" in v and "buys" in v for v in views)
    hand = data["hands"][0]
    assert hand["minimums"] == [] and hand["scores"] == [{"total": t} for t in hand["totals"]]
    face_up = json.loads(run("export", str(path), "--format", "json").stdout)
    assert all(len(s["view"]["hands"]) == SEATS for s in face_up["steps"] if s["view"])
    assert all("stock" in s["view"] for s in face_up["steps"] if s["view"])


def test_a_seats_copy_of_a_mayi_log_exports_as_that_seat_would(tmp_path: Path) -> None:
    copy = write(tmp_path, "seat0.cnlog", seat_copy(mayi_log(), 0))
    host = write(tmp_path, "host.cnlog", mayi_log())
    mine = json.loads(run("export", str(copy), "--format", "json", "--seat", "0").stdout)
    theirs = json.loads(run("export", str(host), "--format", "json", "--seat", "0").stdout)
    assert [s["text"] for s in mine["steps"]] == [s["text"] for s in theirs["steps"]]
    assert [s["view"] for s in mine["steps"]] == [s["view"] for s in theirs["steps"]]


@pytest.mark.parametrize("seat", [0, 1, 2, 3, None])
@pytest.mark.parametrize("fmt", ["text", "json", "html"])
def test_a_per_seat_mayi_export_never_holds_another_seats_hidden_cards(
    tmp_path: Path, seat: int | None, fmt: str
) -> None:
    tl = timeline(1)
    secret = secret_cards(tl, seat)
    assert secret, "the test needs cards that stay hidden"
    path = write(tmp_path, "deal.cnlog", mayi_log(1))
    view = ["--public"] if seat is None else ["--seat", str(seat)]
    result = run("export", str(path), "--format", fmt, *view)
    assert result.exit_code == 0
    output = result.stdout
    if fmt == "html":
        match = DATA.search(output)
        assert match is not None
        output = match.group(1)
    assert CARD.findall(output), "the scan must see cards at all"
    assert not set(CARD.findall(output)) & secret
    face_up = run("export", str(path), "--format", fmt).stdout
    assert set(CARD.findall(face_up)) & secret  # the scan does find them where they are shown


def test_the_mayi_html_page_carries_the_game(tmp_path: Path) -> None:
    path = write(tmp_path, "game.cnlog", mayi_log())
    out = tmp_path / "game.html"
    result = run("export", str(path), "--format", "html", "--seat", "2", "-o", str(out))
    assert result.exit_code == 0 and "Wrote" in result.stderr
    page = out.read_text()
    for forbidden in ("http:", "https:", "//cdn", " src=", "@import", "url("):
        assert forbidden not in page, forbidden
    match = DATA.search(page)
    assert match is not None
    expected = json.loads(run("export", str(path), "--format", "json", "--seat", "2").stdout)
    assert json.loads(match.group(1)) == expected
    assert "renderSeatsTable" in page and 'DATA.log.game === "may-i"' in page


@pytest.mark.skipif(
    chromium() is None,
    reason=MISSING,
)
def test_the_mayi_html_page_renders_the_table_in_headless_chromium(tmp_path: Path) -> None:
    tl = timeline()
    step, _ = buys(tl)[0]
    asked = next(s for s in tl.steps if s.record > step.record and s.state is not None)
    melded = next(s for s in tl.steps if s.state is not None and sum(map(len, s.state.melds)) >= 2)
    record = max(asked.record, melded.record)
    path = write(tmp_path, "game.cnlog", mayi_log())
    out = tmp_path / "game.html"
    assert (
        run("export", str(path), "--format", "html", "--seat", "2", "-o", str(out)).exit_code == 0
    )
    completed = dump_dom(f"{out.as_uri()}#record={record}", tmp_path / "profile")
    dom = completed.stdout
    assert completed.returncode == 0 and '<div id="table"' in dom, completed.stderr[-2000:]
    table = dom[dom.index('<div id="table"') : dom.index('<div id="totals"')]
    state, hand = tl.steps[record].state, tl.steps[record].hand
    assert state is not None and hand is not None
    assert f"Record {record} of {tl.last_record} · deal {hand + 1}" in dom
    assert "May I? (may-i)" in dom
    text = describe_step(tl, tl.steps[record], Perspective(SEAT, 2))
    assert f'<div id="description" aria-live="polite">{html.escape(text, quote=False)}<' in dom
    assert f"contract {state.contract}" in table and "Discard pile, bottom to top:" in table
    for seat in range(SEATS):
        assert f'data-seat="{seat}"' in table and f"seat {seat} (bot-{seat})" in table
        assert f"{state.buys[seat]} of 3 buys" in table
        for number in range(len(state.melds[seat])):
            assert f'data-meld="{seat}.{number}"' in table
    assert "(you)" in table and 'class="card back"' in table  # seat 2's view: others face down
    assert "Stock, next card last" not in table
    assert "Penalty points (the lowest total wins):" in dom
    assert "Score sheet" in dom and "<th>deal</th>" in dom


def test_a_mayi_log_from_before_the_upcard_knob_still_replays_with_its_upcard() -> None:
    """tests/data/mayi-with-upcard.cnlog: one deal for three recorded by 5158114, when the
    preset turned an upcard (its rules say nothing of ``upcard``). The preset now deals none
    (seed 003), and such a log still audits and replays as it was played."""
    data = (Path(__file__).parent / "data" / "mayi-with-upcard.cnlog").read_bytes()
    report = audit_source(data)
    assert report.verdict == "incomplete" and report.failure is None, report.summary
    tl = load_timeline(data)
    deal = tl.hands[0].deal_record
    assert deal is not None
    state = tl.steps[deal].state
    assert state.rules.upcard and len(state.pile) == 1 and len(state.stock) == 104 - 31
    assert not mayi.preset("may-i", 3).upcard
