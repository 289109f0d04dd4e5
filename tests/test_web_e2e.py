"""End to end: ``canasta play --ui web`` as a process, played through its page's HTTP seam alone
(the event stream and the POSTs a browser page makes), no browser: a whole hand against a bot,
the score sheet, the audit's verdict, the replay, and leaving."""

from __future__ import annotations

import http.client
import json
import os
import random
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from canasta_net.cards import parse_face
from canasta_net.games import game_for

CLI = [sys.executable, "-m", "canasta_net"]
TIMEOUT = 60


def environment(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.pop("BROWSER", None)
    env.update(PYTHONUNBUFFERED="1", XDG_DATA_HOME=str(tmp_path / "data"))
    return env


class Page:
    """What a page does: follow the event stream, post moves (with the cookie and Origin)."""

    def __init__(self, url: str) -> None:
        split = urlsplit(url)
        assert split.hostname == "127.0.0.1" and split.port
        self.port = split.port
        self.token = split.query.removeprefix("token=")
        self.latest: dict[str, Any] = {}
        self.seen: list[dict[str, Any]] = []
        self.changed = threading.Condition()
        self.cookie = ""
        status, headers, _ = self.request("GET", f"/?token={self.token}")
        assert status in (200, 404)  # 404: the page's files are not in this tree yet
        self.cookie = headers["set-cookie"].split(";")[0]
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def request(
        self, method: str, path: str, body: dict[str, Any] | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        headers = {"Cookie": self.cookie} if self.cookie else {}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers.update(
                {"Origin": f"http://127.0.0.1:{self.port}", "Content-Type": "application/json"}
            )
        try:
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            return (
                response.status,
                {k.lower(): v for k, v in response.getheaders()},
                response.read(),
            )
        finally:
            conn.close()

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        status, _, data = self.request("POST", path, body)
        return status, json.loads(data)

    def _read(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT)
        conn.request("GET", "/events", headers={"Cookie": self.cookie})
        response = conn.getresponse()
        assert response.status == 200
        while True:
            line = response.fp.readline()
            if not line:
                return
            if line.startswith(b"data: "):
                snapshot = json.loads(line[6:])
                with self.changed:
                    self.latest = snapshot
                    self.seen.append(snapshot)
                    self.changed.notify_all()

    def wait(self, test: Any, seconds: float = TIMEOUT) -> dict[str, Any]:
        deadline = time.monotonic() + seconds
        with self.changed:
            while not (self.latest and test(self.latest)):
                left = deadline - time.monotonic()
                assert left > 0, f"not seen; the latest snapshot: {self.latest}"
                self.changed.wait(left)
            return self.latest


def read_url(proc: subprocess.Popen[bytes]) -> str:
    assert proc.stdout is not None
    lines = []
    for raw in proc.stdout:
        line = raw.decode().rstrip("\n")
        lines.append(line)
        if re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[A-Za-z0-9_-]{43}", line):
            return line
    raise AssertionError(f"no URL printed: {lines}")


def asked_or_over(snapshot: dict[str, Any], after: int) -> bool:
    """Whether a snapshot newer than ``after`` asks for a move, or the table is over."""
    if snapshot["match_end"] is not None or snapshot["finished"] is not None:
        return True
    return bool(snapshot["legal"]) and snapshot["version"] > after


def play_through_seam(page: Page, variant: str) -> dict[str, Any]:
    """Play the page's seat as a person would through its HTTP seam (moves chosen by the greedy
    bot from each snapshot's ``legal``) until the table is over; the last snapshot."""
    game = game_for(variant)
    bot = game.make_bot("greedy", random.Random(7))
    acted_on = -1
    deadline = time.monotonic() + TIMEOUT
    while True:
        assert time.monotonic() < deadline, "the hand did not end"
        snap = page.wait(lambda s, after=acted_on: asked_or_over(s, after))
        if snap["match_end"] is not None or snap["finished"] is not None:
            return snap
        acted_on = snap["version"]
        hand = [parse_face(c["card"]) for c in snap["hand"]]
        actions = [game.parse_action(text) for text in snap["legal"]]
        move = str(bot.choose(actions, hand, game.rules))
        status, answer = page.post("/act", {"action": move})
        # a snapshot pushed just before the move was taken may offer the same prompt again:
        # a move posted from it is refused as not this seat's turn, and the loop goes on
        assert status == 200 or answer["error"], answer


def test_a_hand_played_through_the_pages_http_seam(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    log = tmp_path / "table.cnlog"
    proc = subprocess.Popen(
        [
            *CLI,
            "play",
            "--ui",
            "web",
            "--no-browser",
            "--variant",
            "classic-2p",
            "--hands",
            "1",
            "--delay",
            "0",
            "--identity",
            str(tmp_path / "id.pem"),
            "--log",
            str(log),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment(tmp_path),
    )
    processes.append(proc)
    page = Page(read_url(proc))
    snap = play_through_seam(page, "classic-2p")
    assert any(s["hand_end"] is not None for s in page.seen), "no score sheet was shown"
    sheet = next(s["hand_end"] for s in page.seen if s["hand_end"] is not None)
    assert sheet["sides"] and all(side["parts"] for side in sheet["sides"])
    assert snap["host_fingerprint"]
    done = page.wait(lambda s: "verdict" in s["outcome"])
    assert done["outcome"]["verdict"] == "valid", done["outcome"]
    assert done["outcome"]["log"] == str(log) and done["outcome"]["replay"] == "/replay"
    status, headers, body = page.request("GET", "/replay")
    assert status == 200 and body.startswith(b"<!DOCTYPE html>")
    assert "'sha256-" in headers["content-security-policy"]
    assert proc.poll() is None  # the page stays up after the table
    assert page.post("/quit", {}) == (200, {"ok": True})
    assert proc.wait(timeout=20) == 0
