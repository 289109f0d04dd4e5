"""Blind deal version 2: the test vectors of docs/vectors/blind-proofs.json, checked against the
code and against independent_proofs.py, written from docs/blind-proofs.md alone (pure-Python
secp256k1). Regenerate the file with ``python tests/test_blind_proof_vectors.py`` (then the
independent check must still pass unchanged)."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import independent_proofs
import pytest
from independent_proofs import Refused, check_vector

from canasta_net.deal.blind.proofs import dleq, group, stages
from canasta_net.deal.blind.proofs.stages import PublicKeys, StageSecrets

VECTOR = Path(__file__).resolve().parent.parent / "docs" / "vectors" / "blind-proofs.json"
TABLE = bytes(range(16))
HAND = 7
LABELS = ("d0:AC", "d0:2C", "d0:3C", "d0:4C", "d0:5C", "d0:6C")
SEATS = 3


class _Stream:
    """The generator's fixed randomness: SHA-512 of a label and a counter (not part of the
    specification: any random values give valid proofs)."""

    def __init__(self, label: bytes) -> None:
        self.label, self.counter = label, 0

    def __call__(self, n: int) -> bytes:
        assert n <= 64
        self.counter += 1
        return hashlib.sha512(self.label + self.counter.to_bytes(8, "big")).digest()[:n]


def make_vector() -> dict[str, Any]:
    rng = _Stream(b"canasta-net blind-proofs test vector")
    m = len(LABELS)
    cards = list(stages.card_points(LABELS))
    secrets = [
        StageSecrets.derive(TABLE, HAND, s, bytes([0x11 * (s + 1)]) * 32, m) for s in range(SEATS)
    ]
    seats: list[dict[str, Any]] = []
    for s in secrets:
        keys = s.public_keys()
        seats.append(
            {
                "seed": (bytes([0x11 * (s.seat + 1)]) * 32).hex(),
                "deck_key": keys.deck_key.hex(),
                "position_keys": [k.hex() for k in keys.position_keys],
            }
        )
    deck = cards
    for stage in (1, 2):
        for s in secrets:
            make = stages.stage1 if stage == 1 else stages.stage2
            deck, proof = make(s, deck, rng)
            seats[s.seat][f"stage{stage}"] = [x.hex() for x in deck]
            seats[s.seat][f"stage{stage}_proof"] = proof.hex()
    index = {c: i for i, c in enumerate(cards)}
    final_labels = [
        LABELS[index[stages.open_position(deck[j], [s.position_keys[j] for s in secrets])]]
        for j in range(m)
    ]
    x = 0x1234567890ABCDEF
    b1, b2 = group.G, group.decode(cards[0])
    a1, a2 = group.mul(b1, x), group.mul(b2, x)
    ctx = b"an example context"
    return {
        "about": "docs/blind-proofs.md: a three-seat blind deal, version 2, of six cards, every "
        "stage output with its proof; and one Chaum-Pedersen proof (section 4) of x = "
        "0x1234567890abcdef with B1 = G and B2 = the first card point. Bytes are hex.",
        "table_id": TABLE.hex(),
        "hand_no": HAND,
        "labels": list(LABELS),
        "card_points": [c.hex() for c in cards],
        "seats": seats,
        "final_labels": final_labels,
        "dleq": {
            "ctx": ctx.hex(),
            "b1": group.encode(b1).hex(),
            "a1": group.encode(a1).hex(),
            "b2": group.encode(b2).hex(),
            "a2": group.encode(a2).hex(),
            "proof": dleq.prove(ctx, b1, a1, b2, a2, x, rng).hex(),
        },
    }


def _stored() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(VECTOR.read_text(encoding="utf-8"))
    return data


def test_the_code_reproduces_the_vector() -> None:
    assert make_vector() == _stored()


def test_the_code_accepts_every_proof_of_the_vector() -> None:
    v = _stored()
    deck = [bytes.fromhex(c) for c in v["card_points"]]
    for stage in (1, 2):
        for seat, s in enumerate(v["seats"]):
            keys = PublicKeys(
                bytes.fromhex(s["deck_key"]), tuple(bytes.fromhex(k) for k in s["position_keys"])
            )
            out = [bytes.fromhex(x) for x in s[f"stage{stage}"]]
            check = stages.check_stage1 if stage == 1 else stages.check_stage2
            check(TABLE, HAND, seat, deck, out, keys, bytes.fromhex(s[f"stage{stage}_proof"]))
            deck = out


def test_an_independent_implementation_from_the_docs_checks_the_vector() -> None:
    check_vector(_stored())


@pytest.mark.parametrize(("stage", "offset"), [(1, 4), (1, 4 + 33 * 12 + 5), (2, 70)])
def test_the_independent_check_refuses_a_changed_bit(stage: int, offset: int) -> None:
    v = _stored()
    seat0, seat1 = v["seats"][0], v["seats"][1]
    incoming = [bytes.fromhex(x) for x in seat0[f"stage{stage}"]]
    out = [bytes.fromhex(x) for x in seat1[f"stage{stage}"]]
    proof = bytearray(bytes.fromhex(seat1[f"stage{stage}_proof"]))
    proof[offset] ^= 0x01
    ctx = independent_proofs.stage_ctx(TABLE, HAND, stage, 1)
    with pytest.raises(Refused):
        if stage == 1:
            key = bytes.fromhex(seat1["deck_key"])
            independent_proofs.verify_shuffle(ctx, incoming, out, key, bytes(proof))
        else:
            j = (offset - 4) // 64
            independent_proofs.verify_dleq(
                ctx + independent_proofs.field(j.to_bytes(4, "big")),
                bytes.fromhex(seat1["deck_key"]),
                bytes.fromhex(seat1["position_keys"][j]),
                incoming[j],
                out[j],
                bytes(proof[4 + 64 * j : 4 + 64 * (j + 1)]),
            )
    d = dict(v["dleq"])
    bad = bytearray(bytes.fromhex(d["proof"]))
    bad[offset % 64] ^= 0x80
    with pytest.raises(Refused):
        ctx, b1, a1, b2, a2 = (bytes.fromhex(d[k]) for k in ("ctx", "b1", "a1", "b2", "a2"))
        independent_proofs.verify_dleq(ctx, b1, a1, b2, a2, bytes(bad))


if __name__ == "__main__":
    VECTOR.write_text(json.dumps(make_vector(), indent=1) + "\n", encoding="utf-8")
    sys.stdout.write(f"wrote {VECTOR}\n")
