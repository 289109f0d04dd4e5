"""Blind-dealt hands at the table, sans-io: the host never holds a hidden card, every copy of the
log verifies, and a seat that cheats is caught and named."""

from __future__ import annotations

import functools
import io
import pickle
import random
from collections.abc import Callable
from typing import Any

import msgpack
import pytest

from canasta_net.canasta.actions import TakePile
from canasta_net.canasta.rules import preset
from canasta_net.cards import is_red_three
from canasta_net.deal.blind.errors import BadParameters, BlindError
from canasta_net.deal.blind.hand import BlindHand, BlindRefused, HandPhase, Violation
from canasta_net.deal.blind.keys import SeatSecrets
from canasta_net.deal.blind.points import card_points, multiply
from canasta_net.deal.blind.protocol import KeyMessage, StageOutput, decode_deck, encode_deck
from canasta_net.deal.blind.schedule import labels_for_rules
from canasta_net.identity import Identity
from canasta_net.identity import verify as verify_signature
from canasta_net.log import iter_records
from canasta_net.log import records as R
from canasta_net.log.replay import ReplayError, replay_log
from canasta_net.log.writer import LogWriter
from canasta_net.table.host import TablePhase
from canasta_net.table.local import bot_identity, recorded_match

TABLE = b"blind-test-table"

Tamper = Callable[[int, str, dict[str, Any], list[BlindHand]], dict[str, Any]]


def _hands(
    variant: str, seed: int, version: int = 1
) -> tuple[BlindHand, list[BlindHand], random.Random]:
    rules = preset(variant)
    rng = random.Random(seed)
    ids = [Identity.from_seed(bytes([s + 1]) * 32) for s in range(rules.players)]
    keys = [i.public_key for i in ids]
    minimums = [rules.initial_minimum(0)] * rules.teams
    host = BlindHand(rules, TABLE, 0, 0, minimums, keys, version=version)
    seats = [
        BlindHand(
            rules,
            TABLE,
            0,
            0,
            minimums,
            keys,
            viewer=s,
            secrets=SeatSecrets.generate(TABLE, 0, s, rules.deck_size, rng.randbytes),
            identity=ids[s],
            version=version,
            # as at a table (BlindSeat): a version-2 seat's log follower checks the proofs
            trusted=version == 2,
        )
        for s in range(rules.players)
    ]
    return host, seats, rng


def _deal_step(host: BlindHand, seats: list[BlindHand]) -> None:
    """One deal message: the first seat the hand waits for answers; everyone takes it."""
    seat = next(s for s in range(len(seats)) if host.needs(s).kind != "wait")
    need = host.needs(seat)
    fields = seats[seat].respond(need)
    for hand in (host, *seats):
        hand.feed(seat, need.kind, fields)


def _play(variant: str, seed: int, tamper: Tamper | None = None, version: int = 1) -> BlindHand:
    """One hand, random legal play; every seat's message goes to the host and every seat."""
    host, seats, rng = _hands(variant, seed, version)
    while host.phase is not HandPhase.DONE:
        seat = next(s for s in range(len(seats)) if host.needs(s).kind != "wait")
        need = host.needs(seat)
        assert seats[seat].needs(seat) == need  # everyone agrees on what comes next
        view = seats[seat]
        if need.kind == "act":
            assert view.state is not None
            action = rng.choice(view.state.legal_actions())
            proofs = view.proofs_for(action)
            for hand in (host, *seats):
                hand.feed_action(seat, action, proofs)
            continue
        fields = view.respond(need)
        if tamper is not None:
            fields = tamper(seat, need.kind, fields, seats)
        for hand in (host, *seats):
            hand.feed(seat, need.kind, fields)
    return host


@pytest.mark.parametrize("variant", ["classic", "classic-2p", "samba-3p", "bolivia"])
def test_a_blind_hand_verifies_and_the_host_knows_only_public_cards(variant: str) -> None:
    host = _play(variant, 7)
    final = host.verify()
    assert final.is_over
    # every position the host can open was opened in public
    assert set(host.fixed) == host.public
    assert host.received == {}


def test_the_host_state_holds_no_card_point_of_a_hidden_card() -> None:
    """Scan a dump of the host's whole hand object mid-hand for every card's point and label:
    only the public ones may be there (the stand-in engine holds card ids, not secrets)."""
    host, seats, _ = _hands("classic", 3)
    while host.phase is not HandPhase.PLAY:
        _deal_step(host, seats)
    dump = pickle.dumps({k: v for k, v in vars(host).items() if k not in ("cards", "labels")})
    labels = labels_for_rules(preset("classic"))
    points = card_points(labels)
    public_cards = {host.fixed[p] for p in host.public}
    for card, point in enumerate(points):
        if card not in public_cards:
            assert point not in dump, labels[card]
    # and a seat's view holds its own cards and the public ones only
    for s, view in enumerate(seats):
        own = {view.fixed[p] for p in view.fixed if p not in view.public}
        dealt = set(view.schedule.hands[s]) | set(range(view.dealt + 1, view.dealt + view.consumed))
        assert {p for p in view.fixed if p not in view.public} <= dealt
        assert len(own) >= len(view.schedule.hands[s]) - 4  # red threes dealt are public


def test_a_concealed_red_three_is_named_at_the_hand_end() -> None:
    """A seat that reports no red three among cards it received, when one is there: the host
    cannot see it, the hand-end replay with every card known names the seat."""
    for seed in range(20):
        host = _play("classic", seed)
        reports = [e for e in host.events if e.action is None and e.reds]
        if reports:
            break
    assert reports, "no red three was dealt or drawn in 20 hands"
    host.verify()  # honest as played
    liar = reports[-1]
    liar.reds = ()  # what the log would hold had the seat kept it hidden
    with pytest.raises(Violation) as caught:
        host.verify()
    assert caught.value.seat == liar.seat
    assert caught.value.code == "concealed-red-three"


def test_a_wrong_sealed_key_is_named() -> None:
    """Seat 1 seals another seat's position key in place of its own: the receiver cannot open
    the card; the hand-end audit names seat 1."""
    host, seats, _ = _hands("classic", 5)
    while host.phase is not HandPhase.DEAL_KEYS:
        _deal_step(host, seats)
    liar = seats[1]
    honest = liar.secrets
    assert honest is not None
    wrong = SeatSecrets.derive(TABLE, 0, 1, b"\x07" * 32, liar.size)
    object.__setattr__(wrong, "x25519_private", honest.x25519_private)  # it seals correctly
    liar.secrets = wrong
    fields = liar.respond(host.needs(1))
    receiver = seats[0]
    receiver.feed(1, "keys", fields)
    with pytest.raises(BlindError):  # seat 0 cannot open the cards dealt to it
        receiver._open_own(receiver.schedule.hands[0])
    host.feed(1, "keys", fields)  # the host cannot tell: it routes ciphertext
    # at the hand's end every seat reveals the seed it committed to, the liar too
    host.seeds = {s: seats[s].secrets.seed for s in range(4) if s != 1}  # type: ignore[union-attr]
    host.seeds[1] = honest.seed
    host.phase = HandPhase.DONE
    with pytest.raises(Violation) as caught:
        host.verify()
    assert (caught.value.seat, caught.value.code) == (1, "wrong-key")


def test_a_duplicate_ciphertext_in_a_stage_output_is_refused_naming_the_seat() -> None:
    host, seats, _ = _hands("classic", 2)
    while host.phase is HandPhase.ANNOUNCE:
        _deal_step(host, seats)
    fields = seats[0].respond(host.needs(0))
    deck = fields["deck"]
    fields = {**fields, "deck": deck[:32] + deck[:32] + deck[64:]}
    with pytest.raises(BlindRefused) as caught:
        host.feed(0, "stage", fields)
    assert caught.value.code in ("bad-deck", "bad-stage-signature")
    assert host.phase is HandPhase.STAGES and host.stage_outputs == []


def test_a_card_not_dealt_to_the_seat_is_refused() -> None:
    """Playing a card with a proof for another seat's position (or a made-up card) is refused."""
    host, seats, _ = _hands("classic", 4)
    while True:
        seat = next(s for s in range(len(seats)) if host.needs(s).kind != "wait")
        need = host.needs(seat)
        if need.kind == "act" and seats[seat].state is not None:
            view = seats[seat]
            assert view.state is not None
            if view.state.phase.value == "play":
                break
            action = next(a for a in view.state.legal_actions() if str(a) == "draw")
            for hand in (host, *seats):
                hand.feed_action(seat, action, [])
            continue
        fields = seats[seat].respond(need)
        for hand in (host, *seats):
            hand.feed(seat, need.kind, fields)
    view = seats[seat]
    assert view.state is not None
    other = (seat + 1) % 4
    stolen = seats[other].schedule.hands[other][0]
    from canasta_net.canasta.actions import Discard

    card = seats[other].fixed[stolen]
    discard = Discard(view.state.deck.face[card])
    proof = [[stolen, seats[other].own_keys(stolen)]]
    with pytest.raises(BlindRefused) as caught:
        host.feed_action(seat, discard, proof)
    assert caught.value.code == "bad-proof"
    # a discard with no proof of a hidden card is refused too
    own = next(c for c in view.state.hands[seat] if not is_red_three(view.state.deck.face[c]))
    with pytest.raises(BlindRefused) as caught:
        host.feed_action(seat, Discard(view.state.deck.face[own]), [])
    assert caught.value.code in ("unproved-card", "card-not-in-hand")
    assert host.needs(seat).kind == "act"  # nothing changed


def test_a_blind_match_logs_verify_and_a_tampered_report_is_caught() -> None:
    buf = io.BytesIO()
    match = recorded_match(preset("classic"), buf, seed=11, deal="blind")
    match.play(max_hands=1)
    assert match.host.phase is not TablePhase.OVER
    result = replay_log(buf.getvalue())
    assert result.match.scores == match.host.match.scores
    state = result.hands[0].state if len(result.hands) == 1 else None
    assert state is not None and state.is_over
    # the host's log holds no hidden card's point: a seat's stage output is points encrypted
    # under keys the host does not hold, and its records name no card label
    data = buf.getvalue()
    labels = labels_for_rules(preset("classic"))
    for label in labels:
        assert label.encode() not in data
    # truncating the log in the middle of a hand leaves a verifiable prefix
    cut = data[: len(data) // 3]
    partial = replay_log(cut)
    assert partial.hands and partial.hands[0].state is None


def test_a_forged_violation_forfeit_is_refused_by_the_replayer() -> None:
    with pytest.raises(ReplayError):
        buf = io.BytesIO()
        match = recorded_match(preset("classic-2p"), buf, seed=2, deal="blind")
        match.play(max_hands=1)
        host = match.host
        # a forfeit for a violation the hand's replay does not find
        host._append("forfeit", {"hand": host.hand_no, "seat": 1, "reason": "violation: x"})
        replay_log(buf.getvalue())


def test_a_red_three_upcard_picked_up_with_the_pile_is_no_concealed_draw() -> None:
    """Seed 44 of classic-2p turns a red three up at the deal and the pile is taken later: that
    red three was public, and the hand-end replay must not count it as a hidden draw."""
    host = _play("classic-2p", 44)
    upcard = host.fixed[host.dealt]
    assert is_red_three(host.face[upcard])
    assert any(isinstance(e.action, TakePile) for e in host.events)
    final = host.verify()
    assert any(upcard in reds for reds in final.red_threes)


@functools.cache
def _records_before_the_deal() -> tuple[bytes, dict[str, Any]]:
    """A one-hand blind log of classic-2p, cut just before its deal record, and that record's
    fields."""
    buf = io.BytesIO()
    recorded_match(preset("classic-2p"), buf, seed=3, deal="blind").play(max_hands=1)
    records = list(iter_records(buf.getvalue()))
    at = next(i for i, r in enumerate(records) if r.kind == R.DEAL)
    prefix = b"".join(msgpack.packb([r.body, r.host_sig, r.private]) for r in records[:at])
    return prefix, dict(records[at].fields)


def _with_deal_record(change: dict[str, Any], drop: tuple[str, ...] = ()) -> bytes:
    """The log up to its deal record, that record written by the host with ``change``."""
    prefix, fields = _records_before_the_deal()
    fields = {k: v for k, v in {**fields, **change}.items() if k not in drop and k != "kind"}
    for name in ("seq", "prev", "time"):  # the writer's own fields
        fields.pop(name, None)
    buf = io.BytesIO(prefix)
    writer = LogWriter.resume(buf, bot_identity(3, 0), fsync=False, clock=lambda: 0.0)
    writer.append(R.DEAL, fields)
    return buf.getvalue()


def test_the_blind_deal_record_names_the_dealer_and_the_minimums() -> None:
    _, fields = _records_before_the_deal()
    assert fields["dealer"] == 0 and fields["minimums"] == [50, 50]
    assert replay_log(_with_deal_record({})).hands[0].hand_no == 0
    # a log written before the fields were added still replays
    assert replay_log(_with_deal_record({}, drop=("dealer", "minimums"))).hands[0].hand_no == 0
    # a wrong dealer or minimum is the host's fault
    for wrong in ({"dealer": 1}, {"minimums": [50, 90]}):
        with pytest.raises(ReplayError, match="dealer, minimums or public cards"):
            replay_log(_with_deal_record(wrong))


# ----------------------------------------------------------------------------- version 2
def _tracer(seat: int, kind: str, fields: dict[str, Any], seats: list[BlindHand]) -> dict[str, Any]:
    """Issue 19's cheat: seat 0 replaces one stage-1 entry by a card of its choice raised to a
    second secret (keeping the honest proof)."""
    if kind != "stage" or seat != 0 or fields["stage"] != 1:
        return fields
    from canasta_net.deal.blind.proofs import group

    deck = bytearray(fields["deck"])
    chosen = group.mul(group.decode(seats[0].initial[7]), 0xC0FFEE)
    deck[0:33] = group.encode(chosen)
    return {**fields, "deck": bytes(deck)}


def test_version_2_refuses_the_tracer_substitution_at_stage_1_naming_the_seat() -> None:
    host, seats, _ = _hands("classic-2p", 4, version=2)
    # both announcements, then seat 0's dishonest stage 1
    for _ in range(2):
        _deal_step(host, seats)
    fields = _tracer(0, "stage", seats[0].respond(host.needs(0)), seats)
    with pytest.raises(BlindRefused) as refused:  # the host, or any seat's log follower
        host.feed(0, "stage", fields)
    assert refused.value.code == "bad-stage-proof"
    assert "seat 0's stage-1 output is refused" in str(refused.value)
    assert host.phase is HandPhase.STAGES and not host.stage_outputs  # nothing dealt
    # version 1 takes the same substitution (its input check sees valid, distinct points)
    host1, seats1, _ = _hands("classic-2p", 4)
    for _ in range(2):
        _deal_step(host1, seats1)
    honest = seats1[0].respond(host1.needs(0))
    entries = decode_deck(honest["deck"])
    points = card_points(labels_for_rules(preset("classic-2p")))
    entries[0] = multiply(0xC0FFEE, points[7])
    cheat = StageOutput(TABLE, 0, 1, 0, tuple(entries)).signed(seats1[0].identity)  # type: ignore[arg-type]
    host1.feed(0, "stage", {"stage": 1, "deck": encode_deck(entries), "sig": cheat.signature})
    assert len(host1.stage_outputs) == 1


def _other_permutation(
    seat: int, kind: str, fields: dict[str, Any], seats: list[BlindHand]
) -> dict[str, Any]:
    """Seat 1 shuffles its stage 1 by a permutation that is not its seed's, under its announced
    deck key and with a valid proof of that shuffle."""
    if kind != "stage" or seat != 1 or fields["stage"] != 1:
        return fields
    from dataclasses import replace

    from canasta_net.deal.blind.proofs import stages as proof_stages

    mine = seats[1].secrets2
    assert mine is not None
    permutation = mine.permutation[1:] + mine.permutation[:1]
    out, proof = proof_stages.stage1(
        replace(mine, permutation=permutation), seats[1].stage_outputs[-1]
    )
    return {**fields, "deck": b"".join(out), "proof": proof}


def test_version_2_names_a_stage_1_shuffled_against_the_seed_at_hand_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stage-1 output proved right but shuffled by another permutation than the seat's seed
    gives passes every check of the deal (the proof binds the deck key, not the permutation)
    and is named at hand end (``stage-mismatch``). The hand-end check works out again only the
    stage-1 outputs: a stage-2 output, taken with its proofs under keys that are the seed's,
    cannot differ from the seed's (m multiplications a seat fewer)."""
    from canasta_net.deal.blind.proofs import group

    honest = _play("classic-2p", 11, version=2)
    products: list[int] = []
    real_mul = group.mul

    def counting_mul(point: Any, s: int) -> Any:
        products.append(s)
        return real_mul(point, s)

    monkeypatch.setattr(group, "mul", counting_mul)
    honest.verify()
    # the stage-1 outputs (one per seat) and the positions opened in play (fewer than the deck)
    assert honest.size * 2 <= len(products) < honest.size * 3
    monkeypatch.undo()
    cheat = _play("classic-2p", 11, _other_permutation, version=2)
    with pytest.raises(Violation) as named:
        cheat.verify()
    assert (named.value.seat, named.value.code) == (1, "stage-mismatch")


def test_a_version_2_seat_checks_each_sealed_keys_signature_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A key message's signature is checked where the message is taken: by a hand that checks
    signatures (the host's, a log follower's), once per message, and not again when the seat
    opens the keys sealed to it; a seat's own hand (``trusted``: fed from a log its owner
    verified) checks none."""
    from canasta_net.deal.blind.protocol import KeyMessage

    host, seats, _ = _hands("classic-2p", 6, version=2)
    checked: list[tuple[int, int]] = []
    real_verify = KeyMessage.verify

    def counting_verify(self: KeyMessage, key: bytes, body: bytes | None = None) -> None:
        checked.append((self.position, self.recipient))
        real_verify(self, key, body)

    monkeypatch.setattr(KeyMessage, "verify", counting_verify)
    while host.phase is not HandPhase.UPCARD:
        seat = next(s for s in range(len(seats)) if host.needs(s).kind != "wait")
        need = host.needs(seat)
        fields = seats[seat].respond(need)
        host.feed(seat, need.kind, fields)
        count = len(checked)
        for hand in seats:
            hand.feed(seat, need.kind, fields)
        assert len(checked) == count  # the seats' own hands
    sealed = len(host.key_messages)
    assert sealed == 2 * preset("classic-2p").hand_size
    assert sorted(checked) == sorted({(m.position, m.recipient) for m in host.key_messages})


def test_version_2_names_a_wrong_released_or_sealed_key_at_once() -> None:
    def wrong_release(
        seat: int, kind: str, fields: dict[str, Any], seats: list[BlindHand]
    ) -> dict[str, Any]:
        if kind == "release" and seat == 1:
            position, key, sig = fields["releases"][0]
            bad = (int.from_bytes(key, "big") + 1).to_bytes(32, "big")
            return {"releases": [[position, bad, sig]]}
        return fields

    with pytest.raises(BlindRefused) as refused:
        _play("classic-2p", 5, wrong_release, version=2)
    assert refused.value.code == "wrong-key" and "seat 1's key" in str(refused.value)

    host, seats, _ = _hands("classic-2p", 6, version=2)
    while host.phase is not HandPhase.DEAL_KEYS:
        _deal_step(host, seats)
    sealed = seats[0].respond(host.needs(0))
    position, recipient, _, _ = sealed["keys"][0]
    wrong = seats[0]._seal(position + 1, recipient)  # another position's key, sealed for this one
    from canasta_net.deal.blind.protocol import seal_key

    ciphertext = seal_key(
        seats[0].secrets.x25519_private,  # type: ignore[union-attr]
        seats[0].x25519[recipient],
        TABLE,
        0,
        position,
        0,
        recipient,
        wrong.ciphertext and seats[0]._key_bytes(seats[0]._own_key(position + 1)),
        check_key=lambda key: key,
    )
    message = seats[0]._seal(position, recipient)
    from dataclasses import replace

    from canasta_net.deal.blind.protocol import KEY_SIGNATURE_KIND

    forged = replace(message, ciphertext=ciphertext)
    signature = seats[0].identity.sign(KEY_SIGNATURE_KIND, forged.body())  # type: ignore[union-attr]
    items = [
        [p, r, ciphertext, signature] if (p, r) == (position, recipient) else [p, r, c, g]
        for p, r, c, g in sealed["keys"]
    ]
    host.feed(0, "keys", {"keys": items})  # the host cannot read it
    with pytest.raises(BlindRefused) as refused:
        seats[recipient].feed(0, "keys", {"keys": items})
    assert refused.value.code == "wrong-key" and "seat 0's key" in str(refused.value)

    # the others cannot see it, until the recipient exposes its X25519 key for the hand: then
    # anyone (here the host, which holds no secret) checks the sealed key and names seat 0
    from cryptography.hazmat.primitives import serialization

    from canasta_net.deal.blind.errors import SealedKeyError, WrongPublishedKey
    from canasta_net.deal.blind.proofs.stages import check_exposed_key

    exposed = seats[recipient].secrets.x25519_private.private_bytes(
        serialization.Encoding.Raw,
        serialization.PrivateFormat.Raw,
        serialization.NoEncryption(),
    )
    announced = (host.x25519[recipient], host.x25519[0], host.public_keys[0])
    with pytest.raises(WrongPublishedKey) as named:
        check_exposed_key(
            forged, exposed, announced[0], announced[1], announced[2].position_keys[position]
        )
    assert named.value.culprit == 0 and named.value.position == position
    # an honest sealed key proves nothing against its sender; another key exposes nothing
    check_exposed_key(
        message, exposed, announced[0], announced[1], announced[2].position_keys[position]
    )
    with pytest.raises(BadParameters):
        check_exposed_key(
            forged, bytes(32), announced[0], announced[1], announced[2].position_keys[position]
        )
    garbled = replace(forged, ciphertext=bytes([forged.ciphertext[0] ^ 1]) + forged.ciphertext[1:])
    with pytest.raises(SealedKeyError) as unreadable:  # what seat 0 signed does not decrypt
        check_exposed_key(
            garbled, exposed, announced[0], announced[1], announced[2].position_keys[position]
        )
    assert unreadable.value.culprit == 0


def test_a_table_dealing_blind_v2_logs_a_hand_that_replays() -> None:
    """The ``blind-v2`` deal mode (``--deal blind``) at a table: the stage acts carry
    their proofs (larger than version 1's acts), the log replays, every proof checked again."""
    buf = io.BytesIO()
    recorded_match(preset("classic-2p"), buf, seed=7, deal="blind-v2").play(max_hands=1)
    records = list(iter_records(buf.getvalue()))
    assert records[0].fields["deal"] == "blind-v2"
    stages = [r for r in records if r.kind == "stage"]
    assert len(stages) == 4 and all(len(r.action["proof"]) > 6000 for r in stages)  # type: ignore[index]
    result = replay_log(buf.getvalue())
    state = result.hands[0].state
    assert state is not None and state.is_over


def test_a_cheating_hosts_blind_v2_log_is_refused_at_the_stage_naming_the_seat(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 19's cheat by a host playing seat 0: it skips its own checks and logs a stage 1 with
    a traced entry. Every seat follows the log through the replayer, which refuses that very
    record, naming seat 0, before any key is sent (a remote seat then leaves the table)."""
    from canasta_net.deal.blind.proofs import group
    from canasta_net.deal.blind.proofs import stages as proof_stages

    honest_respond = BlindHand.respond

    def respond(self: BlindHand, need: Any) -> dict[str, Any]:
        fields = honest_respond(self, need)
        if self.viewer == 0 and need.kind == "stage" and fields["stage"] == 1:
            deck = bytearray(fields["deck"])
            deck[0:33] = group.encode(group.mul(group.decode(self.initial[9]), 0xBAD))
            fields = {**fields, "deck": bytes(deck)}
        return fields

    buf = io.BytesIO()
    with monkeypatch.context() as cheat:
        cheat.setattr(BlindHand, "respond", respond)
        cheat.setattr(proof_stages, "check_stage1", lambda *args, **kwargs: None)
        recorded_match(preset("classic-2p"), buf, seed=8, deal="blind-v2").play(max_hands=1)
    records = list(iter_records(buf.getvalue()))
    first_stage = next(i for i, r in enumerate(records) if r.kind == "stage")
    with pytest.raises(ReplayError) as refused:
        replay_log(buf.getvalue())
    assert refused.value.record_no == first_stage
    assert refused.value.seat == 0 and refused.value.code == "bad-stage-proof"
    assert "seat 0's stage-1 output is refused" in refused.value.reason
    assert all(r.kind != "keys" for r in records[: first_stage + 1])  # nothing dealt before it


def _counting_checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every proof check (a shuffle proof, a Chaum–Pedersen proof) as it runs."""
    from canasta_net.deal.blind.proofs import dleq, shuffle

    calls: list[str] = []
    for module, name in ((shuffle, "shuffle"), (dleq, "dleq")):
        honest = module.verify

        def verify(*args: Any, _honest: Any = honest, _name: str = name) -> bool:
            calls.append(_name)
            return bool(_honest(*args))

        monkeypatch.setattr(module, "verify", verify)
    return calls


def test_a_stage_output_checked_ahead_of_its_record_is_not_checked_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Wire ``ahead``: a seat's copy of the log checks a stage output the host passed on before
    its record; the record bringing exactly those bytes is then taken without a second check.
    A failed early check counts for nothing (the record is checked in full), a record with other
    bytes than the checked ones is checked and refused, and a follower that does not trust its
    own work (the audit) never checks ahead; a stage is checked ahead once, however often the
    host sends it."""
    from canasta_net.deal.blind.hand import BlindRefused
    from canasta_net.deal.blind.proofs.stages import ProvenStages

    host, seats, _ = _hands("classic-2p", 5, version=2)
    rules = preset("classic-2p")

    def follower(proven: ProvenStages | None) -> BlindHand:
        return BlindHand(rules, TABLE, 0, 0, host.minimums, host.keys, version=2, proven=proven)

    copy, audit = follower(ProvenStages()), follower(None)
    everyone = (host, *seats, copy, audit)
    calls = _counting_checks(monkeypatch)

    def step(tamper: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> None:
        seat = next(s for s in range(len(seats)) if host.needs(s).kind != "wait")
        need = host.needs(seat)
        fields = seats[seat].respond(need)
        for hand in everyone:
            hand.feed(seat, need.kind, fields)

    while host.phase is HandPhase.ANNOUNCE:
        step()
    first = seats[0].respond(host.needs(0))
    calls.clear()
    assert copy.check_ahead(0, first) and calls == ["shuffle"]
    # a host that sends the stage again (or junk for it) gets no second check: one a step
    calls.clear()
    altered_first = {**first, "proof": first["proof"][:-1] + bytes([first["proof"][-1] ^ 1])}
    assert not copy.check_ahead(0, first) and not copy.check_ahead(0, altered_first)
    assert calls == []
    assert not audit.check_ahead(0, first)
    assert not copy.check_ahead(1, first)  # not the stage the hand waits for from seat 1
    calls.clear()
    copy.feed(0, "stage", first)
    assert calls == []  # these very bytes passed
    for hand in (*seats, audit):
        hand.feed(0, "stage", first)
    assert calls == ["shuffle"]  # the audit checks every proof
    host.feed(0, "stage", first)
    second = seats[1].respond(host.needs(1))
    altered = second["proof"][:-1] + bytes([second["proof"][-1] ^ 1])
    assert not copy.check_ahead(1, {**second, "proof": altered})
    calls.clear()
    copy.feed(1, "stage", second)
    assert calls == ["shuffle"]  # a failed early check counts for nothing
    for hand in (host, *seats, audit):
        hand.feed(1, "stage", second)
    third = seats[0].respond(host.needs(0))
    assert copy.check_ahead(0, third)
    deck = third["deck"]
    swapped = deck[33:66] + deck[:33] + deck[66:]
    calls.clear()
    with pytest.raises(BlindRefused) as refused:
        copy.feed(0, "stage", {**third, "deck": swapped})
    assert refused.value.code == "bad-stage-proof" and "dleq" in calls


def test_the_host_passes_a_stage_on_ahead_only_to_the_other_seats_that_speak_version_3() -> None:
    """The host sends each remote seat's stage output it waits for, before its own check, to
    every other remote seat whose ``hello`` range includes version 3 (not the stages of a seat
    it plays itself: it journals those at once); a version-2 seat gets none and checks each
    record as before, and the hands are dealt either way."""
    from test_table_protocol import Harness, config

    from canasta_net.net import wire

    h = Harness(config(deal="blind-v2", rules=preset("classic-3p"), max_hands=1))
    new = h.remote("new")
    old = h.remote("old", connect=False)
    old.connect(hello=False)
    old.send({**old.session.hello(), "max": 2})
    h.run(limit=2000)
    assert new.session.problem is None and old.session.problem is None
    records = list(iter_records(h.log_bytes()))
    stages = [r for r in records if r.kind == "stage"]
    assert len(stages) >= 6 and any(r.kind == "deal" for r in records)
    ahead = [m for m in new.received if m["t"] == "ahead"]
    assert new.session.seat == 1 and old.session.seat == 2
    assert [a["act"] for a in ahead] == [
        r.fields["act"] for r in stages if r.action is not None and r.action["seat"] == 2
    ]
    assert not any(m["t"] == "ahead" for m in old.received)
    assert wire.AHEAD_VERSION == 3
    sent: list[Any] = []
    for junk in (b"\x00not msgpack", ahead[0]["act"], b"\x80"):  # a hint: never refused
        new.session.handle({"t": "ahead", "act": junk}, sent.append)
    assert new.session.problem is None and sent == []


def test_a_version_2_seat_computes_the_proofs_generators_when_it_takes_its_seat() -> None:
    """A version-2 seat computes the shuffle proofs' generators (about 35 ms for 108 cards) as it
    takes its seat, with the card points, so that its first hand's announcement and first stage
    do not wait for them."""
    from canasta_net.deal.blind.proofs import group, shuffle
    from canasta_net.games import game_of_rules
    from canasta_net.hand.protocol import HandContext
    from canasta_net.table.blind_seat import BlindSeat

    rules = preset("classic-2p")
    for cached in (group.generators, shuffle.chain_base, shuffle._minus_generators):
        cached.cache_clear()
    identity = Identity.from_seed(b"\x07" * 32)

    def context() -> HandContext:
        raise AssertionError("no hand yet")

    BlindSeat(identity, 1, game_of_rules(rules), TABLE, context, version=2)
    assert group.generators.cache_info().currsize == 1
    assert shuffle._minus_generators.cache_info().currsize == 1
    assert shuffle.chain_base.cache_info().currsize == 1


def test_version_2_never_works_out_version_1s_card_points() -> None:
    """A version-2 seat and hand need the card points on secp256k1 only: version 1's, on P-256
    (108 hashes to the curve, at a seat's start, as the deal begins), are not worked out."""
    from canasta_net.deal.blind import points
    from canasta_net.games import game_of_rules
    from canasta_net.hand.protocol import HandContext
    from canasta_net.table.blind_seat import BlindSeat

    def context() -> HandContext:
        raise AssertionError("no hand yet")

    points._card_points.cache_clear()
    rules = preset("classic-2p")
    BlindSeat(Identity.from_seed(b"\x07" * 32), 1, game_of_rules(rules), TABLE, context, version=2)
    _play("classic-2p", 12, version=2).verify()
    assert points._card_points.cache_info().currsize == 0
    BlindSeat(Identity.from_seed(b"\x07" * 32), 1, game_of_rules(rules), TABLE, context)
    assert points._card_points.cache_info().currsize == 1


def test_a_version_2_seat_0_works_its_stage_1_out_once_it_has_announced() -> None:
    """Seat 0's stage 1 takes the initial deck, which needs nobody's message: a version-2 seat 0
    starts working it out (with its background runner) when its own announcement's record comes
    back, while the others announce, and sends that very output, worked out once, when the
    table asks for the stage after every announcement. No other seat, and no announcement of
    another seat, starts anything."""
    from canasta_net.games import game_of_rules
    from canasta_net.hand.protocol import HandContext
    from canasta_net.table.blind_seat import BlindSeat

    rules = preset("classic-2p")
    identities = [Identity.from_seed(bytes([s + 1]) * 32) for s in range(2)]
    keys = [i.public_key for i in identities]

    def context() -> HandContext:
        return HandContext(1, [50, 50], list(keys))

    seats = [
        BlindSeat(identities[s], s, game_of_rules(rules), TABLE, context, version=2)
        for s in range(2)
    ]
    runs: list[int] = []  # the seat of every piece of work started in the background

    def runner(seat: int) -> Callable[[Callable[[], Any]], Callable[[], Any]]:
        def run(work: Callable[[], Any]) -> Callable[[], Any]:
            runs.append(seat)
            result = work()
            return lambda: result

        return run

    acts = []
    for s, seat in enumerate(seats):
        answer = seat.answer(0, "announce")
        assert answer is not None
        acts.append({"type": "announce", "seat": s, "hand": 0, "table": TABLE, **answer[1]})
    for s, seat in enumerate(seats):  # each announcement, as its record comes to every seat
        for act in acts:
            seat.work_ahead("announce", act, runner(s))
            seat.observe("announce", act)
    assert runs == [0]  # seat 0, on its own announcement only
    hand = seats[0].hand
    assert hand is not None
    worked_out = hand._prepared["stage-ahead"][1]()
    answer = seats[0].answer(0, "stage")
    assert answer is not None
    assert answer[1]["deck"] == b"".join(worked_out[0]) and answer[1]["proof"] == worked_out[1]
    assert seats[1].answer(0, "stage") is None  # seat 1 waits for seat 0's output


def test_a_follower_that_trusts_its_own_work_takes_the_key_messages_signed_here_as_verified(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A seat's copy of the log takes its own ``keys`` back, and a host the keys of the seats it
    plays: the key messages this process signed, exactly as signed, need no second Ed25519
    check. A signature that was not made here (a changed byte) is verified and refused, and the
    audit (a follower that does not trust its own work) verifies every one."""
    from canasta_net.deal.blind import protocol
    from canasta_net.deal.blind.proofs.stages import ProvenStages

    host, seats, _ = _hands("classic-2p", 9, version=2)
    rules = preset("classic-2p")

    def follower(proven: ProvenStages | None) -> BlindHand:
        return BlindHand(rules, TABLE, 0, 0, host.minimums, host.keys, version=2, proven=proven)

    copy, audit = follower(ProvenStages()), follower(None)
    verified: list[int] = []  # the position of every key message whose signature is checked
    honest = verify_signature  # what the protocol module calls its ``verify``

    def counting(key: bytes, kind: str, message: bytes, signature: bytes) -> None:
        if kind == protocol.KEY_SIGNATURE_KIND:
            verified.append(KeyMessage.decode(message, signature).position)
        honest(key, kind, message, signature)

    monkeypatch.setattr(protocol, "verify", counting)
    while host.phase is not HandPhase.DEAL_KEYS:
        seat = next(s for s in range(len(seats)) if host.needs(s).kind != "wait")
        need = host.needs(seat)
        fields = seats[seat].respond(need)
        for hand in (host, *seats, copy, audit):
            hand.feed(seat, need.kind, fields)
    fields = seats[0].respond(host.needs(0))
    position, recipient, ciphertext, sig = fields["keys"][0]
    forged = [[position, recipient, ciphertext, sig[:-1] + bytes([sig[-1] ^ 1])]]
    with pytest.raises(BlindRefused) as refused:
        copy.feed(0, "keys", {"keys": forged + fields["keys"][1:]})
    assert refused.value.code == "bad-key-signature" and verified == [position]
    verified.clear()
    copy.feed(0, "keys", fields)
    assert verified == []  # every one signed here, as sent
    audit.feed(0, "keys", fields)
    assert sorted(verified) == sorted(p for p, *_ in fields["keys"])
