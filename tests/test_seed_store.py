"""The seed store: committed seeds survive the seat's process, stay private, go once public."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import msgpack
import pytest

from canasta_net.identity import Identity
from canasta_net.log.seed_store import SeedStore, SeedStoreError
from canasta_net.table.signer import SeatSigner, SeedLost

TABLE = bytes(range(16))
OTHER_TABLE = bytes(16)


@pytest.mark.parametrize("sync", [False, True])
def test_seeds_round_trip_per_table_and_hand(tmp_path: Path, sync: bool) -> None:
    store = SeedStore(tmp_path / "seeds", sync=sync)
    table, other = store.for_table(TABLE), store.for_table(OTHER_TABLE)
    assert table.get(0) is None
    table.put(0, b"\x01" * 32)
    table.put(3, b"\x02" * 32)
    other.put(0, b"\x03" * 32)
    again = SeedStore(tmp_path / "seeds").for_table(TABLE)  # a new process reads it back
    assert (again.get(0), again.get(3), again.get(1)) == (b"\x01" * 32, b"\x02" * 32, None)
    assert other.get(0) == b"\x03" * 32
    table.put(0, b"\x04" * 32)  # a fresh commitment replaces the seed
    assert again.get(0) == b"\x04" * 32


def test_the_store_is_private_to_its_owner(tmp_path: Path) -> None:
    store = SeedStore(tmp_path / "seeds")
    store.for_table(TABLE).put(0, os.urandom(32))
    assert store.directory.stat().st_mode & 0o777 == 0o700
    files = list(store.directory.iterdir())
    assert [f.name for f in files] == [f"{TABLE.hex()}.seeds"]
    assert files[0].stat().st_mode & 0o777 == 0o600


def test_published_seeds_are_forgotten(tmp_path: Path) -> None:
    store = SeedStore(tmp_path / "seeds")
    table = store.for_table(TABLE)
    for hand in range(4):
        table.put(hand, bytes([hand]) * 32)
    table.forget_through(1)
    assert [table.get(h) is not None for h in range(4)] == [False, False, True, True]
    table.forget_all()
    assert list(store.directory.iterdir()) == []
    table.forget_all()  # nothing left: still fine


def test_the_store_goes_beside_the_identity_file(tmp_path: Path) -> None:
    assert SeedStore.beside(tmp_path / "alice.pem").directory == tmp_path / "alice.seeds"


@pytest.mark.parametrize(
    "content",
    [
        b"\xc1",  # not msgpack
        msgpack.packb([1, 2]),  # not a map
        msgpack.packb({0: b"short"}),  # not a seed
        msgpack.packb({"0": b"\x00" * 32}),  # not a hand number
        msgpack.packb({0: b"\x00" * 32}) + b"\x00",  # trailing bytes
    ],
)
def test_a_damaged_store_is_reported_not_trusted(tmp_path: Path, content: bytes) -> None:
    store = SeedStore(tmp_path)
    (tmp_path / f"{TABLE.hex()}.seeds").write_bytes(content)
    with pytest.raises(SeedStoreError, match=TABLE.hex()):
        store.for_table(TABLE).get(0)


def test_an_unwritable_store_is_reported(tmp_path: Path) -> None:
    blocker = tmp_path / "seeds"
    blocker.write_text("a file where the directory should be")
    with pytest.raises(SeedStoreError, match=r"cannot (read|write) .*seeds"):
        SeedStore(blocker).for_table(TABLE).put(0, b"\x00" * 32)


_draws = itertools.count(1)  # every seed any signer here draws differs from the others


def signer(store: SeedStore | None) -> SeatSigner:
    return SeatSigner(
        Identity.from_seed(b"seed store test"),
        2,
        TABLE,
        bytes(32),
        random_bytes=lambda n: bytes([next(_draws)]) * n,
        seed_keeper=store.for_table(TABLE) if store else None,
    )


def test_a_signer_keeps_its_seed_before_committing_and_reveals_it_after_a_restart(
    tmp_path: Path,
) -> None:
    store = SeedStore(tmp_path)
    first = signer(store)
    first.commit(5)
    committed = first.secret(5)
    assert store.for_table(TABLE).get(5) == committed.seed
    restarted = signer(store)
    secret = restarted.known_secret(5)
    assert secret is not None and secret.commitment == committed.commitment
    _, _, seed = restarted.reveal(5)
    assert seed == committed.seed


def test_a_restarted_signer_never_commits_to_a_kept_seed(tmp_path: Path) -> None:
    store = SeedStore(tmp_path)
    first = signer(store)
    first.commit(0)
    kept = first.secret(0).seed
    restarted = signer(store)
    restarted.commit(0)  # asked to commit again: a new seed, kept in place of the old
    assert restarted.secret(0).seed != kept
    assert store.for_table(TABLE).get(0) == restarted.secret(0).seed


def test_a_signer_without_its_seed_refuses_to_reveal(tmp_path: Path) -> None:
    first = signer(None)
    first.commit(0)
    with pytest.raises(SeedLost, match="hand 1"):
        signer(SeedStore(tmp_path)).reveal(0)
    with pytest.raises(SeedLost):
        signer(None).reveal(0)
