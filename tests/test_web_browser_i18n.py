"""The player's page in Russian, in a real browser (the system Chromium, driven by Playwright):
the page's switch asks its server for Russian (POST /lang), the snapshot comes again with its
sentences in Russian, the page loads its catalogue (GET /i18n.json) and draws its buttons and
its prompt in Russian; what it sends stays canonical (``answer yes``). And ``canasta play --lang
ru``'s page through a whole deal of May I?, by clicks, with no English sentence."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest
from english_text import english_sentences
from test_web_browser import play_any_move
from web_driver import (
    ROOT,
    URL_LINE,
    PlayProcess,
    guard_network,
    line_from,
    playwright_missing,
    version,
    wait_for_change,
    wait_for_turn,
)

pytestmark = pytest.mark.skipif(playwright_missing() is not None, reason=str(playwright_missing()))


@pytest.fixture(scope="module")
def scripted_page() -> Iterator[tuple[subprocess.Popen[str], str]]:
    """The scripted table's page of the person asked "may I go out?" (web_scripted_page.py)."""
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "web_scripted_page.py")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert proc.stdout is not None
    line = line_from(proc)
    line_from(proc)  # the watcher's link
    line_from(proc)  # the joiner's lobby's link
    link = URL_LINE.match(line.strip())
    try:
        if link is None:
            raise AssertionError("the scripted page printed no link: " + line)
        yield proc, link.group(1)
    finally:
        proc.kill()
        proc.wait()


def test_the_page_switched_to_russian_asks_in_russian_and_sends_canonical_moves(
    chromium_browser: Any, scripted_page: tuple[subprocess.Popen[str], str]
) -> None:
    proc, url = scripted_page
    with nullcontext(chromium_browser) as chromium:
        page: Any = chromium.new_page(viewport={"width": 1280, "height": 800})
        outside = guard_network(page)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url)
        assert wait_for_turn(page) == "answer-go-out"
        assert "asks: may I go out?" in page.locator("#prompt").inner_text()
        page.select_option("#lang", "ru")
        page.wait_for_function("() => document.documentElement.lang === 'ru'")
        page.wait_for_function(
            "() => document.getElementById('prompt').innerText.includes('можно мне выйти?')"
        )
        prompt = page.locator("#prompt")
        assert "bot-3 спрашивает: можно мне выйти?" in prompt.inner_text()
        yes = prompt.locator('button[data-action="answer yes"]')
        assert yes.inner_text() == "Да, выходи"
        assert prompt.locator('button[data-action="answer no"]').inner_text() == "Нет, пока нельзя"
        assert page.locator("#events-title").inner_text() == "Что произошло"
        assert page.locator("#quit").inner_text() == "Покинуть стол…"
        assert "сброс" in page.locator("#pile").inner_text()
        yes.click()
        page.wait_for_function("() => !document.getElementById('prompt').dataset.kind")
        assert line_from(proc).strip() == "ACT answer yes"
        assert outside == [] and errors == []


# The text a person sees on the page (not what is hidden: the closed legal moves' list, a
# dialog not shown).
VISIBLE_TEXT = "() => document.body.innerText"

# What may stay as it came on a page: the people's names, the table's own name.
PAGE_NAMES = ("ada", "bot-1", "bot-2", "bot-3")


@pytest.mark.parametrize("lang", ["ru", "bg", "pl"])
def test_a_whole_deal_of_may_i_by_clicks_shows_no_english_sentence(
    chromium_browser: Any, tmp_path: Path, lang: str
) -> None:
    """``canasta play --lang ru`` (bg, pl): a whole deal of May I? (buys asked, contracts laid,
    melds named) played by clicks to its score sheet and the match's result; the page's visible
    text at every question, at the sheet and at the end has no English sentence."""
    play = PlayProcess(
        tmp_path, "--variant", "may-i", "--hands", "1", "--delay", "0", "--lang", lang,
        "--name", "ada",
    )  # fmt: skip
    try:
        with nullcontext(chromium_browser) as chromium:
            page: Any = chromium.new_page(viewport={"width": 1280, "height": 800})
            outside = guard_network(page)
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(play.url)
            shown: list[str] = []
            kinds: set[str] = set()
            for _ in range(400):
                kind = wait_for_turn(page)
                kinds.add(kind)
                shown.append(page.evaluate(VISIBLE_TEXT))
                if kind == "sheet":
                    break
                before = version(page)
                play_any_move(page)
                wait_for_change(page, before)
            else:
                raise AssertionError("no score sheet")
            page.wait_for_selector("#match-result .verdict", timeout=30000)
            page.evaluate("() => { document.getElementById('legal-drawer').open = true; }")
            shown.append(page.evaluate(VISIBLE_TEXT))
            labels = page.eval_on_selector_all(".meld-head .label", "n => n.map(x => x.innerText)")
        found = [f for text in shown for f in english_sentences(text, PAGE_NAMES)]
        assert found == [], sorted(set(found))[:20]
        assert {"turn", "may-i-buy", "sheet"} <= kinds, kinds
        assert outside == [] and errors == []
        if lang != "ru":
            return
        last = shown[-1]
        assert "Можно?" in last and "Проверка: действителен" in last and "итог партии" in last
        # the engine's meld names ("set of Ks") in Russian, where melds were laid
        assert all("комплект " in label or "секвенс " in label for label in labels), labels
        assert outside == [] and errors == []
    finally:
        play.stop()
