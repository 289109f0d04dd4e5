"""canasta-replay analyze: decisions rated from the seat's information set, kept to resume,
written as annotations that show and export display, reproducible whatever --jobs.

The analyses here sample one or two deals a decision: the numbers mean little, the paths are what
is tested.
"""

from __future__ import annotations

import dataclasses
import io
import json
import random
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from headless import MISSING, chromium, dump_dom

from canasta_net.canasta.rules import preset
from canasta_net.search import SearchBot
from canasta_net.table.local import recorded_match
from replay import analysis_run
from replay.analysis import (
    SEARCH_GAMES,
    analyse,
    decision_seat,
    decision_task,
    decision_tasks,
    information_set,
    mark_for,
)
from replay.analysis_run import ANALYST, analysis_path
from replay.annotations import load_annotations, sidecar_path
from replay.cli import main
from replay.timeline import Timeline, load_timeline

SEED = 5
SEAT = 1  # the random seat: its moves are marked


@cache
def host_log() -> bytes:
    buffer = io.BytesIO()
    kinds = ["greedy", "random", "greedy", "greedy"]
    recorded_match(preset("classic"), buffer, seed=SEED, bot_kinds=kinds).play(max_hands=1)
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


def analysed(path: Path, *extra: str) -> dict[str, Any]:
    result = run("analyze", str(path), "--seat", str(SEAT), "--simulations", "1", "--json", *extra)
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.output)
    return data


# --------------------------------------------------------------------------- information


def _rehidden(state: Any, seat: int, rng: random.Random) -> Any:
    """The same position with every card hidden from ``seat`` (the other hands, the stock) dealt
    anew among those places, each keeping its size; the cards a hand is known to hold (``shown``:
    every seat saw them taken with the pile) stay in it."""
    search = SEARCH_GAMES["canasta"]
    position = search.to_dict(state)
    places = search.hidden_keys(position, seat)
    shown = position.get("shown") or [[] for _ in position["hands"]]
    cards: list[str] = []
    for key, index in places:
        place = list(position[key] if index is None else position[key][index])
        for card in shown[index] if index is not None else []:
            place.remove(card)
        cards += place
    rng.shuffle(cards)
    moved = dict(position)
    moved["hands"] = [list(hand) for hand in position["hands"]]
    for key, index in places:
        known = list(shown[index]) if index is not None else []
        size = len(position[key] if index is None else position[key][index]) - len(known)
        part, cards = cards[:size], cards[size:]
        if index is None:
            moved[key] = part
        else:
            moved[key][index] = known + part
    return search.from_dict(moved)


def _decision(after: int = 20) -> Any:
    return next(s for s in timeline().steps if s.record > after and decision_seat(s) == SEAT)


def test_a_decision_is_analysed_alike_whatever_the_cards_hidden_from_its_seat() -> None:
    step = _decision()
    state = step.before
    other = _rehidden(state, SEAT, random.Random(3))
    game = timeline().game
    search = SEARCH_GAMES["canasta"]
    # the hidden cards differ (another seat's hand, the stock's order), the seat's view does not
    assert search.to_dict(other)["hands"] != search.to_dict(state)["hands"]
    assert search.to_dict(other)["stock"] != search.to_dict(state)["stock"]
    assert game.seat_view(other, SEAT) == game.seat_view(state, SEAT)
    # the log's timeline with that position instead: analysed through the same path as the CLI
    steps = list(timeline().steps)
    steps[step.record] = dataclasses.replace(step, before=other)
    permuted = dataclasses.replace(timeline(), steps=steps)
    settings: dict[str, Any] = {"seed": 7, "simulations": 2, "budget": 0.0}
    (task,) = [t for t in decision_tasks(timeline(), [SEAT], **settings) if t.record == step.record]
    (same,) = [t for t in decision_tasks(permuted, [SEAT], **settings) if t.record == step.record]
    assert task == same  # nothing of the hidden cards reaches the work item
    assert analyse(task) == analyse(same)


def test_an_analysis_that_played_the_face_up_deal_would_be_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The control: were the search to play the deal it is given instead of sampling one, the
    face-up positions would give different numbers, so the test above can fail. Through the
    information set even such a search sees nothing of the hidden cards."""
    step = _decision()
    state, other = step.before, _rehidden(step.before, SEAT, random.Random(3))

    def face_up(self: SearchBot, position: dict[str, Any], *_: Any) -> Any:
        return self.game.from_dict(position)

    monkeypatch.setattr(SearchBot, "_sample", face_up)
    settings: dict[str, Any] = {"seed": 7, "simulations": 1, "budget": 0.0}
    task = decision_task("canasta", state, str(step.action), step.record, **settings)
    same = decision_task("canasta", other, str(step.action), step.record, **settings)
    peeking = [
        dataclasses.replace(t, position=SEARCH_GAMES["canasta"].to_dict(s))
        for t, s in ((task, state), (same, other))
    ]
    assert analyse(peeking[0]) != analyse(peeking[1])
    assert analyse(task) == analyse(same)
    assert task.position == information_set("canasta", other, SEAT)


# --------------------------------------------------------------------------- the command


def test_marked_moves_become_annotations_that_show_and_export_display(log_path: Path) -> None:
    data = analysed(log_path)
    decisions = data["decisions"]
    assert decisions and {d["seat"] for d in decisions} == {SEAT}
    for d in decisions:
        assert d["loss"] == max(0.0, round(d["best_value"] - d["played_value"], 1))
        assert d["mark"] == mark_for("canasta", d["loss"])
        assert d["played"] in [c["action"] for c in d["candidates"]]
    marked = [d for d in decisions if d["mark"]]
    assert marked, "a random seat's hand has no marked move"
    (summary,) = data["seats"]
    assert summary["decisions"] == len(decisions)
    assert sum(summary["marks"].values()) == len(marked)
    assert [c["record"] for c in summary["costliest"]][:1] == [
        max(decisions, key=lambda d: (d["loss"], -d["record"]))["record"]
    ]
    notes = load_annotations(sidecar_path(log_path), timeline()).annotations
    assert [n.record for n in notes] == [d["record"] for d in marked]
    assert {n.author for n in notes} == {ANALYST}
    worst = max(marked, key=lambda d: d["loss"])
    note = next(n for n in notes if n.record == worst["record"])
    assert note.glyph == worst["mark"] and note.evaluation is not None
    assert note.evaluation["loss"] == worst["loss"] and note.evaluation["seat"] == SEAT
    assert note.line is not None and note.line.actions == (worst["best"],)
    assert note.line.outcome["instead_of"] == worst["record"]
    shown = run("show", str(log_path), "--at", str(worst["record"]), "--all")
    assert f"{worst['mark']} analysis: Loses {worst['loss']:.0f} points" in shown.output
    assert f"what-if: {worst['best']}" in shown.output
    text = run("export", str(log_path), "--format", "text").output
    for d in marked:
        assert f"{{{d['mark']} analysis: Loses {d['loss']:.0f} points" in text
    exported = json.loads(run("export", str(log_path), "--format", "json").output)
    assert [a["eval"]["loss"] for a in exported["annotations"]] == [d["loss"] for d in marked]
    # a person's annotation stays when the analysis is written again
    record = str(decisions[0]["record"])
    assert run("annotate", str(log_path), "--at", record, "--comment", "mine").exit_code == 0
    analysed(log_path, "--again")
    notes = load_annotations(sidecar_path(log_path), timeline()).annotations
    assert sum(1 for n in notes if n.author != ANALYST) == 1
    assert sum(1 for n in notes if n.author == ANALYST) == len(marked)


def test_an_interrupted_analysis_resumes_without_redoing_what_it_kept(
    log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []

    def interrupted(task: Any) -> Any:
        if len(calls) == 3:
            raise KeyboardInterrupt
        calls.append(task.record)
        return analyse(task)

    monkeypatch.setattr(analysis_run, "analyse", interrupted)
    stopped = run("analyze", str(log_path), "--seat", str(SEAT), "--simulations", "1")
    assert stopped.exit_code == 130
    assert "Stopped: 3 of" in stopped.output
    kept = json.loads(analysis_path(log_path).read_text())["decisions"]
    assert [d["record"] for d in kept] == calls

    def counted(task: Any) -> Any:
        calls.append(task.record)
        return analyse(task)

    monkeypatch.setattr(analysis_run, "analyse", counted)
    first = list(calls)
    resumed = run("analyze", str(log_path), "--seat", str(SEAT), "--simulations", "1")
    assert resumed.exit_code == 0, resumed.output
    assert "(3 analysed before, kept)" in resumed.output
    again = calls[len(first) :]
    assert not set(again) & set(first)
    total = json.loads(analysis_path(log_path).read_text())["decisions"]
    assert len(total) == len(first) + len(again)
    assert [d for d in total if d["record"] in first] == kept  # the kept ones untouched
    calls.clear()
    assert run("analyze", str(log_path), "--seat", str(SEAT), "--simulations", "1").exit_code == 0
    assert calls == []  # nothing left to do
    run("analyze", str(log_path), "--seat", str(SEAT), "--simulations", "1", "--again")
    assert len(calls) == len(total)


def test_results_are_the_same_with_one_worker_or_two(tmp_path: Path) -> None:
    runs = []
    for jobs in ("1", "2"):
        path = tmp_path / f"jobs{jobs}.cnlog"
        path.write_bytes(host_log())
        data = analysed(path, "--jobs", jobs, "--seed", "3")
        runs.append([{k: v for k, v in d.items() if k != "analysed"} for d in data["decisions"]])
    assert runs[0] == runs[1] and runs[0]
    other_seed = analysed(tmp_path / "jobs1.cnlog", "--again", "--seed", "4")["decisions"]
    assert [d["seed"] for d in other_seed] != [d["seed"] for d in runs[0]]


@pytest.mark.parametrize(
    "args, words",
    [
        (["--seat", "9"], "this table has seats 0 to 3"),
        (["--seat", "1", "--all"], "Choose --seat or --all"),
        (["--simulations", "4", "--budget", "1"], "not both"),
        (["--simulations", "0"], "1 to 10000"),
        (["--jobs", "0"], "at least 1"),
    ],
)
def test_cli_mistakes_end_in_one_line(log_path: Path, args: list[str], words: str) -> None:
    result = run("analyze", str(log_path), *args)
    assert result.exit_code != 0
    assert result.output.count("\n") == 1 and words in result.output, result.output
    assert "Traceback" not in result.output


def test_an_analysis_file_of_another_game_is_refused_in_one_line(log_path: Path) -> None:
    analysis_path(log_path).write_text(
        json.dumps({"format": "canasta-replay/analysis/1", "log": {"header_hash": "00"}})
    )
    result = run("analyze", str(log_path), "--seat", str(SEAT), "--simulations", "1")
    assert result.exit_code == 1 and result.output.count("\n") == 1
    assert "belongs to another game" in result.output
    analysis_path(log_path).write_text("{not json")
    result = run("analyze", str(log_path), "--seat", str(SEAT), "--simulations", "1")
    assert result.exit_code == 1 and "is malformed" in result.output
    not_a_log = log_path.with_name("nothing.cnlog")
    not_a_log.write_bytes(b"hello")
    result = run("analyze", str(not_a_log))
    assert result.exit_code == 2 and result.output.count("\n") == 1


# --------------------------------------------------------------------------- the page


@pytest.mark.skipif(
    chromium() is None,
    reason=MISSING,
)
def test_the_html_page_shows_the_marks_and_the_chart_in_headless_chromium(
    log_path: Path, tmp_path: Path
) -> None:
    marked = [d for d in analysed(log_path)["decisions"] if d["mark"]]
    worst = max(marked, key=lambda d: (d["loss"], -d["record"]))
    out = tmp_path / "game.html"
    assert run("export", str(log_path), "--format", "html", "-o", str(out)).exit_code == 0
    completed = dump_dom(f"{out.as_uri()}#record={worst['record']}", tmp_path / "profile")
    dom = completed.stdout
    assert completed.returncode == 0 and '<section id="analysis"' in dom, completed.stderr[-2000:]
    section = dom[dom.index('<section id="analysis"') :]
    section = section[: section.index("</section>")]
    assert '<section id="analysis" hidden' not in dom  # shown: the game is analysed
    assert "<svg" in section and 'data-seat="1"' in section
    for d in marked:
        assert f'data-record="{d["record"]}" data-glyph="{d["mark"]}"' in section
    assert f"seat 1 (bot-1): {round(sum(d['loss'] for d in marked))} points lost" in section
    assert f'href="#record={worst["record"]}"' in section
    assert f"'{worst['played']}' loses" in section
    notes = dom[dom.index('<div id="annotations"') :]
    assert f"Loses {worst['loss']:.0f} points" in notes[:3000]  # the note of the record shown
    assert worst["mark"] in notes[:3000]


# --------------------------------------------------------------------------- the pieces it uses


def test_a_line_played_instead_of_a_move_starts_before_it(log_path: Path) -> None:
    step = _decision()
    other = next(a for a in step.before.legal_actions() if str(a) != step.action)
    result = run(
        "annotate",
        str(log_path),
        "--at",
        str(step.record),
        "--line",
        str(other),
        "--instead",
        "--comment",
        "rather this",
        "--author",
        "ann",
    )
    assert result.exit_code == 0, result.output
    (note,) = load_annotations(sidecar_path(log_path), timeline()).annotations
    assert note.line is not None and note.line.outcome["instead_of"] == step.record
    assert note.line.outcome["summary"].startswith("Instead of the move played: ")
    # after the move, the same line is not what the table allows (the seat has moved on)
    assert run("annotate", str(log_path), "--at", "0", "--line", "draw", "--instead").exit_code
    assert run("annotate", str(log_path), "--at", "5", "--instead").exit_code == 2


def test_a_malformed_eval_in_the_sidecar_is_refused(log_path: Path) -> None:
    analysed(log_path)
    path = sidecar_path(log_path)
    data = json.loads(path.read_text())
    data["annotations"][0]["eval"]["loss"] = "a lot"
    path.write_text(json.dumps(data))
    result = run("show", str(log_path), "--at", "end")
    assert result.exit_code == 1 and "'eval.loss' must be a number" in result.output


def test_analyse_is_understood_as_analyze(log_path: Path) -> None:
    """The docs spell it "analyse": typed that way, the command runs and its help names it."""
    typed = run("analyse", str(log_path), "--seat", str(SEAT), "--simulations", "1", "--json")
    assert typed.exit_code == 0, typed.output
    decisions = json.loads(typed.output)["decisions"]
    again = analysed(log_path, "--again")["decisions"]
    assert decisions and [(d["record"], d["played"]) for d in decisions] == [
        (d["record"], d["played"]) for d in again
    ]
    helped = run("analyse", "--help")
    assert helped.exit_code == 0 and "analyze [OPTIONS] FILE" in helped.output
    assert "analyse" not in run("--help").output.split("Commands:")[1]
