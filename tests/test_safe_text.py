"""Text from another party never reaches a terminal raw: names, chats, reasons, refusals."""

from __future__ import annotations

import io
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from canasta_net.canasta.rules import preset
from canasta_net.identity import Identity
from canasta_net.log import StoredRecord
from canasta_net.log import records as R
from canasta_net.net.peer import PeerSession, comings_and_goings, describe_record
from canasta_net.safe_text import safe_lines, safe_text
from canasta_net.table import local
from canasta_net.table.host import SeatEntry
from canasta_net.ui.players import BotPlayer, TerminalPlayer
from canasta_net.ui.terminal_view import render_view
from replay.export_html import render_html
from replay.export_json import build_export
from replay.export_text import render_text
from replay.render import render_step
from replay.timeline import load_timeline
from replay.views import ALL, Perspective

# a window-title OSC, a screen clear (CSI), a C1 CSI, DEL, a bidi override, a line separator
HOSTILE = "ev\x1b]0;pwned\x07il\x1b[2J\x9b31m\x7f\u202egnp.exe\u2028x"
UNSAFE = ("\x1b", "\x07", "\x9b", "\x7f", "\u202e", "\u2028")


def assert_safe(text: str) -> None:
    for ch in UNSAFE:
        assert ch not in text, f"{ch!r} reached the terminal in {text!r}"


def test_safe_text_escapes_controls_and_keeps_letters() -> None:
    assert safe_text("Zoë, Ωμέγα, 李雷 & ☃") == "Zoë, Ωμέγα, 李雷 & ☃"
    shown = safe_text(HOSTILE)
    assert shown == ("ev\\x1b]0;pwned\\x07il\\x1b[2J\\x9b31m\\x7f\\u202egnp.exe\\u2028x")
    assert safe_text("a\nb\tc\rd") == "a\\nb\\tc\\rd"
    assert safe_text("\U000e0001") == "\\U000e0001"  # a language tag (format character)
    assert safe_lines("one\x1b\ntwo") == "one\\x1b\ntwo"


@given(st.text())
def test_safe_text_leaves_only_visible_characters_and_is_idempotent(text: str) -> None:
    shown = safe_text(text)
    assert all(ch.isprintable() or ch.isspace() for ch in shown)
    assert not any(ch in shown for ch in "\n\r\x1b\x9b\u202e")
    assert safe_text(shown) == shown


def stored(kind: str, fields: dict[str, Any], action: dict[str, Any] | None) -> StoredRecord:
    return StoredRecord(0, 0, 0, b"", {"kind": kind, **fields}, b"", {}, b"", action, None)


def test_a_chat_a_name_and_a_reason_are_shown_escaped_by_the_seat_and_the_host() -> None:
    lines = [
        describe_record(stored(R.CHAT, {}, {"seat": 1, "text": HOSTILE}), ["host", HOSTILE]),
        describe_record(stored(R.FORFEIT, {"seat": 1, "reason": HOSTILE}, None), ["h", HOSTILE]),
        *comings_and_goings(
            [{"name": "a"}, {"name": HOSTILE}],
            [{"name": "a"}, {"name": HOSTILE, "left": HOSTILE}],
            0,
        ),
    ]
    assert len(lines) == 3
    for line in lines:
        assert line is not None and "pwned" in line
        assert_safe(line)


class Events:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.reason: str | None = None

    def show(self, view: dict[str, Any]) -> None:
        pass

    def event(self, text: str) -> None:
        self.lines.append(text)

    def choose(self, legal: list[str], view: dict[str, Any]) -> str:
        raise AssertionError("not prompted")

    def finished(self, reason: str) -> None:
        self.reason = reason


def test_a_hosts_refusal_message_is_shown_escaped() -> None:
    events = Events()
    session = PeerSession(Identity.generate(), events)
    session.handle({"t": "error", "code": "not-started", "message": HOSTILE}, lambda m: None)
    assert events.lines
    for line in events.lines:
        assert_safe(line)


def test_the_terminal_player_escapes_everything_it_prints() -> None:
    out = io.StringIO()
    player = TerminalPlayer(out=out)
    player.event(HOSTILE)
    player.finished(HOSTILE)
    player.choose([HOSTILE], {})
    player.handle_line("hint")
    assert "pwned" in out.getvalue()
    assert_safe(out.getvalue())
    bot_out = io.StringIO()
    BotPlayer("random", random.Random(0), lambda: None, out=bot_out).event(HOSTILE)
    assert_safe(bot_out.getvalue())


def test_a_view_from_the_host_is_drawn_escaped() -> None:
    view = {
        "table": HOSTILE,
        "hand_no": 0,
        "scores": [0, 0],
        "seats": [{"name": HOSTILE}, {"name": "bob\nseat 9 fake line"}],
    }
    drawn = render_view(view)
    assert_safe(drawn)
    assert "\nseat 9 fake line" not in drawn  # a name cannot start a line of its own


@pytest.fixture(scope="module")
def hostile_log() -> bytes:
    """A recorded match whose seats' names carry escape sequences (and markup)."""
    original = SeatEntry

    def hostile_entry(name: str, key: bytes, bot: bool) -> Any:
        return original(f"<script>alert(1)</script>{HOSTILE}{name}", key, bot)

    buffer = io.BytesIO()
    setattr(local, "SeatEntry", hostile_entry)  # noqa: B010 (a module-scoped patch)
    try:
        local.recorded_match(preset("classic"), buffer, seed=3).play(max_hands=1)
    finally:
        setattr(local, "SeatEntry", original)  # noqa: B010
    return buffer.getvalue()


def test_replay_show_and_the_text_export_escape_names(hostile_log: bytes) -> None:
    timeline = load_timeline(hostile_log)
    perspective = Perspective(ALL)
    shown = "\n".join(render_step(timeline, step, perspective) for step in timeline.steps)
    assert "pwned" in shown
    assert_safe(shown)
    text = render_text(build_export(timeline, perspective))
    assert "pwned" in text
    assert_safe(text)


def test_the_html_export_escapes_markup(hostile_log: bytes) -> None:
    timeline = load_timeline(hostile_log)
    page = render_html(build_export(timeline, Perspective(ALL)))
    assert "alert(1)" in page
    assert "<script>alert" not in page and "</script>\\x1b" not in page
