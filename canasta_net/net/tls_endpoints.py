"""TLS endpoints whose writes reach the socket when they are made (Twisted's, less one delay).

``SSL4ServerEndpoint`` and ``SSL4ClientEndpoint`` wrap each connection in Twisted's
``BufferingTLSTransport``, which holds every write until the reactor's next iteration, to put
many small writes into one TLS record. Our frames are whole messages, already one write per
batch (``FrameProtocol.send_many``), so the hold buys nothing and costs every prompt, move and
record a reactor iteration, which at a host of many tables is milliseconds. These endpoints are
the same TCP endpoint and the same ``TLSMemoryBIOFactory``, with Twisted's unbuffered
``TLSMemoryBIOProtocol``: a write is encrypted at once, and ``framing.send_queued_now`` hands it
to the socket.
"""

from __future__ import annotations

from typing import Any

from twisted.internet.defer import Deferred
from twisted.internet.endpoints import TCP4ClientEndpoint, TCP4ServerEndpoint
from twisted.internet.interfaces import (
    IListeningPort,
    IProtocol,
    IProtocolFactory,
    IStreamClientEndpoint,
    IStreamServerEndpoint,
)
from twisted.protocols.tls import TLSMemoryBIOFactory, TLSMemoryBIOProtocol
from zope.interface import implementer  # type: ignore[import-untyped, unused-ignore]


def unbuffered_tls_factory(context: Any, is_client: bool, factory: IProtocolFactory) -> Any:
    """``TLSMemoryBIOFactory`` as ``listenSSL``/``connectSSL`` make it, with connections whose
    writes are not held for the next reactor iteration."""
    wrapping = TLSMemoryBIOFactory(context, is_client, factory)
    wrapping.protocol = TLSMemoryBIOProtocol
    return wrapping


@implementer(IStreamServerEndpoint)
class TLSServerEndpoint:
    """``SSL4ServerEndpoint(reactor, port, context, interface=...)``, unbuffered."""

    def __init__(self, reactor: Any, port: int, context: Any, *, interface: str = "") -> None:
        self._tcp: Any = TCP4ServerEndpoint(  # type: ignore[no-untyped-call]
            reactor, port, interface=interface
        )
        self._context = context

    def listen(self, factory: IProtocolFactory) -> Deferred[IListeningPort]:
        listening: Deferred[IListeningPort] = self._tcp.listen(
            unbuffered_tls_factory(self._context, False, factory)
        )
        return listening


@implementer(IStreamClientEndpoint)
class TLSClientEndpoint:
    """``SSL4ClientEndpoint(reactor, host, port, creator)``, unbuffered; the connection's
    Deferred fires with the application's protocol, as Twisted's does."""

    def __init__(
        self, reactor: Any, host: str, port: int, creator: Any, *, timeout: float = 30
    ) -> None:
        self._tcp: Any = TCP4ClientEndpoint(reactor, host, port, timeout=timeout)
        self._creator = creator

    def connect(self, factory: IProtocolFactory) -> Deferred[IProtocol]:
        connecting: Deferred[Any] = self._tcp.connect(
            unbuffered_tls_factory(self._creator, True, factory)
        )
        connected: Deferred[IProtocol] = connecting.addCallback(_application_protocol)
        return connected


def _application_protocol(tls: Any) -> IProtocol:
    wrapped: IProtocol = tls.wrappedProtocol
    return wrapped


__all__ = ["TLSClientEndpoint", "TLSServerEndpoint", "unbuffered_tls_factory"]
