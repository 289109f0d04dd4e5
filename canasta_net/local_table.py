"""A whole recorded match in one process: a HostTable and its seats wired directly.

This is the table protocol without a network: every seat commits, reveals, acts and signs
checkpoints through the same :class:`~canasta_net.host_table.HostTable` the LAN host runs, and
the host journals everything to a real ``.cnlog``. ``canasta simulate --log`` and the tests use it
to produce logs the replayer and the auditor check.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

from .blind_seat import BlindSeat, HandContext, act_of_body
from .bots import Bot, choose_for
from .games import game_of_rules
from .host_table import HostTable, SeatEntry, TablePhase
from .identity import Identity
from .log import LogWriter, RecordInfo
from .seat import SeatSigner


def bot_identity(seed: int | str, seat: int) -> Identity:
    return Identity.from_seed(f"canasta-net bot {seed} seat {seat}".encode())


@dataclass
class LocalMatch:
    host: HostTable
    seats: list[SeatSigner]
    bots: list[Bot]
    records: int = 0
    blind_seats: list[BlindSeat] | None = None  # a blind-dealt table: each seat's own view

    def _broadcast(self, infos: Sequence[RecordInfo]) -> None:
        for info in infos:
            self.records += 1
            for signer in self.seats:
                signer.observe(info.hash)
            if self.blind_seats is not None:
                act = act_of_body(info.body)
                for seat in self.blind_seats:
                    seat.observe(info.kind, act)

    def _blind_step(self, blind_seats: list[BlindSeat]) -> None:
        host = self.host
        hand = host.hand_no
        for signer, seat in zip(self.seats, blind_seats, strict=True):
            need = host.needs(signer.seat)
            if need == "wait":
                continue
            if need == "checkpoint":
                sig = signer.sign_checkpoint(host.checkpoint_msg)
                self._broadcast(host.submit_checkpoint(signer.seat, sig))
            elif need == "act":
                state = seat.hand.state if seat.hand is not None else None
                assert state is not None
                action = choose_for(self.bots[signer.seat], state)
                fields = seat.action_fields(action)
                self._broadcast(host.submit(signer.seat, *signer.sign(hand, "action", **fields)))
            else:
                answer = seat.answer(hand, need)
                assert answer is not None, f"seat {signer.seat} has no {need} to give"
                type_, fields = answer
                self._broadcast(host.submit(signer.seat, *signer.sign(hand, type_, **fields)))
            return

    def step(self) -> None:
        """Advance the table by one round of messages."""
        host = self.host
        if self.blind_seats is not None:
            self._blind_step(self.blind_seats)
        elif host.phase is TablePhase.COMMITTING:
            for signer in self.seats:
                self._broadcast(host.submit(signer.seat, *signer.commit(host.hand_no)))
        elif host.phase is TablePhase.REVEALING:
            for signer in self.seats:
                act, sig, seed = signer.reveal(host.hand_no)
                self._broadcast(host.submit(signer.seat, act, sig, seed))
        elif host.phase is TablePhase.PLAYING:
            state = host.state
            assert state is not None
            seat = state.to_move
            action = choose_for(self.bots[seat], state)
            self._broadcast(host.submit(seat, *self.seats[seat].action(host.hand_no, str(action))))
        elif host.phase is TablePhase.CHECKPOINTING:
            msg = host.checkpoint_msg
            for signer in self.seats:
                self._broadcast(host.submit_checkpoint(signer.seat, signer.sign_checkpoint(msg)))

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


def recorded_match(
    rules: Any,
    log_file: BinaryIO,
    *,
    seed: int = 0,
    bot_kinds: Sequence[str] = ("greedy",),
    fsync: bool = False,
    table_id: bytes | None = None,
    deal: str = "commit-reveal",
) -> LocalMatch:
    """Set up an all-bot table journaling to ``log_file``; deterministic for a given seed.

    Seeds are derived with ``insecure_seed`` (the header says ``insecure``): a simulation's log
    must be reproducible, and nobody plays for stakes against bots.
    """
    game = game_of_rules(rules)
    rng = random.Random(seed)
    identities = [bot_identity(seed, s) for s in range(rules.players)]
    table = table_id or rng.randbytes(16)
    entries = [SeatEntry(f"bot-{s}", identities[s].public_key, True) for s in range(rules.players)]
    writer = LogWriter(log_file, identities[0], fsync=fsync)
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
    )
    signers = [
        SeatSigner(identities[s], s, table, host.head, insecure_seed_value=seed)
        for s in range(rules.players)
    ]
    bots = [
        game.make_bot(bot_kinds[s % len(bot_kinds)], random.Random(rng.getrandbits(64)))
        for s in range(rules.players)
    ]
    blind_seats = None
    if deal == "blind":

        def context() -> HandContext:
            return HandContext(host.match.dealer, host.match.minimums(), [e.key for e in entries])

        blind_seats = [
            BlindSeat(identities[s], s, game, table, context, rng.randbytes)
            for s in range(rules.players)
        ]
    return LocalMatch(host, signers, bots, blind_seats=blind_seats)
