"""A whole recorded match in one process: a HostTable and its seats wired directly.

This is the table protocol without a network: every seat is a
:class:`~canasta_net.table.seat.SeatAgent` that follows the host's records and answers what the
table needs from it, through the same :class:`~canasta_net.table.host.HostTable` the LAN host
runs, and the host journals everything to a real ``.cnlog``. ``canasta simulate --log`` and the
tests use it to produce logs the replayer and the auditor check.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

from ..cards import parse_face
from ..games import GameBot, game_of_rules
from ..hand import HandContext
from ..identity import Identity
from ..log import LogWriter, RecordInfo
from ..selfplay import choose_for
from ..timing import NO_TIMING, Timing
from .config import TableConfig
from .host import HostTable, SeatEntry, TablePhase
from .seat import Decision, SeatAgent, WrittenRecord


def bot_identity(seed: int | str, seat: int) -> Identity:
    return Identity.from_seed(f"canasta-net bot {seed} seat {seat}".encode())


def bot_move(bot: GameBot[Any], decision: Decision, game: Any) -> str:
    """A bot's choice for a decision: from the seat's own state where it has one, else from
    the legal list and the hand in the seat's view."""
    if decision.state is not None:
        return str(choose_for(bot, decision.state))
    view = decision.view or {}
    hand = [parse_face(card) for card in view.get("hand", [])]
    legal = [game.parse_action(text) for text in decision.legal]
    return str(bot.choose(legal, hand, game.rules))


@dataclass
class LocalMatch:
    host: HostTable
    seats: list[SeatAgent]
    bots: list[GameBot[Any]]
    records: int = 0

    def _broadcast(self, infos: Sequence[RecordInfo]) -> None:
        for info in infos:
            self.records += 1
            written = WrittenRecord(info)
            for agent in self.seats:
                agent.observe(written)

    def step(self) -> None:
        """Advance the table by one message: the first seat the table waits for answers."""
        host = self.host
        for agent in self.seats:
            need = host.needs(agent.seat)
            reply = agent.reply(need, host.hand_no, host.local_prompt(need))
            if reply is None:
                continue
            if isinstance(reply, Decision):
                text = bot_move(self.bots[agent.seat], reply, host.game)
                reply = agent.act(reply.hand, text)
            self._broadcast(host.take_message(agent.seat, reply, signed_here=True))
            return
        raise RuntimeError(f"the table ({host.phase.value}) waits for no seat that can answer")

    def stop(self, reason: str) -> None:
        """Stop the match by agreement (``reason``: one of ``records.STOP_REASONS``): the host
        writes a ``match-stop`` record and every seat reads it. Nothing if the match is over."""
        self._broadcast(self.host.stop(reason))

    def play(self, max_hands: int | None = None, on_step: Callable[[], None] | None = None) -> None:
        """Play until the match ends (or ``max_hands`` hands have been checkpointed)."""
        while self.host.phase is not TablePhase.OVER:
            if (
                max_hands is not None
                and self.host.match.hands_played >= max_hands
                and (self.host.phase is TablePhase.COMMITTING)
            ):
                return
            self.step()
            if on_step is not None:
                on_step()


def _bot_table(rules: Any, seed: int, max_hands: int, deal: str) -> dict[str, Any]:
    """The header's ``table_config`` of an all-bot table with a limit of hands."""
    config = TableConfig.simple(
        "simulation",
        rules,
        1,
        host_plays=False,
        bot_delay=0.0,
        max_hands=max_hands,
        insecure_seed=seed,
        deal=deal,
    )
    return config.to_log_fields()


def recorded_match(
    rules: Any,
    log_file: BinaryIO,
    *,
    seed: int = 0,
    bot_kinds: Sequence[str] = ("greedy",),
    fsync: bool = False,
    table_id: bytes | None = None,
    deal: str = "commit-reveal",
    timing: Timing = NO_TIMING,
    max_hands: int | None = None,
    clock: Callable[[], float] = lambda: 0.0,
) -> LocalMatch:
    """Set up an all-bot table journaling to ``log_file``; deterministic for a given seed.

    Seeds are derived with ``insecure_seed`` (the header says ``insecure``): a simulation's log
    must be reproducible, and nobody plays for stakes against bots. ``timing`` is told of the
    table's and its writer's steps (``canasta_net.timing``). With ``max_hands`` the header
    carries the table's setup (``table_config``) with that limit of hands, which proves a stop
    there (``LocalMatch.stop``) agreed. ``clock`` (seconds since the Unix
    epoch) dates the records: by default every record says 0, like the header's ``created``, so
    that a seed gives the same log byte for byte.
    """
    game = game_of_rules(rules)
    rng = random.Random(seed)
    identities = [bot_identity(seed, s) for s in range(rules.players)]
    table = table_id or rng.randbytes(16)
    entries = [SeatEntry(f"bot-{s}", identities[s].public_key, True) for s in range(rules.players)]
    writer = LogWriter(log_file, identities[0], fsync=fsync, timing=timing, clock=clock)
    host = HostTable(
        game,
        table,
        entries,
        writer,
        host_seat=0,
        deal_mode=deal,
        insecure=True,
        created=0,
        random_bytes=rng.randbytes,
        timing=timing,
        table_fields=None if max_hands is None else _bot_table(rules, seed, max_hands, deal),
    )

    def context() -> HandContext:
        return HandContext(host.match.dealer, host.match.minimums(), [e.key for e in host.seats])

    seats = [
        SeatAgent(
            identities[s],
            s,
            game,
            table,
            host.head,
            deal,
            context,
            random_bytes=rng.randbytes,
            insecure_seed_value=seed,
            state=lambda: host.state,
        )
        for s in range(rules.players)
    ]
    bots = [
        game.make_bot(bot_kinds[s % len(bot_kinds)], random.Random(rng.getrandbits(64)))
        for s in range(rules.players)
    ]
    return LocalMatch(host, seats, bots)
