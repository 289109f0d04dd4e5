"""The player's own page, served by the player's own process on 127.0.0.1 (``docs/web-client.md``).

One process, one seat, one person: the page talks only to the seat's own session (which holds
the seat's keys, checks every message and keeps its own log), never to the host, so the trust
model is the terminal client's. The server listens on the loopback interface only, on a port the
system picks, and everything it answers needs the secret token of the URL it prints (then a
cookie holds it). It also checks the Host header (a DNS-rebinding page names another host), the
Origin of any request that has one and of every POST (no other site's page may post a move), and
that a POST is JSON (an HTML form cannot send that). Everything else gets 403.

Live updates go as server-sent events (``GET /events``) through ``twisted.web``: no new
dependency, the browser's ``EventSource`` reconnects by itself, and one-way push is all the page
needs. Its moves go over one WebSocket (``GET /ws``, ``move_socket.py``: a fetch per move cost
the browser far more than the server), other requests by POST (``POST /act`` takes a move from
any other program, such as the tests). A push carries the model's whole snapshot
(``docs/ui-model.md``), at most once per reactor turn however many changes the turn made; the
snapshot that only says a move was sent waits ``SENT_PUSH_DELAY`` for the table's answer.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import io
import json
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IDelayedCall, IListeningPort
from twisted.internet.task import LoopingCall
from twisted.internet.threads import deferToThread
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web import http
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, Request, Site

from ..cards import JOKER, NOTATIONS, face_label
from ..hint import NO_SUGGESTION
from ..i18n import LANGUAGE_NAMES, LANGUAGES, translator
from ..ui.table_model import TableModel
from .move_socket import MAX_SOCKETS, MoveSockets

log = Logger()

# At most this many event streams at once (a page holds one; a few tabs or a reload's overlap).
MAX_STREAMS = 4
# A POST's body is at most this long (a move, a chat line: far less).
MAX_BODY = 16 * 1024
# A comment line on every event stream this often, so that nothing between closes it as idle.
HEARTBEAT_SECONDS = 15.0
# How long the browser waits before reconnecting a lost event stream (milliseconds).
RECONNECT_MS = 1000
# A move posted by the page is on its way to the table (the model's ``move_in_flight``): the
# snapshot that says only that ("Sent ...", no buttons) waits this long, and is not sent at all
# when the table's answer comes first (on loopback some milliseconds later). Drawing it took the
# page's main thread and the computer's CPU (the browser's processes, on a machine the host
# shares) while the answer was on its way; the page greys its own buttons instead (if slow).
SENT_PUSH_DELAY = 0.25

# The page loads only its own files, runs no inline script, and may not be framed.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; frame-ancestors 'none'"
)

COMMON_HEADERS = {
    b"content-security-policy": CONTENT_SECURITY_POLICY.encode(),
    b"x-content-type-options": b"nosniff",
    b"referrer-policy": b"no-referrer",
    b"cache-control": b"no-store",
}

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".json": "application/json",
    ".woff2": "font/woff2",
    ".txt": "text/plain; charset=utf-8",
}

# A static file's name: one plain name (no directory, no dot file), as the package holds it.
_STATIC_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")

MISSING_TOKEN = "Forbidden: open the page with the link canasta printed (it carries the token)."
BAD_HOST = "Forbidden: this page answers only to 127.0.0.1 or localhost on its own port."
BAD_ORIGIN = "Forbidden: a request from another site's page."
POST_WITHOUT_ORIGIN = "Forbidden: a POST must come from this page (its Origin is missing)."
NOT_JSON = "Forbidden: a POST must be JSON (Content-Type: application/json)."
TOO_MANY_STREAMS = "Too many event streams are open: close another tab of this page."


class PageActions(Protocol):
    """What the page's POSTs ask of the seat; each answer is None (done) or why not (a sentence)."""

    def act(self, text: str) -> str | None: ...

    def ready(self) -> str | None: ...

    def chat(self, text: str) -> str | None: ...

    def quit(self) -> str | None: ...

    def suggest(self) -> Deferred[dict[str, Any] | str] | str: ...


class LobbyActions(Protocol):
    """What the page's lobby asks before the seat's session starts (``canasta join``): accept or
    refuse the host's fingerprint, pick a table heard on the LAN. Each answer as ``PageActions``'s.
    """

    def trust(self, accept: bool) -> str | None: ...

    def pick(self, index: int, address: str | None = None) -> str | None: ...


@dataclass(frozen=True)
class RequestFacts:
    """What the security checks read off a request."""

    method: str
    path: str
    query_token: str | None
    cookie_token: str | None
    host: str | None
    origin: str | None
    sec_fetch_site: str | None
    content_type: str | None
    query_lang: str | None = None  # GET /i18n.json?lang=: the catalogue asked for


def cookie_name(port: int) -> str:
    """The token cookie's name. Cookies do not keep ports apart: two players' processes on one
    computer (a host and a joiner trying it out) would overwrite each other's ``canasta_token``,
    so the name carries the port."""
    return f"canasta_token_{port}"


def _header(request: Any, name: bytes) -> str | None:
    value = request.getHeader(name)
    if value is None:
        return None
    return value.decode("latin-1") if isinstance(value, bytes) else str(value)


def _cookie(header: str | None, name: str) -> str | None:
    for part in (header or "").split(";"):
        key, sep, value = part.strip().partition("=")
        if sep and key == name:
            return value
    return None


def request_facts(request: Any, port: int) -> RequestFacts:
    uri = request.uri.decode("latin-1") if isinstance(request.uri, bytes) else str(request.uri)
    split = urlsplit(uri)
    query = parse_qs(split.query)
    tokens = query.get("token")
    langs = query.get("lang")
    method = request.method
    return RequestFacts(
        method=method.decode("ascii", "replace") if isinstance(method, bytes) else str(method),
        path=split.path or "/",
        query_token=tokens[0] if tokens else None,
        cookie_token=_cookie(_header(request, b"cookie"), cookie_name(port)),
        host=_header(request, b"host"),
        origin=_header(request, b"origin"),
        sec_fetch_site=_header(request, b"sec-fetch-site"),
        content_type=_header(request, b"content-type"),
        query_lang=langs[0] if langs else None,
    )


def _token_matches(given: str | None, token: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


def refusal(facts: RequestFacts, token: str, port: int) -> str | None:
    """Why the request is refused (403), or None. The checks, in order: the Host header (no DNS
    rebinding), the Origin (no other site's page), the token (no other program on this computer
    that does not hold the link), and for a POST an Origin (or ``Sec-Fetch-Site: same-origin``)
    and a JSON body type (no plain HTML form)."""
    hosts = (f"127.0.0.1:{port}", f"localhost:{port}")
    if facts.host is None or facts.host.lower() not in hosts:
        return BAD_HOST
    if facts.origin is not None and facts.origin.lower() not in tuple(f"http://{h}" for h in hosts):
        return BAD_ORIGIN
    if not (_token_matches(facts.cookie_token, token) or _token_matches(facts.query_token, token)):
        return MISSING_TOKEN
    if facts.method == "POST":
        if facts.origin is None and (facts.sec_fetch_site or "").lower() != "same-origin":
            return POST_WITHOUT_ORIGIN
        media = (facts.content_type or "").split(";")[0].strip().lower()
        if media != "application/json":
            return NOT_JSON
    return None


def default_static() -> Traversable:
    """The page's files, as the package holds them (``canasta_net/web/static``)."""
    return resources.files("canasta_net.web") / "static"


def snapshot_event(snapshot: dict[str, Any]) -> bytes:
    """One server-sent event carrying a snapshot. JSON without indentation holds no line break
    (those inside strings are escaped), so the data is one ``data:`` line."""
    data = json.dumps(snapshot, ensure_ascii=True, separators=(",", ":"), default=str)
    return f"event: snapshot\nid: {snapshot.get('version', 0)}\ndata: {data}\n\n".encode()


def inline_hashes(page: str, tag: str) -> list[str]:
    """CSP hashes of a page's inline ``<tag>`` elements (those without attributes)."""
    pattern = re.compile(rf"<{tag}>(.*?)</{tag}>", re.DOTALL)
    return [
        "'sha256-" + base64.b64encode(hashlib.sha256(body.encode()).digest()).decode() + "'"
        for body in pattern.findall(page)
    ]


def replay_policy(page: str) -> str:
    """The replay page's policy: its own inline style and script only (by hash), nothing
    fetched, not framed. (The page also carries its own stricter-than-nothing meta policy.)"""
    scripts = " ".join(inline_hashes(page, "script")) or "'none'"
    styles = " ".join(inline_hashes(page, "style")) or "'none'"
    return (
        f"default-src 'none'; script-src {scripts}; style-src {styles}; img-src data:; "
        "frame-ancestors 'none'; form-action 'none'"
    )


class PageRequest(Request):
    """A request that keeps at most ``MAX_BODY`` + 1 bytes of its body (in memory): a longer one
    is refused when it is read, and what came beyond that is never stored."""

    def gotLength(self, length: int | None) -> None:  # Twisted's name
        self.content = io.BytesIO()

    def handleContentChunk(self, data: bytes) -> None:  # Twisted's name
        assert self.content is not None
        room = MAX_BODY + 1 - self.content.tell()
        if room > 0:
            self.content.write(data[:room])


class PageSite(Site):
    """The page's site: its requests keep short bodies; no access log (the page's requests are
    the person's own clicks)."""

    def log(self, request: http.Request) -> None:  # Twisted's name
        pass


class PageServer:
    """Serves one seat's page: its files, the event stream, the moves posted back."""

    def __init__(
        self,
        model: TableModel,
        actions: PageActions,
        *,
        reactor: Any,
        token: str | None = None,
        static: Traversable | None = None,
    ) -> None:
        self.model = model
        self.actions = actions
        self.reactor = reactor
        self.token = token or secrets.token_urlsafe(32)
        self.static = static if static is not None else default_static()
        self.port = 0
        self.listening: IListeningPort | None = None
        self.streams: list[Request] = []
        self.replay: Callable[[], str] | None = None  # makes the replay page, once the match ends
        self._replay_page: Deferred[str] | None = None
        self._pushed = -1
        # moves taken from this person's pages (socket or POST), counted as they arrive: each
        # snapshot says how many (``moves``), so a page can tell one made before its move
        # reached this process from the answer to it (docs/web-client.md)
        self.moves_taken = 0
        self._push_call: IDelayedCall | None = None
        self._move_answers: list[Request] = []  # accepted moves' POSTs, answered with a push
        self._heartbeat = LoopingCall(self._beat)
        self._heartbeat.clock = reactor
        self.on_streams_changed: Callable[[int], None] | None = None
        self.lobby: LobbyActions | None = None  # a joiner's page before its seat: /trust, /pick
        self.sockets = MoveSockets(self._act_by_socket)  # the pages' moves (GET /ws)
        model.add_listener(self._changed)

    # ------------------------------------------------------------------ lifecycle
    def listen(self, port: int = 0) -> int:
        """Listen on 127.0.0.1 (a port the system picks unless given); return the port."""
        site = PageSite(PageResource(self), requestFactory=PageRequest)
        site.displayTracebacks = False
        site.noisy = False
        self.listening = self.reactor.listenTCP(port, site, interface="127.0.0.1")
        address: Any = self.listening.getHost()
        self.port = int(address.port)
        self._heartbeat.start(HEARTBEAT_SECONDS, now=False)
        return self.port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    def stop(self) -> Deferred[None] | None:
        """Close every event stream and stop listening."""
        if self._heartbeat.running:
            self._heartbeat.stop()
        if self._push_call is not None and self._push_call.active():
            self._push_call.cancel()
        self._answer_moves()
        for stream in list(self.streams):
            stream.finish()
        self.streams.clear()
        self.sockets.close_all()
        listening, self.listening = self.listening, None
        if listening is None:
            return None
        stopped: Deferred[None] | None = listening.stopListening()
        return stopped

    # ------------------------------------------------------------------ the reader's language
    def catalogue(self, lang: str | None = None) -> dict[str, Any]:
        """The page's catalogue (``GET /i18n.json``): ``lang`` if it has one, else this client's
        language; its messages from the same gettext catalogue as the terminal's."""
        chosen = lang if lang in LANGUAGES else self.model.tr.lang
        notation = NOTATIONS[chosen]
        return {
            "lang": chosen,
            "languages": dict(LANGUAGE_NAMES),
            "messages": translator(chosen).messages(),
            "ranks": dict(notation.shown_ranks),
            "joker": face_label(JOKER, chosen) if chosen != "en" else "Jkr",
        }

    def set_language(self, lang: str) -> str | None:
        """``POST /lang``: this client reads ``lang`` from now on (the snapshot is sent again,
        its sentences in it); None, or why not."""
        if lang not in LANGUAGES:
            return self.model.tr.gettext(
                "No catalogue for that language: choose one of {langs}."
            ).format(langs=", ".join(LANGUAGES))
        self.model.set_language(lang)
        return None

    # ------------------------------------------------------------------ moves by the socket
    def _act_by_socket(self, text: str) -> str | None:
        """A move from a page's socket: None (it went to the seat; the next snapshot shows it),
        or why not."""
        return self.take_move(text)

    def take_move(self, text: str) -> str | None:
        """A move from a page (its socket or ``POST /act``), counted before it goes on."""
        self.moves_taken += 1
        return self.actions.act(text)

    def snapshot(self) -> dict[str, Any]:
        """The model's snapshot with the count of moves taken from the pages so far."""
        return dict(self.model.snapshot(), moves=self.moves_taken)

    # ------------------------------------------------------------------ pushing snapshots
    def _changed(self) -> None:
        delay = SENT_PUSH_DELAY if self.model.move_in_flight else 0.0
        call = self._push_call
        if call is None or not call.active():
            self._push_call = self.reactor.callLater(delay, self._push)
        elif delay == 0.0 and call.getTime() > self.reactor.seconds():
            call.reset(0)  # news beyond the move sent: at once, with everything since

    def _push(self) -> None:
        self._push_call = None
        if self.model.version > self._pushed and self.streams:
            event = snapshot_event(self.snapshot())
            self._pushed = self.model.version
            for stream in list(self.streams):
                stream.write(event)
        self._answer_moves()

    def answer_with_next_push(self, request: Request) -> int:
        """Answer an accepted move's POST with the next snapshot push (at the latest
        ``SENT_PUSH_DELAY`` later), not at once: the answer says only "ok", and sent at once it
        woke the browser's processes while the move was on its way to the table, on the same
        CPUs as the host that checks it."""
        self._move_answers.append(request)
        request.notifyFinish().addErrback(self._move_answer_lost, request)
        if self._push_call is None or not self._push_call.active():
            self._push_call = self.reactor.callLater(0, self._push)
        return NOT_DONE_YET

    def _move_answer_lost(self, _: object, request: Request) -> None:
        if request in self._move_answers:
            self._move_answers.remove(request)

    def _answer_moves(self) -> None:
        answers, self._move_answers = self._move_answers, []
        for request in answers:
            request.write(answer(request, None))
            request.finish()

    def _beat(self) -> None:
        for stream in list(self.streams):
            stream.write(b": still here\n\n")

    def open_stream(self, request: Request) -> int | bytes:
        if len(self.streams) >= MAX_STREAMS:
            return text_answer(request, 429, TOO_MANY_STREAMS)
        request.setHeader(b"content-type", b"text/event-stream; charset=utf-8")
        request.write(f"retry: {RECONNECT_MS}\n\n".encode())
        request.write(snapshot_event(self.snapshot()))
        self.streams.append(request)
        request.notifyFinish().addBoth(self._stream_closed, request)
        self._streams_changed()
        return NOT_DONE_YET

    def _stream_closed(self, _: object, request: Request) -> None:
        if request in self.streams:
            self.streams.remove(request)
            self._streams_changed()

    def _streams_changed(self) -> None:
        if self.on_streams_changed is not None:
            self.on_streams_changed(len(self.streams))

    # ------------------------------------------------------------------ the replay
    def replay_page(self) -> Deferred[str] | None:
        """The replay page (made once, in a thread: it replays the whole log), or None while
        the match goes on."""
        if self.replay is None:
            return None
        if self._replay_page is None:
            self._replay_page = deferToThread(self.replay)
        made: Deferred[str] = Deferred()

        def share(page: str) -> str:
            made.callback(page)
            return page

        def failed(failure: Failure) -> None:
            log.failure("making the replay page failed", failure)
            self._replay_page = None  # try again next time
            made.errback(failure)

        self._replay_page.addCallbacks(share, failed)
        return made


def text_answer(request: Request, code: int, text: str) -> bytes:
    request.setResponseCode(code)
    request.setHeader(b"content-type", b"text/plain; charset=utf-8")
    return (text + "\n").encode()


def json_answer(request: Request, code: int, data: dict[str, Any]) -> bytes:
    request.setResponseCode(code)
    request.setHeader(b"content-type", b"application/json")
    return json.dumps(data).encode()


def answer(request: Request, problem: str | None) -> bytes:
    if problem is None:
        return json_answer(request, 200, {"ok": True})
    return json_answer(request, 400, {"ok": False, "error": problem})


def read_json(request: Request) -> dict[str, Any] | str:
    """The POST's body as a JSON object, or why it is refused (a sentence)."""
    length = request.getHeader(b"content-length")
    if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
        return f"The request is too long (at most {MAX_BODY} bytes)."
    if request.content is None:
        return "The request is not JSON."
    request.content.seek(0)
    data = request.content.read(MAX_BODY + 1)
    if len(data) > MAX_BODY:
        return f"The request is too long (at most {MAX_BODY} bytes)."
    try:
        body = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return "The request is not JSON."
    if not isinstance(body, dict):
        return "The request must be a JSON object."
    return body


def _text_field(body: dict[str, Any], name: str, limit: int) -> str | None:
    value = body.get(name)
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        return None
    return value


class PageResource(Resource):
    """Every path of the page's server (one leaf: the checks come first, for every path)."""

    isLeaf = True

    def __init__(self, server: PageServer) -> None:
        super().__init__()
        self.page_server = server

    def render(self, request: Request) -> int | bytes:  # Twisted's name
        for name, value in COMMON_HEADERS.items():
            request.setHeader(name, value)
        server = self.page_server
        facts = request_facts(request, server.port)
        problem = refusal(facts, server.token, server.port)
        if problem is not None:
            return text_answer(request, 403, problem)
        if facts.method in ("GET", "HEAD"):
            return self._get(request, facts)
        if facts.method == "POST":
            return self._post(request, facts.path)
        request.setHeader(b"allow", b"GET, HEAD, POST")
        return text_answer(request, 405, "Method not allowed.")

    def _get(self, request: Request, facts: RequestFacts) -> int | bytes:
        path, server = facts.path, self.page_server
        if path == "/":
            if _token_matches(facts.query_token, server.token):
                request.setHeader(
                    b"set-cookie",
                    f"{cookie_name(server.port)}={server.token}; HttpOnly; SameSite=Strict; "
                    "Path=/".encode(),
                )
            return self._static(request, "index.html")
        if path == "/i18n.json":
            return json_answer(request, 200, server.catalogue(facts.query_lang))
        if path == "/events" and facts.method == "GET":
            return server.open_stream(request)
        if path == "/ws" and facts.method == "GET":
            return server.sockets.handshake(request, facts.origin)
        if path == "/replay":
            return self._replay(request)
        if path.startswith("/static/"):
            return self._static(request, path[len("/static/") :])
        return text_answer(request, 404, "Not found.")

    def _static(self, request: Request, name: str) -> bytes:
        if _STATIC_NAME.fullmatch(name) is None or ".." in name:
            return text_answer(request, 404, "Not found.")
        file = self.page_server.static / name
        try:
            if not file.is_file():
                return text_answer(request, 404, "Not found.")
            data = file.read_bytes()
        except OSError:
            return text_answer(request, 404, "Not found.")
        suffix = "." + name.rsplit(".", 1)[-1] if "." in name else ""
        kind = CONTENT_TYPES.get(suffix.lower(), "application/octet-stream")
        request.setHeader(b"content-type", kind.encode())
        return data

    def _replay(self, request: Request) -> int | bytes:
        making = self.page_server.replay_page()
        if making is None:
            return text_answer(request, 404, "The replay is there once the match is over.")

        def send(page: str) -> None:
            if request.finished or request.channel is None:  # the browser went away
                return
            request.setHeader(b"content-type", b"text/html; charset=utf-8")
            request.setHeader(b"content-security-policy", replay_policy(page).encode())
            request.write(page.encode("utf-8"))
            request.finish()

        def failed(_: Failure) -> None:
            if request.finished or request.channel is None:
                return
            request.write(text_answer(request, 500, "The replay could not be made."))
            request.finish()

        making.addCallbacks(send, failed)
        return NOT_DONE_YET

    def _post(self, request: Request, path: str) -> int | bytes:
        body = read_json(request)
        if isinstance(body, str):
            return answer(request, body)
        actions = self.page_server.actions
        if path == "/act":
            text = _text_field(body, "action", 1000)
            if text is None:
                return answer(request, 'Send the move as {"action": TEXT}.')
            problem = self.page_server.take_move(text)
            if problem is None:
                return self.page_server.answer_with_next_push(request)
            return answer(request, problem)
        if path == "/suggest":
            return self._suggest(request, actions.suggest())
        if path == "/ready":
            return answer(request, actions.ready())
        if path == "/chat":
            text = _text_field(body, "text", 1000)
            if text is None:
                return answer(request, 'Send the chat line as {"text": TEXT}.')
            return answer(request, actions.chat(text))
        if path == "/quit":
            return answer(request, actions.quit())
        if path == "/lang":
            lang = _text_field(body, "lang", 16)
            if lang is None:
                return answer(request, 'Send the language as {"lang": "ru"}.')
            return answer(request, self.page_server.set_language(lang))
        lobby = self.page_server.lobby
        if path == "/trust":
            accept = body.get("accept")
            if not isinstance(accept, bool):
                return answer(request, 'Send {"accept": true} or {"accept": false}.')
            if lobby is None:
                return answer(request, "No table's fingerprint waits for your answer.")
            return answer(request, lobby.trust(accept))
        if path == "/pick":
            index = body.get("table")
            if not isinstance(index, int) or isinstance(index, bool):
                return answer(request, 'Send the table as {"table": NUMBER}.')
            address = body.get("address")
            if lobby is None:
                return answer(request, "No list of tables waits for your choice.")
            return answer(request, lobby.pick(index, address if isinstance(address, str) else None))
        return text_answer(request, 404, "Not found.")

    def _suggest(
        self, request: Request, asked: Deferred[dict[str, Any] | str] | str
    ) -> int | bytes:
        """``POST /suggest``: answered when the search (in a worker process) comes back: the
        suggestion's fields with ``ok``, or why there is none; the server serves meanwhile."""
        if isinstance(asked, str):
            return answer(request, asked)
        tr = self.page_server.model.tr

        def send(hint: dict[str, Any] | str | None) -> None:
            if request.finished or request.channel is None:  # the page went away
                return
            if isinstance(hint, dict):
                body = json_answer(request, 200, {"ok": True, **hint})
            else:
                body = answer(request, hint or tr.gettext(NO_SUGGESTION))
            request.write(body)
            request.finish()

        def failed(failure: Failure) -> None:
            log.failure("a suggestion failed", failure)
            send(None)

        asked.addCallbacks(send, failed)
        return NOT_DONE_YET


__all__ = [
    "CONTENT_SECURITY_POLICY",
    "HEARTBEAT_SECONDS",
    "MAX_BODY",
    "MAX_SOCKETS",
    "MAX_STREAMS",
    "SENT_PUSH_DELAY",
    "LobbyActions",
    "PageActions",
    "PageResource",
    "PageServer",
    "RequestFacts",
    "cookie_name",
    "refusal",
    "replay_policy",
    "request_facts",
    "snapshot_event",
]
