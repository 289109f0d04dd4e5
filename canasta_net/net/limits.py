"""How much a host gives any one peer, and all the peers it does not know yet (sans-io).

Plain objects driven by the times they are handed (the reactor's ``seconds()``), so that tests run
them on a ``task.Clock`` or on bare numbers: the chat bucket of a seat, the password guard of an
address and a key, and the budget of connections and buffered bytes the host keeps for peers that
have not said ``hello``. ``net/host.py`` applies them; ``docs/wire-protocol.md`` ("Limits")
documents the numbers and the codes a peer receives.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Final, Generic, TypeVar

import msgpack

from ..log.records import MAX_ACT_SIZE

RATE_LIMITED: Final = "rate-limited"  # too soon: try again later (the error's text says when)
LOCKED_OUT: Final = "locked-out"  # too many wrong passwords: this address or key waits longer


@dataclass(frozen=True)
class HostLimits:
    """Every bound the host keeps against a peer that is slow, silent or hostile."""

    # output: a peer that does not read what it is sent
    # bytes queued for a peer beyond the transport's own buffer: room for a whole log's resync
    max_unsent: int = 16 << 20
    # connections that have not said hello
    tls_timeout: float = 10.0  # seconds from accepting to a finished TLS handshake
    hello_timeout: float = 10.0  # seconds from the handshake to ``hello``
    refusal_grace: float = 2.0  # seconds a refused peer has to read why before it is cut off
    max_hello_frame: int = 8192  # a frame before ``hello``: a hello is well under 1 kB
    max_unauthenticated: int = 128  # open connections that have not been given a seat
    max_unauthenticated_per_address: int = 16
    max_unauthenticated_bytes: int = 256 << 10  # partial frames held across all of them
    # watchers (``hello`` with ``watch``): connections that follow the table and play no seat
    max_watchers: int = 16  # at most ``wire.MAX_WATCHERS``: every one is named in ``seats``
    # TLS handshakes started (the reactor's costliest work for a stranger): a burst, then a rate;
    # a connection beyond them is not read (its ClientHello waits in the kernel) until its turn
    handshake_burst: int = 16
    handshakes_per_second: float = 20.0
    # seated (and watching) connections that speak version 2: heartbeats
    ping_interval: float = 5.0
    silence_limit: float = 10.0  # a ping unanswered this long drops the seat
    # chat: a token bucket per seat
    chat_burst: int = 5
    chat_per_second: float = 0.5
    # passwords: free tries, then a doubling wait, then a lockout (per address and per key)
    password_free_tries: int = 5
    password_first_wait: float = 1.0
    password_max_wait: float = 30.0
    password_lockout_after: int = 20
    password_lockout: float = 600.0


class TokenBucket:
    """``burst`` tokens, refilled at ``per_second``; a message takes one or is refused."""

    def __init__(self, burst: int, per_second: float, now: float) -> None:
        self.burst = burst
        self.per_second = per_second
        self.tokens = float(burst)
        self.updated = now

    def take(self, now: float) -> bool:
        elapsed = max(0.0, now - self.updated)
        self.tokens = min(float(self.burst), self.tokens + elapsed * self.per_second)
        self.updated = now
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True

    def wait(self) -> float:
        """Seconds until the next token (0 if one is there)."""
        return max(0.0, (1.0 - self.tokens) / self.per_second) if self.per_second else 0.0


def is_chat(act: bytes) -> bool:
    """Whether a signed seat message says it is a chat (the table checks everything else)."""
    try:
        fields = msgpack.unpackb(act, raw=False, max_bin_len=MAX_ACT_SIZE, max_str_len=MAX_ACT_SIZE)
    except (ValueError, TypeError, msgpack.UnpackException):
        return False
    return isinstance(fields, dict) and fields.get("type") == "chat"


@dataclass
class _Failures:
    count: int = 0
    last: float = 0.0


@dataclass(frozen=True)
class Refusal:
    """Why an attempt is refused now: a code and a sentence for the peer."""

    code: str
    text: str


class PasswordGuard:
    """Wrong passwords per address and per key: after a few free tries each further try must wait
    twice as long as the one before (up to ``password_max_wait``), and after
    ``password_lockout_after`` wrong ones the address or key is locked out for a long while.
    A right password clears the key's and the address's record."""

    MAX_TRACKED: Final = 4096  # addresses and keys remembered (the oldest are forgotten)

    def __init__(self, limits: HostLimits) -> None:
        self.limits = limits
        self.failures: OrderedDict[object, _Failures] = OrderedDict()

    def _wait_after(self, count: int) -> float:
        limits = self.limits
        if count >= limits.password_lockout_after:
            return limits.password_lockout
        if count < limits.password_free_tries:
            return 0.0
        extra = count - limits.password_free_tries
        return float(min(limits.password_max_wait, limits.password_first_wait * 2**extra))

    def check(self, now: float, *who: object) -> Refusal | None:
        """Whether ``who`` (an address, a key) may try a password now."""
        for party in who:
            record = self.failures.get(party)
            if record is None:
                continue
            left = record.last + self._wait_after(record.count) - now
            if left <= 0:
                continue
            if record.count >= self.limits.password_lockout_after:
                return Refusal(
                    LOCKED_OUT, f"{record.count} wrong passwords: locked out for {left:.0f} s"
                )
            return Refusal(
                RATE_LIMITED, f"{record.count} wrong passwords: try again in {left:.1f} s"
            )
        return None

    def failed(self, now: float, *who: object) -> None:
        for party in who:
            record = self.failures.pop(party, None) or _Failures()
            record.count += 1
            record.last = now
            self.failures[party] = record
        while len(self.failures) > self.MAX_TRACKED:
            self.failures.popitem(last=False)

    def succeeded(self, *who: object) -> None:
        for party in who:
            self.failures.pop(party, None)


C = TypeVar("C")


@dataclass
class UnauthenticatedBudget(Generic[C]):
    """The connections that have no seat yet, oldest first, and the bytes their partial frames
    hold. A connection beyond the budget (in total, or for its address) makes room by evicting
    the oldest one (of that address, if the address is at its share): a newcomer is never turned
    away, so a seated player's reconnect always gets in, while any one stalled connection lives at
    most until ``max_unauthenticated`` newer ones arrive (or its timeout)."""

    limits: HostLimits
    connections: OrderedDict[C, str] = field(default_factory=OrderedDict)  # -> its address
    held: dict[C, int] = field(default_factory=dict)  # bytes of partial frames, by connection
    held_total: int = 0

    def admit(self, conn: C, address: str) -> list[tuple[C, str]]:
        """Count ``conn`` in; the connections to evict to make room, each with why."""
        evicted: list[tuple[C, str]] = []
        same = [c for c, a in self.connections.items() if a == address]
        if len(same) >= self.limits.max_unauthenticated_per_address:
            evicted.append((same[0], "too many unauthenticated connections from its address"))
            self.release(same[0])
        if len(self.connections) >= self.limits.max_unauthenticated:
            oldest = next(iter(self.connections))
            evicted.append((oldest, "too many unauthenticated connections"))
            self.release(oldest)
        self.connections[conn] = address
        return evicted

    def hold(self, conn: C, size: int) -> bool:
        """``conn`` now holds ``size`` bytes of partial frames: False if that is over budget."""
        if conn not in self.connections:
            return True
        self.held_total += size - self.held.get(conn, 0)
        self.held[conn] = size
        return self.held_total <= self.limits.max_unauthenticated_bytes

    def release(self, conn: C) -> None:
        """``conn`` was given a seat or closed."""
        self.connections.pop(conn, None)
        self.held_total -= self.held.pop(conn, 0)

    def __contains__(self, conn: object) -> bool:
        return conn in self.connections

    def __len__(self) -> int:
        return len(self.connections)


class HandshakeGate(Generic[C]):
    """New connections' TLS handshakes, at most ``handshake_burst`` at once and then
    ``handshakes_per_second``: each handshake costs the reactor, which serves the seated players,
    a few milliseconds, and a password guesser pays one per guess. A connection beyond the rate
    waits its turn unread, in the order they came, so nobody is turned away here: a seated
    player's reconnect (known only after its handshake) waits at most its queue's length over the
    rate. The queue is bounded by :class:`UnauthenticatedBudget` (each waiting connection is one
    of its connections and is dropped from here when evicted or closed)."""

    def __init__(self, limits: HostLimits, now: float) -> None:
        self.bucket = TokenBucket(limits.handshake_burst, limits.handshakes_per_second, now)
        self.waiting: deque[C] = deque()

    def arrive(self, conn: C, now: float) -> bool:
        """Whether ``conn`` may start its handshake now; if not, it waits for ``due``."""
        if not self.waiting and self.bucket.take(now):
            return True
        self.waiting.append(conn)
        return False

    def due(self, now: float) -> list[C]:
        """The waiting connections whose turn has come (in the order they came)."""
        turn: list[C] = []
        while self.waiting and self.bucket.take(now):
            turn.append(self.waiting.popleft())
        return turn

    def wait(self) -> float | None:
        """Seconds until the next waiting connection's turn; None if none waits."""
        return self.bucket.wait() if self.waiting else None

    def discard(self, conn: C) -> None:
        """``conn`` closed (or was evicted) while it waited."""
        if conn in self.waiting:
            self.waiting.remove(conn)
