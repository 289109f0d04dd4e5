"""The seat agent, sans-io: the one driver of a seat in every role and deal mode."""

from __future__ import annotations

import io

import pytest

from canasta_net.canasta.rules import preset
from canasta_net.errors import IllegalAction
from canasta_net.log import records as R
from canasta_net.log import verify_log
from canasta_net.log.replay import replay_log
from canasta_net.table.host import TablePhase
from canasta_net.table.local import recorded_match
from canasta_net.table.seat import Decision, SeatProblem, WrittenRecord


@pytest.mark.parametrize("deal", ["commit-reveal", "blind"])
def test_the_same_agents_play_a_whole_match_in_either_deal_mode(deal: str) -> None:
    buffer = io.BytesIO()
    match = recorded_match(preset("classic"), buffer, seed=3, deal=deal)
    match.play(max_hands=1)
    verify_log(buffer.getvalue())
    result = replay_log(buffer.getvalue())
    assert len(result.hands) == 1 and result.hands[0].scores
    # every agent followed every record: each names the log's head as the host does
    assert all(agent.signer.head == match.host.head for agent in match.seats)


def test_a_seat_does_not_reveal_before_the_signed_list_holds_its_commitment() -> None:
    match = recorded_match(preset("classic"), io.BytesIO(), seed=3)
    host, agent = match.host, match.seats[1]
    reply = agent.reply("commit", host.hand_no, {})
    assert isinstance(reply, dict) and reply["t"] == "commit"
    for info in host.take_message(1, reply):
        for seat in match.seats:
            seat.observe(WrittenRecord(info))
    # a host that asks for the seed before it has published the list of commitments
    with pytest.raises(SeatProblem) as problem:
        agent.reply("reveal", host.hand_no, {})
    assert problem.value.host_fault and "signed list" in problem.value.text
    while host.phase is TablePhase.COMMITTING:
        match.step()
    reply = agent.reply("reveal", host.hand_no, {})
    assert isinstance(reply, dict) and reply["t"] == "reveal" and len(reply["seed"]) == 32


def test_a_blind_seat_checks_a_chosen_action_against_its_own_cards() -> None:
    match = recorded_match(preset("classic"), io.BytesIO(), seed=4, deal="blind")
    host = match.host
    while host.phase is not TablePhase.PLAYING:
        match.step()
    seat = host.state.to_move
    agent = match.seats[seat]
    decision = agent.reply("act", host.hand_no, {})
    assert isinstance(decision, Decision) and decision.legal and decision.view is not None
    with pytest.raises(IllegalAction):
        agent.act(host.hand_no, "discard 5H" if "discard 5H" not in decision.legal else "meld")
    with pytest.raises(ValueError):
        agent.act(host.hand_no, "fly away")
    message = agent.act(host.hand_no, decision.legal[0])
    assert message["t"] == "act"
    infos = host.take_message(seat, message)
    assert infos[0].kind == R.ACTION


def test_a_commit_reveal_seat_leaves_the_host_to_judge_an_action() -> None:
    match = recorded_match(preset("classic"), io.BytesIO(), seed=4)
    host = match.host
    while host.phase is not TablePhase.PLAYING:
        match.step()
    seat = host.state.to_move
    decision = match.seats[seat].reply("act", host.hand_no, host.prompt_fields(seat, "act"))
    assert isinstance(decision, Decision)
    assert decision.legal == [str(a) for a in host.state.legal_actions()]
    assert decision.state is host.state  # a bot inside the host reads the host's state
