"""The hostile-peer suite, short form: every attack against a live host on 127.0.0.1 (a child
process), a few connections and half a second each. The host survives each, its log verifies,
and the chat flood and the password guesser meet their rate limits."""

from __future__ import annotations

import json
from pathlib import Path

from script_runs import run_script


def test_the_host_survives_every_attack(tmp_path: Path) -> None:
    out = tmp_path / "hostile.json"
    args = ["--seconds", "0.5", "--connections", "8", "--frames", "300", "--json", str(out)]
    run_script("hostile_peers.py", *args)
    rows = {row["attack"]: row for row in json.loads(out.read_text())}
    assert len(rows) == 9
    for row in rows.values():
        assert row["host_alive"] and row["log_valid"], row
        assert row["probes"] > 0, row  # the seated players were answered throughout
    assert "rate-limited" in rows["chat flood"]["attacker_got"]
    assert "rate-limited" in rows["password guessing"]["attacker_got"]
    assert "reconnected" in rows["many idle connections"]["attacker_got"]
