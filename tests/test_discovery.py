"""LAN discovery: the beacon codec, the directory, the announcer and listener, over loopback only.

Every datagram these tests send goes to 127.0.0.1 (or to an in-memory fake transport): nothing
is broadcast and nothing is bound to 0.0.0.0.
"""

from __future__ import annotations

import dataclasses
import io
import re
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import msgpack
import pytest
import pytest_twisted
from hypothesis import given, settings
from hypothesis import strategies as st
from twisted.internet import address, defer, reactor, task, udp
from twisted.internet.error import CannotListenError
from twisted.internet.interfaces import IListeningPort, IUDPTransport
from twisted.internet.protocol import DatagramProtocol
from zope.interface import implementer

from canasta_net.canasta.rules import preset
from canasta_net.identity import Identity, fingerprint
from canasta_net.net.discovery import (
    BEACON_VERSION,
    BROADCAST_ADDRESS,
    DEFAULT_INTERVAL,
    DEFAULT_TTL,
    DISCOVERY_PORT,
    MAGIC,
    MAX_DATAGRAM_SIZE,
    Beacon,
    BeaconAnnouncer,
    BeaconError,
    BeaconListener,
    DiscoveryReactor,
    TableChoiceError,
    TableDirectory,
    TableEntry,
    UnsupportedBeaconVersion,
    decode_beacon,
    encode_beacon,
    format_tables,
    is_broadcast_address,
    listen_for_tables,
    pick_table,
    start_announcing,
)
from canasta_net.net.host import TableConfig, TableService
from canasta_net.ui.app import HostedTable
from canasta_net.ui.cli import _start_announcer

LOOPBACK = "127.0.0.1"
DOC = Path(__file__).resolve().parent.parent / "docs" / "discovery.md"
FP = fingerprint(Identity.from_seed(b"discovery host").public_key)
OTHER_FP = fingerprint(Identity.from_seed(b"another host").public_key)
SOURCE = ("192.168.1.20", 50123)
# the global reactor as discovery uses it: its IReactorUDP and IReactorTime
udp_reactor = cast(DiscoveryReactor, reactor)


def make_beacon(**changes: Any) -> Beacon:
    fields: dict[str, Any] = {
        "table_name": "Kitchen table",
        "variant": "classic",
        "seats": 4,
        "free_seats": 3,
        "port": 47475,
        "host_fingerprint": FP,
        "table_id": "00112233445566778899aabbccddeeff",
    }
    return Beacon(**(fields | changes))


def body_of(beacon: Beacon) -> dict[str, Any]:
    body: dict[str, Any] = msgpack.unpackb(encode_beacon(beacon)[len(MAGIC) :], raw=False)
    return body


def datagram(body: dict[Any, Any]) -> bytes:
    packed: bytes = msgpack.packb(body, use_bin_type=True)
    return MAGIC + packed


# ---- codec ------------------------------------------------------------------------------------


def test_round_trip_records_the_sender_not_a_claimed_address() -> None:
    beacon = make_beacon(protocol_versions=(1, 3), deal_mode="commit-reveal")
    data = encode_beacon(beacon)
    assert data.startswith(b"CNB1")
    assert len(data) <= MAX_DATAGRAM_SIZE
    heard = decode_beacon(data, SOURCE)
    assert heard == dataclasses.replace(beacon, sender="192.168.1.20")
    assert heard.version == BEACON_VERSION
    assert heard.table_id_bytes == bytes.fromhex("00112233445566778899aabbccddeeff")
    assert heard.supports(2) and not heard.supports(4)
    assert "sender" not in body_of(dataclasses.replace(beacon, sender="10.0.0.1"))


def test_the_source_address_may_be_a_string_and_is_normalized() -> None:
    data = encode_beacon(make_beacon())
    assert decode_beacon(data, "::ffff:7f00:1").sender == "::ffff:7f00:1"
    assert decode_beacon(data, ("0:0:0:0:0:0:0:1", 1, 0, 0)).sender == "::1"
    bad_sources: list[str | tuple[object, ...]] = [("not-an-ip", 1), (), (None, 1), ""]
    for bad in bad_sources:
        with pytest.raises(BeaconError):
            decode_beacon(data, bad)


def test_doc_test_vector_matches_the_code() -> None:
    text = DOC.read_text(encoding="utf-8")
    match = re.search(r"<!-- test-vector[^>]*-->\s*```\n(.*?)```", text, re.S)
    assert match, "the test vector block is missing from docs/discovery.md"
    values: dict[str, str] = {}
    for line in match.group(1).splitlines():
        key, _, value = line.partition("=")
        if value:
            values[key.strip()] = value.strip()
        else:
            values["datagram"] += line.strip()  # continuation lines of the hex datagram
    expected = Beacon(
        table_name=values["name"].strip('"'),
        variant=values["variant"].strip('"'),
        seats=int(values["seats"]),
        free_seats=int(values["free"]),
        port=int(values["port"]),
        host_fingerprint=values["fp"].strip('"'),
        table_id=values["table"],
        protocol_versions=(int(values["proto"].split(",")[0]), int(values["proto"].split(",")[1])),
        deal_mode=values["deal"].strip('"'),
    )
    data = bytes.fromhex(values["datagram"])
    assert encode_beacon(expected) == data
    assert decode_beacon(data, (LOOPBACK, 1)) == dataclasses.replace(expected, sender=LOOPBACK)


def test_unknown_fields_are_ignored_and_key_order_is_free() -> None:
    body: dict[Any, Any] = body_of(make_beacon())  # a msgpack map: its keys may be bytes too
    body["future"] = {"anything": [1, 2.5, None, b"x"]}
    body[b"bytes key"] = 1
    reordered = dict(reversed(list(body.items())))
    assert decode_beacon(datagram(reordered), SOURCE) == decode_beacon(
        encode_beacon(make_beacon()), SOURCE
    )


def test_a_newer_format_version_is_told_apart() -> None:
    body = encode_beacon(make_beacon())[len(MAGIC) :]
    with pytest.raises(UnsupportedBeaconVersion) as caught:
        decode_beacon(b"CNB2" + body, SOURCE)
    assert caught.value.version == 2
    with pytest.raises(UnsupportedBeaconVersion):
        make_beacon(version=2)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"CNB",
        b"CNB1",
        b"XNB1\x80",
        b"CNBx\x80",
        b"CNB1\xc1",  # a reserved msgpack byte
        b"CNB1\x80",  # an empty map
        b"CNB1\x90",  # not a map
        b"CNB1" + b"\x91" * 1100,  # deep nesting
        b"CNB1\x81\x01\x02",  # an integer key
        b"CNB1\xd4\xff\x00",  # a timestamp extension of a bad length
        b"CNB1\x81\xa1x\xc7\x03\xff\x00\x00\x00",  # the same, as an unknown field's value
        b"CNB1\x81\xa1x\xd5\x05\x00\x00",  # an extension type, as an unknown field's value
    ],
)
def test_garbage_is_refused(data: bytes) -> None:
    with pytest.raises(BeaconError):
        decode_beacon(data, SOURCE)


def test_oversized_and_trailing_data_are_refused() -> None:
    good = encode_beacon(make_beacon())
    with pytest.raises(BeaconError, match="over 1200"):
        decode_beacon(good + b"\x00" * (MAX_DATAGRAM_SIZE - len(good) + 1), SOURCE)
    with pytest.raises(BeaconError):
        decode_beacon(good + b"\x00", SOURCE)  # extra bytes after the map
    big = body_of(make_beacon())
    big["padding"] = b"\x00" * (MAX_DATAGRAM_SIZE - len(good))
    with pytest.raises(BeaconError, match="over 1200"):
        decode_beacon(datagram(big), SOURCE)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("name", ""),
        ("name", "x" * 65),
        ("name", " padded"),
        ("name", "bell\x07"),
        ("name", "esc\x1b[2J"),
        ("name", "bidi\u202eevil"),
        ("name", "zero\u200bwidth"),
        ("name", "line\u2028sep"),
        ("name", 5),
        ("name", b"bytes"),
        ("variant", "v" * 33),
        ("variant", None),
        ("seats", 0),
        ("seats", 17),
        ("seats", True),
        ("seats", 4.0),
        ("free", 5),
        ("free", -1),
        ("port", 0),
        ("port", 65536),
        ("port", "47475"),
        ("fp", FP.upper()),
        ("fp", FP.replace("-", "")),
        ("fp", FP[:-1] + "1"),
        ("fp", FP + "-aaaa"),
        ("table", b""),
        ("table", b"\x00" * 65),
        ("table", "00112233"),
        ("proto", [1]),
        ("proto", [2, 1]),
        ("proto", [0, 1]),
        ("proto", [1, 65536]),
        ("proto", [1, True]),
        ("proto", {"min": 1, "max": 1}),
        ("deal", "Commit-Reveal"),
        ("deal", "-x"),
        ("deal", "x" * 33),
        ("deal", ""),
    ],
)
def test_each_field_is_checked(key: str, value: Any) -> None:
    body = body_of(make_beacon())
    body[key] = value
    with pytest.raises(BeaconError):
        decode_beacon(datagram(body), SOURCE)


@pytest.mark.parametrize(
    "key", ["name", "variant", "seats", "free", "port", "fp", "table", "proto"]
)
def test_every_field_is_required(key: str) -> None:
    body = body_of(make_beacon())
    del body[key]
    with pytest.raises(BeaconError, match="missing"):
        decode_beacon(datagram(body), SOURCE)


def test_a_beacon_cannot_be_built_invalid() -> None:
    with pytest.raises(BeaconError):
        make_beacon(free_seats=5)
    with pytest.raises(BeaconError):
        make_beacon(table_id="ABCDEF")
    with pytest.raises(BeaconError):
        make_beacon(protocol_versions=[1, 1])
    assert make_beacon(table_name="Ταβλί 🂡", variant="my rules").table_name == "Ταβλί 🂡"


def test_the_largest_beacon_fits_a_datagram() -> None:
    big = make_beacon(
        table_name="\U0001f0a1" * 64,
        variant="\U0001f0a1" * 32,
        seats=16,
        free_seats=16,
        port=65535,
        table_id="ff" * 64,
        protocol_versions=(65535, 65535),
        deal_mode="d" * 32,
    )
    data = encode_beacon(big)
    assert len(data) <= MAX_DATAGRAM_SIZE
    assert decode_beacon(data, SOURCE).table_name == big.table_name


# ---- fuzzing: decode raises BeaconError or returns a valid beacon, nothing else ----------------


def check_decode(data: bytes) -> None:
    try:
        beacon = decode_beacon(data, SOURCE)
    except BeaconError:
        return
    assert decode_beacon(encode_beacon(beacon), SOURCE) == beacon


@given(st.binary(max_size=1400))
def test_fuzz_random_bytes(data: bytes) -> None:
    check_decode(data)


@given(st.binary(max_size=1300))
def test_fuzz_random_bytes_after_the_magic(data: bytes) -> None:
    check_decode(MAGIC + data)


msgpack_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats()
    | st.text(max_size=80)
    | st.binary(max_size=80)
    | st.builds(msgpack.ExtType, st.integers(0, 127), st.binary(max_size=16)),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
field_values = (
    msgpack_values
    | st.integers(min_value=-2, max_value=70000)
    | st.sampled_from([FP, "classic", "commit-reveal", "x", "Name\x00"])
    | st.lists(st.integers(min_value=-1, max_value=3), max_size=3)
    | st.binary(min_size=0, max_size=70)
)
field_names = st.sampled_from(
    ["name", "variant", "seats", "free", "port", "fp", "table", "proto", "deal", "extra"]
)


@given(st.dictionaries(field_names | st.text(max_size=6), field_values, max_size=12))
def test_fuzz_structured_maps(body: dict[str, Any]) -> None:
    check_decode(MAGIC + msgpack.packb(body, use_bin_type=True))


@given(
    st.dictionaries(field_names, field_values, max_size=4),
    st.sampled_from(["name", "variant", "seats", "free", "port", "fp", "table", "proto", "deal"]),
)
def test_fuzz_one_field_of_a_good_beacon(changes: dict[str, Any], removed: str) -> None:
    body = body_of(make_beacon()) | changes
    check_decode(datagram(body))
    body.pop(removed)
    check_decode(datagram(body))


@settings(max_examples=300)
@given(st.data())
def test_fuzz_mutations_of_a_good_datagram(data: st.DataObject) -> None:
    good = bytearray(encode_beacon(make_beacon()))
    for _ in range(data.draw(st.integers(1, 4))):
        position = data.draw(st.integers(0, len(good) - 1))
        good[position] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(good)))
    check_decode(bytes(good[:cut]))
    check_decode(bytes(good))


beacons = st.builds(
    Beacon,
    table_name=st.text(min_size=1, max_size=64).filter(
        lambda s: (
            s == s.strip()
            and not any(unicodedata.category(c) in {"Cc", "Cf", "Cs", "Zl", "Zp"} for c in s)
        )
    ),
    variant=st.sampled_from(["classic", "classic-2p", "vienna", "custom rules"]),
    seats=st.just(6),
    free_seats=st.integers(0, 6),
    port=st.integers(1, 65535),
    host_fingerprint=st.sampled_from([FP, OTHER_FP]),
    table_id=st.binary(min_size=1, max_size=64).map(bytes.hex),
    protocol_versions=st.tuples(st.integers(1, 10), st.integers(10, 65535)),
    deal_mode=st.from_regex(r"[a-z0-9][a-z0-9-]{0,31}", fullmatch=True),
)


@given(beacons)
def test_round_trip_property(beacon: Beacon) -> None:
    data = encode_beacon(beacon)
    assert len(data) <= MAX_DATAGRAM_SIZE
    assert decode_beacon(data, SOURCE) == dataclasses.replace(beacon, sender=SOURCE[0])


# ---- the directory ------------------------------------------------------------------------------


def test_directory_expires_tables_not_heard() -> None:
    clock = task.Clock()
    directory = TableDirectory()
    directory.add(make_beacon(), "10.0.0.1", clock.seconds())
    clock.advance(4)
    directory.add(make_beacon(table_name="Porch"), "10.0.0.2", clock.seconds())
    clock.advance(DEFAULT_TTL - 4)
    assert [e.beacon.table_name for e in directory.tables(clock.seconds())] == [
        "Kitchen table",
        "Porch",
    ]
    clock.advance(0.5)  # the first table was last heard 6.5 s ago
    assert [e.beacon.table_name for e in directory.tables(clock.seconds())] == ["Porch"]
    clock.advance(4)
    assert directory.tables(clock.seconds()) == []
    assert len(directory) == 0


def test_directory_updates_a_table_in_place() -> None:
    directory = TableDirectory()
    first = directory.add(make_beacon(free_seats=3), "10.0.0.1", 100.0)
    second = directory.add(make_beacon(free_seats=1), "10.0.0.1", 105.0)
    assert (second.first_heard, second.last_heard) == (first.first_heard, 105.0)
    assert len(directory) == 1
    (entry,) = directory.tables(110.0)  # heard 5 s ago: still there
    assert entry.beacon.free_seats == 1
    assert entry.endpoint == ("10.0.0.1", 47475)
    assert entry.fingerprint == FP


def test_directory_keys_by_sender_and_port_so_a_copy_cannot_hide_a_table() -> None:
    directory = TableDirectory()
    directory.add(make_beacon(), "10.0.0.1", 0.0)
    directory.add(make_beacon(), "10.0.0.66", 0.0)  # the same beacon from another machine
    directory.add(make_beacon(port=47476), "10.0.0.1", 0.0)  # a second table on the same host
    assert [e.endpoint for e in directory.tables(1.0)] == [
        ("10.0.0.1", 47475),
        ("10.0.0.1", 47476),
        ("10.0.0.66", 47475),
    ]


def test_directory_is_bounded_and_evicts_the_least_recently_heard() -> None:
    directory = TableDirectory(max_entries=256)
    for i in range(256):
        directory.add(make_beacon(table_name=f"t{i:03}"), f"10.0.{i // 256}.{i % 256}", i / 1000)
    directory.add(make_beacon(table_name="t000", free_seats=0), "10.0.0.0", 1.0)  # heard again
    directory.add(make_beacon(table_name="new"), "10.1.0.1", 1.0)
    assert len(directory) == 256 and directory.evicted == 1
    names = {e.beacon.table_name for e in directory.tables(1.0)}
    assert "t001" not in names and {"t000", "t002", "new"} <= names
    for i in range(1000):
        directory.add(make_beacon(table_name="flood"), f"10.2.{i // 256}.{i % 256}", 2.0)
    assert len(directory) == 256


def test_directory_sorts_by_name() -> None:
    directory = TableDirectory()
    for name, ip in [("beta", "10.0.0.3"), ("Alpha", "10.0.0.2"), ("alpha", "10.0.0.1")]:
        directory.add(make_beacon(table_name=name), ip, 0.0)
    assert [e.beacon.table_name for e in directory.tables(0.0)] == ["Alpha", "alpha", "beta"]


def test_directory_refuses_silly_settings() -> None:
    with pytest.raises(ValueError):
        TableDirectory(ttl=0)
    with pytest.raises(ValueError):
        TableDirectory(max_entries=0)


# ---- display and choice -------------------------------------------------------------------------


def entries_for_display() -> list[TableEntry]:
    directory = TableDirectory()
    directory.add(make_beacon(), "192.168.1.20", 0.0)
    directory.add(
        make_beacon(
            table_name="Porch",
            variant="vienna",
            seats=2,
            free_seats=0,
            host_fingerprint=OTHER_FP,
            table_id="abcdef01",
            protocol_versions=(2, 3),
        ),
        "fe80::1",
        0.0,
    )
    return directory.tables(0.0)


def test_format_tables() -> None:
    entries = entries_for_display()
    text = format_tables(entries, protocol=1)
    lines = text.splitlines()
    assert lines[0].split()[:6] == ["#", "TABLE", "VARIANT", "FREE", "DEAL", "ADDRESS"]
    assert "HOST FINGERPRINT" in lines[0] and lines[0].endswith("NOTE")
    assert lines[1].startswith("1  Kitchen table  classic  3/4")
    assert "192.168.1.20:47475" in lines[1] and FP in lines[1]
    assert "[fe80::1]:47475" in lines[2] and "full, needs protocol 2-3" in lines[2]
    assert "NOTE" not in format_tables(entries[:1])
    assert format_tables([]) == "No tables heard."


def test_format_tables_escapes_control_characters_as_a_second_guard() -> None:
    entry = entries_for_display()[0]
    bad = dataclasses.replace(entry, beacon=make_beacon())
    object.__setattr__(bad.beacon, "table_name", "evil\x1b[2J")
    assert "\x1b" not in format_tables([bad]) and "\\x1b" in format_tables([bad])


def test_pick_table() -> None:
    entries = entries_for_display()
    assert pick_table(entries, "2").beacon.table_name == "Porch"
    assert pick_table(entries, " kitchen TABLE ").beacon.table_name == "Kitchen table"
    assert pick_table(entries, "abcd").beacon.table_name == "Porch"  # a table id prefix
    assert pick_table(entries, FP[:9]).fingerprint == FP
    for bad in ["0", "3", "", "nothing", "abc"]:
        with pytest.raises(TableChoiceError):
            pick_table(entries, bad)
    twins = [entries[0], dataclasses.replace(entries[0], address="192.168.1.21")]
    with pytest.raises(TableChoiceError, match="by number"):
        pick_table(twins, "Kitchen table")


# ---- the announcer with a fake transport and a fake clock ---------------------------------------


@implementer(IUDPTransport)
class FakeUDPTransport:
    """Records what would be sent; nothing leaves the process."""

    def __init__(self, fail: bool = False) -> None:
        self.written: list[tuple[bytes, tuple[str, int]]] = []
        self.broadcast = False
        self.fail = fail

    def write(self, data: bytes, addr: tuple[str, int] | None = None) -> None:
        assert addr is not None, "the announcer is connected to no one: it says where"
        if self.fail:
            raise OSError(101, "Network is unreachable")
        self.written.append((data, addr))

    def connect(self, host: str, port: int) -> None:
        raise AssertionError("the announcer sends each beacon to its target: it connects nowhere")

    def getHost(self) -> address.IPv4Address:
        return address.IPv4Address("UDP", LOOPBACK, 40001)

    def stopListening(self) -> None:
        return None

    def setBroadcastAllowed(self, enabled: bool) -> None:
        self.broadcast = enabled

    def getBroadcastAllowed(self) -> bool:
        return self.broadcast


def test_announcer_sends_at_the_interval() -> None:
    clock = task.Clock()
    free = [3]
    announcer = BeaconAnnouncer(
        lambda: make_beacon(free_seats=free[0]), (LOOPBACK, 40000), clock=clock
    )
    transport = FakeUDPTransport()
    announcer.makeConnection(transport)
    assert len(transport.written) == 1  # at once
    clock.advance(DEFAULT_INTERVAL - 0.1)
    assert len(transport.written) == 1
    clock.advance(0.1)
    assert len(transport.written) == 2
    free[0] = 1
    clock.pump([DEFAULT_INTERVAL] * 3)
    assert len(transport.written) == 5 and announcer.sent == 5
    assert all(addr == (LOOPBACK, 40000) for _, addr in transport.written)
    assert decode_beacon(transport.written[-1][0], (LOOPBACK, 1)).free_seats == 1
    assert not transport.broadcast  # a unicast target: SO_BROADCAST stays off
    announcer.doStop()
    assert not announcer.running and clock.getDelayedCalls() == []
    clock.advance(10)
    assert len(transport.written) == 5


def test_announcer_defaults_to_broadcast_with_so_broadcast() -> None:
    # Only a fake transport here: nothing is actually broadcast.
    clock = task.Clock()
    announcer = BeaconAnnouncer(make_beacon, clock=clock)
    assert announcer.target == (BROADCAST_ADDRESS, DISCOVERY_PORT) and announcer.broadcast
    transport = FakeUDPTransport()
    announcer.makeConnection(transport)
    assert transport.broadcast and transport.written[0][1] == (BROADCAST_ADDRESS, DISCOVERY_PORT)
    announcer.doStop()
    assert is_broadcast_address("255.255.255.255")
    assert not is_broadcast_address("192.168.1.255") and not is_broadcast_address("nonsense")
    assert BeaconAnnouncer(make_beacon, ("192.168.1.255", 47474), broadcast=True).broadcast


def test_announcer_survives_errors_and_skips() -> None:
    def failing() -> Beacon | None:
        raise ZeroDivisionError("a bug in the beacon's callable")

    clock = task.Clock()
    answers: list[Callable[[], Beacon | None]] = [
        make_beacon,
        lambda: None,
        failing,
        make_beacon,
    ]
    announcer = BeaconAnnouncer(lambda: answers[0](), (LOOPBACK, 40000), clock=clock, interval=1)
    transport = FakeUDPTransport(fail=True)
    announcer.makeConnection(transport)  # a failing send (no network yet)
    assert announcer.errors == 1 and announcer.running
    transport.fail = False
    answers.pop(0)
    clock.advance(1)  # None: skipped
    answers.pop(0)
    clock.advance(1)  # the callable raises: counted, logged, the loop goes on
    answers.pop(0)
    clock.advance(1)
    assert (announcer.sent, announcer.errors, len(transport.written)) == (1, 2, 1)
    assert announcer.running
    announcer.doStop()
    assert clock.getDelayedCalls() == []


def test_announcer_refuses_bad_targets() -> None:
    for target in [("localhost", 47474), (LOOPBACK, 0), (LOOPBACK, 70000)]:
        with pytest.raises(ValueError):
            BeaconAnnouncer(make_beacon, target)
    with pytest.raises(ValueError):
        BeaconAnnouncer(make_beacon, (LOOPBACK, 47474), interval=0)


class FakeUDPReactor(task.Clock):
    """A clock that records the UDP ports asked for instead of binding them."""

    def __init__(self) -> None:
        super().__init__()
        self.ports: list[tuple[int, DatagramProtocol, str]] = []

    def listenUDP(self, port: int, protocol: DatagramProtocol, interface: str = "") -> Any:
        self.ports.append((port, protocol, interface))
        return None


@implementer(IListeningPort)
class FakeListeningPort:
    def startListening(self) -> None:
        return None

    def stopListening(self) -> None:
        return None

    def getHost(self) -> address.IPv4Address:
        return address.IPv4Address("TCP", LOOPBACK, 47475)


@pytest.mark.parametrize("deal", ["commit-reveal", "blind", "blind-v2"])
def test_a_hosted_table_announces_its_deal_mode(deal: str) -> None:
    """The beacon of a blind table says its log's deal mode (it used to say commit-reveal, so
    ``canasta tables`` listed blind tables wrongly): ``blind-v2`` for ``canasta host --deal
    blind``, ``blind`` for a resumed table of the legacy version 1."""
    identity = Identity.from_seed(b"discovery host")
    config = TableConfig.simple("Kitchen table", preset("classic"), 2, deal=deal)
    clock = task.Clock()
    service = TableService(config, identity, clock, io.BytesIO(), fsync=False)
    hosted = HostedTable(service, FakeListeningPort(), Path("unused.cnlog"), io.BytesIO(), clock)
    reactor_ = FakeUDPReactor()
    _start_announcer(reactor_, hosted, identity, (LOOPBACK, 40000))
    ((port, announcer, _),) = reactor_.ports
    assert port == 0 and isinstance(announcer, BeaconAnnouncer)
    transport = FakeUDPTransport()
    announcer.makeConnection(transport)  # sends one beacon at once, to the fake transport only
    ((data, target),) = transport.written
    assert target == (LOOPBACK, 40000)
    heard = decode_beacon(data, (LOOPBACK, 1))
    assert heard.deal_mode == deal
    assert (heard.table_name, heard.port, heard.table_id) == (
        "Kitchen table",
        47475,
        service.table_id.hex(),
    )
    announcer.doStop()


# ---- the listener, without a network -------------------------------------------------------------


def test_listener_counts_and_ignores_bad_datagrams() -> None:
    clock = task.Clock()
    seen: list[TableEntry] = []
    listener = BeaconListener(clock=clock, on_entry=seen.append)
    listener.datagramReceived(b"junk", SOURCE)
    listener.datagramReceived(b"CNB9" + b"\x80", SOURCE)
    listener.datagramReceived(b"CNB1" + b"\x91" * 1100, SOURCE)
    listener.datagramReceived(encode_beacon(make_beacon()), SOURCE)
    assert (listener.received, listener.malformed, listener.unsupported) == (4, 2, 1)
    assert listener.last_error is not None
    assert [e.address for e in seen] == ["192.168.1.20"]
    clock.advance(DEFAULT_TTL + 0.1)
    assert listener.tables() == []


def test_listener_survives_a_failing_callback() -> None:
    def broken(entry: TableEntry) -> None:
        raise RuntimeError("bug in the caller")

    listener = BeaconListener(clock=task.Clock(), on_entry=broken)
    listener.datagramReceived(encode_beacon(make_beacon()), SOURCE)
    assert len(listener.tables()) == 1


# ---- real UDP on 127.0.0.1 ---------------------------------------------------------------------


@pytest.fixture
def clean_reactor() -> Iterator[None]:
    """Fail if a test leaves a UDP port or a timed call behind (a dirty reactor)."""

    def ports() -> set[object]:
        return {
            s for s in [*reactor.getReaders(), *reactor.getWriters()] if isinstance(s, udp.Port)
        }

    before_ports = ports()
    before_calls = set(reactor.getDelayedCalls())
    yield
    assert ports() <= before_ports
    assert {c for c in reactor.getDelayedCalls() if c.active()} <= before_calls


async def wait_until(predicate: Callable[[], bool], timeout: float = 3.0) -> None:
    waited = 0.0
    while not predicate():
        assert waited < timeout, "timed out"
        await task.deferLater(reactor, 0.01)
        waited += 0.01


async def stop(port: Any) -> None:
    result = port.stopListening()
    if result is not None:
        await result


def port_of(protocol: DatagramProtocol) -> int:
    assert protocol.transport is not None
    port: int = protocol.transport.getHost().port
    return port


@pytest.mark.usefixtures("clean_reactor")
@pytest_twisted.ensureDeferred
async def test_announcer_to_listener_over_loopback() -> None:
    listener = BeaconListener()
    listening = udp_reactor.listenUDP(0, listener, interface=LOOPBACK)
    free = [3]
    announcing = start_announcing(
        udp_reactor,
        lambda: make_beacon(free_seats=free[0]),
        target=(LOOPBACK, port_of(listener)),
        interval=0.05,
        interface=LOOPBACK,
    )
    try:
        await wait_until(lambda: len(listener.tables()) == 1)
        (entry,) = listener.tables()
        assert entry.address == LOOPBACK and entry.endpoint == (LOOPBACK, 47475)
        assert entry.fingerprint == FP and entry.beacon.free_seats == 3
        free[0] = 0
        await wait_until(lambda: listener.tables()[0].beacon.free_seats == 0)
        assert listener.received >= 2 and listener.malformed == 0
    finally:
        await stop(announcing)
        await stop(listening)
    assert listener.transport is None


@pytest.mark.usefixtures("clean_reactor")
@pytest_twisted.ensureDeferred
async def test_malformed_datagrams_over_loopback_are_counted_and_ignored() -> None:
    listener = BeaconListener()
    listening = udp_reactor.listenUDP(0, listener, interface=LOOPBACK)
    sender = DatagramProtocol()
    sending = udp_reactor.listenUDP(0, sender, interface=LOOPBACK)
    try:
        target = (LOOPBACK, port_of(listener))
        assert sender.transport is not None
        for junk in [b"", b"hello", b"CNB1\xc1", b"CNB1" + b"\x91" * 1100, b"CNB7\x80"]:
            sender.transport.write(junk, target)
        sender.transport.write(encode_beacon(make_beacon()), target)
        await wait_until(lambda: listener.received == 6)
        assert (listener.malformed, listener.unsupported) == (4, 1)
        assert [e.beacon.table_name for e in listener.tables()] == ["Kitchen table"]
    finally:
        await stop(sending)
        await stop(listening)


@pytest.mark.usefixtures("clean_reactor")
@pytest_twisted.ensureDeferred
async def test_listen_for_tables_over_loopback() -> None:
    listener = BeaconListener(clock=reactor)
    scan = listen_for_tables(udp_reactor, 0, 0.4, interface=LOOPBACK, listener=listener)
    announcing = start_announcing(
        udp_reactor,
        make_beacon,
        target=(LOOPBACK, port_of(listener)),
        interval=0.05,
        interface=LOOPBACK,
    )
    try:
        tables = await scan
    finally:
        await stop(announcing)
    assert [(e.address, e.beacon.table_name) for e in tables] == [(LOOPBACK, "Kitchen table")]
    assert listener.transport is None  # the scan stopped listening


@pytest.mark.usefixtures("clean_reactor")
@pytest_twisted.ensureDeferred
async def test_listen_for_tables_can_be_cancelled_and_reports_a_busy_port() -> None:
    listener = BeaconListener(clock=reactor)
    scan = listen_for_tables(udp_reactor, 0, 30, interface=LOOPBACK, listener=listener)
    busy = listen_for_tables(udp_reactor, port_of(listener), 1, interface=LOOPBACK)
    with pytest.raises(CannotListenError):
        await busy
    scan.cancel()
    with pytest.raises(defer.CancelledError):
        await scan
    assert listener.transport is None  # stopped before the Deferred failed
