"""LAN discovery: a UDP beacon announcing a table, a listener that collects them, a directory.

A host announces its table every :data:`DEFAULT_INTERVAL` seconds with a small datagram (a
*beacon*, see ``docs/discovery.md`` for the byte format): table name, variant, seats, free seats,
TCP port, the host's fingerprint, the table id, the wire protocol versions it speaks and the deal
mode. ``canasta tables`` listens for a few seconds and lists what it heard; ``canasta join`` can
pick a table from that list.

Beacons are **hints**. Anyone on the LAN can send one, with any content. The listener records the
IP address the datagram came *from* (a beacon never carries an address of its own), and a joiner
connects to that address and the announced port, then checks over TLS that the host holds the key
of the announced fingerprint (:mod:`canasta_net.tls`). A forged beacon can waste a joiner's time,
never impersonate a host whose fingerprint the player checks.

The codec (:func:`encode_beacon`, :func:`decode_beacon`) and :class:`TableDirectory` are sans-io;
:class:`BeaconAnnouncer` and :class:`BeaconListener` are the Twisted datagram protocols, and
:func:`start_announcing` / :func:`listen_for_tables` the helpers the command line uses.
"""

from __future__ import annotations

import ipaddress
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, cast

import msgpack
from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IReactorTime
from twisted.internet.protocol import DatagramProtocol
from twisted.internet.task import LoopingCall, deferLater
from twisted.logger import Logger

from ..safe_text import safe_text
from ..schema import Bytes, Int, Map, Schema, SchemaError, Text, Tuple, validate
from .wire import PROTOCOL_MAX, PROTOCOL_MIN

__all__ = [
    "BEACON_VERSION",
    "BROADCAST_ADDRESS",
    "DEFAULT_INTERVAL",
    "DEFAULT_SCAN_SECONDS",
    "DEFAULT_TTL",
    "DISCOVERY_PORT",
    "MAGIC",
    "MAX_DATAGRAM_SIZE",
    "MAX_TABLES",
    "Beacon",
    "BeaconAnnouncer",
    "BeaconError",
    "BeaconListener",
    "DiscoveryReactor",
    "ListeningPort",
    "TableChoiceError",
    "TableDirectory",
    "TableEntry",
    "UnsupportedBeaconVersion",
    "decode_beacon",
    "encode_beacon",
    "format_tables",
    "is_broadcast_address",
    "listen_for_tables",
    "pick_table",
    "start_announcing",
]

# ---- constants (documented in docs/discovery.md) ---------------------------------------------

DISCOVERY_PORT: Final = 47474
"""The UDP port listeners bind and announcers send to."""
BROADCAST_ADDRESS: Final = "255.255.255.255"
"""The default target of an announcer (the limited broadcast address: this link only)."""
BEACON_VERSION: Final = 1
MAGIC_PREFIX: Final = b"CNB"
MAGIC: Final = MAGIC_PREFIX + str(BEACON_VERSION).encode("ascii")  # b"CNB1"
MAX_DATAGRAM_SIZE: Final = 1200
"""The largest datagram accepted (or sent): fits an IPv4 or IPv6 packet without fragmenting."""
DEFAULT_INTERVAL: Final = 2.0
"""Seconds between two beacons of an announcer."""
DEFAULT_TTL: Final = 6.0
"""A table not heard for longer than this (three beacon intervals) is dropped from a directory."""
DEFAULT_SCAN_SECONDS: Final = 3.0
"""How long ``canasta tables`` listens by default: more than one beacon interval."""
MAX_TABLES: Final = 256
"""A directory holds at most this many tables; the one heard least recently is evicted."""

MAX_NAME_CHARS: Final = 64
MAX_VARIANT_CHARS: Final = 32
MAX_SEATS: Final = 16
MIN_TABLE_ID_BYTES: Final = 1
MAX_TABLE_ID_BYTES: Final = 64
MAX_PROTOCOL: Final = 65535

_FINGERPRINT_RE: Final = re.compile(r"[a-z2-7]{4}(?:-[a-z2-7]{4}){7}")
_TABLE_ID_RE: Final = re.compile(r"(?:[0-9a-f]{2}){1,64}")  # 1 to 64 bytes, as hex
_DEAL_MODE_RE: Final = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,31})")

_log = Logger()


class BeaconError(ValueError):
    """A datagram is not a valid canasta-net beacon (or a beacon's fields are out of range)."""


class UnsupportedBeaconVersion(BeaconError):
    """A beacon of a format version this code does not read (``CNB2``...): from a newer peer."""

    def __init__(self, version: int) -> None:
        super().__init__(f"beacon format version {version} is not supported")
        self.version = version


class TableChoiceError(LookupError):
    """``pick_table`` found no table, or more than one, for what the player typed."""


# ---- the beacon ------------------------------------------------------------------------------


def _check(schema: Schema, value: object, what: str) -> Any:
    try:
        return validate(schema, value, what)
    except SchemaError as e:
        raise BeaconError(str(e)) from None


_TABLE_NAME: Final = Text(MAX_NAME_CHARS, min_len=1, printable=True)
_VARIANT: Final = Text(MAX_VARIANT_CHARS, min_len=1, printable=True)
_SEATS: Final = Int(1, MAX_SEATS)
_PORT: Final = Int(1, 65535)
_PROTOCOL: Final = Int(1, MAX_PROTOCOL)
_FINGERPRINT: Final = Text(
    pattern=_FINGERPRINT_RE, means="a canonical canasta-net fingerprint (8 groups of 4 of a-z2-7)"
)
_TABLE_ID_HEX: Final = Text(
    pattern=_TABLE_ID_RE,
    means=f"{MIN_TABLE_ID_BYTES} to {MAX_TABLE_ID_BYTES} bytes in lower-case hex",
)
_DEAL_MODE: Final = Text(pattern=_DEAL_MODE_RE, means="1 to 32 of a-z, 0-9 and '-'")
#: A beacon's body (docs/discovery.md); free seats and the protocol range are checked against
#: each other when the beacon is built.
_BODY: Final = Map(
    {
        "name": _TABLE_NAME,
        "variant": _VARIANT,
        "seats": _SEATS,
        "free": Int(0, MAX_SEATS),
        "port": _PORT,
        "fp": _FINGERPRINT,
        "table": Bytes(MAX_TABLE_ID_BYTES, min_len=MIN_TABLE_ID_BYTES),
        "proto": Tuple(_PROTOCOL, _PROTOCOL),
        "deal": _DEAL_MODE,
    }
)


@dataclass(frozen=True)
class Beacon:
    """One table's announcement. Constructing a beacon validates it (:class:`BeaconError`).

    ``table_id`` is the table id in lower-case hex. ``host_fingerprint`` is the host's
    fingerprint in canonical form (:func:`canasta_net.identity.fingerprint`). ``sender`` is never
    sent: :func:`decode_beacon` sets it to the IP address the datagram came from.
    """

    table_name: str
    variant: str
    seats: int
    free_seats: int
    port: int
    host_fingerprint: str
    table_id: str
    protocol_versions: tuple[int, int] = (PROTOCOL_MIN, PROTOCOL_MAX)
    deal_mode: str = "commit-reveal"
    version: int = BEACON_VERSION
    sender: str | None = None

    def __post_init__(self) -> None:
        if self.version != BEACON_VERSION:
            raise UnsupportedBeaconVersion(self.version)
        _check(_TABLE_NAME, self.table_name, "table name")
        _check(_VARIANT, self.variant, "variant")
        seats = _check(_SEATS, self.seats, "seats")
        _check(Int(0, seats), self.free_seats, "free seats")
        _check(_PORT, self.port, "port")
        _check(_FINGERPRINT, self.host_fingerprint, "host fingerprint")
        _check(_TABLE_ID_HEX, self.table_id, "table id")
        versions = self.protocol_versions
        if type(versions) is not tuple or len(versions) != 2:
            raise BeaconError("protocol versions: not a (min, max) pair")
        low = _check(_PROTOCOL, versions[0], "protocol min")
        _check(Int(low, MAX_PROTOCOL), versions[1], "protocol max")
        _check(_DEAL_MODE, self.deal_mode, "deal mode")
        if self.sender is not None and type(self.sender) is not str:
            raise BeaconError("sender: not text")

    @property
    def table_id_bytes(self) -> bytes:
        return bytes.fromhex(self.table_id)

    def supports(self, protocol: int) -> bool:
        """Whether the host says it speaks wire protocol version ``protocol``."""
        low, high = self.protocol_versions
        return low <= protocol <= high


def encode_beacon(beacon: Beacon) -> bytes:
    """The datagram for ``beacon``: ``b"CNB1"`` then one msgpack map (``sender`` is not sent)."""
    body = {
        "name": beacon.table_name,
        "variant": beacon.variant,
        "seats": beacon.seats,
        "free": beacon.free_seats,
        "port": beacon.port,
        "fp": beacon.host_fingerprint,
        "table": beacon.table_id_bytes,
        "proto": list(beacon.protocol_versions),
        "deal": beacon.deal_mode,
    }
    packed: bytes = msgpack.packb(body, use_bin_type=True)
    data = MAGIC + packed
    if len(data) > MAX_DATAGRAM_SIZE:  # cannot happen within the field limits; kept as a guard
        raise BeaconError(f"beacon is {len(data)} bytes, over {MAX_DATAGRAM_SIZE}")
    return data


def _sender_ip(source_address: str | tuple[object, ...]) -> str:
    if isinstance(source_address, str):
        host: object = source_address
    else:
        host = source_address[0] if source_address else None
    if not isinstance(host, str):
        raise BeaconError(f"source address {source_address!r} has no IP address")
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        raise BeaconError(f"source address {host!r} is not an IP address") from None


def decode_beacon(data: bytes, source_address: str | tuple[object, ...]) -> Beacon:
    """Read and validate a datagram received from ``source_address`` (Twisted's ``addr``).

    Raise :class:`BeaconError` (and nothing else) unless ``data`` is a valid beacon: at most
    :data:`MAX_DATAGRAM_SIZE` bytes, the magic, one msgpack map holding every known field with its
    type and range; unknown fields are ignored. The beacon's ``sender`` is the source IP address.
    """
    sender = _sender_ip(source_address)
    if not isinstance(data, bytes):
        raise BeaconError("datagram is not bytes")
    if len(data) > MAX_DATAGRAM_SIZE:
        raise BeaconError(f"datagram of {len(data)} bytes, over {MAX_DATAGRAM_SIZE}")
    if len(data) < len(MAGIC) or not data.startswith(MAGIC_PREFIX):
        raise BeaconError("not a canasta-net beacon")
    if data[3:4] != MAGIC[3:4]:
        if b"0"[0] <= data[3] <= b"9"[0]:
            raise UnsupportedBeaconVersion(data[3] - b"0"[0])
        raise BeaconError("not a canasta-net beacon")
    payload = data[len(MAGIC) :]
    limit = MAX_DATAGRAM_SIZE
    try:
        body = msgpack.unpackb(
            payload,
            raw=False,
            use_list=True,
            strict_map_key=True,
            max_str_len=limit,
            max_bin_len=limit,
            max_array_len=limit,
            max_map_len=limit,
            max_ext_len=limit,
        )
    except Exception as e:  # any failure of the third-party decoder means "not a beacon"
        raise BeaconError(f"beacon body is not msgpack ({type(e).__name__})") from None
    _check(_BODY, body, "beacon")
    try:
        return Beacon(
            table_name=body["name"],
            variant=body["variant"],
            seats=body["seats"],
            free_seats=body["free"],
            port=body["port"],
            host_fingerprint=body["fp"],
            table_id=body["table"].hex(),
            protocol_versions=(body["proto"][0], body["proto"][1]),
            deal_mode=body["deal"],
            sender=sender,
        )
    except BeaconError:
        raise
    except Exception as e:  # a defence: validation is meant to raise BeaconError only
        raise BeaconError(f"invalid beacon ({type(e).__name__})") from None


# ---- the directory (sans-io) -------------------------------------------------------------------


@dataclass(frozen=True)
class TableEntry:
    """A table as heard: the latest beacon, the sender's IP address, when it was heard."""

    beacon: Beacon
    address: str
    first_heard: float
    last_heard: float

    @property
    def port(self) -> int:
        return self.beacon.port

    @property
    def endpoint(self) -> tuple[str, int]:
        """Where to connect to join: the sender's IP address and the announced TCP port."""
        return (self.address, self.beacon.port)

    @property
    def fingerprint(self) -> str:
        """The fingerprint the host claims: verify it over TLS, and show it to the player."""
        return self.beacon.host_fingerprint

    def sort_key(self) -> tuple[str, str, str, int]:
        name = self.beacon.table_name
        return (name.casefold(), name, self.address, self.beacon.port)


@dataclass
class TableDirectory:
    """The tables heard recently, keyed by (sender address, announced port); sans-io.

    ``now`` is any monotonic-ish clock in seconds (a reactor's ``seconds()``). A table not heard
    for more than ``ttl`` seconds is dropped; when ``max_entries`` tables are known, a new one
    evicts the table heard least recently.
    """

    ttl: float = DEFAULT_TTL
    max_entries: int = MAX_TABLES
    evicted: int = 0
    _entries: OrderedDict[tuple[str, int], TableEntry] = field(
        default_factory=OrderedDict, init=False, repr=False
    )

    def __post_init__(self) -> None:
        if self.ttl <= 0 or self.max_entries < 1:
            raise ValueError("a directory needs a positive ttl and room for one table")

    def __len__(self) -> int:
        return len(self._entries)

    def add(self, beacon: Beacon, sender: str, now: float) -> TableEntry:
        """Record ``beacon`` heard from IP address ``sender`` at ``now``; return its entry."""
        key = (sender, beacon.port)
        old = self._entries.pop(key, None)
        if old is None:
            self.expire(now)
            while len(self._entries) >= self.max_entries:
                self._entries.popitem(last=False)
                self.evicted += 1
        entry = TableEntry(beacon, sender, now if old is None else old.first_heard, now)
        self._entries[key] = entry  # moved to the end: the most recently heard
        return entry

    def expire(self, now: float) -> list[TableEntry]:
        """Drop (and return) the tables not heard for more than ``ttl`` seconds before ``now``."""
        gone = [e for e in self._entries.values() if now - e.last_heard > self.ttl]
        for entry in gone:
            del self._entries[(entry.address, entry.beacon.port)]
        return gone

    def tables(self, now: float) -> list[TableEntry]:
        """The live tables at ``now``, sorted by table name, then address and port."""
        self.expire(now)
        return sorted(self._entries.values(), key=TableEntry.sort_key)


# ---- Twisted glue ----------------------------------------------------------------------------


class ListeningPort(Protocol):
    """What this module uses of ``IListeningPort`` (a UDP port)."""

    def stopListening(self) -> Deferred[None] | None: ...

    def getHost(self) -> Any: ...


class DiscoveryReactor(Protocol):
    """What this module uses of a reactor: ``IReactorUDP`` and ``IReactorTime``.

    The global reactor provides both; with mypy, pass it as ``cast(DiscoveryReactor, reactor)``.
    """

    def listenUDP(
        self, port: int, protocol: DatagramProtocol, interface: str = ..., maxPacketSize: int = ...
    ) -> ListeningPort: ...

    def seconds(self) -> float: ...

    def callLater(
        self, delay: float, callable: Callable[..., Any], *args: Any, **kw: Any
    ) -> Any: ...


class _Clock(Protocol):
    def seconds(self) -> float: ...


class _UDPTransport(Protocol):
    def write(self, datagram: bytes, addr: tuple[str, int] | None = None) -> None: ...

    def setBroadcastAllowed(self, enabled: bool) -> None: ...


def _default_reactor() -> DiscoveryReactor:
    from twisted.internet import reactor

    return cast(DiscoveryReactor, reactor)


def is_broadcast_address(host: str) -> bool:
    """Whether ``host`` is the limited broadcast address 255.255.255.255.

    A subnet's directed broadcast address (192.168.1.255 on a /24) cannot be told from a host
    address without the netmask: pass ``broadcast=True`` to the announcer for one.
    """
    try:
        return ipaddress.ip_address(host) == ipaddress.IPv4Address(BROADCAST_ADDRESS)
    except ValueError:
        return False


class BeaconAnnouncer(DatagramProtocol):
    """Sends ``current()`` to ``target`` every ``interval`` seconds while connected to a port.

    ``current`` is called for every beacon (free seats change); it may return None to skip one.
    Sending starts when the protocol is started on a port (at once, then every ``interval``) and
    stops when the port stops listening. SO_BROADCAST is set only for a broadcast target
    (:func:`is_broadcast_address`, or ``broadcast=True``). Errors never stop the announcer: a
    failed send (no network yet) is counted in ``errors`` and logged.
    """

    noisy = False

    def __init__(
        self,
        current: Callable[[], Beacon | None],
        target: tuple[str, int] = (BROADCAST_ADDRESS, DISCOVERY_PORT),
        *,
        interval: float = DEFAULT_INTERVAL,
        clock: IReactorTime | _Clock | None = None,
        broadcast: bool | None = None,
    ) -> None:
        host, port = target
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise ValueError(f"the beacon target must be an IP address, not {host!r}") from None
        if not 0 < port < 65536:
            raise ValueError(f"bad beacon target port {port}")
        if not interval > 0:
            raise ValueError("the beacon interval must be positive")
        self.current = current
        self.target = (host, port)
        self.interval = interval
        self.broadcast = is_broadcast_address(host) if broadcast is None else broadcast
        self.sent = 0
        self.errors = 0
        self._clock = clock
        self._loop: LoopingCall | None = None

    def startProtocol(self) -> None:
        transport = cast(_UDPTransport, self.transport)
        if self.broadcast:
            transport.setBroadcastAllowed(True)
        loop = LoopingCall(self.announce)
        loop.clock = cast(IReactorTime, self._clock or _default_reactor())
        self._loop = loop
        loop.start(self.interval, now=True).addErrback(
            lambda failure: _log.failure("beacon loop failed", failure)
        )

    def stopProtocol(self) -> None:
        loop, self._loop = self._loop, None
        if loop is not None and loop.running:
            loop.stop()

    @property
    def running(self) -> bool:
        return self._loop is not None and self._loop.running

    def announce(self) -> bool:
        """Send the current beacon now; True if one was sent."""
        transport = cast(_UDPTransport | None, self.transport)
        if transport is None:
            return False
        try:
            beacon = self.current()
            if beacon is None:
                return False
            transport.write(encode_beacon(beacon), self.target)
        except Exception:
            self.errors += 1
            _log.failure("could not send a table beacon to {target}", target=self.target)
            return False
        self.sent += 1
        return True


class BeaconListener(DatagramProtocol):
    """Collects the beacons it receives into ``directory``; never raises on a bad datagram.

    Counters: ``received`` (every datagram), ``malformed`` (not a valid beacon, ignored),
    ``unsupported`` (a beacon of a newer format version, ignored); ``last_error`` says why the last
    datagram was refused. ``on_entry`` (optional) is called with each accepted beacon's entry.
    """

    noisy = False

    def __init__(
        self,
        directory: TableDirectory | None = None,
        *,
        clock: IReactorTime | _Clock | None = None,
        on_entry: Callable[[TableEntry], object] | None = None,
    ) -> None:
        self.directory = TableDirectory() if directory is None else directory
        self.on_entry = on_entry
        self.received = 0
        self.malformed = 0
        self.unsupported = 0
        self.last_error: str | None = None
        self._clock = clock

    def _now(self) -> float:
        clock: _Clock = self._clock or _default_reactor()
        return clock.seconds()

    def datagramReceived(self, datagram: bytes, addr: Any) -> None:
        self.received += 1
        try:
            beacon = decode_beacon(datagram, addr)
        except UnsupportedBeaconVersion as e:
            self.unsupported += 1
            self.last_error = str(e)
            return
        except BeaconError as e:
            self.malformed += 1
            self.last_error = str(e)
            return
        assert beacon.sender is not None
        entry = self.directory.add(beacon, beacon.sender, self._now())
        if self.on_entry is not None:
            try:
                self.on_entry(entry)
            except Exception:
                _log.failure("table listener callback failed")

    def tables(self) -> list[TableEntry]:
        """The live tables now."""
        return self.directory.tables(self._now())


def start_announcing(
    reactor: DiscoveryReactor,
    current: Callable[[], Beacon | None],
    *,
    target: tuple[str, int] = (BROADCAST_ADDRESS, DISCOVERY_PORT),
    interval: float = DEFAULT_INTERVAL,
    interface: str = "",
    broadcast: bool | None = None,
) -> ListeningPort:
    """Announce from an ephemeral UDP port on ``interface``; ``stopListening()`` ends it."""
    announcer = BeaconAnnouncer(
        current, target, interval=interval, clock=reactor, broadcast=broadcast
    )
    return reactor.listenUDP(0, announcer, interface=interface)


async def _stop(port: ListeningPort) -> None:
    stopped = port.stopListening()
    if stopped is not None:
        await stopped


def listen_for_tables(
    reactor: DiscoveryReactor,
    port: int = DISCOVERY_PORT,
    seconds: float = DEFAULT_SCAN_SECONDS,
    interface: str = "",
    *,
    listener: BeaconListener | None = None,
) -> Deferred[list[TableEntry]]:
    """Listen on UDP ``port`` for ``seconds``, then stop and fire with the tables heard.

    The port is bound at once (so ``listener.transport.getHost()`` is known on return when a
    ``listener`` is passed); binding errors (``CannotListenError``: another listener on this
    machine) fail the Deferred. Cancelling the Deferred stops listening.
    """
    if seconds < 0:
        raise ValueError("seconds must not be negative")
    scan = BeaconListener(clock=reactor) if listener is None else listener

    async def run() -> list[TableEntry]:
        listening = reactor.listenUDP(port, scan, interface=interface)
        try:
            await deferLater(cast(IReactorTime, reactor), seconds)
        finally:
            await _stop(listening)
        return scan.directory.tables(reactor.seconds())

    return Deferred.fromCoroutine(run())


# ---- display and choice ----------------------------------------------------------------------


def format_tables(entries: Sequence[TableEntry], *, protocol: int | None = None) -> str:
    """A numbered, aligned listing for ``canasta tables``; numbers are for :func:`pick_table`.

    With ``protocol`` (this peer's wire protocol version), a table whose host does not speak it
    is marked. A full table is marked ``full``.
    """
    if not entries:
        return "No tables heard."
    header = ("#", "TABLE", "VARIANT", "FREE", "DEAL", "ADDRESS", "HOST FINGERPRINT", "NOTE")
    rows: list[tuple[str, ...]] = []
    for number, entry in enumerate(entries, start=1):
        b = entry.beacon
        notes = []
        if b.free_seats == 0:
            notes.append("full")
        if protocol is not None and not b.supports(protocol):
            low, high = b.protocol_versions
            notes.append(f"needs protocol {low}" + (f"-{high}" if high != low else ""))
        host = f"[{entry.address}]" if ":" in entry.address else entry.address
        rows.append(
            (
                str(number),
                safe_text(b.table_name),
                safe_text(b.variant),
                f"{b.free_seats}/{b.seats}",
                b.deal_mode,
                f"{host}:{b.port}",
                b.host_fingerprint,
                ", ".join(notes),
            )
        )
    columns = len(header) if any(row[-1] for row in rows) else len(header) - 1
    table = [header[:columns], *(row[:columns] for row in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(columns)]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in table
    ]
    return "\n".join(line.rstrip() for line in lines)


def pick_table(entries: Sequence[TableEntry], choice: str) -> TableEntry:
    """The table the player means by ``choice``, in the list as shown by :func:`format_tables`.

    ``choice`` is a number from that listing, a table name (case-insensitive), or the start (at
    least 4 characters) of a table id or of a host fingerprint. Raise :class:`TableChoiceError`
    when nothing, or more than one table, matches.
    """
    text = choice.strip()
    if not text:
        raise TableChoiceError("no table chosen")
    if text.isascii() and text.isdigit():
        number = int(text)
        if not 1 <= number <= len(entries):
            raise TableChoiceError(f"no table number {number} (1 to {len(entries)})")
        return entries[number - 1]
    folded = text.casefold()
    named = [e for e in entries if e.beacon.table_name.casefold() == folded]
    if not named and len(text) >= 4:
        prefix = text.lower()
        named = [
            e
            for e in entries
            if e.beacon.table_id.startswith(prefix) or e.fingerprint.startswith(prefix)
        ]
    return _only(named, text)


def _only(matches: Iterable[TableEntry], text: str) -> TableEntry:
    found = list(matches)
    if not found:
        raise TableChoiceError(f"no table matches {text!r}")
    if len(found) > 1:
        raise TableChoiceError(f"{len(found)} tables match {text!r}: choose by number")
    return found[0]
