"""The hostile-peer suite, short form: every attack against a live host on 127.0.0.1 (a child
process), a few connections and half a second each. The host survives each, its log verifies,
and the chat flood and the password guesser meet their rate limits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_host_survives_every_attack(tmp_path: Path) -> None:
    out = tmp_path / "hostile.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    args = ["--seconds", "0.5", "--connections", "8", "--frames", "300", "--json", str(out)]
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "hostile_peers.py"), *args],
        env=env,
        check=True,
        timeout=120,
        capture_output=True,
    )
    rows = {row["attack"]: row for row in json.loads(out.read_text())}
    assert len(rows) == 9
    for row in rows.values():
        assert row["host_alive"] and row["log_valid"], row
        assert row["probes"] > 0, row  # the seated players were answered throughout
    assert "rate-limited" in rows["chat flood"]["attacker_got"]
    assert "rate-limited" in rows["password guessing"]["attacker_got"]
    assert "reconnected" in rows["many idle connections"]["attacker_got"]
