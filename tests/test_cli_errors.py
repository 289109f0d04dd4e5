"""A CLI that fails in one line, a seat that stops on a refusal for good, trust on first use.

The errors a user can cause (a log file that exists, a port in use, a host that cannot be
reached, no table heard, a host key that changed, a refusal by the host) end in one sentence and
a non-zero exit, never a traceback, and leave no empty log behind. One test runs real processes
on 127.0.0.1: a host, and `canasta join` answering the trust-on-first-use question from a pipe.
"""

from __future__ import annotations

import io
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from twisted.internet import reactor
from twisted.internet.defer import Deferred, succeed
from twisted.internet.error import ConnectionDone
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.logger import Logger, LogPublisher
from twisted.python.failure import Failure

from canasta_net import i18n
from canasta_net.canasta.rules import preset
from canasta_net.identity import Identity
from canasta_net.net import wire
from canasta_net.net.peer import PeerSession, connect_with_retry
from canasta_net.table.config import TableConfig
from canasta_net.ui import cli
from canasta_net.ui.app import start_host
from canasta_net.ui.log_output import log_observer

CLI = [sys.executable, "-m", "canasta_net"]


class Events:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.reason: str | None = None

    def show(self, view: dict[str, Any]) -> None:
        pass

    def event(self, text: str) -> None:
        self.lines.append(text)

    def choose(self, legal: list[str], view: dict[str, Any]) -> str:
        raise AssertionError("not prompted")

    def finished(self, reason: str) -> None:
        self.reason = reason


def frame(message: dict[str, Any]) -> bytes:
    body = wire.encode(message)
    return len(body).to_bytes(4, "big") + body


class MemoryEndpoint:
    """Connects every attempt at once to a StringTransport; keeps the protocols."""

    def __init__(self) -> None:
        self.protocols: list[Any] = []

    def connect(self, factory: Any) -> Deferred[Any]:
        protocol = factory.buildProtocol(None)
        protocol.makeConnection(StringTransport())
        self.protocols.append(protocol)
        return succeed(protocol)


@pytest.mark.parametrize("code", ["bad-password", "table-full", "version-mismatch"])
def test_a_seat_stops_on_a_refusal_it_cannot_recover_from(code: str) -> None:
    clock, endpoint, events = Clock(), MemoryEndpoint(), Events()
    session = PeerSession(Identity.generate(), events)
    service = connect_with_retry(clock, endpoint, session)
    endpoint.protocols[0].dataReceived(frame({"t": "error", "code": code, "message": "no"}))
    endpoint.protocols[0].connectionLost(Failure(ConnectionDone()))
    clock.advance(600)
    assert len(endpoint.protocols) == 1, "the seat reconnected after a final refusal"
    assert not service.running
    assert session.problem is not None and code in session.problem
    assert events.reason is not None and code in events.reason


def test_a_seat_retries_after_a_passing_refusal_or_a_lost_connection() -> None:
    clock, endpoint, events = Clock(), MemoryEndpoint(), Events()
    session = PeerSession(Identity.generate(), events)
    service = connect_with_retry(clock, endpoint, session)
    endpoint.protocols[0].dataReceived(frame({"t": "error", "code": "not-started", "message": "x"}))
    endpoint.protocols[0].connectionLost(Failure(ConnectionDone()))
    clock.advance(2)
    assert len(endpoint.protocols) == 2 and service.running and session.problem is None
    service.stopService()


def test_a_click_error_under_the_reactor_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli._exit_on_click_error(Failure(click.ClickException("no tables heard; give HOST:PORT")))
    assert exit_.value.code == 1
    assert capsys.readouterr().err == "Error: no tables heard; give HOST:PORT\n"


def test_no_table_heard_is_a_click_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import canasta_net.net.discovery as discovery

    monkeypatch.setattr(discovery, "listen_for_tables", lambda *a, **k: succeed([]))
    failure = Deferred.fromCoroutine(cli._pick_from_beacons(None, 1, "127.0.0.1", None))
    caught: list[Failure] = []
    failure.addErrback(caught.append)
    assert caught and caught[0].check(click.ClickException)
    assert "no tables heard" in str(caught[0].value)


def _serve_on(port: int, log_path: Path) -> Failure:
    """Start ``_serve`` on ``port`` (it fails before it needs the reactor to run)."""
    rules = preset("classic-2p")
    config = TableConfig.simple("t", rules, 2, host_plays=False)
    identity = Identity.generate()
    running = Deferred.fromCoroutine(
        cli._serve(
            reactor,
            config,
            identity,
            seed_store=None,  # type: ignore[arg-type]
            bind="127.0.0.1",
            port=port,
            log_path=log_path,
            resume=False,
            play_locally=False,
            watch=False,
            name="host",
            announce_to=None,
        )
    )
    caught: list[Failure] = []
    running.addErrback(caught.append)
    assert caught, "the host started"
    return caught[0]


def test_a_port_in_use_is_one_sentence_and_leaves_no_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        failure = _serve_on(port, tmp_path / "host.cnlog")
    assert failure.check(click.ClickException), failure
    assert not (tmp_path / "host.cnlog").exists(), "a 0-byte log was left behind"
    with pytest.raises(SystemExit):
        cli._exit_on_click_error(failure)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"port {port} on 127.0.0.1 is in use" in err


def test_an_existing_log_is_one_sentence(tmp_path: Path) -> None:
    existing = tmp_path / "host.cnlog"
    existing.write_bytes(b"keep me")
    failure = _serve_on(0, existing)
    assert failure.check(click.ClickException), failure
    assert str(failure.value) == f"{existing} exists: choose a new file for the log"
    assert existing.read_bytes() == b"keep me"


def test_the_start_of_a_host_that_cannot_listen_removes_its_new_log(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        config = TableConfig.simple("t", preset("classic-2p"), 2, host_plays=False)
        started = Deferred.fromCoroutine(
            start_host(
                reactor,
                config,
                Identity.generate(),
                bind="127.0.0.1",
                port=taken.getsockname()[1],
                log_path=tmp_path / "h.cnlog",
            )
        )
        caught: list[Failure] = []
        started.addErrback(caught.append)
    assert caught and not (tmp_path / "h.cnlog").exists()


def test_the_question_reads_one_answer() -> None:
    runner = CliRunner()

    @click.command()
    def ask() -> None:
        click.echo("yes" if cli._ask_yes_no("Is it?") else "no")

    assert runner.invoke(ask, input="y\n").output.endswith("yes\n")
    assert runner.invoke(ask, input="yes\n").output.endswith("yes\n")
    assert runner.invoke(ask, input="\n").output.endswith("no\n")
    assert runner.invoke(ask, input="").output.endswith("no\n")  # no answer is no
    # in the person's language: its mark, its yes (and y still)
    try:
        i18n.set_language("ru")
        asked = runner.invoke(ask, input="да\n").output
        assert "Is it? [д/Н]: " in asked and asked.endswith("yes\n")
        assert runner.invoke(ask, input="Д\n").output.endswith("yes\n")
        assert runner.invoke(ask, input="y\n").output.endswith("yes\n")
        assert runner.invoke(ask, input="нет\n").output.endswith("no\n")
        i18n.set_language("pl")
        assert runner.invoke(ask, input="tak\n").output.endswith("yes\n")
    finally:
        i18n.set_language("en")


def test_verbose_output_filters_by_level_and_escapes() -> None:
    out = io.StringIO()
    publisher = LogPublisher(log_observer(out, 1))
    log = Logger(namespace="canasta_net.net.host", observer=publisher)
    log.debug("not shown at -v")
    log.info("Starting factory {factory!r}", factory=object())  # Twisted's chatter: -vv only
    log.info("refused {name}: {why}", name="ev\x1b]0;x\x07il", why="table-full")
    text = out.getvalue()
    assert "not shown" not in text and "Starting factory" not in text and "table-full" in text
    assert "\x1b" not in text and "\\x1b" in text
    out_vv = io.StringIO()
    Logger(observer=LogPublisher(log_observer(out_vv, 2))).debug("shown at -vv")
    assert "shown at -vv" in out_vv.getvalue()


# ------------------------------------------------------------------ real processes on 127.0.0.1


def _run_cli(*args: str, stdin: str = "", env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], input=stdin, capture_output=True, text=True, timeout=30, env=env
    )


def test_trust_on_first_use_by_address_refusals_and_a_changed_key(tmp_path: Path) -> None:
    env = dict(
        os.environ,
        PYTHONUNBUFFERED="1",
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
    )
    out = tmp_path / "host.out"
    host = subprocess.Popen(
        [
            *CLI,
            "host",
            "--bind",
            "127.0.0.1",
            "--port",
            "0",
            "--no-announce",
            "--host-bot",
            "--players",
            "2",
            "--password",
            "sesame",
            "--identity",
            str(tmp_path / "host.pem"),
            "--log",
            str(tmp_path / "host.cnlog"),
        ],
        stdout=out.open("wb"),
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    try:
        deadline = time.monotonic() + 20
        while not (
            found := re.search(r"127\.0\.0\.1:(\d+); host fingerprint (\S+)", out.read_text())
        ):
            assert host.poll() is None and time.monotonic() < deadline, out.read_text()
            time.sleep(0.05)
        port, fingerprint = found.group(1), found.group(2)
        address = f"127.0.0.1:{port}"
        known = tmp_path / "known_hosts"
        seat_log = tmp_path / "seat.cnlog"
        join = ["join", address, "--identity", str(tmp_path / "seat.pem"), "--bot", "greedy"]
        join += ["--known-hosts", str(known), "--log", str(seat_log), "--password", "wrong"]

        # "n": the question is asked, and the answer is read: nothing joined, nothing pinned
        no = _run_cli(*join, stdin="n\n", env=env)
        assert no.returncode == 1, no
        assert fingerprint in no.stderr and "[y/N]" in no.stderr
        assert "not confirmed" in no.stderr and "Traceback" not in no.stderr
        assert not known.exists() and not seat_log.exists()

        # "y": pinned, then connected; the wrong password is final: one line, no seat log
        yes = _run_cli(*join, stdin="y\n", env=env)
        assert yes.returncode == 1, yes
        assert f"{address.lower()} {fingerprint}" in known.read_text()
        assert "Error: the host refused (bad-password)" in yes.stderr
        assert "Traceback" not in yes.stderr + yes.stdout
        assert not seat_log.exists(), "a refused join left an empty seat log"

        # the pinned key changed: refused with both fingerprints and how to clear the pin
        other = Identity.generate().fingerprint
        known.write_text(known.read_text().replace(fingerprint, other))
        changed = _run_cli(*join, env=env)
        assert changed.returncode == 1, changed
        (line,) = changed.stderr.splitlines()
        assert fingerprint in line and other in line and str(known) in line
        assert "fingerprint changed" in line
        forget = f"canasta forget-host {address} --known-hosts {known}"
        assert forget in line
        forgot = CliRunner().invoke(cli.main, forget.split()[1:])
        assert forgot.exit_code == 0, forgot.output
        assert address not in known.read_text()

        # nothing listening: one line
        with socket.socket() as closed:
            closed.bind(("127.0.0.1", 0))
            free = closed.getsockname()[1]
        unreachable = _run_cli("join", f"127.0.0.1:{free}", "--known-hosts", str(known), env=env)
        assert unreachable.returncode == 1
        assert unreachable.stderr.startswith(f"Error: cannot reach 127.0.0.1:{free}")
        assert len(unreachable.stderr.splitlines()) == 1

        # stopped with nobody seated: the host's log holds nothing, and is not left behind
        host.terminate()
        assert host.wait(20) == 0, out.read_text()
        assert not (tmp_path / "host.cnlog").exists(), "the host left an empty log"
    finally:
        if host.poll() is None:
            host.kill()
            host.wait()


@pytest.mark.parametrize("command", ["play", "host"])
def test_a_game_the_blind_deal_cannot_deal_is_one_sentence(tmp_path: Path, command: str) -> None:
    log = tmp_path / "game.cnlog"
    args = [command, "--variant", "may-i", "--deal", "blind", "--log", str(log)]
    if command == "host":
        args += ["--bind", "127.0.0.1", "--no-announce"]
    result = CliRunner().invoke(cli.main, args)
    assert result.exit_code == 2
    assert "--deal blind: may-i cannot be dealt blind (the Canasta games only)" in result.output
    assert "Traceback" not in result.output and not log.exists()


@pytest.mark.parametrize(("variant", "players", "seats"), [("classic", 7, 4), ("classic-2p", 3, 2)])
def test_more_players_than_seats_is_one_sentence(
    tmp_path: Path, variant: str, players: int, seats: int
) -> None:
    """Before, the host took --players 7 at a four-seat table as four people, silently."""
    log = tmp_path / "game.cnlog"
    args = ["host", "--variant", variant, "--players", str(players), "--log", str(log)]
    result = CliRunner().invoke(cli.main, [*args, "--bind", "127.0.0.1", "--no-announce"])
    assert result.exit_code == 2
    said = f"--players {players}: a {variant} table has {seats} seats"
    assert said in result.output and "Traceback" not in result.output and not log.exists()
