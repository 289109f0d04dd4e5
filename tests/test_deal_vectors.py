"""The commit-reveal deal's test vector (docs/vectors/commit-reveal-deal.json): one whole small
deal, from the seats' seeds to the first draws, as canasta-net writes it in a log.

Two checks: the vector is what canasta-net produces today (a recorded all-bot table), and
``independent_deal.py``, written from docs/deal-commit-reveal.md and docs/log-format.md alone,
re-derives it. Regenerate the file after a deliberate change with
``python tests/test_deal_vectors.py`` (then the independent check must still pass unchanged).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import msgpack
from independent_deal import check_vector

from canasta_net.canasta.rules import preset
from canasta_net.deal import shuffle
from canasta_net.log import iter_records
from canasta_net.log.records import read_private
from canasta_net.table.local import recorded_match

VECTOR = Path(__file__).resolve().parent.parent / "docs" / "vectors" / "commit-reveal-deal.json"
VARIANT, SEED, DRAWS = "classic", 8, 4  # seed 8: the upcard turns once, two seats hold red threes


def build_vector() -> dict[str, Any]:
    """The vector, read from the log of a real recorded table (host's copy) and the deal code."""
    rules = preset(VARIANT)
    buffer = io.BytesIO()
    recorded_match(rules, buffer, seed=SEED).play(max_hands=1)
    records = list(iter_records(buffer.getvalue()))
    header = records[0].fields
    by_kind = {r.kind: r for r in reversed(records)}  # the first record of each kind
    commitments, deal, seeds = by_kind["commitments"], by_kind["deal"], by_kind["seeds"]
    table, hand_no = header["table"], commitments.fields["hand"]
    seed_list = seeds.fields["seeds"]
    deck_seed = shuffle.deck_seed(table, hand_no, seed_list)
    draws: list[dict[str, Any]] = []
    for record in records:
        if record.kind != "action" or len(draws) == DRAWS:
            continue
        act = msgpack.unpackb(record.fields["act"])
        if act["action"] != "draw":
            continue
        actor = act["seat"]
        payload = record.private[actor]
        draws.append(
            {
                "seq": record.seq,
                "seat": actor,
                "action": act["action"],
                "red_threes": record.fields.get("red_threes"),
                "drawn": read_private(payload)["drawn"],
                "payload": payload.hex(),
                "priv": record.fields["priv"][actor].hex(),
            }
        )
    return {
        "about": (
            "One commit-reveal deal of canasta-net, seeds to first draws (docs/log-format.md, "
            "'Dealing, position by position'). Bytes are hex; card ids are integers "
            "(docs/log-format.md, 'Record kinds'); deck positions count from 0."
        ),
        "variant": VARIANT,
        "rules": {
            key: rules.to_dict()[key]
            for key in (
                "players",
                "decks",
                "jokers_per_deck",
                "hand_size",
                "draw_count",
                "upcard_turns_on_black_three",
            )
        },
        "table_id": table.hex(),
        "hand_no": hand_no,
        "first_dealer": header["match"]["first_dealer"],
        "dealer": commitments.fields["dealer"],
        "seeds": [s.hex() for s in seed_list],
        "commitments": [c.hex() for c in commitments.fields["commitments"]],
        "deck_seed": deck_seed.hex(),
        "deck": shuffle.shuffled_order(deck_seed, rules.deck_size),
        "hands": [read_private(deal.private[s])["hand"] for s in range(rules.players)],
        "pile": deal.fields["pile"],
        "red_threes": deal.fields["red_threes"],
        "stock": deal.fields["stock"],
        "deal_payloads": [deal.private[s].hex() for s in range(rules.players)],
        "deal_priv": [deal.fields["priv"][s].hex() for s in range(rules.players)],
        "reveal_payloads": [
            r.private[r.action["seat"]].hex()
            for r in records
            if r.kind == "reveal" and r.action is not None
        ][: rules.players],
        "first_draws": draws,
    }


def test_the_vector_is_what_canasta_net_produces() -> None:
    vector = json.loads(VECTOR.read_text(encoding="utf-8"))
    assert vector == build_vector()
    # the payloads hash to the commitments signed in the body
    for payload, digest in zip(vector["deal_payloads"], vector["deal_priv"], strict=True):
        assert hashlib.sha256(bytes.fromhex(payload)).hexdigest() == digest


def test_an_independent_derivation_from_the_docs_reproduces_the_vector() -> None:
    check_vector(json.loads(VECTOR.read_text(encoding="utf-8")))


def dump(vector: dict[str, Any]) -> str:
    """JSON with each list of numbers on one line, so that the file reads well."""
    text = json.dumps(vector, indent=1)
    return re.sub(r"\[\s*([0-9,\s]*?)\s*\]", lambda m: "[" + " ".join(m[1].split()) + "]", text)


if __name__ == "__main__":
    VECTOR.write_text(dump(build_vector()) + "\n", encoding="utf-8")
    sys.exit(0)
