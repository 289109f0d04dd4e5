"""A wrong sealed key at a ``blind-v2`` table (``docs/blind-proofs.md`` section 10, "A wrong
sealed key"): the recipient exposes its X25519 key for the hand in a signed ``expose``; the host
checks it and ends the match against the seat it shows deviating (the sender, or a false
accuser), with the exposure as the forfeit's evidence, which every follower checks again.

In memory (the harness of ``test_table_protocol``: seat 0 the host's bot, seats 1 and 2 remote
peers over ``StringTransport``, a ``Clock`` that never moves)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import msgpack
import pytest
from click.testing import CliRunner
from test_table_protocol import Harness, Remote, classic, config, seat_copy

from canasta_net.canasta.rules import preset
from canasta_net.deal.blind.errors import WrongPublishedKey
from canasta_net.deal.blind.hand import BlindHand, HandPhase, WrongSealedKey
from canasta_net.deal.blind.proofs import group
from canasta_net.deal.blind.protocol import KEY_SIGNATURE_KIND, KeyMessage, seal_key
from canasta_net.log import iter_records
from canasta_net.log import records as R
from canasta_net.log.exposure import encode_exposure, exposure_path, read_exposure
from canasta_net.log.replay import ReplayError, replay_log
from canasta_net.table.host import TablePhase
from replay.audit import audit_path, audit_source
from replay.cli import main as replay_main


def _seal_a_wrong_key(monkeypatch: pytest.MonkeyPatch, cheater: int, victim: int) -> None:
    """Seat ``cheater``'s client seals to ``victim``, for the first of the victim's positions,
    its key plus one (signed as its own): no one but the victim can see it."""
    honest = BlindHand.respond

    def respond(self: BlindHand, need: Any) -> dict[str, Any]:
        fields = honest(self, need)
        if self.viewer != cheater or need.kind != "keys" or self.phase is not HandPhase.DEAL_KEYS:
            return fields
        assert self.secrets is not None and self.identity is not None
        items = [list(item) for item in fields["keys"]]
        item = next(item for item in items if item[1] == victim)
        position = item[0]
        wrong = group.scalar_bytes(self._own_key(position) % (group.Q - 1) + 1)
        ciphertext = seal_key(
            self.secrets.x25519_private,
            self.x25519[victim],
            self.table_id,
            self.hand_no,
            position,
            cheater,
            victim,
            wrong,
            check_key=group.scalar_from,
        )
        unsigned = KeyMessage(self.table_id, self.hand_no, position, cheater, victim, ciphertext)
        item[2], item[3] = ciphertext, self.identity.sign(KEY_SIGNATURE_KIND, unsigned.body())
        return {"keys": items}

    monkeypatch.setattr(BlindHand, "respond", respond)


def _accuse_falsely(monkeypatch: pytest.MonkeyPatch, liar: int, sender: int, lie: str) -> None:
    """Seat ``liar``'s client says ``sender``'s honest key is wrong (``right-key``), or exposes
    an X25519 key that is not its announced one (``other-x25519``)."""
    honest_receive = BlindHand._receive2
    honest_exposure = BlindHand.exposure

    def receive(self: BlindHand, message: KeyMessage) -> None:
        if self.viewer == liar and message.sender == sender:
            raise WrongSealedKey(message, WrongPublishedKey(sender, message.position))
        honest_receive(self, message)

    def exposure(self: BlindHand, message: KeyMessage) -> dict[str, Any]:
        fields = honest_exposure(self, message)
        return {**fields, "x25519": bytes(range(32))} if lie == "other-x25519" else fields

    monkeypatch.setattr(BlindHand, "_receive2", receive)
    monkeypatch.setattr(BlindHand, "exposure", exposure)


def _table() -> tuple[Harness, Remote]:
    """Two seats (fast: four stages): seat 0 the host's bot, seat 1 a remote peer."""
    h = Harness(
        config(deal="blind-v2", rules=preset("classic-2p").with_changes(target=1500), players=2)
    )
    alice = h.remote("alice")
    h.run(limit=500)
    return h, alice


def _forfeit(h: Harness) -> Any:
    records = list(iter_records(h.log_bytes()))
    assert records[-1].kind == R.MATCH_END
    return next(r for r in records if r.kind == R.FORFEIT)


def _every_copy_names(h: Harness, peers: tuple[Remote, ...], seat: int) -> None:
    """The audit of the host's log names ``seat``, having checked the evidence again; so did
    every seat's own copy as it took the record (the peer replays each record it takes, and
    would have left on a false one), which holds the host's records."""
    report = audit_source(h.log_bytes())
    assert report.verdict == "valid" and report.claims == []
    assert report.match["forfeit"]["seat"] == seat
    for peer in peers:
        assert peer.session.problem is None, peer.session.problem
        assert peer.log.getvalue() == seat_copy(h.log_bytes(), peer.session.seat or 0)
        replayer = peer.session.copy.replayer
        assert replayer is not None and replayer.forfeit is not None
        assert replayer.forfeit[0] == seat


@pytest.mark.parametrize(("cheater", "victim"), [(1, 0), (0, 1)])
def test_a_seat_that_seals_a_wrong_key_forfeits_named_in_every_copy(
    monkeypatch: pytest.MonkeyPatch, cheater: int, victim: int
) -> None:
    """The recipient (a remote seat, or a seat the host plays) exposes its X25519 key for the
    hand instead of leaving; the host checks the exposure and ends the match against the
    sender at once (no hold: the clock never moves), with the exposure as evidence, which the
    replay of the host's log, every seat's copy and the audit check again."""
    _seal_a_wrong_key(monkeypatch, cheater, victim)
    h, alice = _table()
    assert h.clock.seconds() == 0
    assert h.table.phase is TablePhase.OVER
    forfeit = _forfeit(h)
    assert forfeit.fields["seat"] == cheater
    assert forfeit.fields["reason"].startswith(f"violation: wrong-key: seat {cheater}'s key")
    assert forfeit.action is not None
    assert forfeit.action["type"] == R.EXPOSE and forfeit.action["seat"] == victim
    assert not any(r.kind == R.DEAL for r in iter_records(h.log_bytes()))
    _every_copy_names(h, (alice,), cheater)


@pytest.mark.parametrize("lie", ["right-key", "other-x25519"])
def test_a_false_accusation_forfeits_the_accuser(monkeypatch: pytest.MonkeyPatch, lie: str) -> None:
    """A seat that accuses an honest sender (the key it exposes opens a right key, or is not
    its announced one) forfeits, with its own exposure as the evidence."""
    _accuse_falsely(monkeypatch, 1, 0, lie)
    h, alice = _table()
    assert h.clock.seconds() == 0
    forfeit = _forfeit(h)
    assert forfeit.fields["seat"] == 1
    assert forfeit.fields["reason"].startswith("violation: false-accusation: ")
    assert forfeit.action is not None and forfeit.action["type"] == R.EXPOSE
    assert forfeit.action["seat"] == 1
    monkeypatch.undo()  # the followers are honest
    _every_copy_names(h, (alice,), 1)


@pytest.mark.parametrize("lie", ["blames-the-accuser", "blames-the-sender"])
def test_a_forfeit_whose_exposure_shows_another_verdict_is_bad_forfeit(
    monkeypatch: pytest.MonkeyPatch, lie: str
) -> None:
    """A lying host: it forfeits the accuser of a true exposure, or the sender named by a false
    one. The evidence is the accuser's genuine signed exposure; every follower's own verdict on
    it differs from the record's, so the forfeit is refused (``bad-forfeit``, the host's
    fault), in the host's log and in every seat's copy."""
    from canasta_net.table.host import HostTable

    if lie == "blames-the-accuser":
        _seal_a_wrong_key(monkeypatch, 0, 1)
    else:
        _accuse_falsely(monkeypatch, 1, 0, "right-key")
    honest = HostTable._hand_message

    def take(
        self: HostTable, seat: int, type_: str, fields: Any, act: bytes, asig: bytes, seed: Any
    ) -> Any:
        if type_ != R.EXPOSE:
            return honest(self, seat, type_, fields, act, asig, seed)
        self.next_aseq[seat] += 1  # only the host lies: every follower judges for itself
        culprit, code = (
            (seat, "false-accusation")
            if lie == "blames-the-accuser"
            else (fields["sender"], "wrong-key")
        )
        return self._forfeit_records(
            culprit, f"violation: {code}: made up", {"act": act, "asig": asig}
        )

    monkeypatch.setattr(HostTable, "_hand_message", take)
    h, alice = _table()
    assert h.table.phase is TablePhase.OVER
    monkeypatch.undo()
    with pytest.raises(ReplayError) as refused:
        replay_log(h.log_bytes())
    assert refused.value.code == "bad-forfeit" and refused.value.seat == 0  # the host
    for peer in (alice,):  # the seat's own copy refused the record: the host misbehaved
        problem = peer.session.problem
        assert problem is not None and "evidence shows no such violation" in problem


def test_a_host_that_ignores_an_exposure_leaves_the_evidence_in_the_seats_copy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The host's own seat seals a wrong key to the remote seat and the host drops the seat's
    exposure: the hand stalls (the seat answers nothing more in it), and the seat's copy of the
    log with the exposure it kept names the sender; a doctored exposure proves nothing."""
    from canasta_net.log.replay import exposure_verdict
    from canasta_net.table.host import HostTable, TableError

    _seal_a_wrong_key(monkeypatch, 0, 1)
    honest = HostTable._hand_message

    def take(self: HostTable, seat: int, type_: str, *args: Any) -> Any:
        if type_ == R.EXPOSE:
            raise TableError("bad-message", "not listening", seat)
        return honest(self, seat, type_, *args)

    monkeypatch.setattr(HostTable, "_hand_message", take)
    h, alice = _table()
    assert h.table.phase is not TablePhase.OVER
    assert not any(r.kind == R.FORFEIT for r in iter_records(h.log_bytes()))
    kept = alice.session.exposure
    assert kept is not None
    verdict = exposure_verdict(alice.log.getvalue(), kept["act"], kept["asig"])
    assert (verdict.accuser, verdict.seat, verdict.code) == (1, 0, "wrong-key")
    with pytest.raises(ValueError, match="not signed by seat 1"):
        exposure_verdict(alice.log.getvalue(), kept["act"], bytes(64))


def test_an_exposure_at_a_version_1_table_or_malformed_proves_nothing() -> None:
    """An ``expose`` where there is no proof-carrying deal, or a malformed one, is refused like
    any bad message: nothing is journaled, nobody forfeits."""
    from canasta_net.games import canasta_game
    from canasta_net.hand.blind import BlindHandProtocol, BlindProofsHandProtocol
    from canasta_net.hand.protocol import HandRefused, HandSetup
    from canasta_net.identity import Identity

    game = canasta_game(classic(1500))
    keys = [Identity.generate().public_key for _ in range(3)]
    for protocol in (BlindHandProtocol, BlindProofsHandProtocol):
        hand = protocol(HandSetup(game, game.new_match(0), bytes(16), 0, keys))
        with pytest.raises(HandRefused) as refused:
            hand.take(1, R.EXPOSE, {"x25519": bytes(32), "sender": 2, "position": 0}, None)
        assert not refused.value.proves
        assert hand.proven_deviation(1, R.EXPOSE, {"x25519": b"", "sender": 2}) is None


def _ignoring_host(monkeypatch: pytest.MonkeyPatch, *, claim: bool = False) -> None:
    """The host drops every exposure; with ``claim``, it forfeits the accuser instead, for
    withholding its part of the hand (the host's word: a claim)."""
    from canasta_net.table.host import HostTable, TableError

    honest = HostTable._hand_message

    def take(self: HostTable, seat: int, type_: str, *args: Any) -> Any:
        if type_ != R.EXPOSE:
            return honest(self, seat, type_, *args)
        if claim:
            self.next_aseq[seat] += 1
            return self.forfeit(seat, "the player left holding its secrets for the hand")
        raise TableError("bad-message", "not listening", seat)

    monkeypatch.setattr(HostTable, "_hand_message", take)


def _kept_copy(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *, claim: bool = False, keep: bool = True
) -> tuple[Path, Remote]:
    """Seat 0 (the host's bot) seals a wrong key to seat 1, whose exposure the host ignores:
    seat 1's copy of the log written to a file, and (``keep``) its exposure kept beside it
    (``claim``: the host forfeits seat 1 for withholding instead). The patches are undone."""
    _seal_a_wrong_key(monkeypatch, 0, 1)
    _ignoring_host(monkeypatch, claim=claim)
    log_path = tmp_path / "alice.cnlog"
    h = Harness(
        config(deal="blind-v2", rules=preset("classic-2p").with_changes(target=1500), players=2)
    )
    alice = h.remote("alice")
    if keep:
        alice.session.exposure_file = exposure_path(log_path)
    h.run(limit=500)
    monkeypatch.undo()
    log_path.write_bytes(alice.log.getvalue())
    assert alice.session.exposure is not None
    return log_path, alice


def test_a_seat_keeps_its_exposure_beside_its_log_and_the_audit_names_the_sender(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A host that ignores an exposure: the seat's signed exposure is on disk beside its copy
    of the log (as it was sent), and ``canasta-replay audit`` of that copy finds it, checks it
    and names the sender, in the report, its JSON and its text; ``--exposure`` names a file
    kept elsewhere."""
    log_path, alice = _kept_copy(monkeypatch, tmp_path)
    kept = alice.session.exposure
    assert kept is not None
    assert read_exposure(exposure_path(log_path)) == (kept["act"], kept["asig"])
    report = audit_path(str(log_path))
    assert report.verdict == "incomplete" and report.exit_code == 0  # the hand stalled
    [found] = report.exposures
    assert found["proven"] and (found["accuser"], found["seat"]) == (1, 0)
    assert found["code"] == "wrong-key" and not found["contradicts_forfeit"]
    result = CliRunner().invoke(replay_main, ["audit", "--json", str(log_path)])
    assert result.exit_code == 0, result.output
    [data] = json.loads(result.output)["files"]
    assert data["exposures"][0]["seat"] == 0 and data["exposures"][0]["code"] == "wrong-key"
    text = CliRunner().invoke(replay_main, ["audit", str(log_path)]).output
    assert "it proves that seat 0 (" in text and "[wrong-key]" in text
    elsewhere = tmp_path / "kept"
    exposure_path(log_path).rename(elsewhere)
    assert audit_path(str(log_path)).exposures == []
    result = CliRunner().invoke(
        replay_main, ["audit", "--json", "--exposure", str(elsewhere), str(log_path)]
    )
    assert json.loads(result.output)["files"][0]["exposures"][0]["seat"] == 0


def test_an_exposure_refutes_a_forfeit_the_host_claims_against_the_accuser(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The host drops the exposure and forfeits the accuser for withholding (its word alone):
    the seat's copy with its kept exposure shows that the sender deviated, so the log's outcome
    does not stand (exit status 1)."""
    log_path, _alice = _kept_copy(monkeypatch, tmp_path, claim=True)
    report = audit_path(str(log_path))
    assert report.verdict == "valid" and report.match["forfeit"]["seat"] == 1
    assert report.claims  # the forfeit is the host's word
    [found] = report.exposures
    assert found["proven"] and found["seat"] == 0 and found["contradicts_forfeit"]
    assert report.exit_code == 1
    text = CliRunner().invoke(replay_main, ["audit", str(log_path)])
    assert text.exit_code == 1 and "outcome does not stand" in text.output


def test_a_forged_or_tampered_exposure_file_is_refused_with_its_reason(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An exposure file whose act was altered, whose signature is not the accuser's, that is
    no exposure file, or that holds another seat's message, is refused, saying why (exit
    status 1); the log's own verdict is unchanged."""
    log_path, alice = _kept_copy(monkeypatch, tmp_path)
    kept = alice.session.exposure
    assert kept is not None
    act, asig = kept["act"], kept["asig"]
    fields = msgpack.unpackb(act)
    other = msgpack.packb({**fields, "sender": 1, "seat": 0})
    cases = {
        "altered": (encode_exposure(act[:-1] + bytes([act[-1] ^ 1]), asig), "not signed|msgpack"),
        "signature": (encode_exposure(act, bytes(64)), "not signed by seat 1"),
        "another seat": (encode_exposure(other, asig), "not signed by seat 0"),
        "garbage": (b"\x00not an exposure", "not in the format|not msgpack"),
        "other format": (
            msgpack.packb({"format": "canasta-net/exposure/9", "act": act, "asig": asig}),
            "not in the format canasta-net/exposure/1",
        ),
    }
    for name, (data, reason) in cases.items():
        exposure_path(log_path).write_bytes(data)
        report = audit_path(str(log_path))
        assert report.verdict == "incomplete", name
        [found] = report.exposures
        assert not found["proven"] and found["seat"] is None, name
        assert re.search(reason, found["reason"]), (name, found["reason"])
        assert report.exit_code == 1, name
    result = CliRunner().invoke(replay_main, ["audit", str(log_path)])
    assert result.exit_code == 1 and "refused: " in result.output
    missing = CliRunner().invoke(
        replay_main, ["audit", "--json", "--exposure", str(tmp_path / "none"), str(log_path)]
    )
    assert "cannot be read" in json.loads(missing.output)["files"][0]["exposures"][0]["reason"]


def test_without_an_exposure_file_the_audit_is_unchanged(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No exposure beside the log (a seat that kept none): the audit reports as before, with
    no exposure in its text or its JSON."""
    log_path, _alice = _kept_copy(monkeypatch, tmp_path, keep=False)
    assert not exposure_path(log_path).exists()
    report = audit_path(str(log_path))
    assert report.exposures == [] and "exposures" not in report.to_dict()
    assert report.verdict == "incomplete" and report.exit_code == 0
    assert "Exposure" not in CliRunner().invoke(replay_main, ["audit", str(log_path)]).output
