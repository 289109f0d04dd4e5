"""The player's page in a real browser (the system Chromium, driven by Playwright): a whole hand
played by clicks against bots through ``canasta play --ui web``'s real page, a refused move's
sentence shown, the score sheet, a partner's "may I go out?" answered in the page, a watcher's
page without a hand or a button; and no request ever leaves 127.0.0.1."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_driver import (
    ROOT,
    URL_LINE,
    PlayProcess,
    guard_network,
    legal_moves,
    line_from,
    play_a_move,
    play_hand,
    playwright_missing,
    select_cards,
    version,
    wait_for_change,
    wait_for_turn,
)

pytestmark = pytest.mark.skipif(playwright_missing() is not None, reason=str(playwright_missing()))


def new_page(chromium_browser: Any) -> tuple[Any, list[str], list[str]]:
    page = chromium_browser.new_page(viewport={"width": 1280, "height": 800})
    outside = guard_network(page)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    return page, outside, errors


def leave_after_a_valid_audit(
    page: Any, play: PlayProcess, outside: list[str], errors: list[str]
) -> None:
    """The match's end: the page shows the audit's verdict, valid; nothing went beyond loopback
    and the page raised nothing; Leave closes the page and the process ends with status 0."""
    page.wait_for_selector("#match-result .verdict", timeout=30000)
    assert "Audit: valid" in page.locator("#match-result").inner_text()
    assert outside == [] and errors == []
    page.locator("#sheet-leave").click()  # the table is over: the process ends
    page.wait_for_selector("body[data-closed]")
    assert play.proc.wait(60) == 0


def try_a_refused_move(page: Any) -> str | None:
    """At a turn where the page offers to meld (or to take the pile with cards): select one
    card and press the button the selection builds. A single card is never a meld, so the
    engine refuses it; returns the move tried, or None where this turn offers no such button."""
    first = page.eval_on_selector("#hand .card", "n => n.dataset.card")
    select_cards(page, [first])
    for verb in ("meld", "take-pile"):
        button = page.locator(f'#controls button.try[data-action="{verb} {first}"]')
        if button.count():
            button.click()
            return f"{verb} {first}"
    select_cards(page, [])
    return None


def ask_for_a_suggestion(page: Any) -> None:
    """Press Suggest after the draw: the searching bot's move (searched in a worker process of
    the seat's own) is shown with its reason, the hand's cards it plays highlighted."""
    assert wait_for_turn(page) == "turn"
    page.locator("#controls button.suggest").click()
    page.wait_for_selector("#suggestion .suggested-move", timeout=20000)
    played = page.locator("#suggestion button.play-suggested").get_attribute("data-action")
    assert played in legal_moves(page)
    assert len(page.locator("#suggestion").inner_text()) > 20  # the move and its reason
    verb, *words = str(played).split()
    cards = [w for w in words if w[-1] in "CDHS" or w == "JK"] if verb != "take-pile" else words
    assert page.locator("#hand .card.suggested").count() == len(cards)


def test_a_whole_hand_played_by_clicks_against_bots(chromium_browser: Any, tmp_path: Path) -> None:
    play = PlayProcess(tmp_path, "--variant", "classic-2p", "--hands", "1", "--delay", "0")
    try:
        page, outside, errors = new_page(chromium_browser)
        page.goto(play.url)
        assert wait_for_turn(page) == "turn"
        # the keyboard: Enter plays the highlighted button (here: Draw)
        assert page.locator("#controls button.default").get_attribute("data-action") == "draw"
        page.keyboard.press("ArrowRight")
        page.keyboard.press("Space")
        assert page.locator("#hand .card.selected").count() == 1
        page.keyboard.press("Escape")
        assert page.locator("#hand .card.selected").count() == 0
        before = version(page)
        page.keyboard.press("Enter")
        wait_for_change(page, before)
        ask_for_a_suggestion(page)
        refused: str | None = None
        moves = ["draw"]
        for _ in range(400):
            kind = wait_for_turn(page)
            if kind == "sheet":
                break
            assert kind == "turn", kind
            if refused is None:
                before = version(page)
                refused = try_a_refused_move(page)
                if refused is not None:
                    # the engine's sentence, next to what was tried; the turn goes on
                    page.wait_for_selector("#refusal .message", timeout=10000)
                    assert page.locator("#refusal .tried").inner_text() == refused
                    assert len(page.locator("#refusal .message").inner_text()) > 10
                    wait_for_turn(page)
                    assert legal_moves(page)
            before = version(page)
            moves.append(play_a_move(page))
            wait_for_change(page, before)
        else:
            raise AssertionError("no score sheet")
        assert refused is not None, "no turn offered a meld or a pile take with cards"
        assert any(m.startswith("discard") for m in moves)
        # the score sheet: both sides' parts, the hand total, the chart; then the match's end
        sheet = page.locator("#sheet-table")
        assert "hand total" in sheet.inner_text() and "cards in melds" in sheet.inner_text()
        assert page.locator("#chart svg polyline").count() == 2
        page.wait_for_selector("#match-result .verdict", timeout=30000)
        result = page.locator("#match-result").inner_text()
        assert "Audit: valid" in result and str(play.log) in result
        assert page.locator("#match-result a").get_attribute("href") == "/replay"
        # the list of what happened, changed line by line over the hand (its oldest lines
        # dropped), shows what a page drawing the same snapshot afresh shows, scrolled to its end
        fresh, _, _ = new_page(chromium_browser)
        fresh.goto(play.url)
        fresh.wait_for_selector("#match-result .verdict", timeout=30000)
        fresh.wait_for_function("v => document.body.dataset.version === v", arg=version(page))
        shown = "nodes => nodes.map(n => n.textContent)"
        lines = page.eval_on_selector_all("#events li", shown)
        assert len(lines) > 8 and lines == fresh.eval_on_selector_all("#events li", shown)
        page.wait_for_function(
            "() => { const l = document.getElementById('events');"
            " return l.scrollHeight - l.scrollTop - l.clientHeight < 30; }",
            timeout=5000,
        )
        fresh.close()
        leave_after_a_valid_audit(page, play, outside, errors)
    finally:
        play.stop()


@pytest.fixture(scope="module")
def scripted_pages() -> Iterator[tuple[subprocess.Popen[str], str, str, str]]:
    """The scripted table's pages: the person's (asked "may I go out?"), a watcher's, and a
    joiner's lobby."""
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "web_scripted_page.py")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert proc.stdout is not None
    lines = [line_from(proc) for _ in range(3)]
    links = [URL_LINE.match(line.strip()) for line in lines]
    try:
        found = [link.group(1) for link in links if link is not None]
        if len(found) != 3:
            raise AssertionError("the scripted page printed no links: " + "".join(lines))
        yield proc, found[0], found[1], found[2]
    finally:
        proc.kill()
        proc.wait()


def test_a_partners_ask_is_answered_in_the_page(
    chromium_browser: Any, scripted_pages: tuple[subprocess.Popen[str], str, str, str]
) -> None:
    proc, url, _, _ = scripted_pages
    page, outside, errors = new_page(chromium_browser)
    page.goto(url)
    assert wait_for_turn(page) == "answer-go-out"
    prompt = page.locator("#prompt")
    assert "bot-3 asks: may I go out?" in prompt.inner_text()
    assert prompt.locator("button").count() == 2
    prompt.locator('button[data-action="answer yes"]').click()
    page.wait_for_function("() => !document.getElementById('prompt').dataset.kind")
    assert proc.stdout is not None
    assert line_from(proc).strip() == "ACT answer yes"
    assert outside == [] and errors == []


def test_a_watcher_sees_the_public_table_and_no_controls(
    chromium_browser: Any, scripted_pages: tuple[subprocess.Popen[str], str, str, str]
) -> None:
    _, _, url, _ = scripted_pages
    page, outside, errors = new_page(chromium_browser)
    page.goto(url)
    page.wait_for_selector("body[data-role=spectator]")
    assert page.locator("#hand").is_hidden()
    assert page.locator("#me button").count() == 0
    assert "You are watching" in page.locator("#prompt").inner_text()
    assert page.locator("#sides .meld, #sides .no-melds").count() > 0
    assert "ada's friend" in page.locator("#watchers").inner_text()
    assert outside == [] and errors == []


def test_a_joiner_picks_a_table_and_accepts_its_fingerprint_in_the_page(
    chromium_browser: Any, scripted_pages: tuple[subprocess.Popen[str], str, str, str]
) -> None:
    proc, _, _, url = scripted_pages
    page, outside, errors = new_page(chromium_browser)
    page.goto(url)
    page.wait_for_selector("#lobby:not([hidden]) .table-list button")
    assert "kitchen" in page.locator("#lobby").inner_text()
    page.locator('#lobby button[data-table="0"]').click()
    page.wait_for_selector("#trust-accept")
    asked = page.locator("#lobby").inner_text()
    assert "kitchen" in asked and "abcd-efgh-ijkm-npqr-stuv-wxyz-2345-6789" in asked
    page.locator("#trust-accept").click()
    page.wait_for_selector("#lobby[hidden]", state="attached")
    assert proc.stdout is not None
    said = [line_from(proc).strip() for _ in range(2)]
    assert said[-2:] == ["PICK 0", "TRUST True"], said
    assert outside == [] and errors == []


# ---------------------------------------------------------------------- watching in the page
def _environment(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.pop("BROWSER", None)
    env.update(
        PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
        PYTHONUNBUFFERED="1",
        CANASTA_NO_BROWSER="1",
        HOME=str(tmp),
        XDG_DATA_HOME=str(tmp / "data"),
    )
    return env


def _cli(tmp: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "canasta_net", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=_environment(tmp),
    )


def _public_cards(snap: dict[str, Any]) -> Counter[str]:
    """The cards a watcher may see at that moment: the melds, the red threes, the pile's top,
    and those the last move named (a discard, a meld, an add)."""
    state = snap.get("state") or {}
    cards: Counter[str] = Counter()
    for melds in state.get("melds") or []:
        for meld in melds:
            cards.update(meld["cards"])
    for reds in state.get("red_threes") or []:
        cards.update(reds)
    if state.get("pile_top"):
        cards[state["pile_top"]] += 1
    move = snap.get("last_move") or {}
    cards.update(w for w in str(move.get("action", "")).split()[1:] if w[:1].isalnum())
    return cards


def test_a_watcher_follows_a_live_table_in_the_page_and_sees_no_hidden_card(
    chromium_browser: Any, tmp_path: Path
) -> None:
    from test_web_e2e import Page, play_through_seam, read_url

    started: list[subprocess.Popen[bytes]] = []
    try:
        host = _cli(
            tmp_path,
            *("host", "--bind", "127.0.0.1", "--no-announce", "--port", "0", "--host-bot"),
            *("--variant", "classic-2p", "--players", "2", "--hands", "1", "--delay", "0.01"),
            *("--identity", str(tmp_path / "host.pem"), "--log", str(tmp_path / "host.cnlog")),
        )
        started.append(host)
        assert host.stdout is not None
        command = ""
        while not command:
            line = host.stdout.readline().decode()
            assert line, "the host printed no watch command"
            if line.startswith("others can watch it: "):
                command = line.removeprefix("others can watch it: ").strip()
        words = command.split()
        assert words[:2] == ["canasta", "watch"] and words[3] == "--fingerprint"
        address, fingerprint = words[2], words[4]
        seat_args = ("--known-hosts", str(tmp_path / "known_hosts"), "--ui", "web")
        watcher = _cli(
            tmp_path,
            *("watch", address, "--fingerprint", fingerprint, "--name", "wendy", *seat_args),
            *("--no-browser", "--identity", str(tmp_path / "watcher.pem")),
        )
        started.append(watcher)
        watcher_url = read_url(watcher)
        watcher_feed = Page(watcher_url)  # the same event stream as the page's, read in here
        page, outside, errors = new_page(chromium_browser)
        page.goto(watcher_url)
        page.wait_for_selector("body[data-role=spectator]")
        joiner = _cli(
            tmp_path,
            *("join", address, "--fingerprint", fingerprint, "--name", "ada", *seat_args),
            *("--no-browser", "--identity", str(tmp_path / "ada.pem")),
            *("--log", str(tmp_path / "ada.cnlog")),
        )
        started.append(joiner)
        person = Page(read_url(joiner))
        # the players see who watches
        assert "wendy" in person.wait(lambda s: "wendy" in s["watchers"])["watchers"]
        failures: list[BaseException] = []

        def play() -> None:
            try:
                play_through_seam(person, "classic-2p")
            except BaseException as e:  # told to the test below
                failures.append(e)

        playing = threading.Thread(target=play, daemon=True)
        playing.start()
        live = 0
        while playing.is_alive():
            shown, cards, mine = page.evaluate(
                "() => [Number(document.body.dataset.version || -1), Array.from("
                "document.querySelectorAll('#board .card[data-card]'), n => n.dataset.card),"
                " document.querySelectorAll('#hand .card, #me button').length]"
            )
            assert mine == 0  # no hand, no button, ever
            watcher_feed.wait(lambda s, v=shown: s["version"] >= v)
            snap = next((s for s in watcher_feed.seen if s["version"] == shown), None)
            assert snap is not None or shown < 0
            if snap is not None:
                assert snap["hand"] == [] and "hand" not in (snap["state"] or {})
            if snap is not None and snap["state"] and not snap["hand_end"]:
                # every card the page shows is public at that moment: none from a hand
                assert Counter(cards) <= _public_cards(snap), (cards, snap["state"])
                live += 1 if cards else 0
            playing.join(0.1)
        assert failures == []
        assert live > 0, "the watcher's page never showed the table live"
        page.wait_for_selector("#overlay:not([hidden])", timeout=20000)
        assert "hand total" in page.locator("#sheet-table").inner_text()
        assert page.locator("#hand .card").count() == 0
        assert outside == [] and errors == []
    finally:
        for proc in started:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


# ---------------------------------------------------------------------- other variants by clicks
def play_any_move(page: Any) -> str:
    """One move by clicking, in any variant: a May I? contract (several groups) from the legal
    moves' drawer, anything else as ``play_a_move`` plays it (the buttons, else the drawer)."""
    contracts = [m for m in legal_moves(page) if m.startswith("meld ") and "|" in m]
    if not contracts:
        return play_a_move(page)
    page.evaluate("() => { document.getElementById('legal-drawer').open = true; }")
    page.locator(f'#legal-list button[data-action="{contracts[0]}"]').click(force=True)
    return contracts[0]


@pytest.mark.parametrize("variant", ["may-i", "samba-2p", "vienna", "bolivia", "classic-3p"])
def test_a_hand_of_each_other_variant_played_by_clicks(
    chromium_browser: Any, tmp_path: Path, variant: str
) -> None:
    play = PlayProcess(tmp_path, "--variant", variant, "--hands", "1", "--delay", "0")
    try:
        page, outside, errors = new_page(chromium_browser)
        page.goto(play.url)
        moves: list[str] = []
        for _ in range(400):
            kind = wait_for_turn(page)
            if kind == "sheet":
                break
            before = version(page)
            moves.append(play_any_move(page))
            wait_for_change(page, before)
        else:
            raise AssertionError("no score sheet")
        assert "draw" in moves and any(m.startswith("discard") for m in moves)
        assert "hand total" in page.locator("#sheet-table").inner_text()
        leave_after_a_valid_audit(page, play, outside, errors)
    finally:
        play.stop()


def test_a_match_of_two_hands_played_with_the_mouse_alone(
    chromium_browser: Any, tmp_path: Path
) -> None:
    # a match, not a hand: the first score sheet's "Next hand" (a click) starts the second hand,
    # which is played by clicks to the match's end and the audit's verdict
    play = PlayProcess(tmp_path, "--variant", "classic-2p", "--hands", "2", "--delay", "0")
    try:
        page, outside, errors = new_page(chromium_browser)
        page.goto(play.url)
        first = play_hand(page)
        assert "draw" in first
        assert "hand total" in page.locator("#sheet-table").inner_text()
        page.wait_for_selector("#next-hand:not([hidden])", timeout=20000)
        page.locator("#next-hand").click()
        page.wait_for_selector("#overlay", state="hidden", timeout=20000)
        second = play_hand(page)
        assert "draw" in second
        page.wait_for_selector("#match-result .verdict", timeout=30000)
        assert "Audit: valid" in page.locator("#match-result").inner_text()
        assert page.locator("#next-hand").is_hidden()  # the match is over: no third hand
        leave_after_a_valid_audit(page, play, outside, errors)
    finally:
        play.stop()
