"""A third party's deal check, written from the documents alone.

Everything here follows docs/deal-commit-reveal.md (commitment, deck seed, byte stream, shuffle)
and docs/log-format.md ("Record kinds", "Dealing, position by position", "Private payloads of a
hand"); it imports nothing from canasta_net, only hashlib and msgpack. If writing it needs
anything the documents do not say, the documents are what must be fixed.
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgpack

# --------------------------------------------------------------------- docs/deal-commit-reveal.md


def field(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def commitment(table: bytes, hand_no: int, seat: int, seed: bytes) -> bytes:
    return hashlib.sha256(
        field(b"canasta-net/commit/v1")
        + field(table)
        + field(hand_no.to_bytes(8, "big"))
        + field(bytes([seat]))
        + field(seed)
    ).digest()


def deck_seed(table: bytes, hand_no: int, seeds: list[bytes]) -> bytes:
    data = (
        field(b"canasta-net/deck/v1")
        + field(table)
        + field(hand_no.to_bytes(8, "big"))
        + field(len(seeds).to_bytes(4, "big"))
    )
    for seed in seeds:
        data += field(seed)
    return hashlib.sha256(data).digest()


def shuffled(seed: bytes, n: int) -> list[int]:
    """Fisher-Yates from i = n-1 down to 1, j uniform in [0, i] by masked rejection."""
    # n ≤ 162 needs one byte per draw (rejection at most halves the yield): 64 KiB is plenty
    stream = hashlib.shake_256(field(b"canasta-net/shuffle/v1") + field(seed)).digest(1 << 16)
    at = 0
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        bits = i.bit_length()
        k, mask = (bits + 7) // 8, (1 << bits) - 1
        while True:
            v = int.from_bytes(stream[at : at + k], "big") & mask
            at += k
            if v <= i:
                break
        order[i], order[v] = order[v], order[i]
    return order


# --------------------------------------------------------------------- docs/log-format.md: cards


def face(card: int, jokers_per_deck: int) -> int:
    return card % (52 + jokers_per_deck)


def is_red_three(f: int) -> bool:
    return f < 52 and f % 13 == 2 and f // 13 in (1, 2)  # rank 3, suit D or H


def is_black_three(f: int) -> bool:
    return f < 52 and f % 13 == 2 and f // 13 in (0, 3)


def is_wild(f: int) -> bool:
    return f >= 52 or f % 13 == 1  # a joker or a 2


# --------------------------------------------------------------------- docs/log-format.md: deal


def deal(deck: list[int], rules: dict[str, Any], dealer: int) -> dict[str, Any]:
    """Hands from position 0, one card at a time to seats dealer+1, dealer+2, ... (mod players);
    then the upcard; then red threes laid and replaced, seat by seat; the rest is the stock,
    drawn in increasing position."""
    players, jokers = rules["players"], rules["jokers_per_deck"]
    hands: list[list[int]] = [[] for _ in range(players)]
    position = 0
    for _ in range(rules["hand_size"]):
        for k in range(players):
            hands[(dealer + 1 + k) % players].append(deck[position])
            position += 1
    pile = []
    while True:
        card = deck[position]
        position += 1
        pile.append(card)
        f = face(card, jokers)
        turns = is_wild(f) or is_red_three(f)
        turns = turns or (is_black_three(f) and rules["upcard_turns_on_black_three"])
        if not turns:
            break
    red_threes: list[list[int]] = [[] for _ in range(players)]
    for k in range(players):
        seat = (dealer + 1 + k) % players
        # in the order the seat received them; a replacement that is a red three comes after
        while reds := [c for c in hands[seat] if is_red_three(face(c, jokers))]:
            for card in reds:
                hands[seat].remove(card)
                red_threes[seat].append(card)
                hands[seat].append(deck[position])
                position += 1
    return {
        "hands": [sorted(hand) for hand in hands],
        "pile": pile,
        "red_threes": red_threes,
        "next": position,
    }


def draw(
    deck: list[int], position: int, count: int, jokers: int
) -> tuple[list[int], list[int], int]:
    """A stock draw: (cards into the hand, red threes laid, next position)."""
    drawn: list[int] = []
    laid: list[int] = []
    while len(drawn) < count and position < len(deck):
        card = deck[position]
        position += 1
        (laid if is_red_three(face(card, jokers)) else drawn).append(card)
    return drawn, laid, position


def payload(data: bytes, digest: bytes) -> dict[str, Any]:
    """A private payload: its SHA-256 is the body's priv entry; a msgpack map, salt first."""
    assert hashlib.sha256(data).digest() == digest
    value = msgpack.unpackb(data, raw=False)
    assert isinstance(value, dict) and next(iter(value)) == "salt" and len(value["salt"]) == 16
    return value


def check_vector(v: dict[str, Any]) -> None:
    """Re-derive the whole vector; an AssertionError names the first value that differs."""
    table, hand_no, rules = bytes.fromhex(v["table_id"]), v["hand_no"], v["rules"]
    players, jokers = rules["players"], rules["jokers_per_deck"]
    seeds = [bytes.fromhex(s) for s in v["seeds"]]
    assert v["dealer"] == (v["first_dealer"] + hand_no) % players
    assert [commitment(table, hand_no, s, seed).hex() for s, seed in enumerate(seeds)] == v[
        "commitments"
    ]
    for seat, data in enumerate(v["reveal_payloads"]):
        revealed = msgpack.unpackb(bytes.fromhex(data), raw=False)
        assert list(revealed) == ["salt", "seed"] and revealed["seed"] == seeds[seat]
    combined = deck_seed(table, hand_no, seeds)
    assert combined.hex() == v["deck_seed"]
    deck = shuffled(combined, rules["decks"] * (52 + jokers))
    assert deck == v["deck"]
    dealt = deal(deck, rules, v["dealer"])
    assert dealt["hands"] == v["hands"]
    assert dealt["pile"] == v["pile"]
    assert dealt["red_threes"] == v["red_threes"]
    assert len(deck) - dealt["next"] == v["stock"]
    for seat in range(players):
        data = bytes.fromhex(v["deal_payloads"][seat])
        value = payload(data, bytes.fromhex(v["deal_priv"][seat]))
        assert list(value) == ["salt", "hand"] and value["hand"] == dealt["hands"][seat]
        assert msgpack.packb({"salt": value["salt"], "hand": value["hand"]}) == data
    position = dealt["next"]
    for turn in v["first_draws"]:
        drawn, laid, position = draw(deck, position, rules["draw_count"], jokers)
        assert drawn == turn["drawn"]
        expected_reds = None
        if laid:
            expected_reds = [laid if s == turn["seat"] else [] for s in range(players)]
        assert turn["red_threes"] == expected_reds
        value = payload(bytes.fromhex(turn["payload"]), bytes.fromhex(turn["priv"]))
        assert value == {"salt": value["salt"], "drawn": drawn, "picked_up": []}
