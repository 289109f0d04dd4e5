"""Deck derivation: the documented bytes, determinism, permutations, and statistical uniformity."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from canasta_net.deal.shuffle import (
    commitment,
    deck_seed,
    derive_deck,
    insecure_seed,
    shuffled_order,
)

DOC = Path(__file__).resolve().parent.parent / "docs" / "deal-commit-reveal.md"
TABLE = b"table-under-test"
seed_bytes = st.binary(min_size=32, max_size=32)


# An independent implementation written from docs/deal-commit-reveal.md alone: it reads one big
# SHAKE-256 digest instead of chunks, and spells out every step.


def _field(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def reference_order(seed: bytes, n: int) -> list[int]:
    stream = hashlib.shake_256(_field(b"canasta-net/shuffle/v1") + _field(seed)).digest(1 << 16)
    position = 0
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        k = math.ceil(i.bit_length() / 8)
        mask = 2 ** i.bit_length() - 1
        while True:
            v = int.from_bytes(stream[position : position + k], "big") & mask
            position += k
            if v <= i:
                break
        order[i], order[v] = order[v], order[i]
    return order


def reference_deck_seed(table_id: bytes, hand_no: int, seeds: Sequence[bytes]) -> bytes:
    data = _field(b"canasta-net/deck/v1") + _field(table_id) + _field(hand_no.to_bytes(8, "big"))
    data += _field(len(seeds).to_bytes(4, "big")) + b"".join(_field(s) for s in seeds)
    return hashlib.sha256(data).digest()


# The test vector in the document.


def doc_vector() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    match = re.search(r"<!-- test-vector.*?-->\s*```\n(.*?)```", text, re.DOTALL)
    assert match, "the test vector block is missing from docs/deal-commit-reveal.md"
    pairs = (line.split("=", 1) for line in match.group(1).splitlines() if line.strip())
    return {key.strip(): value.strip() for key, value in pairs}


def test_document_test_vector() -> None:
    vector = doc_vector()
    table_id = bytes.fromhex(vector["table_id"])
    hand_no = int(vector["hand_no"])
    seeds = [bytes.fromhex(vector[f"seed_{seat}"]) for seat in range(4)]
    for seat, seed in enumerate(seeds):
        assert seed == bytes([0x11 * (seat + 1)]) * 32
        assert commitment(table_id, hand_no, seat, seed).hex() == vector[f"commitment_{seat}"]
    seed = deck_seed(table_id, hand_no, seeds)
    assert seed.hex() == vector["deck_seed"]
    stream = hashlib.shake_256(_field(b"canasta-net/shuffle/v1") + _field(seed)).digest(16)
    assert stream.hex() == vector["stream_16"]
    deck = derive_deck(table_id, hand_no, seeds, 108)
    assert deck[:10] == [int(x) for x in vector["deck_108_first_10"].split()]
    assert deck[-3:] == [int(x) for x in vector["deck_108_last_3"].split()]
    assert shuffled_order(seed, 5) == [int(x) for x in vector["deck_5"].split()]


def test_commitment_matches_documented_encoding() -> None:
    seed = bytes(range(32))
    expected = hashlib.sha256(
        _field(b"canasta-net/commit/v1")
        + _field(TABLE)
        + _field((2**40 + 3).to_bytes(8, "big"))
        + _field(bytes([5]))
        + _field(seed)
    ).digest()
    assert commitment(TABLE, 2**40 + 3, 5, seed) == expected


@given(seeds=st.lists(seed_bytes, min_size=1, max_size=6), hand_no=st.integers(0, 2**64 - 1))
def test_deck_seed_matches_documented_encoding(seeds: list[bytes], hand_no: int) -> None:
    assert deck_seed(TABLE, hand_no, seeds) == reference_deck_seed(TABLE, hand_no, seeds)


@pytest.mark.parametrize("n", [1, 2, 3, 104, 108, 162, 256, 257, 1000])
def test_shuffle_matches_reference_implementation(n: int) -> None:
    # 257 and 1000 need two-byte draws; 256 is the last deck whose draws fit one byte.
    for counter in range(20):
        seed = hashlib.sha256(b"reference %d" % counter).digest()
        assert shuffled_order(seed, n) == reference_order(seed, n)


# Determinism and permutations.


def test_derivation_is_deterministic() -> None:
    seeds = [insecure_seed(1, TABLE, 3, seat) for seat in range(4)]
    assert derive_deck(TABLE, 3, seeds, 108) == derive_deck(TABLE, 3, list(seeds), 108)


@pytest.mark.parametrize("n", [104, 108, 162])
def test_real_deck_sizes_give_permutations(n: int) -> None:
    for hand_no in range(50):
        seeds = [insecure_seed("perm", TABLE, hand_no, seat) for seat in range(4)]
        assert sorted(derive_deck(TABLE, hand_no, seeds, n)) == list(range(n))


@given(seed=seed_bytes, n=st.integers(1, 600))
def test_any_deck_size_gives_the_reference_permutation(seed: bytes, n: int) -> None:
    order = shuffled_order(seed, n)
    assert sorted(order) == list(range(n))
    assert order == reference_order(seed, n)


@given(seeds=st.lists(seed_bytes, min_size=1, max_size=6), data=st.data())
def test_changing_any_one_seed_changes_the_deck(seeds: list[bytes], data: st.DataObject) -> None:
    seat = data.draw(st.integers(0, len(seeds) - 1), label="seat")
    other = data.draw(seed_bytes.filter(lambda s: s != seeds[seat]), label="other seed")
    changed = [*seeds[:seat], other, *seeds[seat + 1 :]]
    assert deck_seed(TABLE, 9, changed) != deck_seed(TABLE, 9, seeds)
    assert derive_deck(TABLE, 9, changed, 108) != derive_deck(TABLE, 9, seeds, 108)


def test_seat_order_table_and_hand_number_all_matter() -> None:
    seeds = [insecure_seed(2, TABLE, 1, seat) for seat in range(3)]
    deck = derive_deck(TABLE, 1, seeds, 108)
    assert derive_deck(TABLE, 1, seeds[::-1], 108) != deck
    assert derive_deck(TABLE, 2, seeds, 108) != deck
    assert derive_deck(TABLE + b"!", 1, seeds, 108) != deck
    assert derive_deck(TABLE, 1, seeds[:2], 108) != deck


def test_commitment_binds_every_input() -> None:
    seed = bytes(32)
    base = commitment(TABLE, 1, 0, seed)
    assert commitment(TABLE, 1, 0, bytes(31) + b"\x01") != base
    assert commitment(TABLE, 1, 1, seed) != base
    assert commitment(TABLE, 2, 0, seed) != base
    assert commitment(TABLE + b"x", 1, 0, seed) != base


# Refused inputs.


@pytest.mark.parametrize("size", [0, 16, 31, 33, 64])
def test_seeds_must_be_32_bytes(size: int) -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        commitment(TABLE, 1, 0, bytes(size))
    with pytest.raises(ValueError, match="32 bytes"):
        deck_seed(TABLE, 1, [bytes(32), bytes(size)])


def test_out_of_range_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="hand number"):
        commitment(TABLE, -1, 0, bytes(32))
    with pytest.raises(ValueError, match="hand number"):
        commitment(TABLE, 2**64, 0, bytes(32))
    with pytest.raises(ValueError, match="seat"):
        commitment(TABLE, 1, 256, bytes(32))
    with pytest.raises(ValueError, match="seeds"):
        deck_seed(TABLE, 1, [])
    with pytest.raises(ValueError, match="at least one card"):
        shuffled_order(bytes(32), 0)
    with pytest.raises(ValueError, match="deck seed"):
        shuffled_order(bytes(16), 10)


def test_insecure_seed_is_predictable_and_distinct() -> None:
    seed = insecure_seed(42, TABLE, 1, 0)
    assert len(seed) == 32
    assert insecure_seed(42, TABLE, 1, 0) == seed
    others = {
        insecure_seed("42", TABLE, 1, 0),
        insecure_seed(43, TABLE, 1, 0),
        insecure_seed(42, TABLE + b"x", 1, 0),
        insecure_seed(42, TABLE, 2, 0),
        insecure_seed(42, TABLE, 1, 1),
    }
    assert seed not in others
    assert len(others) == 5
    with pytest.raises(TypeError):
        insecure_seed(True, TABLE, 1, 0)


# Statistics: is every card equally likely at every position?
#
# The seeds are fixed, so these tests are deterministic: they pass or fail the same way every run.
# The threshold is the upper 1 - 3e-5 quantile of the chi-square distribution (z = 4 in the
# Wilson-Hilferty normal approximation), so a fair shuffle would fail with fixed seeds only by a
# very unlucky choice; the biased shuffles below exceed it by a wide margin.

DECKS = 4000
CARDS = 108
Z_THRESHOLD = 4.0


def chi_square_critical(df: int, z: float) -> float:
    """Wilson-Hilferty: (X/df)^(1/3) is about normal with mean 1 - 2/(9 df), var 2/(9 df)."""
    var = 2 / (9 * df)
    return float(df * (1 - var + z * math.sqrt(var)) ** 3)


def chi_square(counts: Sequence[int], expected: float) -> float:
    return sum((count - expected) ** 2 / expected for count in counts)


def position_statistic(decks: Sequence[Sequence[int]]) -> tuple[float, float]:
    """Chi-square of the card-by-position table against uniform, and its critical value.

    Every deck puts each card in exactly one position and each position holds exactly one card,
    so the table's margins are fixed and it has (n-1)^2 degrees of freedom.
    """
    n = len(decks[0])
    counts = [0] * (n * n)
    for deck in decks:
        for position, card in enumerate(deck):
            counts[card * n + position] += 1
    statistic = chi_square(counts, len(decks) / n)
    return statistic, chi_square_critical((n - 1) ** 2, Z_THRESHOLD)


def histogram_statistic(values: Sequence[int], n: int) -> tuple[float, float]:
    counts = [0] * n
    for value in values:
        counts[value] += 1
    return chi_square(counts, len(values) / n), chi_square_critical(n - 1, Z_THRESHOLD)


def fixed_seeds(counter: int) -> list[bytes]:
    return [
        hashlib.sha256(b"chi-square %d seat %d" % (counter, seat)).digest() for seat in range(4)
    ]


@pytest.fixture(scope="module")
def fair_decks() -> list[list[int]]:
    return [derive_deck(TABLE, counter, fixed_seeds(counter), CARDS) for counter in range(DECKS)]


def test_chi_square_critical_value_is_sane() -> None:
    # Known quantiles: chi2(0.99, 10) = 23.21, chi2(0.999, 100) = 149.45.
    assert chi_square_critical(10, 2.3263) == pytest.approx(23.21, rel=0.01)
    assert chi_square_critical(100, 3.0902) == pytest.approx(149.45, rel=0.01)


def test_card_positions_are_uniform(fair_decks: list[list[int]]) -> None:
    statistic, critical = position_statistic(fair_decks)
    assert statistic < critical


def test_position_of_card_zero_is_uniform(fair_decks: list[list[int]]) -> None:
    statistic, critical = histogram_statistic([deck.index(0) for deck in fair_decks], CARDS)
    assert statistic < critical


def test_first_card_is_uniform(fair_decks: list[list[int]]) -> None:
    statistic, critical = histogram_statistic([deck[0] for deck in fair_decks], CARDS)
    assert statistic < critical


def modulo_biased_order(seed: bytes, n: int) -> list[int]:
    """Fisher-Yates with ``byte % (i + 1)``: small j are favoured (the bias rejection avoids)."""
    stream = hashlib.shake_256(seed).digest(n)
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = stream[i] % (i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def naive_order(seed: bytes, n: int) -> list[int]:
    """The classic mistake: swap each position with any position (n^n equally likely runs)."""
    stream = hashlib.shake_256(seed).digest(4 * n)
    order = list(range(n))
    for i in range(n):
        j = int.from_bytes(stream[4 * i : 4 * i + 4], "big") % n  # bias from % is tiny here
        order[i], order[j] = order[j], order[i]
    return order


def rotated_order(seed: bytes, n: int) -> list[int]:
    """Not shuffled at all: the same rotation every time."""
    return [(position + 5) % n for position in range(n)]


@pytest.mark.parametrize("biased", [modulo_biased_order, naive_order, rotated_order])
def test_statistic_rejects_biased_shuffles(biased: Callable[[bytes, int], list[int]]) -> None:
    decks = [
        biased(deck_seed(TABLE, counter, fixed_seeds(counter)), CARDS) for counter in range(DECKS)
    ]
    assert all(sorted(deck) == list(range(CARDS)) for deck in decks[:10])
    statistic, critical = position_statistic(decks)
    assert statistic > critical


def test_stream_is_extended_consistently() -> None:
    # A 5000-card deck reads far more than the first chunk of the stream.
    seed = hashlib.sha256(b"long").digest()
    assert shuffled_order(seed, 5000) == reference_order(seed, 5000)
