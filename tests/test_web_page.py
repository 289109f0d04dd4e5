"""The player's own page, server side (``canasta_net.web``, docs/web-client.md): the checks every
request passes (token, Host, Origin, JSON POSTs), the event stream, the moves posted back, and
``--ui``'s choice of client. Real sockets on 127.0.0.1; the client is ``http.client`` in a thread.
"""

from __future__ import annotations

import http.client
import io
import json
import os
import socket
import sys
from pathlib import Path
from typing import Any, cast

import pytest
import pytest_twisted
from test_table_protocol import Harness, config
from twisted.internet import reactor, threads
from twisted.internet.defer import Deferred
from twisted.internet.error import ConnectionDone
from twisted.internet.task import Clock
from twisted.python.failure import Failure
from twisted.web.server import NOT_DONE_YET, Request
from twisted.web.test.requesthelper import DummyChannel, DummyRequest

from canasta_net.games import game_for
from canasta_net.ui import cli
from canasta_net.ui.players import TerminalPlayer
from canasta_net.ui.table_model import TableModel
from canasta_net.web.page import NO_BROWSER, PlayerPage, browser_openable, choose_ui
from canasta_net.web.player import NOT_YOUR_TURN, WebPlayer
from canasta_net.web.server import (
    BAD_HOST,
    BAD_ORIGIN,
    MAX_BODY,
    MAX_STREAMS,
    MISSING_TOKEN,
    NOT_JSON,
    POST_WITHOUT_ORIGIN,
    SENT_PUSH_DELAY,
    PageRequest,
    PageResource,
    PageServer,
    RequestFacts,
    cookie_name,
    refusal,
    replay_policy,
)

TOKEN = "t0ken-of-the-test"
PORT = 4321


def facts(**changes: Any) -> RequestFacts:
    fields: dict[str, Any] = {
        "method": "GET",
        "path": "/events",
        "query_token": None,
        "cookie_token": TOKEN,
        "host": f"127.0.0.1:{PORT}",
        "origin": None,
        "sec_fetch_site": None,
        "content_type": None,
    }
    fields.update(changes)
    return RequestFacts(**fields)


def post(**changes: Any) -> RequestFacts:
    fields: dict[str, Any] = {
        "method": "POST",
        "path": "/act",
        "origin": f"http://127.0.0.1:{PORT}",
        "content_type": "application/json",
    }
    return facts(**{**fields, **changes})


# --------------------------------------------------------------------------- the checks
def test_the_token_the_host_and_the_origin_are_checked() -> None:
    assert refusal(facts(), TOKEN, PORT) is None
    assert refusal(facts(cookie_token=None, query_token=TOKEN), TOKEN, PORT) is None
    assert refusal(facts(host=f"localhost:{PORT}"), TOKEN, PORT) is None
    assert refusal(facts(cookie_token=None), TOKEN, PORT) == MISSING_TOKEN
    assert refusal(facts(cookie_token=TOKEN + "x"), TOKEN, PORT) == MISSING_TOKEN
    assert refusal(facts(cookie_token="", query_token="nope"), TOKEN, PORT) == MISSING_TOKEN
    # a DNS-rebinding page names its own host; another port is another program
    for host in (f"evil.example:{PORT}", f"127.0.0.1:{PORT + 1}", "127.0.0.1", None):
        assert refusal(facts(host=host), TOKEN, PORT) == BAD_HOST
    for origin in (f"http://evil.example:{PORT}", "null", f"http://127.0.0.1:{PORT + 1}"):
        assert refusal(facts(origin=origin), TOKEN, PORT) == BAD_ORIGIN
    assert refusal(facts(origin=f"http://localhost:{PORT}"), TOKEN, PORT) is None


def test_a_post_needs_this_pages_origin_and_json() -> None:
    assert refusal(post(), TOKEN, PORT) is None
    assert refusal(post(origin=None), TOKEN, PORT) == POST_WITHOUT_ORIGIN
    assert refusal(post(origin=None, sec_fetch_site="cross-site"), TOKEN, PORT) == (
        POST_WITHOUT_ORIGIN
    )
    assert refusal(post(origin=None, sec_fetch_site="same-origin"), TOKEN, PORT) is None
    assert refusal(post(origin="http://evil.example"), TOKEN, PORT) == BAD_ORIGIN
    for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data", None):
        assert refusal(post(content_type=kind), TOKEN, PORT) == NOT_JSON
    assert refusal(post(content_type="application/json; charset=utf-8"), TOKEN, PORT) is None


def test_the_replay_page_runs_only_its_own_inline_script_and_style() -> None:
    page = "<style>b{}</style><script type='application/json'>{}</script><script>go()</script>"
    policy = replay_policy(page)
    assert policy.count("'sha256-") == 2 and "unsafe-inline" not in policy
    assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy


def test_a_long_body_is_not_kept_beyond_the_limit() -> None:
    request = PageRequest(DummyChannel())
    request.gotLength(None)  # chunked: no length said
    for _ in range(10):
        request.handleContentChunk(b"x" * 10_000)
    assert request.content is not None and request.content.tell() == MAX_BODY + 1


# --------------------------------------------------------------------------- the player
class Actions:
    def __init__(self, player: WebPlayer) -> None:
        self.player = player
        self.quits = 0

    def act(self, text: str) -> str | None:
        return self.player.act(text)

    def ready(self) -> str | None:
        return self.player.ready()

    def chat(self, text: str) -> str | None:
        return self.player.chat(text)

    def quit(self) -> str | None:
        self.quits += 1
        return None

    def suggest(self) -> Deferred[dict[str, Any] | str] | str:
        return self.player.suggest()


def classic_player() -> WebPlayer:
    game = game_for("classic-2p")
    model = TableModel()
    model.welcome(game, 0, ["you", "bot"])
    return WebPlayer(model, game=lambda: game)


def test_a_move_answers_the_open_prompt_and_a_typo_is_refused_with_the_parsers_sentence() -> None:
    player = classic_player()
    assert player.act("draw") == NOT_YOUR_TURN
    assert player.model.snapshot()["refusal"]["code"] == "not-your-turn"
    chosen: list[str] = []
    player.choose(["draw", "take-pile"], {"state": {"turn": 0, "hand": ["4D"]}}).addCallback(
        chosen.append
    )
    assert player.model.snapshot()["legal"] == ["draw", "take-pile"]
    problem = player.act("drw")
    snap = player.model.snapshot()
    assert problem and snap["refusal"] == {"tried": "drw", "code": "bad-action", "message": problem}
    assert chosen == [] and snap["legal"] == ["draw", "take-pile"]  # the prompt stays open
    assert player.act("  draw ") is None
    assert chosen == ["draw"]
    snap = player.model.snapshot()
    assert snap["tried"] == "draw" and snap["legal"] == []
    assert player.act("draw") == NOT_YOUR_TURN  # answered once only


class Stream:
    """An event stream's request, as the page server writes to it: the snapshots it got."""

    def __init__(self) -> None:
        self.snapshots: list[dict[str, Any]] = []

    def write(self, data: bytes) -> None:
        if data.startswith(b"event: snapshot"):
            self.snapshots.append(json.loads(data.split(b"\ndata: ", 1)[1]))


def test_the_move_sent_snapshot_waits_for_the_tables_answer() -> None:
    clock = Clock()
    player = classic_player()
    server = PageServer(player.model, Actions(player), reactor=clock)
    stream = Stream()
    server.streams.append(stream)  # type: ignore[arg-type]
    pushed = stream.snapshots
    player.choose(["draw"], {"state": {"turn": 0, "phase": "draw", "hand": ["4D"]}})
    clock.advance(0)
    assert [s["legal"] for s in pushed] == [["draw"]]
    # the table answers within the delay: the "sent" snapshot is never pushed
    assert player.act("draw") is None
    clock.advance(SENT_PUSH_DELAY / 2)
    assert len(pushed) == 1
    player.show({"state": {"turn": 0, "phase": "play", "hand": ["4D", "9S"]}})
    clock.advance(0)
    assert len(pushed) == 2 and [h["card"] for h in pushed[1]["hand"]] == ["4D", "9S"]
    clock.advance(SENT_PUSH_DELAY)
    assert len(pushed) == 2
    # no answer: "sent" after the delay
    player.choose(["discard 4D"], {"state": {"turn": 0, "phase": "play", "hand": ["4D", "9S"]}})
    clock.advance(0)
    assert player.act("discard 4D") is None
    clock.advance(SENT_PUSH_DELAY * 0.9)
    assert pushed[-1]["legal"] == ["discard 4D"]
    clock.advance(SENT_PUSH_DELAY * 0.2)
    assert pushed[-1]["tried"] == "discard 4D" and pushed[-1]["legal"] == []
    # anything else than the move sent goes at once: a refusal, a typo refused, an event line
    player.model.refused("bad", "no such card")
    clock.advance(0)
    assert pushed[-1]["refusal"]["message"] == "no such card"
    count = len(pushed)
    assert player.act("discard 4D") is not None  # nothing asked: refused, at once
    clock.advance(0)
    assert len(pushed) == count + 1 and pushed[-1]["refusal"]["code"] == "not-your-turn"


class PostRequest(DummyRequest):
    """Twisted's stand-in for a ``Request``, with the body a POST reads."""

    content: io.BytesIO


def move_post(text: str) -> PostRequest:
    request = PostRequest([b"act"])
    request.method = b"POST"
    request.content = io.BytesIO(json.dumps({"action": text}).encode())
    return request


def post_act(resource: PageResource, request: PostRequest) -> int | bytes:
    """``resource``'s answer to ``request``, a ``DummyRequest`` standing in for its ``Request``."""
    return resource._post(cast(Request, request), "/act")


def test_an_accepted_moves_post_is_answered_with_the_next_push() -> None:
    clock = Clock()
    player = classic_player()
    server = PageServer(player.model, Actions(player), reactor=clock)
    stream = Stream()
    server.streams.append(stream)  # type: ignore[arg-type]
    resource = PageResource(server)
    player.choose(["draw"], {"state": {"turn": 0, "phase": "draw", "hand": ["4D"]}})
    clock.advance(0)
    request = move_post("draw")
    assert post_act(resource, request) == NOT_DONE_YET
    clock.advance(0)
    assert not request.finished  # not while the move is on its way
    player.show({"state": {"turn": 0, "phase": "play", "hand": ["4D", "9S"]}})
    clock.advance(0)
    assert request.finished and json.loads(b"".join(request.written)) == {"ok": True}
    # each snapshot counts the moves taken from the pages (a page tells one made before its move
    # arrived from the answer to it): 0 before, 1 since
    assert [snap["moves"] for snap in stream.snapshots] == [0, 1]
    # a move refused at once is answered at once, with why (and counted: its refusal answers it)
    refused = post_act(resource, move_post("draw"))
    assert isinstance(refused, bytes) and json.loads(refused)["ok"] is False
    clock.advance(0)
    assert stream.snapshots[-1]["moves"] == 2 and stream.snapshots[-1]["refusal"]
    # a browser that went away before the answer: nothing is written to it
    gone = move_post("draw")
    player.choose(["draw"], {"state": {"turn": 0, "phase": "draw", "hand": ["4D"]}})
    post_act(resource, gone)
    gone.processingFailed(Failure(ConnectionDone()))
    clock.advance(SENT_PUSH_DELAY)
    assert gone.written == []
    assert server._act_by_socket("draw") is not None  # the socket's moves count too
    assert server.snapshot()["moves"] == 4


def test_the_next_hand_waits_for_ready() -> None:
    player = classic_player()
    gate = player.hand_gate(1)
    assert isinstance(gate, Deferred) and not gate.called
    assert player.model.snapshot()["ready_asked"] is True
    assert player.ready() is None
    assert gate.called and player.model.snapshot()["ready_asked"] is False
    assert player.ready() is not None  # nothing to be ready for now
    # ready while the score sheet shows, before the session asks: the gate lets it through
    player.model.hand_end = {"hand": 1}
    assert player.ready() is None
    assert player.hand_gate(2) is None
    gate = player.hand_gate(3)
    assert isinstance(gate, Deferred) and player.ready() is None and gate.called
    # a ready for another hand than the one asked about does not count
    player.model.hand_end = {"hand": 3}
    assert player.ready() is None
    assert isinstance(player.hand_gate(5), Deferred)


def test_the_page_leaves_the_table_then_closes_after_it() -> None:
    clock = Clock()
    left: list[str] = []
    page = PlayerPage(clock, game=lambda: None, on_chat=None, on_quit=lambda: left.append("table"))
    assert page.quit() is None and left == ["table"] and not page.closed.called
    running = Deferred.fromCoroutine(page.after_table(None, 0))
    assert not running.called
    assert page.model.snapshot()["finished"] == "you left the table"
    assert page.chat("hello") is not None
    # no page open after the table: the process ends after a grace (a reload comes back sooner)
    clock.advance(25)
    assert page.closed.called and running.called


def test_ui_choice() -> None:
    def yes() -> bool:
        return True

    def no() -> bool:
        return False

    assert not choose_ui("terminal", openable=yes, scripted=no).web
    web = choose_ui("web", openable=no, scripted=yes)
    assert web.web and not web.open_browser
    assert choose_ui("web", openable=yes, scripted=no).open_browser
    assert not choose_ui("web", no_browser=True, openable=yes, scripted=no).open_browser
    auto = choose_ui("auto", openable=yes, scripted=no)
    assert auto.web and auto.open_browser
    assert choose_ui("auto", openable=no, scripted=no).note == NO_BROWSER
    assert not choose_ui("auto", openable=no, scripted=no).web
    assert not choose_ui("auto", no_browser=True, openable=yes, scripted=no).web
    # a program feeding stdin keeps the terminal client, without a word
    scripted = choose_ui("auto", openable=yes, scripted=yes)
    assert not scripted.web and scripted.note is None
    assert not browser_openable({}, "linux")
    assert browser_openable({"BROWSER": "firefox"}, "linux")


def test_auto_without_a_display_plays_in_the_terminal_and_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER", "CANASTA_NO_BROWSER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    with open(os.devnull) as devnull:  # not a program's pipe: auto looks for a browser
        monkeypatch.setattr(sys, "stdin", devnull)
        player, page = cli._local_player(
            None, "auto", False, done=Deferred(), session_box=[], connection_box=[], fingerprint=""
        )
    assert isinstance(player, TerminalPlayer) and page is None
    out, err = capsys.readouterr()
    assert err == NO_BROWSER + "\n" and "token=" not in out


# --------------------------------------------------------------------------- real sockets
def static_dir(tmp_path: Path) -> Path:
    static = tmp_path / "static"
    static.mkdir()
    (static / "index.html").write_text("<!doctype html><title>table</title>")
    (static / "app.js").write_text("console.log('table');")
    (tmp_path / "secret.txt").write_text("not for the page")
    return static


def request(
    port: int,
    method: str,
    path: str,
    *,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    host: str | None = None,
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host or f"127.0.0.1:{port}")
        for name, value in (headers or {}).items():
            conn.putheader(name, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def read_events(port: int, token: str, count: int, on_first: Any = None) -> list[dict[str, Any]]:
    """Read ``count`` snapshots from the event stream (calling ``on_first`` after the first)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", f"/events?token={token}")
    response = conn.getresponse()
    assert response.status == 200
    assert response.getheader("content-type", "").startswith("text/event-stream")
    snapshots: list[dict[str, Any]] = []
    event = None
    while len(snapshots) < count:
        line = response.fp.readline().decode().rstrip("\n")
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: ") and event == "snapshot":
            snapshots.append(json.loads(line[6:]))
            if len(snapshots) == 1 and on_first is not None:
                reactor.callFromThread(on_first)  # type: ignore[attr-defined]
    conn.close()
    return snapshots


@pytest.fixture
def served(tmp_path: Path) -> Any:
    player = classic_player()
    actions = Actions(player)
    server = PageServer(player.model, actions, reactor=reactor, static=static_dir(tmp_path))
    server.listen()
    yield server, player, actions
    server.stop()


@pytest_twisted.ensureDeferred
async def test_requests_without_the_token_or_from_elsewhere_get_403(served: Any) -> None:
    server, _, _ = served
    port, token = server.port, server.token

    def run() -> None:
        status, headers, body = request(port, "GET", f"/?token={token}")
        assert status == 200 and b"<title>table</title>" in body
        cookie = headers["set-cookie"]
        assert cookie.startswith(f"{cookie_name(port)}={token};")
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
        assert headers["content-security-policy"].startswith("default-src 'self'")
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "no-referrer"
        assert headers["cache-control"] == "no-store"
        good = {"Cookie": f"{cookie_name(port)}={token}"}
        assert request(port, "GET", "/static/app.js", headers=good)[0] == 200
        assert request(port, "GET", "/")[0] == 403
        assert request(port, "GET", "/?token=wrong")[0] == 403
        assert request(port, "GET", "/static/app.js")[0] == 403
        status, headers, body = request(port, "GET", "/static/app.js", headers={"Cookie": "x=1"})
        assert status == 403 and body.startswith(b"Forbidden")
        assert headers["content-security-policy"].startswith("default-src 'self'")
        for host in (f"evil.example:{port}", f"127.0.0.1:{port + 1}"):
            assert request(port, "GET", f"/?token={token}", host=host)[0] == 403
        origin = {**good, "Origin": "http://evil.example"}
        assert request(port, "GET", "/events", headers=origin)[0] == 403
        move = {**good, "Content-Type": "application/json"}
        assert request(port, "POST", "/quit", body=b"{}", headers=move)[0] == 403
        form = {**good, "Origin": f"http://127.0.0.1:{port}"}
        assert request(port, "POST", "/quit", body=b"{}", headers=form)[0] == 403
        for path in (
            "/static/../secret.txt",
            "/static/%2e%2e/secret.txt",
            "/static/..%2fsecret.txt",
            "/static/.hidden",
            "/static/",
            "/secret.txt",
        ):
            assert request(port, "GET", path, headers=good)[0] in (403, 404), path
        assert request(port, "GET", "/replay", headers=good)[0] == 404  # the match goes on

    await threads.deferToThread(run)


@pytest_twisted.ensureDeferred
async def test_posts_reach_the_seat(served: Any) -> None:
    server, player, actions = served
    port, token = server.port, server.token
    chosen: list[str] = []
    player.choose(["draw"], {"state": {"turn": 0, "hand": ["4D"]}}).addCallback(chosen.append)
    headers = {
        "Cookie": f"{cookie_name(port)}={token}",
        "Origin": f"http://localhost:{port}",
        "Content-Type": "application/json",
    }

    def run() -> list[tuple[int, Any]]:
        answers = []
        for path, body in (
            ("/act", b'{"action": "drw"}'),
            ("/act", b'{"action": "draw"}'),
            ("/act", b"not json"),
            ("/act", b'["draw"]'),
            ("/act", b'{"move": "draw"}'),
            ("/act", b'{"action": "' + b"x" * 20000 + b'"}'),
            ("/quit", b"{}"),
        ):
            status, _, data = request(port, "POST", path, body=body, headers=headers)
            answers.append((status, json.loads(data)))
        return answers

    def chunked() -> tuple[int, Any]:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            body = (b"x" * 1000 for _ in range(200))  # no length: sent in chunks
            conn.request("POST", "/chat", body=body, headers=headers, encode_chunked=True)
            response = conn.getresponse()
            return response.status, json.loads(response.read())
        finally:
            conn.close()

    answers = await threads.deferToThread(run)
    status, data = await threads.deferToThread(chunked)
    assert status == 400 and "too long" in data["error"]
    assert answers[0][0] == 400 and not answers[0][1]["ok"] and "drw" in answers[0][1]["error"]
    assert answers[1] == (200, {"ok": True})
    assert chosen == ["draw"]
    assert all(status == 400 and not data["ok"] for status, data in answers[2:6])
    assert answers[6] == (200, {"ok": True}) and actions.quits == 1


@pytest_twisted.ensureDeferred
async def test_the_event_stream_sends_a_snapshot_then_each_change(served: Any) -> None:
    server, player, _ = served

    def change() -> None:
        player.model.event("one")
        player.model.event("two")  # the same turn: one push

    snapshots = await threads.deferToThread(read_events, server.port, server.token, 2, change)
    first, second = snapshots
    assert second["version"] > first["version"]
    assert second["events"][-2:] == ["one", "two"] and "one" not in first["events"]


@pytest_twisted.ensureDeferred
async def test_at_most_four_event_streams(served: Any) -> None:
    server, _, _ = served
    port = server.port

    def run() -> tuple[list[bytes], bytes]:
        opened = []
        request_line = (
            f"GET /events?token={server.token} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
        ).encode()
        firsts = []
        for _ in range(MAX_STREAMS):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            sock.sendall(request_line)
            firsts.append(sock.recv(100))
            opened.append(sock)
        status, _, body = request(port, "GET", f"/events?token={server.token}")
        for sock in opened:
            sock.close()
        return firsts, f"{status} ".encode() + body

    firsts, refused = await threads.deferToThread(run)
    assert all(first.startswith(b"HTTP/1.1 200") for first in firsts)
    assert refused.startswith(b"429 ")


# --------------------------------------------------------------------------- at a table
def test_the_lobby_fills_and_the_engines_refusal_reaches_the_page() -> None:
    h = Harness(config(players=3))
    ada = h.remote("ada", connect=False)
    player = WebPlayer(game=lambda: ada.session.game)
    ada.session.player = player
    ada.session.observer = player.model

    def run() -> None:
        """Move every message; ada's session answers on its own connection (the harness's
        outbox is gone by the time the page's move comes)."""
        while True:
            assert h.run(hold=(ada,)) is None
            ada.collect()
            if not ada.pending:
                return
            while ada.pending:
                ada.session.handle(ada.pending.pop(0), ada.send)

    ada.connect()
    run()
    seats = player.model.snapshot()["seats"]
    assert [(s["name"], s["taken"], s["bot"]) for s in seats][1:3] == [
        ("ada", True, False),
        ("(open)", False, False),
    ]
    h.remote("bob")
    run()
    snap = player.model.snapshot()
    assert [(s["name"], s["taken"]) for s in snap["seats"]][1:3] == [("ada", True), ("bob", True)]
    # ada is asked (the table waits for her): a move the engine refuses (a discard before the draw)
    assert snap["prompt"]["kind"] == "turn" and "draw" in snap["legal"], snap["prompt"]
    card = snap["hand"][0]["card"]
    assert player.act(f"discard {card}") is None  # read, and sent
    run()
    snap = player.model.snapshot()
    refusal = snap["refusal"]
    assert refusal is not None and refusal["tried"] == f"discard {card}", snap["events"][-3:]
    assert refusal["code"] not in ("bad-action", "not-your-turn") and refusal["message"]
    assert "draw" in snap["legal"]  # asked again
    assert player.act("draw") is None
    run()
    snap = player.model.snapshot()
    assert snap["refusal"] is None and snap["last_move"]["action"] == "draw"


def test_play_host_and_join_take_ui() -> None:
    from click.testing import CliRunner

    for command in ("play", "host", "join"):
        help_text = CliRunner().invoke(cli.main, [command, "--help"]).output
        assert "--ui [auto|web|terminal]" in help_text, command
        assert "--no-browser" not in help_text  # hidden: for tests
    refused = CliRunner().invoke(cli.main, ["play", "--ui", "browser"])
    assert refused.exit_code == 2 and "Traceback" not in refused.output


def test_the_lobby_asks_for_a_table_then_the_fingerprint_and_leaving_refuses() -> None:
    clock = Clock()
    page = PlayerPage(clock, game=lambda: None, on_chat=None, on_quit=lambda: None)
    assert page.trust(True) is not None and page.pick(0) is not None  # nothing asked yet
    picked: list[int] = []
    page.show_tables([{"name": "a"}, {"name": "b"}]).addCallback(picked.append)
    again = page.show_tables([{"name": "a"}])  # the list as heard now: the same question
    assert page.model.snapshot()["lobby"] == {"tables": [{"name": "a"}]}
    assert page.pick(1) is not None and picked == []  # not in the list shown
    assert page.pick(0) is None and picked == [0] and again.called
    assert page.model.snapshot()["lobby"] is None
    answers: list[bool] = []
    page.ask_trust("h:1", "fp", "kitchen").addCallback(answers.append)
    assert page.model.snapshot()["lobby"] == {
        "trust": {"address": "h:1", "fingerprint": "fp", "table": "kitchen"}
    }
    assert page.trust(True) is None and answers == [True]
    # the page left while asked: a refusal, told a moment later (the answer goes out first)
    page.ask_trust("h:1", "fp").addCallback(answers.append)
    assert page.quit() is None and answers == [True]
    assert page.model.snapshot()["finished"]
    clock.advance(1)
    assert answers == [True, False]
    page.show_tables([]).addCallback(picked.append)
    page.stdin_quit()
    assert picked == [0, -1]


def test_the_hosts_watch_command() -> None:
    assert cli._watch_command("127.0.0.1", 5, "fp") == "canasta watch 127.0.0.1:5 --fingerprint fp"
    assert cli._watch_command("::1", 5, "fp") == "canasta watch [::1]:5 --fingerprint fp"
    assert "0.0.0.0" not in cli._watch_command("0.0.0.0", 5, "fp")


def test_a_pick_finds_its_table_by_address_when_the_list_changed_meanwhile() -> None:
    page = PlayerPage(Clock(), game=lambda: None, on_chat=None, on_quit=lambda: None)
    picked: list[int] = []
    page.show_tables([{"name": "a", "address": "h:1"}, {"name": "b", "address": "h:2"}])
    # the person clicked "b" (index 1) but, meanwhile, "a" went quiet and "c" was heard first
    page.show_tables(
        [{"name": "c", "address": "h:3"}, {"name": "b", "address": "h:2"}]
    ).addCallback(picked.append)
    page.show_tables([{"name": "b", "address": "h:2"}, {"name": "c", "address": "h:3"}])
    assert page.pick(1, "h:2") is None and picked == [0]
    page.show_tables([{"name": "c", "address": "h:3"}])
    assert page.pick(0, "h:9") is not None  # gone from the list: not some other table
