"""The body of a valid or incomplete audit verdict in a reader's language.

The report's ``summary`` is the English sentence (the JSON report keeps it, the same in every
language); a reader of another language reads the same facts worded here from the report's data
(``match``, ``incomplete``, ``truncated``, ``claims``, ``copy``, ``hands``) and the few it keeps
for this (``AuditReport.details``: the sides' seats, the turn where a log stops). A failure's
sentences are worded by ``findings.Failure``; a claim's own text is the replayer's, as it came.
"""

from __future__ import annotations

from typing import Any, Final

from canasta_net.games import MAY_I
from canasta_net.i18n import N_, Translator
from canasta_net.log import records as R

from .wording import capital

STOP_WORDS: Final = {
    R.STOP_MAX_HANDS: N_("the table's limit of hands was reached"),
    R.STOP_PLAYERS_LEFT: N_("every person at the table left"),
    R.STOP_HOST_QUIT: N_("the host quit"),
}


class _Words:
    """One report's names and nouns in one reader's language."""

    def __init__(self, report: Any, tr: Translator) -> None:
        self.tr = tr
        log = report.log or {}
        self.names = [str(s["name"]) for s in log.get("seats", [])]
        self.may_i = log.get("game") == MAY_I
        self.details = report.details

    def seat(self, seat: int) -> str:
        _ = self.tr.gettext
        if 0 <= seat < len(self.names):
            return _("seat {seat} ({name})").format(seat=seat, name=self.names[seat])
        return _("seat {seat}").format(seat=seat)

    def side(self, side: int) -> str:
        if self.may_i:
            return self.seat(side)
        sides: list[list[int]] = self.details.get("sides") or []
        seats = sides[side] if side < len(sides) else [side]
        joined = "+".join(map(str, seats))
        return self.tr.ngettext(
            "team {team} (seat {seats})", "team {team} (seats {seats})", len(seats)
        ).format(team=side, seats=joined)

    def totals(self, scores: list[int]) -> str:
        return ", ".join(f"{self.side(n)} {s}" for n, s in enumerate(scores))

    def hand(self, hand: int) -> str:
        """The hand the log numbers ``hand`` (from 0), as people count it (from 1)."""
        _ = self.tr.gettext
        if self.may_i:
            return _("deal {n}").format(n=hand + 1)
        return _("hand {n}").format(n=hand + 1)

    def hands(self, n: int) -> str:
        if self.may_i:
            return self.tr.ngettext("{n} deal", "{n} deals", n).format(n=n)
        return self.tr.ngettext("{n} hand", "{n} hands", n).format(n=n)


def worded_summary(report: Any, tr: Translator) -> str:
    """The verdict's body (``Valid: …``, ``Incomplete …``) in ``tr``'s language."""
    _ = tr.gettext
    w = _Words(report, tr)
    match = report.match or {}
    if report.incomplete is not None:
        text = _("Incomplete (valid as far as it goes): {reason}").format(
            reason=_where_it_stops(report, w)
        )
    elif match.get("stopped"):
        text = _("Valid: {text}").format(text=_stop_text(match, w))
    elif report.ending == "finished" and report.details.get("by_checkpoint"):
        text = _(
            "Valid: {result}, as the checkpoint of {hand}, signed by every seat, proves (the log "
            "ends before its match-end record)."
        ).format(result=_result_text(match, w), hand=w.hand(match["hands_played"] - 1))
    else:
        text = _("Valid: {text}").format(text=_result_text(match, w) + ".")
    truncated = report.truncated
    if truncated is not None:
        text += " " + _(
            "The file ends inside record {record} ({length} bytes at offset {offset}), as a "
            "crash while writing would leave it; the complete records before it were checked."
        ).format(record=truncated["record"], length=truncated["length"], offset=truncated["offset"])
    if report.claims:
        text += " " + _claims_sentence(report.claims, w)
    return text


def _result_text(match: dict[str, Any], w: _Words) -> str:
    """The match's result, with a capital and without a full stop."""
    _, tr = w.tr.gettext, w.tr
    result = match.get("result")
    forfeit = match.get("forfeit")
    if result is None:
        text = _("the match ended")
    else:
        scores = w.totals(result["totals"])
        rounds = w.hands(result["hands"])
        winner = result["winner"]
        lowest = w.may_i
        if winner is None and forfeit:
            text = _("the match ended without a winner after {rounds}: {scores}")
        elif winner is None and lowest:
            best = min(result["totals"])
            tied = [w.side(n) for n, s in enumerate(result["totals"]) if s == best]
            text = _("draw after {rounds}: {tied} share the lowest total ({scores})")
            text = text.replace("{tied}", ", ".join(tied))
        elif winner is None:
            text = _("draw after {rounds}: {scores}")
        elif lowest and not forfeit:
            text = _("{winner} wins with the lowest total after {rounds}: {scores}")
        else:
            text = _("{winner} wins after {rounds}: {scores}")
        text = text.format(
            rounds=rounds, scores=scores, winner="" if winner is None else w.side(winner)
        )
    if forfeit:
        text = tr.gettext("{seat} forfeited ({why}); {result}").format(
            seat=w.seat(forfeit["seat"]), why=forfeit["reason"], result=text
        )
    return capital(text)


def _stop_text(match: dict[str, Any], w: _Words) -> str:
    _ = w.tr.gettext
    stop = match["stopped"]
    why = STOP_WORDS.get(stop["reason"])
    why_text = (
        _(why) if why is not None else _("reason {reason}").format(reason=repr(stop["reason"]))
    )
    if stop["proven"]:
        proof = _("the header's limit, reached at a checkpoint every seat signed")
    else:
        proof = _("the host's word: a claim the log cannot prove")
    totals = w.totals(match["totals"])
    played = w.hands(stop["hands"])
    if stop["mid_hand"]:
        return _(
            "the match was stopped by agreement after {played}, during {hand}: {why} ({proof}); "
            "{totals}."
        ).format(
            played=played,
            hand=w.hand(match["hands_played"]),
            why=why_text,
            proof=proof,
            totals=totals,
        )
    return _(
        "the match was stopped by agreement after {played}: {why} ({proof}); {totals}."
    ).format(played=played, why=why_text, proof=proof, totals=totals)


def _where_it_stops(report: Any, w: _Words) -> str:
    _ = w.tr.gettext
    where = report.incomplete
    hand, stage = where["hand"], where["stage"]
    this_hand = w.hand(hand)
    if stage == "forfeit":
        return _("a seat forfeited but the log has no match-end record.")
    if stage == "between-hands":
        if hand == 0:
            if w.may_i:
                return _("the log stops before the first deal.")
            return _("the log stops before the first hand.")
        return _("the log stops after the checkpoint of {done}, before {hand}.").format(
            done=w.hand(hand - 1), hand=this_hand
        )
    if stage == "committing":
        return _("the log stops while {hand} is being dealt.").format(hand=this_hand)
    if stage == "revealing":
        return _("the log stops while the seeds of {hand} are being revealed.").format(
            hand=this_hand
        )
    if stage == "playing" and where["unverified_records"]:
        pending = where["unverified_records"]
        return w.tr.ngettext(
            "the log stops during {hand}; its last {n} record cannot be checked in this copy "
            "until its seeds are published.",
            "the log stops during {hand}; its last {n} records cannot be checked in this copy "
            "until its seeds are published.",
            pending,
        ).format(hand=this_hand, n=pending)
    if stage == "playing":
        turn = report.details.get("turn")
        if turn is None:
            return _("the log stops during {hand}.").format(hand=this_hand)
        return _("the log stops during {hand}, at turn {turn}.").format(hand=this_hand, turn=turn)
    if stage == "hand-over":
        return _("the log stops after {hand} ended, before its seeds were published.").format(
            hand=this_hand
        )
    return _("the log stops before the checkpoint of {hand} was signed.").format(hand=this_hand)


def _claims_sentence(claims: list[dict[str, Any]], w: _Words) -> str:
    _ = w.tr.gettext
    said = []
    for c in claims:
        if c["countersigned"]:
            signed = _("countersigned by seats {seats}").format(
                seats=", ".join(map(str, c["countersigned"]))
            )
        else:
            signed = _("countersigned by no seat")
        said.append(
            _("record {record} ({kind}): {claim}, on the word of {who}, {signed}").format(
                record=c["record"],
                kind=c["kind"],
                claim=c["claim"],
                who=w.seat(c["claimant"]),
                signed=signed,
            )
        )
    return w.tr.ngettext(
        "The log cannot prove {n} claim: {said}.",
        "The log cannot prove {n} claims: {said}.",
        len(claims),
    ).format(n=len(claims), said="; ".join(said))


def worded_copy_line(report: Any, tr: Translator) -> str:
    """The verdict's second line: the variant, the records, whose copy, the hands closed."""
    _ = tr.gettext
    w = _Words(report, tr)
    kind = report.copy.get("kind")
    held = report.copy.get("payload_seats") or ["?"]
    if kind == "host":
        whose = _("the host's copy (every private payload)")
    elif kind == "seat":
        whose = _("the own copy of seat {seat}").format(seat=held[0])
    elif kind == "public":
        whose = _("a copy without private payloads")
    elif kind == "blind":
        whose = _("a blind-dealt log (every copy holds the same records)")
    else:
        whose = _("a copy with the payloads of seats {seats}").format(
            seats=", ".join(map(str, held))
        )
    finished = sum(1 for hand in report.hands if hand["checkpoint_signers"])
    records = tr.ngettext("{n} record", "{n} records", report.records).format(n=report.records)
    if w.may_i:
        closed = tr.ngettext(
            "{n} deal closed, its checkpoint signed by every seat",
            "{n} deals closed, each checkpoint signed by every seat",
            finished,
        )
    else:
        closed = tr.ngettext(
            "{n} hand closed, its checkpoint signed by every seat",
            "{n} hands closed, each checkpoint signed by every seat",
            finished,
        )
    closed = closed.format(n=finished)
    return "  " + _("{variant}, {records}, {whose}; {closed}.").format(
        variant=report.log["variant"], records=records, whose=whose, closed=closed
    )


# --------------------------------------------------------------------------- compared copies
# Why a copy's record is damaged (``compare._DAMAGE``), for a reader.
DAMAGE_WORDS: Final = {
    "bad-host-signature": N_("the host's signature on it does not verify"),
    "bad-private": N_("a private payload does not match the hash the host signed"),
    "bad-seq": N_(
        "it is not the record the host signed for this place (records removed or reordered)"
    ),
}


def worded_comparison(comparison: Any, tr: Translator) -> tuple[str, list[str], list[str]] | None:
    """A comparison of copies (``compare.Comparison``) in the reader's language, from its data:
    the summary, each altered copy's reason, the notes. None for English (the comparison's own
    sentences say it) and for a refusal (its reason is the comparer's, as it came)."""
    if tr.lang == "en" or comparison.verdict == "refused":
        return None
    _ = tr.gettext
    altered = [
        _(
            "Record {record} of {file} is damaged ({why}): the file was altered after it was "
            "written. This proves nothing against the host or any seat; the blame lies with "
            "that copy."
        ).format(
            record=a["record"],
            file=a["file"],
            why=_(DAMAGE_WORDS.get(a["code"], N_("its bytes cannot be read as a record"))),
        )
        for a in comparison.altered
    ]
    equivocation = comparison.equivocation
    notes: list[str] = []
    if equivocation is not None:
        holders = "; ".join(
            tr.ngettext(
                "{files} holds one ({hash})", "{files} hold one ({hash})", len(v["files"])
            ).format(files=", ".join(v["files"]), hash=str(v["hash"])[:16])
            for v in equivocation["versions"]
        )
        reason = _(
            "The host, seat {seat} ({name}), signed {n} different records with sequence number "
            "{seq}: {holders}. Each signature verifies with the host's key, so the host sent "
            "different histories to different seats: the host is responsible."
        ).format(
            seat=equivocation["blame"],
            name=equivocation["blame_name"],
            n=len(equivocation["versions"]),
            seq=equivocation["seq"],
            holders=holders,
        )
        summary = _("Host equivocation at sequence number {seq}. {reason}").format(
            seq=equivocation["seq"], reason=reason
        )
        return summary, altered, notes
    copies = comparison.copies
    held = {c["file"]: int(c["records"]) for c in copies}
    longest = comparison.longest
    for copy in copies:
        if copy["kind"] == "host" and longest in held and copy["records"] < held[longest]:
            notes.append(
                _(
                    "The host's copy {file} ends after record {last}, while {longest} holds "
                    "host-signed records up to {longest_last}: the host dropped records it had "
                    "signed and sent from its own log."
                ).format(
                    file=copy["file"],
                    last=copy["records"] - 1,
                    longest=longest,
                    longest_last=held[longest] - 1,
                )
            )
    lengths = ", ".join(f"{c['file']} {c['records']}" for c in copies if c["records"] > 0)
    summary = _(
        "The copies agree on every record they share (records held: {lengths}); the longest is "
        "{longest}."
    ).format(lengths=lengths, longest=longest)
    if comparison.altered:
        named = ", ".join(
            _("{file} at record {record}").format(file=a["file"], record=a["record"])
            for a in comparison.altered
        )
        summary = _("A copy was altered ({named}). {agree}").format(named=named, agree=summary)
    return summary, altered, notes
