"""``scripts/search_settings.py judge`` and ``seats``: what the search's changes are worth.

``judge``: every line of a judged change names a move the search played instead of the
heuristic's first choice; a hand counts once it is whole, a run again over the same seeds adds
nothing, and the report's means are those of the lines. ``seats``: each deal is played the three
ways, once each, and the report's gains are over deals played all three ways."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from script_runs import load_script, run_script

from canasta_net.canasta.rules import preset


def report(name: str, lines: list[dict[str, Any]]) -> str:
    """A report of ``scripts/search_settings.py``, from its ``lines``."""
    text: str = getattr(load_script("search_settings"), name)(lines)
    return text


def judged_report(lines: list[dict[str, Any]]) -> str:
    return report("judged_report", lines)


def judge(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    options = ["--deals", "2", "--judge-deals", "2", "--out", str(out), *args]
    return settings("judge", "classic-2p", *options)


def settings(*args: str) -> subprocess.CompletedProcess[str]:
    return run_script("search_settings.py", *args, timeout=300)


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_judged_hand_lists_the_moves_the_search_changed(tmp_path: Path) -> None:
    out = tmp_path / "judged.jsonl"
    run = judge(out, "--hands", "1", "--seed", "8001")
    written = lines(out)
    hands = [line for line in written if "moves" in line]
    changes = [line for line in written if "judged" in line]
    assert [h["seed"] for h in hands] == [8001] and hands[0]["moves"] > 20
    assert changes, "a search of two deals a move changes some of the heuristic's moves"
    for change in changes:
        assert change["first"] != change["played"]
        assert len(change["judged"]) == 2 and change["move"] < hands[0]["moves"]
    assert run.stdout.startswith(f"1 hands, {len(changes)} changed moves")

    again = judge(out, "--hands", "1", "--seed", "8001")  # the same seed: judged already
    assert lines(out) == written
    assert again.stdout == run.stdout


def test_the_report_counts_whole_hands_and_the_last_line_of_a_move() -> None:
    def change(seed: int, move: int, before: float, after: float) -> dict[str, Any]:
        return {
            "variant": "classic",
            "seed": seed,
            "move": move,
            "phase": "draw",
            "first": "draw",
            "played": "take-pile",
            "judged": [before, after],
        }

    report = judged_report(
        [
            change(1, 3, 0.0, 999.0),  # cut short, then played again: the later line counts
            change(1, 3, 10.0, 40.0),
            change(1, 9, 0.0, -10.0),
            {"variant": "classic", "seed": 1, "moves": 50},
            change(2, 4, 0.0, 500.0),  # a hand never finished: not counted
        ]
    )
    rows = report.splitlines()
    assert rows[0] == "1 hands, 2 changed moves"
    assert rows[1].split()[:4] == ["all", "2", "changes", "+10.0"]
    assert "draw: draw -> take-pile" in report
    assert judged_report([change(2, 4, 0.0, 1.0)]) == "no whole hand judged yet"


def test_seats_plays_each_deal_three_ways_once(tmp_path: Path) -> None:
    out = tmp_path / "seats.jsonl"
    run = settings("seats", "classic", "--hands", "1", "--deals", "1", "--out", str(out))
    written = lines(out)
    assert [line["seating"] for line in written] == ["none", "seat 0", "side 0"]
    assert len({line["seed"] for line in written}) == 1
    assert run.stdout.splitlines()[0] == "1 deals"  # one deal: no standard error, no gain line
    settings("seats", "classic", "--hands", "1", "--deals", "1", "--out", str(out))
    assert lines(out) == written


def test_the_seats_report_is_over_deals_played_all_three_ways() -> None:
    def hand(seed: int, seating: str, diff: int) -> dict[str, Any]:
        return {"variant": "classic", "seed": seed, "seating": seating, "diff": diff}

    text = report(
        "seats_report",
        [
            *(hand(1, s, d) for s, d in (("none", 100), ("seat 0", 150), ("side 0", 300))),
            *(hand(2, s, d) for s, d in (("none", -50), ("seat 0", -150), ("side 0", 50))),
            hand(3, "none", 0),  # played one way only: not counted
            hand(3, "side 0", 5000),
        ],
    )
    assert text.splitlines() == [
        "2 deals",
        "search at seat 0:   -25.0 a hand (s.e.  75.0)",
        "search at side 0:  +150.0 a hand (s.e.  50.0)",
    ]


def test_the_search_sits_on_seat_0s_side() -> None:
    script = load_script("search_settings")
    for variant, side in (("classic", {0, 2}), ("classic-2p", {0}), ("classic-3p-lone", {0})):
        state = script.deal(preset(variant), 1)
        assert script.side_of_seat_0(state) == side, variant
