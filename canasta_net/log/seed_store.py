"""A seat's secret per-hand seeds, kept on disk until they are public.

A seat commits to a seed before the deal and reveals it afterwards. If the seat's process dies
in between, a seed held only in memory is gone, the seat cannot reveal, and the table must
record a forfeit. So a peer writes each fresh seed here before it
sends the commitment, and a restarted peer reads it back to reveal.

The store never decides which seed to commit to: a commitment is always made with a fresh
seed, and a stored seed is only ever used to reveal against a commitment that the host's signed
log already lists for this seat. A host that replays an old table id therefore learns nothing new
(a seed is never committed twice). Seeds are deleted once the log publishes them.

Layout: one file per table, ``<directory>/<table id in hex>.seeds``, a msgpack map from hand
number to the 32-byte seed, rewritten atomically (temporary file, rename). The directory is
created 0700 and the files 0600: until it is revealed, a seed is as secret as the hand.

Durability: a seed is in the operating system's hands before its commitment is sent, so it
survives the seat's process dying (a crash, a kill, a closed terminal), the case that matters.
By default it is not synced to the disk: a sync costs under 1 ms alone here, but while the host
and the other seats sync their logs it added about 25 ms to every blind deal, on its critical
path. ``SeedStore(..., sync=True)`` syncs (file and directory) for a power cut as well; without
it, a power cut in the seconds between commitment and reveal costs the seat a forfeit, as it
did before seeds were kept at all.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import msgpack

from ..deal.shuffle import SEED_SIZE
from . import fsync_directory

MAX_STORED_HANDS = 1024  # a table file larger than this is not ours: refuse to read it


class SeedStoreError(Exception):
    """The seed store cannot be read or written."""


class SeedStore:
    """Per-hand seeds of one identity, for every table it sits at."""

    def __init__(self, directory: Path, *, sync: bool = False) -> None:
        self.directory = directory
        self.sync = sync

    @classmethod
    def beside(cls, identity_path: Path, *, sync: bool = False) -> SeedStore:
        """The store that goes with an identity file: ``alice.pem`` keeps ``alice.seeds/``."""
        return cls(identity_path.with_suffix(".seeds"), sync=sync)

    def for_table(self, table_id: bytes) -> TableSeeds:
        return TableSeeds(self, bytes(table_id))

    def _path(self, table_id: bytes) -> Path:
        return self.directory / f"{table_id.hex()}.seeds"

    def read(self, table_id: bytes) -> dict[int, bytes]:
        path = self._path(table_id)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as e:
            raise SeedStoreError(f"cannot read {path}: {e.strerror}") from None
        try:
            stored = msgpack.unpackb(data, strict_map_key=False)
        except (ValueError, msgpack.ExtraData) as e:
            raise SeedStoreError(f"{path} is damaged: {e}") from None
        if not isinstance(stored, dict) or len(stored) > MAX_STORED_HANDS:
            raise SeedStoreError(f"{path} is not a seed file")
        seeds = {
            hand: seed
            for hand, seed in stored.items()
            if isinstance(hand, int) and isinstance(seed, bytes) and len(seed) == SEED_SIZE
        }
        if len(seeds) != len(stored):
            raise SeedStoreError(f"{path} holds entries that are not seeds")
        return seeds

    def write(self, table_id: bytes, seeds: dict[int, bytes]) -> None:
        """Replace the table's seeds: on return they survive the process (and, with ``sync``,
        a power cut)."""
        path = self._path(table_id)
        try:
            if not seeds:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                return
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            temporary = path.with_suffix(".tmp")
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(msgpack.packb(dict(sorted(seeds.items()))))
                f.flush()
                if self.sync:
                    os.fsync(f.fileno())
            os.replace(temporary, path)
            if self.sync:
                fsync_directory(self.directory)
        except OSError as e:
            raise SeedStoreError(f"cannot write {path}: {e.strerror}") from None


class TableSeeds:
    """The seeds of one table: what a ``SeatSigner`` keeps and looks up."""

    def __init__(self, store: SeedStore, table_id: bytes) -> None:
        self.store = store
        self.table_id = table_id

    def get(self, hand: int) -> bytes | None:
        return self.store.read(self.table_id).get(hand)

    def put(self, hand: int, seed: bytes) -> None:
        seeds = self.store.read(self.table_id)
        seeds[hand] = bytes(seed)
        self.store.write(self.table_id, seeds)

    def forget_through(self, hand: int) -> None:
        """Hands up to ``hand`` have their seeds published: nothing left to keep secret."""
        seeds = self.store.read(self.table_id)
        kept = {h: s for h, s in seeds.items() if h > hand}
        if kept != seeds:
            self.store.write(self.table_id, kept)

    def forget_all(self) -> None:
        self.store.write(self.table_id, {})


__all__ = ["SeedStore", "SeedStoreError", "TableSeeds"]
