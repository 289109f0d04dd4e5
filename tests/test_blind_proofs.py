"""Blind deal version 2 (docs/blind-proofs.md): every stage output carries a proof, and every
deviation in a stage is refused at that stage, naming the seat, before any key is released.

Issue 19's tracer substitution and the other deviations pass version 1's input check (the deck's
form: size, points, distinct), which is all a seat could check there (see the first test); here
each is refused by the proof.
"""

from __future__ import annotations

import functools
import pickle
import random

import pytest

from canasta_net.deal.blind import SeatSecrets, check_deck, initial_deck, stage1
from canasta_net.deal.blind.errors import BadDeck, BadStageProof, DuplicateCiphertext
from canasta_net.deal.blind.proofs import dleq, group, shuffle, stages
from canasta_net.deal.blind.proofs.stages import PublicKeys, StageSecrets

TABLE = b"proof-table"
HAND = 5
SEATS = 3
LABELS = tuple(f"d0:{face}" for face in ("AC", "2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C"))
M = len(LABELS)


def _seed(seat: int, hand: int = HAND) -> bytes:
    return bytes([0x40 + seat + 8 * hand]) * 32


def _secrets(hand: int = HAND) -> list[StageSecrets]:
    return [StageSecrets.derive(TABLE, hand, s, _seed(s, hand), M) for s in range(SEATS)]


SECRETS = _secrets()
KEYS = [s.public_keys() for s in SECRETS]
CARDS = list(stages.card_points(LABELS))


def _points(entries: list[bytes]) -> list[group.Point]:
    return group.decode_all(entries)


def _honest_stage1(seat: int, incoming: list[bytes]) -> tuple[list[bytes], bytes]:
    return stages.stage1(SECRETS[seat], incoming)


def _refused_stage1(seat: int, incoming: list[bytes], outgoing: list[bytes], proof: bytes) -> None:
    """The deviation passes version 1's form check but its proof is refused, naming ``seat``."""
    stages.check_form(outgoing, M, 1, seat)
    for proven in (None, stages.PROVED_HERE):  # a follower that trusts its own work, too
        with pytest.raises(BadStageProof) as refused:
            stages.check_stage1(TABLE, HAND, seat, incoming, outgoing, KEYS[seat], proof, 1, proven)
        assert (refused.value.stage, refused.value.culprit, refused.value.checked_by) == (
            1,
            seat,
            1,
        )
        assert refused.value.code == "bad-stage-proof"
        assert f"seat {seat}'s stage-1 output is refused" in str(refused.value)


def _cheat(outgoing: list[bytes], incoming: list[bytes]) -> tuple[list[bytes], bytes]:
    """The cheater's best proof for a dishonest output: the honest prover run on it (with its
    true key and permutation); any other proof fails the same way, or it would be a forgery."""
    s = SECRETS[0]
    ctx = stages.stage_context(TABLE, HAND, 1, 0)
    return outgoing, shuffle.prove(ctx, incoming, outgoing, s.deck_key, s.permutation).encode()


# ----------------------------------------------------------------------------- version 1's gap
def test_version_1_input_check_accepts_the_tracer_substitution() -> None:
    """Issue 19 on version 1: seat 0 replaces one entry by its chosen card raised to a second
    secret; seat 1's input check accepts it (and stage 1 goes on)."""
    labels = list(LABELS)
    v1 = [SeatSecrets.derive(TABLE, HAND, s, _seed(s), M) for s in range(SEATS)]
    out = stage1(v1[0], initial_deck(labels), SEATS)
    from canasta_net.deal.blind.points import multiply

    out[0] = multiply(123456789, initial_deck(labels)[4])  # the chosen card, a second secret
    check_deck(out, M, 1, 0, checked_by=1)  # no error: a valid, distinct point
    stage1(v1[1], out, SEATS)


# ----------------------------------------------------------------------------- honest deals
def test_an_honest_deal_passes_every_check_and_opens_to_every_card() -> None:
    deck = list(CARDS)
    for stage in (1, 2):
        for seat in range(SEATS):
            make = stages.stage1 if stage == 1 else stages.stage2
            check = stages.check_stage1 if stage == 1 else stages.check_stage2
            out, proof = make(SECRETS[seat], deck)
            check(TABLE, HAND, seat, deck, out, KEYS[seat], proof, checked_by=(seat + 1) % SEATS)
            deck = out
    opened = [
        stages.open_position(deck[j], [SECRETS[s].position_keys[j] for s in range(SEATS)])
        for j in range(M)
    ]
    assert sorted(opened) == sorted(CARDS)
    # the order is the composition of the seats' permutations, as in version 1
    sigma = list(range(M))
    for s in range(SEATS):
        sigma = [sigma[p] for p in SECRETS[s].permutation]
    assert opened == [CARDS[sigma[j]] for j in range(M)]


def test_released_and_sealed_keys_are_checked_against_the_announced_position_keys() -> None:
    s = SECRETS[1]
    assert stages.key_matches(KEYS[1].position_keys[3], s.position_keys[3])
    assert not stages.key_matches(KEYS[1].position_keys[3], s.position_keys[4])
    assert not stages.key_matches(KEYS[1].position_keys[3], 0)
    assert not stages.key_matches(KEYS[1].position_keys[3], group.Q + s.position_keys[3])


def test_public_keys_round_trip_and_malformed_ones_are_refused() -> None:
    data = KEYS[0].encode()
    assert PublicKeys.decode(data) == KEYS[0]
    for bad in (data[:-1], data + b"\x00", b"\x04" + data[1:], data[:10]):
        with pytest.raises(group.GroupError):
            PublicKeys.decode(bad)


# ----------------------------------------------------------------------------- stage 1 deviations
def test_the_tracer_substitution_is_refused_at_stage_1_naming_the_seat() -> None:
    honest, _ = _honest_stage1(0, CARDS)
    chosen = 4  # the card the cheater wants to follow; entry 0 is sacrificed
    out = list(honest)
    out[0] = group.encode(group.mul(_points(CARDS)[chosen], 987654321))
    _refused_stage1(0, CARDS, *_cheat(out, CARDS))


def test_an_entry_dropped_is_refused_at_stage_1() -> None:
    honest, _ = _honest_stage1(0, CARDS)
    out = list(honest)
    out[2] = group.encode(group.base(group.random_scalar()))  # the card there is gone
    _refused_stage1(0, CARDS, *_cheat(out, CARDS))
    with pytest.raises(BadDeck):  # dropped outright: the form check, as in version 1
        stages.check_stage1(TABLE, HAND, 0, CARDS, honest[:-1], KEYS[0], b"")


def test_an_entry_duplicated_is_refused_at_stage_1() -> None:
    honest, _ = _honest_stage1(0, CARDS)
    out = list(honest)
    out[3] = group.encode(group.mul(_points(honest)[5], 31337))  # a card twice, re-masked
    _refused_stage1(0, CARDS, *_cheat(out, CARDS))
    out[3] = honest[5]  # copied byte for byte: the form check names the seat, as in version 1
    with pytest.raises(DuplicateCiphertext) as refused:
        stages.check_stage1(TABLE, HAND, 0, CARDS, out, KEYS[0], b"")
    assert refused.value.culprit == 0


def test_a_stage_raised_to_a_wrong_secret_is_refused_even_with_a_valid_proof_for_it() -> None:
    s = SECRETS[0]
    wrong = StageSecrets(TABLE, HAND, 0, s.deck_key + 1, s.permutation, s.position_keys)
    out, proof = stages.stage1(wrong, CARDS)  # a true proof, but for another key
    _refused_stage1(0, CARDS, out, proof)
    one_wrong = list(_honest_stage1(0, CARDS)[0])
    one_wrong[1] = group.encode(group.mul(_points(CARDS)[s.permutation[1]], s.deck_key + 1))
    _refused_stage1(0, CARDS, *_cheat(one_wrong, CARDS))


def test_a_stage_taken_from_another_hand_is_refused() -> None:
    other = _secrets(HAND + 1)
    out, proof = stages.stage1(other[0], CARDS)  # seat 0's valid stage 1 of the next hand
    stages.check_stage1(TABLE, HAND + 1, 0, CARDS, out, other[0].public_keys(), proof)
    _refused_stage1(0, CARDS, out, proof)


def test_a_later_seat_is_named_and_a_tampered_proof_never_verifies() -> None:
    first, _ = _honest_stage1(0, CARDS)
    out, proof = _honest_stage1(1, first)
    stages.check_stage1(TABLE, HAND, 1, first, out, KEYS[1], proof)
    rng = random.Random(19)
    for _ in range(6):
        at = rng.randrange(len(proof))
        bad = proof[:at] + bytes([proof[at] ^ (1 << rng.randrange(8))]) + proof[at + 1 :]
        for proven in (None, stages.PROVED_HERE):
            with pytest.raises(BadStageProof) as refused:
                stages.check_stage1(TABLE, HAND, 1, first, out, KEYS[1], bad, 2, proven)
            assert refused.value.culprit == 1
    for bad in (b"", proof[:-1], proof + b"\x00"):
        with pytest.raises(BadStageProof):
            stages.check_stage1(TABLE, HAND, 1, first, out, KEYS[1], bad, None, stages.PROVED_HERE)
    swapped = [out[1], out[0], *out[2:]]  # a different permutation than the one proved
    for proven in (None, stages.PROVED_HERE):
        with pytest.raises(BadStageProof):
            stages.check_stage1(TABLE, HAND, 1, first, swapped, KEYS[1], proof, None, proven)


# ----------------------------------------------------------------------------- stage 2 deviations
def _stage2_input() -> list[bytes]:
    deck = list(CARDS)
    for seat in range(SEATS):
        deck, _ = stages.stage1(SECRETS[seat], deck)
    return deck


STAGE2_INPUT = _stage2_input()


@pytest.mark.parametrize("deviation", ["wrong-exponent", "swapped", "tracer", "other-hand"])
def test_stage_2_deviations_are_refused_naming_the_seat(deviation: str) -> None:
    s = SECRETS[0]
    out, proof = stages.stage2(s, STAGE2_INPUT)
    stages.check_stage2(TABLE, HAND, 0, STAGE2_INPUT, out, KEYS[0], proof)
    bad = list(out)
    if deviation == "wrong-exponent":
        bad[2] = group.encode(group.mul(_points(STAGE2_INPUT)[2], 7))
    elif deviation == "swapped":
        bad[0], bad[1] = out[1], out[0]
    elif deviation == "tracer":
        bad[6] = group.encode(group.mul(_points(CARDS)[3], 4242))
    else:
        bad, proof = stages.stage2(_secrets(HAND + 1)[0], STAGE2_INPUT)
    for proven in (None, stages.PROVED_HERE):
        with pytest.raises(BadStageProof) as refused:
            stages.check_stage2(TABLE, HAND, 0, STAGE2_INPUT, bad, KEYS[0], proof, 2, proven)
        assert (refused.value.stage, refused.value.culprit) == (2, 0)


def test_stage_2_with_keys_other_than_announced_is_refused() -> None:
    s = SECRETS[2]
    other = StageSecrets(TABLE, HAND, 2, s.deck_key, s.permutation, SECRETS[1].position_keys)
    out, proof = stages.stage2(other, STAGE2_INPUT)
    for proven in (None, stages.PROVED_HERE):
        with pytest.raises(BadStageProof) as refused:
            stages.check_stage2(TABLE, HAND, 2, STAGE2_INPUT, out, KEYS[2], proof, None, proven)
        assert refused.value.culprit == 2


# ----------------------------------------------------------------------------- own work
def _counting_verifiers(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every proof check (a shuffle proof, a Chaum–Pedersen proof) as it runs."""
    calls: list[str] = []
    for module, name in ((shuffle, "shuffle"), (dleq, "dleq")):
        honest = module.verify

        def verify(*args: object, _honest: object = honest, _name: str = name) -> bool:
            calls.append(_name)
            return _honest(*args)  # type: ignore[operator,no-any-return]

        monkeypatch.setattr(module, "verify", verify)
    return calls


def test_a_follower_that_trusts_its_own_work_skips_only_the_proofs_this_process_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A seat's copy of the log takes its own stage outputs back, and a host the stages of the
    seats it plays: exactly those bytes (input, output, proof, under the announced keys) need no
    second check, since an honest proof always verifies; the form is checked still, and every
    other output, or a byte changed in one, is checked in full."""
    calls = _counting_verifiers(monkeypatch)
    first, proof1 = stages.stage1(SECRETS[0], CARDS)
    second, proof2 = stages.stage2(SECRETS[0], STAGE2_INPUT)
    stages.check_stage1(TABLE, HAND, 0, CARDS, first, KEYS[0], proof1, 1, stages.PROVED_HERE)
    stages.check_stage2(
        TABLE, HAND, 0, STAGE2_INPUT, second, KEYS[0], proof2, 1, stages.PROVED_HERE
    )
    assert calls == []
    stages.check_stage1(TABLE, HAND, 0, CARDS, first, KEYS[0], proof1)  # not asked: checked
    stages.check_stage2(TABLE, HAND, 0, STAGE2_INPUT, second, KEYS[0], proof2)
    assert calls == ["shuffle"] + ["dleq"] * M
    calls.clear()
    with pytest.raises(DuplicateCiphertext):  # the form is always checked
        stages.check_stage1(
            TABLE, HAND, 0, CARDS, [first[1], *first[1:]], KEYS[0], proof1, 1, stages.PROVED_HERE
        )
    other_keys = PublicKeys(KEYS[1].deck_key, KEYS[0].position_keys)
    others = [(TABLE, HAND + 1, KEYS[0]), (b"other", HAND, KEYS[0]), (TABLE, HAND, other_keys)]
    for table, hand, keys in others:
        with pytest.raises(BadStageProof):
            stages.check_stage1(table, hand, 0, CARDS, first, keys, proof1, 1, stages.PROVED_HERE)
    assert calls == ["shuffle"] * 3
    calls.clear()
    altered = proof2[:-1] + bytes([proof2[-1] ^ 1])
    with pytest.raises(BadStageProof):
        stages.check_stage2(
            TABLE, HAND, 0, STAGE2_INPUT, second, KEYS[0], altered, 1, stages.PROVED_HERE
        )
    assert calls == ["dleq"] * M


def test_the_audit_checks_every_proof_even_those_made_in_its_own_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``replay_log`` (the audit, a resumed host) never skips a proof: a whole blind-v2 hand
    dealt and replayed in one process has every stage checked again."""
    import io

    from canasta_net.canasta.rules import preset
    from canasta_net.log.replay import replay_log
    from canasta_net.table.local import recorded_match

    buf = io.BytesIO()
    recorded_match(preset("classic-2p"), buf, seed=3, deal="blind-v2").play(max_hands=1)
    calls = _counting_verifiers(monkeypatch)
    replay_log(buf.getvalue())
    m = 108
    assert calls.count("shuffle") == 2 and calls.count("dleq") >= 2 * m


# ----------------------------------------------------------------------------- Chaum–Pedersen
def test_dleq_proves_equality_and_nothing_else() -> None:
    x = group.random_scalar()
    b1, b2 = group.base(5), group.decode(CARDS[0])
    a1, a2 = group.mul(b1, x), group.mul(b2, x)
    proof = dleq.prove(b"ctx", b1, a1, b2, a2, x)
    assert dleq.verify(b"ctx", b1, a1, b2, a2, proof)
    assert not dleq.verify(b"other", b1, a1, b2, a2, proof)
    assert not dleq.verify(b"ctx", b1, a1, b2, group.mul(b2, x + 1), proof)
    assert not dleq.verify(b"ctx", b1, a1, b2, a2, proof[:-1])
    assert not dleq.verify(b"ctx", b1, a1, b2, a2, bytes(64))
    forged = dleq.prove(b"ctx", b1, a1, b2, group.mul(b2, x + 1), x)
    assert not dleq.verify(b"ctx", b1, a1, b2, group.mul(b2, x + 1), forged)


def test_group_refuses_what_is_not_a_point() -> None:
    for bad in (b"", b"\x04" + bytes(32), b"\x02" + (2**256 - 2**32 - 977).to_bytes(32, "big")):
        with pytest.raises(group.GroupError):
            group.decode(bad)
    with pytest.raises(group.GroupError):
        group.mul(group.G, group.Q)
    with pytest.raises(group.GroupError):
        group.add([group.G, group.neg(group.G)])
    assert group.encode(group.add([group.G, group.G])) == group.encode(group.base(2))
    assert group.encode(group.neg(group.base(3))) == group.encode(group.base(group.Q - 3))


# ----------------------------------------------------------------------------- a proof begun ahead
def test_a_proof_begun_before_its_input_verifies_and_its_start_serves_one_proof() -> None:
    """A seat works out the input-independent part of its next stage proof while it waits
    (``stages.start_stage``): the proof finished on the input with it verifies, and uses it (the
    permutation commitments of stage 1, the nonce commitments ``[w_j]K`` of stage 2); a second
    proof given the same start draws its own (the nonces must never mask two proofs), and a
    start made for other secrets is not used."""
    s = SECRETS[1]
    part = shuffle.start(s.deck_key, s.permutation)
    begun = stages.ProverStart(1, s, part)
    out, proof = stages.stage1(s, CARDS, begun=begun)
    stages.check_stage1(TABLE, HAND, 1, CARDS, out, KEYS[1], proof)
    assert list(shuffle.ShuffleProof.decode(proof).u) == part.u  # the start's commitments
    out, proof = stages.stage1(s, CARDS, begun=begun)  # the start is spent: fresh values
    stages.check_stage1(TABLE, HAND, 1, CARDS, out, KEYS[1], proof)
    assert list(shuffle.ShuffleProof.decode(proof).u) != part.u
    assert part.take(s.deck_key, s.permutation) is None  # and spent for shuffle.prove too
    other = stages.start_stage(1, SECRETS[2])
    out, proof = stages.stage1(s, CARDS, begun=other)  # made for another seat: not used
    stages.check_stage1(TABLE, HAND, 1, CARDS, out, KEYS[1], proof)
    fresh = stages.start_stage(1, s)
    assert fresh.take(2, s) is None  # a start for another stage is not used either
    # a stage's work, with its start, is a call that pickles (for a process pool, one day)
    for stage, incoming in ((1, CARDS), (2, STAGE2_INPUT)):
        work = functools.partial(
            stages.stage1 if stage == 1 else stages.stage2,
            s,
            incoming,
            begun=stages.start_stage(stage, s),
        )
        out, proof = pickle.loads(pickle.dumps(work))()
        check = stages.check_stage1 if stage == 1 else stages.check_stage2
        check(TABLE, HAND, 1, incoming, out, KEYS[1], proof)

    def first_commitment(proof: bytes) -> bytes:
        """``T1 = [s]K - [c]K_0`` of position 0's proof: ``[w_0]K``."""
        c, s_ = group.scalar_from(proof[4:36]), group.scalar_from(proof[36:68])
        k, k0 = group.decode(KEYS[1].deck_key), group.decode(KEYS[1].position_keys[0])
        return group.encode(group.add([group.mul(k, s_), group.mul(k0, group.Q - c)]))

    begun2 = stages.start_stage(2, s)
    nonces = begun2.take(2, s)
    assert isinstance(nonces, list)
    begun2 = stages.ProverStart(2, s, nonces)
    out, proof = stages.stage2(s, STAGE2_INPUT, begun=begun2)
    stages.check_stage2(TABLE, HAND, 1, STAGE2_INPUT, out, KEYS[1], proof)
    assert first_commitment(proof) == group.encode(nonces[0][1])
    out, proof = stages.stage2(s, STAGE2_INPUT, begun=begun2)
    stages.check_stage2(TABLE, HAND, 1, STAGE2_INPUT, out, KEYS[1], proof)
    assert first_commitment(proof) != group.encode(nonces[0][1])
