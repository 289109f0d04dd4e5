"""The whole blind deal run in one process: the reference driver for tests, the benchmark and
whoever wires the protocol into the table.

It plays every seat and the host in protocol order, with every check a real seat and the host
make (signatures, deck checks, sealed keys), and measures the CPU each seat spends. There is no
networking here: on a LAN each step below is one message through the host.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from canasta_net.identity import Identity

from .keys import SeatSecrets
from .protocol import (
    CardIndex,
    KeyMessage,
    StageOutput,
    initial_deck,
    make_key_message,
    receive_key_message,
    stage1,
    stage2,
)
from .schedule import DealSchedule


@dataclass
class LocalDeal:
    """What one in-process deal produced: the public transcript and each seat's private view."""

    secrets: list[SeatSecrets]
    stage_outputs: list[StageOutput] = field(default_factory=list)
    key_messages: list[KeyMessage] = field(default_factory=list)
    hands: dict[int, list[int]] = field(default_factory=dict)
    """Each seat's dealt card ids in deal order, as the seat itself opened them."""
    cpu_seconds: list[float] = field(default_factory=list)
    """CPU time each seat spent (its stages, sealing its keys, checking and opening its hand)."""

    @property
    def final_deck(self) -> list[bytes]:
        return list(self.stage_outputs[-1].deck)

    def stage_decks(self) -> list[list[bytes]]:
        """The 2·S published decks in protocol order, as :func:`audit.replay_deal` takes them."""
        return [list(output.deck) for output in self.stage_outputs]


def run_stages(
    secrets: Sequence[SeatSecrets],
    identities: Sequence[Identity],
    labels: Sequence[str],
    cpu: list[float] | None = None,
) -> list[StageOutput]:
    """Stage 1 then stage 2, seat by seat; each seat checks its input's signature and deck."""
    seats = len(secrets)
    public_keys = [identity.public_key for identity in identities]
    outputs: list[StageOutput] = []
    for stage, function in ((1, stage1), (2, stage2)):
        for seat in range(seats):
            started = time.thread_time()
            if outputs:
                previous = outputs[-1]
                previous.verify(public_keys[previous.seat])
                incoming: Sequence[bytes] = previous.deck
            else:
                incoming = initial_deck(labels)
            deck = function(secrets[seat], incoming, seats)
            outputs.append(StageOutput.make(identities[seat], secrets[seat], stage, deck))
            if cpu is not None:
                cpu[seat] += time.thread_time() - started
    return outputs


def deal_hands(
    secrets: Sequence[SeatSecrets],
    identities: Sequence[Identity],
    final_deck: Sequence[bytes],
    schedule: DealSchedule,
    cards: CardIndex,
    cpu: list[float] | None = None,
) -> tuple[list[KeyMessage], dict[int, list[int]]]:
    """Every seat seals its key for every position of every other seat's hand; each owner checks
    the messages and opens its hand with them and its own keys."""
    seats = len(secrets)
    public_keys = [identity.public_key for identity in identities]
    x25519_publics = [s.x25519_public for s in secrets]
    messages: list[KeyMessage] = []
    inbox: dict[int, list[KeyMessage]] = {seat: [] for seat in range(seats)}
    for sender in range(seats):
        started = time.thread_time()
        for owner, positions in enumerate(schedule.hands):
            if owner == sender:
                continue
            for position in positions:
                message = make_key_message(
                    identities[sender], secrets[sender], position, owner, x25519_publics[owner]
                )
                messages.append(message)
                inbox[owner].append(message)
        if cpu is not None:
            cpu[sender] += time.thread_time() - started
    hands: dict[int, list[int]] = {}
    for owner in range(seats):
        started = time.thread_time()
        keys: dict[int, list[int]] = {
            position: [secrets[owner].position_key(position)] for position in schedule.hands[owner]
        }
        for message in inbox[owner]:
            key = receive_key_message(
                message,
                secrets[owner],
                public_keys[message.sender],
                x25519_publics[message.sender],
            )
            keys[message.position].append(key)
        hands[owner] = [
            cards.open(final_deck[position], keys[position], position)
            for position in schedule.hands[owner]
        ]
        if cpu is not None:
            cpu[owner] += time.thread_time() - started
    return messages, hands


def run_local_deal(
    table_id: bytes,
    hand_no: int,
    labels: Sequence[str],
    seeds: Sequence[bytes],
    identities: Sequence[Identity],
    schedule: DealSchedule,
) -> LocalDeal:
    """Derive every seat's secrets, run both stages and deal every hand."""
    cpu = [0.0] * len(seeds)
    secrets = []
    for seat, seed in enumerate(seeds):
        started = time.thread_time()
        secrets.append(SeatSecrets.derive(table_id, hand_no, seat, seed, len(labels)))
        cpu[seat] += time.thread_time() - started
    deal = LocalDeal(secrets=secrets)
    deal.stage_outputs = run_stages(secrets, identities, labels, cpu)
    cards = CardIndex(labels)
    deal.key_messages, deal.hands = deal_hands(
        secrets, identities, deal.final_deck, schedule, cards, cpu
    )
    deal.cpu_seconds = cpu
    return deal
