"""The identity's key file: made whole or not at all, and one key when processes start at once."""

from __future__ import annotations

import stat
import threading
from pathlib import Path

import pytest

from canasta_net.identity import Identity


def test_players_started_at_once_with_one_key_file_end_up_with_one_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every starter has seen "no file" before any writes: each makes a key of its own, and only
    # one of them may become the file; the others must take that one (before, each wrote its own
    # over the file and kept using a key the file no longer held)
    path = tmp_path / "config" / "identity.pem"
    starters = 6
    all_looked = threading.Barrier(starters)
    generate = Identity.generate.__func__  # type: ignore[attr-defined]

    def generate_when_all_looked(cls: type[Identity]) -> Identity:
        all_looked.wait(timeout=10)
        return generate(cls)  # type: ignore[no-any-return]

    monkeypatch.setattr(Identity, "generate", classmethod(generate_when_all_looked))
    keys: list[bytes] = []
    threads = [
        threading.Thread(target=lambda: keys.append(Identity.load_or_create(path).public_key))
        for _ in range(starters)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert len(keys) == starters
    assert set(keys) == {Identity.load(path).public_key}
    assert sorted(p.name for p in path.parent.iterdir()) == ["identity.pem"]  # nothing left over


def test_a_new_key_never_replaces_a_file_that_is_there(tmp_path: Path) -> None:
    path = tmp_path / "identity.pem"
    first, second = Identity.generate(), Identity.generate()
    assert first.save_new(path) is True
    assert second.save_new(path) is False
    assert Identity.load(path).public_key == first.public_key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["identity.pem"]


def test_save_replaces_the_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "keys" / "identity.pem"
    Identity.generate().save(path)
    replacement = Identity.generate()
    replacement.save(path)
    assert Identity.load(path).public_key == replacement.public_key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert [p.name for p in path.parent.iterdir()] == ["identity.pem"]
