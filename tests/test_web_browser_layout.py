"""The page's layout in the system Chromium, with snapshots written here (no canasta process): the
page's files come from the package, its event stream and catalogue from the test (Playwright's
routes; nothing leaves the browser). A partner's question on a phone-wide screen is scrolled into
view; the scores name the teams' players in the lobby, where the seats carry no team yet."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from web_driver import playwright_missing, select_cards

STATIC = Path(__file__).resolve().parent.parent / "canasta_net" / "web" / "static"
ORIGIN = "http://127.0.0.1:9"  # never reached: every request is answered by a route
CATALOGUE = {"lang": "en", "messages": {}, "ranks": {}, "joker": "Jkr", "languages": {}}
NAMES = ["ada", "bo", "cy", "di"]

pytestmark = pytest.mark.skipif(playwright_missing() is not None, reason=str(playwright_missing()))


def snapshot(**changes: Any) -> dict[str, Any]:
    """A classic four-player table in the middle of a hand: four melds a side, eleven cards in
    each hand; changed by ``changes``."""

    def melds(ranks: str) -> list[dict[str, Any]]:
        return [
            {"index": i, "label": f"{r}s", "cards": [f"{r}C", f"{r}D", f"{r}S", "2H"], "points": 60}
            for i, r in enumerate(ranks)
        ]

    snap: dict[str, Any] = {
        "v": 1,
        "version": 7,
        "lang": "en",
        "role": "player",
        "game": "canasta",
        "variant": "classic",
        "table": "kitchen",
        "hand_no": 1,
        "seat": 0,
        "seats": [
            {"seat": i, "name": n, "team": i % 2, "you": i == 0, "to_move": i == 2, "cards": 11}
            for i, n in enumerate(NAMES)
        ],
        "scores": [120, 90],
        "score_names": [["ada", "cy"], ["bo", "di"]],
        "target": 5000,
        "history": [],
        "hand": [
            {"card": c, "group": c[:-1], "new": False}
            for c in ["4C", "4D", "6S", "7H", "8C", "8S", "9D", "JC", "QH", "KS", "AD"]
        ],
        "state": {"phase": "play", "turn": 2, "melds": None},
        "sides": [
            {
                "team": t,
                "names": [NAMES[t], NAMES[t + 2]],
                "yours": t == 0,
                "meld_points": 240,
                "canastas": 0,
                "needs": None,
                "red_threes": [],
                "melds": melds("5TJQ" if t else "6789"),
            }
            for t in (0, 1)
        ],
        "pile": {"top": "9S", "size": 12, "stock": 60, "frozen": False},
        "prompt": {"kind": "answer-go-out", "text": "cy asks: may I go out?"},
        "legal": ["answer yes", "answer no"],
        "actions": {"answer": ["answer yes", "answer no"]},
        "last_move": {"seat": 2, "name": "cy", "action": "ask-go-out"},
        "events": [f"line {i}" for i in range(30)],
        "outcome": {},
    }
    snap.update(changes)
    return snap


@pytest.fixture
def chromium(chromium_browser: Any) -> Any:
    """The process's Chromium (conftest: one per process, each test's pages closed after it)."""
    return chromium_browser


# An event stream the test pushes snapshots on (``window.__push(snap)``), one at a time.
PUSHED_EVENTS = """
window.__listeners = [];
window.EventSource = function () {
  this.addEventListener = (kind, f) => { if (kind === "snapshot") window.__listeners.push(f); };
  this.close = () => {};
};
window.__push = (snap) => window.__listeners.forEach((f) => f({ data: JSON.stringify(snap) }));
"""


def open_page(
    b: Any,
    snap: dict[str, Any],
    width: int,
    height: int,
    *,
    pushed: bool = False,
    socket_drops_moves: bool = False,
) -> Any:
    """The page at ``width`` x ``height``, sent ``snap`` as its one snapshot (its console errors
    listed in ``page.errors``); ``pushed``: on an event stream that ``push`` sends more on;
    ``socket_drops_moves``: the move socket closes when a move comes on it."""
    page = b.new_page(viewport={"width": width, "height": height})
    if pushed:
        page.add_init_script(PUSHED_EVENTS)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))

    def route(r: Any) -> None:
        path = r.request.url[len(ORIGIN) :].split("?")[0]
        if path == "/":
            r.fulfill(path=STATIC / "index.html", content_type="text/html")
        elif path.startswith("/static/"):
            r.fulfill(path=STATIC / path[len("/static/") :])
        elif path == "/i18n.json":
            r.fulfill(body=json.dumps(CATALOGUE), content_type="application/json")
        elif path == "/events":
            event = f"retry: 600000\n\nevent: snapshot\ndata: {json.dumps(snap)}\n\n"
            r.fulfill(body=event, content_type="text/event-stream")
        else:
            r.abort()

    page.route("**/*", route)
    sent: list[str] = []  # the moves the page sends on its socket (opened, never answered)

    def socket(ws: Any) -> None:
        def move(message: Any) -> None:
            sent.append(message)
            if socket_drops_moves:
                ws.close()

        ws.on_message(move)

    page.route_web_socket("**/ws", socket)
    page.goto(ORIGIN + "/?token=t")
    if pushed:
        page.wait_for_function("() => window.__listeners.length > 0")
        push(page, snap)
    page.wait_for_selector(f'body[data-version="{snap["version"]}"]')
    page.errors = errors
    page.sent = sent
    return page


def push(page: Any, snap: dict[str, Any]) -> None:
    """Send ``snap`` on a ``pushed`` page's event stream; return once it is drawn."""
    page.evaluate("s => window.__push(s)", snap)
    page.wait_for_selector(f'body[data-version="{snap["version"]}"]')


def in_view(page: Any, selector: str) -> bool:
    return bool(
        page.evaluate(
            """s => { const r = document.querySelector(s).getBoundingClientRect();
                      return r.top >= 0 && r.bottom <= window.innerHeight; }""",
            selector,
        )
    )


def test_a_partners_question_on_a_phone_is_scrolled_into_view(chromium: Any) -> None:
    page = open_page(chromium, snapshot(), 390, 700)
    page.wait_for_function("() => window.scrollY > 0", timeout=5000)  # the table is above it
    assert in_view(page, "#prompt") and page.locator('#prompt button[data-action="answer yes"]')
    # the person scrolls back up to read the table: the same question does not pull them back
    page.evaluate("() => window.scrollTo(0, 0)")
    page.wait_for_timeout(100)
    assert page.evaluate("() => window.scrollY") == 0
    assert not page.errors


def test_the_lobbys_scores_name_the_teams_players(chromium: Any) -> None:
    lobby = snapshot(
        state=None,
        seats=[{"seat": i, "name": n, "team": None, "you": i == 0} for i, n in enumerate(NAMES)],
        scores=[0, 0],
        hand=[],
        sides=[],
        prompt=None,
        legal=[],
        actions={},
        last_move=None,
        events=[],
    )
    page = open_page(chromium, lobby, 1280, 800)
    chips = page.eval_on_selector_all("#score-line .score", "ns => ns.map(n => n.textContent)")
    assert chips[:2] == ["ada & cy: 0", "bo & di: 0"]
    assert not page.errors


def test_cards_received_outside_ones_turn_are_named(chromium: Any) -> None:
    hand = [
        {"card": c, "group": c[-1], "new": False, "received": c in ("KS", "2H")}
        for c in ["5C", "9D", "KS", "2H"]
    ]
    page = open_page(
        chromium,
        snapshot(game="may-i", hand=hand, received=["KS", "2H"], prompt=None, legal=[], actions={}),
        1280,
        800,
    )
    said = page.eval_on_selector_all("#prompt .arrived", "ns => ns.map(n => n.textContent)")
    assert said == ["You received K\u2660 2\u2665."]
    new = page.eval_on_selector_all("#hand .card.new", "ns => ns.map(n => n.dataset.card)")
    assert new == ["KS", "2H"]
    assert not page.errors


def test_the_hand_and_the_seats_are_updated_in_place(chromium: Any) -> None:
    """A move changes a card or two and a seat or two: the nodes of what stays are kept (drawn
    anew, each was styled and laid out again in the frame after every move)."""
    first = snapshot()
    page = open_page(chromium, first, 1280, 800, pushed=True)
    page.evaluate(
        """() => {
      document.querySelectorAll('#hand .card').forEach((n) => { n.__kept = n.dataset.card; });
      document.querySelectorAll('#seats .seat').forEach((n) => { n.__kept = n.dataset.seat; });
    }"""
    )
    cards = ["4C", "4D", "5H", "6S", "7H", "8C", "9D", "JC", "QH", "KS", "AD"]  # 8S out, 5H in
    seats = [dict(s) for s in first["seats"]]
    seats[2].update(cards=10, to_move=False)
    seats[3].update(to_move=True)
    hand = [{"card": c, "group": c[:-1], "new": c == "5H"} for c in cards]
    push(page, snapshot(version=8, hand=hand, seats=seats))
    drawn = page.eval_on_selector_all(
        "#hand .card", "ns => ns.map(n => [n.dataset.card, n.__kept || null, n.dataset.index])"
    )
    assert [d[0] for d in drawn] == cards
    assert [d[1] for d in drawn] == [None if c == "5H" else c for c in cards]
    assert [d[2] for d in drawn] == [str(i) for i in range(len(cards))]
    groups = page.eval_on_selector_all("#hand .group", "ns => ns.map(n => n.dataset.group)")
    assert groups == ["4", "5", "6", "7", "8", "9", "J", "Q", "K", "A"]
    assert page.eval_on_selector("#hand .card.new", "n => n.dataset.card") == "5H"
    boxes = page.eval_on_selector_all(
        "#seats .seat",
        "ns => ns.map(n => [n.__kept, n.classList.contains('to-move'),"
        " n.querySelectorAll('.backs .card').length, n.querySelector('.info').textContent])",
    )
    assert [b[0] for b in boxes] == ["0", "1", "2", "3"]
    assert [b[1] for b in boxes] == [False, False, False, True]
    assert [b[2] for b in boxes] == [0, 11, 10, 11]
    assert "cards: 10" in boxes[2][3] and "to move" in boxes[3][3]
    page.locator('#hand .card[data-card="5H"]').click()  # a kept node still selects its card
    assert page.eval_on_selector_all(
        "#hand .card.selected", "ns => ns.map(n => n.dataset.card)"
    ) == ["5H"]
    assert not page.errors


def test_a_kept_meld_lights_for_the_selection_and_takes_it_by_the_socket(chromium: Any) -> None:
    """The melds stay drawn while the selection and the legal moves change around them; the one
    the selection may be added to lights up, and a click on it sends the move on the socket."""
    turn = snapshot(
        state={"phase": "play", "turn": 0, "melds": None},
        prompt={"kind": "turn", "text": "Your turn: meld, add or discard."},
        legal=["add 2 8C", "discard 8C", "discard 4C"],
        actions={"add": ["add 2 8C"], "discard": ["discard 8C", "discard 4C"]},
    )
    page = open_page(chromium, turn, 1280, 800)
    page.evaluate("() => document.querySelectorAll('#sides .meld').forEach(n => n.__kept = 1)")
    page.locator('#hand .card[data-card="8C"]').click()
    lit = page.eval_on_selector_all("#sides .meld.target", "ns => ns.map(n => n.dataset.meld)")
    assert lit == ["2"]
    assert page.eval_on_selector_all("#sides .meld", "ns => ns.every(n => n.__kept === 1)")
    page.locator("#sides .meld.target").click()
    page.wait_for_function("() => document.getElementById('me').classList.contains('sending')")
    assert [json.loads(m) for m in page.sent] == [{"action": "add 2 8C"}]
    assert not page.errors


SENDING = "() => document.getElementById('me').classList.contains('sending')"


def press_while_a_snapshot_comes(page: Any, selector: str, snap: dict[str, Any]) -> None:
    """Press the mouse on ``selector``, let ``snap`` come and be drawn, then release: a person's
    click takes a tenth of a second, and another player's move or a chat line comes meanwhile."""
    box = page.locator(selector).bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    push(page, snap)
    page.mouse.up()


def test_a_button_pressed_while_a_snapshot_is_drawn_still_sends_its_move(chromium: Any) -> None:
    """The controls and the prompt's answers are drawn again with every snapshot: a button
    replaced between its press and its release got no click, and the move was lost (the page
    waited for a snapshot that never came). The same button is kept, and takes the click."""
    events = [f"line {i}" for i in range(30)]
    turn = snapshot(
        state={"phase": "draw", "turn": 0, "melds": None},
        prompt={"kind": "turn", "text": "Your turn: draw from the stock or take the pile."},
        legal=["draw", "take-pile"],
        actions={"draw": ["draw"], "take-pile": ["take-pile"]},
        events=events,
    )
    page = open_page(chromium, turn, 1280, 800, pushed=True)
    chat = dict(turn, version=8, events=[*events, "bo: good luck"])
    press_while_a_snapshot_comes(page, '#controls button[data-action="draw"]', chat)
    page.wait_for_function(SENDING, timeout=5000)
    assert [json.loads(m) for m in page.sent] == [{"action": "draw"}]
    # a partner's question, answered while a watcher comes
    asked = snapshot(version=9)
    push(page, asked)
    watcher = dict(asked, version=10, watchers=["ada's friend"])
    press_while_a_snapshot_comes(page, '#prompt button[data-action="answer yes"]', watcher)
    page.wait_for_function(SENDING, timeout=5000)
    assert [json.loads(m) for m in page.sent][1:] == [{"action": "answer yes"}]
    assert not page.errors


def test_a_move_whose_socket_closes_before_any_snapshot_leaves_the_page_playable(
    chromium: Any,
) -> None:
    """A move sent on a socket that closes then may never have reached the seat, and no
    snapshot comes for it: the page stayed "sending" for ever, and took no click again. It says
    the connection was lost, and the same button sends the move again (on the reopened socket)."""
    turn = snapshot(
        state={"phase": "draw", "turn": 0, "melds": None},
        prompt={"kind": "turn", "text": "Your turn: draw from the stock or take the pile."},
        legal=["draw", "take-pile"],
        actions={"draw": ["draw"], "take-pile": ["take-pile"]},
    )
    page = open_page(chromium, turn, 1280, 800, socket_drops_moves=True)
    page.locator('#controls button[data-action="draw"]').click()
    page.wait_for_function(f"() => !({SENDING})()", timeout=5000)
    refusal = page.locator("#refusal").inner_text()
    assert "draw" in refusal and "lost its connection" in refusal
    page.wait_for_timeout(1300)  # the socket opens again after a second
    page.locator('#controls button[data-action="draw"]').click()
    for _ in range(100):  # the socket's messages reach the test as the page runs
        if len(page.sent) >= 2:
            break
        page.wait_for_timeout(50)
    assert [json.loads(m) for m in page.sent] == [{"action": "draw"}] * 2
    assert not page.errors


def test_the_driver_selects_exactly_the_cards_asked_after_a_refusal_left_some_selected(
    chromium: Any,
) -> None:
    """A refused meld leaves its cards selected; the driver (tests/web_driver.py) unselects
    them all before it selects the next move's (it unselected every other one, then waited for
    a card that was no longer selected)."""
    page = open_page(chromium, snapshot(), 1280, 800)
    for card in ("4C", "4D", "6S"):
        page.locator(f'#hand .card[data-card="{card}"]').click()
    select_cards(page, ["9D"])
    chosen = page.eval_on_selector_all("#hand .card.selected", "ns => ns.map(n => n.dataset.card)")
    assert chosen == ["9D"]
    assert not page.errors


def test_a_quick_answer_comes_without_greying_the_buttons_and_a_slow_one_greys_them(
    chromium: Any,
) -> None:
    """The page greys its buttons only when the answer is slow (0.1 s): greyed at the click,
    they were restyled again inside the answer's render, some milliseconds later."""
    turn = snapshot(
        state={"phase": "draw", "turn": 0, "melds": None},
        prompt={"kind": "turn", "text": "Your turn: draw from the stock or take the pile."},
        legal=["draw", "take-pile"],
        actions={"draw": ["draw"], "take-pile": ["take-pile"]},
    )
    page = open_page(chromium, turn, 1280, 800, pushed=True)
    # the page's own clock times each try: from the click (seen before the page's handler
    # starts its 0.1 s timer) to the answer drawn (the body's version, set after the handler
    # that ends the sending)
    page.evaluate(
        """() => {
             new MutationObserver(() => {
               if (document.getElementById('me').classList.contains('sending')) window.__greyed = 1;
             }).observe(document.getElementById('me'), { attributes: true });
             document.addEventListener('click', () => { window.__clicked = performance.now(); },
               true);
             new MutationObserver(() => { window.__drawn = performance.now(); })
               .observe(document.body, { attributes: true, attributeFilter: ['data-version'] });
           }"""
    )
    # a quick answer: one the page drew within 0.1 s of the click (on a loaded machine a try
    # may take longer between the two; such a try proves nothing and is made again, with a
    # new turn)
    version, quick = 8, 0
    while quick == 0 and version < 48:
        page.evaluate("() => { window.__greyed = undefined; }")
        page.locator('#controls button[data-action="draw"]').click()
        push(page, dict(turn, version=version, legal=[], actions={}, prompt=None))  # the answer
        answered_ms = page.evaluate("() => window.__drawn - window.__clicked")
        page.wait_for_timeout(300)
        if answered_ms < 95:
            quick += 1
            assert page.evaluate("() => window.__greyed") is None, answered_ms
        push(page, dict(turn, version=version + 1))
        version += 2
    assert quick, "no answer reached the page within 0.1 s of its click"
    page.locator('#controls button[data-action="draw"]').click()  # no answer comes
    page.wait_for_function(SENDING, timeout=5000)
    assert [json.loads(m) for m in page.sent] == [{"action": "draw"}] * (version // 2 - 3)
    assert not page.errors


def test_a_card_that_leaves_the_middle_of_the_hand_moves_no_other_card(chromium: Any) -> None:
    """A discard or a meld takes cards from the middle of the hand: only those leave the page.
    (Removed after the rest was put in order, every card and group after them was taken out and
    put back, and laid out and painted anew in the answer's frame.)"""
    first = snapshot()
    page = open_page(chromium, first, 1280, 800, pushed=True)
    page.evaluate(
        """() => {
      window.__removed = [];
      new MutationObserver((records) => records.forEach((r) => r.removedNodes.forEach((n) =>
        window.__removed.push(n.dataset.card || 'group ' + n.dataset.group))))
        .observe(document.getElementById('hand'), { childList: true, subtree: true });
    }"""
    )
    cards = ["4C", "4D", "6S", "8C", "8S", "9D", "JC", "QH", "KS", "AD"]  # 7H discarded
    hand = [{"card": c, "group": c[:-1], "new": False} for c in cards]
    push(page, snapshot(version=8, hand=hand))
    assert page.evaluate("() => window.__removed") == ["group 7"]
    cards.remove("4D")  # a card from a group that stays
    hand = [{"card": c, "group": c[:-1], "new": False} for c in cards]
    push(page, snapshot(version=9, hand=hand))
    assert page.evaluate("() => window.__removed") == ["group 7", "4D"]
    drawn = page.eval_on_selector_all("#hand .card", "ns => ns.map(n => n.dataset.card)")
    assert drawn == cards
    assert not page.errors


def test_a_part_the_page_cannot_draw_does_not_stop_the_rest(chromium: Any) -> None:
    """One part that throws (here a pile the page cannot read) stopped the whole render: the
    table stood still on the last snapshot drawn, and the person's clicks seemed to do nothing.
    The other parts are drawn, the fault is on the console and on the body."""
    page = open_page(chromium, snapshot(), 1280, 800, pushed=True)
    cards = ["4C", "4D", "6S", "8C", "8S", "9D", "JC", "QH", "KS", "AD"]
    hand = [{"card": c, "group": c[:-1], "new": False} for c in cards]
    push(page, snapshot(version=8, hand=hand, pile={"top": {"not": "a card"}, "size": 3}))
    assert page.get_attribute("body", "data-hand") == " ".join(cards)
    assert (page.get_attribute("body", "data-render-error") or "").startswith("pile: ")
    assert any("could not draw its pile" in e for e in page.errors)
    push(page, snapshot(version=9))  # the next snapshot draws the pile again
    assert page.locator("#pile .card").count() > 0


def test_a_snapshot_made_before_the_move_arrived_does_not_end_its_wait(chromium: Any) -> None:
    """A snapshot the server pushed before the move reached it (here a chat line), drawn after
    the click, ended the wait: the old question showed again and a second click was refused as
    "not your turn". The page draws it and goes on waiting until a snapshot counts the move."""
    turn = snapshot(
        state={"phase": "draw", "turn": 0, "melds": None},
        prompt={"kind": "turn", "text": "Your turn: draw from the stock or take the pile."},
        legal=["draw", "take-pile"],
        actions={"draw": ["draw"], "take-pile": ["take-pile"]},
        moves=4,
    )
    page = open_page(chromium, turn, 1280, 800, pushed=True)
    page.locator('#controls button[data-action="draw"]').click()
    page.wait_for_function(SENDING, timeout=5000)  # greyed: waiting for the answer
    made_before = dict(turn, version=8, events=[*turn["events"], "bo: good luck"])
    push(page, made_before)
    assert "bo: good luck" in page.locator("body").inner_text()
    assert page.evaluate(f"({SENDING})()"), "the wait ended on a snapshot older than the move"
    page.locator('#controls button[data-action="draw"]').click(force=True)
    page.wait_for_timeout(200)
    assert [json.loads(m) for m in page.sent] == [{"action": "draw"}]  # nothing sent twice
    answered = dict(turn, version=9, moves=5, prompt=None, legal=[], actions={}, tried="draw")
    push(page, answered)
    page.wait_for_function(f"() => !({SENDING})()", timeout=5000)
    assert not page.errors
