"""End to end: host and seats as separate processes on 127.0.0.1, TLS, real sockets.

Each test starts ``canasta host`` (a bot in the host's seat, announcing off) and ``canasta join
--bot`` processes, lets them play, and checks that every log verifies, replays through the engine
and agrees with the others. Two tests kill a process mid-hand: a seat, which reconnects and
reclaims its seat, and the host, which resumes from its own log while the seats reconnect.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from canasta_net.log import iter_records, redact_for_seat, redact_public
from canasta_net.log.replay import replay_log

CLI = [sys.executable, "-m", "canasta_net"]
TIMEOUT = 120
_STARTED: list[subprocess.Popen[bytes]] = []


@pytest.fixture(autouse=True)
def _no_stray_processes() -> Iterator[None]:
    """Whatever a test started is gone when it ends, even when it fails."""
    yield
    while _STARTED:
        proc = _STARTED.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def _as_from_a_terminal() -> Iterator[None]:
    """Children started meanwhile take SIGINT as from a terminal. A suite run as a background
    job (``pytest &``) ignores SIGINT, a child inherits that, and a host that ignores Ctrl-C
    from its start is right to (a shell's background job must not stop on the terminal's
    Ctrl-C): the test that stops the host with SIGINT then waited for ever."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        yield
        return
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # reset to SIG_DFL by exec
    except ValueError:  # not the main thread: as it is
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _start(
    args: list[str], out: Path, *, stdin: int = subprocess.DEVNULL
) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    with _as_from_a_terminal():
        proc = subprocess.Popen(
            [*CLI, *args],
            stdout=out.open("wb"),
            stderr=subprocess.STDOUT,
            stdin=stdin,
            env=env,
        )
    _STARTED.append(proc)
    return proc


def _wait_for(path: Path, pattern: str, proc: subprocess.Popen[bytes], seconds: float = 30) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        text = path.read_text(errors="replace") if path.exists() else ""
        match = re.search(pattern, text)
        if match:
            return match.group(0)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    raise AssertionError(f"{pattern!r} not seen in {path}:\n{path.read_text(errors='replace')}")


def _host(
    tmp: Path, *extra: str, port: int = 0, log: Path | None = None
) -> tuple[subprocess.Popen[bytes], int, str, Path]:
    out = tmp / f"host-{time.monotonic_ns()}.out"
    log = log or tmp / "host.cnlog"
    args = [
        "host",
        "--bind",
        "127.0.0.1",
        "--port",
        str(port),
        "--no-announce",
        "--host-bot",
        "--identity",
        str(tmp / "host.pem"),
        *extra,
    ]
    if "--resume" not in extra:
        args += ["--log", str(log)]
    proc = _start(args, out)
    line = _wait_for(out, r"listening on 127\.0\.0\.1:\d+; host fingerprint [a-z0-9-]+", proc)
    port = int(re.search(r":(\d+);", line).group(1))  # type: ignore[union-attr]
    fingerprint = line.rsplit(" ", 1)[1]
    return proc, port, fingerprint, out


def _join(
    tmp: Path, name: str, port: int, fingerprint: str, log: Path
) -> tuple[subprocess.Popen[bytes], Path]:
    out = tmp / f"{name}-{time.monotonic_ns()}.out"
    proc = _start(
        [
            "join",
            f"127.0.0.1:{port}",
            "--fingerprint",
            fingerprint,
            "--bot",
            "greedy",
            "--name",
            name,
            "--identity",
            str(tmp / f"{name}.pem"),
            "--known-hosts",  # each test pins its own host, never in the user's config
            str(tmp / "known_hosts"),
            "--log",
            str(log),
        ],
        out,
    )
    return proc, out


def _finish(*procs: subprocess.Popen[bytes]) -> None:
    for p in procs:
        try:
            p.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            p.kill()
            raise


def _finish_unless(
    trouble: str, watched: Path, *procs: subprocess.Popen[bytes], seconds: float = TIMEOUT
) -> None:
    """``_finish``, failing at once when ``trouble`` shows in ``watched`` (a process stuck after
    an error would otherwise be waited for until the timeout)."""
    deadline = time.monotonic() + seconds
    while any(p.poll() is None for p in procs):
        if re.search(trouble, watched.read_text(errors="replace")):
            raise AssertionError(f"{trouble!r} in {watched.name}")
        if time.monotonic() > deadline:
            raise subprocess.TimeoutExpired(repr([p.args for p in procs]), seconds)
        time.sleep(0.1)


def _check_agree(host_log: Path, seat_logs: dict[int, Path]) -> None:
    host = replay_log(host_log.read_bytes())
    # the match ran to its end, or to the table's limit of hands (a stop the log proves)
    assert host.result is not None or (host.stop is not None and host.stop.proven), host.stop
    host_records = [r for r in iter_records(host_log.read_bytes())]
    for seat, path in seat_logs.items():
        mine = replay_log(path.read_bytes())
        assert mine.result == host.result and mine.stop == host.stop
        assert mine.match.scores == host.match.scores
        # the seat's copy is the host's log, redacted for the seat, byte for byte
        stored = host_log.read_bytes()
        expected = b"".join(
            redact_for_seat(stored[r.offset : r.offset + r.size], seat) for r in host_records
        )
        assert path.read_bytes() == expected
    for hand in host.hands:
        assert len(hand.checkpoint_signers) == 4


def test_all_bot_match_across_processes(tmp_path: Path) -> None:
    # a whole match, to a lower target than the preset's 5000 (fewer hands, the same protocol)
    host, port, fingerprint, _ = _host(tmp_path, "--players", "3", "--target", "2000")
    a, _ = _join(tmp_path, "alice", port, fingerprint, tmp_path / "alice.cnlog")
    b, _ = _join(tmp_path, "bob", port, fingerprint, tmp_path / "bob.cnlog")
    _finish(a, b, host)
    assert a.returncode == b.returncode == host.returncode == 0
    seats = {}
    for path in (tmp_path / "alice.cnlog", tmp_path / "bob.cnlog"):
        header = next(iter(iter_records(path.read_bytes())))
        names = [s["name"] for s in header.fields["seats"]]
        seats[names.index(path.stem)] = path
    _check_agree(tmp_path / "host.cnlog", seats)
    assert oct((tmp_path / "host.cnlog").stat().st_mode & 0o777) == "0o600"


def test_a_watcher_follows_a_hand_across_processes(tmp_path: Path) -> None:
    """``canasta watch`` follows the table live with the public view only: the players hear
    who watches, and the watcher's copy of the log is the host's with no private payload."""
    host, port, fingerprint, host_out = _host(
        tmp_path, "--variant", "classic-2p", "--players", "2", "--hands", "1"
    )
    out = tmp_path / "wendy.out"
    watcher = _start(
        [
            "watch",
            f"127.0.0.1:{port}",
            "--fingerprint",
            fingerprint,
            "--name",
            "wendy",
            "--identity",
            str(tmp_path / "wendy.pem"),
            "--known-hosts",
            str(tmp_path / "known_hosts"),
            "--log",
            str(tmp_path / "wendy.cnlog"),
        ],
        out,
    )
    _wait_for(out, r"\* watching 'canasta'", watcher)  # welcomed before the match begins
    seat, seat_out = _join(tmp_path, "alice", port, fingerprint, tmp_path / "alice.cnlog")
    try:
        _finish(seat, host, watcher)
    except subprocess.TimeoutExpired:
        raise AssertionError(_outputs(host_out, seat_out, out)) from None
    shown = out.read_text(errors="replace")
    assert watcher.returncode == seat.returncode == host.returncode == 0, shown
    assert "hand 1 is dealt" in shown and "* the match is over" in shown
    assert "== canasta == hand 1" in shown and "watching: wendy" in shown
    assert "your hand" not in shown
    assert "wendy is watching" in seat_out.read_text(errors="replace")
    stored = (tmp_path / "host.cnlog").read_bytes()
    public = b"".join(
        redact_public(stored[r.offset : r.offset + r.size]) for r in iter_records(stored)
    )
    assert (tmp_path / "wendy.cnlog").read_bytes() == public


def test_wrong_fingerprint_is_refused(tmp_path: Path) -> None:
    host, port, _, _ = _host(tmp_path, "--players", "2")
    wrong = "aaaa-aaaa-aaaa-aaaa-aaaa-aaaa-aaaa-aaaa"
    out = tmp_path / "mallory.out"
    proc = _start(
        [
            "join",
            f"127.0.0.1:{port}",
            "--fingerprint",
            wrong,
            "--bot",
            "random",
            "--identity",
            str(tmp_path / "m.pem"),
            "--known-hosts",
            str(tmp_path / "known_hosts"),
            "--log",
            str(tmp_path / "m.cnlog"),
        ],
        out,
    )
    _wait_for(out, "fingerprint mismatch", proc, seconds=20)
    assert proc.wait(20) == 1, "a refused join exits with an error status"
    host.kill()
    host.wait()


# hand 1 in play: its first move seen (a fixed pause after the deal may outlast a short hand)
IN_PLAY = r"hand 1 is dealt\n(?:.*\n)*?.*\(seat \d\): \w"


@pytest.mark.parametrize(
    ("deal", "moment", "pause"),
    [
        ("commit-reveal", IN_PLAY, 0.0),  # mid-hand
        # often after committing to hand 2's seed and before revealing it
        ("commit-reveal", r"hand 1 over", 0.05),
        # its secrets for the hand die with the process; the seed it kept brings them back
        ("blind", IN_PLAY, 0.0),
    ],
    ids=["commit-reveal-mid-hand", "commit-reveal-between-hands", "blind-mid-hand"],
)
def test_seat_killed_mid_match_reconnects_and_plays_on(
    tmp_path: Path, deal: str, moment: str, pause: float
) -> None:
    host, port, fingerprint, host_out = _host(
        tmp_path,
        "--players",
        "2",
        "--delay",
        "0.02",
        "--hold",
        "60",
        "--deal",
        deal,
        "--hands",
        "2",  # hand 1 interrupted, hand 2 dealt after the rejoin: enough, and short
    )
    first, first_out = _join(tmp_path, "alice", port, fingerprint, tmp_path / "alice-1.cnlog")
    _wait_for(first_out, moment, first)
    if pause:
        time.sleep(pause)
    first.send_signal(signal.SIGKILL)
    first.wait()
    second, second_out = _join(tmp_path, "alice", port, fingerprint, tmp_path / "alice-2.cnlog")
    try:
        _finish(second, host)
    except subprocess.TimeoutExpired:
        raise AssertionError(_outputs(host_out, first_out, second_out)) from None
    assert second.returncode == host.returncode == 0, _outputs(host_out, first_out, second_out)
    _check_agree(tmp_path / "host.cnlog", {1: tmp_path / "alice-2.cnlog"})
    # the seeds alice committed to were kept beside her identity until the log published them
    assert list((tmp_path / "alice.seeds").iterdir()) == []


def _outputs(*paths: Path) -> str:
    """What the processes printed, for a failure's report (the ends of long outputs)."""
    return "\n".join(f"--- {p.name}:\n{p.read_text(errors='replace')[-3000:]}" for p in paths)


def _audit(*paths: Path) -> None:
    """Every log audits VALID (one ``canasta-replay audit`` for all of them: a process started
    once; it also compares the copies of one table, which must agree)."""
    result = subprocess.run(
        [sys.executable, "-m", "replay", "audit", *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for path in paths:
        assert f"{path}: VALID" in result.stdout, result.stdout


@pytest.mark.parametrize("deal", ["commit-reveal", "blind"])
def test_host_killed_mid_hand_resumes_from_its_log_alone(tmp_path: Path, deal: str) -> None:
    """kill -9 the host mid-hand; ``canasta host --resume LOG`` with only the network flags
    restarts the table as it was (its bots, the joiner's seat, names, options) from the log; the
    seat reconnects by itself, the match ends, and both logs audit valid."""
    log = tmp_path / "host.cnlog"
    # a short match: seat 0 the host's bot, seat 1 the joiner, seats 2 and 3 bots
    host, port, fingerprint, host_out = _host(
        tmp_path,
        "--players", "2", "--delay", "0.02", "--deal", deal, "--target", "1200", "--name", "den",
    )  # fmt: skip
    seat, seat_out = _join(tmp_path, "alice", port, fingerprint, tmp_path / "alice.cnlog")
    # killed as soon as the hand is in play (its first move seen): a fixed pause after the deal
    # let a loaded CI run finish hand 1, and with it the match (1395 points in one hand), first
    _wait_for(seat_out, IN_PLAY, seat)
    host.send_signal(signal.SIGKILL)
    host.wait()
    before = replay_log(log.read_bytes())
    assert before.result is None and before.hands, "killed mid-match"
    resumed_out = tmp_path / "resumed.out"
    resumed = _start(
        [
            "host",
            "--resume",
            str(log),
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-announce",
            "--identity",
            str(tmp_path / "host.pem"),
        ],
        resumed_out,
    )
    _wait_for(resumed_out, r"table 'den' \(classic\) listening on 127\.0\.0\.1", resumed)
    try:
        _finish_unless("Traceback", resumed_out, seat, resumed)
    except (subprocess.TimeoutExpired, AssertionError) as e:
        raise AssertionError(f"{e}\n{_outputs(host_out, resumed_out, seat_out)}") from None
    assert seat.returncode == resumed.returncode == 0, _outputs(host_out, resumed_out, seat_out)
    _check_agree(log, {1: tmp_path / "alice.cnlog"})
    header = next(iter(iter_records(log.read_bytes())))
    assert [s["bot"] for s in header.fields["seats"]] == [True, False, True, True]
    _audit(log, tmp_path / "alice.cnlog")


def test_discovery_on_loopback_then_join_by_name(tmp_path: Path) -> None:
    """The host announces to a loopback port; `canasta tables` and `canasta join` hear it."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        beacon_port = probe.getsockname()[1]
    host, port, fingerprint, _ = _host(
        tmp_path,
        "--players",
        "2",
        "--announce",
        "--announce-to",
        f"127.0.0.1:{beacon_port}",
        "--name",
        "loopback-table",
        "--hands",
        "1",  # what is tested is finding the table: one hand is played, not a whole match
    )
    listing = subprocess.run(
        [*CLI, "tables", "--port", str(beacon_port), "--interface", "127.0.0.1", "--seconds", "3"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    assert "loopback-table" in listing and f"127.0.0.1:{port}" in listing and fingerprint in listing
    out = tmp_path / "finder.out"
    seat = _start(
        [
            "join",
            "loopback-table",
            "--listen-port",
            str(beacon_port),
            "--listen-interface",
            "127.0.0.1",
            "--bot",
            "greedy",
            "--identity",
            str(tmp_path / "finder.pem"),
            "--known-hosts",
            str(tmp_path / "known_hosts"),
            "--log",
            str(tmp_path / "finder.cnlog"),
        ],
        out,
    )
    _finish(seat, host)
    assert seat.returncode == host.returncode == 0, out.read_text()
    _check_agree(tmp_path / "host.cnlog", {1: tmp_path / "finder.cnlog"})


def test_three_deck_and_contract_games_across_processes(tmp_path: Path) -> None:
    """Samba, Bolivia and "May I?" each play a whole all-bot match over the LAN protocol (Samba
    to a lower target than its 10000: fewer hands, the same protocol; Bolivia's match is four
    hands whatever the target, May I?'s its deals, one per contract). The three tables play at
    once, each its own host and seat processes, as tables on one LAN do."""
    tables = []
    for variant, extra in (("samba", ("--target", "3000")), ("bolivia", ()), ("may-i", ())):
        work = tmp_path / variant
        work.mkdir()
        host, port, fingerprint, _ = _host(work, "--players", "2", "--variant", variant, *extra)
        seat, _ = _join(work, "alice", port, fingerprint, work / "alice.cnlog")
        tables.append((variant, work, host, seat))
    for variant, work, host, seat in tables:
        _finish(seat, host)
        assert seat.returncode == host.returncode == 0, variant
        _check_agree(work / "host.cnlog", {1: work / "alice.cnlog"})
    _audit(*(tmp_path / variant / "host.cnlog" for variant in ("samba", "bolivia", "may-i")))


def _labels_and_points(rules_name: str) -> list[bytes]:
    from canasta_net.canasta.rules import preset
    from canasta_net.deal.blind.points import card_points
    from canasta_net.deal.blind.proofs.stages import card_points as proved_card_points
    from canasta_net.deal.blind.schedule import labels_for_rules

    labels = labels_for_rules(preset(rules_name))
    points = list(card_points(labels)) + list(proved_card_points(tuple(labels)))  # v1 and v2
    return [label.encode() for label in labels] + points


def test_blind_match_across_processes(tmp_path: Path) -> None:
    """``--deal blind`` (the proof-carrying deal, ``blind-v2`` in the log): a one-hand match
    (stopped by agreement at the table's limit, which keeps the suite short: a second blind hand
    across processes is played in ``test_seat_killed_mid_match_reconnects_and_plays_on``), each
    of four seats in its own process; every copy audits and the host's log holds no card point
    or label of a card before it is public."""
    host, port, fingerprint, _ = _host(
        tmp_path, "--players", "4", "--deal", "blind", "--hands", "1"
    )
    joins = [
        _join(tmp_path, name, port, fingerprint, tmp_path / f"{name}.cnlog")[0]
        for name in ("alice", "bob", "carol")
    ]
    _finish(*joins, host)
    assert [p.returncode for p in (*joins, host)] == [0, 0, 0, 0]
    seats = {}
    for name in ("alice", "bob", "carol"):
        path = tmp_path / f"{name}.cnlog"
        header = next(iter(iter_records(path.read_bytes())))
        assert header.fields["deal"] == "blind-v2"  # --deal blind: the proof-carrying deal
        seats[[s["name"] for s in header.fields["seats"]].index(name)] = path
    _check_agree(tmp_path / "host.cnlog", seats)
    _audit(tmp_path / "host.cnlog", *seats.values())
    # no card label and no bare card point anywhere in the log: cards travel encrypted
    data = (tmp_path / "host.cnlog").read_bytes()
    for needle in _labels_and_points("classic"):
        assert needle not in data


@pytest.mark.parametrize("how", ["quit", "SIGTERM", "SIGINT"])
def test_a_host_that_leaves_tells_the_seats_and_they_exit(tmp_path: Path, how: str) -> None:
    """The host's person types ``quit`` (or the host process is stopped) mid-match: the joiner
    hears why in a ``bye``, prints it and exits at once, without trying to reconnect."""
    host_out = tmp_path / "host.out"
    host = _start(
        [
            "host",
            "--bind",
            "127.0.0.1",
            "--port",
            "0",
            "--no-announce",
            "--players",
            "2",
            "--player-name",
            "hostess",
            "--delay",  # the bots' pace for a person watching (0.3 s a move) is not tested here
            "0",
            "--identity",
            str(tmp_path / "host.pem"),
            "--log",
            str(tmp_path / "host.cnlog"),
        ],
        host_out,
        stdin=subprocess.PIPE,
    )
    line = _wait_for(host_out, r"listening on 127\.0\.0\.1:\d+; host fingerprint [a-z0-9-]+", host)
    port = int(re.search(r":(\d+);", line).group(1))  # type: ignore[union-attr]
    seat, seat_out = _join(tmp_path, "alice", port, line.rsplit(" ", 1)[1], tmp_path / "a.cnlog")
    _wait_for(seat_out, r"hand 1 is dealt", seat)
    _wait_for(host_out, r"Your move", host)  # the match waits for the host's person
    if how == "quit":
        assert host.stdin is not None
        host.stdin.write(b"quit\n")
        host.stdin.flush()
        reason = "the host quit"
    else:
        host.send_signal(getattr(signal, how))
        reason = "the host was stopped"
    try:
        assert seat.wait(10) == 0, _outputs(host_out, seat_out)
        assert host.wait(10) == 0, _outputs(host_out, seat_out)
    except subprocess.TimeoutExpired:
        raise AssertionError(_outputs(host_out, seat_out)) from None
    said = seat_out.read_text()
    assert f"finished: {reason}" in said, said
    assert "reconnecting" not in said, said
    assert replay_log((tmp_path / "a.cnlog").read_bytes()).result is None  # stopped mid-match
    # the host's choice is a stop by agreement, written before the bye; a stopped process
    # leaves its log cut (it can be resumed)
    last = list(iter_records((tmp_path / "host.cnlog").read_bytes()))[-1]
    assert (last.kind == "match-stop") == (how == "quit"), last.kind
    if how == "quit":
        assert last.fields["reason"] == "host-quit" and last.fields["mid_hand"] is True
        assert list(iter_records((tmp_path / "a.cnlog").read_bytes()))[-1].hash == last.hash


def _stand_in_moves(log: Path, seat: int) -> int:
    """How many moves a stand-in has made for ``seat`` so far, read from the host's log (each
    record is on disk before it is sent, so the file is always whole records, perhaps a tail)."""
    stand_in = False
    moves = 0
    for record in iter_records(log.read_bytes()):
        f = record.fields
        if record.kind == "seat-event" and f["seat"] == seat and f["event"] == "stand-in":
            stand_in = True
        elif stand_in and record.kind == "action" and record.action is not None:
            moves += record.action["seat"] == seat
    return moves


def test_a_seat_killed_and_rejoined_is_in_the_audit(tmp_path: Path) -> None:
    """kill -9 a joined seat mid-hand; its hold runs out, a stand-in plays for it, and the seat
    comes back. The host's log (format 2) records the disconnection and the stand-in, and the
    audit reports them per seat, with each seat's moves and thinking time."""
    log = tmp_path / "host.cnlog"
    host, port, fingerprint, host_out = _host(
        tmp_path, "--players", "2", "--delay", "0.02", "--hold", "0.2", "--hands", "3"
    )
    first, first_out = _join(tmp_path, "alice", port, fingerprint, tmp_path / "alice-1.cnlog")
    _wait_for(first_out, r"hand 1 is dealt", first)  # revealed: a stand-in can take the seat
    first.send_signal(signal.SIGKILL)
    first.wait()
    deadline = time.monotonic() + 30
    # the rejoin starts once the stand-in has played for alice (it plays on while the new
    # process starts: waiting for more moves here let it end a short match before the rejoin,
    # on a loaded machine)
    while _stand_in_moves(log, 1) < 1:
        assert time.monotonic() < deadline and host.poll() is None, _outputs(host_out, first_out)
        time.sleep(0.05)
    second, second_out = _join(tmp_path, "alice", port, fingerprint, tmp_path / "alice-2.cnlog")
    try:
        _finish_unless("Traceback", host_out, second, host, seconds=60)
    except (subprocess.TimeoutExpired, AssertionError) as e:
        raise AssertionError(f"{e}\n{_outputs(host_out, first_out, second_out)}") from None
    assert second.returncode == host.returncode == 0, _outputs(host_out, first_out, second_out)
    result = subprocess.run(
        [sys.executable, "-m", "replay", "audit", "--json", str(log)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)["files"][0]
    assert report["log"]["format"] == 2
    activity = report["activity"]
    assert activity["timed"]
    alice = activity["seats"][1]
    assert alice["disconnections"] == 1 and alice["stand_ins"] == 1
    assert alice["stand_in_moves"] >= 1 and alice["moves"] >= 1
    assert alice["thinking_ms"] is not None and alice["thinking_ms"]["max"] >= 0
    events = [(e["seat"], e["event"]) for e in activity["events"]]
    assert events[:3] == [(1, "lost"), (1, "held"), (1, "stand-in")]
    assert (1, "connected") in events
    assert all(e["claimed_by"] == "host" for e in activity["events"])
    text = subprocess.run(
        [sys.executable, "-m", "replay", "audit", str(log)],
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    assert "seat 1 (alice): " in text and "1 disconnection" in text, text
    assert f"{alice['stand_in_moves']} moves by a stand-in" in text, text
