"""``canasta-replay show`` and ``export --format text`` in the reader's language (``--lang``)."""

from __future__ import annotations

import io
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from english_text import english_sentences
from english_text import english_words as listed_english_words
from headless import MISSING, chromium, dump_dom

from canasta_net.canasta.rules import preset
from canasta_net.i18n import set_language
from canasta_net.table.local import recorded_match
from replay.cli import main

LANGS = ["ru", "bg", "pl"]
NAMES = ("host (bot)", "bot-2", "bot-3", "ada", "test table")


def english_words(text: str) -> list[str]:
    return listed_english_words(text, NAMES)


@cache
def host_log(hands: int | None = 1) -> bytes:
    buffer = io.BytesIO()
    recorded_match(preset("classic"), buffer, seed=11).play(max_hands=hands)
    return buffer.getvalue()


def run(*args: str) -> Any:
    try:
        return CliRunner().invoke(main, list(args))
    finally:
        set_language("en")


def words_left(text: str, path: str) -> list[str]:
    """The English words of ``text`` but the file's name and the variant's code."""
    return english_words(text.replace(path, "").replace("classic", ""))


@pytest.mark.parametrize("lang", LANGS)
def test_show_reads_in_each_language(tmp_path: Path, lang: str) -> None:
    path = tmp_path / "game.cnlog"
    path.write_bytes(host_log())
    for at in ("0", "5", "20", "40", "end"):
        for view in ("--all", "--public", "--seat=1"):
            english = run("show", view, "--at", at, str(path))
            worded = run("--lang", lang, "show", view, "--at", at, str(path))
            assert worded.exit_code == english.exit_code == 0, worded.output
            assert len(worded.stdout.splitlines()) == len(english.stdout.splitlines())
            assert not words_left(worded.stdout, str(path)), (at, view, worded.stdout)
            assert english_words(english.stdout)  # the check can fail


@pytest.mark.parametrize("lang", LANGS)
def test_the_text_export_reads_in_each_language_and_the_json_stays_english(
    tmp_path: Path, lang: str
) -> None:
    path = tmp_path / "game.cnlog"
    path.write_bytes(host_log())
    for view in ("--all", "--seat=2"):
        english = run("export", view, str(path))
        worded = run("--lang", lang, "export", view, str(path))
        assert worded.exit_code == english.exit_code == 0, worded.output
        assert len(worded.stdout.splitlines()) == len(english.stdout.splitlines())
        assert not words_left(worded.stdout, str(path)), worded.stdout
        assert english_words(english.stdout)
    as_json = run("--lang", lang, "export", "--format", "json", str(path))
    assert as_json.stdout == run("export", "--format", "json", str(path)).stdout


def test_the_position_helps_name_the_locators_forms_and_read_in_each_language() -> None:
    from replay.analysis import DEFAULT_SIMULATIONS
    from replay.locate import FORMS

    for command in ("show", "annotate"):
        english = " ".join(run(command, "--help").stdout.split())
        assert f": {FORMS}." in english
        worded = " ".join(run("--lang", "ru", command, "--help").stdout.split())
        assert "hand:H/turn:T" in worded and FORMS not in worded
    worded = " ".join(run("--lang", "pl", "analyze", "--help").stdout.split())
    assert f"domyślnie {DEFAULT_SIMULATIONS};" in worded


@pytest.mark.skipif(chromium() is None, reason=MISSING)
def test_the_html_page_reads_in_russian_in_headless_chromium(tmp_path: Path) -> None:
    path = tmp_path / "game.cnlog"
    path.write_bytes(host_log())
    out = tmp_path / "game.html"
    result = run(
        "--lang", "ru", "export", "--format", "html", "--seat", "2", str(path), "-o", str(out)
    )
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert '"i18n":{"lang":"ru"' in page and page.count("</script>") == 2
    dom = dump_dom(f"{out.as_uri()}#record=40", tmp_path / "profile").stdout
    body = dom[dom.index("<body") :]
    text = re.sub(r"<[^>]*>", " ", body[: body.index('<script type="application/json"')])
    assert "Запись 40 из" in text and "Колода:" in text
    found = english_words(text.replace("canasta-net", "").replace("classic", ""))
    assert not found, found


@pytest.mark.parametrize("lang", LANGS)
def test_a_position_that_names_no_record_is_refused_in_each_language(
    tmp_path: Path, lang: str
) -> None:
    path = tmp_path / "game.cnlog"
    path.write_bytes(host_log())
    for at in ("999", "hand:9", "hand:0", "hand:1/turn:0", "hand:1/turn:99", "nowhere"):
        english = run("show", "--at", at, str(path))
        worded = run("--lang", lang, "show", "--at", at, str(path))
        assert worded.exit_code == english.exit_code == 2
        # the locator's own syntax (hand:H/turn:T, end) is the same in every language
        said = re.sub(r"\b(hand|deal):\S*|\bend\b", "", worded.stderr)
        assert english_words(english.stderr) and not english_words(said), worded.stderr


@pytest.mark.parametrize("lang", LANGS)
def test_lang_may_follow_the_command_as_with_canasta(tmp_path: Path, lang: str) -> None:
    """`canasta play --lang ru` works, so `canasta-replay audit FILE --lang ru` must too."""
    path = tmp_path / "game.cnlog"
    path.write_bytes(host_log())
    before = run("--lang", lang, "audit", str(path))
    after = run("audit", str(path), "--lang", lang)
    assert after.exit_code == before.exit_code == 0, after.output
    assert after.stdout == before.stdout and not words_left(after.stdout, str(path))
    refused = run("audit", str(path), "--lang", "xx")
    assert refused.exit_code == 2 and "Traceback" not in refused.output


@pytest.mark.parametrize("lang", LANGS)
def test_annotations_what_if_outcomes_and_the_stepper_read_in_each_language(
    tmp_path: Path, lang: str
) -> None:
    from replay.stepper import Stepper
    from replay.timeline import load_timeline
    from replay.views import ALL, Perspective

    path = tmp_path / "game.cnlog"
    path.write_bytes(host_log())
    timeline = load_timeline(host_log())
    end = timeline.hands[0].end_record
    assert end is not None
    start = end - 5
    line = "; ".join(s.action for s in timeline.steps[start + 1 : end] if s.action is not None)
    deal = timeline.hands[0].deal_record
    first_move = next(s.record for s in timeline.steps if s.action is not None)

    def annotate(*args: str) -> str:
        return str(run("--lang", lang, "annotate", str(path), "--author", "ada", *args).output)

    said = [
        run("--lang", lang, "annotations", str(path)).output,  # none yet
        # a line that ends the hand, one after which it goes on, one in place of the move
        annotate("--at", str(start), "--line", line),
        annotate("--at", str(deal), "--line", "draw"),
        annotate("--at", str(first_move), "--instead", "--line", "draw"),
        annotate("--remove", "x", "--at", "5"),
        annotate("--instead"),
        run("--lang", lang, "annotations", str(path)).output,
        run("--lang", lang, "show", "--at", str(start), str(path)).output,
    ]
    try:
        set_language(lang)
        stepper = Stepper(timeline, Perspective(ALL))
        for command in ("?", "x", "n lots", "j", "t 2", "h 1", "t 2"):
            said.append(stepper.execute(command).text)
    finally:
        set_language("en")
    text = "\n".join(said).replace(str(path), "").replace("classic", "")
    text = re.sub(r"\bbot-\d\b", "", text)  # the bots' names
    # the stepper's commands and the locator's forms are typed as they are in every language
    text = re.sub(r"\b(next|prev|jump|home|end|help|quit)\b|\bhand:\S*", "", text)
    # the what-if lines are canonical moves; the step's kind a code
    text = re.sub(r"what-if: .*|\((action|deal|hand-start|hand-end|\w+)\):$", "", text, flags=re.M)
    assert english_words(text) == []
    assert english_sentences(text, NAMES) == []
    assert text.count("->") == 3 + 1  # the listing's lines, and show's at its record


def test_the_analysis_report_and_the_options_refusals_read_in_russian(tmp_path: Path) -> None:
    path = tmp_path / "game.cnlog"
    path.write_bytes(host_log())
    said = [
        run("--lang", "ru", "analyze", str(path), "--seat", "1", "--simulations", "1").output,
        run("--lang", "ru", "analyze", str(path), "--seat", "9").output,
        run("--lang", "ru", "analyze", str(path), "--seat", "1", "--all").output,
        run("--lang", "ru", "analyze", str(path), "--simulations", "0").output,
        run("--lang", "ru", "analyze", str(path), "--budget", "0").output,
        run("--lang", "ru", "analyze", str(path), "--jobs", "0").output,
        run("--lang", "ru", "show", str(path), "--seat", "9").output,
        run("--lang", "ru", "show", str(path), "--seat", "1", "--public").output,
    ]
    text = re.sub(r"\bbot-\d\b|\S+\.cnlog\S*|\S+\.json", "", "\n".join(said))
    # the moves quoted are canonical, the options named as typed
    text = re.sub(r"'[^']*'|--[\w-]+", "", text)
    assert "Разобрано: " in text and "средняя потеря" in text, text
    assert english_sentences(text, NAMES) == [], text
    assert english_words(text) == [], text
