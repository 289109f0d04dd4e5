"""TLS bound to identities, over real sockets on 127.0.0.1: who may connect, what each sees."""

from __future__ import annotations

import datetime
import hashlib
import re
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.x509.oid import NameOID
from OpenSSL import SSL, crypto
from twisted.internet import reactor, ssl
from twisted.internet.address import IPv4Address
from twisted.internet.defer import Deferred, DeferredList
from twisted.internet.interfaces import (
    IHandshakeListener,
    IOpenSSLClientConnectionCreator,
    IReactorSSL,
    ITCPTransport,
)
from twisted.internet.protocol import ClientFactory, Protocol, ServerFactory
from twisted.logger import ILogObserver, formatEvent, globalLogPublisher
from twisted.python.failure import Failure
from zope.interface import implementer, provider

from canasta_net.identity import Identity, fingerprint
from canasta_net.net.tls import (
    FINGERPRINT_LENGTH,
    HostFingerprintMismatch,
    HostNotTrusted,
    TLSIdentityError,
    certificate_for,
    client_context_factory,
    normalize_fingerprint,
    peer_public_key,
    server_context_factory,
    verified_peer_key,
)

HOST = Identity.from_seed(b"test host")
JOINER = Identity.from_seed(b"test joiner")
STRANGER = Identity.from_seed(b"test stranger")
TIMEOUT = 5


@implementer(IHandshakeListener)
class Peer(Protocol):
    """Says ``greeting`` once the handshake is done; records everything that happens to it."""

    def __init__(self, greeting: bytes, early: bytes = b"") -> None:
        self.greeting = greeting
        self.early = early
        self.received = b""
        self.peer_key: bytes | None = None
        self.key_before_handshake: Exception | None = None
        self.key_after_handshake: Exception | None = None
        self.handshake_done = False
        self.got_data: Deferred[bytes] = Deferred()
        self.lost: Deferred[None] = Deferred()
        self.reason: Failure | None = None

    def connectionMade(self) -> None:
        try:
            verified_peer_key(self.transport)
        except TLSIdentityError as e:
            self.key_before_handshake = e
        if self.early:
            # Written before the handshake: TLS buffers it until the peer is verified.
            self.tcp.write(self.early)

    def handshakeCompleted(self) -> None:
        self.handshake_done = True
        try:
            self.peer_key = verified_peer_key(self.transport)
        except TLSIdentityError as e:  # a connection made without this module's creators
            self.key_after_handshake = e
        self.tcp.write(self.greeting)

    @property
    def tcp(self) -> ITCPTransport:
        """The connection this peer speaks over, TLS over TCP."""
        assert ITCPTransport.providedBy(self.transport), self.transport
        return self.transport

    def dataReceived(self, data: bytes) -> None:
        self.received += data
        if not self.got_data.called:
            self.got_data.callback(data)

    def connectionLost(self, reason: Failure = None) -> None:  # type: ignore[assignment]
        self.reason = reason
        self.lost.callback(None)


class PeerFactory(ClientFactory, ServerFactory):
    """Builds the peers of either side: the host's and the joiners'."""

    def __init__(self, greeting: bytes, early: bytes = b"") -> None:
        self.greeting = greeting
        self.early = early
        self.peers: list[Peer] = []
        self.first: Deferred[Peer] = Deferred()
        self.failed: Deferred[Failure] = Deferred()

    def buildProtocol(self, addr: Any) -> Peer:
        peer = Peer(self.greeting, self.early)
        peer.factory = self
        self.peers.append(peer)
        if not self.first.called:
            self.first.callback(peer)
        return peer

    def clientConnectionFailed(self, connector: Any, reason: Failure) -> None:
        self.failed.callback(reason)


def timed(d: Deferred[Any]) -> Deferred[Any]:
    return d.addTimeout(TIMEOUT, reactor)


async def lost(peer: Peer) -> Failure:
    """Wait for the connection to close; the reason ``connectionLost`` was given."""
    await timed(peer.lost)
    assert peer.reason is not None
    return peer.reason


@pytest.fixture(autouse=True)
def no_logged_errors() -> Generator[None, None, None]:
    """Fail a test if Twisted logged an error (an unhandled exception in a callback, say)."""
    errors: list[dict[str, Any]] = []

    @provider(ILogObserver)
    def observe(event: dict[str, Any]) -> None:
        if event.get("log_failure") is not None or event.get("isError"):
            errors.append(event)

    globalLogPublisher.addObserver(observe)
    yield
    globalLogPublisher.removeObserver(observe)
    assert not errors, [formatEvent(e) + str(e.get("log_failure", "")) for e in errors]


@pytest.fixture
def server() -> Generator[tuple[PeerFactory, int], None, None]:
    """A listening host on 127.0.0.1 that greets every verified peer; closed after the test."""
    factory = PeerFactory(b"hello from host")
    port = IReactorSSL(reactor).listenSSL(
        0,
        factory,
        # Twisted takes a connection creator here too; its stubs name only context factories
        server_context_factory(HOST),  # type: ignore[arg-type]
        interface="127.0.0.1",
    )
    address = port.getHost()
    assert isinstance(address, IPv4Address)
    yield factory, address.port
    pytest_twisted.blockon(Deferred.fromCoroutine(_shut_down(factory, port)))


async def _shut_down(factory: PeerFactory, port: Any) -> None:
    for peer in factory.peers:
        if not peer.lost.called:
            peer.tcp.abortConnection()
    await DeferredList([timed(peer.lost) for peer in factory.peers])
    await port.stopListening()


def connect(port: int, creator: Any, greeting: bytes, early: bytes = b"") -> PeerFactory:
    factory = PeerFactory(greeting, early)
    # the defaults of Twisted's connectSSL, which its interface leaves without
    IReactorSSL(reactor).connectSSL(
        "127.0.0.1", port, factory, creator, timeout=30, bindAddress=None
    )
    return factory


@pytest_twisted.ensureDeferred
async def test_mutual_authentication_each_side_reads_the_others_key(
    server: tuple[PeerFactory, int],
) -> None:
    host_side, port = server
    joiner_side = connect(port, client_context_factory(JOINER, HOST.fingerprint), b"hi from joiner")
    joiner = await timed(joiner_side.first)
    assert await timed(joiner.got_data) == b"hello from host"
    host = await timed(host_side.first)
    if not host.received:
        await timed(host.got_data)
    assert host.received == b"hi from joiner"

    assert joiner.peer_key == HOST.public_key
    assert host.peer_key == JOINER.public_key
    # connectionMade comes before the handshake: no verified key yet.
    assert isinstance(joiner.key_before_handshake, TLSIdentityError)
    assert isinstance(host.key_before_handshake, TLSIdentityError)
    connection = joiner.transport.getHandle()
    assert connection.get_protocol_version_name() == "TLSv1.3"

    joiner.transport.loseConnection()
    await lost(joiner)
    await lost(host)


@pytest_twisted.ensureDeferred
async def test_fingerprint_typed_by_a_person_is_accepted(server: tuple[PeerFactory, int]) -> None:
    _, port = server
    typed = HOST.fingerprint.upper().replace("-", " ")
    joiner_side = connect(port, client_context_factory(JOINER, typed), b"hi")
    joiner = await timed(joiner_side.first)
    assert await timed(joiner.got_data) == b"hello from host"
    joiner.transport.loseConnection()
    await lost(joiner)


@pytest_twisted.ensureDeferred
async def test_wrong_host_fingerprint_is_refused_before_any_data(
    server: tuple[PeerFactory, int],
) -> None:
    host_side, port = server
    creator = client_context_factory(JOINER, STRANGER.fingerprint)
    joiner_side = connect(port, creator, b"hi", early=b"my secret hand")
    joiner = await timed(joiner_side.first)
    reason = await lost(joiner)

    assert reason.check(HostFingerprintMismatch)
    error = reason.value
    assert isinstance(error, HostFingerprintMismatch)
    assert str(error) == (
        f"host fingerprint mismatch: expected {STRANGER.fingerprint}, got {HOST.fingerprint}"
    )
    assert (error.expected, error.actual) == (STRANGER.fingerprint, HOST.fingerprint)
    assert not joiner.handshake_done and joiner.received == b""

    host = await timed(host_side.first)
    await lost(host)
    assert not host.handshake_done
    assert host.received == b""  # the joiner's early write never left it


@pytest_twisted.ensureDeferred
async def test_client_without_certificate_is_refused_by_the_server(
    server: tuple[PeerFactory, int],
) -> None:
    host_side, port = server
    anonymous = ssl.CertificateOptions()  # no certificate, verifies nothing
    joiner_side = connect(port, anonymous, b"let me in")
    joiner = await timed(joiner_side.first)
    host = await timed(host_side.first)

    host_reason = await lost(host)
    await lost(joiner)
    assert host_reason.check(SSL.Error)
    assert not host.handshake_done
    assert host.received == b"" and host.peer_key is None
    # TLS 1.3: the client finishes its side before the server reads its (empty) certificate, but
    # it never gets a byte from the host, and it has no verified host key either.
    assert joiner.handshake_done and joiner.received == b""
    assert isinstance(joiner.key_after_handshake, TLSIdentityError)


@implementer(IOpenSSLClientConnectionCreator)
class EcdsaClient:
    """A client presenting a self-signed P-256 certificate instead of an Ed25519 identity."""

    def __init__(self) -> None:
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "not an identity")])
        now = datetime.datetime.now(datetime.UTC)
        certificate = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .serial_number(1)
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .sign(key, SHA256())
        )
        self.certificate = certificate
        self.context = SSL.Context(SSL.TLS_METHOD)
        self.context.set_min_proto_version(SSL.TLS1_3_VERSION)
        self.context.use_certificate(certificate)
        self.context.use_privatekey(key)

    def clientConnectionForTLS(self, tlsProtocol: Any) -> SSL.Connection:
        return SSL.Connection(self.context, None)


@pytest_twisted.ensureDeferred
async def test_client_with_a_non_ed25519_certificate_is_refused(
    server: tuple[PeerFactory, int],
) -> None:
    host_side, port = server
    joiner_side = connect(port, EcdsaClient(), b"let me in")
    joiner = await timed(joiner_side.first)
    host = await timed(host_side.first)
    host_reason = await lost(host)
    await lost(joiner)
    assert host_reason.check(TLSIdentityError)
    assert "not an Ed25519 identity key" in str(host_reason.value)
    assert not host.handshake_done and host.received == b""
    assert joiner.received == b""
    assert isinstance(joiner.key_after_handshake, TLSIdentityError)


@pytest_twisted.ensureDeferred
async def test_trust_on_first_use_refused(server: tuple[PeerFactory, int]) -> None:
    host_side, port = server
    asked: list[str] = []

    def decide(seen: str) -> bool:
        asked.append(seen)
        return False

    creator = client_context_factory(JOINER, None, decide=decide)
    joiner_side = connect(port, creator, b"hi", early=b"early")
    joiner = await timed(joiner_side.first)
    reason = await lost(joiner)
    assert reason.check(HostNotTrusted)
    assert str(reason.value) == f"host fingerprint {HOST.fingerprint} was not accepted"
    assert asked == [HOST.fingerprint]
    assert joiner.received == b""
    host = await timed(host_side.first)
    await lost(host)
    assert not host.handshake_done and host.received == b""


@pytest_twisted.ensureDeferred
async def test_trust_on_first_use_accepted_asks_once(server: tuple[PeerFactory, int]) -> None:
    _, port = server
    asked: list[str] = []

    def decide(seen: str) -> bool:
        asked.append(seen)
        return True

    joiner_side = connect(port, client_context_factory(JOINER, None, decide=decide), b"hi")
    joiner = await timed(joiner_side.first)
    assert await timed(joiner.got_data) == b"hello from host"
    assert asked == [HOST.fingerprint]
    assert joiner.peer_key == HOST.public_key
    joiner.transport.loseConnection()
    await lost(joiner)


@pytest_twisted.ensureDeferred
async def test_a_failing_decide_callback_refuses(server: tuple[PeerFactory, int]) -> None:
    _, port = server

    def decide(seen: str) -> bool:
        raise RuntimeError("no terminal to ask")

    joiner_side = connect(port, client_context_factory(JOINER, None, decide=decide), b"hi")
    joiner = await timed(joiner_side.first)
    reason = await lost(joiner)
    assert reason.check(TLSIdentityError)
    assert reason.value is not None and isinstance(reason.value.__cause__, RuntimeError)
    assert joiner.received == b""


def test_client_needs_an_expected_fingerprint_or_a_decision() -> None:
    with pytest.raises(ValueError, match="expected fingerprint or a decide"):
        client_context_factory(JOINER, None)
    with pytest.raises(ValueError, match="not a canasta-net fingerprint"):
        client_context_factory(JOINER, "abcd-efgh")


def test_certificate_round_trips_the_identity_key() -> None:
    certificate = certificate_for(JOINER)
    assert peer_public_key(certificate) == JOINER.public_key
    assert peer_public_key(crypto.X509.from_cryptography(certificate)) == JOINER.public_key
    der = certificate.public_bytes(serialization.Encoding.DER)
    assert peer_public_key(x509.load_der_x509_certificate(der)) == JOINER.public_key
    certificate.verify_directly_issued_by(certificate)
    assert certificate.signature_algorithm_oid == x509.SignatureAlgorithmOID.ED25519
    assert certificate.not_valid_before_utc < datetime.datetime.now(datetime.UTC)
    assert certificate.not_valid_after_utc.year >= 2045
    assert certificate.subject.rfc4514_string() == "CN=canasta-net peer"
    # Deterministic: the same identity always gives the same certificate.
    assert certificate_for(JOINER) == certificate
    assert certificate_for(HOST).serial_number != certificate.serial_number


def test_peer_public_key_refuses_a_non_ed25519_certificate() -> None:
    certificate = EcdsaClient().certificate
    with pytest.raises(TLSIdentityError, match="not an Ed25519 identity key"):
        peer_public_key(certificate)
    with pytest.raises(TLSIdentityError):
        peer_public_key(crypto.X509.from_cryptography(certificate))


def test_verified_peer_key_refuses_a_plain_transport() -> None:
    with pytest.raises(TLSIdentityError, match="not a TLS connection"):
        verified_peer_key(object())


@pytest.mark.parametrize(
    "text",
    [
        lambda fp: fp,
        lambda fp: fp.upper(),
        lambda fp: fp.replace("-", ""),
        lambda fp: " ".join(fp.split("-")),
        lambda fp: f"  {fp}\n",
    ],
)
def test_normalize_fingerprint_accepts_what_people_type(text: Any) -> None:
    assert normalize_fingerprint(text(JOINER.fingerprint)) == JOINER.fingerprint
    assert len(JOINER.fingerprint) == FINGERPRINT_LENGTH
    assert fingerprint(JOINER.public_key) == JOINER.fingerprint


@pytest.mark.parametrize(
    "text", ["", "abcd", "0000-0000-0000-0000-0000-0000-0000-0000", "x" * 39, "a" * 40]
)
def test_normalize_fingerprint_refuses_garbage(text: str) -> None:
    with pytest.raises(ValueError, match="not a canasta-net fingerprint"):
        normalize_fingerprint(text)


def test_vector_in_docs() -> None:
    """docs/tls.md's test vector: the document and the code must agree."""
    text = (Path(__file__).parent.parent / "docs" / "tls.md").read_text()
    vector = dict(re.findall(r"^([a-zA-Z0-9 -]+): ([0-9a-z-]+)$", text, flags=re.MULTILINE))
    identity = Identity(Ed25519PrivateKey.from_private_bytes(bytes.fromhex(vector["private key"])))
    assert identity.public_key == Identity.from_seed(b"canasta-net tls test vector").public_key
    assert identity.public_key.hex() == vector["public key"]
    assert identity.fingerprint == vector["fingerprint"]
    certificate = certificate_for(identity)
    assert hex(certificate.serial_number) == vector["certificate serial"]
    der = certificate.public_bytes(serialization.Encoding.DER)
    assert hashlib.sha256(der).hexdigest() == vector["certificate DER SHA-256"]
