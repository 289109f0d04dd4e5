"""The player's page for the table commands: which client runs, and the page's life around a match.

``choose_ui`` decides between the page and the terminal (``--ui auto|web|terminal``);
``PlayerPage`` ties the seat's :class:`WebPlayer` to its :class:`PageServer`, prints the page's
link, opens the browser, and after the table keeps the page up (the score sheet, the audit's
verdict, the replay) until the person leaves it.
"""

from __future__ import annotations

import os
import stat
import sys
import threading
import webbrowser
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IDelayedCall
from twisted.internet.threads import deferToThread
from twisted.protocols.basic import LineReceiver

from ..bot_pool import bot_pool
from ..games import Game
from ..hint import NOTHING_TO_SUGGEST
from ..i18n import translator
from ..safe_text import safe_text
from ..ui.table_model import TableModel
from .player import WebPlayer
from .server import PageServer

# After the table, the process ends this long after the last open page went away (a reload
# reconnects within a second or two; a closed tab does not).
CLOSE_GRACE_SECONDS = 20.0

# How long the page's leave waits before the process ends: time enough to send its answer.
ANSWER_SECONDS = 0.25

NO_BROWSER = (
    "no browser can be opened here (no display): playing in the terminal "
    "(--ui web serves the page anyway)"
)


@dataclass(frozen=True)
class UiChoice:
    web: bool  # serve the page
    open_browser: bool  # and open it in a browser
    note: str | None = None  # one line for the person: why the terminal client runs


def browser_openable(environ: Mapping[str, str] | None = None, platform: str | None = None) -> bool:
    """Whether a graphical browser can be opened: the person's ``BROWSER`` if set; on Linux
    and the BSDs only with a display (without one, ``webbrowser`` would pick a text browser that
    takes over the terminal); and ``webbrowser`` must know one."""
    environ = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    if environ.get("BROWSER"):
        return True
    unix = platform.startswith(("linux", "freebsd", "openbsd", "netbsd"))
    if unix and not (environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY")):
        return False
    try:
        webbrowser.get()
    except webbrowser.Error:
        return False
    return True


def stdin_is_scripted(stream: Any = None) -> bool:
    """Whether standard input is a pipe or a file: a program feeding moves to the terminal
    client (a test, a script), which ``--ui auto`` keeps."""
    stream = sys.stdin if stream is None else stream
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (AttributeError, OSError, ValueError):
        return True  # not a real stream (click's test runner): a program feeds it
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def choose_ui(
    ui: str,
    *,
    no_browser: bool = False,
    openable: Callable[[], bool] = browser_openable,
    scripted: Callable[[], bool] = stdin_is_scripted,
) -> UiChoice:
    """Which client runs for ``--ui`` (``auto``, ``web`` or ``terminal``)."""
    if ui == "terminal":
        return UiChoice(web=False, open_browser=False)
    can_open = not no_browser and openable()
    if ui == "web":
        return UiChoice(web=True, open_browser=can_open)
    if scripted():
        return UiChoice(web=False, open_browser=False)  # moves come from a program
    if not can_open:
        return UiChoice(web=False, open_browser=False, note=NO_BROWSER)
    return UiChoice(web=True, open_browser=True)


def audit_verdict(path: Path) -> dict[str, str]:
    """The audit of the log (``canasta-replay audit``'s verdict and summary); slow for a long
    match, so it runs in a thread."""
    from replay.audit import audit_path

    report = audit_path(str(path))
    return {"verdict": report.verdict, "audit": report.summary}


def replay_html(path: Path, seat: int | None) -> str:
    """The HTML replay of the log (``canasta-replay export --format html``) through this seat's
    eyes: the person's own cards and what was public, nothing more."""
    from replay.export_html import render_html
    from replay.export_json import build_export
    from replay.timeline import load_timeline
    from replay.views import PUBLIC, SEAT, Perspective

    with path.open("rb") as file:
        timeline = load_timeline(file)
    seated = seat is not None and 0 <= seat < len(timeline.header.seats)
    perspective = Perspective(SEAT, seat) if seated else Perspective(PUBLIC)
    return render_html(build_export(timeline, perspective))


class StdinQuit(LineReceiver):
    """Standard input while the page plays: ``quit`` leaves; anything else points to the page."""

    delimiter = b"\n"

    def __init__(self, page: PlayerPage, out: TextIO = sys.stdout) -> None:
        self.page = page
        self.out = out

    def lineReceived(self, line: bytes) -> None:  # Twisted's name
        word = line.decode("utf-8", "replace").strip().lower()
        if word in ("quit", "exit"):
            self.page.stdin_quit()
        elif word:
            said = self.page.model.tr.gettext("the table is in the page: {url} ('quit' leaves)")
            print(said.format(url=self.page.server.url), file=self.out)


class PlayerPage:
    """One person's page for the seat this process plays (the server's ``PageActions``)."""

    def __init__(
        self,
        reactor: Any,
        *,
        game: Callable[[], Game | None],
        on_chat: Callable[[str], None] | None,
        on_quit: Callable[[], None],
        out: TextIO = sys.stdout,
        static: Any = None,
        role: str = "player",
        lang: str = "en",
    ) -> None:
        self.reactor = reactor
        self.out = out
        # a watcher's page ("spectator") has no seat: the public table only, no hand, no move
        self.model = TableModel(role=role, tr=translator(lang))
        self.player = WebPlayer(self.model, game=game, on_chat=on_chat, on_quit=on_quit)
        self.server = PageServer(self.model, self, reactor=reactor, static=static)
        self.server.on_streams_changed = self._streams_changed
        self.table_over = False
        self.closed: Deferred[None] = Deferred()  # the person left the page after the table
        self._closing: IDelayedCall | None = None
        self.server.lobby = self
        self._trust: Deferred[bool] | None = None  # the person's answer about a fingerprint
        self._pick: Deferred[int] | None = None  # the table the person picks
        self._tables: list[dict[str, Any]] = []  # the tables the list shows

    # ------------------------------------------------------------------ the lobby
    def ask_trust(self, address: str, fingerprint: str, table: str | None = None) -> Deferred[bool]:
        """Show the host's fingerprint (not pinned, not given) and wait for Accept or Refuse;
        leaving the page (or ``quit``) is a refusal."""
        self._trust = Deferred()
        question = {"address": address, "fingerprint": fingerprint, "table": table}
        self.model.set_lobby({"trust": question})
        return self._trust

    def trust(self, accept: bool) -> str | None:
        asked, self._trust = self._trust, None
        if asked is None:
            return "No table's fingerprint waits for your answer."
        self.model.set_lobby(None)
        if accept:
            asked.callback(True)
        else:
            # the process ends on a refusal: a moment later, so that this answer is on its way
            self.model.finish("you refused the table's fingerprint: you do not join it")
            self.reactor.callLater(ANSWER_SECONDS, asked.callback, False)
        return None

    def show_tables(self, tables: list[dict[str, Any]]) -> Deferred[int]:
        """Show the tables heard on the LAN (again, as the list changes); the Deferred fires
        with the index the person picks (-1: they left)."""
        if self._pick is None:
            self._pick = Deferred()
        self._tables = list(tables)
        self.model.set_lobby({"tables": tables})
        return self._pick

    def pick(self, index: int, address: str | None = None) -> str | None:
        """The person picked the table at ``index`` of the list they saw; ``address`` (the
        table's, as listed) finds it again if the list changed meanwhile."""
        picking = self._pick
        if picking is None:
            return "No list of tables waits for your choice."
        if address is not None and not (
            0 <= index < len(self._tables) and self._tables[index].get("address") == address
        ):
            index = next((i for i, t in enumerate(self._tables) if t.get("address") == address), -1)
        if not 0 <= index < len(self._tables):
            return "There is no such table in the list."
        self._pick = None
        self.model.set_lobby(None)
        picking.callback(index)
        return None

    def _leave_lobby(self) -> bool:
        """The person left while the lobby asked: a refusal, or no table picked."""
        if self._trust is not None:
            self.trust(False)
            return True
        if self._pick is not None:
            picking, self._pick = self._pick, None
            picking.callback(-1)
            return True
        return False

    # ------------------------------------------------------------------ PageActions
    def act(self, text: str) -> str | None:
        if self.table_over:
            return self.model.tr.gettext("The table is over: there are no more moves to make.")
        return self.player.act(text)

    def suggest(self) -> Deferred[dict[str, Any] | str] | str:
        if self.table_over:
            return self.model.tr.gettext(NOTHING_TO_SUGGEST)
        if self.player.hint_pool is None:
            self.player.hint_pool = bot_pool(self.reactor)
        return self.player.suggest()

    def ready(self) -> str | None:
        return self.player.ready()

    def chat(self, text: str) -> str | None:
        if self.table_over:
            return self.model.tr.gettext("The table is over: nobody hears you any more.")
        return self.player.chat(text)

    def quit(self) -> str | None:
        """The page's leave: at the table, leave it (as the terminal's ``quit``); after it,
        close the page and end the process."""
        if self.table_over:
            # a moment later: this request's answer is on its way before the process ends
            self.reactor.callLater(ANSWER_SECONDS, self._close)
            return None
        if self._leave_lobby():
            return None
        return self.player.quit()

    def stdin_quit(self) -> None:
        """``quit`` typed in the terminal: leave the table, and the page with it."""
        if not self._leave_lobby():
            self.player.quit()
        self._close()

    # ------------------------------------------------------------------ life
    def start(self, *, open_browser: bool) -> str:
        """Serve the page, say its link on a line of its own, and open it if asked."""
        self.server.listen()
        url = self.server.url
        _ = self.model.tr.gettext
        print(
            _("your table's page (keep the link to yourself; 'quit' here leaves):"), file=self.out
        )
        print(url, file=self.out, flush=True)
        if open_browser:
            # in a thread of its own, never joined: a browser that blocks holds up nothing
            threading.Thread(target=webbrowser.open, args=(url, 2), daemon=True).start()
        return url

    async def after_table(self, log_path: Path | None, seat: int | None) -> None:
        """The table is left: show what it left (the log, its audit, the replay) and wait until
        the person leaves the page (its leave, closing it, ``quit`` or Ctrl-C)."""
        self.table_over = True
        self.player.pending = None
        if self.model.finished is None:
            self.model.finish("you left the table")
        if log_path is not None:
            self.model.set_outcome(log=str(log_path))
            try:
                outcome = await deferToThread(audit_verdict, log_path)
            except Exception as e:  # an audit that cannot run must not cost the page
                outcome = {"verdict": "unchecked", "audit": safe_text(f"not audited: {e}")}
            self.server.replay = lambda: replay_html(log_path, seat)
            self.model.set_outcome(**outcome, replay="/replay")
        if not self.server.streams:
            self._streams_changed(0)
        if not self.closed.called:
            said = self.model.tr.gettext("the table is over; its page stays up until you leave it")
            print(said, file=self.out)
            await self.closed

    def _streams_changed(self, count: int) -> None:
        if self._closing is not None and self._closing.active():
            self._closing.cancel()
        self._closing = None
        if count == 0 and self.table_over:
            self._closing = self.reactor.callLater(CLOSE_GRACE_SECONDS, self._close)

    def _close(self) -> None:
        if not self.closed.called:
            self.closed.callback(None)

    async def stop(self) -> None:
        self.server.on_streams_changed = None  # the streams it closes now are not a page leaving
        if self._closing is not None and self._closing.active():
            self._closing.cancel()
        stopped = self.server.stop()
        if stopped is not None:
            await stopped


__all__ = [
    "CLOSE_GRACE_SECONDS",
    "PlayerPage",
    "StdinQuit",
    "UiChoice",
    "audit_verdict",
    "browser_openable",
    "choose_ui",
    "replay_html",
    "stdin_is_scripted",
]
