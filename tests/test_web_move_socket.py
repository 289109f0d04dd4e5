"""The page's moves over its WebSocket (``canasta_net/web/move_socket.py``, docs/web-client.md):
a move reaches the seat, a refusal is answered at once with what was tried, anything else is
refused in a sentence; the handshake passes the page's checks (Host, Origin, the token) and
needs the page's Origin. One real socket on 127.0.0.1; the client is wsproto in a thread.
"""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest_twisted
from test_web_page import Actions, classic_player, served  # noqa: F401  (served: a fixture)
from twisted.internet import threads
from wsproto import ConnectionType, WSConnection
from wsproto.events import (
    AcceptConnection,
    CloseConnection,
    RejectConnection,
    RejectData,
    Request,
    TextMessage,
)
from wsproto.utilities import LocalProtocolError

from canasta_net.web.move_socket import (
    MAX_MESSAGE,
    MAX_SOCKETS,
    NOT_A_MOVE,
    SOCKET_WITHOUT_ORIGIN,
    TOO_LONG,
    MoveSocket,
)
from canasta_net.web.player import NOT_YOUR_TURN
from canasta_net.web.server import BAD_ORIGIN, MISSING_TOKEN, cookie_name


class Transport:
    """A socket's transport, as the move socket writes to it: the messages it sent."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def sendTextMessage(self, text: str) -> None:
        self.sent.append(json.loads(text))


def test_a_move_goes_to_the_seat_and_a_refusal_comes_back_at_once() -> None:
    player = classic_player()
    opened: list[MoveSocket] = []
    sock = MoveSocket(Actions(player).act, opened.append, opened.remove)
    transport = Transport()
    sock.negotiationStarted(transport)  # type: ignore[arg-type]
    sock.negotiationFinished()
    assert opened == [sock]
    sock.textMessageReceived('{"action": "draw"}')  # nothing is asked yet
    assert transport.sent == [{"ok": False, "error": NOT_YOUR_TURN, "tried": "draw"}]
    chosen: list[str] = []
    player.choose(["draw"], {"state": {"turn": 0, "hand": ["4D"]}}).addCallback(chosen.append)
    sock.textMessageReceived('{"action": "draw"}')
    assert chosen == ["draw"] and len(transport.sent) == 1  # taken: the snapshot says so
    for message in ("not json", '["draw"]', '{"move": "draw"}', '{"action": " "}'):
        sock.textMessageReceived(message)
        assert transport.sent[-1] == {"ok": False, "error": NOT_A_MOVE, "tried": None}
    sock.textMessageReceived('{"action": "' + "x" * MAX_MESSAGE + '"}')
    assert transport.sent[-1]["error"] == TOO_LONG
    sock.bytesMessageReceived(b'{"action": "draw"}')
    assert transport.sent[-1]["error"] == NOT_A_MOVE
    sock.connectionLost(None)  # type: ignore[arg-type]
    assert opened == []


class ClosingTransport:
    """A socket's transport once the page has closed it: wsproto refuses to send."""

    def sendTextMessage(self, text: str) -> None:
        raise LocalProtocolError("Connection cannot be used to send")

    def loseConnection(self) -> None:
        raise LocalProtocolError("Connection cannot be used to send")


def test_a_socket_the_page_is_closing_takes_no_answer_and_no_close() -> None:
    sock = MoveSocket(lambda text: "no", lambda s: None, lambda s: None)
    sock.negotiationStarted(ClosingTransport())  # type: ignore[arg-type]
    sock.textMessageReceived('{"action": "draw"}')  # refused: the answer is dropped, no error
    sock.close()


def handshake(port: int, headers: dict[str, str]) -> tuple[socket.socket, WSConnection, Any]:
    """Open ``/ws`` with ``headers``: the socket, its connection and the first answer (an
    ``AcceptConnection``, or the refusal's status and body)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    ws = WSConnection(ConnectionType.CLIENT)
    extra = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    sock.sendall(ws.send(Request(host=f"127.0.0.1:{port}", target="/ws", extra_headers=extra)))
    status, body = None, b""
    while True:
        data = sock.recv(65536)
        ws.receive_data(data or None)
        for event in ws.events():
            if isinstance(event, AcceptConnection):
                return sock, ws, event
            if isinstance(event, RejectConnection):
                status = event.status_code
                if not event.has_body:
                    return sock, ws, (status, body)
            if isinstance(event, RejectData):
                body += event.data
                if event.body_finished:
                    return sock, ws, (status, body)
        if not data:
            return sock, ws, (status, body)


def say(sock: socket.socket, ws: WSConnection, message: str) -> dict[str, Any]:
    """Send one message; the next message that comes back."""
    sock.sendall(ws.send(TextMessage(data=message)))
    while True:
        data = sock.recv(65536)
        assert data, "the socket closed"
        ws.receive_data(data)
        for event in ws.events():
            if isinstance(event, TextMessage):
                answer: dict[str, Any] = json.loads(event.data)
                return answer
            assert not isinstance(event, CloseConnection)


@pytest_twisted.ensureDeferred
async def test_the_socket_checks_the_origin_and_the_token_and_takes_moves(
    served: Any,  # noqa: F811
) -> None:
    server, player, _ = served
    port, token = server.port, server.token
    chosen: list[str] = []
    page = {"Origin": f"http://127.0.0.1:{port}", "Cookie": f"{cookie_name(port)}={token}"}

    def refused(headers: dict[str, str]) -> tuple[int, str]:
        sock, _, (status, body) = handshake(port, headers)
        sock.close()
        return status, body.decode().strip()

    def run() -> tuple[list[tuple[int, str]], list[dict[str, Any]], tuple[int, str]]:
        refusals = [
            refused({"Cookie": page["Cookie"]}),  # no Origin: not this page's
            refused({**page, "Origin": "http://evil.example"}),
            refused({"Origin": page["Origin"]}),  # no token
        ]
        sock, ws, accepted = handshake(port, page)
        assert isinstance(accepted, AcceptConnection)
        answers = [say(sock, ws, '{"action": "drw"}')]
        sock.sendall(ws.send(TextMessage(data='{"action": "draw"}')))  # taken: no answer
        answers.append(say(sock, ws, "draw"))  # answered after the move before it was taken
        others = [handshake(port, page)[0] for _ in range(MAX_SOCKETS - 1)]
        too_many = refused(page)
        for s in (sock, *others):
            s.close()
        return refusals, answers, too_many

    player.choose(["draw"], {"state": {"turn": 0, "hand": ["4D"]}}).addCallback(chosen.append)
    refusals, answers, too_many = await threads.deferToThread(run)
    assert refusals == [(403, SOCKET_WITHOUT_ORIGIN), (403, BAD_ORIGIN), (403, MISSING_TOKEN)]
    assert answers[0]["ok"] is False and answers[0]["tried"] == "drw" and answers[0]["error"]
    assert answers[1] == {"ok": False, "error": NOT_A_MOVE, "tried": None}
    assert chosen == ["draw"]
    assert too_many[0] == 429
