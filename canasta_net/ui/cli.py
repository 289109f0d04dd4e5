"""The ``canasta`` command."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import random
import signal
import sys
import time
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click
from click.core import ParameterSource

from .. import __version__
from ..i18n import N_, _, current, ngettext
from ..table.config import MAX_SECONDS
from .command_language import HELP_VALUES, LocalizedGroup, lang_option

# Each command imports what it needs when it runs: ``canasta --help``, ``canasta variants`` or a
# refused flag start in a fraction of the time the table's modules (Twisted, TLS, the host, the
# blind deal's cryptography, the bots) take to import, and a command pays only for its own.
if TYPE_CHECKING:
    from twisted.internet.defer import Deferred
    from twisted.internet.error import CannotListenError
    from twisted.python.failure import Failure

    from ..identity import Identity
    from ..log import Header
    from ..log.seed_store import SeedStore
    from ..net.host import ServiceEvents
    from ..net.known_hosts import KnownHosts
    from ..net.peer import PeerSession
    from ..table.config import TableConfig
    from .app import HostedTable

DEFAULT_PORT = 47475
# Seconds between bot moves at a table where a person plays: a pace a person can follow.
PERSON_PACE = 0.3
DISCOVERY_PORT = 47474


def _rules_or_fail(variant: str) -> Any:
    """The rule set of a preset of any game (a RuleSet, or MayIRules for "May I?")."""
    from ..games import UnknownGame, all_variants, game_for

    try:
        return game_for(variant).rules
    except UnknownGame as e:
        problem = str(e)
        known = [name for name, _description in all_variants()]
        if variant not in known:  # a typo: said in the user's language, with every name
            said = _("unknown variant {name}; known: {names}")
            problem = said.format(name=repr(variant), names=", ".join(known))
        raise click.BadParameter(problem, param_hint="--variant") from None


# Values put into help texts after translating them.
HELP_VALUES["pace"] = f"{PERSON_PACE:g}"


@click.group(
    cls=LocalizedGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    help=N_("canasta-net: Canasta across a LAN, dealt fairly, every move recorded."),
)
@click.version_option(__version__, prog_name="canasta")
@lang_option
@click.option(
    "-v",
    "--verbose",
    count=True,
    help=N_(
        "Show what happens on the network on stderr (a host's connections: accepted, refused "
        "and why, dropped and why); -vv shows debugging detail too."
    ),
)
def main(verbose: int = 0) -> None:
    if verbose:
        from .log_output import show_log_events

        show_log_events(sys.stderr, verbose)


@main.command(help=N_("List the rule presets, with a line each (in your language: --lang)."))
@lang_option
def variants() -> None:
    from ..games import all_variants
    from ..variant_names import variant_summary

    lang = current().lang
    for name, description in all_variants():
        click.echo(f"{name:12} {variant_summary(name, description, lang)}")


@main.command(
    name="simulate",
    help=N_(
        "Engine-only self-play: play HANDS hands between bots and report speed and problems.\n\n"
        "With --log, one match is played through the host's table protocol (commit-reveal "
        "deal, signed actions, checkpoints) and journaled to FILE, which canasta-replay can "
        "then audit."
    ),
)
@click.option("--variant", default="classic", show_default=True, help=N_("Rule preset."))
@click.option("--hands", default=200, show_default=True, type=click.IntRange(1), help=N_("Hands."))
@click.option("--seed", default=0, show_default=True, type=int, help=N_("Random seed."))
@click.option(
    "--bots",
    "bot_kinds",
    default="random",
    show_default=True,
    help=N_(
        "Bot kinds by seat, comma-separated (random, greedy, heuristic, search,"
        " search:SECONDS); repeated over the seats."
    ),
)
@click.option("--json", "as_json", is_flag=True, help=N_("Print the report as JSON."))
@click.option(
    "--log",
    "log_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help=N_("Record one match (at most HANDS hands) through the table protocol into this .cnlog."),
)
def simulate_command(
    variant: str, hands: int, seed: int, bot_kinds: str, as_json: bool, log_path: Path | None
) -> None:
    from ..simulate import simulate

    rules = _rules_or_fail(variant)
    kinds = [k.strip() for k in bot_kinds.split(",") if k.strip()]
    if log_path is not None:
        _simulate_to_log(rules, hands, seed, kinds, log_path, as_json)
        return
    try:
        if not as_json and sys.stderr.isatty():
            with click.progressbar(length=hands, label=_("hands"), file=sys.stderr) as bar:
                report = simulate(rules, hands, seed, kinds, lambda done: bar.update(1))
        else:
            report = simulate(rules, hands, seed, kinds)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    data = report.to_dict()
    if as_json:
        click.echo(json.dumps(data, indent=2))
    else:
        said = _(
            "{variant}: {hands} hands ({matches} matches) in {seconds} s: {hands_per_second} "
            "hands/s, {actions_per_second} actions/s; stalls {stalls}, errors {errors}"
        )
        click.echo(said.format(**data))
        for sample in data["error_samples"]:
            click.echo(f"  {sample}")
    if report.stalls or report.errors:
        sys.exit(1)


def _simulate_to_log(
    rules: Any, hands: int, seed: int, kinds: list[str], path: Path, as_json: bool
) -> None:
    from ..canasta.rules import RuleSet
    from ..log import open_log_for_writing
    from ..log import records as R
    from ..table.local import recorded_match

    try:
        log_file = open_log_for_writing(path)
    except FileExistsError:
        raise click.UsageError(_exists().format(path=path)) from None
    start = time.perf_counter()
    with log_file:
        local = recorded_match(
            rules, log_file, seed=seed, bot_kinds=kinds or ["greedy"], max_hands=hands
        )
        local.play(max_hands=hands)
        local.stop(R.STOP_MAX_HANDS)  # the match did not end by itself: a stop at the limit
    seconds = time.perf_counter() - start
    result = local.host.match.result
    outcome = _match_outcome(result, local.host.match.scores, not isinstance(rules, RuleSet))
    data: dict[str, object] = {
        "log": str(path),
        "variant": rules.name,
        "hands": local.host.match.hands_played,
        "records": local.records + 1,
        "bytes": path.stat().st_size,
        "seconds": round(seconds, 3),
        "scores": local.host.match.scores,
        "result": None if result is None else result.describe(),
    }
    if as_json:
        click.echo(json.dumps(data, indent=2))
    else:
        said = _(
            "{path}: {hands} hands of {variant}, {records} records, {bytes} bytes in {seconds} s; "
            "{outcome}"
        )
        click.echo(said.format(**{**data, "path": path, "outcome": outcome}))


def _match_outcome(result: Any, scores: list[int], may_i: bool) -> str:
    """How a simulated match ended, in the person's words (the JSON keeps the engine's
    ``describe``): a Canasta result names teams, a May I? one seats (its hands are deals)."""
    if result is None:
        return _("match not finished, scores {scores}").format(scores=scores)
    count = int(result.hands)
    side = _("seat {seat}") if may_i else _("team {team}")
    names = [side.format(seat=i, team=i) for i in range(len(result.scores))]
    shown = ", ".join(f"{n} {s}" for n, s in zip(names, result.scores, strict=True))
    if result.winner is None and may_i:
        said = ngettext(
            "a draw after {n} deal: {scores}", "a draw after {n} deals: {scores}", count
        )
    elif result.winner is None:
        said = ngettext(
            "a draw after {n} hand: {scores}", "a draw after {n} hands: {scores}", count
        )
    elif may_i:
        said = ngettext(
            "{name} wins after {n} deal: {scores}", "{name} wins after {n} deals: {scores}", count
        )
    else:
        said = ngettext(
            "{name} wins after {n} hand: {scores}", "{name} wins after {n} hands: {scores}", count
        )
    winner = "" if result.winner is None else names[result.winner]
    return said.format(name=winner, n=count, scores=shown)


# --------------------------------------------------------------------------- the table commands
def _identity(path: Path | None) -> Identity:
    from ..identity import Identity, IdentityError, default_identity_path

    target = path or default_identity_path()
    try:
        return Identity.load_or_create(target)
    except IdentityError as e:
        raise click.ClickException(str(e)) from None


def _seed_store(identity_path: Path | None) -> SeedStore:
    """Seeds a seat committed to are kept beside its identity file until they are revealed."""
    from ..identity import default_identity_path
    from ..log.seed_store import SeedStore

    return SeedStore.beside(identity_path or default_identity_path())


def _run(main_coroutine: Callable[[Any], Coroutine[Any, Any, int]]) -> None:
    """Run an async main under the Twisted reactor and exit with its status. A user's mistake
    (a ``click.ClickException``) is shown in one line, as click shows it outside the reactor."""
    from twisted.internet import defer, task

    def exit_with(code: int) -> None:
        if code:
            raise SystemExit(code)  # react() exits with a SystemExit's code

    def runner(reactor: Any) -> Deferred[None]:
        running = defer.ensureDeferred(main_coroutine(reactor))
        return running.addCallback(exit_with).addErrback(_exit_on_click_error)

    task.react(runner)


def _exit_on_click_error(failure: Failure) -> None:
    """Turn a click error raised under the reactor into click's one line and exit status
    (react() would print "main function encountered error" and a traceback)."""
    failure.trap(click.ClickException, click.Abort)
    error = failure.value
    if isinstance(error, click.ClickException):
        error.show()
        raise SystemExit(error.exit_code)
    click.echo("Aborted!", err=True)
    raise SystemExit(1)


_known_hosts_option = click.option(
    "--known-hosts",
    "known_hosts_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help=N_("Pinned host fingerprints (default: ~/.config/canasta-net/known_hosts)."),
)

_identity_option = click.option(
    "--identity",
    "identity_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help=N_(
        "Identity key file (created on first use). Default: ~/.config/canasta-net/identity.pem"
    ),
)


def _ui_options(function: Any) -> Any:
    """``--ui`` (which client: the page, the terminal) and the hidden ``--no-browser``."""
    function = click.option(
        "--no-browser",
        is_flag=True,
        hidden=True,
        envvar="CANASTA_NO_BROWSER",
        help=N_("Never open a browser (tests); --ui auto then plays in the terminal."),
    )(function)
    return click.option(
        "--ui",
        type=click.Choice(["auto", "web", "terminal"]),
        default="auto",
        show_default=True,
        help=N_(
            "Where you play: web (your own page, served on 127.0.0.1 by this process, its "
            "link printed), terminal, or auto (the page when a browser can be opened; "
            "docs/web-client.md)."
        ),
    )(function)


def _local_player(
    reactor: Any,
    ui: str,
    no_browser: bool,
    *,
    done: Deferred[None],
    session_box: list[PeerSession],
    connection_box: list[Any],
    fingerprint: str,
    watch_command: str | None = None,
    page: Any = None,
) -> tuple[Any, Any]:
    """The person's client at this seat: the terminal's player, or the page's (then also the
    page). Its stdin reader is attached; the page is served and its link printed (unless
    ``page``, served already for the lobby, is given)."""
    from ..web.page import choose_ui
    from .players import TerminalPlayer

    if page is None:
        choice = choose_ui(ui, no_browser=no_browser)
        if choice.note:
            click.echo(choice.note, err=True)
        if not choice.web:
            terminal = TerminalPlayer(
                on_chat=lambda text: _send_chat(session_box, connection_box, text),
                on_quit=lambda: _fire(done),
                game=lambda: session_box[0].game if session_box else None,
                lang=current().lang,
            )
            return terminal, None
        page = _start_page(
            reactor,
            choice.open_browser,
            done=done,
            session_box=session_box,
            connection_box=connection_box,
        )
    page.model.set_host_fingerprint(fingerprint)
    if watch_command is not None:
        page.model.set_watch_command(watch_command)
    return page.player, page


def _start_page(
    reactor: Any,
    open_browser: bool,
    *,
    done: Deferred[None],
    session_box: list[PeerSession],
    connection_box: list[Any],
) -> Any:
    """Serve the seat's page (its link printed, the browser opened if asked), with standard
    input taking ``quit``."""
    from twisted.internet import stdio

    from ..web.page import PlayerPage, StdinQuit

    page = PlayerPage(
        reactor,
        game=lambda: session_box[0].game if session_box else None,
        on_chat=lambda text: _send_chat(session_box, connection_box, text),
        on_quit=lambda: _fire(done),
        lang=current().lang,
    )
    page.start(open_browser=open_browser)
    stdio.StandardIO(StdinQuit(page))
    return page


def _local_watcher(
    reactor: Any, ui: str, no_browser: bool, *, done: Deferred[None], fingerprint: str
) -> tuple[Any, Any]:
    """The watcher's client: the terminal's, or a page with the spectator's role (the public
    table, no hand, no move; then also the page, served and its link printed)."""
    from twisted.internet import stdio

    from ..web.page import PlayerPage, StdinQuit, choose_ui
    from .players import TerminalWatcher

    choice = choose_ui(ui, no_browser=no_browser)
    if choice.note:
        click.echo(choice.note, err=True)
    if not choice.web:
        return TerminalWatcher(on_finished=lambda: _fire(done), lang=current().lang), None
    page = PlayerPage(
        reactor,
        game=lambda: page.model.game,
        on_chat=None,
        on_quit=lambda: _fire(done),
        role="spectator",
        lang=current().lang,
    )
    page.model.set_host_fingerprint(fingerprint)
    page.start(open_browser=choice.open_browser)
    stdio.StandardIO(StdinQuit(page))
    return page.player, page


def _watch_events(service: Callable[[], Any]) -> ServiceEvents:
    """Print what happens at the table (for a host whose seat a bot plays)."""
    from ..log import parse_stored_record
    from ..net.host import ServiceEvents
    from ..net.peer import describe_record

    def on_record(info: Any) -> None:
        svc = service()
        if svc is None or svc.table is None or info.seq == 0:
            return
        record = parse_stored_record(info.stored, info.seq, svc.table.writer.header)
        line = describe_record(record, [slot.name for slot in svc.slots])
        if line:
            click.echo(line)

    return ServiceEvents(on_record=on_record)


async def _serve(
    reactor: Any,
    config: TableConfig,
    identity: Identity,
    *,
    seed_store: SeedStore,
    bind: str,
    port: int,
    log_path: Path,
    resume: bool,
    play_locally: bool,
    watch: bool,
    name: str,
    announce_to: tuple[str, int] | None,
    ui: str = "terminal",
    no_browser: bool = False,
) -> int:
    from twisted.internet.defer import Deferred
    from twisted.internet.error import CannotListenError

    from ..log import records as R
    from ..net.host import ServiceEvents
    from ..net.peer import PeerSession, in_a_thread
    from ..safe_text import safe_text
    from ..table.host import HostTable
    from .app import join_table, settle_memory, start_host

    done: Deferred[None] = Deferred()
    service_box: list[Any] = []
    events = (
        _watch_events(lambda: service_box[0] if service_box else None) if watch else ServiceEvents()
    )
    previous_finished = events.on_finished

    terminal_client: list[bool] = []  # set when the host's person plays in this terminal

    def finished(table: HostTable) -> None:
        if previous_finished:
            previous_finished(table)
        result = table.match.result
        said = result.describe() if result else _("stopped")
        if not terminal_client:  # a person's terminal client says it in its own words
            click.echo(_("match over: {result}").format(result=said))
        click.echo(_("log: {path}").format(path=log_path))
        reactor.callLater(0.2, _fire, done)  # the page's leave may fire it first

    events.on_finished = finished
    table_stopped: list[str] = []  # why the match could not go on, if it could not

    def on_stopped(reason: str) -> None:
        table_stopped.append(reason)
        click.echo(_("the table stops: {reason}").format(reason=safe_text(reason)), err=True)
        click.echo(_("log: {path}").format(path=log_path), err=True)
        _fire(done)

    events.on_stopped = on_stopped
    try:
        hosted = await start_host(
            reactor,
            config,
            identity,
            bind=bind,
            port=port,
            log_path=log_path,
            resume=resume,
            events=events,
        )
    except FileExistsError:
        raise click.ClickException(_exists().format(path=log_path)) from None
    except CannotListenError as e:
        raise click.ClickException(_cannot_listen(e)) from None
    except (OSError, ValueError) as e:
        raise click.ClickException(str(e)) from None
    service_box.append(hosted.service)
    # Ctrl-C, SIGTERM or any other stop of the reactor: the seats are told before it stops
    reactor.addSystemEventTrigger("before", "shutdown", hosted.close, "the host was stopped")
    reactor.addSystemEventTrigger("after", "shutdown", _close_log, log_path, hosted.log_file)
    host, actual_port = hosted.address
    click.echo(
        _(
            "table {name!r} ({variant}) listening on {address}; host fingerprint {fingerprint}"
        ).format(
            name=config.name,
            variant=config.rules.name,
            address=f"{host}:{actual_port}",
            fingerprint=identity.fingerprint,
        )
    )
    watch_command = _watch_command(host, actual_port, identity.fingerprint)
    click.echo(_("others can watch it: {command}").format(command=watch_command))
    click.echo(_("log: {path}").format(path=log_path), err=True)
    announcer = None
    if announce_to is not None:
        announcer = _start_announcer(reactor, hosted, identity, announce_to)
    page: Any = None
    if play_locally:
        session_box: list[PeerSession] = []
        connection_box: list[Any] = []
        player, page = _local_player(
            reactor,
            ui,
            no_browser,
            done=done,
            session_box=session_box,
            connection_box=connection_box,
            fingerprint=identity.fingerprint,
            watch_command=watch_command,
        )
        session = PeerSession(
            identity,
            player,
            name=name,
            seed_store=seed_store,
            observer=player.model,  # the client draws the table from its model
            hand_gate=player.hand_gate,  # the next hand waits until the person is ready
            background=in_a_thread,  # a blind-v2 seat works its stage out while it checks
        )
        session_box.append(session)
        if page is None:
            from twisted.internet import stdio

            stdio.StandardIO(player)
            terminal_client.append(True)
        local_host = "127.0.0.1" if bind in ("0.0.0.0", "") else bind
        connection_box.append(
            join_table(
                reactor,
                local_host,
                actual_port,
                session,
                identity,
                fingerprint=identity.fingerprint,
            )
        )
    settle_memory()  # what is alive now lives as long as the table
    await done
    if not hosted.service.finished and not table_stopped:
        # the host's `quit`: the log says the match stopped by the host's choice, not cut short
        hosted.service.stop_match(R.STOP_HOST_QUIT)
    # the host's `quit` (or the match's end): every seat hears why before the connections close
    await hosted.close("the match is over" if hosted.service.finished else "the host quit")
    if announcer is not None:
        stopped = announcer.stopListening()
        if stopped is not None:
            await stopped
    kept = _close_log(log_path, hosted.log_file)
    if not kept:
        click.echo(
            _("{path} removed: nobody joined, nothing was recorded").format(path=log_path), err=True
        )
    if page is not None:  # the page stays up with the score sheet, the verdict, the replay
        await page.after_table(log_path if kept else None, session_box[0].seat)
        await page.stop()
    return 1 if table_stopped else 0


def _watch_command(host: str, port: int, fingerprint: str) -> str:
    """The command that watches a table listening on ``host:port``: on every interface, the
    computer's name stands for the address the others reach it by."""
    if host in ("0.0.0.0", "::", ""):
        import socket

        host = socket.gethostname() or "THIS-COMPUTER"
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return f"canasta watch {where} --fingerprint {fingerprint}"


def _close_log(path: Path, file: Any) -> bool:
    """Close a new log, and remove it if nothing was written in it (a table nobody joined, a
    refused seat): an empty log records nothing, and it would stand in the way of the same --log
    next time. Return whether a log is kept. Safe to call again."""
    file.close()
    try:
        if path.stat().st_size == 0:
            path.unlink()
            return False
    except FileNotFoundError:
        return False
    except OSError:
        pass  # cannot tell: keep it
    return True


def _cannot_listen(error: CannotListenError) -> str:
    interface = error.interface or "every interface"
    cause = getattr(error.socketError, "strerror", None) or str(error.socketError)
    if getattr(error.socketError, "errno", None) == errno.EADDRINUSE:
        return (
            f"port {error.port} on {interface} is in use (another canasta host?): "
            "choose another --port"
        )
    return f"cannot listen on port {error.port} on {interface}: {cause}"


def _fire(done: Deferred[None]) -> None:
    if not done.called:
        done.callback(None)


def _send_chat(sessions: list[PeerSession], connections: list[Any], text: str) -> None:
    message = sessions[0].chat(text) if sessions and connections else None
    if message is None:
        return
    d = connections[0].whenConnected()
    d.addCallback(lambda proto: proto.send(message))


def _start_announcer(
    reactor: Any, hosted: HostedTable, identity: Identity, target: tuple[str, int]
) -> Any:
    from ..net.discovery import Beacon, start_announcing

    service = hosted.service

    def beacon() -> Beacon | None:
        if service.finished:
            return None
        return Beacon(
            table_name=service.config.name[:40] or "canasta",
            variant=service.config.rules.name,
            seats=service.config.rules.players,
            free_seats=service.free_seats,
            port=hosted.address[1],
            host_fingerprint=identity.fingerprint,
            table_id=service.table_id.hex(),
            deal_mode=service.config.deal,
        )

    return start_announcing(reactor, beacon, target=target)


def _exists() -> str:
    return _("{path} exists: choose a new file for the log")


def _check_deal(deal: str, rules: Any) -> None:
    """Refuse a deal mode (the log's string) that cannot deal ``rules``."""
    from ..games import game_of_rules
    from ..hand import CannotDealBlind, check_deal_mode, deal_name

    try:
        check_deal_mode(deal, game_of_rules(rules))
        return
    except CannotDealBlind as e:  # the one known cause, in the user's language
        problem = _("{game} cannot be dealt blind (the Canasta games only)").format(game=e.game)
    except ValueError as e:
        problem = str(e)
    raise click.UsageError(
        _("--deal {deal}: {problem}").format(deal=deal_name(deal), problem=problem)
    ) from None


def _deal_mode(name: str, rules: Any) -> str:
    """The deal mode a new table records for ``--deal name`` (``blind``: the proof-carrying
    version 2; ``blind-v1``: the legacy version, kept for tests and comparison)."""
    from ..hand import deal_mode_named

    mode = deal_mode_named(name)
    _check_deal(mode, rules)
    return mode


class _DealNames(click.Choice[str]):
    """``--deal``'s choices: the hand package's names, read when click first needs them (to
    check the flag or show the command's help), since that package imports the deals'
    cryptography, which only the table's commands use."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        from ..hand import DEAL_NAMES

        return tuple(DEAL_NAMES)

    @choices.setter
    def choices(self, _given: object) -> None:
        pass  # click's own __init__ sets them; they are the hand package's


_deal_option = click.option(
    "--deal",
    type=_DealNames(),
    default="commit-reveal",
    show_default=True,
    help=N_(
        "How hands are dealt: commit-reveal (fair; the host sees the deck) or blind (nobody, "
        "host included, sees another seat's cards, and every step of the deal is proved, so a "
        "cheating seat or host is caught at once; docs/blind-deal.md, docs/blind-proofs.md). "
        "blind-v2 is another name for blind; blind-v1 is the legacy blind deal without proofs."
    ),
)


def _check_bot_kind(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from ..canasta.bots import make_bot as make_canasta_bot

    if value is None:
        return None
    try:
        make_canasta_bot(value, random.Random(0))
    except ValueError as e:
        raise click.BadParameter(str(e)) from None
    return value


_bot_kind_option = click.option(
    "--bot",
    "bot_kind",
    default="heuristic",
    show_default=True,
    callback=_check_bot_kind,
    help=N_(
        "The host's bots: random, greedy, heuristic, or search[:SECONDS] (searches a move in "
        "worker processes, 0.5 s unless told; docs/bots.md)."
    ),
)


@main.command(
    help=N_("Play at a local table on 127.0.0.1: you against bots (no LAN announcement).")
)
@click.option("--variant", default="classic", show_default=True)
@click.option(
    "--bots",
    type=click.IntRange(0),
    default=None,
    help=N_("Bot seats (default: every seat but yours). As many bots as seats: watch a bot match."),
)
@click.option(
    "--hands", type=click.IntRange(1), default=None, help=N_("Stop after this many hands.")
)
@_bot_kind_option
@click.option("--log", "log_path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--name", default="you", show_default=True, help=N_("Your name at the table."))
@_deal_option
@click.option(
    "--delay",
    default=None,
    type=float,
    help=N_("Seconds between bot moves (default: {pace}; 0 when bots play every seat)."),
)
@_identity_option
@_ui_options
@lang_option
def play(
    variant: str,
    bots: int | None,
    bot_kind: str,
    hands: int | None,
    log_path: Path | None,
    name: str,
    delay: float | None,
    identity_path: Path | None,
    deal: str = "commit-reveal",
    ui: str = "auto",
    no_browser: bool = False,
) -> None:
    from ..table.config import TableConfig
    from .app import default_log_path

    rules = _rules_or_fail(variant)
    deal = _deal_mode(deal, rules)
    bot_count = rules.players - 1 if bots is None else min(bots, rules.players)
    watch = bot_count >= rules.players
    identity = _identity(identity_path)
    config = TableConfig.simple(
        _("local table"),  # a name, in the language of the person who made it
        rules,
        rules.players - bot_count if not watch else 1,
        host_plays=not watch,
        bot_delay=(0.0 if watch else PERSON_PACE) if delay is None else delay,
        bot_kind=bot_kind,
        max_hands=hands,
        deal=deal,
    )
    if not watch:
        config.seats[0].name = name
    path = log_path or default_log_path("host", "local")

    async def main_(reactor: Any) -> int:
        return await _serve(
            reactor,
            config,
            identity,
            seed_store=_seed_store(identity_path),
            bind="127.0.0.1",
            port=0,
            log_path=path,
            resume=False,
            play_locally=not watch,
            watch=watch,
            name=name,
            announce_to=None,
            ui=ui,
            no_browser=no_browser,
        )

    _run(main_)


def _address(text: str, default_port: int) -> tuple[str, int]:
    host, _sep, port = text.rpartition(":")
    if not host:
        return text, default_port
    try:
        return host.strip("[]"), int(port)
    except ValueError:
        raise click.BadParameter(_("{text!r} is not HOST:PORT").format(text=text)) from None


@main.command(
    help=N_(
        "Host a table on the LAN: you play seat 0, others join, bots fill the rest.\n\n"
        "With --resume LOG, a table that stopped (a crash, kill -9) starts again from its "
        "log, seats, bots, names and options included; its seats reconnect by themselves."
    )
)
@click.option("--bind", default="0.0.0.0", show_default=True, help=N_("Address to listen on."))
@click.option("--port", default=DEFAULT_PORT, show_default=True, type=click.IntRange(0, 65535))
@click.option("--name", "table_name", default="canasta", show_default=True, help=N_("Table name."))
@click.option("--variant", default="classic", show_default=True)
@click.option(
    "--players",
    type=click.IntRange(1),
    default=None,
    help=N_("People at the table, you included (default: every seat); bots take the other seats."),
)
@click.option(
    "--bots",
    "bot_seats",
    type=click.IntRange(0),
    default=None,
    help=N_("Bot seats (the other way to say --players: people = seats - bots)."),
)
@click.option("--log", "log_path", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--resume",
    "resume_path",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help=N_(
        "Resume a crashed table from its host log. The log keeps the table's whole setup: "
        "only --bind, --port, --announce/--no-announce, --announce-to and --identity may be given "
        "with it (other flags are refused when they contradict the log)."
    ),
)
@click.option("--announce/--no-announce", default=True, show_default=True)
@click.option(
    "--announce-to",
    default=f"255.255.255.255:{DISCOVERY_PORT}",
    show_default=True,
    help=N_("Where beacons go (HOST:PORT)."),
)
@click.option("--password", default=None, help=N_("Table password."))
@click.option(
    "--hold",
    default=60.0,
    show_default=True,
    type=click.FloatRange(0, MAX_SECONDS),
    help=N_("Seconds a dropped seat is held."),
)
@click.option("--host-bot", is_flag=True, help=N_("A bot plays the host's seat (a headless host)."))
@click.option(
    "--hands", type=click.IntRange(1), default=None, help=N_("Stop after this many hands.")
)
@_bot_kind_option
@click.option(
    "--delay",
    default=None,
    type=click.FloatRange(0, MAX_SECONDS),
    help=N_(
        "Seconds between bot moves (default: {pace} when you play, so that you can "
        "follow them; 0 with --host-bot)."
    ),
)
@click.option(
    "--player-name", default="host", show_default=True, help=N_("Your name at the table.")
)
@click.option("--insecure-seed", type=int, default=None, hidden=True)
# a shorter match than the preset's (tests); the log's rules keep it
@click.option("--target", type=click.IntRange(1), default=None, hidden=True)
@_deal_option
@_identity_option
@_ui_options
@lang_option
@click.pass_context
def host(
    ctx: click.Context,
    bind: str,
    port: int,
    table_name: str,
    variant: str,
    players: int | None,
    bot_seats: int | None,
    log_path: Path | None,
    resume_path: Path | None,
    announce: bool,
    announce_to: str,
    password: str | None,
    hold: float,
    host_bot: bool,
    bot_kind: str,
    hands: int | None,
    delay: float,
    player_name: str,
    insecure_seed: int | None,
    identity_path: Path | None,
    target: int | None = None,
    deal: str = "commit-reveal",
    ui: str = "auto",
    no_browser: bool = False,
) -> None:
    from .app import default_log_path

    if players is not None and bot_seats is not None:
        raise click.UsageError(_("give --players or --bots, not both"))
    given = {
        name
        for name in ctx.params
        if ctx.get_parameter_source(name)
        not in (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP)
    }
    if resume_path is not None:
        config = _config_for_resume(resume_path, ctx.params, given)
        path = resume_path
    else:
        config = _config_from_flags(ctx.params)
        path = log_path or default_log_path("host", table_name)
    identity = _identity(identity_path)
    target_address = _address(announce_to, DISCOVERY_PORT) if announce else None

    async def main_(reactor: Any) -> int:
        return await _serve(
            reactor,
            config,
            identity,
            seed_store=_seed_store(identity_path),
            bind=bind,
            port=port,
            log_path=path,
            resume=resume_path is not None,
            play_locally=config.host_plays,
            watch=not config.host_plays,
            name=config.seats[0].name,
            announce_to=target_address,
            ui=ui,
            no_browser=no_browser,
        )

    _run(main_)


def _table_rules(variant: str, target: int | None) -> Any:
    from ..canasta.rules import RuleSet

    rules = _rules_or_fail(variant)
    if target is not None:
        if not isinstance(rules, RuleSet):
            raise click.BadParameter(
                _("a target score is for the Canasta games"), param_hint="--target"
            )
        rules = rules.with_changes(target=target)
    return rules


def _config_from_flags(
    flags: Mapping[str, Any], rules: Any = None, deal: str | None = None
) -> TableConfig:
    """The table the ``host`` flags describe (``rules`` and ``deal``: a log's, over the flags';
    ``deal`` is the log's mode string, the flag a ``--deal`` name)."""
    from ..table.config import TableConfig

    rules = rules if rules is not None else _table_rules(flags["variant"], flags["target"])
    if deal is None:
        deal = _deal_mode(flags["deal"], rules)
    else:
        _check_deal(deal, rules)
    players = flags["players"]
    if players is not None:
        _check_players(players, rules.name, rules.players)
    if flags["bot_seats"] is not None:
        players = max(1, rules.players - flags["bot_seats"])
    people = rules.players if players is None else players  # at most the seats (above)
    config = TableConfig.simple(
        flags["table_name"],
        rules,
        max(1, people),
        host_plays=not flags["host_bot"],
        password=flags["password"],
        hold_seconds=flags["hold"],
        bot_delay=_bot_delay(flags["delay"], host_plays=not flags["host_bot"]),
        bot_kind=flags["bot_kind"],
        max_hands=flags["hands"],
        insecure_seed=flags["insecure_seed"],
        deal=deal,
    )
    config.seats[0].name = flags["player_name"]
    return config


def _bot_delay(delay: float | None, *, host_plays: bool) -> float:
    """Seconds between the host's bots' moves: as given, else a pace a person can follow when
    the host's person plays, none at a headless table."""
    if delay is not None:
        return delay
    return PERSON_PACE if host_plays else 0.0


class ContradictsLog(click.ClickException):
    """A flag given with --resume says otherwise than the log: one line, exit status 2."""

    exit_code = 2


def _read_log_header(path: Path) -> Header:
    """The header of the log at ``path``, read (and nothing written) before anything starts."""
    from ..log import LogError, iter_records, parse_header

    try:
        with path.open("rb") as file:
            first = next(iter_records(file), None)
            if first is None:
                raise click.ClickException(
                    _("{path} is empty: there is no table to resume").format(path=path)
                )
            return parse_header(first)
    except OSError as e:
        raise click.ClickException(
            _("cannot read {path}: {problem}").format(path=path, problem=e.strerror or e)
        ) from None
    except LogError as e:
        raise click.ClickException(
            _("{path} is not a table's log: {problem}").format(path=path, problem=e)
        ) from None


def _check_players(players: int, variant: str, seats: int) -> None:
    """``--players`` above the table's seats: one sentence, exit status 2."""
    if players > seats:
        raise click.UsageError(
            _("--players {players}: a {variant} table has {seats} seats").format(
                players=players, variant=variant, seats=seats
            )
        )


def _config_for_resume(path: Path, flags: Mapping[str, Any], given: set[str]) -> TableConfig:
    """The table as its log describes it; refuses a flag that contradicts the log.

    A log written before headers kept the table's setup (``table_config``) gives its rules and
    deal mode; the flags give the rest, as they did then."""
    from ..games import CANASTA, UnknownGame, game_from_header
    from ..table.config import TableConfig, TableConfigError

    header = _read_log_header(path)
    try:
        game = game_from_header(str(header.fields.get("game", CANASTA)), header.rules)
        config = TableConfig.from_log_header(header.fields)
    except (UnknownGame, TableConfigError) as e:
        raise click.ClickException(
            _("{path} cannot be resumed: {problem}").format(path=path, problem=e)
        ) from None
    _refuse_contradictions(path, header, config, flags, given)
    if config is None:
        return _config_from_flags(flags, game.rules, header.deal)
    _check_deal(config.deal, config.rules)
    return config


def _refuse_contradictions(
    path: Path,
    header: Header,
    config: TableConfig | None,
    flags: Mapping[str, Any],
    given: set[str],
) -> None:
    from ..hand import deal_name, deal_name_agrees

    def refuse(flag: str, says: str) -> NoReturn:
        said = _("{flag} contradicts the log (which says {says})")
        raise ContradictsLog(said.format(flag=flag, says=says))

    if "log_path" in given and flags["log_path"].resolve() != path.resolve():
        raise ContradictsLog(
            _(
                "--log {log} contradicts --resume {path}: a resumed table writes on in the log "
                "it resumes"
            ).format(log=flags["log_path"], path=path)
        )
    if "variant" in given and _rules_or_fail(flags["variant"]).name != header.variant:
        refuse(f"--variant {flags['variant']}", header.variant)
    if "target" in given and flags["target"] != header.rules.get("target"):
        says = _("target {target}").format(target=header.rules.get("target"))
        refuse(f"--target {flags['target']}", says)
    if "deal" in given and not deal_name_agrees(flags["deal"], header.deal):
        refuse(f"--deal {flags['deal']}", f"--deal {deal_name(header.deal)}")
    if config is None:
        return  # an older log: the flags give the rest
    seats = len(config.seats)
    bots = seats - config.people
    people_and_bots = _("{people} people and {bots} bots").format(people=config.people, bots=bots)
    if "players" in given:
        _check_players(flags["players"], config.rules.name, seats)
        if flags["players"] != config.people:
            refuse(f"--players {flags['players']}", people_and_bots)
    if "bot_seats" in given and max(1, seats - flags["bot_seats"]) != config.people:
        refuse(f"--bots {flags['bot_seats']}", people_and_bots)
    if "table_name" in given and flags["table_name"] != config.name:
        says = _("the table is {name!r}").format(name=config.name)
        refuse(f"--name {flags['table_name']!r}", says)
    if "player_name" in given and flags["player_name"] != config.seats[0].name:
        says = _("seat 0 is {name!r}").format(name=config.seats[0].name)
        refuse(f"--player-name {flags['player_name']!r}", says)
    if "bot_kind" in given and flags["bot_kind"] != config.bot_kind:
        refuse(f"--bot {flags['bot_kind']}", f"--bot {config.bot_kind}")
    if "host_bot" in given and flags["host_bot"] == config.host_plays:
        refuse("--host-bot", _("the host's person plays seat 0"))
    if "password" in given:
        if config.password is None:
            refuse("--password", _("the table has no password"))
        if not config.password.matches(flags["password"]):
            refuse("--password", _("the table has another password"))
    if "hold" in given and flags["hold"] != config.hold_seconds:
        refuse(f"--hold {flags['hold']:g}", f"--hold {config.hold_seconds:g}")
    if "delay" in given and flags["delay"] != config.bot_delay:
        refuse(f"--delay {flags['delay']:g}", f"--delay {config.bot_delay:g}")
    if "hands" in given and flags["hands"] != config.max_hands:
        says = _("no limit") if config.max_hands is None else f"--hands {config.max_hands}"
        refuse(f"--hands {flags['hands']}", says)
    if "insecure_seed" in given and flags["insecure_seed"] != config.insecure_seed:
        says = _("no test seed") if config.insecure_seed is None else _("another test seed")
        refuse("--insecure-seed", says)


@main.command(
    help=N_(
        "Join a table: ADDRESS is HOST:PORT, or a name from 'canasta tables' (listens for "
        "beacons).\n\n"
        "The host's key is checked before anything else: a host not met before is asked about"
        " (its fingerprint shown, y/N), a confirmed or --fingerprint-given one is pinned in "
        "known_hosts, and a host whose key changed is refused."
    )
)
@click.argument("address", required=False)
@click.option(
    "--fingerprint", default=None, help=N_("The host's fingerprint, as the host shows it.")
)
@click.option("--name", default="", help=N_("Your name at the table."))
@click.option(
    "--bot",
    "bot_kind",
    default=None,
    callback=_check_bot_kind,
    help=N_(
        "Let a bot play this seat: random, greedy, heuristic, or search[:SECONDS] (searches in "
        "worker processes from this seat's view; in May I? it plays as heuristic)."
    ),
)
@click.option("--log", "log_path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--password", default=None)
@click.option("--listen-port", default=DISCOVERY_PORT, show_default=True, help=N_("Beacon port."))
@click.option(
    "--listen-interface", default="", help=N_("Address to hear beacons on (default: all).")
)
@_known_hosts_option
@_identity_option
@_ui_options
@lang_option
def join(
    address: str | None,
    fingerprint: str | None,
    name: str,
    bot_kind: str | None,
    log_path: Path | None,
    password: str | None,
    listen_port: int,
    listen_interface: str,
    known_hosts_path: Path | None,
    identity_path: Path | None,
    ui: str = "auto",
    no_browser: bool = False,
) -> None:
    from twisted.internet.defer import Deferred

    from ..log.exposure import exposure_path
    from ..net.peer import PeerSession, in_a_thread
    from .app import bot_player, default_log_path, join_table, open_new_log, settle_memory

    identity, known, fingerprint = _peer_keys(identity_path, known_hosts_path, fingerprint)

    async def main_(reactor: Any) -> int:
        from ..web.page import choose_ui

        done: Deferred[None] = Deferred()
        box: list[PeerSession] = []
        conn_box: list[Any] = []
        page: Any = None
        if not bot_kind:
            choice = choose_ui(ui, no_browser=no_browser)
            if choice.web:  # served first: its lobby asks what the terminal would
                page = _start_page(
                    reactor,
                    choice.open_browser,
                    done=done,
                    session_box=box,
                    connection_box=conn_box,
                )
        announced: Any = None
        if address is None and page is not None:
            announced = await _pick_in_page(reactor, page, listen_port, listen_interface)
            host_, port_ = announced.endpoint
        elif address is None or ":" not in address:
            announced = await _pick_from_beacons(reactor, listen_port, listen_interface, address)
            host_, port_ = announced.endpoint
        else:
            host_, port_ = _address(address, DEFAULT_PORT)
        where = f"{host_}:{port_}"
        expected = await _trusted_fingerprint(
            reactor,
            identity,
            known,
            host_,
            port_,
            given=fingerprint,
            announced=announced,
            confirm=None if page is None else page.ask_trust,
        )
        path = log_path or default_log_path("seat", where.replace(":", "-"))
        try:
            log_file = open_new_log(path)
        except FileExistsError:
            raise click.ClickException(_exists().format(path=path)) from None
        except OSError as e:
            raise click.ClickException(
                _("cannot create {path}: {problem}").format(path=path, problem=e.strerror or e)
            ) from None
        if bot_kind:
            player: Any = bot_player(box, bot_kind, None)
            player.out = sys.stdout
        else:
            player, page = _local_player(
                reactor,
                ui,
                no_browser,
                done=done,
                session_box=box,
                connection_box=conn_box,
                fingerprint=expected,
                page=page,
            )
        original_finished = player.finished

        def finished(reason: str) -> None:
            original_finished(reason)
            reactor.callLater(0.1, _fire, done)  # the page's leave may fire it first

        player.finished = finished
        session = PeerSession(
            identity,
            player,
            name=name or ("bot" if bot_kind else "player"),
            bot=bool(bot_kind),
            password=password,
            log_file=log_file,
            exposure_file=exposure_path(path),  # a wrong key sealed to it: kept beside the log
            seed_store=_seed_store(identity_path),
            # a person's client (terminal or page) follows the session in its model and holds
            # the next hand until they are ready; a bot neither watches nor waits
            observer=None if bot_kind else player.model,
            hand_gate=None if bot_kind else player.hand_gate,
            background=in_a_thread,  # a blind-v2 seat works its stage out while it checks
        )
        box.append(session)
        if not bot_kind and page is None:
            from twisted.internet import stdio

            stdio.StandardIO(player)  # only now: the question above has read its own answer
        service = join_table(reactor, host_, port_, session, identity, fingerprint=expected)
        conn_box.append(service)
        # Ctrl-C or SIGTERM: the host hears that this seat left, as for `quit`
        reactor.addSystemEventTrigger("before", "shutdown", service.leave, "stopped")
        reactor.addSystemEventTrigger("after", "shutdown", _close_log, path, log_file)
        click.echo(
            _("connecting to {address} (host fingerprint {fingerprint})").format(
                address=where, fingerprint=expected
            )
        )
        settle_memory()  # what is alive now lives as long as the seat
        await done
        await service.leave("quit")  # says bye only if the session is still on (the `quit`)
        kept = _close_log(path, log_file)
        if kept:  # refused, or left before the first record: not kept
            click.echo(_("log: {path}").format(path=path), err=True)
        if page is not None:  # the page stays up with the score sheet, the verdict, the replay
            await page.after_table(path if kept else None, session.seat)
            await page.stop()
        if session.problem is not None:
            raise click.ClickException(session.problem)
        return 0

    _run(main_)


@main.command(
    help=N_(
        "Watch a table: ADDRESS is HOST:PORT. The public table only, live: no player's hand.\n\n"
        "The host's key is checked as 'canasta join' checks it (asked about, pinned, refused "
        "if it changed). Every record the host sends is verified as a seat verifies it. The "
        "players see that you watch, by --name. Exits 0 at the match's end."
    )
)
@click.argument("address")
@click.option(
    "--fingerprint", default=None, help=N_("The host's fingerprint, as the host shows it.")
)
@click.option("--name", default="", help=N_("Your name, as the table's players see it."))
@click.option("--password", default=None, help=N_("The table's password, if it has one."))
@click.option(
    "--log",
    "log_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help=N_("Keep the public copy of the table's log in this new file."),
)
@_known_hosts_option
@_identity_option
@_ui_options
@lang_option
def watch(
    address: str,
    fingerprint: str | None,
    name: str,
    password: str | None,
    log_path: Path | None,
    known_hosts_path: Path | None,
    identity_path: Path | None,
    ui: str = "auto",
    no_browser: bool = False,
) -> None:
    from twisted.internet.defer import Deferred

    from ..net.spectator import SpectatorSession
    from .app import join_table, open_new_log

    identity, known, fingerprint = _peer_keys(identity_path, known_hosts_path, fingerprint)
    host_, port_ = _address(address, DEFAULT_PORT)
    where = f"{host_}:{port_}"

    async def main_(reactor: Any) -> int:
        expected = await _trusted_fingerprint(
            reactor, identity, known, host_, port_, given=fingerprint, announced=None
        )
        log_file: Any = None
        if log_path is not None:
            try:
                log_file = open_new_log(log_path)
            except FileExistsError:
                raise click.ClickException(_exists().format(path=log_path)) from None
            except OSError as e:
                raise click.ClickException(
                    _("cannot create {path}: {problem}").format(
                        path=log_path, problem=e.strerror or e
                    )
                ) from None
        done: Deferred[None] = Deferred()
        viewer, page = _local_watcher(reactor, ui, no_browser, done=done, fingerprint=expected)
        session = SpectatorSession(
            viewer,
            name=name or "watcher",
            password=password,
            log_file=log_file,
            observer=None if page is None else page.model,  # the page draws from its model
        )
        service = join_table(reactor, host_, port_, session, identity, fingerprint=expected)
        # Ctrl-C or SIGTERM: the host hears that this watcher left
        reactor.addSystemEventTrigger("before", "shutdown", service.leave, "stopped")
        click.echo(
            _("watching {address} (host fingerprint {fingerprint})").format(
                address=where, fingerprint=expected
            )
        )
        await done
        await service.leave("quit")
        kept = log_path is not None and _close_log(log_path, log_file)
        if kept:
            click.echo(_("log: {path}").format(path=log_path), err=True)
        if page is not None:  # the page stays up with the last score sheet and the result
            await page.after_table(log_path if kept else None, None)
            await page.stop()
        if session.problem is not None:
            raise click.ClickException(session.problem)
        return 0

    _run(main_)


def _peer_keys(
    identity_path: Path | None, known_hosts_path: Path | None, fingerprint: str | None
) -> tuple[Identity, KnownHosts, str | None]:
    """What a peer that connects to a host holds: its identity, its pinned hosts, and the host's
    fingerprint as given on the command line (normalized; a malformed one is a usage error)."""
    from ..net.tls import normalize_fingerprint

    identity = _identity(identity_path)
    known = _known_hosts(known_hosts_path)
    if fingerprint is not None:
        try:
            fingerprint = normalize_fingerprint(fingerprint)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--fingerprint") from None
    return identity, known, fingerprint


def _known_hosts(path: Path | None) -> KnownHosts:
    from ..net.known_hosts import KnownHosts, KnownHostsError

    try:
        known = KnownHosts(path) if path else KnownHosts()
    except KnownHostsError as e:
        raise click.ClickException(str(e)) from None
    for warning in known.warnings:
        click.echo(_("warning: {problem}").format(problem=warning), err=True)
    return known


class HostKeyChanged(click.ClickException):
    """The host's key is not the one pinned for its address: one message naming both."""


async def _trusted_fingerprint(
    reactor: Any,
    identity: Identity,
    known: KnownHosts,
    host: str,
    port: int,
    *,
    given: str | None,
    announced: Any,
    confirm: Callable[[str, str, str | None], Deferred[bool]] | None = None,
) -> str:
    """The host's fingerprint, once it is trusted: pinned before, given with --fingerprint (then
    pinned), or confirmed by the person now (then pinned). Asked before the seat's connection
    and before the terminal is handed to the reactor, so that the answer can be typed (or piped);
    with ``confirm`` (the page's Accept / Refuse), the person answers in the page instead.
    """
    from ..net.host_key import HostUnreachable, fetch_host_fingerprint
    from ..net.known_hosts import KnownHostsError, default_known_hosts_path
    from ..safe_text import safe_text

    where = f"{host}:{port}"
    try:
        seen = await fetch_host_fingerprint(reactor, host, port, identity)
    except HostUnreachable as e:
        raise click.ClickException(str(e)) from None
    pinned = known.lookup(where)
    if pinned is not None and pinned != seen:
        forget = f"canasta forget-host {where}"
        if known.path != default_known_hosts_path():
            forget += f" --known-hosts {known.path}"
        raise HostKeyChanged(
            _(
                "fingerprint changed: the host at {address} shows {seen}, but {pinned} is pinned "
                "for it: refusing to connect (someone may be posing as the host). If its key "
                "really changed, clear the pin with '{forget}' (it is the line '{line}' in {path})"
            ).format(
                address=where,
                seen=seen,
                pinned=pinned,
                forget=forget,
                line=f"{where.lower()} {pinned}",
                path=known.path,
            )
        )
    if given is not None and given != seen:
        raise click.ClickException(
            _(
                "fingerprint mismatch: the host at {address} shows {seen}, not {given} as given: "
                "refusing to connect (someone may be posing as the host)"
            ).format(address=where, seen=seen, given=given)
        )
    beacon_says = None if announced is None else announced.fingerprint
    if given is None and pinned is None and beacon_says is not None and beacon_says != seen:
        raise click.ClickException(
            _(
                "the table's beacon announced fingerprint {announced}, but the host at {address} "
                "shows {seen}: refusing to connect (someone may be posing as the host)"
            ).format(announced=beacon_says, address=where, seen=seen)
        )
    if pinned is not None:
        return seen
    if given is None and confirm is not None:
        table = None if announced is None else safe_text(announced.beacon.table_name)
        if not await confirm(where, seen, table):
            raise click.ClickException(
                _("not joining {address}: its fingerprint was refused in the page").format(
                    address=where
                )
            )
    elif given is None:
        if announced is not None and not sys.stdin.isatty():
            # nobody to ask: a beacon's fingerprint is trusted for this once, and not pinned
            click.echo(_("trusting the beacon's fingerprint {seen}").format(seen=seen), err=True)
            return seen
        if announced is None:
            question = _(
                "The host at {address} has fingerprint\n  {seen}\nIs that what the host shows?"
            )
        else:
            question = _(
                "Table {name!r} at {address} has fingerprint\n  {seen}\n"
                "Is that what the host shows?"
            )
        name = None if announced is None else safe_text(announced.beacon.table_name)
        if not _ask_yes_no(question.format(name=name, address=where, seen=seen)):
            raise click.ClickException(
                _(
                    "not joining {address}: its fingerprint was not confirmed "
                    "(answer y, or pass --fingerprint as the host shows it)"
                ).format(address=where)
            )
    try:
        known.pin(where, seen)
    except (KnownHostsError, ValueError) as e:
        click.echo(
            _("warning: the host's key is not pinned: {problem}").format(problem=e), err=True
        )
    else:
        pinned_line = _("pinned {address} {seen} in {path}")
        click.echo(pinned_line.format(address=where, seen=seen, path=known.path), err=True)
    return seen


# The question's mark of its answers, and the words that answer yes ('|' between them), in the
# person's language; y and yes answer yes in every language.
YES_NO_MARK = N_("[y/N]")
YES_WORDS = N_("y|yes")


def _ask_yes_no(question: str) -> bool:
    """Ask on stderr; read the answer from stdin one byte at a time, so that what follows it
    stays for the game. No answer (end of input, Ctrl-C) is no."""
    click.echo(f"{question} {_(YES_NO_MARK)}: ", nl=False, err=True)
    # the reactor's SIGINT handler only stops the reactor: here Ctrl-C must end the question
    replaced, previous = False, None
    with contextlib.suppress(ValueError):  # ValueError: not the main thread
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        replaced = True
    try:
        answer = _read_line()
    except KeyboardInterrupt:
        answer = ""
    finally:
        if replaced:
            signal.signal(signal.SIGINT, previous)
    if not answer.endswith("\n"):
        click.echo("", err=True)  # end the question's line
    yes = {"y", "yes", *(word.strip().lower() for word in _(YES_WORDS).split("|"))}
    return answer.strip().lower() in yes


def _read_line() -> str:
    stream = sys.stdin
    if stream is None:
        return ""
    try:
        fd = stream.fileno()
    except (OSError, ValueError):  # not a file (a test's stream): its own readline
        return stream.readline()
    line = bytearray()
    while not line.endswith(b"\n"):
        try:
            byte = os.read(fd, 1)
        except OSError:
            break
        if not byte:
            break
        line += byte
    return line.decode("utf-8", "replace")


@main.command(
    name="forget-host",
    help=N_(
        "Forget the fingerprint pinned for ADDRESS (HOST:PORT), so that the next join asks "
        "again.\n\n"
        "Only for a host whose key you know changed (a new identity file, another computer)."
    ),
)
@click.argument("address")
@_known_hosts_option
def forget_host(address: str, known_hosts_path: Path | None) -> None:
    from ..net.known_hosts import KnownHostsError

    known = _known_hosts(known_hosts_path)
    try:
        forgotten = known.forget(address)
    except (KnownHostsError, ValueError) as e:
        raise click.ClickException(str(e)) from None
    if not forgotten:
        raise click.ClickException(
            _("no fingerprint is pinned for {address} in {path}").format(
                address=address, path=known.path
            )
        )
    said = _("forgot the fingerprint pinned for {address} in {path}")
    click.echo(said.format(address=address, path=known.path))


async def _pick_from_beacons(reactor: Any, port: int, interface: str, choice: str | None) -> Any:
    from ..net.discovery import TableChoiceError, format_tables, listen_for_tables, pick_table

    entries = await listen_for_tables(reactor, port, 3.0, interface=interface)
    if not entries:
        raise click.ClickException(_("no tables heard; give HOST:PORT"))
    if choice is None and len(entries) > 1:
        click.echo(format_tables(entries))
        choice = click.prompt(_("Which table (number or name)?"))
    try:
        return pick_table(entries, choice or "1")
    except TableChoiceError as e:
        raise click.ClickException(str(e)) from None


async def _pick_in_page(reactor: Any, page: Any, port: int, interface: str) -> Any:
    """The tables heard on the LAN, listed in the page as they are heard (and forgotten when
    they go quiet), until the person picks one."""
    from twisted.internet.error import CannotListenError
    from twisted.internet.task import LoopingCall

    from ..net.discovery import BeaconListener

    listener = BeaconListener(clock=reactor)
    try:
        listening = reactor.listenUDP(port, listener, interface=interface)
    except CannotListenError as e:
        raise click.ClickException(_cannot_listen(e)) from None
    shown: list[Any] = []
    picked: Deferred[int] | None = None

    def refresh(_: object = None) -> None:
        nonlocal picked
        shown[:] = listener.tables()
        picked = page.show_tables([_table_row(entry) for entry in shown])

    listener.on_entry = refresh
    refreshing = LoopingCall(refresh)
    refreshing.clock = reactor
    refreshing.start(1.0)  # now, then each second: a quiet table leaves the list
    try:
        assert picked is not None
        index = await picked
    finally:
        listener.on_entry = None
        refreshing.stop()
        stopped = listening.stopListening()
        if stopped is not None:
            await stopped
    if not 0 <= index < len(shown):
        raise click.ClickException(_("no table chosen: the page was left"))
    return shown[index]


def _table_row(entry: Any) -> dict[str, Any]:
    """A table heard on the LAN, as the page lists it."""
    beacon = entry.beacon
    host = f"[{entry.address}]" if ":" in entry.address else entry.address
    return {
        "name": beacon.table_name,
        "variant": beacon.variant,
        "seats": beacon.seats,
        "free": beacon.free_seats,
        "deal": beacon.deal_mode,
        "address": f"{host}:{beacon.port}",
        "fingerprint": entry.fingerprint,
    }


@main.command(help=N_("List the tables announcing themselves on the LAN."))
@click.option("--port", default=DISCOVERY_PORT, show_default=True, help=N_("Beacon port."))
@click.option("--seconds", default=3.0, show_default=True, help=N_("How long to listen."))
@click.option("--interface", default="", help=N_("Address to listen on (default: all)."))
def tables(port: int, seconds: float, interface: str) -> None:
    from ..net.discovery import format_tables, listen_for_tables

    async def main_(reactor: Any) -> int:
        entries = await listen_for_tables(reactor, port, seconds, interface=interface)
        click.echo(format_tables(entries) if entries else _("no tables heard"))
        return 0

    _run(main_)
