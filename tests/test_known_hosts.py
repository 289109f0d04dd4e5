"""The known_hosts store: pinning, checking, a changed key, a damaged file, file permissions."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from canasta_net.identity import Identity
from canasta_net.net.known_hosts import (
    MAX_FILE_SIZE,
    KnownHosts,
    KnownHostsError,
    default_known_hosts_path,
)

HOST = Identity.from_seed(b"known host").fingerprint
OTHER = Identity.from_seed(b"other host").fingerprint
THIRD = Identity.from_seed(b"third host").fingerprint


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_missing_file_is_an_empty_store(tmp_path: Path) -> None:
    store = KnownHosts(tmp_path / "nowhere" / "known_hosts")
    assert store.lookup("192.168.1.20:4711") is None
    assert store.check("192.168.1.20:4711", HOST) == "unknown"
    assert len(store) == 0 and store.warnings == []
    assert not (tmp_path / "nowhere").exists()  # reading creates nothing


def test_pin_then_check(tmp_path: Path) -> None:
    path = tmp_path / "config" / "known_hosts"
    store = KnownHosts(path)
    store.pin("192.168.1.20:4711", HOST)
    assert store.lookup("192.168.1.20:4711") == HOST
    assert store.check("192.168.1.20:4711", HOST) == "match"
    assert store.check("192.168.1.20:4711", OTHER) == "mismatch"
    assert store.check("192.168.1.21:4711", HOST) == "unknown"
    # A fresh reader sees the same thing.
    again = KnownHosts(path)
    assert again.lookup("192.168.1.20:4711") == HOST and again.warnings == []
    assert f"192.168.1.20:4711 {HOST}\n" in path.read_text()


def test_file_and_directory_modes(tmp_path: Path) -> None:
    path = tmp_path / "config" / "canasta-net" / "known_hosts"
    KnownHosts(path).pin("table.local:4711", HOST)
    assert mode(path) == 0o600
    assert mode(path.parent) == 0o700
    # A rewrite keeps 0600 even if someone loosened it, and leaves no temporary file behind.
    os.chmod(path, 0o644)
    KnownHosts(path).pin("other.local:4711", OTHER)
    assert mode(path) == 0o600
    assert sorted(p.name for p in path.parent.iterdir()) == ["known_hosts"]


def test_group_writable_file_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "known_hosts"
    path.write_text(f"host:1 {HOST}\n")
    os.chmod(path, 0o664)
    store = KnownHosts(path)
    assert store.lookup("host:1") == HOST
    assert any("writable by other users" in warning for warning in store.warnings)


def test_fingerprints_and_addresses_are_normalized(tmp_path: Path) -> None:
    store = KnownHosts(tmp_path / "known_hosts")
    store.pin("Table.Local:4711", HOST.upper().replace("-", " ").replace(" ", ""))
    assert store.lookup("table.local:4711") == HOST
    assert store.check("TABLE.local:4711", HOST.upper()) == "match"
    with pytest.raises(ValueError, match="not a canasta-net fingerprint"):
        store.pin("table.local:4711", "not-a-fingerprint")
    with pytest.raises(ValueError, match="without spaces"):
        store.pin("table local", HOST)
    with pytest.raises(ValueError, match="cannot contain '#'"):
        store.pin("table#1", HOST)
    with pytest.raises(ValueError):
        store.check("table.local:4711", "garbage")
    with pytest.raises(ValueError):
        store.check("unknown.local:4711", "garbage")


def test_repin_replaces_in_place_and_keeps_everything_else(tmp_path: Path) -> None:
    path = tmp_path / "known_hosts"
    lines = ["# my tables", f"a:1 {HOST}  # the kitchen laptop", "", f"b:1 {OTHER}", "garbage"]
    path.write_text("\n".join(lines) + "\n")
    store = KnownHosts(path)
    store.pin("a:1", THIRD)
    assert store.check("a:1", THIRD) == "match"
    assert store.check("a:1", HOST) == "mismatch"
    lines[1] = f"a:1 {THIRD}"
    assert path.read_text() == "\n".join(lines) + "\n"


def test_malformed_lines_are_skipped_with_warnings(tmp_path: Path) -> None:
    path = tmp_path / "known_hosts"
    path.write_bytes(
        (
            f"good:1 {HOST}\n"
            "only-an-address\n"
            f"too:1 {HOST} many\n"
            "bad:1 abcd-efgh\n"
            f"good:1 {OTHER}\n"
            f"   spaced:1\t{OTHER}   # trailing comment\n"
        ).encode()
        + b"\xff\xfe:1 binary-junk\n"
    )
    store = KnownHosts(path)
    assert list(store) == [("good:1", HOST), ("spaced:1", OTHER)]
    assert store.check("good:1", HOST) == "match"  # the first entry wins over a later duplicate
    assert len(store.warnings) == 5
    assert [w.split(": ", 1)[0].rsplit(" ", 1)[1] for w in store.warnings] == [
        "2",
        "3",
        "4",
        "5",
        "7",
    ]
    assert "expected 'address fingerprint', found 1 fields" in store.warnings[0]
    assert "listed again" in store.warnings[3]
    # Pinning something else rewrites the file but keeps the damaged lines byte for byte.
    before = path.read_bytes()
    store.pin("new:1", THIRD)
    after = path.read_bytes()
    assert after == before + f"new:1 {THIRD}\n".encode()


def test_forget(tmp_path: Path) -> None:
    store = KnownHosts(tmp_path / "known_hosts")
    store.pin("a:1", HOST)
    store.pin("b:1", OTHER)
    assert store.forget("a:1") is True
    assert store.forget("a:1") is False
    assert store.lookup("a:1") is None and store.lookup("b:1") == OTHER


def test_pin_keeps_another_process_pins(tmp_path: Path) -> None:
    path = tmp_path / "known_hosts"
    first = KnownHosts(path)
    second = KnownHosts(path)
    first.pin("a:1", HOST)
    second.pin("b:1", OTHER)  # re-reads before writing: a:1 survives
    assert KnownHosts(path).lookup("a:1") == HOST
    assert second.lookup("a:1") == HOST


def test_oversized_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "known_hosts"
    path.write_bytes(b"#" * (MAX_FILE_SIZE + 1))
    with pytest.raises(KnownHostsError, match="larger than"):
        KnownHosts(path)


def test_default_path_respects_xdg_config_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert default_known_hosts_path() == tmp_path / "xdg" / "canasta-net" / "known_hosts"
    assert KnownHosts().path == tmp_path / "xdg" / "canasta-net" / "known_hosts"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    home_config = tmp_path / "home" / ".config"
    assert default_known_hosts_path() == home_config / "canasta-net" / "known_hosts"


def test_new_file_starts_with_an_explanation(tmp_path: Path) -> None:
    path = tmp_path / "known_hosts"
    KnownHosts(path).pin("a:1", HOST)
    lines = path.read_text().splitlines()
    assert lines[0].startswith("# canasta-net known hosts")
    assert lines[-1] == f"a:1 {HOST}"
    assert KnownHosts(path).warnings == []
