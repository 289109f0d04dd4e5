"""The page's moves over one WebSocket (``GET /ws``, ``docs/web-client.md``).

A move posted with ``fetch`` cost the browser a new request each time: in Chromium on loopback,
a POST's round trip took 7 to 10 ms p50 and 20 to 40 ms p95, a message on an open WebSocket 2
to 3 ms p50 and 5 to 10 ms p95 (the network service's request setup, not the bytes). So the page
opens one socket and sends each move as one text message, ``{"action": TEXT}``; the snapshots
still come by the event stream (as quick: the push was never the slow part). A move refused at
once is answered on the socket, ``{"ok": false, "error": SENTENCE, "tried": TEXT}``; an accepted
one is not answered: the next snapshot shows it.

The handshake is an HTTP GET and passes the page server's checks first (Host, Origin, the token's
cookie); on top of them it must carry the page's Origin (a browser always sends one on a
WebSocket handshake, and another site's is refused by the checks), and at most ``MAX_SOCKETS``
are open at once.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import suppress
from typing import Any

from twisted.python.failure import Failure
from twisted.web.server import Request
from twisted.web.websocket import WebSocketResource, WebSocketTransport
from wsproto.utilities import LocalProtocolError

# At most this many move sockets at once (a page holds one; a few tabs or a reload's overlap).
MAX_SOCKETS = 4
# A message is at most this long, as a POST's body (a move: far less).
MAX_MESSAGE = 16 * 1024

NOT_A_MOVE = 'Send the move as {"action": TEXT}.'
TOO_LONG = f"The message is too long (at most {MAX_MESSAGE} bytes)."
SOCKET_WITHOUT_ORIGIN = "Forbidden: a WebSocket must come from this page (its Origin is missing)."
TOO_MANY_SOCKETS = "Too many move sockets are open: close another tab of this page."


def read_move(message: str) -> str | None:
    """The move's text in a socket's message, or None when the message is not a move."""
    if len(message.encode("utf-8", "replace")) > MAX_MESSAGE:
        return None
    try:
        body = json.loads(message)
    except ValueError:
        return None
    text = body.get("action") if isinstance(body, dict) else None
    if not isinstance(text, str) or not text.strip() or len(text) > 1000:
        return None
    return text


def refused(text: str | None, problem: str) -> str:
    """The socket's answer to a move refused at once."""
    return json.dumps({"ok": False, "error": problem, "tried": text})


class MoveSocket:
    """One page's socket (Twisted's ``WebSocketProtocol``): each text message is a move for the
    seat (``act``: None, taken, or why not); a refusal is answered at once."""

    def __init__(
        self,
        act: Callable[[str], str | None],
        opened: Callable[[MoveSocket], None],
        closed: Callable[[MoveSocket], None],
    ) -> None:
        self._act = act
        self._opened = opened
        self._closed = closed
        self.transport: WebSocketTransport | None = None

    # Twisted's WebSocketProtocol
    def negotiationStarted(self, transport: WebSocketTransport) -> None:
        self.transport = transport

    def negotiationFinished(self) -> None:
        self._opened(self)

    def textMessageReceived(self, message: str) -> None:
        text = read_move(message)
        if text is None:
            problem = TOO_LONG if len(message) > MAX_MESSAGE else NOT_A_MOVE
            self.send(refused(None, problem))
            return
        why_not = self._act(text)
        if why_not is not None:
            self.send(refused(text, why_not))

    def bytesMessageReceived(self, data: bytes | bytearray) -> None:
        self.send(refused(None, NOT_A_MOVE))

    def pongReceived(self, payload: bytes) -> None:
        pass

    def connectionLost(self, reason: Failure) -> None:
        self._closed(self)

    # ours
    def send(self, text: str) -> None:
        if self.transport is None:
            return
        with suppress(LocalProtocolError):  # the page is closing the socket: nothing goes to it
            self.transport.sendTextMessage(text)

    def close(self) -> None:
        if self.transport is None:
            return
        with suppress(LocalProtocolError):  # closing already (the page's close came first)
            self.transport.loseConnection()


class MoveSockets:
    """The page server's open move sockets, and their handshake."""

    def __init__(self, act: Callable[[str], str | None]) -> None:
        self.act = act
        self.open: list[MoveSocket] = []
        self._resource = WebSocketResource(self)

    def buildProtocol(self, request: Request) -> MoveSocket:  # Twisted's name
        return MoveSocket(self.act, self.open.append, self._forget)

    def _forget(self, socket: MoveSocket) -> None:
        if socket in self.open:
            self.open.remove(socket)

    def handshake(self, request: Request, origin: str | None) -> bytes | int:
        """Upgrade ``request`` (which passed the page's checks) to a move socket, or refuse it:
        403 without an Origin, 429 when ``MAX_SOCKETS`` are open, 400 when it is no WebSocket
        handshake."""
        if origin is None:
            return _text(request, 403, SOCKET_WITHOUT_ORIGIN)
        if len(self.open) >= MAX_SOCKETS:
            return _text(request, 429, TOO_MANY_SOCKETS)
        answer: bytes | int = self._resource.render_GET(request)
        return answer

    def close_all(self) -> None:
        for socket in list(self.open):
            socket.close()
        self.open.clear()


def _text(request: Any, code: int, text: str) -> bytes:
    request.setResponseCode(code)
    request.setHeader(b"content-type", b"text/plain; charset=utf-8")
    return (text + "\n").encode()


__all__ = ["MAX_MESSAGE", "MAX_SOCKETS", "MoveSocket", "MoveSockets", "read_move", "refused"]
