"""Driving the player's page in the system Chromium through Playwright (tests, benchmark,
screenshots): start ``canasta play --ui web``, read its page's link, and play by clicking.

Playwright's own browser download is not used: the page runs in the Debian ``chromium``.
Every request the page makes outside 127.0.0.1 is stopped and remembered.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from headless import CHROMIUM_ARGS, chromium

ROOT = Path(__file__).resolve().parent.parent

URL_LINE = re.compile(r"^(http://127\.0\.0\.1:\d+/\?token=\S+)\s*$")
LOOPBACK = ("127.0.0.1", "localhost", "[::1]", "::1")


def line_from(proc: subprocess.Popen[str], timeout: float = 20.0) -> str:
    """The next line the process prints, or an AssertionError after ``timeout`` seconds (never a
    test that hangs: the reading thread ends when the fixture kills the process)."""
    assert proc.stdout is not None
    stdout = proc.stdout
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    if not box:
        raise AssertionError(f"the process printed no line within {timeout:g} s")
    return box[0]


def playwright_missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed (pip install playwright)."
    if chromium() is None:
        return "Chromium is not installed (apt-get install chromium): the page is not run."
    return None


@contextmanager
def browser() -> Iterator[Any]:
    """A headless system Chromium under Playwright."""
    from playwright.sync_api import sync_playwright

    path = chromium()
    assert path is not None
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


def guard_network(page: Any) -> list[str]:
    """Stop (and list) every request the page makes to anything but the loopback interface."""
    outside: list[str] = []

    def route(r: Any) -> None:
        url = r.request.url
        host = urlsplit(url).hostname or ""
        if url.startswith(("data:", "blob:", "about:")) or host in LOOPBACK:
            r.continue_()
        else:
            outside.append(url)
            r.abort()

    page.route("**/*", route)
    return outside


class PlayProcess:
    """``canasta play --ui web`` in a subprocess, never opening a browser; its page's link."""

    def __init__(self, tmp: Path, *args: str, launcher: list[str] | None = None) -> None:
        """``launcher``: what runs the ``canasta`` command instead of ``-m canasta_net`` (the
        benchmark's ``scripts/timed_play.py OUT``)."""
        env = dict(os.environ)
        env.update(
            PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
            CANASTA_NO_BROWSER="1",
            HOME=str(tmp),
        )
        env.pop("DISPLAY", None)
        env.pop("BROWSER", None)
        self.log = tmp / "play.cnlog"
        command = [
            sys.executable,
            *(launcher or ["-m", "canasta_net"]),
            "play",
            "--ui",
            "web",
            "--no-browser",
            "--identity",
            str(tmp / "identity.pem"),
            "--log",
            str(self.log),
            *args,
        ]
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        self.output: list[str] = []
        self.url = self._read_url()

    def _read_url(self, timeout: float = 30.0) -> str:
        out: IO[str] | None = self.proc.stdout
        assert out is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = out.readline()
            if not line:
                break
            self.output.append(line)
            match = URL_LINE.match(line.strip())
            if match:
                return match.group(1)
        self.stop()
        raise AssertionError("canasta play printed no page link:\n" + "".join(self.output))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# ---------------------------------------------------------------------- playing by clicks
WAIT_JS = """
() => {
  const b = document.body;
  if (!b.dataset.version) return false;
  if (!document.getElementById('overlay').hidden) return true;
  const p = document.getElementById('prompt');
  return Boolean(p.dataset.kind);
}
"""


# How the waits below poll the page: Playwright's default runs the check in every animation
# frame, which keeps the page producing frames (and its main thread busy) the whole time; the
# benchmark polls on a timer instead, so that the page it times is as idle as a person's.
POLLING: str | float = "raf"


def wait_for_turn(page: Any, timeout_ms: float = 20000) -> str:
    """Wait until the person is asked something, or a score sheet shows: ``sheet`` or the
    prompt's kind (``turn``, ``answer-go-out``...)."""
    page.wait_for_function(WAIT_JS, timeout=timeout_ms, polling=POLLING)
    if page.locator("#overlay").is_visible():
        return "sheet"
    return str(page.locator("#prompt").get_attribute("data-kind"))


def select_cards(page: Any, cards: list[str]) -> None:
    """Click the hand's cards so that exactly ``cards`` are selected (real mouse clicks; the
    actionability waits are skipped: the page is drawn, and they cost a frame each)."""
    selected = page.locator("#hand .card.selected")
    for _ in range(selected.count()):  # each click unselects one: the first left, each time
        selected.first.click(force=True)
    texts = page.eval_on_selector_all("#hand .card", "nodes => nodes.map(n => n.dataset.card)")
    taken: set[int] = set()
    for card in cards:
        for i, text in enumerate(texts):
            if text == card and i not in taken:
                taken.add(i)
                page.locator(f'#hand .card[data-index="{i}"]').click(force=True)
                break


def legal_moves(page: Any) -> list[str]:
    return [
        str(text)
        for text in page.eval_on_selector_all(
            "#legal-list button", "nodes => nodes.map(n => n.dataset.action)"
        )
    ]


def click_action(page: Any, text: str) -> None:
    """Click the control (not the legal-moves drawer) that sends ``text``."""
    page.locator(f'#me button[data-action="{text}"]').first.click(force=True)


def play_a_move(page: Any) -> str:
    """One move as a person plays it by clicking: draw (the Draw button), meld what the engine
    lists first (select its cards, click Meld), else discard (select one card, click Discard).
    Anything else: the first legal move's button. Returns the move sent."""
    legal = legal_moves(page)
    if "draw" in legal:
        click_action(page, "draw")
        return "draw"
    melds = [m for m in legal if m.startswith("meld ") and "|" not in m]
    if melds:
        select_cards(page, melds[0].split()[1:])
        click_action(page, melds[0])
        return melds[0]
    discards = [m for m in legal if m.startswith("discard ")]
    if discards:
        select_cards(page, discards[0].split()[1:])
        click_action(page, discards[0])
        return discards[0]
    move = legal[0]
    if page.locator(f'#me button[data-action="{move}"]').count():
        click_action(page, move)
    else:
        # the drawer keeps its state across snapshots: a click on its summary when it is already
        # open (an earlier move was played from it) would close it over the button
        if not page.locator("#legal-drawer").evaluate("d => d.open"):
            page.locator("#legal-drawer summary").click(force=True)
        page.locator(f'#legal-list button[data-action="{move}"]').click(force=True)
    return move


STATE_JS = """
() => ({
  version: document.body.dataset.version,
  sent: document.body.dataset.sent,
  sending: document.getElementById('me').classList.contains('sending'),
  prompt: document.getElementById('prompt').dataset.kind,
  refusal: document.getElementById('refusal').innerText,
  selected: Array.from(document.querySelectorAll('#hand .card.selected')).map(n => n.dataset.card),
  legal: Array.from(document.querySelectorAll('#legal-list button')).map(n => n.dataset.action),
  render_error: document.body.dataset.renderError || null,
})
"""


def page_state(page: Any) -> dict[str, Any]:
    """What the page shows of the move in hand (for a failing test's message), and the last part
    it could not draw (``render_error``)."""
    return dict(page.evaluate(STATE_JS))


def wait_for_change(
    page: Any, version: str | None, timeout_ms: float = 20000, move: str = ""
) -> None:
    """Wait until the page drew a snapshot newer than ``version``; an AssertionError that names
    the move and what the page shows when none comes."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(
            "v => document.body.dataset.version !== v",
            arg=version,
            timeout=timeout_ms,
            polling=POLLING,
        )
    except PlaywrightTimeout:
        raise AssertionError(
            f"no new snapshot within {timeout_ms / 1000:g} s after {move or 'the move'!r}: "
            f"the page shows {page_state(page)}"
        ) from None


def version(page: Any) -> str | None:
    value = page.locator("body").get_attribute("data-version")
    return None if value is None else str(value)


def play_hand(page: Any, limit: int = 400) -> list[str]:
    """Play by clicks until the score sheet shows; returns the moves sent."""
    moves: list[str] = []
    for _ in range(limit):
        kind = wait_for_turn(page)
        if kind == "sheet":
            return moves
        before = version(page)
        moves.append(play_a_move(page))
        wait_for_change(page, before, move=moves[-1])
    raise AssertionError(f"no score sheet after {limit} moves")
