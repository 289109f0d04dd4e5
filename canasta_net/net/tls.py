"""TLS bound to canasta-net identities: certificates, connection creators, peer keys.

A peer's TLS certificate is a thin, self-signed wrapper around its long-lived Ed25519 identity key.
Nothing in the certificate but the key matters: there are no certificate authorities, no host
names and no validity dates to check. The TLS 1.3 handshake proves that each side holds the private
key of the certificate it presented, so the key read back from a verified connection *is* the peer's
identity.

- The server (the table host) requires a client certificate and accepts any self-signed Ed25519
  one; the table layer decides which keys may take which seat, reading the key with
  :func:`verified_peer_key`.
- The client (a joiner) refuses a host whose fingerprint differs from the one it expected, or, when
  it expected none, asks a ``decide(fingerprint)`` callback (trust on first use).

Refusals happen inside the handshake: the connection is aborted before any application byte is
delivered, and the protocol's ``connectionLost`` receives a :class:`TLSIdentityError` that says why.
Protocols should start talking in ``handshakeCompleted`` (:class:`IHandshakeListener`), not in
``connectionMade``, which Twisted calls before the handshake.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import hashlib
import hmac
import weakref
from collections.abc import Callable
from typing import Final

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.x509.oid import NameOID
from OpenSSL import SSL, crypto
from twisted.internet.interfaces import (
    IOpenSSLClientConnectionCreator,
    IOpenSSLServerConnectionCreator,
)
from twisted.protocols.tls import TLSMemoryBIOProtocol
from twisted.python.failure import Failure
from zope.interface import implementer  # type: ignore[import-untyped, unused-ignore]

from canasta_net.identity import Identity, fingerprint

__all__ = [
    "FINGERPRINT_LENGTH",
    "ClientIdentityTLS",
    "Decide",
    "HostFingerprintMismatch",
    "HostNotTrusted",
    "ServerIdentityTLS",
    "TLSIdentityError",
    "certificate_for",
    "client_context_factory",
    "normalize_fingerprint",
    "peer_public_key",
    "server_context_factory",
    "verified_peer_key",
]

# The certificate's dates are never checked by canasta-net (a peer with a wrong clock must still be
# able to play); they are fixed so that a certificate is a pure function of the identity. The end
# date is RFC 5280's "no well-defined expiration date".
NOT_VALID_BEFORE: Final = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
NOT_VALID_AFTER: Final = datetime.datetime(9999, 12, 31, 23, 59, 59, tzinfo=datetime.UTC)

# Text form of a fingerprint: 20 bytes of SHA-256, base32 lower case, eight groups of four.
FINGERPRINT_LENGTH: Final = 39
_FINGERPRINT_BYTES: Final = 20

# VERIFY_FAIL_IF_NO_PEER_CERT only has an effect on the server; it is harmless on the client.
_VERIFY_MODE: Final = SSL.VERIFY_PEER | SSL.VERIFY_FAIL_IF_NO_PEER_CERT

Decide = Callable[[str], bool]
"""Trust on first use: given a host's fingerprint, return True to connect to it."""

VerifyCallback = Callable[[SSL.Connection, crypto.X509, int, int, int], bool]


class TLSIdentityError(ValueError):
    """The peer's certificate does not carry an acceptable canasta-net identity."""


class HostFingerprintMismatch(TLSIdentityError):
    """The host's key is not the one expected: you may be talking to someone posing as the host.

    ``expected`` and ``actual`` are fingerprints in their canonical text form.
    """

    def __init__(self, expected: str, actual: str) -> None:
        super().__init__(f"host fingerprint mismatch: expected {expected}, got {actual}")
        self.expected = expected
        self.actual = actual


class HostNotTrusted(TLSIdentityError):
    """The host's fingerprint was not known and was not accepted, so the connection was refused."""

    def __init__(self, actual: str) -> None:
        super().__init__(f"host fingerprint {actual} was not accepted")
        self.actual = actual


def normalize_fingerprint(text: str) -> str:
    """The canonical form of a fingerprint a person typed or pasted.

    Case, spaces and dashes are ignored: ``"ABCD EFGH ..."`` and ``"abcd-efgh-..."`` are the same
    fingerprint. Raise :class:`ValueError` unless the text holds exactly one fingerprint.
    """
    compact = "".join(text.split()).replace("-", "").upper()
    try:
        digest = base64.b32decode(compact, casefold=False)
    except (binascii.Error, ValueError):
        raise ValueError(f"not a canasta-net fingerprint: {text!r}") from None
    if len(digest) != _FINGERPRINT_BYTES or "=" in compact:
        raise ValueError(f"not a canasta-net fingerprint: {text!r}")
    lower = compact.lower()
    return "-".join(lower[i : i + 4] for i in range(0, len(lower), 4))


def _serial_number(public_key: bytes) -> int:
    digest = hashlib.sha256(b"canasta-net certificate serial\x00" + public_key).digest()
    # A positive integer of at most 20 octets (RFC 5280 section 4.1.2.2), never zero.
    return (int.from_bytes(digest[:16], "big") >> 1) | 1


def certificate_for(identity: Identity, common_name: str = "canasta-net peer") -> x509.Certificate:
    """A self-signed X.509 certificate whose key is ``identity``'s Ed25519 key.

    The certificate is deterministic: the same identity and common name always give the same bytes
    (fixed dates, a serial derived from the key, and Ed25519 signatures are deterministic).
    """
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    return (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(identity.private_key.public_key())
        .serial_number(_serial_number(identity.public_key))
        .not_valid_before(NOT_VALID_BEFORE)
        .not_valid_after(NOT_VALID_AFTER)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(identity.private_key, algorithm=None)
    )


def _as_cryptography(certificate: crypto.X509 | x509.Certificate) -> x509.Certificate:
    if isinstance(certificate, x509.Certificate):
        return certificate
    if isinstance(certificate, crypto.X509):
        return certificate.to_cryptography()
    raise TypeError(f"not a certificate: {type(certificate).__name__}")


def peer_public_key(certificate: crypto.X509 | x509.Certificate) -> bytes:
    """The raw 32-byte Ed25519 public key of a peer certificate (pyOpenSSL or cryptography).

    Raise :class:`TLSIdentityError` if the certificate's key is not an Ed25519 key.
    """
    cert = _as_cryptography(certificate)
    try:
        key = cert.public_key()
    except ValueError as e:  # an algorithm cryptography does not support at all
        raise TLSIdentityError(f"the peer certificate's key cannot be read: {e}") from e
    if not isinstance(key, Ed25519PublicKey):
        raise TLSIdentityError(
            f"the peer certificate holds a {type(key).__name__}, not an Ed25519 identity key"
        )
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def _identity_of(certificate: crypto.X509 | x509.Certificate) -> bytes:
    """The key of a self-signed Ed25519 certificate; :class:`TLSIdentityError` for anything else."""
    cert = _as_cryptography(certificate)
    public_key = peer_public_key(cert)
    try:
        cert.verify_directly_issued_by(cert)
    except (ValueError, TypeError, InvalidSignature):
        raise TLSIdentityError("the peer certificate is not self-signed by its own key") from None
    return public_key


def verified_peer_key(transport: object) -> bytes:
    """The peer's raw Ed25519 key on a TLS connection made with this module's creators.

    Call it from ``handshakeCompleted`` or later. Raise :class:`TLSIdentityError` if the transport
    is not TLS, the handshake has not completed, or the peer certificate was not verified.
    """
    get_handle = getattr(transport, "getHandle", None)
    connection = get_handle() if callable(get_handle) else None
    if not isinstance(connection, SSL.Connection):
        raise TLSIdentityError("the transport is not a TLS connection (or it is already closed)")
    verified = _verified_keys.get(connection)
    if verified is None or connection.get_peer_finished() is None:
        raise TLSIdentityError("the peer has not been verified yet (handshake not complete)")
    certificate = connection.get_peer_certificate(as_cryptography=True)
    if certificate is None or peer_public_key(certificate) != verified:
        raise TLSIdentityError("the peer certificate is not the one that was verified")
    return verified


def _identity_context(identity: Identity) -> SSL.Context:
    """A TLS 1.3-only context presenting ``identity``'s certificate, with no session resumption."""
    # Ed25519 signatures in the handshake need TLS 1.3 (OpenSSL 1.1.1 or newer). Resumption is off
    # so that every connection proves possession of the identity key again.
    context = SSL.Context(SSL.TLS_METHOD)
    context.set_min_proto_version(SSL.TLS1_3_VERSION)
    context.set_max_proto_version(SSL.TLS1_3_VERSION)
    context.use_certificate(certificate_for(identity))
    context.use_privatekey(identity.private_key)
    context.check_privatekey()
    context.set_options(SSL.OP_NO_TICKET)
    context.set_session_cache_mode(SSL.SESS_CACHE_OFF)
    return context


def _refuse(tls_protocol: TLSMemoryBIOProtocol, error: TLSIdentityError) -> None:
    """Abort the handshake; ``connectionLost`` will receive ``error`` as its reason."""
    tls_protocol.failVerification(Failure(error))  # type: ignore[no-untyped-call]


# The key each live connection's verify callback accepted, so that a connection made by some other
# creator (one that verifies nothing) is never mistaken for an authenticated one.
_verified_keys: weakref.WeakKeyDictionary[SSL.Connection, bytes] = weakref.WeakKeyDictionary()


def _verify_callback(
    tls_protocol: TLSMemoryBIOProtocol, check: Callable[[bytes], None]
) -> VerifyCallback:
    """An OpenSSL verify callback that replaces chain validation with an identity check.

    ``check(public_key)`` raises :class:`TLSIdentityError` to refuse the peer. The outcome is
    decided once per connection (OpenSSL may call back several times for one certificate, once per
    error it found), and a refusal aborts the connection with the error as the reason
    ``connectionLost`` receives, as Twisted's own host name verification does. Nothing may escape
    the callback: OpenSSL would lose it.
    """
    outcome: list[bool] = []

    def verify(
        connection: SSL.Connection, certificate: crypto.X509, error: int, depth: int, ok: int
    ) -> bool:
        if outcome:
            return outcome[0]
        refusal: TLSIdentityError | None = None
        public_key = b""
        if depth != 0:
            # A certificate chain: canasta-net peers present exactly one self-signed certificate.
            refusal = TLSIdentityError(
                "the peer presented a certificate chain, not one certificate"
            )
        else:
            try:
                public_key = _identity_of(certificate)
                check(public_key)
            except TLSIdentityError as e:
                refusal = e
            except Exception as e:  # a failing decide() callback refuses the host
                refusal = TLSIdentityError(f"the peer could not be checked: {e!r}")
                refusal.__cause__ = e
        outcome.append(refusal is None)
        if refusal is None:
            _verified_keys[connection] = public_key
        else:
            _refuse(tls_protocol, refusal)
        return refusal is None

    return verify


@implementer(IOpenSSLServerConnectionCreator)
class ServerIdentityTLS:
    """Server side: present ``identity`` and require a self-signed Ed25519 client certificate."""

    def __init__(self, identity: Identity) -> None:
        self.identity = identity
        self._context = _identity_context(identity)

    def serverConnectionForTLS(self, tlsProtocol: TLSMemoryBIOProtocol) -> SSL.Connection:
        connection = SSL.Connection(self._context, None)
        connection.set_verify(_VERIFY_MODE, _verify_callback(tlsProtocol, _accept_any_identity))
        return connection


def _accept_any_identity(public_key: bytes) -> None:
    """Any identity may connect; the table layer decides which keys may sit where."""


@implementer(IOpenSSLClientConnectionCreator)
class ClientIdentityTLS:
    """Client side: present ``identity`` and refuse a host that is not the one expected.

    With ``expected_fingerprint`` the host's key must have that fingerprint; otherwise ``decide``
    is asked, once per connection, with the host's fingerprint.
    """

    def __init__(
        self, identity: Identity, expected_fingerprint: str | None, decide: Decide | None = None
    ) -> None:
        if expected_fingerprint is None and decide is None:
            raise ValueError("give the host's expected fingerprint or a decide() callback")
        self.identity = identity
        self.expected_fingerprint = (
            None if expected_fingerprint is None else normalize_fingerprint(expected_fingerprint)
        )
        self.decide = decide
        self._context = _identity_context(identity)

    def clientConnectionForTLS(self, tlsProtocol: TLSMemoryBIOProtocol) -> SSL.Connection:
        connection = SSL.Connection(self._context, None)
        connection.set_verify(_VERIFY_MODE, _verify_callback(tlsProtocol, self._check_host))
        return connection

    def _check_host(self, public_key: bytes) -> None:
        actual = fingerprint(public_key)
        if self.expected_fingerprint is not None:
            if not hmac.compare_digest(actual, self.expected_fingerprint):
                raise HostFingerprintMismatch(self.expected_fingerprint, actual)
            return
        assert self.decide is not None
        if not self.decide(actual):
            raise HostNotTrusted(actual)


def server_context_factory(identity: Identity) -> ServerIdentityTLS:
    """For ``reactor.listenSSL`` / ``SSL4ServerEndpoint``: see :class:`ServerIdentityTLS`."""
    return ServerIdentityTLS(identity)


def client_context_factory(
    identity: Identity, expected_fingerprint: str | None, *, decide: Decide | None = None
) -> ClientIdentityTLS:
    """For ``reactor.connectSSL`` / ``SSL4ClientEndpoint``: see :class:`ClientIdentityTLS`.

    ``decide`` is called synchronously during the handshake; a prompt there blocks the reactor.
    """
    return ClientIdentityTLS(identity, expected_fingerprint, decide)
