"""The player's page in Russian, in a real browser (the system Chromium, driven by Playwright):
the page's switch asks its server for Russian (POST /lang), the snapshot comes again with its
sentences in Russian, the page loads its catalogue (GET /i18n.json) and draws its buttons and
its prompt in Russian; what it sends stays canonical (``answer yes``)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from web_driver import (
    ROOT,
    URL_LINE,
    browser,
    guard_network,
    line_from,
    playwright_missing,
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
    scripted_page: tuple[subprocess.Popen[str], str],
) -> None:
    proc, url = scripted_page
    with browser() as chromium:
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
