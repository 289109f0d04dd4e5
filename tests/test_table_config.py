"""The table's setup in the log's header (``table_config``) and ``canasta host --resume LOG``.

The map round-trips through a real header, is read back strictly (every bad field is one clear
``TableConfigError``), keeps the password only as a salted scrypt hash, and the CLI resumes from
the log alone, refusing a flag that contradicts it with one line and exit status 2.
"""

from __future__ import annotations

import copy
import io
import math
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from english_text import english_sentences
from twisted.internet.task import Clock

from canasta_net import i18n
from canasta_net.canasta.rules import preset
from canasta_net.games import game_for, game_of_rules
from canasta_net.identity import Identity
from canasta_net.log import LogWriter, iter_records, open_log_for_writing, parse_header
from canasta_net.net.host import TableService
from canasta_net.table.config import (
    TABLE_CONFIG_VERSION,
    TableConfig,
    TableConfigError,
    TablePassword,
)
from canasta_net.table.host import HostTable, SeatEntry
from canasta_net.ui import cli

HOST = Identity.from_seed(b"table config test host")
TABLE_ID = bytes(range(16))
# A cheap scrypt cost for tests that make many passwords; the policy stores its own parameters.
FAST: dict[str, Any] = {"log2_n": 10, "r": 1, "p": 1}


def classic_config(**kw: Any) -> TableConfig:
    cfg = TableConfig.simple(
        "den", preset("classic").with_changes(target=1200), 2, host_plays=False, **kw
    )
    cfg.seats[0].name = "hostess"
    return cfg


def header_of(data: bytes) -> dict[str, Any]:
    return parse_header(next(iter(iter_records(data)))).fields


def write_log(path: Path, cfg: TableConfig | None, *, deal: str = "commit-reveal") -> None:
    """A log holding the header (and nothing else) of a table set up as ``cfg`` (None: a log
    from before headers kept the setup)."""
    game = game_for("classic") if cfg is None else game_of_rules(cfg.rules)
    seats = [
        SeatEntry(f"seat-{n}", Identity.from_seed(bytes([n]) * 8).public_key, n != 1)
        for n in range(1, game.players)
    ]
    seats.insert(0, SeatEntry("hostess", HOST.public_key, True))
    with open_log_for_writing(path) as file:
        HostTable(
            game,
            TABLE_ID,
            seats,
            LogWriter(file, HOST, fsync=False),
            deal_mode=deal,
            insecure=cfg is not None and cfg.insecure_seed is not None,
            table_fields=None if cfg is None else cfg.to_log_fields(),
        )


# --------------------------------------------------------------------------- the map


def test_the_config_round_trips_through_a_real_header(tmp_path: Path) -> None:
    cfg = classic_config(
        password=TablePassword.create("sesame", **FAST),
        hold_seconds=12.5,
        bot_delay=0.25,
        bot_kind="random",
        max_hands=3,
        insecure_seed=-5,
    )
    path = tmp_path / "host.cnlog"
    write_log(path, cfg)
    fields = header_of(path.read_bytes())
    assert fields["table_config"]["v"] == TABLE_CONFIG_VERSION
    back = TableConfig.from_log_header(fields)
    assert back == cfg
    assert back is not None and back.people == 2 and back.deal == "commit-reveal"
    assert [plan.kind for plan in back.seats] == ["host", "player", "bot", "bot"]
    assert b"sesame" not in path.read_bytes()


def test_the_table_service_writes_its_config_into_the_header() -> None:
    cfg = TableConfig.simple("bots only", preset("classic"), 1, host_plays=False)
    log = io.BytesIO()
    TableService(cfg, HOST, Clock(), log, fsync=False, table_id=TABLE_ID)._start()
    fields = header_of(log.getvalue())
    assert fields["table_config"] == cfg.to_log_fields()
    assert TableConfig.from_log_header(fields) == cfg


def test_a_log_from_before_the_config_has_none(tmp_path: Path) -> None:
    write_log(tmp_path / "old.cnlog", None)
    assert TableConfig.from_log_header(header_of((tmp_path / "old.cnlog").read_bytes())) is None


def test_the_password_is_a_salted_hash_checked_in_constant_time() -> None:
    policy = TablePassword.create("sesame", **FAST)
    again = TablePassword.create("sesame", **FAST)
    assert policy.salt != again.salt and policy.digest != again.digest  # a fresh salt each time
    assert policy.matches("sesame") and again.matches("sesame")
    assert not policy.matches("sesame2") and not policy.matches("")
    assert TablePassword.from_fields(policy.to_fields()) == policy
    default = TablePassword.create("x")
    assert (default.log2_n, default.r, default.p, len(default.salt)) == (14, 8, 1, 16)


def _good() -> dict[str, Any]:
    return classic_config(password=TablePassword.create("pw", **FAST)).to_log_fields()


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(fields: dict[str, Any]) -> None:
        target: Any = fields
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value

    return change


def _drop(path: tuple[Any, ...]) -> Callable[[dict[str, Any]], None]:
    def change(fields: dict[str, Any]) -> None:
        target: Any = fields
        for step in path[:-1]:
            target = target[step]
        del target[path[-1]]

    return change


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (_set(("v",), 2), "version 2"),
        (_set(("v",), True), "version True"),
        (_drop(("name",)), "lacks name"),
        (_set(("extra",), 1), "unknown fields extra"),
        (_set(("name",), 7), "table_config.name"),
        (_set(("name",), "x" * 201), "table_config.name"),
        (_set(("seats",), []), "4 seats"),
        (_set(("seats",), "host"), "4 seats"),
        (_set(("seats", 0, "kind"), "bot"), "seats[0].kind"),
        (_set(("seats", 2, "kind"), "host"), "seats[2].kind"),
        (_set(("seats", 1), ["player", ""]), "seats[1] must be a map"),
        (_drop(("seats", 3, "name")), "seats[3] lacks name"),
        (_set(("host_plays",), 1), "host_plays"),
        (_set(("bot_kind",), "clever"), "bot_kind"),
        (_set(("hold_seconds",), -1.0), "hold_seconds"),
        (_set(("hold_seconds",), math.nan), "hold_seconds"),
        (_set(("bot_delay",), "0"), "bot_delay"),
        (_set(("bot_delay",), False), "bot_delay"),
        (_set(("max_hands",), 0), "max_hands"),
        (_set(("max_hands",), 2.0), "max_hands"),
        (_set(("insecure_seed",), 3), "insecure"),
        (_set(("password",), "pw"), "password must be a map"),
        (_set(("password", "kdf"), "pbkdf2"), "kdf"),
        (_set(("password", "log2_n"), 30), "log2_n"),
        (_set(("password", "r"), 0), ".r "),
        (_set(("password", "salt"), b"short"), "salt"),
        (_set(("password", "hash"), "00" * 32), "hash"),
        (_drop(("password", "p")), "lacks p"),
    ],
)
def test_a_bad_map_is_refused_with_a_reason(
    change: Callable[[dict[str, Any]], None], says: str
) -> None:
    fields = copy.deepcopy(_good())
    change(fields)
    with pytest.raises(TableConfigError, match=says.replace(".", r"\.").replace("[", r"\[")):
        TableConfig.from_log_fields(preset("classic"), fields, deal="blind", insecure=False)


def test_the_header_s_own_fields_are_checked_too() -> None:
    fields = {"rules": {"nonsense": 1}, "deal": "commit-reveal", "insecure": False}
    with pytest.raises(TableConfigError, match="rule set"):
        TableConfig.from_log_header(fields | {"table_config": _good()})
    with pytest.raises(TableConfigError, match="must be a map"):
        TableConfig.from_log_fields(preset("classic"), [], deal="blind", insecure=False)


# --------------------------------------------------------------------------- the command


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """``canasta host`` without a reactor: what it would serve is recorded instead."""
    calls: list[dict[str, Any]] = []

    async def fake_serve(reactor: Any, config: TableConfig, identity: Any, **kw: Any) -> int:
        calls.append({"config": config, **kw})
        return 0

    def run(main: Callable[[Any], Coroutine[Any, Any, int]]) -> None:
        coroutine = main(None)
        try:
            coroutine.send(None)
        except StopIteration:
            return
        raise AssertionError("the fake serve does not wait")

    monkeypatch.setattr(cli, "_serve", fake_serve)
    monkeypatch.setattr(cli, "_run", run)
    return calls


def host(tmp_path: Path, *args: str) -> Any:
    base = ["host", "--bind", "127.0.0.1", "--no-announce", "--identity", str(tmp_path / "h.pem")]
    return CliRunner().invoke(cli.main, [*base, *args])


def test_resume_needs_nothing_but_the_log(tmp_path: Path, served: list[dict[str, Any]]) -> None:
    cfg = classic_config(password=TablePassword.create("sesame", **FAST), hold_seconds=5.0)
    write_log(tmp_path / "host.cnlog", cfg)
    result = host(tmp_path, "--resume", str(tmp_path / "host.cnlog"), "--port", "0")
    assert result.exit_code == 0, result.output
    (call,) = served
    assert call["config"] == cfg and call["resume"] and call["log_path"] == tmp_path / "host.cnlog"
    assert not call["play_locally"] and call["watch"] and call["name"] == "hostess"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--variant", "samba"], "--variant samba contradicts the log (which says classic)"),
        (["--target", "5000"], "--target 5000 contradicts the log (which says target 1200)"),
        (["--deal", "blind"], "--deal blind contradicts the log (which says --deal commit-reveal)"),
        (["--players", "3"], "--players 3 contradicts the log (which says 2 people and 2 bots)"),
        (["--bots", "1"], "--bots 1 contradicts the log (which says 2 people and 2 bots)"),
        (["--name", "hall"], "--name 'hall' contradicts the log (which says the table is 'den')"),
        (["--player-name", "h"], "--player-name 'h' contradicts the log (which says seat 0 is"),
        (["--password", "open"], "--password contradicts the log (which says the table has no"),
        (["--hold", "5"], "--hold 5 contradicts the log (which says --hold 60)"),
        (["--delay", "1"], "--delay 1 contradicts the log (which says --delay 0)"),
        (["--hands", "3"], "--hands 3 contradicts the log (which says no limit)"),
        (["--bot", "search"], "--bot search contradicts the log (which says --bot heuristic)"),
        (["--insecure-seed", "4"], "--insecure-seed contradicts the log (which says no test"),
        (["--log", "other.cnlog"], "contradicts --resume"),
    ],
)
def test_a_flag_that_contradicts_the_log_is_refused_in_one_line(
    tmp_path: Path, served: list[dict[str, Any]], flags: list[str], message: str
) -> None:
    write_log(tmp_path / "host.cnlog", classic_config())
    result = host(tmp_path, "--resume", str(tmp_path / "host.cnlog"), *flags)
    assert result.exit_code == 2, result.output
    assert result.output.startswith("Error: ") and result.output.count("\n") == 1, result.output
    assert message in result.output
    assert served == [] and "Traceback" not in result.output


def test_more_players_than_seats_is_refused_on_resume_as_on_a_new_table(
    tmp_path: Path, served: list[dict[str, Any]]
) -> None:
    """Before, the check compared min(--players, seats) with the log's people: at a table of
    four people --players 9 was taken as 4 (a new table refuses it)."""
    four = TableConfig.simple("den", preset("classic"), 4, host_plays=False)
    write_log(tmp_path / "host.cnlog", four)
    result = host(tmp_path, "--resume", str(tmp_path / "host.cnlog"), "--players", "9")
    assert result.exit_code == 2, result.output
    assert "--players 9: a classic table has 4 seats" in result.output
    assert served == [] and "Traceback" not in result.output


def test_flags_that_agree_with_the_log_are_accepted(
    tmp_path: Path, served: list[dict[str, Any]]
) -> None:
    cfg = classic_config(password=TablePassword.create("sesame", **FAST))
    write_log(tmp_path / "host.cnlog", cfg)
    agreeing = [
        ["--variant", "classic"],
        ["--target", "1200"],
        ["--players", "2"],
        ["--bots", "2"],
        ["--name", "den"],
        ["--player-name", "hostess"],
        ["--host-bot"],
        ["--password", "sesame"],
        ["--hold", "60"],
        ["--delay", "0"],
        ["--bot", "heuristic"],
        ["--deal", "commit-reveal"],
        ["--log", str(tmp_path / "host.cnlog")],
    ]
    for flags in agreeing:
        result = host(tmp_path, "--resume", str(tmp_path / "host.cnlog"), *flags)
        assert result.exit_code == 0, (flags, result.output)
    assert all(call["config"] == cfg for call in served)
    wrong = host(tmp_path, "--resume", str(tmp_path / "host.cnlog"), "--password", "open")
    assert "(which says the table has another password)" in wrong.output


def test_an_older_log_takes_the_rest_from_the_flags(
    tmp_path: Path, served: list[dict[str, Any]]
) -> None:
    write_log(tmp_path / "old.cnlog", None, deal="blind")
    result = host(tmp_path, "--resume", str(tmp_path / "old.cnlog"), "--players", "2", "--host-bot")
    assert result.exit_code == 0, result.output
    config = served[0]["config"]
    assert config.deal == "blind" and config.people == 2 and not config.host_plays
    refused = host(tmp_path, "--resume", str(tmp_path / "old.cnlog"), "--variant", "samba")
    assert refused.exit_code == 2 and "contradicts the log (which says classic)" in refused.output


@pytest.mark.parametrize(
    ("name", "mode"),
    [
        ("blind", "blind-v2"),
        ("blind-v2", "blind-v2"),
        ("blind-v1", "blind"),
        ("commit-reveal", "commit-reveal"),
    ],
)
def test_deal_blind_is_the_proof_carrying_deal_for_a_new_table(
    tmp_path: Path, served: list[dict[str, Any]], name: str, mode: str
) -> None:
    """``--deal blind`` makes a new table deal with proofs (its log says ``blind-v2``); the
    legacy deal without proofs is ``--deal blind-v1`` (its log says ``blind``, as before)."""
    result = host(tmp_path, "--deal", name, "--host-bot", "--log", str(tmp_path / "t.cnlog"))
    assert result.exit_code == 0, result.output
    assert served[0]["config"].deal == mode


@pytest.mark.parametrize(
    ("log_mode", "flag", "agrees"),
    [
        ("blind", "blind", True),  # a resumed table keeps its log's version
        ("blind", "blind-v1", True),
        ("blind", "blind-v2", False),
        ("blind-v2", "blind", True),
        ("blind-v2", "blind-v2", True),
        ("blind-v2", "blind-v1", False),
        ("blind-v2", "commit-reveal", False),
    ],
)
def test_a_resumed_blind_table_keeps_its_logs_version(
    tmp_path: Path, served: list[dict[str, Any]], log_mode: str, flag: str, agrees: bool
) -> None:
    write_log(tmp_path / "host.cnlog", classic_config(deal=log_mode), deal=log_mode)
    result = host(tmp_path, "--resume", str(tmp_path / "host.cnlog"), "--deal", flag)
    if agrees:
        assert result.exit_code == 0, result.output
        assert served[0]["config"].deal == log_mode
    else:
        assert result.exit_code == 2, result.output
        said = "blind-v1" if log_mode == "blind" else "blind"
        assert f"--deal {flag} contradicts the log (which says --deal {said})" in result.output


@pytest.mark.parametrize(
    ("content", "says"),
    [(b"", "is empty"), (b"\x93\x01\x02\x03 not a log", "is not a table's log")],
)
def test_an_unusable_log_is_one_sentence(
    tmp_path: Path, served: list[dict[str, Any]], content: bytes, says: str
) -> None:
    (tmp_path / "bad.cnlog").write_bytes(content)
    result = host(tmp_path, "--resume", str(tmp_path / "bad.cnlog"))
    assert result.exit_code == 1 and says in result.output, result.output
    assert result.output.count("\n") == 1 and "Traceback" not in result.output


def test_a_missing_log_is_refused(tmp_path: Path, served: list[dict[str, Any]]) -> None:
    result = host(tmp_path, "--resume", str(tmp_path / "nowhere.cnlog"))
    assert result.exit_code == 2 and "does not exist" in result.output
    assert served == []


def test_a_bad_config_in_the_log_is_one_sentence(
    tmp_path: Path, served: list[dict[str, Any]]
) -> None:
    cfg = classic_config()
    fields = cfg.to_log_fields()
    fields["seats"][2]["kind"] = "alien"
    path = tmp_path / "host.cnlog"
    game = game_for("classic")
    with open_log_for_writing(path) as file:
        seats = [
            SeatEntry(f"s{n}", (HOST if n == 0 else Identity.from_seed(bytes([n]))).public_key)
            for n in range(game.players)
        ]
        HostTable(game, TABLE_ID, seats, LogWriter(file, HOST, fsync=False), table_fields=fields)
    result = host(tmp_path, "--resume", str(path))
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert "cannot be resumed: table_config.seats[2].kind is 'alien'" in result.output


def test_the_hosts_bot_kind_is_a_flag(tmp_path: Path, served: list[dict[str, Any]]) -> None:
    result = host(tmp_path, "--port", "0", "--bot", "search:0.2", "--log", str(tmp_path / "a"))
    assert result.exit_code == 0, result.output
    assert served[0]["config"].bot_kind == "search:0.2"
    wrong = host(tmp_path, "--port", "0", "--bot", "clever")
    assert wrong.exit_code == 2 and "unknown bot 'clever'" in wrong.output
    assert "Traceback" not in wrong.output and served[1:] == []


@pytest.mark.parametrize("lang", ["ru", "bg", "pl"])
def test_the_contradictions_are_said_in_the_persons_language(
    tmp_path: Path, served: list[dict[str, Any]], lang: str
) -> None:
    write_log(tmp_path / "host.cnlog", classic_config())
    log = str(tmp_path / "host.cnlog")
    said = []
    try:
        for flags in (
            ["--players", "3"],
            ["--name", "hall"],
            ["--player-name", "h"],
            ["--password", "open"],
            ["--hands", "3"],
            ["--insecure-seed", "4"],
            ["--log", "other.cnlog"],
            ["--target", "5000"],
        ):
            result = host(tmp_path, "--lang", lang, "--resume", log, *flags)
            assert result.exit_code == 2, result.output
            said.append(result.output)
        # the refusals of a combination of options, and of a missing log, too
        said.append(host(tmp_path, "--lang", lang, "--players", "2", "--bots", "1").output)
        said.append(host(tmp_path, "--lang", lang, "--resume", str(tmp_path / "none")).output)
        said.append(host(tmp_path, "--lang", lang, "--variant", "may-i", "--target", "9").output)
        said.append(host(tmp_path, "--lang", lang, "--variant", "may-i", "--deal", "blind").output)
    finally:
        i18n.set_language("en")
    text = "".join(said)
    assert english_sentences(text, ("hall", "den", "hostess")) == [], text
    assert "Traceback" not in text and served == []
    _ = i18n.translator(lang).gettext
    assert _("the table is {name!r}").format(name="den") in text
    assert _("give --players or --bots, not both") in text
