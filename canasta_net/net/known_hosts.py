"""Pinned host fingerprints, like SSH's ``known_hosts``: which key each host address should have.

The file is text, one host a line: ``address fingerprint``, with ``#`` starting a comment. It lives
in the user's config directory (``$XDG_CONFIG_HOME/canasta-net/known_hosts``, by default
``~/.config/canasta-net/known_hosts``) with mode 0600. Malformed lines are skipped, reported in
:attr:`KnownHosts.warnings`, and kept as they are when the file is rewritten. Writes are atomic: a
temporary file in the same directory, flushed and synced, then renamed over the old one.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from canasta_net.net.tls import normalize_fingerprint

__all__ = [
    "MAX_FILE_SIZE",
    "CheckResult",
    "KnownHosts",
    "KnownHostsError",
    "default_known_hosts_path",
]

MAX_FILE_SIZE: Final = 1 << 20
"""A known_hosts file larger than this is refused rather than read (or rewritten) in part."""

CheckResult = Literal["match", "unknown", "mismatch"]

_HEADER: Final = (
    "# canasta-net known hosts: one host a line, 'address fingerprint'.\n"
    "# A host whose key changes is refused; delete its line only if you know why it changed.\n"
)


class KnownHostsError(ValueError):
    """The known_hosts file cannot be read or written."""


def default_known_hosts_path() -> Path:
    """Where pinned host fingerprints live unless a path is given."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "canasta-net" / "known_hosts"


def _normalize_address(address: str) -> str:
    """Addresses compare without case (host names and IPv6 hex digits are case-insensitive)."""
    if not address or address != address.strip() or any(c.isspace() for c in address):
        raise ValueError(f"a host address must be non-empty and without spaces: {address!r}")
    if "#" in address:
        raise ValueError(f"a host address cannot contain '#': {address!r}")
    return address.lower()


@dataclass(frozen=True)
class _Line:
    """One line of the file as read; ``address`` is None for comments, blanks and malformed."""

    text: str
    address: str | None = None
    fingerprint: str | None = None


class KnownHosts:
    """The pinned fingerprints in one known_hosts file.

    The file is read when the object is made (a missing file is an empty store) and again, to pick
    up other processes' pins, just before each write.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = default_known_hosts_path() if path is None else path
        self.warnings: list[str] = []
        self._lines: list[_Line] = []
        self._hosts: dict[str, str] = {}
        self.reload()

    def reload(self) -> None:
        """Read the file again; :attr:`warnings` then describes this read only."""
        self.warnings = []
        self._lines = list(self._parse(self._read_text()))
        self._hosts = {}
        for line in self._lines:
            if line.address is not None and line.fingerprint is not None:
                self._hosts[line.address] = line.fingerprint

    def lookup(self, address: str) -> str | None:
        """The fingerprint pinned for ``address``, or None."""
        return self._hosts.get(_normalize_address(address))

    def check(self, address: str, fingerprint: str) -> CheckResult:
        """Whether ``fingerprint`` is the one pinned for ``address``."""
        offered = normalize_fingerprint(fingerprint)
        pinned = self.lookup(address)
        if pinned is None:
            return "unknown"
        return "match" if pinned == offered else "mismatch"

    def pin(self, address: str, fingerprint: str) -> None:
        """Record ``fingerprint`` for ``address``, replacing any fingerprint pinned before.

        Replacing a pin is for when the person has confirmed that the host's key really changed.
        """
        key = _normalize_address(address)
        value = normalize_fingerprint(fingerprint)
        self.reload()
        new_line = _Line(f"{key} {value}", key, value)
        lines: list[_Line] = []
        placed = False
        for line in self._lines:
            if line.address == key:
                if not placed:
                    lines.append(new_line)
                    placed = True
                continue
            lines.append(line)
        if not placed:
            if not lines:
                lines.extend(_Line(text) for text in _HEADER.splitlines())
            lines.append(new_line)
        self._write(lines)
        self.reload()

    def forget(self, address: str) -> bool:
        """Remove ``address``'s pin; return whether there was one."""
        key = _normalize_address(address)
        self.reload()
        if key not in self._hosts:
            return False
        self._write([line for line in self._lines if line.address != key])
        self.reload()
        return True

    def __iter__(self) -> Iterator[tuple[str, str]]:
        """The pinned (address, fingerprint) pairs, in file order."""
        return iter(list(self._hosts.items()))

    def __len__(self) -> int:
        return len(self._hosts)

    def _read_text(self) -> str:
        try:
            with open(self.path, "rb") as f:
                info = os.fstat(f.fileno())
                data = f.read(MAX_FILE_SIZE + 1)
        except FileNotFoundError:
            return ""
        except OSError as e:
            raise KnownHostsError(f"cannot read {self.path}: {e.strerror or e}") from e
        if len(data) > MAX_FILE_SIZE:
            raise KnownHostsError(f"{self.path} is larger than {MAX_FILE_SIZE} bytes")
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            self.warnings.append(
                f"{self.path} is writable by other users: anyone who can change it can make you "
                "trust the wrong host (chmod 600 it)"
            )
        # surrogateescape: bytes that are not UTF-8 survive a rewrite unchanged.
        return data.decode("utf-8", errors="surrogateescape")

    def _parse(self, text: str) -> Iterator[_Line]:
        seen: set[str] = set()
        for number, raw in enumerate(text.splitlines(), start=1):
            content = raw.split("#", 1)[0].strip()
            if not content:
                yield _Line(raw)
                continue
            fields = content.split()
            problem: str | None = None
            address = value = ""
            if len(fields) != 2:
                problem = f"expected 'address fingerprint', found {len(fields)} fields"
            else:
                try:
                    address = _normalize_address(fields[0])
                    value = normalize_fingerprint(fields[1])
                except ValueError as e:
                    problem = str(e)
            if problem is None and address in seen:
                problem = f"{address} is listed again; the first entry is used"
            if problem is not None:
                self.warnings.append(f"{self.path} line {number}: {problem}; line skipped")
                yield _Line(raw)
                continue
            seen.add(address)
            yield _Line(raw, address, value)

    def _write(self, lines: list[_Line]) -> None:
        text = "".join(line.text + "\n" for line in lines)
        data = text.encode("utf-8", errors="surrogateescape")
        directory = self.path.parent
        try:
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            # mkstemp creates the file with mode 0600.
            fd, temporary = tempfile.mkstemp(prefix=".known_hosts.", dir=directory)
        except OSError as e:
            raise KnownHostsError(f"cannot write {self.path}: {e.strerror or e}") from e
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(temporary, 0o600)
            os.replace(temporary, self.path)
        except OSError as e:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise KnownHostsError(f"cannot write {self.path}: {e.strerror or e}") from e
        _sync_directory(directory)


def _sync_directory(directory: Path) -> None:
    """Make the rename durable; not every platform can open a directory, so failure is ignored."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
