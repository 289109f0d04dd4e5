"""Ask a host which key it has, before joining it.

Trust on first use needs the host's fingerprint shown to the person *before* the seat's
connection is made: the question cannot be asked from inside a TLS handshake (the reactor owns
the terminal by then, and a handshake must not wait for a person). So ``canasta join`` first
opens a short probe connection: the TLS handshake completes (so the host has proved that it holds
the key of the certificate it showed), the fingerprint is noted and the connection is closed
before any application byte is sent. The person answers; then the seat connects expecting
exactly that fingerprint.

The probe also tells an unreachable host, or something that is not a canasta-net host, from a
table that is merely busy, in one sentence, before anything is written to disk.
"""

from __future__ import annotations

from typing import Any

from twisted.internet.defer import Deferred
from twisted.internet.endpoints import SSL4ClientEndpoint
from twisted.internet.interfaces import IHandshakeListener
from twisted.internet.protocol import Factory, Protocol, connectionDone
from twisted.python.failure import Failure
from zope.interface import implementer  # type: ignore[import-untyped, unused-ignore]

from ..identity import Identity
from .tls import client_context_factory

__all__ = ["PROBE_TIMEOUT", "HostUnreachable", "fetch_host_fingerprint"]

PROBE_TIMEOUT = 10.0
"""Seconds the probe waits for a TCP connection, and again for the host's certificate."""


class HostUnreachable(Exception):
    """The host could not be reached, or did not show a canasta-net key (the text says which)."""


@implementer(IHandshakeListener)
class _Probe(Protocol):
    """Closes the connection as soon as the handshake has completed."""

    def __init__(self) -> None:
        self.lost: Deferred[None] = Deferred()
        self.reason: Failure = connectionDone
        self.proven = False  # the handshake completed: the host holds the key it showed

    def handshakeCompleted(self) -> None:  # Twisted's name
        self.proven = True
        transport: Any = self.transport
        transport.loseConnection()

    def connectionLost(self, reason: Failure = connectionDone) -> None:  # Twisted's name
        self.reason = reason  # kept aside: a Deferred fired with a Failure would errback
        if not self.lost.called:
            self.lost.callback(None)


async def fetch_host_fingerprint(
    reactor: Any, host: str, port: int, identity: Identity, *, timeout: float = PROBE_TIMEOUT
) -> str:
    """The fingerprint of the key the host at ``host:port`` presents in its TLS handshake.

    Raise :class:`HostUnreachable` when no connection can be made, or the handshake ends (or
    times out) before the host showed a canasta-net key."""
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    seen: list[str] = []

    def note(fingerprint: str) -> bool:
        seen.append(fingerprint)
        return True  # the handshake goes on, for the host to prove it holds the key

    creator = client_context_factory(identity, None, decide=note)
    endpoint = SSL4ClientEndpoint(  # type: ignore[no-untyped-call]
        reactor, host, port, creator, timeout=timeout
    )
    try:
        probe = await endpoint.connect(Factory.forProtocol(_Probe))  # type: ignore[no-untyped-call]
    except Exception as e:  # any failure to connect: refused, no route, timeout, bad name
        raise HostUnreachable(f"cannot reach {where}: {_reason(e)}") from None
    transport: Any = probe.transport
    timed_out: list[bool] = []

    def give_up() -> None:
        timed_out.append(True)
        transport.abortConnection()

    timer = reactor.callLater(timeout, give_up)
    await probe.lost
    if timer.active():
        timer.cancel()
    if seen and probe.proven:
        return seen[0]
    if timed_out:
        raise HostUnreachable(f"{where} did not show its key within {timeout:g} s")
    why = _reason(probe.reason.value)
    raise HostUnreachable(f"{where} did not show a canasta-net key (is it a canasta host?): {why}")


def _reason(error: BaseException) -> str:
    text = str(error).strip().rstrip(".") or type(error).__name__
    if text[1:2].isupper():  # an acronym ("DNS lookup failed") keeps its capitals
        return text
    return text[:1].lower() + text[1:]
