"""Attack a live host on 127.0.0.1 while two players sit at its table, and print what happened.

The host runs in a child process (``--serve``, started by this script: TLS on 127.0.0.1, no
beacons, a password, a log synced to disk). Two seated players in another child (``--probe``)
probe it all along: every 50 ms each sends a message off its schema and times the host's
``error`` reply; the attacker's own work does not share their process. A third seat is the
attacker's (the chat flood, and a reconnect while idle connections fill the host). Each attack
runs for at most ``--seconds`` and a bounded number of connections; then the table shows: attack,
host alive, the players' reply latency p50/p99, whether the host's log verifies, the errors the
attacker got, and the host's RSS. ``--frames N`` adds a fuzzer sending N random and mutated frames.

    python scripts/hostile_peers.py --seconds 12 --frames 1000000 --json hostile.json

Loopback only; every count and time is bounded by the options.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import msgpack
from twisted.internet import defer, protocol, task
from twisted.internet.endpoints import SSL4ClientEndpoint, TCP4ClientEndpoint

from canasta_net.canasta.rules import preset
from canasta_net.identity import Identity
from canasta_net.log import verify_log
from canasta_net.net import wire
from canasta_net.net.framing import FrameProtocol
from canasta_net.net.tls import client_context_factory
from canasta_net.table.signer import SeatSigner

LOOPBACK = "127.0.0.1"
PASSWORD = "sesame"


# --------------------------------------------------------------------------- the host (child)
def serve(port_file: Path, log_path: Path) -> None:
    from canasta_net.net.host import TableConfig
    from canasta_net.ui.app import start_host

    async def main(reactor: Any) -> None:
        identity = Identity.generate()
        config = TableConfig.simple(
            "hostile", preset("classic"), 4, host_plays=False, password=PASSWORD
        )
        hosted = await start_host(
            reactor, config, identity, bind=LOOPBACK, port=0, log_path=log_path
        )
        port_file.write_text(f"{hosted.address[1]} {identity.fingerprint}")
        await defer.Deferred()  # until killed

    task.react(lambda reactor: defer.ensureDeferred(main(reactor)))


# --------------------------------------------------------------------------- the players (child)
def probe(port_file: Path, out: Path) -> None:
    async def main(reactor: Any) -> None:
        port_text, fingerprint = port_file.read_text().split()
        target = Target(reactor, int(port_text), fingerprint, 0)
        players = [Player(target, "alice"), Player(target, "bob")]
        for player in players:
            await player.sit()
        with out.open("a") as sink:

            def record(latency: float) -> None:
                sink.write(f"{time.time():.4f} {latency:.3f}\n")
                sink.flush()

            for player in players:
                player.record = record
            await defer.gatherResults([defer.ensureDeferred(p.probe()) for p in players])

    task.react(lambda reactor: defer.ensureDeferred(main(reactor)))


# --------------------------------------------------------------------------- clients
class Client(FrameProtocol):
    """A peer's side, by hand: keeps what the host sends, answers pings, times replies."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.closed: defer.Deferred[str] = defer.Deferred()
        self.waiting: list[defer.Deferred[dict[str, Any]]] = []
        self.answer_pings = True

    def message_received(self, message: dict[str, Any]) -> None:
        if message.get("t") == "ping" and self.answer_pings:
            self.send({"t": "pong"})
            return
        self.messages.append(message)
        waiting, self.waiting = self.waiting, []
        for d in waiting:
            d.callback(message)

    def next_message(self) -> defer.Deferred[dict[str, Any]]:
        d: defer.Deferred[dict[str, Any]] = defer.Deferred()
        self.waiting.append(d)
        return d

    def connectionLost(self, reason: Any = None) -> None:  # Twisted's name
        if not self.closed.called:
            self.closed.callback(reason.getErrorMessage() if reason else "closed")

    def errors(self) -> list[str]:
        return [m["code"] for m in self.messages if m.get("t") == "error"]


def abort(conn: Any) -> None:
    """Close our end at once (if the host has not already)."""
    closed = getattr(conn, "closed", None)
    if conn.transport is not None and not (closed is not None and closed.called):
        conn.transport.abortConnection()


class Raw(protocol.Protocol):
    def __init__(self) -> None:
        self.closed: defer.Deferred[None] = defer.Deferred()

    def connectionLost(self, reason: Any = None) -> None:  # Twisted's name
        if not self.closed.called:
            self.closed.callback(None)


class Target:
    def __init__(self, reactor: Any, port: int, fingerprint: str, pid: int) -> None:
        self.reactor, self.port, self.fingerprint, self.pid = reactor, port, fingerprint, pid

    async def tls(self, identity: Identity | None = None) -> Client:
        creator = client_context_factory(identity or Identity.generate(), self.fingerprint)
        endpoint = SSL4ClientEndpoint(self.reactor, LOOPBACK, self.port, creator)
        client: Client = await endpoint.connect(protocol.Factory.forProtocol(Client))
        return client

    async def raw(self) -> Raw:
        endpoint = TCP4ClientEndpoint(self.reactor, LOOPBACK, self.port)
        raw: Raw = await endpoint.connect(protocol.Factory.forProtocol(Raw))
        return raw

    def rss_mb(self) -> float:
        try:
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            pass
        return 0.0


def hello(name: str, password: str = PASSWORD) -> dict[str, Any]:
    return {
        "t": "hello",
        "min": wire.PROTOCOL_MIN,
        "max": wire.PROTOCOL_MAX,
        "name": name,
        "bot": True,
        "password": password,
    }


def sleep(reactor: Any, seconds: float) -> defer.Deferred[None]:
    return task.deferLater(reactor, seconds, lambda: None)


class Player:
    """A seated player that probes the host's reply time every 50 ms."""

    def __init__(self, target: Target, name: str) -> None:
        self.target, self.name = target, name
        self.identity = Identity.generate()
        self.client: Client | None = None
        self.welcome: dict[str, Any] = {}
        self.latencies: list[float] = []
        self.failures = 0
        self.running = False
        self.record: Callable[[float], None] = self.latencies.append

    async def sit(self) -> None:
        client = await self.target.tls(self.identity)
        client.send(hello(self.name))
        while True:
            message = await client.next_message()
            if message["t"] == "welcome":
                self.welcome = message
                break
            if message["t"] == "error":
                raise RuntimeError(f"{self.name} was refused: {message}")
        self.client = client

    async def probe(self) -> None:
        self.running = True
        while self.running:
            client = self.client
            if client is None or client.closed.called:
                self.failures += 1
                await sleep(self.target.reactor, 0.05)
                continue
            start = time.perf_counter()
            reply = client.next_message()
            client.send({"t": "act"})  # off its schema: answered with an error at once
            timeout = self.target.reactor.callLater(2.0, reply.cancel)
            try:
                while (await reply)["t"] != "error":
                    reply = client.next_message()
                self.record((time.perf_counter() - start) * 1000)
            except defer.CancelledError:
                self.failures += 1
                self.record(float("nan"))
            if timeout.active():
                timeout.cancel()
            await sleep(self.target.reactor, 0.05)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# --------------------------------------------------------------------------- attacks
Attack = Callable[[Target, "Options"], Coroutine[Any, Any, str]]


class Options:
    def __init__(self, seconds: float, connections: int, frames: int) -> None:
        self.seconds, self.connections, self.frames = seconds, connections, frames


async def closed_within(reactor: Any, closings: list[defer.Deferred[Any]], seconds: float) -> int:
    await sleep(reactor, seconds)
    return sum(1 for d in closings if d.called)


async def never_reading(target: Target, options: Options) -> str:
    client = await target.tls()
    await sleep(target.reactor, 0.5)  # the TLS handshake
    client.transport.pauseProducing()  # then read nothing the host sends
    sent = 0
    deadline = time.monotonic() + options.seconds
    while time.monotonic() < deadline and not client.closed.called and sent < 200_000:
        for _ in range(500):
            client.send({"t": "nonsense", "pad": "x" * 200})
        sent += 500
        await sleep(target.reactor, 0.01)
    # the host's deadlines run meanwhile; a peer that reads nothing sees no close: read at the end
    await sleep(target.reactor, max(0.0, deadline - time.monotonic()) + options.seconds)
    client.transport.resumeProducing()
    await sleep(target.reactor, 1.0)
    closed = client.closed.called
    abort(client)
    return f"{sent} requests sent, unread; closed by the host: {closed}"


async def slowloris_tls(target: Target, options: Options) -> str:
    raws = [await target.raw() for _ in range(min(50, options.connections))]
    for raw in raws[: len(raws) // 2]:
        raw.transport.write(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")  # half a hello
    closed = await closed_within(target.reactor, [r.closed for r in raws], options.seconds)
    for raw in raws:
        abort(raw)
    return f"{closed} of {len(raws)} stalled handshakes closed"


async def slowloris_hello(target: Target, options: Options) -> str:
    clients = [await target.tls() for _ in range(min(20, options.connections))]
    closed = await closed_within(target.reactor, [c.closed for c in clients], options.seconds)
    codes = Counter(code for c in clients for code in c.errors())
    for c in clients:
        abort(c)
    return f"{closed} of {len(clients)} closed; {dict(codes)}"


async def partial_frames(target: Target, options: Options) -> str:
    clients = [await target.tls() for _ in range(min(60, options.connections))]
    for i, c in enumerate(clients):
        length = (2 << 20) if i % 10 == 0 else 8000
        c.transport.write(length.to_bytes(4, "big") + b"x" * 4000)
    closed = await closed_within(target.reactor, [c.closed for c in clients], options.seconds)
    for c in clients:
        abort(c)
    return f"{closed} of {len(clients)} parked partial frames closed"


async def idle_connections(target: Target, options: Options, players: list[Player]) -> str:
    raws = []
    for _ in range(options.connections):
        raws.append(await target.raw())
    # a seated player loses its connection and comes back while they are all open
    player = players[0]
    if player.client is not None:
        abort(player.client)
    try:
        await player.sit()
        back = "reconnected"
    except Exception as e:  # the report says what went wrong
        back = f"could not reconnect: {e}"
    closed = await closed_within(target.reactor, [r.closed for r in raws], options.seconds)
    for raw in raws:
        abort(raw)
    return f"{closed} of {len(raws)} idle closed; the seated player {back}"


async def chat_flood(target: Target, options: Options, players: list[Player]) -> str:
    player = players[0]  # seated again after the match started: its welcome has a real head
    client, welcome = player.client, player.welcome
    assert client is not None
    signer = SeatSigner(
        player.identity,
        welcome["seat"],
        welcome["table"]["table_id"],
        welcome["head"],
        aseq=welcome["aseq"],
    )
    before = len(client.errors())
    for i in range(min(2000, options.connections * 10)):
        act, asig = signer.chat(0, f"flood {i} " + "x" * 480)
        client.send({"t": "act", "act": act, "asig": asig})
    await sleep(target.reactor, min(options.seconds, 2.0))
    codes = Counter(c for c in client.errors()[before:] if c != "bad-message")
    return f"{dict(codes)}"


async def password_guessing(target: Target, options: Options) -> str:
    codes: Counter[str] = Counter()
    start = time.monotonic()
    tries = 0
    # at least 8 tries: more than the free ones, whatever the time
    while tries < options.connections * 4 and (
        time.monotonic() - start < options.seconds or tries < 8
    ):
        client = await target.tls()
        client.send(hello("guesser", f"guess {tries}"))
        reply = client.next_message()
        timeout = target.reactor.callLater(5.0, reply.cancel)
        try:
            codes[(await reply).get("code", "?")] += 1
        except defer.CancelledError:
            codes["no answer"] += 1
        if timeout.active():
            timeout.cancel()
        abort(client)
        tries += 1
    rate = tries / max(1e-9, time.monotonic() - start)
    return f"{tries} guesses ({rate:.0f}/s): {dict(codes)}"


def random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(8 if depth < 3 else 5)
    if kind == 0:
        return rng.randrange(-(2**63), 2**64)
    if kind == 1:
        return rng.randbytes(rng.randrange(0, 80))
    if kind == 2:
        return "".join(chr(rng.randrange(0x20, 0x2FF)) for _ in range(rng.randrange(0, 30)))
    if kind == 3:
        return rng.choice([None, True, False, 0.5, -1])
    if kind == 4:
        return rng.choice(sorted(wire.SCHEMAS))
    if kind == 5:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(0, 5))]
    keys = ["t", "act", "asig", "min", "max", "name", "bot", "hand", "sig", "record", "seed"]
    return {rng.choice(keys): random_value(rng, depth + 1) for _ in range(rng.randrange(0, 6))}


CLOSERS = frozenset({"hello", "bye"})


def fuzz_frame(rng: random.Random, templates: list[bytes], garbage: float) -> tuple[bytes, bool]:
    """A random or mutated frame body, and whether it decodes (the host answers it; a frame
    that does not decode drops the connection, so only a ``garbage`` share of them is sent)."""
    while True:
        if rng.random() < 0.5:
            body = bytearray(rng.choice(templates))
            for _ in range(rng.randrange(1, 4)):
                body[rng.randrange(len(body))] = rng.randrange(256)
            data = bytes(body)
        elif rng.random() < 0.9:
            message = random_value(rng, 1) if rng.random() < 0.2 else {}
            if not isinstance(message, dict):
                message = {}
            # hello and bye end a connection (a refusal, a goodbye): rarely, as garbage does
            closing = rng.random() < garbage * 5
            names = sorted(wire.SCHEMAS) if closing else sorted(set(wire.SCHEMAS) - CLOSERS)
            message["t"] = rng.choice([*names, "x"])
            data = msgpack.packb(message, use_bin_type=True)
        else:
            data = rng.randbytes(rng.randrange(0, 64))
        try:
            wire.decode(data)
            return data, True
        except wire.FramingError:
            if rng.random() < garbage:
                return data, False


async def fuzz_frames(target: Target, options: Options) -> str:
    """Random and mutated frames, about one in a thousand of them not msgpack (each of those
    ends its connection: the fuzzer connects again). Paced by the host's answers."""
    rng = random.Random(1)
    templates = [
        wire.encode({"t": "act", "act": b"\x81\xa4type\xa4chat", "asig": bytes(64)}),
        wire.encode({"t": "checkpoint", "hand": 0, "sig": bytes(64)}),
        wire.encode({"t": "fork", "record": b"\x00" * 40}),
        wire.encode({"t": "pong"}),
    ]
    sent, connections, answers = 0, 0, Counter[str]()
    client: Client | None = None
    deadline = time.monotonic() + max(options.seconds * 10, options.frames / 2000)
    while sent < options.frames and time.monotonic() < deadline:
        if client is None or client.closed.called:
            if client is not None:
                answers.update(client.errors())
            client = await target.tls()
            connections += 1
        batch = []
        for _ in range(min(200, options.frames - sent)):
            body, answered = fuzz_frame(rng, templates, 0.0002)
            batch.append(len(body).to_bytes(4, "big") + body)
            if not answered:
                break  # the host closes the connection here
        client.transport.write(b"".join(batch))
        sent += len(batch)
        before = seen = len(client.messages)
        waited = 0.0  # until the host's answers stop coming (or 2 s)
        while not client.closed.called and waited < 2.0:
            await sleep(target.reactor, 0.005)
            waited += 0.005
            if len(client.messages) == seen and (seen > before or waited >= 0.5):
                break
            seen = len(client.messages)
        if len(client.messages) == before:  # no answer at all: the host has closed it
            answers.update(client.errors())
            abort(client)
            client = None
    if client is not None:
        answers.update(client.errors())
        abort(client)
    top = dict(answers.most_common(4))
    return f"{sent} frames on {connections} connections; {top}"


# --------------------------------------------------------------------------- the run
async def run(reactor: Any, args: argparse.Namespace) -> list[dict[str, Any]]:
    workdir = Path(tempfile.mkdtemp(prefix="hostile-"))
    port_file, log_path = workdir / "port", workdir / "host.log"
    probes_file = workdir / "latencies"
    host = subprocess.Popen([sys.executable, __file__, "--serve", str(port_file), str(log_path)])
    prober: subprocess.Popen[bytes] | None = None
    try:
        for _ in range(400):
            if port_file.exists() and port_file.read_text():
                break
            await sleep(reactor, 0.05)
        port_text, fingerprint = port_file.read_text().split()
        target = Target(reactor, int(port_text), fingerprint, host.pid)
        prober = subprocess.Popen(
            [sys.executable, __file__, "--probe", str(port_file), str(probes_file)]
        )
        for _ in range(400):
            if probes_file.exists() and probes_file.stat().st_size:
                break
            await sleep(reactor, 0.05)
        players = [Player(target, "mallory")]  # the attacker's own seat; the match starts
        for player in players:
            await player.sit()
        options = Options(args.seconds, args.connections, args.frames)
        attacks: list[tuple[str, Callable[[], Coroutine[Any, Any, str]]]] = [
            ("baseline", lambda: _idle(reactor, options)),
            ("never-reading peer", lambda: never_reading(target, options)),
            ("slowloris: TLS", lambda: slowloris_tls(target, options)),
            ("slowloris: hello", lambda: slowloris_hello(target, options)),
            ("slowloris: partial frames", lambda: partial_frames(target, options)),
            ("many idle connections", lambda: idle_connections(target, options, players)),
            ("chat flood", lambda: chat_flood(target, options, players)),
            ("password guessing", lambda: password_guessing(target, options)),
        ]
        if args.frames:
            attacks.append(("frame fuzzer", lambda: fuzz_frames(target, options)))
        rows, windows = [], []
        for name, attack in attacks:
            start = time.time()
            try:
                outcome = await attack()
            except Exception as e:  # reported in the table, not fatal to the run
                outcome = f"the attack itself failed: {e!r}"
            await sleep(reactor, 0.2)
            windows.append((start, time.time()))
            rows.append(
                {
                    "attack": name,
                    "host_alive": host.poll() is None,
                    "log_valid": _log_valid(log_path),
                    "attacker_got": outcome,
                    "host_rss_mb": round(target.rss_mb(), 1),
                }
            )
        await sleep(reactor, 0.3)
        samples = [tuple(map(float, line.split())) for line in probes_file.read_text().split("\n")]
        for row, (start, end) in zip(rows, windows, strict=True):
            window = [s[1] for s in samples if len(s) == 2 and start <= s[0] <= end]
            answered = [x for x in window if x == x]  # nan: a probe got no answer in 2 s
            row["p50_ms"] = round(percentile(answered, 0.5), 2)
            row["p99_ms"] = round(percentile(answered, 0.99), 2)
            row["probes"], row["unanswered"] = len(answered), len(window) - len(answered)
        return rows
    finally:
        for child in (prober, host):
            if child is not None:
                child.kill()
                child.wait()


async def _idle(reactor: Any, options: Options) -> str:
    await sleep(reactor, min(options.seconds, 2.0))
    return "-"


def _log_valid(path: Path) -> bool:
    try:
        verify_log(path.read_bytes())
        return True
    except Exception:  # a record being written: try once more
        time.sleep(0.05)
        try:
            verify_log(path.read_bytes())
            return True
        except Exception:
            return False


def print_table(rows: list[dict[str, Any]]) -> None:
    print(f"{'attack':26} {'alive':5} {'p50 ms':>7} {'p99 ms':>7} {'log':4} {'RSS MB':>7}  got")
    for r in rows:
        print(
            f"{r['attack']:26} {'yes' if r['host_alive'] else 'NO':5} {r['p50_ms']:7.2f} "
            f"{r['p99_ms']:7.2f} {'ok' if r['log_valid'] else 'BAD':4} {r['host_rss_mb']:7.1f}  "
            f"{r['attacker_got']}"
        )


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--serve":
        serve(Path(sys.argv[2]), Path(sys.argv[3]))
        return
    if len(sys.argv) == 4 and sys.argv[1] == "--probe":
        probe(Path(sys.argv[2]), Path(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=12.0, help="at most, per attack")
    parser.add_argument("--connections", type=int, default=300, help="idle connections")
    parser.add_argument("--frames", type=int, default=0, help="fuzzer frames (0: no fuzzer)")
    parser.add_argument("--json", type=Path, help="write the rows here too")
    args = parser.parse_args()

    async def go(reactor: Any) -> None:
        rows = await run(reactor, args)
        print_table(rows)
        if args.json is not None:
            args.json.write_text(json.dumps(rows, indent=2) + "\n")

    task.react(lambda reactor: defer.ensureDeferred(go(reactor)))


if __name__ == "__main__":
    main()
