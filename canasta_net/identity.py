"""Ed25519 identities: create, save (mode 0600), load, sign with domain separation, fingerprint.

Every signature in canasta-net covers ``DOMAIN_PREFIX + kind + b"\\x00" + message``, so a signature
made for one kind of message (an action, a log record, a commitment list...) can never be replayed
as another kind.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from . import memo

DOMAIN_PREFIX = b"canasta-net/v1/"
PUBLIC_KEY_SIZE = 32
SIGNATURE_SIZE = 64


class IdentityError(ValueError):
    """An identity key file could not be read or is not a canasta-net identity."""


class BadSignature(ValueError):
    """A signature does not verify under the claimed public key."""


def signing_input(kind: str, message: bytes) -> bytes:
    """The exact bytes that are signed for a message of the given kind."""
    if not kind or "\x00" in kind:
        raise ValueError("a signature kind must be a non-empty string without NUL")
    return DOMAIN_PREFIX + kind.encode("ascii") + b"\x00" + message


def fingerprint(public_key: bytes) -> str:
    """A short text a person can compare aloud: SHA-256 of the raw key, base32, in groups of 4."""
    digest = hashlib.sha256(b"canasta-net fingerprint\x00" + public_key).digest()[:20]
    text = base64.b32encode(digest).decode("ascii").lower()
    return "-".join(text[i : i + 4] for i in range(0, len(text), 4))


@functools.lru_cache(maxsize=1024)
def _public_key(raw: bytes) -> Ed25519PublicKey:
    """Key objects, built once per key: a table verifies the same few keys all match long."""
    return Ed25519PublicKey.from_public_bytes(raw)


# the tests' memo keys a public key by its 32 bytes
memo.key_type(type(Ed25519PrivateKey.generate().public_key()), lambda key: key.public_bytes_raw())


@memo.pure
def check_signature(key: Ed25519PublicKey, signature: bytes, signed: bytes) -> None:
    """``key.verify(signature, signed)``: raises ``InvalidSignature``. Every signature check
    goes through here, so that the tests' memo (:mod:`canasta_net.memo`) covers them all."""
    key.verify(signature, signed)


def verify(public_key: bytes, kind: str, message: bytes, signature: bytes) -> None:
    """Raise :class:`BadSignature` unless ``signature`` is ``public_key``'s over (kind, message)."""
    if len(public_key) != PUBLIC_KEY_SIZE or len(signature) != SIGNATURE_SIZE:
        raise BadSignature("malformed key or signature")
    try:
        check_signature(_public_key(public_key), signature, signing_input(kind, message))
    except InvalidSignature:
        raise BadSignature(f"bad {kind} signature") from None


@dataclass(frozen=True)
class Identity:
    """A peer's long-lived Ed25519 key pair."""

    private_key: Ed25519PrivateKey

    @classmethod
    def generate(cls) -> Identity:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_seed(cls, seed: bytes) -> Identity:
        """A deterministic identity from 32 bytes: for tests and bots only."""
        return cls(Ed25519PrivateKey.from_private_bytes(hashlib.sha256(seed).digest()))

    @property
    def public_key(self) -> bytes:
        return self.private_key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_key)

    def sign(self, kind: str, message: bytes) -> bytes:
        return self.private_key.sign(signing_input(kind, message))

    def private_bytes(self) -> bytes:
        return self.private_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )

    def save(self, path: Path) -> None:
        """Write the key as PEM with mode 0600, creating parent directories (mode 0700). The file
        appears whole or not at all (written beside it, then renamed into place)."""
        temporary = self._write_beside(path)
        os.replace(temporary, path)

    def save_new(self, path: Path) -> bool:
        """Write the key to ``path`` only if no file is there: True if this key is now the file,
        False if another (a process started at the same moment) got there first. Whole or not at
        all, as ``save``."""
        temporary = self._write_beside(path)
        try:
            os.link(temporary, path)  # fails if the name exists: the first writer wins
        except FileExistsError:
            return False
        except OSError:  # a file system without hard links: the name, if it is still free
            if path.exists():
                return False
            os.replace(temporary, path)
            return True
        finally:
            temporary.unlink(missing_ok=True)
        return True

    def _write_beside(self, path: Path) -> Path:
        """The key written and synced to a new file of mode 0600 in ``path``'s directory."""
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".new")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(self.private_bytes())
                f.flush()
                os.fsync(f.fileno())
            os.chmod(name, 0o600)
        except BaseException:
            os.unlink(name)
            raise
        return Path(name)

    @classmethod
    def load(cls, path: Path) -> Identity:
        try:
            data = path.read_bytes()[:16384]
            key = serialization.load_pem_private_key(data, password=None)
        except (OSError, ValueError, TypeError) as e:
            raise IdentityError(f"cannot read identity key {path}: {e}") from e
        if not isinstance(key, Ed25519PrivateKey):
            raise IdentityError(f"{path} is not an Ed25519 key")
        return cls(key)

    @classmethod
    def load_or_create(cls, path: Path) -> Identity:
        """The key at ``path``, made there first if there is none. Two processes that start at
        once with one path end up with one key: each writes a whole file of its own and links it
        into place; the one that finds the name taken reads the other's (never a half-written
        file, never a key that the file no longer holds)."""
        if path.exists():
            return cls.load(path)
        identity = cls.generate()
        if identity.save_new(path):
            return identity
        return cls.load(path)


def default_identity_path() -> Path:
    """Where the identity lives unless ``--identity`` says otherwise."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "canasta-net" / "identity.pem"
