"""``scripts/bench_bots.py --games``: a strength run kept game by game, carried on across runs.

The figures of a run that carries on from the file are those of one run over all its games; a
game of other code is not counted; a line cut short by a stopped run is dropped; a file that is
not a games file is refused in one line."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest
from script_runs import load_script, run_script


def bench(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    options = ["--unit", "hand", "--variants", "classic-2p", "--jobs", "1", *args]
    return run_script("bench_bots.py", "heuristic", "greedy", *options, check=check)


def result(run: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(run.stdout)
    return dict(data["results"][0])


FIGURES = ("games", "win_rate", "ci95", "pairs", "mean_score_diff")


def test_a_run_carries_on_from_the_games_file(tmp_path: Path) -> None:
    games = tmp_path / "runs" / "games.jsonl"  # its folder is made too
    first = result(bench("--matches", "2", "--games", str(games)))
    assert (first["games_played_now"], first["games_from_file"]) == (4, 0)
    assert len(games.read_text().splitlines()) == 4
    carried = result(bench("--matches", "3", "--games", str(games)))
    assert (carried["games_played_now"], carried["games_from_file"]) == (2, 4)
    assert len(games.read_text().splitlines()) == 6
    fresh = result(bench("--matches", "3"))
    assert fresh["games_played_now"] == 6
    assert {k: carried[k] for k in FIGURES} == {k: fresh[k] for k in FIGURES}
    again = result(bench("--matches", "3", "--games", str(games)))
    assert (again["games_played_now"], again["games_from_file"]) == (0, 6)
    assert {k: again[k] for k in FIGURES} == {k: fresh[k] for k in FIGURES}


def test_games_of_other_code_are_not_counted(tmp_path: Path) -> None:
    games = tmp_path / "games.jsonl"
    bench("--matches", "1", "--games", str(games))
    lines = [json.loads(line) for line in games.read_text().splitlines()]
    for line in lines:
        line["code"] = "0" * 16
        line["game"]["points"] = 0.0  # what other code did does not reach the figures
    games.write_text("".join(json.dumps(line) + "\n" for line in lines))
    run = result(bench("--matches", "1", "--games", str(games)))
    assert (run["games_played_now"], run["games_from_file"], run["games_other_code"]) == (2, 0, 2)
    assert run["win_rate"] == result(bench("--matches", "1"))["win_rate"]
    assert len(games.read_text().splitlines()) == 4  # the other code's lines are kept


def test_a_line_cut_short_is_dropped_and_played_again(tmp_path: Path) -> None:
    games = tmp_path / "games.jsonl"
    bench("--matches", "1", "--games", str(games))
    text = games.read_text()
    games.write_text(text[: len(text) - 40])  # the second game's line, cut short
    run = bench("--matches", "1", "--games", str(games))
    assert "dropped an unfinished last line" in run.stderr
    figures = result(run)
    assert (figures["games_played_now"], figures["games_from_file"]) == (1, 1)
    assert all(json.loads(line) for line in games.read_text().splitlines())


def test_a_file_that_is_not_a_games_file_is_refused_in_one_line(tmp_path: Path) -> None:
    games = tmp_path / "games.jsonl"
    games.write_text('{"task": 1}\n')
    run = bench("--matches", "1", "--games", str(games), check=False)
    assert run.returncode != 0
    assert run.stderr.strip().splitlines() == [f"{games}:1: not a game of this benchmark ('game')"]


def test_a_heuristic_taking_piles_from_n_cards_plays_otherwise_only_where_n_differs() -> None:
    """``heuristic-pileN``: the sweep of docs/bots.md. With the shipped least pile (five where
    two cards are drawn) it plays the heuristic's very games; with seven (the setting before) it
    plays other ones; a kind without a whole number is refused."""
    bots = load_script("bench_bots")

    def games(kind: str) -> list[tuple[int, list[int]]]:
        played = []
        for seed in range(4):
            for parity in (0, 1):
                task = ("classic-2p", "hand", kind, "heuristic", seed, parity, None, True)
                game = bots.play_game(task)
                played.append((game.diff, game.moves))
        return played

    shipped = games("heuristic")
    assert games("heuristic-pile5") == shipped
    assert games("heuristic-pile7") != shipped
    for wrong in ("heuristic-pile", "heuristic-pilex", "heuristic-pile0"):
        with pytest.raises(ValueError, match="whole number of cards"):
            bots._bot(wrong, random.Random(0), None)
